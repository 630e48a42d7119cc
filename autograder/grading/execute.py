"""What runs inside the `nbgrader autograde` process: `KeyedKernel` (each notebook's kernel under its own key),
nbgrader's autograde preprocessors with a kernel death or a flood of output survived (`ResilientExecute`), and the
kernel manager it uses, which does not idle while a kernel starts or stops. Only that process imports nbgrader: the
worker reads and re-scores its shard in plain SQL (autograder/gradebook.py)."""

import asyncio
import copy
import json
import os
import signal
import socket
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from queue import Empty

import zmq
from jupyter_client import AsyncKernelManager
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import in_pending_state
from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import DottedObjectName, Type, Unicode

from autograder import contract, envvars
from autograder.grading.runner import LIMIT_ERROR, STAMPS, sandboxed_kernel
from autograder.sandbox import launcher
from autograder.sandbox.limits import limits, out_of_memory, timed_out
from autograder.sandbox.zygote import client as zygote_client
from autograder.sandbox.zygote import protocol as zygote_protocol

FRESH_KERNELS = 3  # kernels a notebook may be given after a limit killed one (each costs a replay)
MEMORY_SIGNS = ("DefaultCPUAllocator: can't allocate memory", "Cannot allocate memory")  # torch, errno 12


class KeyedKernel(NbGraderPreprocessor):
    """Runs first for each notebook inside one `nbgrader autograde` process: installs the grading kernel
    with that notebook's own check key (read from the 0600 file named by env A3_KEYS_FILE), and notes the time
    in the workspace's STAMPS file: nbgrader asks for the notebook's kernel from here on (`runner.timing`), though
    a kernel asked for ahead may have started before (`ResilientExecute`)."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        info = _keys_file()
        name = resources["nbgrader"]["notebook"]
        stamps_path = Path(info["workspace"]) / STAMPS
        stamps = json.loads(stamps_path.read_text()) if stamps_path.exists() else {}
        stamps[name] = time.time()
        stamps_path.write_text(json.dumps(stamps))
        sandboxed_kernel(Path(info["workspace"]), {**info["kernel_env"], envvars.CHECK_KEY: info["keys"][name]})
        return nb, resources


AUTOGRADE_PREPROCESSORS = [  # nbgrader 0.9.6's list, with Execute replaced by the resilient one below
    "autograder.grading.execute.ResilientExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]


def error(ename: str, evalue: str) -> NotebookNode:
    """An error output, as a cell that raised would have."""
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def ran_out_of_memory(cell: NotebookNode) -> bool:
    """True when one of the cell's errors is an allocation that failed (MemoryError, torch's CPU allocator)."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            if out.get("ename") == "MemoryError" or any(s in out.get("evalue", "") for s in MEMORY_SIGNS):
                return True
    return False


def one_cause_per_cell(incidents: list[dict]) -> list[dict]:
    """[{"cell", "cause"}]: one incident per cell, in the order the cells were stopped. A cell that ran into a limit
    besides its time keeps that one (a fork bomb ignores its interrupt, so it also runs past its time; "timeout":
    True marks a time limit), any other keeps its first."""
    chosen = {}
    for incident in incidents:
        cell = incident["cell"]
        if cell not in chosen or (chosen[cell].get("timeout") and not incident.get("timeout")):
            chosen[cell] = incident
    return [{"cell": cell, "cause": incident["cause"]} for cell, incident in chosen.items()]


def _keys_file() -> dict:
    """The keys file `runner.run_autograde` wrote for this nbgrader process (named by env A3_KEYS_FILE): its workspace,
    the kernels' environment, each notebook's key and the order they are graded in."""
    return json.loads(Path(os.environ[envvars.KEYS_FILE]).read_text())


def _workspace() -> Path | None:
    """The student's workspace this nbgrader process grades (from the keys file KeyedKernel reads)."""
    try:
        return Path(_keys_file()["workspace"])
    except (KeyError, OSError, ValueError):
        return None


def _next_notebook(notebook: str) -> tuple[str, str] | None:
    """(name, key) of the notebook this nbgrader process grades after `notebook` (the keys file's "order"), or None."""
    try:
        info = _keys_file()
        order = info["order"]
        later = order[order.index(notebook) + 1 :]
        return (later[0], info["keys"][later[0]]) if later else None
    except (KeyError, OSError, ValueError, TypeError, IndexError):
        return None


def _in_background(fn, *args) -> Future:
    """fn(*args) in a daemon thread (one a process exit does not wait for); its result or exception in the Future."""
    future = Future()

    def run():
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001  (handed to whoever takes the result)
            future.set_exception(exc)

    threading.Thread(target=run, name="kernel-ahead", daemon=True).start()
    return future


def _result(future: Future):
    """The future's result once it has one; None when it raised."""
    try:
        return future.result()
    except Exception:  # noqa: BLE001  (the caller starts what it needs instead)
        return None


RECONNECT_MS = 5  # how soon the client's sockets try again a kernel that is not listening yet


class GradingKernelClient(AsyncKernelClient):
    """jupyter_client's async client, ready as soon as the kernel is.

    Its stock `wait_for_ready` ends by draining IOPub until nothing arrives for 0.2 s, which costs every
    notebook 0.2 s of idling; here the drain takes only what is already there. Readiness means the same:
    a kernel_info reply on shell and a message on IOPub (the subscription is live). Anything that arrives
    after the drain belongs to the kernel_info requests, and nbclient ignores output whose parent is not
    the cell it runs.
    """

    def _context_default(self):
        # The client connects as soon as the kernel is asked for, and the kernel binds its sockets tens of ms later.
        # zmq tries a socket again only every RECONNECT_IVL (0.1 s by default), which left each kernel waiting up to
        # that long after it was ready.
        context = super()._context_default()
        context.setsockopt(zmq.RECONNECT_IVL, RECONNECT_MS)
        return context

    async def _async_wait_for_ready(self, timeout=None):
        deadline = time.time() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                msg = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                pass
            else:
                if msg["msg_type"] == "kernel_info_reply":
                    try:
                        await self.iopub_channel.get_msg(timeout=0.2)
                    except Empty:
                        pass  # IOPub not connected yet: ask again
                    else:
                        self._handle_kernel_info_reply(msg)
                        break
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.time() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")
        while await self.iopub_channel.msg_ready():
            await self.iopub_channel.get_msg(timeout=0)

    wait_for_ready = _async_wait_for_ready


class ForkedKernel:
    """What jupyter_client's provisioner holds for a kernel the zygote forked at this process's request, in place of
    the launcher's Popen: the request's connection, open while the kernel runs, and the write end of its stdin. SIGKILL
    or SIGTERM closes them, which ends the kernel (the launcher's death did the same); interrupts go by message, as
    the kernelspec says."""

    pid = None
    stdin = stdout = stderr = None

    def __init__(self, conn: socket.socket, stdin: int):
        self.conn, self.stdin_end, self.returncode = conn, stdin, None

    def poll(self) -> int | None:
        if self.returncode is None and zygote_protocol.closed(self.conn):
            self._end(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Block until the kernel has ended (jupyter_client calls it once `poll` has seen the end)."""
        if self.returncode is None:
            zygote_protocol.wait_closed(self.conn)
            self._end(0)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if signum in (signal.SIGKILL, signal.SIGTERM) and self.returncode is None:
            self._end(-signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def _end(self, code: int) -> None:
        self.conn.close()
        os.close(self.stdin_end)
        self.returncode = code


AHEAD = "ka"  # the socket names of a kernel asked for ahead (`GradingKernelManager.order`): <runtime>/ka-<n>


@dataclass
class Order:
    """A kernel asked for ahead (`GradingKernelManager.order`)."""

    start: dict  # the arguments start_kernel must be called with to take it up
    environ: dict  # this process's environment when it was asked for
    kernel_cmd: list  # the kernelspec's command, its connection file written
    launch: dict  # the launch arguments (env, cwd) jupyter_client made of `start`
    kernel: Future  # the ForkedKernel, or None when no zygote gave one


class GradingKernelManager(AsyncKernelManager):
    """AsyncKernelManager with GradingKernelClient, which checks every 10 ms (not 100 ms) whether a killed
    kernel has gone (nbgrader kills each kernel after its notebook: Execute.shutdown_kernel immediate) and
    then drops what is still queued for it. Its kernel can be asked for ahead (`order`), while another notebook
    runs, and taken up when nbclient starts it."""

    client_class = DottedObjectName("autograder.grading.execute.GradingKernelClient")
    client_factory = Type(klass="autograder.grading.execute.GradingKernelClient")
    notebook = Unicode(
        "", help="the notebook the kernel is for: the zygote forks it once that notebook's libraries are in"
    )
    _ahead: Order | None = None

    async def _async_wait(self, pollinterval=0.01):
        while await self._async_is_alive():
            await asyncio.sleep(pollinterval)

    def order(self, **kw) -> None:
        """Ask the workspace's zygote for this kernel now and return at once; `start_kernel(**kw)` later takes up
        what it forked (the kernel initialises meanwhile, beside whatever this process does), or starts one afresh
        when the arguments or the environment are no longer those it was asked with, or that kernel has gone. Its
        sockets have names of their own (AHEAD), so no kernel asked for while it starts can be given the same."""
        self.ip = str(Path(self.ip).with_name(AHEAD))
        kernel_cmd, launch = run_sync(self._async_pre_start_kernel)(**kw)
        self._ahead = Order(
            kw, dict(os.environ), kernel_cmd, launch, _in_background(self._from_zygote, kernel_cmd, launch)
        )

    async def _async_start_kernel(self, **kw):
        """jupyter_client's start; or, after `order`, the kernel asked for then, if it can still be taken up."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None and self._can_take_up(ahead, kw):
            return await self._async_take_up(ahead)
        return await super()._async_start_kernel(**kw)

    start_kernel = _async_start_kernel

    def _can_take_up(self, ahead: Order, kw: dict) -> bool:
        """True when the kernel `order` asked for was asked with the arguments `kw` and this process's environment;
        else it is killed and the manager is left as if it had never been asked for."""
        if ahead.start == kw and ahead.environ == os.environ:
            return True
        kernel = _result(ahead.kernel)
        if kernel is not None:
            kernel.kill()
        self.cleanup_connection_file()
        self.provisioner = None
        return False

    @in_pending_state
    async def _async_take_up(self, ahead: Order) -> None:
        """Start with the kernel `order` asked for; if none came (no zygote, or it declined) or it has ended since,
        launch one as `_async_launch_kernel` would, with the same connection file."""
        self._attempted_start = True
        kernel = _result(ahead.kernel)
        if kernel is not None and kernel.poll() is None:
            self._adopt(kernel, ahead.launch)
        elif kernel is not None:
            kernel.kill()
            await self._async_launch_kernel(ahead.kernel_cmd, **ahead.launch)
        else:
            await self._launch_without_zygote(ahead.kernel_cmd, ahead.launch)
        await self._async_post_start_kernel(**ahead.launch)

    def _from_zygote(self, kernel_cmd, launch) -> "ForkedKernel | None":
        """The kernel the workspace's zygote forks for `kernel_cmd` (`launcher.zygote_kernel`: no launcher process to
        start), or None when no zygote gives one."""
        stdin, silent = os.pipe()  # as jupyter_client gives a launcher: a stdin nothing is ever written to
        try:
            conn = launcher.zygote_kernel(
                kernel_cmd, launch.get("env", os.environ), launch.get("cwd", os.getcwd()), [stdin, 1, 2], self.notebook
            )
        finally:
            os.close(stdin)
        if conn is None:
            os.close(silent)
            return None
        return ForkedKernel(conn, silent)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        """The kernel from the workspace's zygote; else the kernelspec's command, as jupyter_client runs it."""
        kernel = self._from_zygote(kernel_cmd, kw)
        if kernel is None:
            return await self._launch_without_zygote(kernel_cmd, kw)
        self._adopt(kernel, kw)

    async def _launch_without_zygote(self, kernel_cmd, launch):
        """The kernelspec's command, as jupyter_client runs it, once the zygote has been asked (its launcher need not
        ask it again)."""
        if launcher.is_launcher(kernel_cmd):
            kernel_cmd = [*kernel_cmd, "--no-zygote"]
        return await super()._async_launch_kernel(kernel_cmd, **launch)

    def _adopt(self, kernel: "ForkedKernel", launch: dict) -> None:
        """Hold `kernel` as jupyter_client's provisioner holds the process it launched."""
        self.provisioner.process = kernel
        self.provisioner.pid = self.provisioner.pgid = None
        self.provisioner.cwd = launch.get("cwd")
        self._reconcile_connection_info(self.provisioner.connection_info)

    def _close_control_socket(self) -> None:
        """Close the control socket at once. It is closed when the kernel has been killed, and the interrupt that a
        shutdown sends first could still be queued for it: the stock close waited its 0.1 s linger for a kernel that
        was gone (1 to 4 shutdowns in 30, measured)."""
        if self._control_socket is not None:
            self._control_socket.close(linger=0)
            self._control_socket = None


_AHEAD: dict[str, GradingKernelManager] = {}  # the kernels this nbgrader process asked for ahead, by notebook


class ResilientExecute(Execute):
    """nbgrader's Execute that survives a dying kernel, caps each cell's stream output and says which limit
    stopped a cell.

    When the kernel dies (os._exit, a segfault, the memory or CPU limit), the cell gets an error
    output, later cells are not run and get one too, and grading goes on with what ran: the
    notebook is graded as far as it got instead of not at all. A cell whose output never stops
    arriving (iopub timeout) gets an error output too instead of ending the whole run.

    A cell that ran into a limit (its time, memory, or the sandbox's processes, which the zygote's guard
    reports) gets a LIMIT_ERROR output saying which, and the notebook's metadata lists it (`a3_incidents`:
    [{"cell": index, "cause": text}], one cause per cell), so that the cause is recorded on the cell that had it,
    not on the next one that fails. A cell still running one time limit after its interrupt has its kernel killed.

    When a limit killed the kernel (processes, memory), the rest of the notebook is graded in a fresh kernel, in
    which the cells before the stopped one are first run again (their outputs kept as they were): a fork bomb
    then loses its own cell, as an infinite loop does, not the whole notebook.

    Before its first cell runs, it asks for the kernel of the notebook graded next (`GradingKernelManager.order`, with
    that notebook's key), which then starts beside this notebook's cells instead of after them.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", GradingKernelManager)  # nbgrader's Execute would set its own
        super().__init__(*args, **kwargs)

    def preprocess(self, nb: NotebookNode, resources: dict | None = None, km=None) -> tuple[NotebookNode, dict]:
        """nbclient's run of the notebook, then the mark of this run (A3_RUN_ID) on it."""
        self._a3_dead = None
        self._a3_chars = {}
        self._a3_incidents = []
        self._a3_index = None
        self._a3_fresh = 0
        self._a3_ordered = False
        self._a3_workspace = _workspace()
        self._a3_notebook = (resources or {}).get("nbgrader", {}).get("notebook", "")
        nb, resources = super().preprocess(nb, resources, km)
        nb.metadata["a3_run"] = envvars.get(envvars.RUN_ID)  # the worker's proof that this run finished it
        nb.metadata["a3_incidents"] = one_cause_per_cell(self._a3_incidents)
        return nb, resources

    def create_kernel_manager(self):
        """nbclient's kernel manager, told which notebook its kernels are for: for a notebook's first kernel, the one
        asked for while the notebook before it ran, if there is one."""
        notebook = getattr(self, "_a3_notebook", "")
        if notebook in _AHEAD:
            self.km = _AHEAD.pop(notebook)
            return self.km
        km = super().create_kernel_manager()
        if isinstance(km, GradingKernelManager):
            km.notebook = notebook
        return km

    def _a3_order_next(self) -> None:
        """Ask for the kernel of the notebook graded after this one, as nbclient will start it then: the same
        kernelspec with that notebook's key, the same arguments and folder."""
        following = _next_notebook(self._a3_notebook)
        if following is None or following[0] in _AHEAD or not isinstance(self.km, GradingKernelManager):
            return
        notebook, key = following
        km = GradingKernelManager(kernel_name=self.km.kernel_name, config=self.config, notebook=notebook)
        spec = self.km.kernel_spec  # this notebook's, as KeyedKernel installed it: the next one's differs in its key
        km._kernel_spec = KernelSpec(
            resource_dir=spec.resource_dir, **{**spec.to_dict(), "env": {**spec.env, envvars.CHECK_KEY: key}}
        )
        start = {"extra_arguments": list(self.extra_arguments)}
        path = self.resources.get("metadata", {}).get("path") or None
        if path:
            start["cwd"] = path
        try:
            km.order(**start)
        except Exception as exc:  # noqa: BLE001  (its notebook then starts a kernel itself)
            self.log.warning("could not ask ahead for %s's kernel: %s", notebook, exc)
            return
        _AHEAD[notebook] = km

    def _a3_incident(self, index: int, cause: str, timeout: bool = False) -> None:
        """Note that cell `index` was stopped by a limit (once per cause; `timeout`: its time limit)."""
        if cause not in self._a3_causes(index):
            self._a3_incidents.append({"cell": index, "cause": cause, "timeout": timeout})

    def _a3_causes(self, index: int) -> list[str]:
        """Every limit cell `index` ran into."""
        return [i["cause"] for i in self._a3_incidents if i["cell"] == index]

    def _a3_cause(self, index: int) -> str:
        """The one limit cell `index` is recorded with ('' when none)."""
        return next((i["cause"] for i in one_cause_per_cell(self._a3_incidents) if i["cell"] == index), "")

    async def _async_handle_timeout(self, timeout: int, cell: NotebookNode | None = None) -> None | dict:
        """nbclient's interrupt at the time limit, noted on the cell; a cell that is still running one time limit
        after its interrupt (it caught KeyboardInterrupt) has its kernel killed."""
        index = self._a3_index
        if timed_out(timeout) in self._a3_causes(index):
            self.log.error("cell %s ignored its interrupt: killing the kernel", index)
            await ensure_async(self.km.signal_kernel(signal.SIGKILL))
            raise DeadKernelError(f"cell {index} went on after its interrupt")
        self._a3_incident(index, timed_out(timeout), timeout=True)
        return await super()._async_handle_timeout(timeout, cell)

    def _a3_check(self, cell: NotebookNode, index: int) -> str:
        """After a cell: note the limits it ran into. Returns the one it is recorded with ('' when none)."""
        if ran_out_of_memory(cell):
            self._a3_incident(index, out_of_memory(limits()["mem_mb"]))
        if self._a3_workspace is not None:
            for cause in zygote_client.incidents(self._a3_workspace):  # the process guard's, since the last cell
                self._a3_incident(index, cause)
        return self._a3_cause(index)

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple[NotebookNode, dict]:
        """Run one cell; a time-out or a dead kernel becomes an error output, and later cells are not run."""
        if cell.cell_type != "code":
            return cell, self.resources
        if self._a3_dead is not None:
            cell.outputs = [error("KernelDied", f"not run: the kernel died in an earlier cell ({self._a3_dead})")]
            return cell, self.resources
        if not self._a3_ordered:
            self._a3_ordered = True
            self._a3_order_next()
        self._a3_index = index
        try:
            cell, _ = super().preprocess_cell(cell, resources, index)
        except CellTimeoutError:
            cell.outputs.append(error("CellTimeoutError", "the cell's output did not stop arriving in time"))
        except DeadKernelError as e:
            cause = self._a3_check(cell, index)
            why = cause or "os._exit, a crash such as a segfault, or the memory/CPU limit"
            if not cause:
                cell.outputs.append(error("KernelDied", f"the kernel died while running this cell ({why})"))
            self.log.error("kernel died in cell %s: %s", index, e)
            if not (cause and self._a3_fresh_kernel(index)):
                self._a3_dead = f"cell {index + 1}: {why}"
        cause = self._a3_check(cell, index)
        if cause:
            cell.outputs.append(error(LIMIT_ERROR, cause))
        return cell, self.resources

    def _a3_fresh_kernel(self, index: int) -> bool:
        """A fresh kernel in place of the one a limit killed in cell `index`, with the code cells before it run
        again but those a limit stopped and the test cells (they define nothing later cells use). False when none
        can be had or a cell run again fails to finish."""
        if self._a3_fresh >= FRESH_KERNELS:
            return False
        self._a3_fresh += 1
        try:
            self._cleanup_kernel()
            self._a3_quiet()
            self.km = self.create_kernel_manager()
            self.start_new_kernel()
            self.start_new_kernel_client()
            for i, earlier in enumerate(self.nb.cells[:index]):
                if earlier.cell_type == "code" and not contract.is_test_cell(earlier) and not self._a3_causes(i):
                    self._a3_index = i
                    self.execute_cell(NotebookNode(copy.deepcopy(earlier), outputs=[]), i, store_history=False)
        except Exception as exc:  # the notebook is then graded as far as it got
            self.log.error("no fresh kernel after cell %s: %s", index, exc)
            return False
        finally:
            self._a3_index = index
        return True

    def _a3_quiet(self, wait: float = 10.0) -> None:
        """Wait (up to `wait` seconds) until the process guard has nothing more to report: what the killed kernel
        left is gone and the guard no longer stops new processes, which a fresh kernel would be taken for."""
        if self._a3_workspace is None:
            return
        deadline = time.monotonic() + wait
        while zygote_client.incidents(self._a3_workspace) and time.monotonic() < deadline:
            time.sleep(0.2)

    def output(self, outs: list, msg: dict, display_id: str | None, cell_index: int) -> NotebookNode | None:
        """nbclient's output handling, with each cell's stream text capped at the output limit."""
        if msg["msg_type"] == "stream":
            cap = limits()["output_chars"]
            used = self._a3_chars.get(cell_index, 0)
            self._a3_chars[cell_index] = used + len(msg["content"].get("text", ""))
            if used > cap:
                return None
            if self._a3_chars[cell_index] > cap:
                msg = dict(
                    msg,
                    content=dict(
                        msg["content"],
                        text=msg["content"].get("text", "")[: cap - used]
                        + f"\n[output truncated by the grader at {cap} characters]\n",
                    ),
                )
        return super().output(outs, msg, display_id, cell_index)
