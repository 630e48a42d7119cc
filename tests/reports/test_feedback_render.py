"""A feedback page rendered by headless Chromium shows the score and the check's message, never hidden tests."""

import copy
import re

import nbformat
import pytest

from autograder import contract, paths
from autograder.reports import feedback
from tests.fixtures.pages import page_of
from tests.reports.browser import rendered_text

MESSAGE = "CheckFailed: fit_linear_log: (m, c) should be (0.5, 0.4771) for y = 3 * x**0.5, got (0, 0)"
HIDDEN = ("BEGIN HIDDEN TESTS", "from autograder.checks", "check_fit_linear_log(", "[a3:")


def autograded_page():
    """An autograded nmt notebook as nbgrader leaves it: hidden tests restored, one check failed with a traceback."""
    nb = copy.deepcopy(nbformat.read(paths.SOURCE / "nmt.ipynb", as_version=4))
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution") and cell.cell_type == "code":
            gid = meta["grade_id"][len("test_") :]
            if gid == "fit_linear_log":
                cell.outputs = [
                    nbformat.v4.new_output(
                        "error",
                        ename="CheckFailed",
                        evalue=MESSAGE[len("CheckFailed: ") :],
                        traceback=[
                            "Traceback (most recent call last):",
                            "check_fit_linear_log(fit_linear_log)",
                            MESSAGE,
                        ],
                    )
                ]
            else:
                text = f"visible checks passed\nPASSED {gid} [a3:0123456789abcdef0123]\n"
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    summary = {
        "notebook": "nmt",
        "score": 10.0,
        "max_score": 11.0,
        "status": "graded",
        "repairs": ["took 'Copy of nmt.ipynb' as nmt.ipynb"],
        "notes": [],
        "manual": {"written_scaling": 2.0},
        "cells": [
            {"grade_id": "positional_encodings", "score": 1.0, "max_score": 1.0, "note": "passed"},
            {"grade_id": "fit_linear_log", "score": 0.0, "max_score": 1.0, "note": MESSAGE},
        ],
    }
    return feedback.render(nb, page_of(summary, "alice"))


def test_feedback_page_shows_score_and_message(tmp_path):
    """Does Chromium show the score and the failing check's one-line message on the page?"""
    page = tmp_path / "nmt.html"
    page.write_text(autograded_page())
    text, _ = rendered_text(page, tmp_path)
    assert "Autograded score: 10 / 11" in text, f"expected the score on the page, saw {text[:300]!r}"
    assert MESSAGE in text, "expected the check's one-line message on the page"
    assert "took 'Copy of nmt.ipynb' as nmt.ipynb" in text, "expected the repair on the page"


def test_feedback_page_has_no_hidden_tests(tmp_path):
    """Is there no hidden test source, hidden traceback line or pass token anywhere in the rendered page?"""
    page = tmp_path / "nmt.html"
    page.write_text(autograded_page())
    _, dom = rendered_text(page, tmp_path)
    leaks = [h for h in HIDDEN if h in dom]
    assert not leaks, f"expected no hidden test source in the page, found {leaks}"


@pytest.mark.slow
def test_real_feedback_page_from_the_corpus(tmp_path_factory, tmp_path):
    """On a page the grader wrote for a corpus submission, are score and message visible and the hidden tests absent?"""
    from tests.corpus import batch

    corpus = batch.graded_corpus(tmp_path_factory)
    page = corpus["out"] / "feedback" / "eq_true" / "nmt.html"
    text, dom = rendered_text(page, tmp_path)
    most = contract.max_score("nmt")  # eq_true loses find_optimal_params and fit_linear_log, a point each
    assert f"Autograded score: {most - 2:g} / {most:g}" in text, f"expected the score, saw {text[:300]!r}"
    assert "fit_linear_log: (m, c) should be" in text, "expected the check's message"
    leaks = [h for h in HIDDEN if h in dom]
    assert not leaks, f"expected no hidden test source, found {leaks}"


def test_math_renders_offline(tmp_path):
    """With no network and nothing beside the page, does Chromium show a page's TeX typeset (MathML written into the
    page, no raw TeX left, no script loaded), for a student named Zoë Ñúñez?"""
    cells = [
        nbformat.v4.new_markdown_cell(r"The ridge loss is $\mathcal{L}(w) = \|Xw - y\|^2 + \lambda \|w\|^2$."),
        nbformat.v4.new_markdown_cell(r"$$w^\star = (X^\top X + \lambda I)^{-1} X^\top y$$"),
    ]
    summary = {"notebook": "theory", "score": 2.0, "max_score": 2.0, "status": "graded", "cells": []}
    page = tmp_path / "Zoë Ñúñez" / "theory.html"
    page.parent.mkdir(parents=True)
    page.write_text(feedback.render(nbformat.v4.new_notebook(cells=cells), page_of(summary, "Zoë Ñúñez")))
    assert "<script src=" not in page.read_text(), "expected no script loaded by the page"
    text, dom = rendered_text(page, tmp_path)
    assert typeset(dom) == (2, [], [])
    assert "\\mathcal" not in text and "\\lambda" not in text, f"raw TeX on the page: {text[:300]!r}"


def typeset(dom):
    """(formulas typeset as MathML, formulas left as TeX because they could not be read, TeX commands left inside
    the MathML) in a page's DOM."""
    found = re.findall(r"<math\b.*?</math>", dom, re.S)
    unread = re.findall(r'<code class="a3-tex-unread">([^<]*)', dom)
    commands = [c for m in found for c in re.findall(r"\\[A-Za-z]+", re.sub(r"<[^>]*>", "", m))]
    return len(found), unread, commands


def test_primes_render_offline(tmp_path):
    """Does Chromium show the theory page's primes (`x' = x - \\epsilon\\,\\operatorname{sgn}(w)`, `f(x')`) typeset, as
    primes?"""
    md = r"The attack moves $x' = x - \epsilon\,\operatorname{sgn}(w)$, so $f(x') \le f(x)$: $$w^\top x' < 0.$$"
    summary = {"notebook": "theory", "score": 0.0, "max_score": 1.0, "status": "graded", "cells": []}
    page = tmp_path / "李明" / "theory.html"
    page.parent.mkdir(parents=True)
    page.write_text(
        feedback.render(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(md)]), page_of(summary, "李明"))
    )
    _, dom = rendered_text(page, tmp_path)
    assert typeset(dom) == (3, [], [])
    assert dom.count("\u2032") == 3, "expected each x' typeset with a prime"


def formulas(nb):
    """How many $...$ and $$...$$ formulas the markdown of nb holds (code spans and escaped dollars left out)."""
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    text = re.sub(r"`[^`]*`", "", text.replace(r"\$", ""))
    return len(re.findall(r"\$\$.+?\$\$|\$[^$]+?\$", text, re.S))


@pytest.mark.slow
@pytest.mark.parametrize("name", contract.NOTEBOOKS)
def test_every_formula_of_every_notebook_renders_offline(tmp_path, name):
    """Does Chromium show every formula of the released notebook typeset as a feedback page shows it, offline, with
    none left as TeX?"""
    nb = nbformat.read(paths.RELEASE / f"{name}.ipynb", as_version=4)
    summary = {"notebook": name, "score": 0.0, "max_score": 1.0, "status": "graded", "cells": []}
    page = tmp_path / "Zoë Ñúñez" / f"{name}.html"
    page.parent.mkdir(parents=True)
    page.write_text(feedback.render(nb, page_of(summary, "Zoë Ñúñez")))
    _, dom = rendered_text(page, tmp_path)
    assert typeset(dom) == (formulas(nb), [], [])
