"""autograder.budget: each released notebook run as a student runs it, every code cell timed. Mostly on the toy course
(tests/fixtures/toycourse), with a second notebook `broken` whose reference `mul` is wrong, so that its visible test
fails; and, in the slow tier, on the real theory notebook in quick mode."""

import contextlib
import io
import os
import re
import shutil

import nbformat
import pytest

from autograder import budget, cli, csvsafe, envvars
from tests.fixtures import toy

# A cell added to both toy notebooks: what the kernel sees of A3_QUICK.
SHOW_QUICK = "import os\nprint('A3_QUICK is', os.environ.get('A3_QUICK'))"
PROGRESS = re.compile(r"^\s*$|\d+/\d+ \[")  # a tqdm bar's line (or its erasing blanks)


def _course(root, release_dir):
    """A course of two notebooks: `toy` (the reference passes) and `broken` (its reference mul returns 0, so test_mul
    fails), each released with SHOW_QUICK appended; returns (release folder, source folder)."""
    release, source = root / "release", root / "source"
    shutil.copytree(release_dir, release)
    shutil.copytree(toy.TOY_SOURCE, source)
    src = nbformat.read(source / "toy.ipynb", as_version=4)
    nbformat.write(toy.fill(src, {"mul": "def mul(a, b):\n    return 0"}), source / "broken.ipynb")
    rel = nbformat.read(release / "toy.ipynb", as_version=4)
    cell = nbformat.v4.new_code_cell(SHOW_QUICK)
    cell.id = "show_quick"
    rel.cells.append(cell)
    for name in ("toy", "broken"):
        nbformat.write(rel, release / f"{name}.ipynb")
    return release, source


def _run(release, source, csv=None, **options):
    """budget.main on the two-notebook course: (exit status, stdout, stderr, {notebook: its NotebookTime})."""
    out, err, kept = io.StringIO(), io.StringIO(), {}
    run = budget.run

    def keep(*args, **kwargs):
        results = run(*args, **kwargs)
        kept.update((r.notebook, r) for r in results)
        return results

    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        patch.setattr(budget, "run", keep)
        status = budget.main(release=release, source=source, out=csv, **options)
    return status, out.getvalue(), err.getvalue(), kept


def _kernel_saw(result):
    """What the show_quick cell of an executed notebook printed."""
    (cell,) = [c for c in result.executed.cells if c.get("id") == "show_quick"]
    return "".join(o.get("text", "") for o in cell.outputs).strip()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return _course(tmp_path_factory.mktemp("budget"), toy.release(tmp_path_factory.getbasetemp()))


@pytest.fixture(scope="module")
def full_run(course, tmp_path_factory):
    """Both notebooks in full mode (the default), with --out: (status, stdout, stderr, results, csv path)."""
    csv = tmp_path_factory.mktemp("budget_out") / "times.csv"
    return (*_run(*course, csv=csv), csv)


@pytest.fixture(scope="module")
def quick_run(course):
    """The toy notebook alone with quick=True: (status, stdout, stderr, results)."""
    return _run(*course, notebooks=["toy"], quick=True)


def _csv_rows(path):
    with open(path, newline="") as f:
        return list(csvsafe.DictReader(f))


def test_every_code_cell_gets_a_row_in_order(full_run):
    """Does --out hold one row per code cell of the toy notebook, named by grade id (or cell id) and first line, in
    the notebook's order?"""
    rows = [r for r in _csv_rows(full_run[4]) if r["notebook"] == "toy"]
    toy_cells = ["setup", "add", "test_add", "mul", "test_mul", "a3-readiness-check", "show_quick"]
    assert [r["cell"] for r in rows] == toy_cells
    assert rows[0]["label"] == "from pathlib import Path"
    assert all(float(r["seconds"]) >= 0 for r in rows)


def test_the_csv_has_the_columns(full_run):
    """Is the CSV's header notebook,cell,label,seconds,device, with the device the kernel found (cpu or cuda, and
    torch's threads) on every row?"""
    header = full_run[4].read_text().splitlines()[0]
    assert header == "notebook,cell,label,seconds,device"
    devices = {r["device"] for r in _csv_rows(full_run[4]) if r["notebook"] == "toy"}
    assert len(devices) == 1 and re.fullmatch(r"(cpu|cuda.*) \(\d+ threads\)", devices.pop())


def test_the_report_lists_cells_and_totals(full_run):
    """Does the printout give, per notebook, the device, the slowest cells with their seconds, the total, and a
    closing line per notebook against the 15-minute budget?"""
    out = full_run[1]
    assert re.search(r"^toy: (cpu|cuda)", out, re.M)
    assert re.search(r"^\s+\d+\.\d s  setup\s+from pathlib import Path$", out, re.M)
    assert re.search(r"^  total: \d+\.\d s over 7 code cells$", out, re.M)
    assert re.search(r"^budget \(15 min a notebook, full mode\):$", out, re.M)
    assert re.search(r"^  toy\s+\d+\.\d s  within the budget$", out, re.M)


def test_a_failing_cell_is_one_line_and_the_run_goes_on(full_run):
    """Is a cell that fails reported in one line naming the cell and the error, the next notebook still run, and the
    exit status 1?"""
    status, out = full_run[0], full_run[1]
    failed = [line for line in out.splitlines() if "FAILED" in line and line.startswith("broken")]
    assert len(failed) == 1, out
    assert "cell test_mul (assert mul(1, 1) == 1) failed after" in failed[0] and "AssertionError" in failed[0]
    assert out.index("broken: FAILED") < out.index("toy: ")  # `toy` ran after `broken` failed
    assert re.search(r"^  broken\s+FAILED  after .*, stopped at cell test_mul$", out, re.M)
    assert status == 1


def test_the_failed_cell_is_the_notebooks_last_row(full_run):
    """Does the CSV keep the cells of a failed notebook up to and including the one that failed, and none after?"""
    rows = [r["cell"] for r in _csv_rows(full_run[4]) if r["notebook"] == "broken"]
    assert rows == ["setup", "add", "test_add", "mul", "test_mul"]


def test_full_mode_is_the_default(full_run):
    """Without --quick, is A3_QUICK unset in the kernel, even where the calling shell sets it (as the tests do)?"""
    assert os.environ.get(envvars.QUICK) == "1"  # tests/conftest.py sets it for every test
    assert _kernel_saw(full_run[3]["toy"]) == "A3_QUICK is None"
    assert "full mode (A3_QUICK unset)" in full_run[1]


def test_quick_sets_it(quick_run):
    """With --quick, does the kernel see A3_QUICK=1, and does the run say it is in quick mode?"""
    status, out, _, results = quick_run
    assert status == 0 and _kernel_saw(results["toy"]) == "A3_QUICK is 1"
    assert "quick mode (A3_QUICK=1)" in out and "budget (15 min a notebook, quick mode):" in out


def test_a_clean_run_writes_only_progress_to_stderr(course, capfd):
    """On a clean run, is the tqdm bar all that reaches stderr, the kernel's own (its TCP warning, say) included?"""
    release, source = course
    assert budget.main(notebooks=["toy"], quick=True, release=release, source=source) == 0
    err = capfd.readouterr().err
    assert "/7 [" in err, "expected tqdm's bar over the toy's 7 code cells"
    assert not [line for line in re.split(r"[\r\n]", err) if not PROGRESS.search(line)], err


def test_kernel_env_drops_or_sets_quick_and_keeps_the_rest():
    """Does the kernel's environment leave A3_QUICK out in full mode and set it to 1 with quick, keep HF_HUB_OFFLINE
    as the caller has it, and drop nbgrader's grading flag?"""
    caller = {envvars.QUICK: "1", "HF_HUB_OFFLINE": "1", "NBGRADER_EXECUTION": "autograde", "PATH": "/bin"}
    full, quick = budget.kernel_env(False, caller), budget.kernel_env(True, caller)
    assert envvars.QUICK not in full and quick[envvars.QUICK] == "1"
    assert full["HF_HUB_OFFLINE"] == quick["HF_HUB_OFFLINE"] == "1" and full["PATH"] == "/bin"
    assert "NBGRADER_EXECUTION" not in full and "NBGRADER_EXECUTION" not in quick


def test_slow_cells_are_listed_and_the_rest_summed():
    """Does the report list every cell over 10 s (slowest first, at least five), the others in one line, and the
    total?"""
    cells = [budget.CellTime(f"c{i}", f"line {i}", s) for i, s in enumerate([1, 30, 2, 12, 0.5, 11, 3, 14, 0.1, 20])]
    out = io.StringIO()
    budget.report(budget.NotebookTime("nb", cells, "cpu (2 threads)"), out)
    lines = out.getvalue().splitlines()
    listed = [line.split()[2] for line in lines if re.match(r"^\s+\d+\.\d s  c\d", line)]
    assert listed == ["c1", "c9", "c7", "c3", "c5"]  # 30, 20, 14, 12, 11 s
    assert re.search(r"^\s+6\.6 s  the other 5 cells$", out.getvalue(), re.M)
    assert "  total: 1 min 34 s over 10 code cells" in lines


def test_the_budget_line_flags_a_notebook_over_fifteen_minutes():
    """Is a notebook over 15 minutes flagged with how much it is over, and one under it called within?"""
    over = budget.NotebookTime("nmt", [budget.CellTime("study", "x", 1000.0)])
    under = budget.NotebookTime("theory", [budget.CellTime("setup", "x", 40.0)])
    assert budget.verdict(over).strip() == "16 min 40 s  OVER the budget by 1 min 40 s"
    assert budget.verdict(under).strip() == "40.0 s  within the budget"


def test_an_unknown_notebook_is_a_usage_error(capsys):
    """Does `budget --notebooks nope` exit 2 with one line naming the notebooks there are, running nothing?"""
    assert cli.main(["budget", "--notebooks", "nope"]) == 2
    out = capsys.readouterr().out.strip()
    assert "\n" not in out and "nope" in out and "theory" in out


@pytest.mark.slow
def test_the_theory_notebook_in_quick_mode(tmp_path, capsys):
    """Does `budget --notebooks theory --quick --out FILE` run the real released theory notebook through (exit 0),
    with a row per code cell, the reference answers in place, and a total within the budget?"""
    csv = tmp_path / "theory.csv"
    assert cli.main(["budget", "--notebooks", "theory", "--quick", "--out", str(csv)]) == 0
    out = capsys.readouterr().out
    rows = _csv_rows(csv)
    release = nbformat.read(budget.paths.RELEASE / "theory.ipynb", as_version=4)
    assert len(rows) == sum(1 for c in release.cells if c.cell_type == "code")
    assert {r["notebook"] for r in rows} == {"theory"} and rows[0]["cell"] == "setup"
    assert re.search(r"^  theory\s+.* within the budget$", out, re.M)


def test_ctrl_c_stops_with_one_line(monkeypatch, capsys):
    """Does Ctrl-C during a run end the command with one line and exit status 130, no traceback?"""

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(budget, "run", interrupted)
    assert budget.main(notebooks=["theory"]) == 130
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == "budget: stopped (Ctrl-C); the notebooks reported above had finished"
    assert "Traceback" not in captured.out + captured.err


def test_a_dead_kernel_is_one_line_quoting_its_log(tmp_path):
    """Is a kernel that died reported in one line with the last line it wrote (say, the OOM killer's note), and a
    time-out with the limit?"""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    log = tmp_path / "nb.kernel.log"
    log.write_text("[IPKernelApp] WARNING | something\nKilled: out of memory\n\n")
    assert budget._failure(DeadKernelError("Kernel died"), log) == "the kernel died (Killed: out of memory)"
    assert budget._failure(CellTimeoutError("late"), log, 30) == "timed out after 30 s (--timeout)"
