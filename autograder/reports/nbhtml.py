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
_ENTITY = re.compile("|".join(_ENTITIES))


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
    if "&" not in text:  # Pygments' text holds no bare < or >: most of it has nothing to change
        return text
    text = _ENTITY.sub(lambda m: _ENTITIES[m.group(0)], text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _input_block(html_code):
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


# nbconvert's lab page fails WCAG 2.1 AA: its syntax colours (#008800, #aa22ff, #408080 at 4.2-4.4:1 on the code
# background), prompts (#307fc1, and grey at half opacity: 2.2:1) and traceback colours are too faint, and links in
# text are told apart by colour alone. These colours keep each hue at 4.5:1 or more on white, the code background
# (#f5f5f5) and the error background (#fdd); links are underlined. The sanitiser drops the class that hides the
# heading anchors (a pilcrow link after each heading), so they are hidden by position. Printed, long code and
# output lines wrap instead of being cut off at the page's edge.
READABLE_CSS = """
:root {
  --jp-mirror-editor-keyword-color: #006e00; --jp-mirror-editor-builtin-color: #006e00;
  --jp-mirror-editor-number-color: #006e00; --jp-mirror-editor-quote-color: #006e00;
  --jp-mirror-editor-variable-3-color: #006e46; --jp-mirror-editor-atom-color: #3c3cc8;
  --jp-mirror-editor-operator-color: #7a18c0; --jp-mirror-editor-meta-color: #7a18c0;
  --jp-mirror-editor-comment-color: #2f6767; --jp-mirror-editor-bracket-color: #6b6b50;
  --jp-mirror-editor-error-color: #c00000; --jp-mirror-editor-hr-color: #6b6b6b;
  --jp-cell-inprompt-font-color: #2a6ca3; --jp-cell-outprompt-font-color: #a3482d;
  --jp-cell-prompt-not-active-font-color: #616161; --jp-cell-prompt-not-active-opacity: 1;
}
.jp-RenderedText pre .ansi-red-fg, .jp-RenderedText pre .ansi-red-intense-fg { color: #a82228; }
.jp-RenderedText pre .ansi-green-fg, .jp-RenderedText pre .ansi-green-intense-fg { color: #006b24; }
.jp-RenderedText pre .ansi-yellow-fg, .jp-RenderedText pre .ansi-yellow-intense-fg { color: #7a5500; }
.jp-RenderedText pre .ansi-blue-fg, .jp-RenderedText pre .ansi-blue-intense-fg { color: #0058b0; }
.jp-RenderedText pre .ansi-magenta-fg, .jp-RenderedText pre .ansi-magenta-intense-fg { color: #932a8a; }
.jp-RenderedText pre .ansi-cyan-fg, .jp-RenderedText pre .ansi-cyan-intense-fg { color: #176868; }
.jp-RenderedText pre .ansi-white-fg, .jp-RenderedText pre .ansi-white-intense-fg { color: #5f5b50; }
.jp-RenderedHTMLCommon a:link, .jp-RenderedHTMLCommon a:visited,
.jp-RenderedText pre a:link, .jp-RenderedText pre a:visited { text-decoration: underline; }
.jp-RenderedMarkdown :is(h1, h2, h3, h4, h5, h6) > a[href^="#"]:last-child { display: none; }
@media print { .jp-RenderedText pre, .highlight pre { white-space: pre-wrap; overflow-wrap: anywhere; } }
"""
# The lab template with READABLE_CSS after its own styles (later rules of equal weight win), and every image with a
# text alternative: the output's "alt" metadata (IPython's Image(alt=...), the grade report's figures), else what
# the output says of itself in text ("<Figure size 640x480 with 1 Axes>"), rather than nbconvert's "No description".
_ALT = "(output | get_metadata('alt', '{mime}') or 'Figure: ' ~ output.data.get('text/plain', 'no description'))"
_PAGE = "\n".join(
    [
        "{%- extends 'index.html.j2' -%}",
        '{%- block html_head_css -%}<style type="text/css">' + READABLE_CSS + "</style>{%- endblock html_head_css -%}",
        *(
            f"{{% block {block} scoped %}}{{{{ super() | replace('<img ', '<img alt=\"' ~ {_ALT.format(mime=mime)} "
            f"| escape_html ~ '\" ', 1) }}}}{{% endblock {block} %}}"
            for block, mime in (("data_png", "image/png"), ("data_jpg", "image/jpeg"))
        ),
    ]
)


def readable_template():
    """nbconvert exporter settings for the lab page with READABLE_CSS (feedback pages, the grade report)."""
    from jinja2 import DictLoader

    return {
        "template_name": "lab",
        "extra_loaders": [DictLoader({"a3_page.html.j2": _PAGE})],
        "template_file": "a3_page.html.j2",
    }


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

    # markdown and HTML outputs sanitised too; MathJax from the feedback folder (install_mathjax), not a CDN. The
    # notebook is validated once, after the last of its 12 preprocessors (each validation only checks).
    exporter = HTMLExporter(
        sanitize_html=True, mathjax_url=mathjax_url, optimistic_validation=True, **readable_template()
    )
    highlight = Highlight2HTML(pygments_lexer="ipython3", parent=exporter)
    # Every student's page repeats the course's own cells, so both filters remember what they made for short
    # texts (pure functions of the text; cell metadata reaches Pygments only through "magics_language")
    highlighted = _remembered(
        lambda source, language, magics: highlight(source, language, {"magics_language": magics} if magics else None)
    )
    clean = _remembered(sanitize.cleaner().clean)
    exporter.filters = {
        "highlight_code": lambda source, language=None, metadata=None: _input_block(
            highlighted(source, language, (metadata or {}).get("magics_language"))
        ),
        "clean_html": lambda html: html if isinstance(html, _Highlighted) else clean(str(html)),
    }
    return exporter


def _remembered(fn, longest=16_000, entries=1024):
    """fn(text, *rest), remembering up to `entries` results for texts of at most `longest` characters."""
    cached = functools.lru_cache(maxsize=entries)(fn)
    return lambda text, *rest: cached(text, *rest) if len(text) <= longest else fn(text, *rest)
