"""What makes a graded notebook safe to show: the one place that decides what a reader's browser may get.

`sanitize` takes out what a student must never see (hidden test source, pass tokens, hidden tracebacks);
`safe_for_readers` also cleans what a student wrote for a TA's browser: HTML and markdown keep only the allowlist
below (`SAFE_TAGS`, `SAFE_ATTRIBUTES`, `SAFE_PROTOCOLS`), script links are made inert, and outputs that can run
code (`SAFE_OUTPUTS` lists those that cannot) are replaced by a note. The feedback pages (`reports.feedback`) and
their HTML (`reports.nbhtml`) clean student HTML with the same `cleaner()`.
"""

import copy
import functools
import html
import re

from autograder import contract, tokens
from autograder.text import one_line

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_hidden(source):
    """Source of a test cell without its hidden region; also returns the hidden lines."""
    kept, hidden, inside = [], [], False
    for line in source.splitlines():
        if line.strip() == HIDDEN_BEGIN:
            inside = True
        elif line.strip() == HIDDEN_END:
            inside = False
        elif inside:
            hidden.append(line.strip())
        else:
            kept.append(line)
    return "\n".join(kept).rstrip(), [h for h in hidden if h]


PROGRESS = re.compile(r"\d+%\|")  # a tqdm bar: "42%|████      | 21/50"


def _collapse_progress(text):
    """A progress bar's stream as its final state: each line keeps what follows its last carriage return."""
    return "".join(line.rsplit("\r", 1)[-1] for line in text.splitlines(keepends=True) if line.strip("\r"))


def _clean_text(text, hidden):
    """Output text without pass tokens and without any line that quotes hidden test source."""
    lines = [tokens.strip(line) for line in text.splitlines(keepends=True)]
    return "".join(l for l in lines if not any(h in l for h in hidden))


def sanitize(nb):
    """Copy of an autograded notebook that is safe to show a student (hidden tests and tracebacks gone)."""
    nb = copy.deepcopy(nb)
    hidden_all = []
    for cell in nb.cells:
        if contract.is_test_cell(cell):
            cell.source, hidden = strip_hidden(cell.source)
            hidden_all += [h for h in hidden if len(h) >= 6]
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        test = contract.is_test_cell(cell)
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream":
                out["text"] = _clean_text(_collapse_progress(out.get("text", "")), hidden_all)
                if PROGRESS.search(out["text"]):
                    out["name"] = "stdout"  # a progress bar is not an error, whatever stream tqdm used
            elif kind == "error":
                if out.get("ename") == "NotImplementedError":  # a TODO left as released: one sentence is enough
                    out["evalue"] = (
                        out.get("evalue") or "not implemented yet (this cell still raises NotImplementedError)"
                    )
                    out["traceback"] = [f"NotImplementedError: {out['evalue']}"]
                    continue
                if test:  # hidden test traceback lines: keep only "Name: message"
                    line = f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"
                    out["traceback"] = [one_line(ANSI.sub("", line))]
                out["evalue"] = _clean_text(out.get("evalue", ""), hidden_all)
                out["traceback"] = [_clean_text(t, hidden_all) for t in out.get("traceback", [])]
            elif kind in ("execute_result", "display_data"):
                data = out.get("data", {})
                if "text/plain" in data:
                    data["text/plain"] = _clean_text(data["text/plain"], hidden_all)
                for mime in ("text/html", "text/markdown", "application/javascript"):
                    if mime in data and any(h in data[mime] for h in hidden_all):
                        del data[mime]
        cell["outputs"] = [
            o for o in cell.get("outputs", []) if not (o.get("output_type") == "stream" and not o["text"])
        ]
    nb.metadata.pop("widgets", None)
    return nb


# Outputs a reader's browser may render; anything else (JavaScript, SVG, widget views) can run code.
SAFE_OUTPUTS = ("text/plain", "text/html", "text/markdown", "text/latex", "image/png", "image/jpeg", "image/gif")
_LINK_TARGET = re.compile(r"(\]\(\s*<?|^[ \t]*\[[^\]]*\]:[ \t]*<?)([^\s)>]*)", re.M)
_SAFE_DATA = ("data:image/png", "data:image/jpeg", "data:image/gif")
_NOT_A_TAG = re.compile(r"&lt;(?=[^A-Za-z/!?])")


def safe_markdown(text):
    """Markdown a student wrote, with any HTML outside the allowlist and any script link made inert."""
    cleaned = cleaner().clean(text)
    # bleach escapes every bare < and >; give back those that cannot start a tag, so markdown and math read as
    # written (blockquotes, a < b)
    cleaned = _NOT_A_TAG.sub("<", cleaned.replace("&gt;", ">"))
    return _LINK_TARGET.sub(_inert_link, cleaned)


def _inert_link(match):
    """A markdown link target, unless it runs code when followed (javascript:, vbscript:, data: but images)."""
    url = "".join(c for c in html.unescape(match.group(2)) if ord(c) > 32).lower()
    if url.startswith(("javascript:", "vbscript:", "data:")) and not url.startswith(_SAFE_DATA):
        return match.group(1) + "unsafe:removed"
    return match.group(0)


def safe_for_readers(nb):
    """Copy of an autograded notebook that a TA's browser (formgrader, nbgrader's feedback) can show safely.

    On top of sanitize() (no hidden tests, tokens or hidden tracebacks): student markdown and HTML outputs
    keep only the allowlisted tags, script links are made inert, and outputs that can run code
    (JavaScript, SVG, widgets) are replaced by a note.
    """
    nb = sanitize(nb)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = safe_markdown(cell.source)
        for out in cell.get("outputs", []):
            data = out.get("data")
            if not data:
                continue
            removed = sorted(mime for mime in data if mime not in SAFE_OUTPUTS)
            for mime in removed:
                del data[mime]
            if "text/html" in data:
                data["text/html"] = cleaner().clean(str(data["text/html"]))
            if "text/markdown" in data:
                data["text/markdown"] = safe_markdown(str(data["text/markdown"]))
            if removed and not data:
                data["text/plain"] = f"[output not shown: {', '.join(removed)}]"
    return nb


@functools.lru_cache(maxsize=None)
def cleaner():
    """The bleach cleaner for student HTML: SAFE_TAGS, SAFE_ATTRIBUTES and SAFE_PROTOCOLS only."""
    import bleach

    return bleach.Cleaner(tags=SAFE_TAGS, attributes=SAFE_ATTRIBUTES, protocols=SAFE_PROTOCOLS, strip=True)


# What sanitised student HTML may keep: text formatting, lists, tables (pandas), images, links; never
# scripts, event handlers, forms, frames or styles. nbconvert's own list lacks p, div, span and tables.
SAFE_TAGS = {
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "caption",
    "code",
    "del",
    "details",
    "div",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "img",
    "kbd",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "samp",
    "small",
    "span",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "u",
    "ul",
}
ANCHOR = "a3-"  # prefix of the anchors feedback pages link to (the only ids a page may carry)
SAFE_ATTRIBUTES = {
    "*": ["class", "title"],
    "a": lambda tag, name, value: name == "href" or (name == "id" and value.startswith(ANCHOR)),
    "img": ["src", "alt", "width", "height"],
    "td": ["colspan", "rowspan"],
    "th": ["colspan", "rowspan"],
}
SAFE_PROTOCOLS = {"http", "https", "mailto", "data"}
