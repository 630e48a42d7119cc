"""Every `A3_*` environment variable of the course kit, declared once: its meaning, its default, who sets it and
who reads it.

Bottom layer: imports nothing of the package, so any module (also one that runs inside the sandbox) may use it. A
module that reads or sets a variable uses its name constant here (`envvars.CHECK_MODULES`), or the typed getters
`get`/`get_int`, which apply the default declared here. Two places keep the literal name on purpose: the check
runtime's `require_notebook_defined` and the kernel's audit hook run while student code runs, and a module
attribute could be rebound by that code, a literal in the function cannot.

Writers and readers are files of the repository ("autograder/sandbox/limits.py"); USER stands for whoever runs
the kit (their shell, a test, a notebook's own cell). tests/test_envvars.py checks this list against the code and
against the table in docs/ARCHITECTURE.md, which is `table()`'s output.
"""

import os
from dataclasses import dataclass

USER = "user"  # a writer that is no file: the person (or test) who runs the kit sets it in the environment


@dataclass(frozen=True)
class Var:
    """One environment variable: name, meaning, the value its readers take when it is unset (None: unset means
    none/off), and the files that set it (writers, or USER) and read it (readers)."""

    name: str
    meaning: str
    default: str | None
    writers: tuple[str, ...]
    readers: tuple[str, ...]


# What a notebook reads (the setup cell, docs/setup_cell.py, and cells of the source notebooks)
QUICK = "A3_QUICK"
DATA_URL = "A3_DATA_URL"
MODEL_CACHE = "A3_MODEL_CACHE"
# Knobs of whoever runs the kit
REPO = "A3_REPO"
ZYGOTE = "A3_ZYGOTE"
MEM_LIMIT_MB = "A3_MEM_LIMIT_MB"
CPU_LIMIT_S = "A3_CPU_LIMIT_S"
FSIZE_LIMIT_MB = "A3_FSIZE_LIMIT_MB"
OUTPUT_LIMIT_CHARS = "A3_OUTPUT_LIMIT_CHARS"
PROC_LIMIT = "A3_PROC_LIMIT"
ALLOW_NON_NOTEBOOK = "A3_ALLOW_NON_NOTEBOOK"
SKIP_CHROMIUM = "A3_SKIP_CHROMIUM"
# Set by one process of the kit for another (docs/ARCHITECTURE.md, "Processes")
RUN_STATS = "A3_RUN_STATS"
REPORT_OUT = "A3_REPORT_OUT"
RUN_ID = "A3_RUN_ID"
KEYS_FILE = "A3_KEYS_FILE"
CHECK_KEY = "A3_CHECK_KEY"
CHECK_MODULES = "A3_CHECK_MODULES"
KEY_FD = "A3_KEY_FD"
EVENTS_FD = "A3_EVENTS_FD"
ZYGOTE_FD = "A3_ZYGOTE_FD"
ZYGOTE_CONTROL_FD = "A3_ZYGOTE_CONTROL_FD"
ZYGOTE_VARS = "A3_ZYGOTE_VARS"
SANDBOX = "A3_SANDBOX"
SANDBOX_PROTECT = "A3_SANDBOX_PROTECT"
SANDBOX_VISIBLE = "A3_SANDBOX_VISIBLE"

_LIMITS = "autograder/sandbox/limits.py"
_BWRAP = "autograder/sandbox/bwrap.py"
_KERNEL = "autograder/sandbox/kernel.py"
_LAUNCHER = "autograder/sandbox/launcher.py"
_ZYGOTE_CLIENT = "autograder/sandbox/zygote/client.py"
_ZYGOTE_SERVER = "autograder/sandbox/zygote/server.py"
_SLOT = "autograder/sandbox/slot.py"
_RUNNER = "autograder/grading/runner.py"
_WORKER = "autograder/grading/worker.py"
_EXECUTE = "autograder/grading/execute.py"
_CHECKS = "autograder/checks/__init__.py"
_SETUP_CELL = "docs/setup_cell.py"
_LIMIT_READERS = (_LIMITS,)  # limits() runs in the grading process, the zygote and each kernel
_LIMIT_WRITERS = (USER, _BWRAP)  # bwrap forwards them into the sandbox (FORWARDED_ENV)

VARIABLES = (
    Var(
        QUICK,
        "`1`: quick mode (smaller data, fewer epochs, smaller models); the setup cell also turns it on while grading",
        None,
        (USER, _WORKER, _BWRAP, "autograder/budget.py"),  # the grading kernels' environment, and forced to 1 in
        # every sandbox; `budget` unsets it in its kernels (full mode) or sets it (--quick)
        (_SETUP_CELL,),
    ),
    Var(
        DATA_URL,
        "where the setup cell downloads the data folder when it is not next to the notebook (Colab)",
        "https://raw.githubusercontent.com/a3-course/a3/main/release/a3",
        (USER,),
        (_SETUP_CELL,),
    ),
    Var(
        MODEL_CACHE,
        "a Hugging Face hub cache with the pretrained models (`fetch-models` fills it); the sandbox shows it read-only "
        "at the same path",
        None,
        (USER, _BWRAP),
        ("autograder/content/fetch_models.py", _BWRAP, "source/a3/bert.ipynb", "source/a3/clip.ipynb"),
    ),
    Var(
        REPO,
        "the GitHub `org/name` that hosts `release/` (the notebooks' Colab badges); read when `build` imports",
        "a3-course/a3",
        (USER,),
        ("autograder/content/build.py",),
    ),
    Var(
        ZYGOTE,
        "`0`: no zygotes, every kernel starts in a bubblewrap sandbox of its own",
        "1",
        (USER,),
        (_SLOT,),
    ),
    Var(
        MEM_LIMIT_MB, "a kernel's data segment cap (RLIMIT_DATA), MiB; 0: none", "6144", _LIMIT_WRITERS, _LIMIT_READERS
    ),
    Var(CPU_LIMIT_S, "a kernel's CPU seconds (RLIMIT_CPU); 0: none", "1200", _LIMIT_WRITERS, _LIMIT_READERS),
    Var(
        FSIZE_LIMIT_MB,
        "the largest file a kernel may write (RLIMIT_FSIZE), MiB; 0: none",
        "512",
        _LIMIT_WRITERS,
        _LIMIT_READERS,
    ),
    Var(
        OUTPUT_LIMIT_CHARS,
        "stream output kept per cell, characters (the kernel and the grader cut past it)",
        "200000",
        _LIMIT_WRITERS,
        _LIMIT_READERS,
    ),
    Var(
        PROC_LIMIT,
        "processes a student's sandbox may run besides the grader's own (`sandbox.procs`)",
        "256",
        _LIMIT_WRITERS,
        _LIMIT_READERS,
    ),
    Var(
        ALLOW_NON_NOTEBOOK,
        "set (tests only): checks accept graded objects not defined in a notebook; never reaches a grading kernel, "
        "which refuses to set it",
        None,
        (USER,),
        (_CHECKS, "autograder/checks/theory.py", _BWRAP, _KERNEL),
    ),
    Var(SKIP_CHROMIUM, "`1`: `setup.sh` does not install chromium (a smaller image)", "0", (USER,), ("setup.sh",)),
    Var(
        RUN_STATS,
        "a path: `grade` writes there, as JSON, the scheduler's RunStats and the run's phases (`bench` sets it around a "
        "grading subprocess)",
        None,
        ("autograder/bench.py",),
        ("autograder/grading/pipeline.py",),
    ),
    Var(
        REPORT_OUT,
        "the OUT folder the grade report notebook reads (`report` sets it in the notebook's kernel)",
        "../demo_out/out",
        ("autograder/reports/report.py",),
        ("notebooks/grade_report.ipynb",),
    ),
    Var(
        RUN_ID,
        "the random mark of one `nbgrader autograde` process; `ResilientExecute` leaves it on each notebook it "
        "finished (`a3_run`); kept out of kernels",
        "",
        (_RUNNER,),
        (_EXECUTE, _BWRAP),
    ),
    Var(
        KEYS_FILE,
        "the 0600 JSON side file `.a3-keys.json` of one nbgrader process: workspace, kernel environment, a key per "
        "notebook",
        None,
        (_RUNNER,),
        (_EXECUTE,),
    ),
    Var(
        CHECK_KEY,
        "one notebook's pass-token key, in its kernelspec's environment (`kernel.json`, 0600); the launcher takes it "
        "out and hands it on by pipe or socket, never in a sandbox's environment",
        None,
        (_RUNNER, _EXECUTE),
        (_LAUNCHER, _BWRAP, _KERNEL, _CHECKS),
    ),
    Var(
        CHECK_MODULES,
        "comma-separated modules with the course's checks, imported by each kernel before student code",
        "autograder.checks.<nb>,… (each notebook's)",
        (_WORKER, _BWRAP),
        (_KERNEL,),
    ),
    Var(
        KEY_FD,
        "a kernel started without a zygote: the pipe its key arrives on",
        None,
        (_LAUNCHER,),
        (_KERNEL,),
    ),
    Var(
        EVENTS_FD,
        "an inherited fd of the sandbox event log (`.sandbox/sandbox-events.log`), where SANDBOX lines go",
        None,
        (_LAUNCHER, _ZYGOTE_CLIENT),
        (_KERNEL,),
    ),
    Var(
        ZYGOTE_FD,
        "the zygote's inherited listening socket (kernel requests from launchers)",
        None,
        (_ZYGOTE_CLIENT,),
        (_ZYGOTE_SERVER,),
    ),
    Var(
        ZYGOTE_CONTROL_FD,
        "the zygote's inherited control socket (`reset`, `check` from the grading side)",
        None,
        (_ZYGOTE_CLIENT,),
        (_ZYGOTE_SERVER,),
    ),
    Var(
        ZYGOTE_VARS,
        "JSON of the kernel variables the zygote started with; a request with others is declined",
        "{}",
        (_ZYGOTE_CLIENT,),
        (_ZYGOTE_SERVER,),
    ),
    Var(
        SANDBOX,
        "`1` in every sandboxed process; the released notebooks' generated last cell (the check before submitting) "
        "does nothing where it is set",
        None,
        (_BWRAP,),
        ("autograder/readiness.py",),
    ),
    Var(
        SANDBOX_PROTECT,
        "folders the kernel's audit hook logs reads of (the repository, the workspaces' parent, the home), "
        "`os.pathsep`-separated",
        "",
        (_BWRAP,),
        (_KERNEL,),
    ),
    Var(
        SANDBOX_VISIBLE,
        "folders below those that the sandbox does show (the Python installation, its writable folders)",
        "",
        (_BWRAP,),
        (_KERNEL,),
    ),
)
BY_NAME = {var.name: var for var in VARIABLES}


def get(name: str) -> str | None:
    """The value of variable `name` in this process's environment, else its declared default."""
    return os.environ.get(name, BY_NAME[name].default)


def get_int(name: str) -> int:
    """get(name) as an int (ValueError for a value that is not one)."""
    return int(get(name))


def _cell(files):
    return ", ".join(f if f == USER else f"`{f}`" for f in files) or "nobody"


def table() -> str:
    """The markdown table of VARIABLES in docs/ARCHITECTURE.md (one row each, in declaration order)."""
    rows = ["| variable | meaning | default | set by | read by |", "|---|---|---|---|---|"]
    for var in VARIABLES:
        default = "unset" if var.default is None else f"`{var.default}`" if var.default else "empty"
        rows.append(f"| `{var.name}` | {var.meaning} | {default} | {_cell(var.writers)} | {_cell(var.readers)} |")
    return "\n".join(rows) + "\n"
