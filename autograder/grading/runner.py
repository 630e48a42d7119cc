"""The nbgrader runner: one `nbgrader autograde` process over a student's workspace.

The process is forked from a fork server that has nbgrader imported and prepared (`_nbgrader_context`,
`prepare_nbgrader`); this module does not import nbgrader, so a grading process starts its zygote without waiting
for it. The config puts `KeyedKernel` in front of the resilient autograde preprocessors (both in
autograder.grading.execute), so each notebook runs in a grading kernel that holds that notebook's own check key.
`run_autograde` returns what the worker needs to verify the run (`AutogradeRun`); `timing` splits a notebook's time
into start-up, setup, cells and tests.
"""

import functools
import json
import multiprocessing
import multiprocessing.forkserver
import os
import secrets
import signal
import time
import types
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import nbformat

from autograder import contract, envvars
from autograder.content import build
from autograder.sandbox import bwrap, launcher, linux
from autograder.sandbox.zygote import preload
from autograder.text import one_line


def sandboxed_kernel(ws: Path, kernel_env: dict[str, str]) -> tuple[str, dict, dict, bool]:
    """Kernel for this workspace from autograder.sandbox.launcher (bubblewrap whenever available).

    Returns:
    - (kernel name, extra env for nbgrader, traitlets config dict, sandboxed?)
    """
    spec = launcher.install_kernel(ws, dict(kernel_env))
    return spec["kernel_name"], dict(spec["env"]), dict(spec["config"]), bool(spec["sandboxed"])


def _flatten(config, prefix=""):
    """{"A": {"b": 1}} -> {"A.b": 1} (traitlets sections nest; values that are dicts of traits too)."""
    flat = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and key[:1].isupper() and "." not in name:
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


STAMPS = ".a3-kernel-stamps.json"  # {notebook: epoch seconds when nbgrader began its kernel's start}, in the workspace
LIMIT_ERROR = "StoppedByGrader"  # ename of the error output that says which limit stopped a cell (execute.py)


# The sandbox's autograde preprocessors (resilient Execute) with KeyedKernel in front: one process grades one
# or several notebooks, each under its own key
KEYED_PREPROCESSORS = [
    "from autograder.grading.execute import AUTOGRADE_PREPROCESSORS",
    "c.Autograde.autograde_preprocessors = ['autograder.grading.execute.KeyedKernel'] + AUTOGRADE_PREPROCESSORS",
]


# nbgrader and what an autograde run imports on first use (jupyter_client's kernel specs read IPython's paths)
FORKSERVER_PRELOAD = [
    "autograder",  # first: it spares nbgrader's jsonschema a slow optional import (autograder/__init__.py)
    "nbgrader.apps.nbgraderapp",
    "nbgrader.api",
    "sqlite3",
    "IPython",
    "jsonschema",
    "autograder.grading.execute",
    "autograder.grading.runner",
    "autograder.grading.nbgrader_ready",  # last: runs `prepare_nbgrader` in the fork server
]


@functools.lru_cache(maxsize=None)
def _nbgrader_context():
    """A multiprocessing fork server with nbgrader already imported, one per grading process.

    Importing nbgrader costs 3-4 s; a child forked from this server starts with it imported, so each
    student's `nbgrader autograde` run starts at once. The server is single-threaded (unlike a Dask
    worker), so forking it is safe.
    """
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(FORKSERVER_PRELOAD)
    return ctx


def start_fork_server() -> None:
    """Start this process's nbgrader fork server now (it imports nbgrader in the background); the first
    run_autograde would otherwise start it and wait."""
    _nbgrader_context()
    multiprocessing.forkserver.ensure_running()


def _start(proc):
    """proc.start(), also from a daemonic process such as a Dask worker (multiprocessing refuses that by
    default, so that no child outlives it; ours cannot: it dies with the fork server, which exits when
    this process does)."""
    config = multiprocessing.current_process()._config
    daemon = config.get("daemon")
    config["daemon"] = False
    try:
        proc.start()
    finally:
        config["daemon"] = daemon


def _autograde_child(argv, cwd, env, log_path):
    """Body of the forked nbgrader process: its own session, the given folder, environment and log file."""
    os.setsid()  # its own process group, killed as a whole on time-out
    # SIGKILL when the fork server (its parent) exits with the grading worker: no orphan writes to a
    # workspace that a retry is about to reuse
    linux.die_with_parent()
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    prepare_nbgrader()  # done already when the fork server imported nbgrader_ready
    from nbgrader.apps.nbgraderapp import NbGraderApp

    NbGraderApp.launch_instance(argv=argv)


_prepared = False  # True once prepare_nbgrader has run in this process


def prepare_nbgrader() -> None:
    """nbgrader as every autograde process runs it, once a process: quickened (`_quicken_nbgrader`), its notebooks in
    grading order (`_lightest_first`), and the one-time work of its first notebook done ahead. In the fork server,
    each process forked from it starts with them done (together about 0.1 s a student):
    - nbformat's validators compiled (fastjsonschema; about 45 ms), as its reading and writing a notebook does;
    - SQLAlchemy's mappers of nbgrader's gradebook configured (about 25 ms), as its first query does.
    """
    global _prepared
    if _prepared:
        return
    _prepared = True
    _quicken_nbgrader()
    _lightest_first()
    from nbgrader import api  # noqa: F401  (its gradebook's models are the mappers to configure)
    from sqlalchemy.orm import configure_mappers

    nbformat.reads(nbformat.writes(nbformat.v4.new_notebook()), as_version=4)
    configure_mappers()


def _quicken_nbgrader() -> None:
    """Cut four of nbgrader's per-notebook costs in this (forked, single-use) nbgrader process, deciding the same.

    - The workspace's gradebook is a scratch copy (the shard) that the worker re-reads once the process has
      exited, so its commits need not wait for the disk: `PRAGMA synchronous=OFF` on every SQLite connection.
      The rollback journal stays, so a process killed mid-commit leaves the shard as it was.
    - nbgrader opens a `Gradebook` about 20 times a student, each with an engine of its own, so SQLAlchemy
      compiled every query again each time. Here one engine serves each database URL (a `Gradebook` still has
      its own session, and closing one still returns its connections), so a query is compiled once a process.
    - Each `Gradebook` asks SQLite whether every table exists (`create_all`). Here that is asked once a database and
      process: nothing in it drops a table.
    - nbgrader's metadata validators read their schema files again for every cell (OverwriteCells) and
      `jsonschema.validate` checks the schema itself on every cell (CheckCellMetadata). Here each schema is
      read and checked once; each cell is still validated against it, and the error raised is the one
      `jsonschema.validate` would raise (`best_match`).
    """
    import jsonschema
    from nbgrader import api
    from nbgrader.nbgraderformat import common
    from sqlalchemy import create_engine, event
    from sqlalchemy.engine import Engine

    @event.listens_for(Engine, "connect")
    def _no_disk_wait(dbapi_connection, _record):
        dbapi_connection.execute("PRAGMA synchronous=OFF")

    @functools.lru_cache(maxsize=None)
    def one_engine(url, **options):
        return create_engine(url, **options)

    api.create_engine = one_engine

    create_all, created = api.Base.metadata.create_all, set()

    def create_all_once(bind, **kw):
        if bind not in created:  # bind: the one engine of its database
            create_all(bind=bind, **kw)
            created.add(bind)

    api.Base.metadata.create_all = create_all_once

    @functools.lru_cache(maxsize=None)
    def schema(version):
        return json.loads((Path(common.root) / f"v{version:d}.json").read_text())

    validators = {}

    def validate(instance, schema):
        if id(schema) not in validators:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            validators[id(schema)] = cls(schema)
        error = jsonschema.exceptions.best_match(validators[id(schema)].iter_errors(instance))
        if error is not None:
            raise error

    def init(self):
        self.schema = schema(self.schema_version)

    common.BaseMetadataValidator.__init__ = init
    common.jsonschema = types.SimpleNamespace(validate=validate)


def _lightest_first() -> None:
    """nbgrader grades a student's notebooks by name (bert first, the heaviest); here in the order the zygote makes
    their kernels ready (`preload.grading_order`), so a worker's first notebooks run while it still imports the
    libraries of the later ones. Each notebook is graded as before, in a kernel of its own."""
    from nbgrader.converters.autograde import Autograde

    init_assignment = Autograde.init_assignment

    def in_grading_order(self, assignment_id, student_id):
        init_assignment(self, assignment_id, student_id)
        self.notebooks = preload.grading_order(self.notebooks)

    Autograde.init_assignment = in_grading_order


@dataclass
class AutogradeRun:
    """What one `nbgrader autograde` process left: the worker verifies its notebooks against `run_id`."""

    run_id: str  # the mark ResilientExecute leaves on each notebook it finished executing in this run
    sandboxed: bool  # False when bubblewrap was unavailable
    wall: float  # seconds, process start to exit
    output: str  # nbgrader's stdout and stderr
    timed_out: bool  # killed after the time limit
    kernel_asked: dict[str, float]  # {notebook: epoch seconds when KeyedKernel asked for its kernel}

    def failure(self) -> str:
        """Why notebooks were left unfinished: 'time-out' or nbgrader's last error line."""
        return "time-out" if self.timed_out else last_error(self.output)


def run_autograde(
    *,
    workspace: Path,
    student: str,
    notebooks: list[str],
    keys: dict[str, str],
    settings: dict,
    env: dict[str, str],
    kernel_env: dict[str, str],
    cell_timeout: float,
    notebook_timeout: float,
    log_lines: list[str],
) -> AutogradeRun:
    """One `nbgrader autograde` process for `notebooks` (one, or all of the student's), each notebook under
    its own key from `keys`; the whole process group is killed after notebook_timeout per notebook.

    Inputs:
    - workspace: the student's nbgrader course folder; settings: nbgrader config for it (traitlets
      "Class.trait" names); env: nbgrader's environment; kernel_env: the grading kernels' environment.
    - log_lines: list that gets a WARNING line when unsandboxed and a SANDBOX line per sandbox event.
    Returns:
    - AutogradeRun.
    """
    ws, run_id = workspace, secrets.token_hex(8)
    kernel_name, extra_env, config, sandboxed = sandboxed_kernel(
        ws, {**kernel_env, envvars.CHECK_KEY: keys[notebooks[0]]}
    )
    if not sandboxed:
        log_lines.append(
            f"WARNING {student}/{','.join(notebooks)}: graded UNSANDBOXED (bubblewrap sandbox unavailable)"
        )
    settings = dict(settings)
    settings.update(_flatten(config))
    settings["Execute.kernel_name"] = kernel_name
    settings["Execute.timeout"] = cell_timeout
    env = {**env, **extra_env, envvars.RUN_ID: run_id}  # the key reaches the kernel through its kernelspec only
    argv = ["autograde", contract.ASSIGNMENT, "--student", student, "--force", "--create"]
    if len(notebooks) == 1:
        argv += ["--notebook", notebooks[0]]
    order = preload.grading_order(notebooks)  # as nbgrader grades them (`_lightest_first`)
    keyfile = ws / ".a3-keys.json"
    fd = os.open(keyfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"workspace": str(ws), "kernel_env": kernel_env, "keys": keys, "order": order}, f)
    env[envvars.KEYS_FILE] = str(keyfile)
    (ws / STAMPS).unlink(missing_ok=True)
    (ws / "nbgrader_config.py").write_text(build.config_text(settings, KEYED_PREPROCESSORS))
    log_path = ws / ".nbgrader-output.log"
    start = time.perf_counter()
    proc = _nbgrader_context().Process(target=_autograde_child, args=(argv, str(ws), env, str(log_path)))
    _start(proc)
    proc.join(notebook_timeout * len(notebooks))
    timed_out = proc.is_alive()
    if timed_out:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.join()
    output = log_path.read_text(errors="replace") if log_path.exists() else ""
    wall = time.perf_counter() - start
    for line in bwrap.read_events(ws):
        log_lines.append(f"SANDBOX {student}/{','.join(notebooks)}: {line}")
    return AutogradeRun(
        run_id=run_id,
        sandboxed=sandboxed,
        wall=wall,
        output=output,
        timed_out=timed_out,
        kernel_asked=kernel_stamps(ws),
    )


def _cell_time(cell, event):
    """A cell's recorded execution time stamp `event` (nbclient's cell metadata) as a datetime, or None."""
    try:
        return datetime.fromisoformat(cell.get("metadata", {}).get("execution", {})[event].replace("Z", "+00:00"))
    except (KeyError, ValueError, AttributeError):
        return None


def cell_seconds(cell: Mapping) -> float:
    """Seconds a cell took to execute by nbclient's time stamps (0 when it has none)."""
    start, end = _cell_time(cell, "iopub.execute_input"), _cell_time(cell, "shell.execute_reply")
    return 0.0 if start is None or end is None else max(0.0, (end - start).total_seconds())


def kernel_stamps(ws: Path) -> dict[str, float]:
    """{notebook: epoch seconds its kernel was asked for} that KeyedKernel noted in the last nbgrader run."""
    try:
        return json.loads((Path(ws) / STAMPS).read_text())
    except (OSError, ValueError):
        return {}


def timing(nb: nbformat.NotebookNode, wall: float, kernel_asked: float | None = None) -> dict[str, float]:
    """Where a notebook's grading time went: process+kernel start-up, setup cell, other cells, test cells.

    Inputs:
    - nb: the autograded notebook; wall: seconds charged to it; kernel_asked: epoch seconds when its kernel
      was asked for (KeyedKernel), or None.
    Returns:
    - {"seconds", "overhead", "setup", "cells", "tests"} and, with kernel_asked, "kernel_start": seconds from
      asking for the kernel to its first cell (part of the overhead; the rest is nbgrader's own work). A kernel
      asked for ahead, while the notebook before it ran, has mostly started by then: this is the wait left.
    """
    setup = cells = tests = 0.0
    first = None
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        s = cell_seconds(cell)
        if first is None:
            setup, first = s, cell
        elif contract.is_test_cell(cell):
            tests += s
        else:
            cells += s
    result = {
        "seconds": round(wall, 3),
        "overhead": round(max(0.0, wall - setup - cells - tests), 3),
        "setup": round(setup, 3),
        "cells": round(cells, 3),
        "tests": round(tests, 3),
    }
    began = first is not None and (_cell_time(first, "iopub.status.busy") or _cell_time(first, "iopub.execute_input"))
    if kernel_asked is not None and began:
        result["kernel_start"] = round(max(0.0, began.timestamp() - kernel_asked), 3)
    return result


def last_error(output: str) -> str:
    """The last error line of nbgrader's output (or its last line), on one line of at most 300 characters."""
    lines = [l for l in output.splitlines() if "ERROR" in l or "Error" in l]
    return one_line(lines[-1] if lines else (output.strip().splitlines() or ["no output"])[-1], 300)
