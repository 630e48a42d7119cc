"""cores.spread: a function over many items, across processes or here, always with the loop's results."""

import functools
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import cores, paths
from tests.slowdown import scaled


def square_and_pid(x):
    """x squared and the process that worked it out."""
    return x * x, os.getpid()


def fails_on_three(x):
    if x == 3:
        raise ValueError(f"no {x}")
    return x


def dies_outside(parent, x):
    """x, but only in process `parent`: any other process dies on it (as one killed for memory would)."""
    if os.getpid() != parent:
        os._exit(9)
    return x


def test_few_items_are_done_here():
    """Are fewer items than `at_least` done in this process, in order?"""
    got = cores.spread(square_and_pid, range(5), at_least=6, processes=2)
    assert [r for r, _ in got] == [0, 1, 4, 9, 16]
    assert {pid for _, pid in got} == {os.getpid()}


def test_many_items_are_done_in_other_processes_in_order():
    """Do enough items go to other processes and come back in the loop's order?"""
    got = cores.spread(square_and_pid, range(40), at_least=10, processes=2)
    assert [r for r, _ in got] == [x * x for x in range(40)]
    assert os.getpid() not in {pid for _, pid in got}


def test_one_process_is_here():
    """Does asking for one process do the work here (no process started for nothing)?"""
    got = cores.spread(square_and_pid, range(40), at_least=1, processes=1)
    assert {pid for _, pid in got} == {os.getpid()}


def test_an_exception_is_raised_as_in_a_loop():
    """Does an item's exception reach the caller, as it would from a plain loop?"""
    with pytest.raises(ValueError, match="no 3"):
        cores.spread(fails_on_three, range(20), at_least=2, processes=2)


def test_a_dying_process_leaves_the_work_to_this_one():
    """When a process dies, is every item still done (here), in order, and is that noted?"""
    notes = []
    got = cores.spread(functools.partial(dies_outside, os.getpid()), range(20), at_least=2, processes=2, notes=notes)
    assert got == list(range(20))
    assert len(notes) == 1 and "2 processes could not share the work (BrokenProcessPool" in notes[0], notes


def test_usable_is_at_least_one():
    """Is there always a core to count on?"""
    assert cores.usable() >= 1


def slow_mark(folder, x):
    """Leave a file named x after a pause; item 0 fails at once."""
    if x == 0:
        raise ValueError("the first item fails")
    time.sleep(0.05)
    (Path(folder) / str(x)).touch()
    return x


def test_an_exception_cancels_the_items_not_yet_started(tmp_path):
    """Does an item's exception (or Ctrl-C) stop the items not yet started, rather than wait for the whole list?"""
    with pytest.raises(ValueError, match="first item"):
        cores.spread(functools.partial(slow_mark, str(tmp_path)), range(400), at_least=2, processes=2)
    assert len(list(tmp_path.iterdir())) < 200


def test_a_helper_ends_when_the_process_that_started_it_is_killed():
    """When the process that started a pool is killed (SIGKILL: it cannot stop its helpers), does its helper end too
    instead of waiting forever for work?"""
    script = (
        "import os, sys, time\n"
        "from autograder import cores\n"
        "if __name__ == '__main__':\n"
        "    helpers = cores.pool(1)\n"
        "    print(helpers.submit(os.getpid).result(), flush=True)\n"
        "    time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=paths.ROOT)
    helper = int(proc.stdout.readline())
    assert Path(f"/proc/{helper}").exists()
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + scaled(10 * cores.PARENT_POLL)
    while _alive(helper) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(helper), f"helper {helper} outlived the process that started it"


def _alive(pid):
    """True while `pid` runs (a zombie, ended but not yet collected, counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False
