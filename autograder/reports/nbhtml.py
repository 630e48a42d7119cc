"""A notebook as one standalone HTML page: nbconvert's lab template, student HTML cleaned (`reports.sanitize`), math
typeset as MathML when the page is written, and a shortcut that keeps highlighted code out of nbconvert's BeautifulSoup
pass. `notebook_html` is the one way in.
"""

import functools
import html
import re
import secrets
import threading
import xml.etree.ElementTree as ET

from autograder.reports import sanitize


def notebook_html(nb):
    """The page nbconvert's lab HTML exporter writes for nb, byte for byte, at a third of the cost, with its math
    typeset (`typeset_math`) and nothing loaded from the network.

    Inputs:
    - nb: the notebook (NotebookNode) to show.
    Returns:
    - a standalone HTML page (str): one file that reads the same anywhere, offline.
    """
    _blocks.table, _blocks.nonce = {}, secrets.token_hex(8)
    try:
        body, _ = _exporter().from_notebook_node(nb)
        table = _blocks.table
    finally:
        _blocks.table = None
    body = _PLACEHOLDER.sub(lambda m: table.pop(m.group(0), m.group(0)), body) if table else body
    return typeset_math(body)


# Math is typeset when the page is written, so that a page reads the same on its own (unpacked from an LMS's zip,
# attached to a Canvas comment, offline) with no script, font or style from anywhere: the markdown renderer marks
# each formula it finds ($...$, $$...$$, \(...\), \[...\], \begin{env}...\end{env}; not in code) with an
# element the sanitiser keeps, and typeset_math turns each mark into MathML (latex2mathml), which browsers render
# natively (Chromium since 109, Firefox, Safari) and screen readers read as math. A mark a student writes by hand
# is only a formula: the MathML keeps MATHML_TAGS and MATHML_ATTRIBUTES alone (no link, style or event).
_TEX_MARK = re.compile(r'<span class="a3-tex-(inline|block)">([^<]*)</span>')
MATHML_TAGS = frozenset(
    "math mrow mi mn mo ms mtext mspace mfrac msqrt mroot msub msup msubsup munder mover munderover mmultiscripts "
    "mprescripts none mtable mtr mtd mlabeledtr mstyle mpadded mphantom menclose merror mfenced semantics".split()
)
MATHML_ATTRIBUTES = frozenset(
    "display mathvariant mathsize mathcolor mathbackground displaystyle scriptlevel stretchy fence form separator "
    "lspace rspace minsize maxsize symmetric largeop movablelimits accent accentunder width height depth voffset "
    "linethickness columnalign rowalign columnspacing rowspacing columnlines rowlines frame framespacing "
    "equalrows equalcolumns notation linebreak open close separators columnspan rowspan align".split()
)
_ATTRIBUTE_VALUE = re.compile(r"[\w.#%+\- ]*")  # words, lengths, colours: never a URL or CSS
_MATHML_NS = "{http://www.w3.org/1998/Math/MathML}"
# What latex2mathml lacks, said in what it has: aligned as align*, labels and numbering left out
_TEX_SPELLING = [
    (re.compile(r"\\(begin|end)\{aligned\}"), r"\\\1{align*}"),
    (re.compile(r"\\label\{[^{}]*\}|\\nonumber\b|\\notag\b"), ""),
]


def typeset_math(page):
    """The page with every formula the markdown renderer marked as MathML (a formula latex2mathml cannot read shows
    its TeX as code)."""
    return _TEX_MARK.sub(lambda m: mathml(html.unescape(m.group(2)), m.group(1) == "block"), page)


@functools.lru_cache(maxsize=4096)
def mathml(tex, block=False):
    """One formula as a MathML element (HTML text), or its TeX as <code> when latex2mathml cannot read it."""
    from latex2mathml.converter import convert

    source = tex
    for pattern, spelling in _TEX_SPELLING:
        source = pattern.sub(spelling, source)
    try:
        root = ET.fromstring(convert(source, display="block" if block else "inline"))
        return _mathml_text(root)
    except Exception:  # latex2mathml's errors have no common base; bad XML from it is a ParseError
        return f'<code class="a3-tex-unread">{html.escape(tex, quote=False)}</code>'


def _mathml_text(node):
    """MathML as HTML text, only MATHML_TAGS with MATHML_ATTRIBUTES (ValueError on any other element)."""
    tag = node.tag.removeprefix(_MATHML_NS)
    if tag not in MATHML_TAGS:
        raise ValueError(f"not MathML: {tag}")
    attributes = "".join(
        f' {name}="{value}"'
        for name, value in node.attrib.items()
        if name in MATHML_ATTRIBUTES and _ATTRIBUTE_VALUE.fullmatch(value)
    )
    inner = html.escape(node.text or "", quote=False) + "".join(
        _mathml_text(child) + html.escape(child.tail or "", quote=False) for child in node
    )
    return f"<{tag}{attributes}>{inner}</{tag}>"


def _markdown2html(exporter):
    """nbconvert's markdown filter (HTMLExporter.markdown2html) with each formula marked for typeset_math instead of
    left as TeX for MathJax."""
    from jinja2 import pass_context
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    def mark(tex, kind):
        return f'<span class="a3-tex-{kind}">{html.escape(tex, quote=False)}</span>'

    class MarkedMath(IPythonRenderer):
        def block_math(self, body):
            return mark(body, "block")

        def inline_math(self, body):
            return mark(body, "inline")

        def latex_environment(self, name, body):
            return mark(f"\\begin{{{name}}}{body}\\end{{{name}}}", "block")

    @pass_context
    def markdown2html(context, source):
        renderer = MarkedMath(
            escape=False,
            attachments=context.get("cell", {}).get("attachments", {}),
            embed_images=exporter.embed_images,
            path=context.get("resources", {}).get("metadata", {}).get("path", ""),
            anchor_link_text=exporter.anchor_link_text,
            exclude_anchor_links=exporter.exclude_anchor_links,
            **exporter.lexer_options,
        )
        return MarkdownWithMath(renderer=renderer).render(source)

    return markdown2html


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
math [mathvariant*="bold"] { font-weight: bold; } math [mathvariant*="italic"] { font-style: italic; }
math[display="block"] { margin: 0.5em 0; max-width: 100%; overflow-x: auto; overflow-y: hidden; }
@media print { .jp-RenderedText pre, .highlight pre { white-space: pre-wrap; overflow-wrap: anywhere; } }
"""
# The lab template with READABLE_CSS after its own styles (later rules of equal weight win), and every image with a
# text alternative: the output's "alt" metadata (IPython's Image(alt=...), the grade report's figures), else what
# the output says of itself in text ("<Figure size 640x480 with 1 Axes>"), rather than nbconvert's "No description".
# Nothing comes from the network: the template's require.js, MathJax, mermaid and widget scripts (all from CDNs, and
# nothing on a page needs them) are left out, and a LaTeX output goes through the markdown filter, whose math
# typeset_math turns into MathML.
_OFFLINE = ("html_head_js", "jupyter_widgets", "html_head_js_mathjax", "html_head_js_mermaidjs")
_ALT = "(output | get_metadata('alt', '{mime}') or 'Figure: ' ~ output.data.get('text/plain', 'no description'))"
_PAGE = "\n".join(
    [
        "{%- extends 'index.html.j2' -%}",
        '{%- block html_head_css -%}<style type="text/css">' + READABLE_CSS + "</style>{%- endblock html_head_css -%}",
        *(f"{{%- block {block} -%}}{{%- endblock {block} -%}}" for block in _OFFLINE),
        "{% block data_latex scoped %}"
        '<div class="jp-RenderedLatex jp-OutputArea-output {{ extra_class }}" data-mime-type="text/latex">'
        "{{ output.data['text/latex'] | markdown2html | clean_html }}</div>{%- endblock data_latex %}",
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
def _exporter():
    """nbconvert's lab HTML exporter, built once per process: sanitises what a student can fill with HTML,
    marks math for typeset_math, and skips re-sanitising highlighted code.

    By default nbconvert copies markdown cells and HTML outputs into the page as they are, so a student's
    `<script>` would run in the reader's browser; `sanitize_html` passes them through bleach. The lab
    template also passes every code input through Pygments and then through bleach, which is more than
    half of the rendering time; Pygments escapes the source already, so that second pass is skipped.
    """
    from nbconvert import HTMLExporter
    from nbconvert.filters import Highlight2HTML

    # markdown and HTML outputs sanitised too; the notebook is validated once, after the last of its 12
    # preprocessors (each validation only checks).
    exporter = HTMLExporter(sanitize_html=True, optimistic_validation=True, **readable_template())
    highlight = Highlight2HTML(pygments_lexer="ipython3", parent=exporter)
    # Every student's page repeats the course's own cells, so both filters remember what they made for short
    # texts (pure functions of the text; cell metadata reaches Pygments only through "magics_language")
    highlighted = _remembered(
        lambda source, language, magics: highlight(source, language, {"magics_language": magics} if magics else None)
    )
    clean = _remembered(sanitize.cleaner().clean)
    exporter.filters = {
        "markdown2html": _markdown2html(exporter),
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
