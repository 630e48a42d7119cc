"""Every total can become final: records.final_scores completes what grading decided with what people entered."""

from autograder.gradebook import HandGrade
from autograder.records import (
    BLANK,
    HAND_GRADED,
    REDOWNLOAD,
    WAITING,
    CellResult,
    NotebookResult,
    Status,
    final_scores,
    is_blank_answer,
)

TESTS = {"test_add": 2.0, "test_caption": 1.0}
WRITTEN = {"written_why": 1.0, "written_how": 2.0}


def graded(caption_score=1.0, blank=()):
    cells = [("add", 2.0, 2.0, "passed"), ("caption", caption_score, 1.0, "passed")]
    result = NotebookResult.graded("clip", [CellResult(*c) for c in cells], 3.0)
    result.manual, result.blank = dict(WRITTEN), list(blank)
    return result


def test_written_answers_wait_for_a_person():
    """Does a written answer nobody graded yet stay waiting (score None)?"""
    _, written = final_scores(graded(), {})
    assert written == {"written_why": (None, WAITING), "written_how": (None, WAITING)}


def test_a_blank_answer_scores_zero_by_itself():
    """Is a blank written answer 0 and final, without a person?"""
    _, written = final_scores(graded(blank=["written_why"]), {})
    assert written["written_why"] == (0.0, BLANK) and written["written_how"] == (None, WAITING)


def test_a_person_may_still_score_a_blank_answer():
    """Does a score a TA entered for a blank answer win over the automatic 0?"""
    _, written = final_scores(graded(blank=["written_why"]), {"written_why": HandGrade(0.5, "")})
    assert written["written_why"] == (0.5, HAND_GRADED)


def test_a_missing_notebook_has_its_written_answers_zero_and_final():
    """Are the written answers of a missing notebook 0 and final (it has no formgrader page)?"""
    missing = NotebookResult.failed("clip", TESTS, "missing")
    missing.manual = dict(WRITTEN)
    _, written = final_scores(missing, {})
    assert written == {"written_why": (0.0, "not graded: missing"), "written_how": (0.0, "not graded: missing")}


def test_an_invalid_notebook_has_its_written_answers_zero_and_final():
    """Are the written answers of a file that is not a notebook 0 and final too?"""
    bad = NotebookResult.failed("clip", TESTS, "not a notebook: invalid JSON (line 1, column 2)")
    bad.manual = dict(WRITTEN)
    _, written = final_scores(bad, {})
    assert all(score == 0.0 for score, _ in written.values()), written


def test_a_grader_failure_leaves_written_answers_waiting():
    """When the grader itself failed (the next run grades the notebook), do written answers stay waiting?"""
    failed = NotebookResult.failed("clip", TESTS, "grading failed: worker process died 3 times")
    failed.manual = dict(WRITTEN)
    _, written = final_scores(failed, {})
    assert all(score is None for score, _ in written.values()), written


def test_a_damaged_download_leaves_written_answers_waiting_for_a_good_one():
    """Are the written answers of a notebook the TA's LMS download damaged left waiting (not 0) for a good
    download?"""
    damaged = NotebookResult.failed("clip", TESTS, Status.DAMAGED.detail("'clip.ipynb' could not be read"))
    damaged.manual = dict(WRITTEN)
    _, written = final_scores(damaged, {})
    assert written == {"written_why": (None, REDOWNLOAD), "written_how": (None, REDOWNLOAD)}


def test_a_hand_score_completes_a_cell_left_to_a_person():
    """Does a score entered on a test cell that needed a person (the CLIP caption) count, and make the notebook
    graded?"""
    summary = graded(caption_score=None)
    assert summary.status == "needs manual grading: caption"
    done, _ = final_scores(summary, {"test_caption": HandGrade(1.0, "")})
    caption = next(c for c in done.cells if c.grade_id == "caption")
    assert (caption.score, caption.note, done.score, done.status) == (1.0, HAND_GRADED, 3.0, "graded")


def test_a_hand_score_never_replaces_an_automatic_one():
    """Is a manual score on an autograded cell that the checks decided left alone?"""
    done, _ = final_scores(graded(caption_score=0.0), {"test_caption": HandGrade(1.0, "")})
    assert done.score == 2.0


def test_final_scores_leaves_the_recorded_summary_as_it_was():
    """Does completing a summary leave the recorded one unchanged (it is the grader's verdict)?"""
    summary = graded(caption_score=None)
    final_scores(summary, {"test_caption": HandGrade(1.0, "")})
    assert summary.cells[1].score is None and summary.status.startswith("needs manual")


def test_blank_answers():
    """Are empty, whitespace-only and unchanged answers blank, and a real answer not?"""
    stub = "YOUR ANSWER HERE"
    assert is_blank_answer("", stub) and is_blank_answer(" \n\t", stub) and is_blank_answer("YOUR ANSWER  HERE\n", stub)
    assert not is_blank_answer("Because the loss is convex.", stub)
