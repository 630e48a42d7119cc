"""The result types of autograder.records (CellResult, NotebookResult) and the scheduler's failure marker: the
dicts they give are the ones OUT/.state has always held."""

import json

from autograder.grading import scheduler
from autograder.records import CellResult, NotebookResult, Results, failure_result

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


def test_failure_result_state_is_unchanged(tmp_path):
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
    results.record(failure_result("bob", LAYOUT, "worker process died 3 times"))
    assert (tmp_path / ".state" / "bob.json").read_text() == json.dumps(old, indent=1, sort_keys=True)


def ok(task):
    return {"task": task, "status": "ok"}


def broken(task):
    raise ValueError("bad notebook")


def test_task_failure_is_told_by_type_not_by_keys():
    """Is a task that kept raising a TaskFailure (equal to the plain {"task", "status"} dict), while a result
    of the same keys from fn is not counted as a failure?"""
    fine = scheduler.run(["a"], ok, workers=1)
    assert fine == [{"task": "a", "status": "ok"}] and not isinstance(fine[0], scheduler.TaskFailure)
    assert scheduler.last_stats.failures == 0
    failed = scheduler.run(["b"], broken, workers=1, retries=0)
    assert isinstance(failed[0], scheduler.TaskFailure)
    assert failed[0] == {"task": "b", "status": "raised ValueError: bad notebook"}
    assert (failed[0].task, failed[0].status) == ("b", "raised ValueError: bad notebook")
    assert scheduler.last_stats.failures == 1
