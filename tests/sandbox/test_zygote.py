"""The per-student kernel zygote: kernels forked from it, each with its own key, and the ways back to a
kernel of its own when the zygote cannot serve. The sandbox itself is probed both ways in test_launcher.py."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jupyter_client.manager import KernelManager
from traitlets.config import Config

from autograder.checks import pass_token
from autograder.sandbox import bwrap, launcher
from autograder.sandbox.zygote import client, preload, protocol
from tests.sandbox.kernels import (
    GENUINE_CHECK,
    KERNEL_ENV,
    KEY,
    descendants,
    errors,
    execute,
    start_zygote,
    stdout,
    wait_preloaded,
    workspace,
)
from tests.slowdown import scaled

PARENT = "import os\nprint(os.getppid())"

pytestmark = pytest.mark.skipif(not bwrap.available(), reason="the zygote runs in bubblewrap")


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One workspace and running zygote for the tests that only run kernels in it (none stops, resets or
    uninstalls it: each kernel is a fresh fork all the same)."""
    ws, cwd = workspace(tmp_path_factory.mktemp("shared"), "carol")
    zyg = start_zygote(ws)
    yield ws, cwd, zyg
    zyg.stop()
    launcher.uninstall_kernel(ws)


@pytest.fixture
def running(tmp_path):
    """A workspace, its notebook folder and its running zygote (stopped afterwards)."""
    ws, cwd = workspace(tmp_path, "alice")
    zyg = start_zygote(ws)
    yield ws, cwd, zyg
    zyg.stop()
    launcher.uninstall_kernel(ws)


def test_each_kernel_signs_with_its_own_key(shared):
    """Do two kernels forked from one zygote each print pass tokens for the key their own kernelspec gave?"""
    ws, cwd, _ = shared
    for key in ("first-notebook-key", "second-notebook-key"):
        parent, cell = execute(ws, cwd, [PARENT, GENUINE_CHECK], key=key, uninstall=False)
        assert stdout(parent) not in ("", "1"), f"expected a kernel forked by the zygote, saw {parent.outputs}"
        want = f"PASSED fit_linear_log [a3:{pass_token('fit_linear_log', key.encode())}]"
        assert stdout(cell) == want, f"expected {want!r}, saw {stdout(cell)!r} {errors(cell)}"


def test_a_forked_kernel_outlives_a_quiet_cell(shared):
    """Does a forked kernel live through a cell that prints nothing for seconds (its connection to the launcher then
    carries nothing: only its close may end the kernel)?"""
    ws, cwd, _ = shared
    parent, quiet, after = execute(
        ws, cwd, [PARENT, "import time\ntime.sleep(2.5)\nprint('awake')", "print('still here')"], uninstall=False
    )
    assert stdout(parent) not in ("", "1"), f"expected a kernel forked by the zygote, saw {parent.outputs}"
    assert (stdout(quiet), stdout(after)) == ("awake", "still here"), (quiet.outputs, after.outputs)


def test_a_kernel_asked_for_early_finds_its_notebooks_libraries_in(running):
    """Does a kernel asked for while the zygote still imports (nmt's, as soon as the zygote starts) begin with every
    library of the shared stage and of the notebooks up to its own already in (torch._dynamo, which no kernel imports
    while it starts), so that no cell of it imports one (and prints what it may print), and sign with its own key?"""
    ws, cwd, _ = running
    stages = preload.stages(["autograder.checks.nmt", "autograder.checks.theory"])
    wanted = [m for _, modules in stages[: preload.needed("nmt")] for m in modules]
    assert "torch._dynamo" in wanted
    probe = f"import json, sys\nprint(json.dumps(sorted(m for m in {wanted!r} if m not in sys.modules)))"
    parent, missing, cell = execute(ws, cwd, [PARENT, probe, GENUINE_CHECK], uninstall=False, notebook="nmt")
    log = (ws / ".sandbox" / client.LOG).read_text()
    assert stdout(parent) not in ("", "1") and re.search(r"forked kernel \d+ for nmt\n", log), log
    skipped = re.findall(r"not preloaded: (\S+):", log)  # a library this machine lacks
    assert [m for m in json.loads(stdout(missing)) if m not in skipped] == [], missing.outputs
    assert stdout(cell) == f"PASSED fit_linear_log [a3:{pass_token('fit_linear_log', KEY.encode())}]", cell.outputs


def test_kernel_gets_the_launchers_options(shared):
    """Does a forked kernel get the options nbclient passes its launcher (an in-memory IPython history)?"""
    ws, cwd, _ = shared
    parent, cell = execute(ws, cwd, [PARENT, "print(get_ipython().history_manager.hist_file)"], uninstall=False)
    assert stdout(parent) not in ("", "1"), f"expected a kernel forked by the zygote, saw {parent.outputs}"
    assert stdout(cell) == ":memory:", f"saw {stdout(cell)!r} {errors(cell)}"


def test_kernels_start_from_a_clean_state(shared):
    """Does a second kernel start without the first kernel's variables (each is forked from the zygote)?"""
    ws, cwd, _ = shared
    execute(ws, cwd, ["leftover = 42"], uninstall=False)
    parent, cell = execute(ws, cwd, [PARENT, "print('leftover' in globals())"], uninstall=False)
    assert stdout(parent) not in ("", "1"), f"expected a kernel forked by the zygote, saw {parent.outputs}"
    assert stdout(cell) == "False", f"expected a fresh namespace, saw {stdout(cell)!r}"


def test_zygote_never_holds_a_key(shared):
    """Is no check key in the environment of the zygote or any process of its sandbox?"""
    ws, cwd, zyg = shared
    execute(ws, cwd, [PARENT], key="a-key-that-must-stay-in-its-kernel", uninstall=False)
    for pid in descendants(zyg.proc.pid):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        assert b"A3_CHECK_KEY" not in environ and b"a-key-that-must-stay" not in environ, f"pid {pid}"


def test_dead_zygote_falls_back_to_a_kernel_of_its_own(running):
    """When the zygote is gone, does the kernel still start, in a sandbox of its own?"""
    ws, cwd, zyg = running
    zyg.stop()
    (cell,) = execute(ws, cwd, [PARENT])
    assert stdout(cell) == "1", f"expected bwrap's init as the parent, saw {stdout(cell)!r} {errors(cell)}"


@pytest.mark.slow
def test_other_environment_falls_back_and_says_so(tmp_path):
    """Is a zygote started with another environment left unused, with a line in the event log?"""
    ws, cwd = workspace(tmp_path, "bob")
    zyg = client.start(ws, dict(os.environ, NBGRADER_EXECUTION="validate"), list(KERNEL_ENV))
    try:
        (cell,) = execute(ws, cwd, [PARENT])
    finally:
        zyg.stop()
    assert stdout(cell) == "1", f"expected a kernel of its own, saw parent {stdout(cell)!r} {errors(cell)}"
    events = bwrap.read_events(ws)
    assert any("zygote not used" in e and "NBGRADER_EXECUTION" in e for e in events), events


@pytest.mark.slow
def test_remade_runtime_folder_falls_back_and_says_so(running):
    """When the kernels' runtime folder is removed and made again after the zygote started (its sandbox
    then shows a stale one), does the kernel start on its own, with a line in the event log?"""
    ws, cwd, _ = running
    execute(ws, cwd, [PARENT])  # removes the runtime folder at the end; the next install makes it again
    (cell,) = execute(ws, cwd, [PARENT])
    assert stdout(cell) == "1", f"expected a kernel of its own, saw parent {stdout(cell)!r} {errors(cell)}"
    events = bwrap.read_events(ws)
    assert any("zygote not used" in e and "does not show" in e for e in events), events


@pytest.mark.slow
def test_killed_launcher_ends_its_kernel(running):
    """When nbgrader kills a kernel (its launcher), does the forked kernel exit too?"""
    ws, cwd, zyg = running
    wait_preloaded(ws)
    baseline = set(descendants(zyg.proc.pid))
    info = launcher.install_kernel(ws, dict(KERNEL_ENV, A3_CHECK_KEY="k"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", info["env"]["JUPYTER_PATH"])
        km = KernelManager(kernel_name=info["kernel_name"], config=Config(info["config"]))
        km.start_kernel(cwd=str(cwd))
        client = km.client()
        client.start_channels()
        client.wait_for_ready(timeout=scaled(60))
        kernels = set(descendants(zyg.proc.pid)) - baseline
        assert kernels, "expected a kernel forked in the zygote's sandbox"
        client.stop_channels()
        km.shutdown_kernel(now=True)
    deadline = time.monotonic() + scaled(10)
    while set(descendants(zyg.proc.pid)) & kernels and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not set(descendants(zyg.proc.pid)) & kernels, "expected the kernel to exit with its launcher"
    launcher.uninstall_kernel(ws)


def test_stop_ends_the_sandbox(running):
    """Does stop() end the zygote and every process of its sandbox, and remove its socket?"""
    ws, cwd, zyg = running
    execute(ws, cwd, [PARENT])
    zyg.stop()
    assert zyg.proc.poll() is not None and not descendants(zyg.proc.pid)
    assert not protocol.socket_folder(ws).exists()


LEAVE_BEHIND = (
    "import os, subprocess\n"
    "p = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
    "os.makedirs('/tmp/home/.ipython/profile_default/startup', exist_ok=True)\n"
    "open('/tmp/home/.ipython/profile_default/startup/00-left.py', 'w').write('LEFT_BEHIND = True')\n"
    "open('/tmp/left.txt', 'w').write('x')\n"
    "print(p.pid)"
)
LOOK = "import os\nprint('LEFT_BEHIND' in globals(), os.path.exists('/tmp/left.txt'), os.path.exists('/proc/{pid}'))"
READ_PARENT = (
    "import os\npid = os.getppid()\ntry:\n"
    "    start = int(open(f'/proc/{pid}/maps').readline().split('-')[0], 16)\n"
    "    with open(f'/proc/{pid}/mem', 'rb') as f:\n        f.seek(start)\n        f.read(16)\n"
    "    print('read')\nexcept OSError as e:\n    print(type(e).__name__)"
)


def test_reset_leaves_nothing_for_the_next_student(running):
    """What one student's kernel leaves behind in files (an IPython startup file in the home, a file in /tmp)
    reaches the next kernel of the same zygote (a process it started ends with it: procs.Guard); after a reset,
    does none of it?"""
    ws, cwd, zyg = running
    (left,) = execute(ws, cwd, [LEAVE_BEHIND], uninstall=False)
    pid = stdout(left)
    assert pid.isdigit(), left.outputs
    (same_student,) = execute(ws, cwd, [LOOK.format(pid=pid)], uninstall=False)
    assert stdout(same_student) == "True True False", f"expected the files to be there, saw {same_student.outputs}"
    assert zyg.reset(), "expected the zygote to confirm the reset"
    (next_student,) = execute(ws, cwd, [PARENT, LOOK.format(pid=pid)], uninstall=False)[1:]
    assert stdout(next_student) == "False False False", f"saw {next_student.outputs}"
    assert (cwd).is_dir(), "expected the reset to leave the mounted notebook folder alone"


UNMAPPED = (  # loaded modules with a file that inspect's module map lacks (each costs a realpath in a traceback)
    "import inspect, sys\n"
    "print(sum(1 for name, m in list(sys.modules.items()) if inspect.ismodule(m) and hasattr(m, '__file__')"
    " and m.__file__ != inspect._filesbymodname.get(name)), 'stack_data' in sys.modules)"
)
ERRORS = [  # cells whose tracebacks a student sees: their own code, a library's, a course check's
    "def f():\n    assert 1 == 2, 'wrong'\nf()",
    "import numpy as np\nnp.linalg.inv(np.zeros((2, 2)))",
    "from autograder.checks.nmt import check_fit_linear_log\ncheck_fit_linear_log(lambda x, y: (1.0, 2.0))",
]


def test_a_kernels_first_traceback_has_nothing_left_to_map(shared):
    """Does a kernel forked from the zygote start with inspect's map of every loaded module filled and IPython's
    traceback modules imported, so that its first error is not the one that pays for them (~0.1 s)?"""
    ws, cwd, _ = shared
    parent, cell = execute(ws, cwd, [PARENT, UNMAPPED], uninstall=False)
    assert stdout(parent) not in ("", "1"), f"expected a kernel forked by the zygote, saw {parent.outputs}"
    unmapped, imported = stdout(cell).split()  # at most what the kernel imported after its fork (~1,500 without)
    assert int(unmapped) < 10 and imported == "True", f"unmapped modules, stack_data imported: {stdout(cell)!r}"


def test_a_forked_kernels_tracebacks_read_as_a_fresh_kernels(running):
    """Does an error's traceback in a kernel forked from the zygote (caches filled before the fork) read exactly
    as in a kernel of its own, for the student's code, a library's and a course check's?"""
    ws, cwd, zyg = running

    def shown(cells):
        return [re.sub(r"ipykernel_\d+", "ipykernel_N", json.dumps(c.outputs)) for c in cells[1:]]

    forked = execute(ws, cwd, [PARENT, *ERRORS], uninstall=False)
    zyg.stop()
    own = execute(ws, cwd, [PARENT, *ERRORS])
    assert stdout(forked[0]) not in ("", "1") and stdout(own[0]) == "1", "expected one forked, one of its own"
    assert all(errors(c) for c in forked[1:]), [c.outputs for c in forked]
    assert shown(forked) == shown(own)


def test_a_kernel_of_its_own_shows_the_same_progress_bars_as_a_forked_one(running):
    """Does a kernel started without the zygote get tqdm.auto's text progress bar, as a kernel forked from the
    zygote does (tqdm picks a widget, which a feedback page shows as nothing, when ipykernel is imported first)?"""
    ws, cwd, zyg = running
    bar = "from tqdm.auto import tqdm\nprint(tqdm.__module__)"
    forked = execute(ws, cwd, [PARENT, bar], uninstall=False)
    zyg.stop()
    own = execute(ws, cwd, [PARENT, bar])
    assert stdout(forked[0]) not in ("", "1") and stdout(own[0]) == "1", "expected one forked, one of its own"
    assert stdout(forked[1]) == stdout(own[1]) == "tqdm.asyncio", (forked[1].outputs, own[1].outputs)


def test_zygote_memory_is_not_readable_from_a_kernel(shared):
    """Can a kernel read its zygote's memory (through /proc/PID/mem), which would let one student's code
    change what the next student's kernels start from? It must fail."""
    ws, cwd, _ = shared
    (cell,) = execute(ws, cwd, [READ_PARENT], uninstall=False)
    assert stdout(cell) == "PermissionError", f"saw {stdout(cell)!r} {errors(cell)}"


def test_kernel_ends_when_nbgrader_dies(running):
    """When the process that started the kernel (nbgrader) is killed, as at the notebook time limit, does the
    forked kernel end too, instead of running on in the zygote's sandbox?"""
    import subprocess

    ws, cwd, zyg = running
    wait_preloaded(ws)
    baseline = set(descendants(zyg.proc.pid))
    info = launcher.install_kernel(ws, dict(KERNEL_ENV, A3_CHECK_KEY="k"))
    code = (
        f"import os\nfrom jupyter_client.manager import KernelManager\nfrom traitlets.config import Config\n"
        f"km = KernelManager(kernel_name={info['kernel_name']!r}, config=Config({info['config']!r}))\n"
        f"km.start_kernel(cwd={str(cwd)!r})\nc = km.client()\nc.start_channels()\nc.wait_for_ready(timeout={scaled(60)})\n"
        f"print('ready', flush=True)\nos.kill(os.getpid(), 9)\n"
    )
    env = dict(os.environ, JUPYTER_PATH=info["env"]["JUPYTER_PATH"])
    log = ws / "nbgrader-standin.log"
    with open(log, "w") as f:  # a file, not a pipe: what lives on must not keep this test waiting
        subprocess.run([sys.executable, "-c", code], env=env, stdout=f, stderr=subprocess.STDOUT, timeout=scaled(120))
    assert log.read_text().strip() == "ready", log.read_text()
    deadline = time.monotonic() + scaled(10)
    while set(descendants(zyg.proc.pid)) - baseline and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not set(descendants(zyg.proc.pid)) - baseline, "expected the kernel to end with the process that started it"


PRELOAD_PROBE = """
import importlib, json, os, sys, tempfile
from autograder.sandbox.zygote import preload
for _, modules in preload.stages([]):
    for name in modules:
        importlib.import_module(name)
from jupyter_client.connect import write_connection_file
from ipykernel.kernelapp import IPKernelApp
folder = tempfile.mkdtemp()
connection, _ = write_connection_file(os.path.join(folder, "k.json"), transport="ipc", ip=os.path.join(folder, "k"))
before = set(sys.modules)
IPKernelApp.instance().initialize(["-f", connection])
with open(sys.argv[1], "w") as f:  # fd 1 and 2 belong to the kernel now
    json.dump(sorted(set(sys.modules) - before), f)
os._exit(0)
"""


def test_preload_holds_what_a_starting_kernel_imports(tmp_path):
    """Does a kernel forked from the zygote find everything IPKernelApp imports while it starts (its debugger,
    debugpy and pydevd above all, ~0.3 s a kernel) already imported?"""
    found = tmp_path / "new_modules.json"
    subprocess.run(
        [sys.executable, "-c", PRELOAD_PROBE, str(found)],
        timeout=scaled(120),
        capture_output=True,
        env=dict(os.environ, **KERNEL_ENV),
    )
    new = json.loads(found.read_text())
    heavy = [
        m
        for m in new
        if m.split(".")[0]
        in ("debugpy", "pydevd", "_pydevd_bundle", "tornado", "IPython", "ipykernel", "sqlite3", "pdb")
    ]
    assert not heavy, f"imported by each kernel at start, not preloaded by the zygote: {heavy}"
