"""Every student page of a graded class carries no staff text: the demo's clip submissions graded as a Moodle class
(two students called Anna Lee, one late), before and after the CLIP caption and the written answers are graded
by hand."""

import re

import nbformat
import pytest

from autograder import contract, demo, paths
from autograder.grading import pipeline
from autograder.reports import feedback
from tests.fixtures import term as term_fixture
from tests.fixtures.pages import page_of

pytestmark = pytest.mark.slow

# (full name, Moodle participant id, what they submit)
STUDENTS = [
    ("Anna Lee", "1001", "reference"),
    ("Anna Lee", "1017", "wrong"),
    ("Zoë Ñúñez", "1020", "reference"),
    ("李明", "1030", "reference"),
]
LATE = ("李明~moodle1030", "2023-04-02T23:00:00-04:00")  # 2 started days after the due date
# Words only the grading staff may read: the caption check's instructions, commands, environment variables,
# the target image's file name, internal ids and the REPAIR line naming them, and links to the TA's index.
STAFF_TEXT = [
    "fetch-models",
    "python -m autograder",
    "A3_MODEL_CACHE",
    "Grade by hand",
    "not graded automatically",
    "grace_hopper.jpg",
    "UNGRADABLE",
    "[a3:",
    "~moodle",
    "is graded as",
    "assignsubmission",
    "index.html",
    "similarity.html",
    ".venv",
    "site-packages",
]


def _hand_grade(out):
    """A TA gives every cell and written answer waiting for a person full marks in formgrader."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        for student in gb.students:
            for nb in gb.find_submission(contract.ASSIGNMENT, student.id).notebooks:
                for grade in nb.grades:
                    if grade.needs_manual_grade:
                        grade.manual_score = grade.max_score
        gb.db.commit()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded under course.toml with 李明 late: (root, OUT, {page: html} after grading, {page: html} after
    hand grading and `feedback OUT`, the TA's index at both times)."""
    root = tmp_path_factory.mktemp("class")
    rel = nbformat.read(paths.RELEASE / "clip.ipynb", as_version=4)
    ref = demo.reference_submission(rel, nbformat.read(paths.SOURCE / "clip.ipynb", as_version=4))
    ref = demo.with_cell(ref, "written_caption_search", "A caption naming what only the target shows ranks it first.")
    notebooks = {
        "reference": ref,
        "wrong": demo.with_cell(ref, "rank_images", demo.wrong_samples("clip")["rank_images"]),
    }
    for name, pid, what in STUDENTS:
        path = root / "subs" / f"{name}_{pid}_assignsubmission_file_" / "clip.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(notebooks[what], path)
    (root / "course.toml").write_text(term_fixture.COURSE)
    (root / "submitted.csv").write_text(f"student,submitted_at\n{LATE[0]},{LATE[1]}\n", encoding="utf-8")
    out = root / "out"
    pipeline.grade(root / "subs", out, workers=1, course=root / "course.toml", submitted=root / "submitted.csv")
    before, index_before = _pages(out), (out / "feedback" / "index.html").read_text(encoding="utf-8")
    _hand_grade(out)
    assert feedback.main(out=out) == 0
    return root, out, before, _pages(out), (index_before, (out / "feedback" / "index.html").read_text(encoding="utf-8"))


def _pages(out):
    """{student folder/page: html} of every student page under OUT/feedback."""
    return {
        f"{p.parent.name}/{p.name}": p.read_text(encoding="utf-8") for p in sorted((out / "feedback").glob("*/*.html"))
    }


def _release_page(notebook):
    """The released notebook as a feedback page shows it, before any student's work or result is added."""
    summary = {"notebook": notebook, "score": 0.0, "max_score": 0.0, "status": "graded", "cells": []}
    return feedback.render(
        nbformat.read(paths.RELEASE / f"{notebook}.ipynb", as_version=4), page_of(summary, "student")
    )


def _staff_text(pages, root):
    """{page: staff words and grading-machine paths it holds more often than the released notebook itself does
    (the clip notebook's own text names A3_MODEL_CACHE)}, pages with none left out."""
    words = [*STAFF_TEXT, str(root), str(paths.ROOT)]
    release = {nb: _release_page(nb) for nb in contract.NOTEBOOKS}
    found = {}
    for name, html in pages.items():
        course = release[name.rsplit("/", 1)[1].removesuffix(".html")]
        hits = [w for w in words if html.count(w) > course.count(w)]
        if hits:
            found[name] = hits
    return found


def test_every_page_of_the_class_is_there(graded):
    """Does each of the 4 students get a page per course notebook (clip graded, the others missing)?"""
    _, _, before, after, _ = graded
    assert (len(before), len(after)) == (4 * len(contract.NOTEBOOKS),) * 2


def test_no_staff_text_while_the_caption_waits(graded):
    """Right after grading, with every caption waiting for a person, is every student page free of staff text?"""
    root, _, before, _, _ = graded
    assert _staff_text(before, root) == {}


def test_no_staff_text_after_hand_grading(graded):
    """After the captions and written answers were graded by hand and `feedback OUT` ran, is every student page
    free of staff text?"""
    root, _, _, after, _ = graded
    assert _staff_text(after, root) == {}


def test_hand_graded_caption_reads_as_graded(graded):
    """After hand grading, does every clip page give the caption as graded by hand and the total as final?"""
    _, _, _, after, _ = graded
    clip = {name: html for name, html in after.items() if name.endswith("/clip.html")}
    assert len(clip) == 4
    for name, html in clip.items():
        text = re.sub(r"<[^>]+>", "", html)
        assert "scavenger_caption: 1 / 1 — graded by hand" in text, name
        assert "needs manual grading" not in text and "Total so far" not in text, name
        assert re.search(r"Total: [\d.]+ (− [\d.]+ late penalty = [\d.]+ )?/ 6 \(autograded and written\)", text), name


def test_late_page_shows_the_penalty_in_its_total(graded):
    """Does 李明's clip page, 2 days late, take the late penalty off its total?"""
    _, _, _, after, _ = graded
    text = re.sub(r"<[^>]+>", "", after[f"{LATE[0]}/clip.html"])
    assert re.search(r"Total: [\d.]+ − [\d.]+ late penalty = [\d.]+ / \d+", text), text[:2000]


def test_pages_name_each_anna_lee_without_her_moodle_id(graded):
    """Are both Anna Lees named "Anna Lee" on their own pages (the Moodle id stays in the folder name)?"""
    _, _, _, after, _ = graded
    for pid in ("1001", "1017"):
        assert "Feedback: clip.ipynb, Anna Lee</h1>" in re.sub(
            r"<a [^>]*>¶</a>", "", after[f"Anna Lee~moodle{pid}/clip.html"]
        )


def test_index_lists_only_pending_work(graded):
    """Does the TA's index list the 4 clip notebooks under "Needs attention" while their caption and answer wait,
    and none once they are graded by hand (the missing notebooks need nothing)?"""
    *_, (before, after) = graded
    assert ("Needs attention (4)" in before, "Needs attention (0)" in after) == (True, True)
