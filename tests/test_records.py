"""OUT bookkeeping: CSVs rewritten from recorded students, resume state, failures."""

import csv

from autograder.records import REDOWNLOAD, NotebookResult, Results, Status, StudentResult

LAYOUT = {
    "nmt": {"tests": {"test_a": 1.0, "test_b": 2.0}, "manual": {}},
    "bert": {"tests": {"test_c": 1.0}, "manual": {}},
}


def result(student, nmt_score=3.0, complete=True, out=None):
    """A recorded-looking result of `student`; with `out`, its nmt page staged in OUT as render_pages leaves it."""
    cells = [
        {"grade_id": "a", "score": 1.0, "max_score": 1.0, "note": "passed"},
        {"grade_id": "b", "score": nmt_score - 1.0, "max_score": 2.0, "note": "x"},
    ]
    return StudentResult.from_dict(
        {
            "student": student,
            "complete": complete,
            "seconds": 1.0,
            "log": [f"hello {student}"],
            "shard": None,
            "pages": str(staged(out, student, {"nmt.html": "<html>nmt</html>"})) if out else "",
            "notebooks": {
                "nmt": {
                    "notebook": "nmt",
                    "status": "graded",
                    "score": nmt_score,
                    "max_score": 3.0,
                    "cells": cells,
                    "timing": {"seconds": 9.0, "overhead": 5.0, "setup": 1.0, "cells": 2.0, "tests": 1.0},
                },
                "bert": {
                    "notebook": "bert",
                    "status": "missing",
                    "score": 0.0,
                    "max_score": 1.0,
                    "timing": {},
                    "cells": [{"grade_id": "c", "score": 0.0, "max_score": 1.0, "note": "missing"}],
                },
            },
        }
    )


def staged(out, student, files):
    """OUT/.cache/pages/<student> holding `files` ({name: text}), as render_pages leaves a student's pages."""
    folder = out / ".cache" / "pages" / student
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def read(path):
    return list(csv.DictReader(open(path)))


def recorded(out, *results):
    """Results(out) after recording `results` and writing the CSVs, as a batch's end does."""
    res = Results(out)
    for r in results:
        res.record(r)
    res.write_csvs()
    return res


def test_recording_twice_keeps_one_row_per_notebook(tmp_path):
    """Does recording the same student again replace their rows instead of adding duplicates?"""
    recorded(tmp_path, result("ann", 3.0), result("ann", 1.0))
    grades = read(tmp_path / "grades.csv")
    assert [(r["student"], r["notebook"], r["score"]) for r in grades] == [("ann", "nmt", "1"), ("ann", "bert", "0")]
    assert len(read(tmp_path / "grades_by_cell.csv")) == 3


def test_csv_columns_follow_the_spec(tmp_path):
    """Do grades.csv and grades_by_cell.csv start with the spec's columns, the hand-grading columns after them (in
    grades.csv the TA's flags too), then the student's name as submitted (and, in grades.csv only, the lateness
    columns of issue 24)?"""
    recorded(tmp_path, result("ann"))
    assert (tmp_path / "grades.csv").read_text().splitlines()[0] == (
        "student,notebook,score,max_score,status,written_score,written_max_score,ungraded,flags,submitted_as,"
        "submitted_at,due,late_units,late_penalty"
    )
    assert (tmp_path / "grades_by_cell.csv").read_text().splitlines()[
        0
    ] == "student,notebook,grade_id,score,max_score,message,submitted_as"


def test_written_answers_wait_for_a_person(tmp_path):
    """Before any hand grading, are the written answers listed as ungraded, with empty scores and their points?"""
    r = result("ann")
    r.notebooks["nmt"].manual = {"written_x": 2.0, "written_y": 1.0}
    recorded(tmp_path, r)
    row = read(tmp_path / "grades.csv")[0]
    assert (row["written_score"], row["written_max_score"], row["ungraded"]) == ("", "3", "written_x written_y")
    cells = {c["grade_id"]: c for c in read(tmp_path / "grades_by_cell.csv")}
    assert (cells["written_x"]["score"], cells["written_x"]["max_score"]) == ("", "2")
    assert cells["written_x"]["message"] == "waiting for a person" and cells["b"]["message"] == "x"


def test_manual_cell_score_is_empty(tmp_path):
    """Is a cell that needs manual grading written with an empty score, not 0?"""
    r = result("ann")
    r.notebooks["nmt"].cells[1].score = None
    recorded(tmp_path, r)
    row = [x for x in read(tmp_path / "grades_by_cell.csv") if x["grade_id"] == "b"][0]
    assert (row["score"], row["max_score"]) == ("", "2")


def test_damaged_download_has_no_score_and_no_cell_to_grade_by_hand(tmp_path):
    """Is a notebook the TA's LMS download damaged written with no score (not 0) in grades.csv and
    grades_by_cell.csv, its written answers waiting for a good download rather than for a person?"""
    r = result("Zoë Ñúñez")
    why = Status.DAMAGED.detail("'bert.ipynb' could not be read from the LMS download: damaged in the zip (truncated)")
    r.notebooks["bert"] = NotebookResult.failed("bert", {"test_c": 1.0}, why)
    r.notebooks["bert"].manual = {"written_z": 2.0}
    recorded(tmp_path, r)
    row = next(x for x in read(tmp_path / "grades.csv") if x["notebook"] == "bert")
    cells = {c["grade_id"]: c for c in read(tmp_path / "grades_by_cell.csv") if c["notebook"] == "bert"}
    assert (row["score"], row["ungraded"], row["status"]) == ("", "", why)
    assert (cells["c"]["score"], cells["written_z"]["score"], cells["written_z"]["message"]) == ("", "", REDOWNLOAD)


def test_finished_student_is_done_and_crashed_one_is_retried(tmp_path):
    """Is a completed student skipped on resume while one whose grading crashed is graded again?"""
    res = Results(tmp_path)
    res.record(result("ann"))
    res.record(StudentResult.failed("bob", LAYOUT, "worker process died 3 times"))
    assert res.is_done("ann") and not res.is_done("bob") and not res.is_done("cid")


def test_failed_result_lists_every_notebook_with_the_reason(tmp_path):
    """Does a student whose worker kept dying still appear for every notebook with a one-line reason?"""
    recorded(tmp_path, StudentResult.failed("bob", LAYOUT, "worker process died 3 times"))
    grades = read(tmp_path / "grades.csv")
    assert [(r["notebook"], r["score"], r["status"]) for r in grades] == [
        ("nmt", "0", "grading failed: worker process died 3 times"),
        ("bert", "0", "grading failed: worker process died 3 times"),
    ]


def test_record_writes_feedback_log_and_timings(tmp_path):
    """Does recording write the feedback page, a log line per event and the timing row?"""
    recorded(tmp_path, result("ann", out=tmp_path))
    assert (tmp_path / "feedback" / "ann" / "nmt.html").read_text() == "<html>nmt</html>"
    assert "hello ann" in (tmp_path / "grading.log").read_text()
    assert read(tmp_path / "timings.csv")[0]["overhead"] == "5.000"


def test_recording_a_student_leaves_the_csvs_to_the_end_of_the_batch(tmp_path):
    """Does recording a student write only that student's files (state, pages, log), so that a batch of N costs
    N, and write_csvs, once at its end, list every student recorded?"""
    res = Results(tmp_path)
    for name in ("ann", "Zoë Ñúñez", "李明"):
        res.record(result(name))
    assert not (tmp_path / "grades.csv").exists()
    res.write_csvs()
    assert sorted({r["student"] for r in read(tmp_path / "grades.csv")}) == sorted(["ann", "Zoë Ñúñez", "李明"])


def test_state_survives_a_new_results_object(tmp_path):
    """Is what was recorded before a crash still there for the next run (a new Results on the same OUT)?"""
    Results(tmp_path).record(result("ann"))
    again = Results(tmp_path)
    assert again.is_done("ann") and again.state("ann").notebooks["nmt"].score == 3.0


def test_a_state_is_written_only_once_the_gradebook_has_committed(tmp_path, monkeypatch):
    """When the gradebook merge of a group of students fails, is no state file of the group written, so that the
    next run grades every one of them again (a state file is what says a student is recorded)?"""
    res = Results(tmp_path)
    students = [result("ann"), result("Zoë"), result("bob")]
    students[1].shard = b"the shard"

    def broken(graded):
        raise RuntimeError("database is locked")

    monkeypatch.setattr(res, "merge_shards", broken)
    try:
        res.record_all(students)
    except RuntimeError:
        pass
    assert list((tmp_path / ".state").iterdir()) == []
    assert not any(res.is_done(s.student) for s in students)


def test_students_recorded_together_are_recorded_as_one_at_a_time(tmp_path):
    """Do students recorded in one group leave the same states, CSVs, pages and log lines, in order, as the same
    students recorded one at a time?"""
    group = recorded(tmp_path / "one")
    one, two = tmp_path / "one", tmp_path / "two"
    group.record_all([result("ann", 2.0, out=one), result("Zoë", 3.0, out=one), result("李明", 1.0, out=one)])
    group.write_csvs()
    alone = recorded(two, result("ann", 2.0, out=two), result("Zoë", 3.0, out=two), result("李明", 1.0, out=two))
    for name in ["grades.csv", "grades_by_cell.csv", "timings.csv", ".state/Zoë.json", "feedback/李明/nmt.html"]:
        assert (group.out.root / name).read_text() == (alone.out.root / name).read_text()

    def lines(res):
        return [line.split(" ", 2)[2] for line in res.out.log.read_text().splitlines()]

    assert lines(group) == lines(alone)


def test_recording_moves_the_staged_pages_into_out(tmp_path):
    """Does recording a student move the reader-safe copy and the page the page stage staged into
    autograded/<student>/a3/ and feedback/<student>/, and remove the staged folder?"""
    r = result("Zoë Ñúñez")
    r.pages = str(staged(tmp_path, "Zoë Ñúñez", {"nmt.ipynb": '{"cells": []}', "nmt.html": "<p>Zoë</p>"}))
    Results(tmp_path).record(r)
    assert (tmp_path / "autograded" / "Zoë Ñúñez" / "a3" / "nmt.ipynb").read_text() == '{"cells": []}'
    assert (tmp_path / "feedback" / "Zoë Ñúñez" / "nmt.html").read_text(encoding="utf-8") == "<p>Zoë</p>"
    assert not (tmp_path / ".cache" / "pages" / "Zoë Ñúñez").exists()


HOSTILE = "=cmd|' -C calc'!A0"  # a student folder a spreadsheet would run as a command (no '/' in a folder name)


def test_a_formula_like_student_is_quoted_in_grades_csv(tmp_path):
    """Does a student whose folder name starts like a formula come out as '=cmd… in grades.csv and
    grades_by_cell.csv, with a cell's negative score and an ordinary student left as they are?"""
    r = result(HOSTILE, nmt_score=0.5)  # cell b scores -0.5
    r.notebooks["nmt"].cells[1].note = "-not a number"
    recorded(tmp_path, r, result("ann"))
    grades = list(csv.reader(open(tmp_path / "grades.csv", encoding="utf-8")))
    assert [row[0] for row in grades[1:]] == ["'" + HOSTILE, "'" + HOSTILE, "ann", "ann"]
    cells = {(row[0], row[2]): row for row in csv.reader(open(tmp_path / "grades_by_cell.csv", encoding="utf-8"))}
    assert cells[("'" + HOSTILE, "b")][3:6] == ["-0.5", "2", "'-not a number"]


def test_lms_ids_keep_a_formula_like_name_quoted_once(tmp_path):
    """Does lms_ids.csv, read back and written again by a later run, keep a formula-like name quoted once (not
    once per run)?"""
    res = Results(tmp_path)
    res.record_lms_ids({HOSTILE: {"lms": "moodle", "user_id": "77", "name": "@SUM(1+1)"}})
    res.record_lms_ids({"ann": {"lms": "moodle", "user_id": "78", "name": "Ann"}})
    assert (tmp_path / "lms_ids.csv").read_text(encoding="utf-8").splitlines() == [
        "student,lms,lms_user_id,lms_name",
        f"'{HOSTILE},moodle,77,'@SUM(1+1)",
        "ann,moodle,78,Ann",
    ]
