"""Every kind of page the kit writes passes axe-core's WCAG 2.1 A and AA rules in headless Chromium: the toy class
graded (feedback pages of a full, an untouched, a wrong, a missing and an unreadable submission; the TA's index;
the similarity report; the grade report), each course notebook's feedback page with a failed and a waiting cell,
and the demo's own pages, graded fresh; they reflow at 200 % zoom and print without cutting code."""

import shutil

import nbformat
import pytest

from autograder import contract, demo, paths
from autograder.grading import pipeline
from autograder.reports import feedback, nbhtml, report
from tests.fixtures import toy
from tests.fixtures.pages import page_of
from tests.reports import axe
from tests.reports.browser import Browser

pytestmark = pytest.mark.slow


def _course_page(notebook):
    """The notebook's feedback page for a student with the reference answers, one check failed, one cell and the
    written answers waiting for a TA, and a repair."""
    release = nbformat.read(paths.RELEASE / f"{notebook}.ipynb", as_version=4)
    nb = demo.reference_submission(release, nbformat.read(paths.SOURCE / f"{notebook}.ipynb", as_version=4))
    cells = [
        {"grade_id": g, "score": p, "max_score": p, "note": "passed"} for g, p in contract.GRADED[notebook].items()
    ]
    cells[0] = dict(cells[0], score=0.0, note="CheckFailed: expected shape (2, 5), got (5, 2)")
    cells[1] = dict(cells[1], score=None, note="needs manual grading: a TA looks at the plot")
    summary = {
        "notebook": notebook,
        "score": sum(c["score"] or 0.0 for c in cells),
        "max_score": float(sum(contract.GRADED[notebook].values())),
        "status": "graded",
        "cells": cells,
        "manual": dict(contract.WRITTEN[notebook]),
        "repairs": [f"renamed 'Copy of {notebook}.ipynb' to {notebook}.ipynb"],
    }
    return feedback.render(nb, page_of(summary, "Zoë Ñúñez"))


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    """A copy of the graded toy class's OUT with its grade report and the course notebooks' pages added."""
    graded, _ = toy.graded(tmp_path_factory.getbasetemp())
    out = tmp_path_factory.mktemp("a11y") / "out"
    shutil.copytree(graded, out)
    assert report.main(out=out) == 0
    (out / "feedback" / "Zoë Ñúñez").mkdir()
    for notebook in contract.NOTEBOOKS:
        (out / "feedback" / "Zoë Ñúñez" / f"{notebook}.html").write_text(_course_page(notebook), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium = Browser(tmp_path_factory.mktemp("chromium"))
    yield chromium
    chromium.close()


def test_every_page_kind_is_checked(out):
    """Does the class hold every kind of page the kit writes: students' pages (one per course notebook), the TA's
    index, the grade report and the similarity report?"""
    names = {p.relative_to(out).as_posix() for p in axe.pages(out)}
    assert {"feedback/index.html", "report.html", "similarity.html"} <= names
    assert {f"feedback/Zoë Ñúñez/{nb}.html" for nb in contract.NOTEBOOKS} <= names
    assert {"feedback/ref/toy.html", "feedback/untouched/toy.html", "feedback/wrongmul/toy.html"} <= names


def test_every_page_passes_wcag_21_aa(out, browser):
    """Does axe-core find no WCAG 2.1 A or AA violation on any page (contrast, lang, headings, tables, links, image
    text alternatives)?"""
    results = {p.relative_to(out).as_posix(): axe.check(browser, p.as_uri()) for p in axe.pages(out)}
    assert not any(results.values()), "\n".join(axe.report({p: v for p, v in results.items() if v}))


def test_a_contrast_regression_is_caught(out, browser, tmp_path):
    """Without the readable colours (nbconvert's own syntax palette and prompts), does the check fail on a course
    page, naming color-contrast?"""
    page = out / "feedback" / "Zoë Ñúñez" / "theory.html"
    html = page.read_text(encoding="utf-8")
    assert nbhtml.READABLE_CSS in html
    faded = page.with_name("theory-faded.html")
    faded.write_text(html.replace(nbhtml.READABLE_CSS, ""), encoding="utf-8")
    found = {v["id"]: len(v["nodes"]) for v in axe.check(browser, faded.as_uri())}
    assert found.get("color-contrast", 0) > 100


# Elements whose text must wrap at 200 % zoom; code (`pre`) may scroll inside its own box, as WCAG 1.4.10 allows.
_OVERFLOW = """(() => { const width = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('p, li, h1, h2, h3, td, th')]
    .filter(e => e.getBoundingClientRect().right > width + 1 && !e.closest('pre, .jp-OutputArea-output'));
  return {page: document.documentElement.scrollWidth - width, wide: wide.slice(0, 3).map(e => e.textContent.slice(0, 60))};
})()"""


def test_no_page_scrolls_sideways_at_200_percent_zoom(out, tmp_path):
    """At 200 % zoom of a 1280-pixel window (640 CSS pixels), does every page fit its width, with no paragraph, list
    item, heading or table cell running past it?"""
    zoomed = Browser(tmp_path / "profile")
    try:
        zoomed.send("Emulation.setDeviceMetricsOverride", width=640, height=800, deviceScaleFactor=2, mobile=False)
        found = {}
        for page in axe.pages(out):
            zoomed.open(page.as_uri(), "document.body")
            found[page.relative_to(out).as_posix()] = zoomed.run(_OVERFLOW)
    finally:
        zoomed.close()
    assert {p: f for p, f in found.items() if f["page"] > 0 or f["wide"]} == {}


def test_printed_pages_cut_no_code_line(out, tmp_path):
    """Printed (print media, a 700-pixel page), does every code input and output wrap inside the page, so no line is
    cut off at its edge, on the course notebooks' pages?"""
    printer = Browser(tmp_path / "profile")
    try:
        printer.send("Emulation.setDeviceMetricsOverride", width=700, height=900, deviceScaleFactor=1, mobile=False)
        printer.send("Emulation.setEmulatedMedia", media="print")
        cut = {}
        for notebook in contract.NOTEBOOKS:
            printer.open((out / "feedback" / "Zoë Ñúñez" / f"{notebook}.html").as_uri(), "document.body")
            cut[notebook] = printer.run(
                "[...document.querySelectorAll('pre')].filter(e => e.scrollWidth > e.clientWidth + 1).length"
            )
    finally:
        printer.close()
    assert cut == {notebook: 0 for notebook in contract.NOTEBOOKS}


# The demo's students whose pages differ in kind: everything right, nothing done, a wrong check in nmt and in clip.
DEMO_STUDENTS = ("reference", "untouched", "wrong_causal_scaled_dot_attention", "wrong_rank_images")


def test_the_demos_pages_pass_wcag_21_aa(tmp_path, browser):
    """Graded fresh, do the demo's pages (four students' pages of every notebook, the index, the similarity report
    and the grade report) pass axe-core with no violation?"""
    made = demo.write_submissions(tmp_path / "all")
    for student in DEMO_STUDENTS:
        assert student in made
        shutil.copytree(tmp_path / "all" / student, tmp_path / "subs" / student)
    out = tmp_path / "out"
    pipeline.grade(tmp_path / "subs", out, workers=1)
    assert report.main(out=out) == 0
    pages = axe.pages(out)
    assert len(pages) == len(DEMO_STUDENTS) * len(contract.NOTEBOOKS) + 3
    results = {p.relative_to(out).as_posix(): axe.check(browser, p.as_uri()) for p in pages}
    assert not any(results.values()), "\n".join(axe.report({p: v for p, v in results.items() if v}))
