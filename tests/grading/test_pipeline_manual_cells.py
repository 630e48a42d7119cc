"""A cell the checks cannot decide (the CLIP caption without its weights) is graded in formgrader, counted, and kept."""

import csv

import nbformat
import pytest

from autograder import contract, paths
from autograder.demo import reference_submission
from autograder.grading import pipeline
from autograder.reports import feedback

STUDENT = "Zoë Ñúñez"
CAPTION = contract.test_cell_id("scavenger_caption")


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def enter_score(out, score):
    """What a TA does in formgrader: a score for the caption cell."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        grade = gb.find_grade(CAPTION, "clip", contract.ASSIGNMENT, STUDENT)
        needed = grade.needs_manual_grade
        grade.manual_score = score
        gb.db.commit()
    return needed


@pytest.fixture(scope="module")
def caption(tmp_path_factory):
    """A student's reference clip notebook graded (no CLIP weights here), the caption scored by hand, then re-rendered
    with `feedback` and graded again with --force."""
    root = tmp_path_factory.mktemp("caption")
    rel = nbformat.read(paths.RELEASE / "clip.ipynb", as_version=4)
    src = nbformat.read(paths.SOURCE / "clip.ipynb", as_version=4)
    (root / "subs" / STUDENT).mkdir(parents=True)
    nbformat.write(reference_submission(rel, src), root / "subs" / STUDENT / "clip.ipynb")
    out = root / "out"
    pipeline.grade(root / "subs", out, workers=1)
    first = {r["notebook"]: r for r in rows(out / "grades.csv")}["clip"]
    needed = enter_score(out, 1.0)
    feedback.rerender(out)
    scored = {r["notebook"]: r for r in rows(out / "grades.csv")}["clip"]
    summary = pipeline.grade(root / "subs", out, workers=1, force=True)
    again = {r["notebook"]: r for r in rows(out / "grades.csv")}["clip"]
    return first, needed, scored, summary, again


@pytest.mark.slow
def test_the_caption_waits_for_a_person_in_formgrader(caption):
    """Without CLIP weights, is the caption listed to grade and marked for formgrader (needs_manual_grade)?"""
    first, needed, *_ = caption
    assert first["status"] == "needs manual grading: scavenger_caption" and first["ungraded"] == "scavenger_caption"
    assert needed


@pytest.mark.slow
def test_a_hand_score_on_the_caption_counts(caption):
    """After a TA scores the caption and runs `feedback`, does the score count and the total become final?"""
    _, _, scored, *_ = caption
    assert (scored["score"], scored["status"], scored["ungraded"]) == ("5", "graded", ""), scored


@pytest.mark.slow
def test_regrading_keeps_the_caption_score_and_says_so(caption):
    """Does grade --force keep the caption's hand score (the answer is unchanged) and count it on the console?"""
    *_, summary, again = caption
    assert summary.hand_grades == {"kept": 1}, summary.hand_grades
    assert (again["score"], again["ungraded"]) == ("5", ""), again
