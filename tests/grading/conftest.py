"""Fixtures shared by the grading tests: a real Dask cluster on loopback (test_scheduler.py, test_pipeline_dask.py)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.paths import ROOT
from tests.slowdown import scaled

DASK = Path(sys.executable).with_name("dask")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A real `dask scheduler` and `dask worker --nworkers 2` on 127.0.0.1 (allowed failures: 1)."""
    tmp = tmp_path_factory.mktemp("dask")
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="1",
        DASK_TEMPORARY_DIRECTORY=str(tmp),
    )
    sched_file = tmp / "scheduler.json"
    logs = open(tmp / "dask.log", "w")
    procs = [
        subprocess.Popen(
            [
                str(DASK),
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(sched_file),
            ],
            env=env,
            cwd=ROOT,
            stdout=logs,
            stderr=logs,
        )
    ]
    try:
        limit = scaled(120)
        deadline = time.time() + limit
        while not sched_file.exists() and time.time() < deadline:
            time.sleep(0.2)
        assert sched_file.exists(), f"dask scheduler did not start within {limit:.0f} s"
        procs.append(
            subprocess.Popen(
                [
                    str(DASK),
                    "worker",
                    "--scheduler-file",
                    str(sched_file),
                    "--nworkers",
                    "2",
                    "--nthreads",
                    "1",
                    "--host",
                    "127.0.0.1",
                    "--no-dashboard",
                ],
                env=env,
                cwd=ROOT,
                stdout=logs,
                stderr=logs,
            )
        )
        yield json.loads(sched_file.read_text())["address"]
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=scaled(30))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        logs.close()


@pytest.fixture
def address(cluster):
    """The cluster's address once both worker processes are connected."""
    from distributed import Client

    with Client(cluster, timeout=f"{scaled(60):.0f}s") as client:
        client.wait_for_workers(2, timeout=scaled(120))
    return cluster
