"""Grading through a real Dask cluster on loopback: same grades as in-process, none lost, none twice."""
import csv
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from autograder import grade, scheduler
from tests.fixtures import toy
from tests.test_scheduler import cluster  # noqa: F401  (module fixture: dask scheduler + 2 workers)


def rows(path):
    return list(csv.DictReader(open(path)))


@pytest.fixture(scope="module")
def toy_students(tmp_path_factory):
    """The toy course's standard students (reference, untouched, wrong, nothing, broken) and a second reference."""
    root = tmp_path_factory.mktemp("toy_dask")
    rel = toy.release(tmp_path_factory.getbasetemp())
    students = toy.standard_students(rel)
    students["ref2"] = students["ref"]
    return toy.write_students(root / "subs", rel, students)


@pytest.fixture(scope="module")
def in_process(toy_students, tmp_path_factory):
    """The same students graded with workers=1 (no Dask): the expected CSVs."""
    out = tmp_path_factory.mktemp("toy_inproc") / "out"
    grade.grade(toy_students, out, workers=1, source=toy.TOY_SOURCE, ingest_fn=grade.plain_ingest)
    return out


@pytest.fixture
def address(cluster):  # noqa: F811
    from distributed import Client

    with Client(cluster, timeout="60s") as client:
        client.wait_for_workers(2, timeout=120)
    return cluster


def test_grading_through_an_existing_scheduler_matches_in_process(toy_students, in_process, address, tmp_path):
    """Does grading on a two-worker cluster give exactly the in-process CSVs, using both workers?"""
    out = tmp_path / "out"
    summary = grade.grade(toy_students, out, scheduler_address=address, source=toy.TOY_SOURCE,
                          ingest_fn=grade.plain_ingest)
    stats = scheduler.last_stats
    assert (stats.mode, stats.n_workers, stats.n_tasks) == ("scheduler", 2, 6)
    assert len(stats.workers) == 2, f"expected both workers to grade, saw {[vars(w) for w in stats.workers.values()]}"
    for name in ("grades.csv", "grades_by_cell.csv"):
        assert rows(out / name) == rows(in_process / name), name
    assert sorted(summary["graded"]) == ["broken", "nothing", "ref", "ref2", "untouched", "wrongmul"]


def test_worker_killed_mid_grade_loses_and_duplicates_nothing(toy_students, in_process, address, tmp_path):
    """When a worker process is SIGKILLed while grading, is its student regraded once and every row still right?"""
    from distributed import Client

    with Client(address) as client:
        pids = client.run(os.getpid)  # {worker address: pid}
    victim = sorted(pids.values())[0]
    out = tmp_path / "out"
    killed = threading.Event()

    def kill_when_grading():
        deadline = time.time() + 120
        while time.time() < deadline and not killed.is_set():
            work = out / ".work"
            if work.exists() and any(work.iterdir()):  # a worker has started on a student
                os.kill(victim, signal.SIGKILL)
                killed.set()
            time.sleep(0.2)

    killer = threading.Thread(target=kill_when_grading, daemon=True)
    killer.start()
    grade.grade(toy_students, out, scheduler_address=address, source=toy.TOY_SOURCE, ingest_fn=grade.plain_ingest)
    killer.join()
    assert killed.is_set(), "the test never saw grading start, so no worker was killed"
    got = rows(out / "grades.csv")
    assert len(got) == len({(r["student"], r["notebook"]) for r in got}) == 6, got
    assert got == rows(in_process / "grades.csv")
    assert rows(out / "grades_by_cell.csv") == rows(in_process / "grades_by_cell.csv")


def test_local_two_worker_cluster_grades_like_in_process(toy_students, in_process, tmp_path):
    """Does `grade --workers 2` (a local cluster started by run) give exactly the in-process CSVs?"""
    out = tmp_path / "out"
    grade.grade(toy_students, out, workers=2, source=toy.TOY_SOURCE, ingest_fn=grade.plain_ingest)
    assert scheduler.last_stats.mode == "local-cluster" and scheduler.last_stats.n_workers == 2
    for name in ("grades.csv", "grades_by_cell.csv"):
        assert rows(out / name) == rows(in_process / name), name
    assert Path(out / "gradebook.db").exists()
