"""A feedback page's math is typeset when the page is written (MathML from reports.nbhtml), so the page reads alone and
offline: formulas in markdown and LaTeX outputs become MathML, code keeps its dollars, TeX a student writes makes no
link, style or script, TeX that cannot be read shows as code, and the page names no script, style or font on the
network."""

import re

import nbformat

from autograder.reports import feedback
from tests.fixtures.pages import page_of

SUMMARY = {"notebook": "theory", "score": 1.0, "max_score": 1.0, "status": "graded", "cells": []}


def _page(*cells):
    return feedback.render(nbformat.v4.new_notebook(cells=list(cells)), page_of(SUMMARY, "Zoë Ñúñez"))


def _md(text):
    return nbformat.v4.new_markdown_cell(text)


def test_inline_and_display_formulas_are_mathml():
    """Are an inline formula, a display formula and an align environment written into the page as MathML (inline,
    block, block), with none of their TeX left?"""
    page = _page(
        _md(r"Loss $\mathcal{L}(w)$ is $$\frac{1}{2n}\lVert Xw - t\rVert^2$$ and \begin{align}a &= b\end{align}")
    )
    assert re.findall(r'<math display="(\w+)"', page) == ["inline", "block", "block"]
    assert not re.search(r"\\mathcal|\\frac|\\lVert|\\begin", page)


def test_tex_a_student_writes_makes_no_link_or_style():
    r"""Does TeX with \href and \style (a javascript: link, a style covering the page) give MathML with neither a
    link nor a style?"""
    page = _page(_md(r"$\href{javascript:alert(1)}{x} + \style{position:fixed;top:0}{y}$"))
    math = re.search(r"<math.*?</math>", page, re.S).group(0)
    assert ("<mi>x</mi>" in math, "javascript:" in page, "position:fixed" in page, "href" in math) == (
        True,
        False,
        False,
        False,
    )


def test_a_formula_mark_written_by_hand_is_only_a_formula():
    """Is the mark the renderer puts on a formula, written by a student as raw HTML, turned into MathML without the
    link its TeX asks for, and one holding an image left to the sanitiser (no event handler)?"""
    page = _page(
        _md(r'<span class="a3-tex-inline">\href{javascript:alert(1)}{x}</span>'),
        _md('<span class="a3-tex-inline"><img src="x.png" onerror="alert(1)"></span>'),
    )
    assert ("javascript:" in page, "onerror" in page, page.count("<math ")) == (False, False, 1)


def test_unreadable_tex_shows_as_code():
    """Does a formula latex2mathml cannot read show its TeX as code, rather than vanish or break the page?"""
    page = _page(_md(r"Half a fraction: $\frac{1}{$ ends here."))
    assert '<code class="a3-tex-unread">\\frac{1}{</code>' in page


def test_code_keeps_its_dollars():
    """Are dollars in a code cell, its output and inline code in markdown left as they are, not typeset?"""
    code = nbformat.v4.new_code_cell('print("$x$ and $y$")')
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="$x$ and $y$\n")]
    page = _page(code, _md("Write `$x$` in a cell."))
    assert ("<math" in page, "<code>$x$</code>" in page, "$x$ and $y$" in page) == (False, True, True)


def test_a_latex_output_is_typeset():
    """Is a LaTeX output (IPython's Math, sympy) written as MathML?"""
    code = nbformat.v4.new_code_cell("Math(tex)")
    code.outputs = [
        nbformat.v4.new_output("display_data", data={"text/latex": r"$\displaystyle \alpha^2$", "text/plain": "<M>"})
    ]
    page = _page(code)
    assert re.search(r'data-mime-type="text/latex"[^>]*><p><math display="inline">.*α', page, re.S)
    assert r"\alpha" not in page


# What a page may not load from the network: a script, a stylesheet or preload, a font or stylesheet from CSS
_NETWORK = re.compile(
    r"<script[^>]*\ssrc=[\"']?(?:https?:)?//|<link[^>]*\shref=[\"']?(?:https?:)?//|url\([\"']?(?:https?:)?//"
    r"|@import\s|import\([\"'](?:https?:)?//|https://cdn|unpkg\.com|jsdelivr",
    re.I,
)


def test_a_page_names_no_script_style_or_font_on_the_network():
    """Does a page with math, a mermaid diagram and widget state name no script, stylesheet or font on the network
    (nbconvert's require.js, MathJax, mermaid and widget scripts all come from CDNs)?"""
    nb = nbformat.v4.new_notebook(cells=[_md("$x$"), _md("```mermaid\ngraph TD; A-->B\n```")])
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2}}
    page = feedback.render(nb, page_of(SUMMARY, "eve"))
    assert _NETWORK.findall(page) == []
