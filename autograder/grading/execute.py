"""nbgrader's autograde preprocessors with a kernel death or a flood of output survived (ResilientExecute),
and the kernel manager it uses, which does not idle while a kernel starts or stops."""

import asyncio
import os
import time
from queue import Empty

from jupyter_client import AsyncKernelManager
from jupyter_client.asynchronous import AsyncKernelClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import DottedObjectName, Type

from autograder.sandbox.limits import limits

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


class GradingKernelClient(AsyncKernelClient):
    """jupyter_client's async client, ready as soon as the kernel is.

    Its stock `wait_for_ready` ends by draining IOPub until nothing arrives for 0.2 s, which costs every
    notebook 0.2 s of idling; here the drain takes only what is already there. Readiness means the same:
    a kernel_info reply on shell and a message on IOPub (the subscription is live). Anything that arrives
    after the drain belongs to the kernel_info requests, and nbclient ignores output whose parent is not
    the cell it runs.
    """

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


class GradingKernelManager(AsyncKernelManager):
    """AsyncKernelManager with GradingKernelClient, which checks every 10 ms (not 100 ms) whether a killed
    kernel has gone (nbgrader kills each kernel after its notebook: Execute.shutdown_kernel immediate)."""

    client_class = DottedObjectName("autograder.grading.execute.GradingKernelClient")
    client_factory = Type(klass="autograder.grading.execute.GradingKernelClient")

    async def _async_wait(self, pollinterval=0.01):
        while await self._async_is_alive():
            await asyncio.sleep(pollinterval)


class ResilientExecute(Execute):
    """nbgrader's Execute that survives a dying kernel and caps each cell's stream output.

    When the kernel dies (os._exit, a segfault, the memory or CPU limit), the cell gets an error
    output, later cells are not run and get one too, and grading goes on with what ran: the
    notebook is graded as far as it got instead of not at all. A cell whose output never stops
    arriving (iopub timeout) gets an error output too instead of ending the whole run.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", GradingKernelManager)  # nbgrader's Execute would set its own
        super().__init__(*args, **kwargs)

    def preprocess(self, nb: NotebookNode, resources: dict | None = None, km=None) -> tuple[NotebookNode, dict]:
        """nbclient's run of the notebook, then the mark of this run (A3_RUN_ID) on it."""
        self._a3_dead = None
        self._a3_chars = {}
        nb, resources = super().preprocess(nb, resources, km)
        nb.metadata["a3_run"] = os.environ.get("A3_RUN_ID", "")  # the worker's proof that this run finished it
        return nb, resources

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple[NotebookNode, dict]:
        """Run one cell; a time-out or a dead kernel becomes an error output, and later cells are not run."""
        if cell.cell_type != "code":
            return cell, self.resources
        if self._a3_dead is not None:
            cell.outputs = [error("KernelDied", f"not run: the kernel died in an earlier cell ({self._a3_dead})")]
            return cell, self.resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except CellTimeoutError:
            cell.outputs.append(error("CellTimeoutError", "the cell's output did not stop arriving in time"))
            return cell, self.resources
        except DeadKernelError as e:
            self._a3_dead = f"cell {index}"
            why = "os._exit, a crash such as a segfault, or the memory/CPU limit"
            cell.outputs.append(error("KernelDied", f"the kernel died while running this cell ({why})"))
            self.log.error("kernel died in cell %s: %s", index, e)
            return cell, self.resources

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
