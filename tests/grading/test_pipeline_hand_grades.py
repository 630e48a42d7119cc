"""Hand grades are kept: re-grading a student never loses what a TA entered for an unchanged written answer."""

import nbformat
import pytest

from autograder import contract
from autograder.grading import pipeline
from tests.fixtures import toy


def enter_hand_grade(out, student, score, comment):
    """What a TA does in formgrader: a score and a comment on the toy notebook's written answer."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        gb.find_grade("written_toy", "toy", contract.ASSIGNMENT, student).manual_score = score
        gb.find_comment("written_toy", "toy", contract.ASSIGNMENT, student).manual_comment = comment
        gb.db.commit()


def hand_grade(out, student):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        g = gb.find_grade("written_toy", "toy", contract.ASSIGNMENT, student)
        c = gb.find_comment("written_toy", "toy", contract.ASSIGNMENT, student)
        return g.manual_score, c.manual_comment


@pytest.fixture(scope="module")
def regraded(tmp_path_factory):
    """Two students graded, hand-graded by a TA, then graded again with --force after one changed the answer."""
    root = tmp_path_factory.mktemp("hand")
    rel = toy.release(tmp_path_factory.getbasetemp())
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    answered = toy.fill(nb, dict(toy.RIGHT, written_toy="Counting does not depend on order."))
    subs = toy.write_students(root / "subs", rel, {"same": answered, "changed": answered})
    out = root / "out"
    kwargs = dict(workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    pipeline.grade(subs, out, **kwargs)
    enter_hand_grade(out, "same", 1.0, "Clear and right.")
    enter_hand_grade(out, "changed", 0.5, "Half right.")
    toy.write_students(subs, rel, {"changed": toy.fill(nb, dict(toy.RIGHT, written_toy="Because I say so."))})
    REGRADE["summary"] = pipeline.grade(subs, out, force=True, **kwargs)
    return out


REGRADE = {}  # the summary of the fixture's second grading


def test_regrading_keeps_the_hand_grade_of_an_unchanged_answer(regraded):
    """After grade --force, does an unchanged written answer keep the TA's score and comment?"""
    assert hand_grade(regraded, "same") == (1.0, "Clear and right.")


def test_regrading_drops_the_hand_grade_of_a_changed_answer(regraded):
    """Is the hand grade of an answer that changed since the TA graded it dropped, to be graded again?"""
    assert hand_grade(regraded, "changed") == (None, None)


def test_the_summary_counts_the_hand_grades_kept_and_dropped(regraded):
    """Does the re-grade's summary count one hand grade kept and one dropped (from what recording returned)?"""
    assert REGRADE["summary"].hand_grades == {"kept": 1, "dropped": 1}


def test_log_says_what_was_kept_and_what_was_not(regraded):
    """Does grading.log say which hand grade was kept and which was dropped, and why?"""
    log = (regraded / "grading.log").read_text()
    assert "HAND GRADE KEPT same/toy/written_toy: comment 'Clear and right.' and score 1 (answer unchanged)" in log
    assert "HAND GRADE DROPPED changed/toy/written_toy: the answer changed; grade it again" in log


def test_hand_grades_reach_grades_csv(regraded):
    """Does grades.csv carry the kept hand grade, and list the answer still waiting for a TA as ungraded?"""
    from autograder.records import Results

    Results(regraded).write_csvs()
    rows = {r["student"]: r for r in toy_rows(regraded / "grades.csv")}
    assert (rows["same"]["written_score"], rows["same"]["written_max_score"], rows["same"]["ungraded"]) == (
        "1",
        "1",
        "",
    )
    assert (rows["changed"]["written_score"], rows["changed"]["ungraded"]) == ("", "written_toy")
    cells = {(r["student"], r["grade_id"]): r for r in toy_rows(regraded / "grades_by_cell.csv")}
    assert (cells[("same", "written_toy")]["score"], cells[("same", "written_toy")]["message"]) == (
        "1",
        "graded by hand",
    )


def toy_rows(path):
    import csv

    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_feedback_command_shows_hand_grades_and_comments(regraded):
    """After `feedback OUT`, does a student's page show the TA's score and comment and a total that is final,
    while the page of an answer still waiting says it is provisional?"""
    from autograder.reports import feedback

    assert feedback.main(out=regraded) == 0
    same = (regraded / "feedback" / "same" / "toy.html").read_text()
    assert "1 / 1" in same and "Clear and right." in same and "Total: 4 / 4" in same
    assert "provisional" not in same
    changed = (regraded / "feedback" / "changed" / "toy.html").read_text()
    assert "not graded yet" in changed and "provisional: 1 written answer(s) still to be graded by a TA" in changed


def test_index_lists_every_page_with_what_needs_attention(regraded):
    """Does OUT/feedback/index.html link every student's page and list the one with an answer to grade
    under "needs attention"?"""
    from autograder.reports import feedback

    page = feedback.write_index(regraded).read_text()
    assert 'href="same/toy.html"' in page and 'href="changed/toy.html"' in page
    attention = page.split("<h2 id='all'>")[0]
    assert "to grade by hand: written_toy" in attention and ">changed<" in attention
    assert ">same<" not in attention


def test_a_kept_hand_grade_is_on_the_student_page_after_regrading(regraded):
    """After grade --force, does the page of the student whose hand grade was kept show it (the worker that rendered
    the page could not know it), and the page of the one whose answer changed not show the dropped one?"""
    same = (regraded / "feedback" / "same" / "toy.html").read_text(encoding="utf-8")
    changed = (regraded / "feedback" / "changed" / "toy.html").read_text(encoding="utf-8")
    assert "Clear and right." in same and "Half right." not in changed
