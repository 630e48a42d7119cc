"""No submission can stop the batch, and the limit a cell ran into is recorded on that cell: forks past
the process limit, an infinite loop, an allocation past the memory limit; and SANDBOX lines only for what a
student's code really tried. Each batch grades the toy course once (tests/fixtures/toy.py)."""

import csv
import os
import time
from pathlib import Path

import nbformat
import pytest

from autograder.grading import pipeline
from autograder.paths import ROOT
from autograder.sandbox import bwrap, procs
from tests.fixtures import toy
from tests.slowdown import scaled

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not bwrap.available(), reason="the limits act in bubblewrap")]

ADD = toy.RIGHT["add"]
FORK_PROBE = (
    "import os, time\nfor _ in range(1000):\n    if os.fork() == 0:\n        time.sleep(20)\n        os._exit(0)\n"
)
FORK_BOMB = "import os\nwhile True:\n    os.fork()\n"
LOOP = "while True:\n    pass\n"
HOG = "import numpy as np\nhog = np.ones(8 * 2**30 // 8)\n"  # 8 GB: past the 3 GB test limit, refused at once
READS_REPO = f"try:\n    open({str(ROOT / 'README.md')!r})\nexcept OSError:\n    pass\n"
TEST_MEM_MB = 3072
CELL_TIMEOUT = 5


def by_cell(out):
    """{(student, grade_id): grades_by_cell.csv row}."""
    with open(Path(out) / "grades_by_cell.csv", newline="") as f:
        return {(r["student"], r["grade_id"]): r for r in csv.DictReader(f)}


def leftovers(out, wait=60):
    """Host pids of processes still running for the batch in `out` (their environment names its workspaces),
    after waiting up to `wait` seconds (on the idle machine; tests/slowdown.py) for killed ones to go."""
    marker = str(Path(out).resolve() / ".work").encode()
    deadline = time.monotonic() + scaled(wait)
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                try:
                    if marker in (entry / "environ").read_bytes():
                        found.append(int(entry.name))
                except OSError:
                    pass
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def grade(root, students, **options):
    """Grade toy `students` {name: {solution cell: code} over the reference, or None: the untouched release}
    into root/out; returns (out, summary, seconds)."""
    rel = toy.release(root.parent)
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    notebooks = {
        name: nb if cells is None else toy.fill(nb, dict(toy.RIGHT, **cells)) for name, cells in students.items()
    }
    subs = toy.write_students(root / "subs", rel, notebooks)
    start = time.perf_counter()
    summary = pipeline.grade(
        subs, root / "out", workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest, **options
    )
    return root / "out", summary, time.perf_counter() - start


@pytest.fixture(scope="module")
def forks(tmp_path_factory):
    """A fork probe (1000 children sleeping 20 s) and, where the hard bound holds, a fork bomb; default limits."""
    students = {"Zoë Ñúñez": {"add": FORK_PROBE + ADD}}
    if procs.cgroup_base() is not None or os.geteuid() != 0:  # the bound is in force before any bomb
        students["李明"] = {"add": FORK_BOMB + ADD}
    out, summary, seconds = grade(tmp_path_factory.mktemp("forks"), students)
    print(f"fork batch graded in {seconds:.1f} s")
    return out, summary


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """An infinite loop and an allocation past the memory limit (5 s cells, 3 GB), beside harmless students and
    one that reads the repository: one zygote grades them all, with resets between them. The machine is taken
    to have no writable pids cgroup (these cells do not fork), as on a grading machine without one."""
    mp = pytest.MonkeyPatch()
    mp.setenv("A3_MEM_LIMIT_MB", str(TEST_MEM_MB))
    mp.setattr(procs, "cgroup_base", lambda: None)
    try:
        out, summary, _ = grade(
            tmp_path_factory.mktemp("stopped"),
            {
                "Zoë Ñúñez": {"add": LOOP + ADD},
                "王芳": {"mul": HOG + toy.RIGHT["mul"]},
                "李明": {},
                "Ñandú Pérez": None,
                "Ola Nowak": {"add": READS_REPO + ADD},
            },
            cell_timeout=CELL_TIMEOUT,
        )
    finally:
        mp.undo()
    return out, summary


def log_lines(out):
    return (Path(out) / "grading.log").read_text().splitlines()


def test_fork_probe_is_recorded_on_its_cell(forks):
    """Is a cell that starts 1000 children recorded as killed for more than 256 processes, on that cell?"""
    out, _ = forks
    assert by_cell(out)[("Zoë Ñúñez", "add")]["message"].startswith(
        "killed: more than 256 processes in an earlier cell, cell 4 (add);"
    )
    assert any(
        line.endswith("LIMIT Zoë Ñúñez/toy: cell 4 (add): killed: more than 256 processes") for line in log_lines(out)
    )


def test_fork_probe_leaves_the_other_cells_graded(forks):
    """Does the notebook with the fork probe finish by itself, its other cells graded as usual?"""
    out, summary = forks
    assert by_cell(out)[("Zoë Ñúñez", "mul")]["message"] == "passed"
    assert "Zoë Ñúñez" in summary.graded
    assert not any("FAILED Zoë Ñúñez" in line for line in log_lines(out))


def test_fork_bomb_is_recorded_on_its_cell(forks):
    """Is a fork bomb stopped with its kernel and recorded on its cell, whose test then fails with that cause?"""
    out, summary = forks
    if "李明" not in summary.graded:
        pytest.skip("no hard bound on processes here (root without a writable pids cgroup): no bomb was graded")
    assert by_cell(out)[("李明", "add")]["message"] == (
        "killed: more than 256 processes in an earlier cell, cell 4 (add); "
        "then this test failed: NameError: name 'add' is not defined"
    )


def test_fork_bomb_costs_only_its_own_cell(forks):
    """After a fork bomb killed the kernel, are the later cells graded in a fresh kernel (the cells before the
    bomb run again in it), as after a time-out, instead of all scoring 0?"""
    out, summary = forks
    if "李明" not in summary.graded:
        pytest.skip("no hard bound on processes here (root without a writable pids cgroup): no bomb was graded")
    mul = by_cell(out)[("李明", "mul")]
    assert (mul["message"], mul["score"]) == ("passed", mul["max_score"])


def test_no_process_outlives_the_batch(forks):
    """Is every process the forking cells started gone once the batch is over?"""
    out, _ = forks
    assert leftovers(out) == []


def test_infinite_loop_is_recorded_as_timed_out_on_its_cell(stopped):
    """Is an infinite loop recorded as 'timed out after 5 s' on the cell that had it, not as the next symptom?"""
    out, _ = stopped
    assert any(line.endswith("LIMIT Zoë Ñúñez/toy: cell 4 (add): timed out after 5 s") for line in log_lines(out))
    assert by_cell(out)[("Zoë Ñúñez", "add")]["message"].startswith(
        "timed out after 5 s in an earlier cell, cell 4 (add); then this test failed: NameError"
    )
    assert by_cell(out)[("Zoë Ñúñez", "mul")]["message"] == "passed"


def test_allocation_past_the_limit_is_recorded_as_out_of_memory(stopped):
    """Is an allocation past the memory limit recorded as out of memory, with the configured limit, on its cell?"""
    out, _ = stopped
    assert any(line.endswith("LIMIT 王芳/toy: cell 6 (mul): ran out of memory (3 GB limit)") for line in log_lines(out))
    assert by_cell(out)[("王芳", "mul")]["message"].startswith("ran out of memory (3 GB limit) in an earlier cell")
    assert by_cell(out)[("王芳", "add")]["message"] == "passed"


def test_summary_names_the_students_whose_cells_were_stopped(stopped, capsys):
    """Does the console summary name each student a limit stopped, with the cell and the cause?"""
    out, summary = stopped
    pipeline.print_summary(summary, out)
    printed = capsys.readouterr().out
    assert "2 student(s) had cells stopped by a limit" in printed
    assert "Zoë Ñúñez: toy: cell 4 (add): timed out after 5 s" in printed
    assert "王芳: toy: cell 6 (mul): ran out of memory (3 GB limit)" in printed
    assert "李明:" not in printed


def test_a_resumed_run_still_names_the_students_a_limit_stopped(stopped):
    """Does a run on the same OUT, which grades no one again, still list the students a limit stopped and why?"""
    out, _ = stopped
    again = pipeline.grade(out.parent / "subs", out, workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    assert (again.graded, len(again.skipped)) == ([], 5)
    assert again.limits == {
        "Zoë Ñúñez": ["toy: cell 4 (add): timed out after 5 s"],
        "王芳": ["toy: cell 6 (mul): ran out of memory (3 GB limit)"],
    }


def test_feedback_page_says_what_stopped_the_cell(stopped):
    """Does the student's feedback page say which limit stopped which cell?"""
    out, _ = stopped
    page = (Path(out) / "feedback" / "Zoë Ñúñez" / "toy.html").read_text()
    assert "cell 4 (add): timed out after 5 s" in page


def test_harmless_notebooks_get_no_sandbox_line(stopped):
    """Do the reference solution and the untouched release, graded after other students by the same zygote,
    get no SANDBOX line (the zygote's own reset is nobody's doing)?"""
    out, _ = stopped
    sandbox = [line for line in log_lines(out) if " SANDBOX " in line]
    assert not [line for line in sandbox if "Ola Nowak" not in line]


def test_reading_the_repository_still_gets_a_sandbox_line(stopped):
    """Does a notebook that really tries to read a repository file still get its SANDBOX line?"""
    out, _ = stopped
    assert f"SANDBOX Ola Nowak/toy: blocked: tried to read {ROOT / 'README.md'} (outside the sandbox)" in "\n".join(
        line.split(" ", 2)[2] for line in log_lines(out)
    )


def test_weaker_process_bound_is_logged(stopped):
    """Where no pids cgroup can be made, does grading.log say once how a student's processes are bounded?"""
    out, _ = stopped
    warnings = [line for line in log_lines(out) if "WARNING process limit: no writable pids cgroup here" in line]
    assert len(warnings) == 1
