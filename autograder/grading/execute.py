"""nbgrader's autograde preprocessors with a kernel death or a flood of output survived (ResilientExecute)."""
import os

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute

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


def error(ename, evalue):
    """An error output, as a cell that raised would have."""
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


class ResilientExecute(Execute):
    """nbgrader's Execute that survives a dying kernel and caps each cell's stream output.

    When the kernel dies (os._exit, a segfault, the memory or CPU limit), the cell gets an error
    output, later cells are not run and get one too, and grading goes on with what ran: the
    notebook is graded as far as it got instead of not at all. A cell whose output never stops
    arriving (iopub timeout) gets an error output too instead of ending the whole run.
    """

    def preprocess(self, nb, resources=None, km=None):
        self._a3_dead = None
        self._a3_chars = {}
        nb, resources = super().preprocess(nb, resources, km)
        nb.metadata["a3_run"] = os.environ.get("A3_RUN_ID", "")  # the worker's proof that this run finished it
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
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

    def output(self, outs, msg, display_id, cell_index):
        if msg["msg_type"] == "stream":
            cap = limits()["output_chars"]
            used = self._a3_chars.get(cell_index, 0)
            self._a3_chars[cell_index] = used + len(msg["content"].get("text", ""))
            if used > cap:
                return None
            if self._a3_chars[cell_index] > cap:
                msg = dict(msg, content=dict(msg["content"], text=msg["content"].get("text", "")[: cap - used]
                                             + f"\n[output truncated by the grader at {cap} characters]\n"))
        return super().output(outs, msg, display_id, cell_index)
