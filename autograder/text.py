"""One line of text from a message or an exception: the one helper every error line and folded note goes through.

Stdlib only and imports nothing of the package, so the check runtime and the sandbox can import it cheaply.
"""

_type, _isinstance = (
    type,
    isinstance,
)  # bound at import, so a student's `builtins.type = ...` (or isinstance) cannot change an error line


def one_line(text_or_exc: object, limit: int | None = None, *, more: str = "") -> str:
    """Fold all whitespace (newlines, tabs, runs of spaces) into single spaces and cut to at most `limit`.

    Inputs:
    - text_or_exc: a string, or an exception (written "TypeName: message")
    - limit: the most characters kept (None: no limit)
    - more: put at the end of a line that was cut, within the limit (e.g. "...")

    Returns: the folded line.
    """
    if _isinstance(text_or_exc, BaseException):
        text = f"{_type(text_or_exc).__name__}: {text_or_exc}"
    else:
        text = f"{text_or_exc}"
    text = " ".join(text.split())
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - len(more)] + more if more else text[:limit]
