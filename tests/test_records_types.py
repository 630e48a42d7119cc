"""The result types of autograder.records (CellResult, NotebookResult) and the scheduler's failure marker: the
dicts they give are the ones OUT/.state has always held."""

import json

from autograder.grading import scheduler
from autograder.records import CellResult, NotebookResult, Results, Status, StudentResult

TESTS = {"test_add": 2.0, "test_mul": 1.0}
LAYOUT = {"toy": {"tests": TESTS, "manual": {"written_why": 1.0}}, "other": {"tests": {"test_x": 1.0}, "manual": {}}}


def test_cell_result_dict():
    """Does a CellResult give the recorded cell dict, keys in the recorded order?"""
    d = CellResult("add", None, 2.0, "needs manual grading: no weights").to_dict()
    assert d == {"grade_id": "add", "score": None, "max_score": 2.0, "note": "needs manual grading: no weights"}
    assert list(d) == ["grade_id", "score", "max_score", "note"]


def test_failed_notebook_gives_zero_per_cell_with_the_reason():
    """Does NotebookResult.failed give every autograded cell 0 with the reason, grade ids without `test_`?"""
    d = NotebookResult.failed("toy", TESTS, "notebook ran past 600 s", repairs=["fixed JSON"]).to_dict()
    assert d == {
        "notebook": "toy",
        "status": "notebook ran past 600 s",
        "score": 0.0,
        "max_score": 3.0,
        "cells": [
            {"grade_id": "add", "score": 0.0, "max_score": 2.0, "note": "notebook ran past 600 s"},
            {"grade_id": "mul", "score": 0.0, "max_score": 1.0, "note": "notebook ran past 600 s"},
        ],
        "notes": [],
        "timing": {},
        "repairs": ["fixed JSON"],
        "manual": {},
        "blank": [],
    }


def test_graded_notebook_status_and_score():
    """Is a verified notebook "graded" with the sum of its scores, or "needs manual grading: <ids>" when a cell
    waits for a person (that cell counting 0)?"""
    cells = [CellResult("add", 2.0, 2.0, "passed"), CellResult("mul", 0.0, 1.0, "wrong values")]
    graded = NotebookResult.graded("toy", cells, 3.0)
    assert (graded.status, graded.score) == ("graded", 2.0)
    cells[1] = CellResult("mul", None, 1.0, "needs manual grading: no weights")
    waiting = NotebookResult.graded("toy", cells, 3.0)
    assert (waiting.status, waiting.score) == ("needs manual grading: mul", 2.0)


def test_sandboxed_only_recorded_when_a_kernel_ran():
    """Is "sandboxed" left out of the dict until grading ran a kernel for the notebook?"""
    result = NotebookResult.failed("toy", TESTS, "missing")
    assert "sandboxed" not in result.to_dict()
    result.sandboxed = False
    assert result.to_dict()["sandboxed"] is False


def test_failed_result_state_is_unchanged(tmp_path):
    """Does a student whose grading never returned leave the same .state JSON as before the result types (with the
    list of blank written answers, empty)?"""
    why = "grading failed: worker process died 3 times"
    old = {
        "student": "bob",
        "complete": False,
        "error": why,
        "seconds": 0.0,
        "log": [f"FAILED bob: {why}"],
        "notebooks": {
            nb: {
                "notebook": nb,
                "status": why,
                "score": 0.0,
                "max_score": sum(cells["tests"].values()),
                "timing": {},
                "repairs": [],
                "notes": [],
                "manual": {},
                "blank": [],
                "cells": [
                    {"grade_id": t[5:], "score": 0.0, "max_score": p, "note": why} for t, p in cells["tests"].items()
                ],
            }
            for nb, cells in LAYOUT.items()
        },
    }
    results = Results(tmp_path)
    results.record(StudentResult.failed("bob", LAYOUT, "worker process died 3 times"))
    assert (tmp_path / ".state" / "bob.json").read_text() == json.dumps(old, indent=1, sort_keys=True)


def ok(task):
    return {"task": task, "status": "ok"}


def broken(task):
    raise ValueError("bad notebook")


def test_task_failure_is_told_by_type_not_by_keys():
    """Is a task that kept raising a TaskFailure (its task and a one-line reason), while a result of fn that looks
    like one is not counted as a failure?"""
    fine = scheduler.run(["a"], ok, workers=1)
    assert fine == [{"task": "a", "status": "ok"}] and not isinstance(fine[0], scheduler.TaskFailure)
    assert scheduler.last_stats.failures == 0
    failed = scheduler.run(["b"], broken, workers=1, retries=0)
    assert isinstance(failed[0], scheduler.TaskFailure)
    assert failed[0] == scheduler.TaskFailure("b", "raised ValueError: bad notebook")
    assert scheduler.last_stats.failures == 1


def test_status_is_the_plain_string_everywhere(tmp_path):
    """Does a Status print, format, compare, hash and JSON-encode as the plain string OUT has always held?"""
    assert (str(Status.GRADED), f"{Status.MISSING}", "{}".format(Status.NEEDS_MANUAL)) == (
        "graded",
        "missing",
        "needs manual grading",
    )
    assert Status.GRADED == "graded" and {"graded": 1}[Status.GRADED] == 1
    assert json.dumps([Status.OK, Status.FAILED.detail("boom")]) == '["ok", "grading failed: boom"]'
    assert Status.NEEDS_MANUAL.starts("needs manual grading: add") and not Status.GRADED.starts("missing")


# What grade_student's dict put in OUT/.state/<student>.json before StudentResult (a graded student with a zygote)
OLD_STATE = {
    "student": "ann",
    "complete": True,
    "seconds": 4.5,
    "log": ["REPAIR ann/toy: fixed JSON"],
    "limits": ["toy: cell 3 (add): the cell ran out of time"],
    "zygote": {"preload_seconds": 5.1, "kernels": 1, "resets": 0},
    "submission": {"submitted_as": "Ann", "digest": "d", "source": "s"},
    "notebooks": {
        "toy": {
            "notebook": "toy",
            "status": "needs manual grading: mul",
            "score": 2.0,
            "max_score": 3.0,
            "cells": [
                {"grade_id": "add", "score": 2.0, "max_score": 2.0, "note": "passed"},
                {"grade_id": "mul", "score": None, "max_score": 1.0, "note": "needs manual grading: no weights"},
            ],
            "notes": ["cell 3 (add): the cell ran out of time"],
            "timing": {"seconds": 4.0, "shared_process": True},
            "repairs": ["fixed JSON"],
            "manual": {"written_why": 1.0},
            "sandboxed": True,
            "blank": [],
        }
    },
}


def test_old_state_file_reads_back_and_writes_the_same(tmp_path):
    """Does a .state file written before StudentResult read back into one that records the very same JSON?"""
    results = Results(tmp_path)
    results.record(StudentResult.from_dict(OLD_STATE))
    assert (tmp_path / ".state" / "ann.json").read_text() == json.dumps(OLD_STATE, indent=1, sort_keys=True)
    assert results.state("ann").to_state() == OLD_STATE


def test_student_result_round_trips_and_pickles():
    """Does a StudentResult survive its JSON round trip (less the bulky parts) and pickling, as Dask sends it?"""
    import pickle

    result = StudentResult.from_dict(dict(OLD_STATE, shard=b"db", pages="/out/.cache/pages/ann"))
    assert pickle.loads(pickle.dumps(result)) == result
    back = StudentResult.from_dict(json.loads(json.dumps(result.to_state())))
    assert back == StudentResult.from_dict(OLD_STATE) and back.shard is None and back.pages == ""
    assert back.notebooks["toy"].cells[1] == CellResult("mul", None, 1.0, "needs manual grading: no weights")


def test_a_missing_notebook_is_spelled_once(tmp_path):
    """Does collect fill a notebook an ingest left out with Submission.missing (status "missing", not ready),
    keeping the student's own submission as the ingest gave it?"""
    from autograder.grading import pipeline
    from autograder.grading.ingest import Submission

    got = Submission("ann", "toy", tmp_path / "toy.ipynb", Status.OK, submitted_as="Ann", digest="d")
    students = pipeline.collect(tmp_path, tmp_path, ["toy", "other"], tmp_path, ingest_fn=lambda *_: [got])
    assert students == {"ann": [got, Submission("ann", "other", None, "missing")]}
    assert [s.ready for s in students["ann"]] == [True, False]
