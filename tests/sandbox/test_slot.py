"""A grading slot (autograder.sandbox.slot): claimed without a reset when nobody has used it, emptied down to
what its zygote has mounted, replaced when its zygote does not answer. The zygote itself: test_zygote.py."""

import os
import signal
from pathlib import Path

import pytest

from autograder.sandbox import bwrap, launcher, slot
from autograder.sandbox.zygote import client, protocol
from tests.sandbox.kernels import descendants, wait_preloaded

needs_bwrap = pytest.mark.skipif(not bwrap.available(), reason="a slot's zygote runs in bubblewrap")


class StandIn:
    """A zygote stand-in that records what the slot asks of it."""

    def __init__(self, confirms=True):
        self.asked, self.confirms = [], confirms

    def reset(self, timeout=None):
        self.asked.append("reset")
        return self.confirms

    def report(self):
        return {"kernels": 0}

    def stop(self):
        self.asked.append("stop")


def standin_slot(tmp_path, confirms=True):
    """A Slot whose workspace is a folder of tmp_path and whose zygote is a StandIn."""
    ws = tmp_path / f"{slot.PREFIX}1-abc"
    ws.mkdir()
    return slot.Slot(tmp_path.resolve(), ws, StandIn(confirms), "{}")


def test_first_claim_takes_the_slot_as_it_is(tmp_path):
    """Is a slot nobody has used claimed without a reset, and every later claim only after one?"""
    s = standin_slot(tmp_path)
    assert s.claim() and s.zygote.asked == []
    assert s.claim() and s.zygote.asked == ["reset"]


def test_claim_fails_when_the_reset_is_not_confirmed(tmp_path):
    """Does claiming a used slot whose zygote does not confirm the reset say so (the worker then replaces it)?"""
    s = standin_slot(tmp_path, confirms=False)
    s.claim()
    assert not s.claim()


def test_serves_its_parent_and_kernel_variables_only(tmp_path):
    """Does a slot serve only tasks in its own parent folder whose kernel variables are those it started with?"""
    env = {"A3_QUICK": "1", "PATH": "/usr/bin"}
    s = slot.Slot(tmp_path.resolve(), tmp_path / "ws", StandIn(), slot._signature(env, ["A3_QUICK"]))
    assert s.serves(tmp_path, dict(env, PATH="/bin"), ["A3_QUICK"]), "PATH is not a kernel variable"
    assert not s.serves(tmp_path, dict(env, A3_QUICK="0"), ["A3_QUICK"])
    assert not s.serves(tmp_path / "elsewhere", env, ["A3_QUICK"])


def test_empty_keeps_only_what_the_zygote_has_mounted(tmp_path):
    """After empty(), are the previous student's files gone while the folders a running zygote has mounted
    (the autograded folder, the kernels' runtime folder) stay, emptied, with the bytecode package and logs?"""
    s = standin_slot(tmp_path)
    ws = s.workspace
    state, runtime = ws / bwrap.STATE, bwrap.runtime_dir(ws)
    for path in (
        ws / protocol.AUTOGRADED / "alice" / "a3" / "nmt.ipynb",
        ws / "submitted" / "alice" / "a3" / "nmt.ipynb",
        ws / "gradebook.db",
        state / "lib" / "autograder" / "__init__.pyc",
        state / client.LOG,
        state / launcher.KERNELS / launcher.KERNEL_NAME / "kernel.json",
        runtime / "k-1",
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    try:
        s.empty()
        assert sorted(p.name for p in ws.iterdir()) == sorted([protocol.AUTOGRADED, bwrap.STATE])
        assert list((ws / protocol.AUTOGRADED).iterdir()) == [] and list(runtime.iterdir()) == []
        assert (state / "lib" / "autograder" / "__init__.pyc").exists() and (state / client.LOG).exists()
        assert not (state / launcher.KERNELS).exists(), "expected the previous student's kernelspec gone"
    finally:
        launcher.uninstall_kernel(ws)


def test_stop_ends_the_zygote_and_removes_the_folders(tmp_path):
    """Does stop() stop the zygote and remove the slot's workspace and its kernels' runtime folder?"""
    s = standin_slot(tmp_path)
    bwrap.runtime_dir(s.workspace).mkdir(mode=0o700)
    s.stop()
    assert s.zygote.asked == ["stop"]
    assert not s.workspace.exists() and not bwrap.runtime_dir(s.workspace).exists()


def test_leftovers_are_the_slot_workspaces(tmp_path):
    """Does leftovers() list the slot workspaces of a folder and nothing else (students' kept workspaces)?"""
    for name in (f"{slot.PREFIX}11-aa", f"{slot.PREFIX}12-bb", "alice", ".slotted"):
        (tmp_path / name).mkdir()
    assert [p.name for p in slot.leftovers(tmp_path)] == [f"{slot.PREFIX}11-aa", f"{slot.PREFIX}12-bb"]


@needs_bwrap
@pytest.mark.slow
def test_a_started_slot_runs_its_zygote_in_its_own_workspace(tmp_path):
    """Does Slot.start make a slot workspace in the parent with a zygote that preloads, resets on request,
    and is gone with the workspace after stop()?"""
    s = slot.Slot.start(tmp_path, dict(os.environ, A3_QUICK="1"), ["A3_QUICK"])
    try:
        assert s.workspace.parent == tmp_path.resolve() and s.workspace.name.startswith(slot.PREFIX)
        wait_preloaded(s.workspace)
        assert s.claim() and s.reset(), "expected the zygote to confirm a reset"
        assert s.report()["resets"] == 1
    finally:
        s.stop()
    assert s.zygote.proc.poll() is not None and not s.workspace.exists()


@needs_bwrap
def test_unresponsive_zygote_is_replaced(tmp_path, monkeypatch):
    """When a worker's zygote does not confirm a reset (here: stopped), does the next student get a fresh
    slot and zygote instead of waiting on it?"""
    from autograder.grading import worker

    monkeypatch.setattr(client, "RESET_TIMEOUT", 2)
    kernel_env = {"A3_QUICK": "1"}
    first = worker.Task(student="s1", notebooks=[], template="", work=str(tmp_path / ".work" / "s1"))
    second = worker.Task(student="s2", notebooks=[], template="", work=str(tmp_path / ".work" / "s2"))
    try:
        slot1 = worker._claim_slot(first, kernel_env)
        wait_preloaded(slot1.workspace)
        assert worker._claim_slot(second, kernel_env) is slot1, "expected a healthy zygote to be reused"
        (pid,) = [
            p
            for p in descendants(slot1.zygote.proc.pid)  # the zygote itself, not the bwrap processes above it
            if Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[:-1]
            == [part.encode() for part in bwrap.python_module("autograder.sandbox.zygote")]
        ]
        os.kill(pid, signal.SIGSTOP)
        slot2 = worker._claim_slot(first, kernel_env)
        assert slot2 is not slot1 and slot2.workspace != slot1.workspace, "expected a fresh slot and zygote"
        assert slot1.zygote.proc.poll() is not None and not slot1.workspace.exists(), "expected the stopped one gone"
    finally:
        worker.release_slot()


@needs_bwrap
def test_first_student_gets_the_warmed_up_zygote_without_a_reset(tmp_path, monkeypatch):
    """After warm_up, does the first student get the slot it started (no reset asked of a zygote nobody has
    used) and the fork server started, while the next student's claim resets it as before?"""
    from autograder.grading import runner, worker

    asked = []
    real_reset = client.Zygote.reset
    monkeypatch.setattr(client.Zygote, "reset", lambda self, timeout=None: asked.append(self) or real_reset(self))
    monkeypatch.setattr(runner, "start_fork_server", lambda: asked.append("fork server"))

    def task(student):
        return worker.Task(student=student, notebooks=[], template="", work=str(tmp_path / ".work" / student))

    try:
        worker.warm_up(task("-"))
        (warm,) = worker._slots.values()
        assert worker._claim_slot(task("s1"), worker.grading_variables(task("s1"))) is warm
        assert asked == ["fork server"]
        assert worker._claim_slot(task("s2"), worker.grading_variables(task("s2"))) is warm
        assert asked == ["fork server", warm.zygote]
    finally:
        worker.release_slot()
