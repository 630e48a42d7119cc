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
import time
from pathlib import Path
from queue import Empty

import zmq
from jupyter_client import AsyncKernelManager
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_core.utils import ensure_async
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
    in the workspace's STAMPS file, where the kernel's start begins (`runner.timing`)."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        info = json.loads(Path(os.environ[envvars.KEYS_FILE]).read_text())
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


def _workspace() -> Path | None:
    """The student's workspace this nbgrader process grades (from the keys file KeyedKernel reads)."""
    try:
        return Path(json.loads(Path(os.environ[envvars.KEYS_FILE]).read_text())["workspace"])
    except (KeyError, OSError, ValueError):
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


class GradingKernelManager(AsyncKernelManager):
    """AsyncKernelManager with GradingKernelClient, which checks every 10 ms (not 100 ms) whether a killed
    kernel has gone (nbgrader kills each kernel after its notebook: Execute.shutdown_kernel immediate) and
    then drops what is still queued for it."""

    client_class = DottedObjectName("autograder.grading.execute.GradingKernelClient")
    client_factory = Type(klass="autograder.grading.execute.GradingKernelClient")
    notebook = Unicode(
        "", help="the notebook the kernel is for: the zygote forks it once that notebook's libraries are in"
    )

    async def _async_wait(self, pollinterval=0.01):
        while await self._async_is_alive():
            await asyncio.sleep(pollinterval)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        """The kernel from the workspace's zygote, asked for from this process (`launcher.zygote_kernel`: no launcher
        process to start); else the kernelspec's command, as jupyter_client runs it."""
        stdin, silent = os.pipe()  # as jupyter_client gives a launcher: a stdin nothing is ever written to
        try:
            conn = launcher.zygote_kernel(
                kernel_cmd, kw.get("env", os.environ), kw.get("cwd", os.getcwd()), [stdin, 1, 2], self.notebook
            )
        finally:
            os.close(stdin)
        if conn is None:
            os.close(silent)
            if launcher.is_launcher(kernel_cmd):  # the zygote was asked here: the launcher need not ask it again
                kernel_cmd = [*kernel_cmd, "--no-zygote"]
            return await super()._async_launch_kernel(kernel_cmd, **kw)
        self.provisioner.process = ForkedKernel(conn, silent)
        self.provisioner.pid = self.provisioner.pgid = None
        self.provisioner.cwd = kw.get("cwd")
        self._reconcile_connection_info(self.provisioner.connection_info)

    def _close_control_socket(self) -> None:
        """Close the control socket at once. It is closed when the kernel has been killed, and the interrupt that a
        shutdown sends first could still be queued for it: the stock close waited its 0.1 s linger for a kernel that
        was gone (1 to 4 shutdowns in 30, measured)."""
        if self._control_socket is not None:
            self._control_socket.close(linger=0)
            self._control_socket = None


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
        self._a3_workspace = _workspace()
        self._a3_notebook = (resources or {}).get("nbgrader", {}).get("notebook", "")
        nb, resources = super().preprocess(nb, resources, km)
        nb.metadata["a3_run"] = envvars.get(envvars.RUN_ID)  # the worker's proof that this run finished it
        nb.metadata["a3_incidents"] = one_cause_per_cell(self._a3_incidents)
        return nb, resources

    def create_kernel_manager(self):
        """nbclient's kernel manager, told which notebook its kernels are for."""
        km = super().create_kernel_manager()
        if isinstance(km, GradingKernelManager):
            km.notebook = getattr(self, "_a3_notebook", "")
        return km

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
