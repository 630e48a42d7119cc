"""autograder.grading.execute: the kernel manager and client that ResilientExecute grades with."""

import asyncio
import json
import os
import threading
import time
from queue import Empty

import nbformat
import pytest
import zmq
from jupyter_core.utils import run_sync
from nbclient import NotebookClient
from traitlets.config import Config

from autograder import envvars
from autograder.checks import pass_token
from autograder.grading import execute
from autograder.grading.execute import (
    ForkedKernel,
    GradingKernelClient,
    GradingKernelManager,
    ResilientExecute,
    one_cause_per_cell,
)
from autograder.sandbox import bwrap, launcher
from autograder.sandbox.zygote import client
from tests.sandbox.kernels import (
    GENUINE_CHECK,
    KERNEL_ENV,
    KEY,
    descendants,
    errors,
    start_zygote,
    stdout,
    wait_preloaded,
    workspace,
)
from tests.slowdown import kernel_waits, scaled


class FakeChannel:
    """A channel holding queued messages; get_msg with a timeout > 0 on an empty queue is recorded."""

    def __init__(self, messages):
        self.messages, self.waited = list(messages), []

    async def msg_ready(self):
        return bool(self.messages)

    async def get_msg(self, timeout=None):
        if self.messages:
            return self.messages.pop(0)
        if timeout:
            self.waited.append(timeout)
        raise Empty


def fake_client(shell, iopub):
    client = GradingKernelClient()
    client.__dict__.update(kernel_info=lambda: None, _handle_kernel_info_reply=lambda msg: None)
    client._shell_channel, client._iopub_channel = FakeChannel(shell), FakeChannel(iopub)

    async def alive():
        return True

    client._async_is_alive = alive
    return client


def test_ready_drains_iopub_without_waiting_for_silence():
    """Once kernel_info is answered and IOPub is live, does wait_for_ready take the queued IOPub messages and
    return, instead of waiting 0.2 s for nothing more to arrive?"""
    iopub = [{"msg_type": "status"}, {"msg_type": "status"}, {"msg_type": "stream"}]
    client = fake_client([{"msg_type": "kernel_info_reply"}], iopub)
    asyncio.run(client.wait_for_ready(timeout=5))
    assert client.iopub_channel.messages == [] and client.iopub_channel.waited == []


def test_ready_asks_again_until_iopub_is_live():
    """When IOPub is silent after the first kernel_info reply (not subscribed yet), does it ask again?"""
    client = fake_client([{"msg_type": "kernel_info_reply"}, {"msg_type": "kernel_info_reply"}], [])
    asked = []
    client.kernel_info = lambda: (
        asked.append(1) or (len(asked) == 2 and client.iopub_channel.messages.append({"msg_type": "status"}))
    )
    asyncio.run(client.wait_for_ready(timeout=5))
    assert len(asked) == 2 and client.iopub_channel.waited == [0.2]


def test_ready_fails_when_the_kernel_dies():
    """Does a kernel that dies before answering give jupyter_client's error instead of a hang?"""
    client = fake_client([], [])

    async def dead():
        return False

    client._async_is_alive = dead
    with pytest.raises(RuntimeError, match="died before replying"):
        asyncio.run(client.wait_for_ready(timeout=5))


def test_client_tries_a_kernel_that_is_not_listening_yet_within_10_ms():
    """Do the grading client's sockets connect again within 10 ms (not zmq's 100 ms) while the kernel they were
    started for has not bound its sockets yet?"""
    client = GradingKernelClient()
    socket = client.context.socket(zmq.DEALER)
    try:
        assert socket.getsockopt(zmq.RECONNECT_IVL) <= 10
    finally:
        socket.close(linger=0)
        client.context.term()


def test_shutdown_drops_what_is_queued_for_a_killed_kernel(tmp_path):
    """When the control socket still holds a message for a kernel that is gone (the interrupt a shutdown sends
    before killing it), does closing it let its context end at once instead of lingering to deliver it?"""
    km = GradingKernelManager()
    context = zmq.Context()
    socket = context.socket(zmq.DEALER)
    socket.linger = 60_000  # a minute: the stock close would hold the context that long
    socket.connect(f"ipc://{tmp_path}/gone-kernel-control")  # nobody listens: the kernel was killed
    socket.send(b"interrupt_request")
    km._control_socket = socket
    km._close_control_socket()
    ended = threading.Thread(target=context.term, daemon=True)
    ended.start()
    ended.join(timeout=scaled(10))
    assert km._control_socket is None and not ended.is_alive(), "expected the queued message dropped"


def test_resilient_execute_uses_the_grading_kernel_manager():
    """Does nbgrader's execute step (ResilientExecute) start kernels with GradingKernelManager and its client?"""
    manager = ResilientExecute().kernel_manager_class
    assert manager is GradingKernelManager
    assert isinstance(manager().client(), GradingKernelClient)


def test_sandboxed_kernels_run_back_to_back(tmp_path):
    """Through the zygote and the grading kernel manager, do five notebooks in a row each get their own
    outputs, complete and in order, each from a kernel of its own?"""
    assert bwrap.available(), "bubblewrap must be installed (./setup.sh installs the Debian package)"
    ws = tmp_path / "ws"
    cwd = ws / "autograded" / "s" / "a3"
    cwd.mkdir(parents=True)
    zyg = client.start(ws, dict(os.environ, **KERNEL_ENV), list(KERNEL_ENV))
    try:
        info = launcher.install_kernel(ws, dict(KERNEL_ENV, A3_CHECK_KEY="k"))
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("JUPYTER_PATH", info["env"]["JUPYTER_PATH"])
            for i in range(5):
                cells = [nbformat.v4.new_code_cell(f"print({i})"), nbformat.v4.new_code_cell("import os; os.getpid()")]
                nb = nbformat.v4.new_notebook(cells=cells)
                NotebookClient(
                    nb,
                    kernel_name=info["kernel_name"],
                    config=Config(info["config"]),
                    kernel_manager_class=GradingKernelManager,
                    shutdown_kernel="immediate",
                    resources={"metadata": {"path": str(cwd)}},
                    **kernel_waits(),
                ).execute()
                assert [o.get("text") for o in nb.cells[0].outputs] == [f"{i}\n"], nb.cells[0].outputs
                assert nb.cells[1].outputs[0]["output_type"] == "execute_result"
        assert zyg.report()["kernels"] == 5  # each notebook had a kernel of its own
    finally:
        zyg.stop()
        launcher.uninstall_kernel(ws)


def test_a_cell_stopped_by_two_limits_is_recorded_with_one_cause():
    """Is a cell that ran past its time and was killed for its processes (a fork bomb ignores its interrupt)
    recorded with the process limit alone, while a cell that only timed out keeps its time limit?"""
    incidents = [
        {"cell": 3, "cause": "timed out after 60 s", "timeout": True},
        {"cell": 3, "cause": "killed: more than 256 processes", "timeout": False},
        {"cell": 7, "cause": "timed out after 60 s", "timeout": True},
    ]
    assert one_cause_per_cell(incidents) == [
        {"cell": 3, "cause": "killed: more than 256 processes"},
        {"cell": 7, "cause": "timed out after 60 s"},
    ]


@pytest.fixture
def zygote_workspace(tmp_path):
    """A workspace with its zygote running and the grading kernelspec installed (JUPYTER_PATH set); yields (ws, cwd,
    zygote)."""
    assert bwrap.available(), "bubblewrap must be installed (./setup.sh installs the Debian package)"
    ws, cwd = workspace(tmp_path, "Zoë Ñúñez")
    zyg = start_zygote(ws)
    info = launcher.install_kernel(ws, dict(KERNEL_ENV, A3_CHECK_KEY=KEY))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", info["env"]["JUPYTER_PATH"])
        yield ws, cwd, zyg, Config(info["config"])
    zyg.stop()
    launcher.uninstall_kernel(ws)


def test_grading_kernel_manager_asks_the_zygote_itself(zygote_workspace):
    """With a zygote running, does the grading kernel manager get its kernel from it without starting a launcher
    process, a kernel that answers and signs checks with its own key, and that ends when the manager kills it?"""
    ws, cwd, zyg, config = zygote_workspace
    wait_preloaded(ws)
    before = set(descendants(zyg.proc.pid))
    km = GradingKernelManager(kernel_name="python3", config=config)
    run_sync(km.start_kernel)(cwd=str(cwd))
    try:
        assert isinstance(km.provisioner.process, ForkedKernel), "expected no launcher process"
        kernel = set(descendants(zyg.proc.pid)) - before
        assert kernel, "expected a kernel forked by the zygote"
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(GENUINE_CHECK)])
        NotebookClient(nb, km=km, **kernel_waits()).execute()
        want = f"PASSED fit_linear_log [a3:{pass_token('fit_linear_log', KEY.encode())}]"
        assert stdout(nb.cells[0]) == want, f"expected {want!r}, saw {stdout(nb.cells[0])!r} {errors(nb.cells[0])}"
        assert run_sync(km.is_alive)()
    finally:
        run_sync(km.shutdown_kernel)(now=True)
    assert not run_sync(km.is_alive)()
    deadline = time.monotonic() + scaled(10)
    while kernel & set(descendants(zyg.proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not kernel & set(descendants(zyg.proc.pid)), "expected the kernel gone once the manager killed it"


def test_a_kernel_from_the_zygote_that_crashes_is_graded_as_far_as_it_got(zygote_workspace):
    """When a kernel the grading kernel manager got from the zygote segfaults, are that cell and the later ones
    marked KernelDied while the earlier output stays (the manager sees the kernel's end)?"""
    ws, cwd, _, config = zygote_workspace
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(s) for s in ("print('before')", "import ctypes\nctypes.string_at(0)", "1")]
    )
    ResilientExecute(kernel_name="python3", config=config, **kernel_waits()).preprocess(
        nb, {"metadata": {"path": str(cwd)}}
    )
    assert stdout(nb.cells[0]) == "before"
    assert errors(nb.cells[1]) == ["KernelDied"] and errors(nb.cells[2]) == ["KernelDied"], (
        f"expected KernelDied on the crashing and later cells, saw {errors(nb.cells[1])}, {errors(nb.cells[2])}"
    )


def test_grading_kernel_manager_without_a_zygote_runs_the_launcher(tmp_path):
    """With no zygote, does the grading kernel manager run the kernelspec's launcher (a process of its own), whose
    kernel still answers?"""
    ws, cwd = workspace(tmp_path, "李明")
    info = launcher.install_kernel(ws, dict(KERNEL_ENV, A3_CHECK_KEY=KEY))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", info["env"]["JUPYTER_PATH"])
        km = GradingKernelManager(kernel_name="python3", config=Config(info["config"]))
        run_sync(km.start_kernel)(cwd=str(cwd))
        try:
            assert not isinstance(km.provisioner.process, ForkedKernel) and km.provisioner.process.pid
            nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
            NotebookClient(nb, km=km, **kernel_waits(cell=120)).execute()
            assert stdout(nb.cells[0]) == "42"
        finally:
            run_sync(km.shutdown_kernel)(now=True)
    launcher.uninstall_kernel(ws)


def test_a_kernel_from_the_zygote_waits_on_stdin_as_a_launchers_kernel_does(zygote_workspace):
    """Does a cell that reads the kernel's stdin wait until its time limit (nothing is ever written to it), as it
    does in a kernel behind the launcher, instead of reading an end of input at once?"""
    ws, cwd, _, config = zygote_workspace
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os\nprint(os.read(0, 1))")])
    ResilientExecute(kernel_name="python3", config=config, timeout=3, **kernel_waits(cell=None)).preprocess(
        nb, {"metadata": {"path": str(cwd)}}
    )
    assert stdout(nb.cells[0]) == "" and errors(nb.cells[0]), f"saw {stdout(nb.cells[0])!r} {errors(nb.cells[0])}"


def test_a_zygote_that_declines_is_asked_once(tmp_path):
    """When the zygote declines the grading kernel manager's request (it started with another environment), does the
    kernel start in a sandbox of its own through the launcher, without the launcher asking the zygote a second time?"""
    ws, cwd = workspace(tmp_path, "Ola Nowak")
    zyg = client.start(ws, dict(os.environ, NBGRADER_EXECUTION="validate"), list(KERNEL_ENV))
    info = launcher.install_kernel(ws, dict(KERNEL_ENV, A3_CHECK_KEY=KEY))
    try:
        wait_preloaded(ws)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("JUPYTER_PATH", info["env"]["JUPYTER_PATH"])
            nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os\nprint(os.getppid())")])
            config = Config(info["config"])
            ResilientExecute(kernel_name="python3", config=config, **kernel_waits(cell=120)).preprocess(
                nb, {"metadata": {"path": str(cwd)}}
            )
        asked = zyg.report()["kernels"]
    finally:
        zyg.stop()
        launcher.uninstall_kernel(ws)
    assert stdout(nb.cells[0]) == "1", (
        f"expected a kernel of its own, saw {stdout(nb.cells[0])!r} {errors(nb.cells[0])}"
    )
    assert asked == 1, f"expected the zygote asked once, it forked {asked} time(s)"


SECOND_KEY = "second-notebook-key"
KERNEL_IP = "import json\nfrom ipykernel import get_connection_info\nprint(json.loads(get_connection_info())['ip'])"


@pytest.fixture
def two_notebooks(zygote_workspace, monkeypatch):
    """zygote_workspace with the keys file of a run that grades "first" (the installed kernelspec's key), then
    "second" (a key of its own); yields (ws, cwd, zygote, config, grade) where grade(notebook, sources) runs
    ResilientExecute on one of them and returns its cells."""
    ws, cwd, zyg, config = zygote_workspace
    keys = ws / ".a3-keys.json"
    keys.write_text(
        json.dumps(
            {
                "workspace": str(ws),
                "kernel_env": KERNEL_ENV,
                "keys": {"first": KEY, "second": SECOND_KEY},
                "order": ["first", "second"],
            }
        )
    )
    monkeypatch.setenv(envvars.KEYS_FILE, str(keys))
    monkeypatch.setattr(execute, "_AHEAD", {})

    def grade(notebook, sources):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
        resources = {"metadata": {"path": str(cwd)}, "nbgrader": {"notebook": notebook}}
        ResilientExecute(kernel_name="python3", config=config, **kernel_waits()).preprocess(nb, resources)
        return nb.cells

    yield ws, cwd, zyg, config, grade
    for km in execute._AHEAD.values():
        kernel = km._ahead.kernel.result() if km._ahead else None
        if kernel is not None:
            kernel.kill()


def _ahead_kernel(notebook):
    """The kernel asked for ahead for `notebook` (a ForkedKernel), once the zygote has forked it."""
    return execute._AHEAD[notebook]._ahead.kernel.result(timeout=scaled(60))


def _second_checks():
    """The second notebook's cells: the genuine check (its token shows the key) and the kernel's socket name."""
    return [GENUINE_CHECK, KERNEL_IP]


def _passed_with(key):
    return f"PASSED fit_linear_log [a3:{pass_token('fit_linear_log', key.encode())}]"


def test_the_next_notebooks_kernel_is_asked_for_while_a_notebook_runs(two_notebooks):
    """While the first notebook runs, is the second notebook's kernel asked for (forked, alive, on sockets of its own),
    and does the second notebook then run in that kernel, signing with its own key, not the first's?"""
    ws, cwd, zyg, config, grade = two_notebooks
    first = grade("first", ["print('one')"])
    assert stdout(first[0]) == "one"
    assert "second" in execute._AHEAD, "expected the second notebook's kernel asked for during the first"
    assert _ahead_kernel("second").poll() is None, "expected the kernel asked for ahead to be running"
    second = grade("second", _second_checks())
    assert stdout(second[0]) == _passed_with(SECOND_KEY), f"saw {stdout(second[0])!r} {errors(second[0])}"
    assert stdout(second[1]).endswith(f"/{execute.AHEAD}"), f"expected the kernel asked for ahead: {stdout(second[1])}"
    assert execute._AHEAD == {}
    assert zyg.report()["kernels"] == 2, "expected one kernel a notebook"


def test_the_last_notebook_asks_for_no_kernel_ahead(two_notebooks):
    """Does the notebook graded last ask for no kernel after it (no notebook follows it)?"""
    ws, cwd, zyg, config, grade = two_notebooks
    grade("second", ["1"])
    assert execute._AHEAD == {}
    assert zyg.report()["kernels"] == 1


def test_a_kernel_asked_for_ahead_that_ended_is_replaced(two_notebooks):
    """When the kernel asked for ahead has ended before its notebook's turn (a process guard that stopped every
    kernel, say), does that notebook still run, in a fresh kernel from the zygote with its own key?"""
    ws, cwd, zyg, config, grade = two_notebooks
    grade("first", ["1"])
    _ahead_kernel("second").kill()
    second = grade("second", _second_checks())
    assert stdout(second[0]) == _passed_with(SECOND_KEY), f"saw {stdout(second[0])!r} {errors(second[0])}"
    assert zyg.report()["kernels"] == 3


def test_a_kernel_asked_for_under_another_environment_is_not_taken_up(two_notebooks, monkeypatch):
    """When the environment changed after the kernel was asked for ahead, is that kernel ended and one started as
    nbclient asks for it, with the notebook's own key?"""
    ws, cwd, zyg, config, grade = two_notebooks
    grade("first", ["1"])
    ahead = _ahead_kernel("second")
    monkeypatch.setenv("CHANGED_AFTER_THE_ASK", "1")
    second = grade("second", _second_checks())
    assert stdout(second[0]) == _passed_with(SECOND_KEY), f"saw {stdout(second[0])!r} {errors(second[0])}"
    assert ahead.poll() is not None, "expected the kernel asked for ahead to be ended"
    assert zyg.report()["kernels"] == 3


def test_a_fork_bomb_in_one_notebook_leaves_the_next_one_a_kernel(two_notebooks):
    """When a fork bomb in the first notebook makes the process guard stop every kernel, the second's (asked for
    ahead) too, does the first go on in a fresh kernel and the second still run, with its own key?"""
    ws, cwd, zyg, config, grade = two_notebooks
    bomb = "import os\nwhile True:\n    os.fork()"
    first = grade("first", ["print('before')", bomb, "print('after')"])
    assert stdout(first[0]) == "before" and stdout(first[2]) == "after", [c.outputs for c in first]
    second = grade("second", _second_checks())
    assert stdout(second[0]) == _passed_with(SECOND_KEY), f"saw {stdout(second[0])!r} {errors(second[0])}"


def test_next_notebook_reads_the_runs_order(tmp_path, monkeypatch):
    """Does the notebook after a given one come from the keys file's order, with its key, and none after the last one
    or without an order?"""
    keys = tmp_path / "keys.json"
    monkeypatch.setenv(envvars.KEYS_FILE, str(keys))
    keys.write_text(json.dumps({"keys": {"theory": "t", "nmt": "n"}, "order": ["theory", "nmt"]}))
    assert execute._next_notebook("theory") == ("nmt", "n")
    assert execute._next_notebook("nmt") is None
    keys.write_text(json.dumps({"keys": {"theory": "t", "nmt": "n"}}))
    assert execute._next_notebook("theory") is None


def test_a_zygote_that_declines_a_kernel_asked_for_ahead_is_not_asked_again(tmp_path, monkeypatch):
    """When the zygote declines the kernel asked for ahead (it started with another environment), does the next
    notebook's kernel start through the launcher, in a sandbox of its own and with its own key, without the zygote
    being asked for it a second time?"""
    ws, cwd = workspace(tmp_path, "Ola Nowak")
    zyg = client.start(ws, dict(os.environ, NBGRADER_EXECUTION="validate"), list(KERNEL_ENV))
    info = launcher.install_kernel(ws, dict(KERNEL_ENV, A3_CHECK_KEY=KEY))
    keys = ws / ".a3-keys.json"
    order = {"first": KEY, "second": SECOND_KEY}
    keys.write_text(json.dumps({"workspace": str(ws), "kernel_env": KERNEL_ENV, "keys": order, "order": list(order)}))
    monkeypatch.setenv(envvars.KEYS_FILE, str(keys))
    monkeypatch.setenv("JUPYTER_PATH", info["env"]["JUPYTER_PATH"])
    monkeypatch.setattr(execute, "_AHEAD", {})
    try:
        wait_preloaded(ws)
        cells = {}
        for notebook, sources in (("first", ["1"]), ("second", [GENUINE_CHECK, "import os\nprint(os.getppid())"])):
            nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
            resources = {"metadata": {"path": str(cwd)}, "nbgrader": {"notebook": notebook}}
            ResilientExecute(kernel_name="python3", config=Config(info["config"]), **kernel_waits(cell=120)).preprocess(
                nb, resources
            )
            cells[notebook] = nb.cells
        asked = zyg.report()["kernels"]
    finally:
        zyg.stop()
        launcher.uninstall_kernel(ws)
    second = cells["second"]
    assert stdout(second[0]) == _passed_with(SECOND_KEY), f"saw {stdout(second[0])!r} {errors(second[0])}"
    assert stdout(second[1]) == "1", f"expected a kernel of its own, saw {stdout(second[1])!r} {errors(second[1])}"
    assert asked == 2, f"expected the zygote asked once a notebook, it forked {asked} time(s)"
