"""A grading slot: one workspace folder and the zygote that serves it, reused from student to student.

This is all the worker sees of the sandbox's kernels. A slot starts empty with a zygote importing the
libraries; before each student the worker claims it (a slot nobody has used is taken as it is, any other is
reset first) and empties it; a slot that no longer serves the worker's kernel environment, or whose zygote
does not confirm its reset, is stopped and replaced. Which of the slot's folders the zygote has mounted,
and so must be emptied rather than removed, is known only here.
"""

import json
import os
import secrets
import shutil
from pathlib import Path

from autograder import envvars
from autograder.sandbox import bwrap, launcher, linux
from autograder.sandbox.zygote import client, protocol

PREFIX = ".slot-"  # slot workspaces are <parent>/.slot-<pid>-<hex>


def available() -> bool:
    """True when kernels can come from a slot's zygote: bubblewrap works here and A3_ZYGOTE is not 0."""
    return bwrap.available() and envvars.get(envvars.ZYGOTE) != "0"


def leftovers(parent) -> list[Path]:
    """Slot workspaces left in parent by worker processes that have exited."""
    return sorted(Path(parent).glob(PREFIX + "*"))


def _signature(source_env, pass_names):
    return json.dumps(bwrap.kernel_variables(source_env, pass_names), sort_keys=True)


class Slot:
    """A slot workspace and its running zygote (`Slot.start` makes one)."""

    def __init__(self, parent: Path, workspace: Path, zygote: client.Zygote, signature: str):
        self.parent, self.workspace, self.zygote, self.signature = parent, workspace, zygote, signature
        self.used = False

    @classmethod
    def start(cls, parent, source_env: dict, pass_names: list[str]) -> "Slot":
        """Make a slot workspace in parent and start its zygote (it imports the libraries in the background).

        Inputs:
        - parent: the folder of the students' workspaces.
        - source_env: the environment the kernel launcher will see (nbgrader's, with the kernelspec's merged in).
        - pass_names: names of the kernelspec's variables.
        Returns:
        - the Slot; nobody has used it yet.
        """
        parent = Path(parent).resolve()
        workspace = parent / f"{PREFIX}{os.getpid()}-{secrets.token_hex(3)}"
        workspace.mkdir(parents=True)
        zygote = client.start(workspace, source_env, pass_names)
        return cls(parent, workspace, zygote, _signature(source_env, pass_names))

    def serves(self, parent, source_env: dict, pass_names: list[str]) -> bool:
        """True when this slot lies in parent and its zygote started with these kernel variables."""
        return self.parent == Path(parent).resolve() and self.signature == _signature(source_env, pass_names)

    def claim(self) -> bool:
        """Make the slot ready for the next student: taken as it is when nobody has used it, reset otherwise.
        Returns False when the zygote did not confirm the reset (stop the slot and start another)."""
        if not self.used:
            self.used = True
            return True
        return self.reset()

    def reset(self, timeout: float | None = None) -> bool:
        """Have the zygote kill every process of its sandbox but itself and empty its /tmp and /dev/shm.
        Returns True when it confirmed in time."""
        return self.zygote.reset(timeout)

    def empty(self) -> None:
        """Empty the workspace for the next student's files, keeping what the zygote has mounted: the
        AUTOGRADED folder and the kernels' runtime folder (both emptied) and the sandbox state (the bytecode
        package, the logs; its kernelspec goes)."""
        for entry in self.workspace.iterdir():
            if entry.name == protocol.AUTOGRADED:
                linux.empty(entry)
            elif entry.name == bwrap.STATE:
                continue
            elif entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        launcher.clear_kernel(self.workspace)

    def report(self) -> dict:
        """The zygote's report since its last reset (`client.Zygote.report`)."""
        return self.zygote.report()

    def stop(self) -> None:
        """Stop the zygote (its kernels die with it) and remove the slot's folders."""
        self.zygote.stop()
        launcher.uninstall_kernel(self.workspace)
        shutil.rmtree(self.workspace, ignore_errors=True)
