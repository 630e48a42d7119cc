"""Kernels started in the grading sandbox for the sandbox tests: a workspace laid out like the grader's,
its zygote, and notebooks of probe cells run with install_kernel's kernelspec. Not a test module."""

import os
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from traitlets.config import Config

from autograder.sandbox import launcher
from autograder.sandbox.zygote import client, protocol
from tests.slowdown import kernel_waits, scaled

KEY = "sandbox-test-key"
KERNEL_ENV = {"NBGRADER_EXECUTION": "autograde"}  # the kernelspec's variables (the key is added per kernel)
GENUINE_CHECK = (  # a course check run on a correct answer: it prints the pass line with the kernel's token
    "import numpy as np\nfrom autograder.checks.nmt import check_fit_linear_log\n"
    "def fit_linear_log(x, y):\n    return tuple(np.polyfit(np.log10(x), np.log10(y), 1))\n"
    "check_fit_linear_log(fit_linear_log)"
)


def stdout(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout").strip()


def errors(cell):
    return [o.ename for o in cell.outputs if o.output_type == "error"]


def start_zygote(ws):
    """The zygote of workspace ws, started with the environment execute() gives its kernels."""
    return client.start(ws, dict(os.environ, **KERNEL_ENV), list(KERNEL_ENV))


def execute(ws, cwd, sources, timeout=None, client_class=NotebookClient, key=KEY, uninstall=True, notebook=None):
    """Run `sources` as a notebook in `cwd` with the kernel install_kernel(ws) made; returns the cells.
    uninstall=False keeps the kernels' runtime folder, as the worker does between a student's notebooks.
    With a notebook's name, the kernel is asked for from this process as nbgrader's is (GradingKernelManager), for
    that notebook; else its launcher asks for it, once the workspace's zygote (if one serves) has imported every
    library: it would fork the kernel only then anyway, and the launcher, a process of its own, gives up on it after
    its own client.READY_TIMEOUT, which a busy machine can pass, where this wait's limit stretches (`scaled`).
    The cell time limit (`timeout`) is 60 s stretched the same way unless given."""
    if notebook is None:
        wait_preloaded(ws)
    info = launcher.install_kernel(ws, dict(KERNEL_ENV, A3_CHECK_KEY=key))
    waits = kernel_waits(cell=60 if timeout is None else None)
    if timeout is not None:
        waits["timeout"] = timeout
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    config = Config(info["config"])
    with pytest.MonkeyPatch.context() as mp:
        for k, v in info["env"].items():
            mp.setenv(k, v)
        if client_class is NotebookClient:
            km = None
            if notebook is not None:
                from autograder.grading.execute import GradingKernelManager

                km = GradingKernelManager(kernel_name=info["kernel_name"], config=config, notebook=notebook)
            client = NotebookClient(
                nb,
                km=km,
                kernel_name=info["kernel_name"],
                allow_errors=True,
                interrupt_on_timeout=True,
                config=config,
                resources={"metadata": {"path": str(cwd)}},
                **waits,
            )
            client.execute()
        else:
            client_class(kernel_name=info["kernel_name"], config=config, **waits).preprocess(
                nb, {"metadata": {"path": str(cwd)}}
            )
    if uninstall:
        launcher.uninstall_kernel(ws)
    return nb.cells


def workspace(root, student):
    """A workspace laid out like the grader's: gradebook at the top, the notebook folder deep inside."""
    ws = root / ".work" / student
    cwd = ws / "autograded" / student / "a3"
    cwd.mkdir(parents=True)
    (ws / "gradebook.db").write_text("grades")
    return ws, cwd


def descendants(pid):
    """Host pids of every process below pid."""
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def wait_preloaded(ws):
    """Wait until the zygote of ws has imported its libraries (at once when no zygote serves ws: none started, or
    stopped); 60 s at most on the idle machine, stretched on a busy one (`scaled`)."""
    log, limit = ws / ".sandbox" / client.LOG, scaled(60)
    deadline = time.monotonic() + limit
    while (protocol.socket_folder(ws) / protocol.LAUNCH).exists() and "preloaded" not in log.read_text():
        assert time.monotonic() < deadline, f"the zygote did not finish preloading in {limit:.0f} s"
        time.sleep(0.2)
