"""What a TA's browser renders from a submission is inert: OUT/autograded notebooks (formgrader shows them,
nbgrader's own feedback is made from them) and the kit's feedback pages, checked in headless Chromium."""

import re

import nbformat
import pytest
from nbconvert import HTMLExporter

from autograder.records import NotebookResult
from autograder.reports import feedback, sanitize
from tests.reports.browser import rendered_text
from tests.reports.payloads import MARK, MARKDOWN_PAYLOADS, OUTPUT_PAYLOADS


def hostile_notebook():
    """A graded notebook whose written answer and outputs carry every payload, plus a test cell as graded."""
    n = iter(range(1, 100))
    written = nbformat.v4.new_markdown_cell("\n\n".join(p.format(js=MARK.format(n=next(n))) for p in MARKDOWN_PAYLOADS))
    written.metadata["nbgrader"] = {"grade": True, "solution": True, "grade_id": "written_scaling", "points": 1}
    code = nbformat.v4.new_code_cell("show()")
    code.outputs = [
        nbformat.v4.new_output(
            "display_data", data={**{k: v.format(js=MARK.format(n=next(n))) for k, v in p.items()}, "text/plain": "x"}
        )
        for p in OUTPUT_PAYLOADS
    ]
    test = nbformat.v4.new_code_cell(
        "assert True\n### BEGIN HIDDEN TESTS\nfrom autograder.checks.nmt import "
        "check_fit_linear_log\ncheck_fit_linear_log(fit_linear_log)\n### END HIDDEN TESTS"
    )
    test.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "locked": True,
        "grade_id": "test_fit_linear_log",
        "points": 1,
    }
    test.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="PASSED fit_linear_log [a3:0123456789abcdef0123]\n")
    ]
    return nbformat.v4.new_notebook(cells=[written, code, test])


def pwned(dom):
    """The payload numbers that ran (marked <body>), from a dumped DOM."""
    body = re.search(r"<body[^>]*>", dom)
    return re.findall(r'data-pwned="(\d+)"', body.group(0)) if body else ["no body"]


def test_payloads_run_in_an_unsanitised_page(tmp_path):
    """Do the planted payloads really run when the notebook is rendered as is (so the next tests mean something)?"""
    page = tmp_path / "raw.html"
    page.write_text(HTMLExporter(template_name="lab").from_notebook_node(hostile_notebook())[0])
    _, dom = rendered_text(page, tmp_path)
    assert pwned(dom), "expected at least one payload to run in the raw page"


def test_autograded_notebook_is_inert_in_a_browser(tmp_path):
    """Rendered as is by nbconvert (no sanitising of its own), does the reader-safe notebook run no payload?"""
    safe = sanitize.safe_for_readers(hostile_notebook())
    page = tmp_path / "safe.html"
    page.write_text(HTMLExporter(template_name="lab").from_notebook_node(safe)[0])
    _, dom = rendered_text(page, tmp_path)
    assert pwned(dom) == [], f"payloads ran: {pwned(dom)}"


def test_feedback_page_is_inert_in_a_browser(tmp_path):
    """Does the kit's feedback page for the hostile notebook run no payload?"""
    page = tmp_path / "feedback.html"
    graded = NotebookResult("nmt", "graded", 1.0, 11.0, [])
    page.write_text(feedback.render(hostile_notebook(), feedback.Page(graded, "eve")))
    _, dom = rendered_text(page, tmp_path)
    assert pwned(dom) == [], f"payloads ran: {pwned(dom)}"


def test_autograded_notebook_keeps_no_hidden_test_or_token():
    """Are hidden test lines and pass tokens gone from the notebook formgrader shows?"""
    text = nbformat.writes(sanitize.safe_for_readers(hostile_notebook()))
    for leak in ("BEGIN HIDDEN TESTS", "check_fit_linear_log(", "[a3:"):
        assert leak not in text, leak


def test_active_outputs_become_a_note():
    """Are JavaScript and SVG outputs replaced (HTML and markdown outputs cleaned, plain text kept)?"""
    out = sanitize.safe_for_readers(hostile_notebook()).cells[1].outputs
    kinds = [sorted(o.data) for o in out]
    assert kinds == [["text/html", "text/plain"], ["text/plain"], ["text/plain"], ["text/markdown", "text/plain"]]
    assert "onerror" not in out[0].data["text/html"] and "<script" not in out[0].data["text/html"]


@pytest.mark.parametrize(
    "text",
    [
        "> quoted answer: the loss falls when 2 < 3",
        "**bold**, `code`, a [link](https://example.com) and ![plot](data:image/png;base64,AAAA)",
        "| a | b |\n|---|---|\n| 1 | 2 |",
        "$w^* = (X^T X + 2n\\lambda I)^{-1} X^T t$",
    ],
)
def test_harmless_markdown_reads_as_written(text):
    """Does a written answer without HTML stay exactly as the student wrote it?"""
    assert sanitize.safe_markdown(text) == text
