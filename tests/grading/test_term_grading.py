"""The course term through grading: submission times found, lateness and penalty in grades.csv from the
final score, extensions and hand grades added after grading, and bad term files refused before grading."""

import csv
import shutil

import pytest

from autograder import contract, records, term
from autograder.grading import discover, pipeline, times
from autograder.grading.ingest import Submission
from tests.fixtures import term as term_fixture

COURSE = term_fixture.COURSE
KW = dict(term_fixture.KW, ingest_fn=pipeline.plain_ingest)


def rows(out):
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def enter_hand_grade(out, student, score):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        gb.find_grade("written_toy", "toy", contract.ASSIGNMENT, student).manual_score = score
        gb.db.commit()


@pytest.fixture(scope="module")
def term_out(tmp_path_factory):
    """The toy course graded under the per_day course (tests/fixtures/term.py)."""
    return term_fixture.graded(tmp_path_factory.getbasetemp())


def test_timestamp_txt_gives_lateness(term_out):
    """Is 李明's nbgrader timestamp.txt (1 d 3 h late) read: 2 started days, 10 % × 2 of the raw score 3?"""
    row = rows(term_out[2])["李明"]
    assert (row["submitted_at"], row["late_units"], row["late_penalty"]) == ("2023-04-02T06:59:00+00:00", "2", "0.6")


def test_grade_writes_the_late_line_on_a_late_students_page(term_out):
    """Does the page `grade` writes for 李明 (late) say what being late cost, and Zoë Ñúñez's (on time) not?"""
    out = term_out[2]
    assert "1 d 3 h late" in (out / "feedback" / "李明" / "toy.html").read_text(encoding="utf-8")
    assert " late (due " not in (out / "feedback" / "Zoë Ñúñez" / "toy.html").read_text(encoding="utf-8")


def test_submitted_csv_on_time(term_out):
    """Is Zoë Ñúñez, submitting before the due date by --submitted, on time with no penalty?"""
    row = rows(term_out[2])["Zoë Ñúñez"]
    assert (row["late_units"], row["late_penalty"]) == ("0", "0")


def test_late_columns_come_after_submitted_as(term_out):
    """Do grades.csv's lateness columns follow the existing ones, after submitted_as?"""
    with open(term_out[2] / "grades.csv", encoding="utf-8") as f:
        header = f.readline().strip().split(",")
    assert header[header.index("submitted_as") + 1 :] == term.LATE_COLUMNS


def test_student_without_evidence_is_counted(term_out):
    """Does the summary name the student with no submission time (taken as on time)?"""
    assert term_out[3].no_submission_time == ["nobody"]


def test_hand_grade_added_after_grading_is_penalised(term_out, tmp_path):
    """After a TA grades Anna Lee's written answer (1 point), is her 3-days-late penalty 30 % of 3 + 1 points?"""
    out = tmp_path / "out"
    shutil.copytree(term_out[2], out)
    before = rows(out)["Anna Lee"]["late_penalty"]
    enter_hand_grade(out, "Anna Lee", 1.0)
    records.Results(out).write_csvs()
    assert (before, rows(out)["Anna Lee"]["late_penalty"]) == ("0.9", "1.2")


def test_extension_added_after_grading_recomputes(term_out, tmp_path):
    """Does granting 李明 an extension past his submission after grading make him on time, without regrading?"""
    root, subs, out, _ = term_out
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    (tmp_path / "ext.csv").write_text("student,due\n李明,2023-04-03T23:59:00-04:00\n", encoding="utf-8")
    summary = pipeline.grade(subs, copy, extensions=tmp_path / "ext.csv", **KW)
    row = rows(copy)["李明"]
    assert (summary.graded, row["due"], row["late_penalty"]) == ([], "2023-04-03T23:59:00-04:00", "0")


def test_extension_earlier_than_submission_still_late(term_out, tmp_path):
    """Is Anna Lee, 3 days late, still 1 day late (10 %) with a 2-day extension?"""
    root, subs, out, _ = term_out
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    (tmp_path / "ext.csv").write_text("student,due\nAnna Lee,2023-04-02T23:59:00-04:00\n")
    pipeline.grade(subs, copy, extensions=tmp_path / "ext.csv", **KW)
    assert rows(copy)["Anna Lee"]["late_units"] == "1"


@pytest.mark.slow
def test_extension_for_unknown_student_grades_nothing(term_out, tmp_path):
    """Is an extension for a student not in the batch nor in OUT refused before anything is graded?"""
    root, subs, _, _ = term_out
    (tmp_path / "ext.csv").write_text("student,due\nZoe Nunez,2023-04-02T23:59:00-04:00\n")
    with pytest.raises(term.TermError, match=r"ext\.csv:2: unknown student 'Zoe Nunez'"):
        pipeline.grade(subs, tmp_path / "out", extensions=tmp_path / "ext.csv", **KW)
    assert not list((tmp_path / "out" / ".state").glob("*.json"))


def test_bad_course_file_stops_before_grading(term_out, tmp_path):
    """Does grade with a course file holding an unknown key exit 2 with one line naming it, leaving no OUT?"""
    (tmp_path / "c.toml").write_text(COURSE.replace("max_days", "max_day"))
    code = pipeline.main(submissions=term_out[1], out=tmp_path / "out", course=tmp_path / "c.toml", workers=1)
    assert (code, (tmp_path / "out").exists()) == (2, False)


def test_canvas_late_marker_is_kept(tmp_path):
    """Does ingest keep Canvas's _LATE marker in the submission's lms dict instead of dropping it?"""
    (tmp_path / "leeanna_LATE_1234_5678_toy.ipynb").write_text("{}")
    [(raw, candidates)] = discover.discover(tmp_path).values()
    assert candidates[0].lms == {"lms": "canvas", "user_id": "1234", "name": "leeanna", "file_id": "5678", "late": True}


def test_canvas_late_without_time_is_recorded(tmp_path):
    """Is a Canvas-late submission without any time recorded as 'late (time unknown)'?"""
    lms = {"lms": "canvas", "user_id": "1234", "late": True}
    students = {"leeanna~canvas1234": [Submission.missing("leeanna~canvas1234", "toy", lms=lms)]}
    found, _ = times.evidence(students)
    assert found == {"leeanna~canvas1234": (term.UNKNOWN_TIME, "canvas _LATE")}


def test_timestamp_wins_over_submitted_csv(tmp_path):
    """When a student has both a timestamp.txt and a --submitted row, is timestamp.txt used (first found)?"""
    stamp = tmp_path / "subs" / "李明" / "timestamp.txt"
    stamp.parent.mkdir(parents=True)
    stamp.write_text("2023-04-01 00:00:00.000000 UTC")
    (tmp_path / "s.csv").write_text("student,submitted_at\n李明,2023-05-01T00:00:00Z\n", encoding="utf-8")
    found, _ = times.evidence({"李明": [Submission.missing("李明", "toy", timestamp=stamp)]}, tmp_path / "s.csv")
    assert found["李明"] == ("2023-04-01T00:00:00+00:00", "timestamp.txt")


def test_bad_timestamp_is_logged_not_guessed(tmp_path):
    """Is a timestamp.txt that does not parse ignored with a log line naming the file, and no time guessed?"""
    (tmp_path / "李明").mkdir()
    (tmp_path / "李明" / "timestamp.txt").write_text("last tuesday")
    found, log = times.evidence(
        {"李明": [Submission.missing("李明", "toy", timestamp=tmp_path / "李明" / "timestamp.txt")]}
    )
    assert (found, len(log), "timestamp.txt:1" in log[0]) == ({}, 1, True)


def test_worksheet_time_used_for_moodle_students(tmp_path):
    """Does a Moodle student without timestamp.txt get the worksheet's time, ahead of --submitted?"""
    ws = tmp_path / "ws.csv"
    ws.write_text(
        "Identifier,Full name,Last modified (submission),Grade\n"
        'Participant 123,Jane Doe,"Saturday, 1 April 2023, 12:05 AM",\n'
    )
    (tmp_path / "s.csv").write_text("student,submitted_at\nJane Doe~moodle123,2023-05-01T00:00:00Z\n")
    lms = {"lms": "moodle", "user_id": "123"}
    students = {"Jane Doe~moodle123": [Submission.missing("Jane Doe~moodle123", "toy", lms=lms)]}
    found, _ = times.evidence(students, tmp_path / "s.csv", ws, "America/Toronto")
    assert found == {"Jane Doe~moodle123": ("2023-04-01T00:05:00-04:00", "worksheet")}


def test_feedback_with_extensions_recomputes(term_out, tmp_path):
    """Does `feedback OUT --extensions FILE` (a later command) replace OUT's extensions and re-compute grades.csv?"""
    from autograder.reports import feedback

    out = tmp_path / "out"
    shutil.copytree(term_out[2], out)
    (tmp_path / "ext.csv").write_text("student,due\nAnna Lee,2023-04-05T23:59:00-04:00\n")
    code = feedback.main(out=out, extensions=tmp_path / "ext.csv")
    assert (code, rows(out)["Anna Lee"]["late_penalty"]) == (0, "0")


def test_broken_term_file_in_out_applies_no_penalty_and_logs(term_out, tmp_path):
    """When OUT/term/extensions.csv was broken by hand, are grades.csv still written (no penalty from it) and the
    reason logged?"""
    out = tmp_path / "out"
    shutil.copytree(term_out[2], out)
    (out / "term" / "extensions.csv").write_text("student,due\n李明,next week\n", encoding="utf-8")
    records.Results(out).write_csvs()
    log = (out / "grading.log").read_text(encoding="utf-8")
    assert (rows(out)["李明"]["late_penalty"], "TERM not applied" in log) == ("", True)
