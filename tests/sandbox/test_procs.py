"""The bound on a student's processes (autograder.sandbox.procs): the hard bound the host sets, in force before
any fork bomb is graded (tests/grading/test_containment.py grades those)."""

import subprocess
import sys

import pytest

from autograder.sandbox import procs
from tests.slowdown import scaled

FORKS = """
import os, time
made, kids = 0, []
for _ in range(400):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    made += 1
    kids.append(pid)
for pid in kids:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
print(made)
"""


@pytest.mark.skipif(procs.cgroup_base() is None, reason="no writable pids cgroup on this machine")
def test_cgroup_stops_forks_at_its_bound():
    """Does a process started in a sandbox's pids cgroup fail to fork once the cgroup holds its bound?"""
    cgroup = procs.new_cgroup(16)
    try:
        done = subprocess.run(
            procs.in_cgroup([sys.executable, "-c", FORKS], cgroup), capture_output=True, text=True, timeout=scaled(120)
        )
    finally:
        procs.remove_cgroup(cgroup)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == procs.hard_bound(16) - 1  # the forking process itself holds one pid
    assert not cgroup.exists()


def test_bound_says_how_processes_are_bounded_here():
    """Does the log line on the process bound name the mechanism this machine has (or say it has none)?"""
    line = procs.bound()
    if procs.cgroup_base() is not None:
        assert line.startswith("processes bounded by a pids cgroup per student below ")
    else:
        assert line.startswith("no writable pids cgroup here")


def test_rlimit_is_not_used_outside_a_user_namespace():
    """Is RLIMIT_NPROC left alone where it would count every process of the user (no own user namespace)?"""
    assert procs.rlimit_applies() is False
