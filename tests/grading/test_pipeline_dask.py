"""Grading through a real Dask cluster on loopback: same grades as in-process, none lost, none twice."""

import csv
import os
import re
import signal
import threading
import time

import pytest

from autograder.grading import pipeline, scheduler
from autograder.sandbox import slot
from tests.fixtures import toy
from tests.slowdown import scaled

# The `cluster` and `address` fixtures (a dask scheduler and two worker processes) are in conftest.py.


def rows(path):
    return list(csv.DictReader(open(path)))


@pytest.fixture(scope="module")
def toy_students(tmp_path_factory):
    """Four toy students: reference, one wrong cell, no notebook, and a file nbgrader cannot read."""
    rel = toy.release(tmp_path_factory.getbasetemp())
    students = {k: v for k, v in toy.standard_students(rel).items() if k in ("ref", "wrongmul", "nothing", "broken")}
    return toy.write_students(tmp_path_factory.mktemp("toy_dask") / "subs", rel, students)


def assert_graded_correctly(out):
    """The toy students' known grades, one row each, and the merged gradebook."""
    from nbgrader.api import Gradebook

    grades = {r["student"]: r for r in rows(out / "grades.csv")}
    assert len(rows(out / "grades.csv")) == len(grades) == 4, rows(out / "grades.csv")
    assert {s: (r["score"], r["max_score"], r["status"]) for s, r in grades.items() if s != "broken"} == {
        "ref": ("3", "3", "graded"),
        "wrongmul": ("1", "3", "graded"),
        "nothing": ("0", "3", "missing"),
    }
    assert grades["broken"]["score"] == "0" and grades["broken"]["status"].startswith("nbgrader could not grade it")
    cells = sorted((r["student"], r["grade_id"], r["score"]) for r in rows(out / "grades_by_cell.csv"))
    assert cells == [  # every written answer here is blank, or in a notebook never graded: 0, final
        ("broken", "add", "0"),
        ("broken", "mul", "0"),
        ("broken", "written_toy", "0"),
        ("nothing", "add", "0"),
        ("nothing", "mul", "0"),
        ("nothing", "written_toy", "0"),
        ("ref", "add", "1"),
        ("ref", "mul", "2"),
        ("ref", "written_toy", "0"),
        ("wrongmul", "add", "1"),
        ("wrongmul", "mul", "0"),
        ("wrongmul", "written_toy", "0"),
    ]
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:  # shards came back over Dask and were merged
        assert {s: gb.find_submission("a3", s).score for s in ("ref", "wrongmul")} == {"ref": 3.0, "wrongmul": 1.0}


@pytest.mark.slow
def test_grading_through_an_existing_scheduler(toy_students, address, tmp_path):
    """Does grading on an existing two-worker cluster give every student's right grade, using both workers?"""
    out = tmp_path / "out"
    summary = pipeline.grade(
        toy_students, out, scheduler_address=address, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest
    )
    stats = scheduler.last_stats
    assert (stats.mode, stats.n_workers, stats.n_tasks) == ("scheduler", 2, 4)
    assert len(stats.workers) == 2, f"expected both workers to grade, saw {[vars(w) for w in stats.workers.values()]}"
    assert_graded_correctly(out)
    assert sorted(summary.graded) == ["broken", "nothing", "ref", "wrongmul"]


@pytest.fixture(scope="module")
def killed(toy_students, cluster, tmp_path_factory):
    """The toy students graded on the two-worker cluster, the first worker to open a slot (a student with a
    notebook in hand) SIGKILLed: (OUT, summary, the killed worker's address)."""
    from distributed import Client

    with Client(cluster, timeout=f"{scaled(60):.0f}s") as client:
        client.wait_for_workers(2, timeout=scaled(120))
        by_pid = {pid: address for address, pid in client.run(os.getpid).items()}
    out = tmp_path_factory.mktemp("killed") / "out"
    victim = []

    def kill_when_grading():
        deadline = time.time() + scaled(120)
        while time.time() < deadline and not victim:
            for ws in (out / ".work").glob(f"{slot.PREFIX}*"):  # .slot-<worker pid>-<hex>
                pid = int(ws.name[len(slot.PREFIX) :].split("-")[0])
                if pid in by_pid:
                    os.kill(pid, signal.SIGKILL)
                    victim.append(by_pid[pid])
                    break
            time.sleep(0.1)

    killer = threading.Thread(target=kill_when_grading, daemon=True)
    killer.start()
    summary = pipeline.grade(
        toy_students, out, scheduler_address=cluster, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest
    )
    killer.join()
    assert victim, "the test never saw a worker open a slot, so no worker was killed"
    return out, summary, victim[0]


@pytest.mark.slow
def test_worker_killed_mid_grade_loses_and_duplicates_nothing(killed):
    """When a worker process is SIGKILLed while grading, is its student regraded once and every row still right?"""
    out, _, _ = killed
    assert_graded_correctly(out)


@pytest.mark.slow
def test_a_killed_worker_is_named_with_the_students_graded_again(killed):
    """Do the summary and grading.log name the worker that died and the students it held, the one it was grading
    (a student with a file: only they open a slot) among them?"""
    out, summary, victim = killed
    assert len(summary.workers_lost) == 1, summary.workers_lost
    held = re.fullmatch(rf"{re.escape(victim)} died holding (.+)", summary.workers_lost[0])
    assert held and {"ref", "wrongmul", "broken"} & set(held.group(1).split(", ")), summary.workers_lost
    log = (out / "grading.log").read_text()
    assert f"WORKER LOST: Dask worker {summary.workers_lost[0]}; graded again on another worker" in log


@pytest.mark.slow
def test_no_slot_folder_is_left_after_a_killed_worker(killed):
    """Is OUT/.work free of slot folders after the run, the killed worker's and the live ones' alike?"""
    out, _, _ = killed
    assert list((out / ".work").glob(f"{slot.PREFIX}*")) == []


@pytest.mark.slow
def test_local_two_worker_cluster_grades_correctly(toy_students, tmp_path):
    """Does `grade --workers 2` (a local cluster started by run) give every student's right grade?"""
    out = tmp_path / "out"
    pipeline.grade(toy_students, out, workers=2, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    assert scheduler.last_stats.mode == "local-cluster" and scheduler.last_stats.n_workers == 2
    assert_graded_correctly(out)


def test_summary_names_each_dask_worker_that_died(tmp_path, capsys):
    """Does the console summary name each Dask worker that died and the students it held?"""
    lost = ["tcp://127.0.0.1:40001 died holding 李明, Zoë Ñúñez"]
    summary = pipeline.Summary(graded=["李明"], seconds=1.0, students=1, workers_lost=lost)
    pipeline.print_summary(summary, tmp_path)
    assert (
        "  Dask worker tcp://127.0.0.1:40001 died holding 李明, Zoë Ñúñez: graded again on another worker (grading.log)"
        in capsys.readouterr().out.splitlines()
    )
