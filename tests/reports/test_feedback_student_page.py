"""A student's feedback page says what the student did and earned, never what the staff are told to do; the TA's
index lists only the work still pending."""

import json
import re

import nbformat
import pytest

from autograder.gradebook import HandGrade
from autograder.records import Results
from autograder.reports import feedback
from tests.fixtures.pages import page_of

ANNA = "Anna Lee~moodle1017"  # one of two Moodle students called Anna Lee, as ingest names her
ZOE = "Zoë Ñúñez"
CAPTION = "a woman in naval uniform"
# What the caption check says when the real CLIP weights are not cached: instructions for the grading staff.
UNDECIDED = (
    "ViT-B-32 weights not in /srv/models/hub; run `python -m autograder fetch-models` on a machine with internet and "
    f"set A3_MODEL_CACHE. Grade by hand: does the caption {CAPTION!r} single out the target image grace_hopper.jpg?"
)
STAFF_WORDS = [
    "fetch-models",
    "python -m autograder",
    "A3_MODEL_CACHE",
    "Grade by hand",
    "not graded automatically",
    "grace_hopper.jpg",
    "/srv/models",
    "UNGRADABLE",
    "CheckFailed",
    "~moodle",
    "is graded as",
    "index.html",
]


def visible_text(page):
    """The text a reader sees in an HTML page (styles and scripts dropped, tags removed)."""
    import html

    page = re.sub(r"<(style|script)\b.*?</\1>", "", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def caption_cell():
    """The graded caption test cell as nbgrader leaves it when the check could not decide: the UNGRADABLE line it
    printed (token already stripped by sanitize's rules, here still signed) and the CheckFailed it raised."""
    meta = {"nbgrader": {"grade": True, "solution": False, "grade_id": "test_scavenger_caption", "points": 1}}
    cell = nbformat.v4.new_code_cell("assert isinstance(scavenger_caption, str)", metadata=meta)
    cell.outputs = [
        nbformat.v4.new_output(
            "stream", name="stdout", text=f"UNGRADABLE scavenger_caption [a3:0123456789abcdef0123]: {UNDECIDED}\n"
        ),
        nbformat.v4.new_output(
            "error",
            ename="CheckFailed",
            evalue=f"scavenger_caption: not graded automatically: {UNDECIDED}",
            traceback=[f"CheckFailed: scavenger_caption: not graded automatically: {UNDECIDED}"],
        ),
    ]
    return cell


def clip_summary(**changes):
    """clip's recorded result: one check passed, the caption left to a person, one written answer."""
    summary = {
        "notebook": "clip",
        "score": 4.0,
        "max_score": 5.0,
        "status": "needs manual grading: scavenger_caption",
        "cells": [
            {"grade_id": "rank_images", "score": 4.0, "max_score": 4.0, "note": "passed"},
            {
                "grade_id": "scavenger_caption",
                "score": None,
                "max_score": 1.0,
                "note": f"needs manual grading: {UNDECIDED}",
            },
        ],
        "repairs": [f"student 'Anna Lee' is graded as {ANNA!r}", "removed editor metadata: colab"],
        "notes": [],
        "manual": {"written_caption": 1.0},
    }
    return {**summary, **changes}


HAND = {"test_scavenger_caption": HandGrade(1.0, ""), "written_caption": HandGrade(1.0, "Good.")}


def page(summary, student=ANNA):
    return feedback.render(nbformat.v4.new_notebook(cells=[caption_cell()]), page_of(summary, student))


@pytest.mark.parametrize("hand", [{}, HAND], ids=["waiting", "hand graded"])
def test_student_page_has_no_staff_text(hand):
    """Before and after the caption is graded by hand, is the page free of the check's instructions to staff, the
    command to run, the model path, the internal id and the REPAIR line naming it?"""
    text = page(clip_summary(hand=hand))
    assert [w for w in STAFF_WORDS if w in text] == []


def test_hand_graded_caption_shows_its_score_not_an_error():
    """Once a TA graded the caption, does its verdict say so, with no red error and no "needs manual grading" left?"""
    text = visible_text(page(clip_summary(hand=HAND)))
    assert "scavenger_caption: 1 / 1 — graded by hand" in text
    assert "needs manual grading" not in text and "Error" not in text


def test_waiting_caption_says_a_ta_grades_it():
    """While the caption waits, does the page say only that a TA grades it?"""
    text = visible_text(page(clip_summary()))
    assert "scavenger_caption: needs manual grading — a TA grades this cell by hand" in text


def test_page_names_the_student_without_the_lms_id():
    """Is Anna Lee (Moodle user 1017) named Anna Lee on her page, with her other repairs kept?"""
    text = visible_text(page(clip_summary()))
    assert "Feedback: clip.ipynb, Anna Lee" in text and "1017" not in text
    assert "removed editor metadata: colab" in text


def test_final_total_is_not_called_so_far():
    """With every cell and answer graded, does the page give the total as final (not "Total so far")?"""
    text = visible_text(page(clip_summary(hand=HAND), ZOE))
    assert "Total: 6 / 6 (autograded and written)" in text and "so far" not in text


def test_provisional_total_says_what_waits():
    """While the caption and the written answer wait, is the total "so far" and provisional, naming both?"""
    text = visible_text(page(clip_summary(), ZOE))
    assert "Total so far: 4 / 6 (autograded and written), provisional: 1 graded cell(s) and 1 written answer(s)" in text


def test_late_total_shows_the_penalty():
    """For a late student, does the total show the raw points, the late penalty and what is left?"""
    late = "Submitted 2 d late (due 2023-03-31 23:59 -0400) → −20 % (−1.2 points)"
    text = visible_text(page(clip_summary(hand=HAND, late=late, late_penalty=1.2), "李明"))
    assert "Total: 6 − 1.2 late penalty = 4.8 / 6 (autograded and written)" in text and late in text


def test_late_total_without_written_answers_shows_the_penalty():
    """A late notebook without written answers: does the page still give a total with the penalty taken off?"""
    summary = clip_summary(hand=HAND, manual={}, late="Submitted 1 d late", late_penalty=0.5)
    text = visible_text(page(summary, "李明"))
    assert "Total: 5 − 0.5 late penalty = 4.5 / 5 (autograded)" in text


# --- the TA's index -----------------------------------------------------------------------------


@pytest.fixture
def index_out(tmp_path):
    """An OUT with the two Anna Lees' clip results: 1017's caption and answer hand graded, 1001's still waiting."""
    out = tmp_path / "out"
    results = Results(out)
    students = {"Anna Lee~moodle1017": HAND, "Anna Lee~moodle1001": {}}
    for student in students:
        state = {
            "student": student,
            "submission": {"submitted_as": "Anna Lee"},
            "complete": True,
            "notebooks": {"clip": clip_summary(repairs=[])},
        }
        (results.state_dir / f"{student}.json").write_text(json.dumps(state))
    results.write_csvs({(student, "clip"): hand for student, hand in students.items()})
    feedback.write_index(out)
    return out


def _section(index, title):
    """The rows of one index section, as text."""
    part = index.split(f">{title}")[1].split("<h2")[0]
    return [visible_text(row) for row in re.findall(r"<tr><td>.*?</tr>", part)]


def test_index_lists_only_pending_work(index_out):
    """Does "Needs attention" hold only the Anna Lee whose caption still waits, with the reason for the TA?"""
    index = (index_out / "feedback" / "index.html").read_text()
    (row,) = _section(index, "Needs attention")
    assert 'href="Anna%20Lee~moodle1001/clip.html"' in index.split("All submissions")[0] and "fetch-models" in row
    assert "Needs attention (1)" in index


def test_index_keeps_no_staff_text_for_done_work(index_out):
    """In "All submissions", does the hand-graded Anna Lee's row carry no reason meant for the grading staff?"""
    index = (index_out / "feedback" / "index.html").read_text()
    rows = _section(index, "All submissions")
    done = [r for r in rows if "fetch-models" not in r]
    assert (len(rows), len(done)) == (2, 1)
    assert "5 / 5 1 / 1 graded" in done[0] and "to grade by hand" not in done[0]


def test_a_failure_of_the_grader_shows_no_exception():
    """When the grader itself failed (its exception naming a workspace folder and the student's id), does the page
    say only that the notebook will be graded again?"""
    why = "grading failed: OSError: [Errno 28] No space left on device: '/srv/grading/.work/Anna Lee~moodle1017/x'"
    summary = clip_summary(
        score=0.0,
        status=why,
        cells=[{"grade_id": "rank_images", "score": 0.0, "max_score": 4.0, "note": why}],
        manual={},
    )
    text = visible_text(page(summary))
    assert "the grader itself failed on this notebook, which will be graded again" in text
    assert "/srv/grading" not in text and "OSError" not in text


def test_index_tells_two_students_of_one_name_apart(index_out):
    """Does the TA's index name each of the two Moodle students called Anna Lee with the id that tells them apart?"""
    rows = _section((index_out / "feedback" / "index.html").read_text(), "All submissions")
    assert sorted(r.split(" clip ")[0] for r in rows) == [
        "Anna Lee (Anna Lee~moodle1001)",
        "Anna Lee (Anna Lee~moodle1017)",
    ]
