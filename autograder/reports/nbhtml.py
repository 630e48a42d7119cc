"""A notebook as one standalone HTML page: nbconvert's lab template, student HTML cleaned (`reports.sanitize`), and a
shortcut that keeps highlighted code out of nbconvert's BeautifulSoup pass. `notebook_html` is the one way in.
"""

import functools
import re
import secrets
import threading

from autograder.reports import sanitize


def notebook_html(nb, mathjax_url):
    """The page nbconvert's lab HTML exporter writes for nb, byte for byte, at a third of the cost.

    Inputs:
    - nb: the notebook (NotebookNode) to show.
    - mathjax_url: where the page loads MathJax from.
    Returns:
    - a standalone HTML page (str).
    """
    _blocks.table, _blocks.nonce = {}, secrets.token_hex(8)
    try:
        body, _ = _exporter(mathjax_url).from_notebook_node(nb)
        table = _blocks.table
    finally:
        _blocks.table = None
    return _PLACEHOLDER.sub(lambda m: table.pop(m.group(0), m.group(0)), body) if table else body


# Highlighted code inputs hold about 90 % of a page's tags, and nbconvert passes the whole page through
# BeautifulSoup (alt text, tabindex) and serialises it again. A highlighted input the simple grammar of
# Pygments' output covers goes past that pass as a placeholder and comes back as the text BeautifulSoup
# would have written for it (`_soup_form`), so the page is the same, byte for byte, at a third of the cost.
_blocks = threading.local()
_PLACEHOLDER = re.compile(r"<(a3hl[0-9a-f]{16}x[0-9]+)></\1>")
_PYGMENTS_TAG = re.compile(r'<(div|span) class=" *([\w-]+(?: [\w-]+)*) *">|<(pre|span)>|</(div|pre|span)>')
_PYGMENTS_TEXT = re.compile(r"(?:[^<>&\r\x00]|&(?:amp|lt|gt|quot|#39);)*")
_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'"}


def _soup_form(fragment):
    """What BeautifulSoup (html.parser, minimal formatter) writes for a Pygments fragment, or None when the
    fragment holds anything but the tags and entities Pygments writes (it then goes through BeautifulSoup)."""
    out, pos, open_tags = [], 0, []
    for tag in _PYGMENTS_TAG.finditer(fragment):
        text = fragment[pos : tag.start()]
        if not _PYGMENTS_TEXT.fullmatch(text):
            return None
        out.append(_minimal(text))
        opened, classes, bare, closed = tag.groups()
        if closed:
            if not open_tags or open_tags.pop() != closed:
                return None
            out.append(tag.group(0))
        else:
            open_tags.append(opened or bare)
            out.append(f'<{opened} class="{classes}">' if opened else tag.group(0))  # class: spaces trimmed
        pos = tag.end()
    if open_tags or not _PYGMENTS_TEXT.fullmatch(fragment[pos:]):
        return None
    out.append(_minimal(fragment[pos:]))
    return "".join(out)


def _minimal(text):
    """Escaped text as BeautifulSoup writes it: entities read, then only &, < and > escaped."""
    text = re.sub(r"&(?:amp|lt|gt|quot|#39);", lambda m: _ENTITIES[m.group(0)], text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _highlighted(html_code):
    """A highlighted input for the page: while render() collects them, its element becomes an empty placeholder
    element (the whitespace around it stays, as BeautifulSoup folds it with the template's), else the HTML."""
    table = getattr(_blocks, "table", None)
    parts = re.fullmatch(r"(\s*)(<div .*</div>)(\s*)", html_code, re.S) if table is not None else None
    normal = _soup_form(parts.group(2)) if parts else None
    if normal is None:
        return _Highlighted(html_code)
    token = f"a3hl{_blocks.nonce}x{len(table)}"
    table[f"<{token}></{token}>"] = normal
    return _Highlighted(f"{parts.group(1)}<{token}></{token}>{parts.group(3)}")


class _Highlighted(str):
    """Code input as Pygments rendered it: every character of the source is HTML-escaped already."""


@functools.lru_cache(maxsize=None)
def _exporter(mathjax_url):
    """nbconvert's lab HTML exporter, built once per process: sanitises what a student can fill with HTML,
    and skips re-sanitising highlighted code.

    By default nbconvert copies markdown cells and HTML outputs into the page as they are, so a student's
    `<script>` would run in the reader's browser; `sanitize_html` passes them through bleach. The lab
    template also passes every code input through Pygments and then through bleach, which is more than
    half of the rendering time; Pygments escapes the source already, so that second pass is skipped.
    """
    from nbconvert import HTMLExporter
    from nbconvert.filters import Highlight2HTML

    # markdown and HTML outputs sanitised too; MathJax from the feedback folder (install_mathjax), not a CDN
    exporter = HTMLExporter(template_name="lab", sanitize_html=True, mathjax_url=mathjax_url)
    highlight = Highlight2HTML(pygments_lexer="ipython3", parent=exporter)
    # Every student's page repeats the course's own cells, so both filters remember what they made for short
    # texts (pure functions of the text; cell metadata reaches Pygments only through "magics_language")
    highlighted = _remembered(
        lambda source, language, magics: highlight(source, language, {"magics_language": magics} if magics else None)
    )
    clean = _remembered(sanitize.cleaner().clean)
    exporter.filters = {
        "highlight_code": lambda source, language=None, metadata=None: _highlighted(
            highlighted(source, language, (metadata or {}).get("magics_language"))
        ),
        "clean_html": lambda html: html if isinstance(html, _Highlighted) else clean(str(html)),
    }
    return exporter


def _remembered(fn, longest=16_000, entries=1024):
    """fn(text, *rest), remembering up to `entries` results for texts of at most `longest` characters."""
    cached = functools.lru_cache(maxsize=entries)(fn)
    return lambda text, *rest: cached(text, *rest) if len(text) <= longest else fn(text, *rest)
