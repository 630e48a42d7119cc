"""Fan work out over Dask distributed: a local cluster of worker processes, or an existing cluster.

One task is one unit of work (for grading: one student). `run` submits `fn(task)` for every task,
calls `on_result` in the parent as each one finishes (so the caller records results incrementally),
retries a task whose worker process died, and turns a task that keeps killing workers (or keeps
raising) into a recorded failure result instead of crashing the batch. Every task yields exactly one
result. See docs/SCALING.md for clusters on Kubernetes and Slurm.
"""

import collections
import contextlib
import functools
import logging
import os
import queue
import re
import resource
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import CancelledError, Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from tqdm.auto import tqdm

from autograder import cores
from autograder.text import one_line

log = logging.getLogger(__name__)

RETRIES = 1  # extra attempts for a task whose fn raised (Dask `retries=`)
ALLOWED_FAILURES = 2  # worker deaths a task may cause before it is given up (local clusters)


@dataclass
class WorkerStats:
    """What one worker process did in a run: tasks, busy time and peak memory."""

    worker: str  # "host:pid"
    tasks: int = 0
    busy_seconds: float = 0.0
    peak_rss_mb: float = 0.0  # the worker process itself
    children_peak_rss_mb: float = 0.0  # its largest finished child (e.g. a notebook kernel)
    cuda_visible_devices: str | None = None


@dataclass
class RunStats:
    """Measurements of the last `run`: mode, wall time, cluster start-up and per-worker figures."""

    mode: str = ""  # "in-process", "local-cluster" or "scheduler"
    n_workers: int = 0
    n_tasks: int = 0
    seconds: float = 0.0
    startup_seconds: float = 0.0
    failures: int = 0
    then_wait_seconds: float = 0.0  # one worker: how long this process waited for `then` (the pages) to finish
    workers: dict = field(default_factory=dict)  # "host:pid" -> WorkerStats

    def as_dict(self) -> dict:
        """Plain-dict form (for JSON)."""
        names = ("mode", "n_workers", "n_tasks", "seconds", "startup_seconds", "failures", "then_wait_seconds")
        d = {k: getattr(self, k) for k in names}
        d["workers"] = [vars(w) for w in self.workers.values()]
        return d


last_stats = RunStats()  # replaced by every call to `run`; read by `autograder.bench`


def detect_gpus() -> list[str]:
    """CUDA device ids visible to this machine, as strings ([] without CUDA); does not import torch."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = [d.strip() for d in visible.split(",") if d.strip()]
        return [] if not ids or ids[0].startswith("-") else ids
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(i) for i, line in enumerate(l for l in out.splitlines() if l.startswith("GPU "))]


def worker_env(i: int, gpus: list[str]) -> dict[str, str]:
    """Environment of local worker `i`: pinned to one GPU (round robin) when there are GPUs."""
    return {"CUDA_VISIBLE_DEVICES": gpus[i % len(gpus)]} if gpus else {}


@dataclass(frozen=True)
class TaskFailure:
    """The result of a task that did not produce one: the task and a one-line reason. Its type tells it from any
    result fn returns."""

    task: Any
    status: str


def failure(task: Any, reason: object) -> TaskFailure:
    """The result recorded for a task that did not produce one: the task and a one-line reason."""
    return TaskFailure(task=task, status=one_line(str(reason), 300))


def _peak_rss_mb(who):
    """Peak resident memory in MiB of this process (RUSAGE_SELF) or its largest waited-for child."""
    return resource.getrusage(who).ru_maxrss / 1024  # Linux reports KiB


def _timed_call(fn, task):
    """Run fn(task) and return its result with where it ran, how long it took and peak memory."""
    start = time.perf_counter()
    result = fn(task)
    return {
        "result": result,
        "worker": f"{socket.gethostname()}:{os.getpid()}",
        "seconds": time.perf_counter() - start,
        "peak_rss_mb": _peak_rss_mb(resource.RUSAGE_SELF),
        "children_peak_rss_mb": _peak_rss_mb(resource.RUSAGE_CHILDREN),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }


def _describe(exc):
    """One-line reason for a task that ended with `exc` on the cluster."""
    from distributed.scheduler import KilledWorker

    if isinstance(exc, KilledWorker):
        return (
            f"worker process died {exc.allowed_failures + 1} times while running this task "
            "(crash, os._exit or out of memory); gave up"
        )
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"raised {type(exc).__name__}: {first}".rstrip(": ")


def _record(stats, meta):
    """Fold one task's measurements into the per-worker statistics."""
    w = stats.workers.setdefault(meta["worker"], WorkerStats(meta["worker"]))
    w.tasks += 1
    w.busy_seconds += meta["seconds"]
    w.peak_rss_mb = max(w.peak_rss_mb, meta["peak_rss_mb"])
    w.children_peak_rss_mb = max(w.children_peak_rss_mb, meta["children_peak_rss_mb"])
    w.cuda_visible_devices = meta["cuda_visible_devices"]


def run(
    tasks: Iterable[Any],
    fn: Callable[[Any], Any],
    *,
    then: Callable[[Any], Any] | None = None,
    warm_then: Callable[[], Any] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    on_result: Callable[[Any], None] | None = None,
    on_worker_lost: Callable[[str, list], None] | None = None,
    desc: str = "grading",
    retries: int = RETRIES,
    allowed_failures: int = ALLOWED_FAILURES,
    gpus: list[str] | None = None,
    keep_results: bool = True,
) -> list:
    """Run fn(task) for every task, in parallel on Dask, with a progress bar.

    Inputs:
    - tasks: picklable task descriptions (e.g. one per student).
    - fn: picklable function (module level) task -> result dict; it should catch its own errors.
    - then: picklable function (module level) of what fn returned -> the result, for a last stage that needs no
      more than fn's return value (rendering pages): with one worker it runs in a second process while fn runs
      for the next task, on Dask in the worker right after fn. It should catch its own errors.
    - warm_then: picklable function (module level) that pays `then`'s one-time costs (imports, caches); with one
      worker, that second process runs it first, while fn runs for the first task.
    - workers: local worker processes, one thread each (default: all cores); 1 without a scheduler
      runs in this process.
    - scheduler: address of an existing Dask scheduler ("tcp://host:8786"); `workers` is then ignored.
    - on_result: called in this process with each result as soon as its task finishes.
    - on_worker_lost: called in this process with (worker address, [its tasks]) when a Dask worker dies
      while it holds tasks of this run (they run again elsewhere, up to allowed_failures).
    - retries: extra attempts for a task whose fn raised.
    - allowed_failures: worker deaths a task may cause before it is given up (local clusters only;
      an existing cluster uses its scheduler's `distributed.scheduler.allowed-failures`).
    - gpus: CUDA device ids to pin local workers to, round robin (default: detected).
    - keep_results: False when on_result consumes each result: the list then holds None for it (a class's results,
      notebooks and pages included, are not all held in memory at once).
    Returns:
    - results: list with one entry per task, in task order. A task that kept failing gives a TaskFailure (the
      task and a one-line reason).
    """
    global last_stats
    tasks = list(tasks)
    last_stats = stats = RunStats(n_tasks=len(tasks))
    start = time.perf_counter()
    results = [None] * len(tasks)
    done = [False] * len(tasks)
    bar = tqdm(total=len(tasks), desc=desc, unit="task", dynamic_ncols=True)

    def finish(i, result):
        if done[i]:  # never report a task twice
            return
        done[i] = True
        results[i] = result if keep_results else None
        stats.failures += int(isinstance(result, TaskFailure))
        bar.update(1)
        if on_result is not None:
            on_result(result)

    try:
        workers = min(workers or cores.usable(), len(tasks))  # no more workers than tasks
        if tasks and scheduler is None and workers <= 1:
            stats.mode, stats.n_workers = "in-process", 1
            _run_in_process(tasks, fn, then, retries, stats, finish, warm_then)
        elif tasks:
            _run_on_dask(
                tasks,
                fn if then is None else functools.partial(_in_turn, fn, then),
                workers,
                scheduler,
                (retries, allowed_failures),
                gpus,
                stats,
                finish,
                desc,
                on_worker_lost,
            )
    finally:
        bar.close()
        stats.seconds = time.perf_counter() - start
    return results


def run_on_workers(scheduler: str, fn: Callable[[], Any]) -> bool:
    """Call fn() once in every worker process of the Dask cluster at `scheduler`. Returns True when every worker
    did, False when the cluster or a worker could not be reached or fn raised there."""
    from distributed import Client

    try:
        with Client(scheduler, timeout="30s") as client:
            client.run(fn)
    except Exception as exc:  # the run is over: what could not be cleaned stays, and the log says why
        log.warning("could not run %s on the workers of %s: %s", fn, scheduler, exc)
        return False
    return True


def _in_turn(fn, then, task):
    """then(fn(task)): both stages in one call (a Dask task)."""
    return then(fn(task))


def _run_in_process(tasks, fn, then, retries, stats, finish, warm_then=None):
    """Fast path for one worker: call fn here, retrying a task whose fn raised. `then` runs for each task in a
    second process, beside fn for the next tasks (a thread would not do: its pure-Python work would hold the
    interpreter lock that fn's many small waits take back). Results are reported in task order, each as soon as
    its `then` is done and the tasks before it are reported; at most BESIDE_AHEAD tasks wait for their `then`.

    That process starts at once and runs `warm_then` while fn runs for the first task, at a lower priority
    (BESIDE_NICE): whatever it does only runs ahead of what fn's next task needs, so it takes what fn leaves of
    the machine, such as the cores that wait with fn for its first kernels."""

    def settle(i, task, outcome, meta=None):
        if isinstance(outcome, Future):
            start = time.perf_counter()
            try:
                outcome = outcome.result()
            except BrokenProcessPool:  # that process died: `then` runs here instead
                outcome = _then_timed(then, meta)
            except Exception as exc:  # `then` should catch its own errors; this is the safety net
                outcome = exc
            stats.then_wait_seconds += time.perf_counter() - start
        if isinstance(outcome, Exception):
            finish(i, failure(task, _describe(outcome)))
        else:
            _record(stats, outcome)
            finish(i, outcome["result"])

    beside = cores.pool(1) if then is not None and len(tasks) > 1 else None
    if beside is not None:
        with contextlib.suppress(BrokenProcessPool):  # no second process to be had: `then` runs here (_submit)
            beside.submit(_start_beside, warm_then)
    waiting = collections.deque()  # (index, task, outcome or future, fn's measurements), in task order
    try:
        for i, task in enumerate(tasks):
            outcome, meta = _retried(fn, task, retries), None
            if then is not None and not isinstance(outcome, Exception):
                meta = outcome
                outcome = _submit(beside, then, meta) if beside is not None else _then_timed(then, meta)
            waiting.append((i, task, outcome, meta))
            # report what is done; wait only when more than BESIDE_AHEAD tasks are left to `then`
            while waiting and (len(waiting) > BESIDE_AHEAD or _is_done(waiting[0][2])):
                settle(*waiting.popleft())
        while waiting:
            settle(*waiting.popleft())
    finally:
        if beside is not None:
            beside.shutdown(wait=True, cancel_futures=True)


def _is_done(outcome) -> bool:
    """True for an outcome at hand: a result, an exception, or a future that is done."""
    return not isinstance(outcome, Future) or outcome.done()


# Tasks whose `then` may still be running while fn runs for the next ones. One would do when fn takes longer than
# `then` (a student's kernels against their pages); with a fast fn (bench --pipeline's replayed results) each
# `then`'s round trip to the other process, about 20 ms with pages, would otherwise be waited for in turn, and a
# `then` held up (a commit's wait for the disk, the other process's turn on the cores) would hold fn up. With 16
# instead of 4 (500 replayed students, four alternating pairs) the wait for the pages fell from 4.9-9.0 to 3.1-5.2
# ms a student, and recording rose by about 0.6 ms (a commit's wait for the disk covers more pages written
# ahead). Each task waiting holds its graded notebooks, about 1 MB.
BESIDE_AHEAD = 16

BESIDE_NICE = 10  # the niceness of the process that runs `then` beside fn (one worker)


def _start_beside(warm_then):
    """First job of the process beside fn: lower its priority, then run warm_then (a failure there is only a
    slower first `then`)."""
    os.nice(BESIDE_NICE)
    if warm_then is not None:
        with contextlib.suppress(Exception):
            warm_then()


def _submit(pool, then, meta):
    """`then` on meta's result in `pool`, or here when the pool can take no more work."""
    try:
        return pool.submit(_then_timed, then, meta)
    except BrokenProcessPool:
        return _then_timed(then, meta)


def _retried(fn, task, retries):
    """_timed_call(fn, task), tried again while fn raises (`retries` times): its measurements, or the last error."""
    for attempt in range(retries + 1):
        try:
            return _timed_call(fn, task)
        except Exception as exc:  # fn should catch its own errors; this is the safety net
            if attempt == retries:
                return exc


def _then_timed(then, meta):
    """`then` on the result in `meta` (from _timed_call), its time added to the task's."""
    start = time.perf_counter()
    result = then(meta["result"])
    return dict(meta, result=result, seconds=meta["seconds"] + time.perf_counter() - start)


def _local_cluster(workers, allowed_failures, gpus):
    """Start a loopback cluster: one Nanny-managed worker process with one thread per worker."""
    from distributed import Nanny, Scheduler, SpecCluster

    gpus = detect_gpus() if gpus is None else list(gpus)
    scheduler = {
        "cls": Scheduler,
        "options": {
            "host": "127.0.0.1",
            "port": 0,
            "dashboard": False,
            "dashboard_address": "127.0.0.1:0",
            "allowed_failures": allowed_failures,
        },
    }
    specs = {
        f"worker-{i}": {
            "cls": Nanny,
            "options": {"host": "127.0.0.1", "nthreads": 1, "env": worker_env(i, gpus), "silence_logs": logging.ERROR},
        }
        for i in range(workers)
    }
    return SpecCluster(workers=specs, scheduler=scheduler, silence_logs=logging.ERROR, name="a3-grading")


@contextlib.contextmanager
def _ctrl_c_left_to_this_process():
    """While the local cluster starts, SIGINT is ignored, so its worker processes inherit that and Ctrl-C reaches
    only this process (which prints one line): workers never print tracebacks of their own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _watch_workers(client, keys, lost):
    """Put (worker address, [task index]) on `lost` for each worker the scheduler removes unexpectedly (it died)
    while processing any of `keys` ({task key: index}); the scheduler announces it on its "all" topic."""

    def on_event(event):
        _, msg = event
        if isinstance(msg, dict) and msg.get("action") == "remove-worker" and not msg.get("expected"):
            mine = sorted(keys[k] for k in msg.get("processing-tasks") or () if k in keys)
            if mine:
                lost.put((msg.get("worker", "?"), mine))

    client.subscribe_topic("all", on_event)


def _report_lost(lost, tasks, on_worker_lost):
    """Hand the workers lost so far, with their tasks, to on_worker_lost (in this thread)."""
    while True:
        try:
            address, mine = lost.get_nowait()
        except queue.Empty:
            return
        log.warning("Dask worker %s died while running tasks %s: they run again", address, mine)
        if on_worker_lost is not None:
            on_worker_lost(address, [tasks[i] for i in mine])


def _run_on_dask(tasks, fn, workers, scheduler, failures, gpus, stats, finish, desc, on_worker_lost):
    """Submit every task to Dask and collect results as they complete; `failures`: (retries, allowed worker
    deaths)."""
    from distributed import Client, as_completed

    retries, allowed_failures = failures
    t0 = time.perf_counter()
    cluster, index = None, {}
    if scheduler is None:
        stats.mode = "local-cluster"
        with _ctrl_c_left_to_this_process():
            cluster = _local_cluster(workers, allowed_failures, gpus)
            client = Client(cluster)
    else:
        stats.mode = "scheduler"
        try:
            client = Client(scheduler)
        except OSError as exc:
            raise RuntimeError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    try:
        try:
            client.wait_for_workers(1, timeout=300)
        except TimeoutError:
            raise RuntimeError(f"no Dask worker joined {scheduler or 'the local cluster'} within 300 s") from None
        stats.n_workers = len(client.scheduler_info(n_workers=-1)["workers"])
        stats.startup_seconds = time.perf_counter() - t0
        prefix = re.sub(r"[^A-Za-z0-9]+", "-", desc).strip("-") or "task"
        batch = uuid.uuid4().hex[:8]  # keys stay unique on a shared cluster
        keys = {f"{prefix}-{batch}-{i}": i for i in range(len(tasks))}
        lost = queue.SimpleQueue()
        _watch_workers(client, keys, lost)  # before any task runs, so that no death goes unseen
        index = {client.submit(_timed_call, fn, tasks[i], key=key, retries=retries): i for key, i in keys.items()}
        try:
            for future in as_completed(index):
                _report_lost(lost, tasks, on_worker_lost)
                i = index[future]
                if future.status == "finished":
                    meta = future.result()
                    _record(stats, meta)
                    finish(i, meta["result"])
                elif future.status == "error":
                    finish(i, failure(tasks[i], _describe(future.exception())))
                else:  # cancelled or lost with the cluster
                    finish(
                        i,
                        failure(
                            tasks[i], f"not graded: the Dask cluster dropped this task ({future.status}); run again"
                        ),
                    )
                future.release()
            _report_lost(lost, tasks, on_worker_lost)
        except (OSError, TimeoutError, CancelledError) as exc:  # lost the scheduler: record, never drop
            reason = f"not graded: lost the Dask cluster ({type(exc).__name__}: {exc})"
            for future, i in index.items():
                finish(i, failure(tasks[i], reason))
    except BaseException:  # interrupted: take our tasks off the cluster
        for future in index:
            future.cancel()
        raise
    finally:
        # off the "all" topic first: else the scheduler announces this client's own removal to its closed comm
        # and logs a CRITICAL traceback on the way out (after Ctrl-C, on the console)
        with contextlib.suppress(Exception):
            client.unsubscribe_topic("all")
        client.close()
        if cluster is not None:
            cluster.close()
