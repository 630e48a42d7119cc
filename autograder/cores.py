"""The machine's cores: how many this process may use, `pool`, the one way the kit starts helper processes, and
`spread`, which maps a function over many items across them (stdlib only). Ingest and the similarity report spread
a large class; grading has its own scheduler, whose one-worker path renders pages in a `pool` of one."""

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool


def usable() -> int:
    """Number of CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


PARENT_POLL = 1.0  # seconds between a helper's looks at whether the process that started it is still there


def pool(processes: int) -> ProcessPoolExecutor:
    """`processes` helper processes, started clean (spawn: nothing of this process's threads or state is copied),
    deaf to Ctrl-C, which stops this process, and gone within PARENT_POLL seconds of this process (killed, it has no
    chance to stop them)."""
    return ProcessPoolExecutor(processes, multiprocessing.get_context("spawn"), _helper_start)


def _helper_start() -> None:
    """A helper's first act: Ctrl-C ignored, and a thread that ends the helper once its parent has gone."""
    # Not prctl's death signal (sandbox.linux.die_with_parent, a layer above this module): it fires when the thread
    # that started the helper ends, and a pool may be started from any thread of a process that lives on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_without, args=(os.getppid(),), name="parent-watch", daemon=True).start()


def _exit_without(parent: int) -> None:
    """End this process as soon as `parent` is no longer its parent (it died, and this one was handed on)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL)
    os._exit(1)


def spread(
    fn: Callable, items: Iterable, at_least: int, processes: int | None = None, notes: list[str] | None = None
) -> list:
    """[fn(item) for item in items], in order: across `processes` new processes (default: one per usable core) when
    there are at least `at_least` items and more than one process, else here.

    fn must be a module-level function (or a partial of one): each process (`pool`) imports it. An exception
    (Ctrl-C's too) cancels the items not yet started. When the processes cannot start or one dies, every
    item is done here instead (`notes` receives a line saying so), so fn must be safe to run twice on an item. An
    exception fn raises is raised here, as it would be in a loop.
    """
    items = list(items)
    processes = min(processes or usable(), len(items))
    if processes < 2 or len(items) < at_least:
        return [fn(item) for item in items]
    chunk = max(1, len(items) // (processes * 32))  # many small hand-offs: none holds up the rest or much memory
    try:
        with pool(processes) as helpers:
            return list(helpers.map(fn, items, chunksize=chunk))  # map cancels what has not started when one raises
    except (BrokenProcessPool, OSError) as exc:  # no processes to be had (a locked-down machine) or one died
        if notes is not None:
            why = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
            notes.append(f"{processes} processes could not share the work ({why}); it was done in one")
        return [fn(item) for item in items]
