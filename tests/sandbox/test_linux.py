"""The Linux calls the sandbox makes by hand (autograder.sandbox.linux): each one seen to take effect."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.sandbox import linux
from tests.slowdown import scaled

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and mountinfo are Linux's")

NOT_DUMPABLE = (
    "from autograder.sandbox import linux\n"
    "before = linux.prctl(linux.PR_GET_DUMPABLE, 0)\n"
    "linux.set_dumpable(False)\n"
    "print(before, linux.prctl(linux.PR_GET_DUMPABLE, 0))"
)
ORPHAN = (
    "import os, subprocess, sys, time\n"
    "code = 'from autograder.sandbox import linux\\nimport time\\nlinux.die_with_parent()\\nprint(1, flush=True)\\n'"
    " + 'time.sleep(60)'\n"
    "child = subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.PIPE)\n"
    "child.stdout.readline()\n"
    "print(child.pid, flush=True)\n"
    "os._exit(0)\n"
)


def test_set_dumpable_takes_effect():
    """Does set_dumpable(False) make the process not dumpable (PR_GET_DUMPABLE from 1 to 0)?"""
    done = subprocess.run([sys.executable, "-c", NOT_DUMPABLE], capture_output=True, text=True, timeout=scaled(60))
    assert done.stdout.split() == ["1", "0"], done.stderr


def test_die_with_parent_ends_the_child():
    """When its parent exits, does a process that called die_with_parent() end too?"""
    done = subprocess.run([sys.executable, "-c", ORPHAN], capture_output=True, text=True, timeout=scaled(60))
    pid = int(done.stdout.strip())
    deadline = time.monotonic() + scaled(10)
    while Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid), "expected the child killed with its parent"


def _state(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_mount_points_include_the_root():
    """Does mount_points() list the mounts this process sees, "/" and "/proc" among them?"""
    points = linux.mount_points()
    assert "/" in points and "/proc" in points


def test_empty_spares_kept_paths_and_their_folders(tmp_path):
    """Does empty() remove everything in a folder but the kept paths, the folders that lead to them, and the
    folder itself?"""
    for rel in ("a/b/kept/x", "a/b/gone", "a/c/y", "z", "link"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel == "link":
            path.symlink_to(tmp_path / "a")
        else:
            path.write_text("x")
    linux.empty(tmp_path, keep={str(tmp_path / "a" / "b" / "kept")})
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert left == ["a", "a/b", "a/b/kept", "a/b/kept/x"]
