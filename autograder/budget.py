"""The time a student's full run takes: python -m autograder budget [--notebooks nmt bert ...] [--quick]
[--out FILE.csv] [--timeout S]

Each released notebook (release/a3) runs as a student runs it: the reference solutions filled in (what
`demo.reference_submission` submits), from a temporary copy of the release folder with its data, top to bottom in a
fresh kernel (nbclient; never the grading sandbox), in full mode unless --quick (A3_QUICK is taken out of the
kernel's environment, or set to 1). The kernel gets the rest of this process's environment as it is: HF_HUB_OFFLINE,
OMP_NUM_THREADS, CUDA_VISIBLE_DEVICES and A3_MODEL_CACHE reach it unchanged. Every code cell is timed (wall
seconds, from the execute request to the kernel's reply). Per notebook it prints the device the kernel found
(CUDA if available, else CPU, and torch's thread count), the slowest cells (every cell over SLOW_S, at least
LISTED), the rest in one line and the total; then one line per notebook against the budget of BUDGET_S. A cell
that fails (an error, a time-out, a dead kernel) is reported in one line and the run goes on with the next
notebook; the exit status is then 1. Progress is a tqdm bar on stderr, which holds nothing else on a clean run
(the kernels' own stderr goes to a log in the temporary folder, its last line quoted when a kernel dies).
"""

import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder import contract, csvsafe, envvars, paths
from autograder.content import build
from autograder.demo import reference_submission
from autograder.text import one_line

BUDGET_S = 15 * 60  # what a student's full run of one notebook may take
SLOW_S = 10.0  # cells at or over this many seconds are listed one by one
LISTED = 5  # ...and at least this many of the slowest
COLUMNS = ("notebook", "cell", "label", "seconds", "device")
# Run in the notebook's kernel after its cells: what the setup cell's get_device() finds, and torch's threads.
PROBE = """\
import json as _budget_json
try:
    import torch as _budget_torch
    _budget_cuda = _budget_torch.cuda.is_available()
    print(_budget_json.dumps({
        "device": "cuda" if _budget_cuda else "cpu",
        "name": _budget_torch.cuda.get_device_name(0) if _budget_cuda else "",
        "threads": _budget_torch.get_num_threads(),
    }))
except Exception:
    print(_budget_json.dumps({}))
"""


@dataclass(frozen=True)
class CellTime:
    """One code cell's run: its grade id (else its cell id, else its position), its first line, wall seconds."""

    cell: str
    label: str
    seconds: float


@dataclass
class NotebookTime:
    """One notebook's run: the cells that ran, in order (a failed cell last), the device, and the failure."""

    notebook: str
    cells: list[CellTime] = field(default_factory=list)
    device: str = "unknown"
    error: str | None = None  # one line: which cell failed and why; None when every cell ran
    executed: nbformat.NotebookNode | None = None  # the notebook with its outputs, as far as it ran

    @property
    def total(self) -> float:
        return sum(c.seconds for c in self.cells)

    @property
    def failed(self) -> bool:
        return self.error is not None


def cell_name(cell, index) -> str:
    """A cell's grade id, else its cell id, else `#<index>`."""
    return contract.nbgrader_meta(cell).get("grade_id") or cell.get("id") or f"#{index}"


def first_line(source, limit=60) -> str:
    """The first non-blank line of a cell's source, cut to `limit` characters."""
    line = next((l.strip() for l in source.splitlines() if l.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def duration(seconds) -> str:
    """45.6 s, or 22 min 2 s from a minute on."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def kernel_env(quick, environ=None) -> dict:
    """The kernel's environment: this process's (HF_HUB_OFFLINE and the rest as they are), A3_QUICK=1 with `quick`
    and unset without it (full mode, a student's default), never the grading profile (NBGRADER_EXECUTION)."""
    env = dict(os.environ if environ is None else environ)
    env.pop(envvars.QUICK, None)
    env.pop("NBGRADER_EXECUTION", None)
    if quick:
        env[envvars.QUICK] = "1"
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # ipykernel's debugger note on frozen modules
    return env


def student_folder(dest, notebooks, release=paths.RELEASE, source=paths.SOURCE) -> Path:
    """Copy the release folder (notebooks, data, images) to dest/a3, with each of `notebooks` filled with the
    source's reference solutions; returns that folder."""
    folder = Path(dest) / "a3"
    shutil.copytree(release, folder)
    for nb in notebooks:
        release_nb = nbformat.read(Path(release) / f"{nb}.ipynb", as_version=4)
        source_nb = nbformat.read(Path(source) / f"{nb}.ipynb", as_version=4)
        nbformat.write(reference_submission(release_nb, source_nb), folder / f"{nb}.ipynb")
    return folder


def _device(client, nb):
    """What PROBE prints in the notebook's kernel, as `cpu (2 threads)` or `cuda NVIDIA H200 (16 threads)`."""
    cell = nbformat.v4.new_code_cell(PROBE)
    nb.cells.append(cell)  # nbclient writes an executed cell back into its notebook, by index
    try:
        client.execute_cell(cell, len(nb.cells) - 1)
    finally:
        nb.cells.pop()
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout").strip()
    found = json.loads(text.splitlines()[-1]) if text else {}
    if not found:
        return "unknown (no torch)"
    name = f" {found['name']}" if found.get("name") else ""
    return f"{found['device']}{name} ({found['threads']} threads)"


def _failure(exc, log, timeout=None) -> str:
    """One line for a cell that stopped the run."""
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    if isinstance(exc, CellExecutionError):
        return one_line(f"{exc.ename}: {exc.evalue}", 200)
    if isinstance(exc, CellTimeoutError):
        return f"timed out after {timeout} s (--timeout)"
    if isinstance(exc, DeadKernelError):
        lines = [l for l in Path(log).read_text(errors="replace").splitlines() if l.strip()] if log.exists() else []
        return one_line("the kernel died" + (f" ({lines[-1].strip()})" if lines else ""), 200)
    return one_line(exc, 200)


def run_notebook(path, env, timeout=None, progress=None, log=None) -> NotebookTime:
    """Run the notebook at `path` top to bottom in a fresh kernel in its folder, timing each code cell; stops at the
    first cell that fails. `progress` (a tqdm bar, or None) moves on by one per code cell; the kernel's own stdout
    and stderr go to the file `log` (default: beside the notebook, `.<name>.kernel.log`)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    result = NotebookTime(path.stem, executed=nb)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    log = Path(log) if log else path.parent / f".{path.stem}.kernel.log"
    with open(log, "w") as out:
        try:
            with client.setup_kernel(env=env, stdout=out, stderr=out):
                healthy = True
                for index, cell in enumerate(nb.cells):
                    if cell.cell_type != "code":
                        continue
                    name, label = cell_name(cell, index), first_line(cell.source)
                    if progress is not None:
                        progress.set_postfix_str(name)  # the cell now running
                    start = time.perf_counter()
                    try:
                        client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
                    except Exception as exc:  # noqa: BLE001 - any failure ends this notebook's run, in one line
                        result.cells.append(CellTime(name, label, time.perf_counter() - start))
                        result.error = f"cell {name} ({label}) failed after {duration(result.cells[-1].seconds)}: "
                        result.error += _failure(exc, log, timeout)
                        healthy = isinstance(exc, CellExecutionError)
                        break
                    result.cells.append(CellTime(name, label, time.perf_counter() - start))
                    if progress is not None:
                        progress.update()
                if healthy:
                    try:
                        result.device = _device(client, nb)
                    except Exception:  # noqa: BLE001 - the device is a note; a run without it still counts
                        pass
        except Exception as exc:  # noqa: BLE001 - a kernel that cannot start or shut down
            if result.error is None:
                result.error = "could not run a kernel: " + _failure(exc, log)
    return result


def order(names) -> list[str]:
    """Notebook names in course order (contract.NOTEBOOKS), others after them by name."""
    course = list(contract.NOTEBOOKS)
    return sorted(names, key=lambda n: (course.index(n) if n in course else len(course), n))


def report(result, out=None) -> None:
    """Print (to `out`, default stdout) one notebook's device, slowest cells, the rest in one line, the total and its
    failure, if any."""
    p = lambda line="": print(line, file=out or sys.stdout)  # noqa: E731
    p(f"{result.notebook}: {result.device}")
    ranked = sorted(result.cells, key=lambda c: -c.seconds)
    listed = [c for i, c in enumerate(ranked) if c.seconds >= SLOW_S or i < LISTED]
    if listed:
        p(f"  slowest cells (every one over {SLOW_S:g} s, at least {LISTED}):")
        width = max(len(c.cell) for c in listed)
        for c in listed:
            p(f"  {c.seconds:9.1f} s  {c.cell:<{width}}  {c.label}")
    rest = ranked[len(listed) :]
    if rest:
        p(f"  {sum(c.seconds for c in rest):9.1f} s  the other {len(rest)} cells")
    p(f"  total: {duration(result.total)} over {len(result.cells)} code cells")
    if result.failed:
        p(f"{result.notebook}: FAILED {result.error}")


def verdict(result) -> str:
    """One notebook against the budget: within it, over it (by how much), or not run through."""
    if result.failed:
        where = result.cells[-1].cell if result.cells else "?"
        return f"{'FAILED':>11}  after {duration(result.total)}, stopped at cell {where}"
    if result.total > BUDGET_S:
        return f"{duration(result.total):>11}  OVER the budget by {duration(result.total - BUDGET_S)}"
    return f"{duration(result.total):>11}  within the budget"


def write_csv(path, results) -> None:
    """`path` gets notebook,cell,label,seconds,device: one row per code cell that ran (a failed cell last)."""
    rows = [(r.notebook, c.cell, c.label, f"{c.seconds:.2f}", r.device) for r in results for c in r.cells]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csvsafe.writer(f)
        writer.writerow(COLUMNS)
        writer.writerows(rows)


def run(notebooks, *, quick=False, timeout=None, release=paths.RELEASE, source=paths.SOURCE, out=None):
    """Run `notebooks` one after another from one temporary copy of the release; returns their NotebookTimes,
    printing each notebook's report as it finishes."""
    from tqdm.auto import tqdm

    env = kernel_env(quick)
    results = []
    with tempfile.TemporaryDirectory(prefix="a3-budget-") as tmp:
        folder = student_folder(tmp, notebooks, release, source)
        for nb in notebooks:
            path = folder / f"{nb}.ipynb"
            cells = sum(1 for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
            with tqdm(total=cells, desc=nb, unit="cell", leave=False, file=sys.stderr) as bar:
                result = run_notebook(path, env, timeout, bar, log=Path(tmp) / f"{nb}.kernel.log")
            report(result, out)
            results.append(result)
    return results


def main(*, notebooks=None, quick=False, out=None, timeout=None, release=paths.RELEASE, source=paths.SOURCE):
    """The `budget` command; returns 1 when a notebook failed (2: a notebook not in the release; 130: Ctrl-C), else 0."""
    known = order(build.notebooks_in(release))
    notebooks = order(dict.fromkeys(notebooks)) if notebooks else known
    unknown = [nb for nb in notebooks if nb not in known]
    if unknown:
        print(f"budget: no such notebook in {release}: {', '.join(unknown)} (known: {', '.join(known)})")
        return 2
    mode = "quick mode (A3_QUICK=1)" if quick else "full mode (A3_QUICK unset)"
    hub = "hub offline" if os.environ.get("HF_HUB_OFFLINE") == "1" else "hub online"
    limit = f"cells limited to {timeout} s" if timeout else "no time limit per cell"
    print(f"budget: {', '.join(notebooks)} in {mode}, {hub}, {limit}")
    try:
        results = run(notebooks, quick=quick, timeout=timeout, release=release, source=source)
    except KeyboardInterrupt:  # the kernel is shut down and the temporary copy removed on the way out
        print("budget: stopped (Ctrl-C); the notebooks reported above had finished")
        return 130
    if out:
        write_csv(out, results)
    width = max(len(r.notebook) for r in results)
    print(f"budget ({duration(BUDGET_S)} a notebook, {'quick' if quick else 'full'} mode):")
    for r in results:
        print(f"  {r.notebook:<{width}}  {verdict(r)}")
    if out:
        print(f"per-cell times: {out}")
    return 1 if any(r.failed for r in results) else 0
