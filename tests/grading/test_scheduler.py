"""autograder.grading.scheduler: fan-out over a real Dask cluster on loopback, retries, failures, progress."""

import os
import time
from pathlib import Path

import pytest

from autograder.grading import scheduler

# The `cluster` and `address` fixtures (a dask scheduler and two worker processes) are in conftest.py.


# Task functions run on Dask workers, which import them from this module by name.


def square(task):
    """Square task["n"], taking task.get("sleep", 0) seconds; report where it ran."""
    time.sleep(task.get("sleep", 0))
    return {"task": task["n"], "status": "ok", "value": task["n"] ** 2, "pid": os.getpid(), "finished_at": time.time()}


def die_once(task):
    """Kill the worker process the first time this task runs (marker file), succeed afterwards."""
    marker = Path(task["marker"])
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(1)
    with open(task["attempts"], "a") as f:
        f.write(f"{task['n']}\n")
    return {"task": task["n"], "status": "ok", "pid": os.getpid()}


def always_die(task):
    """Kill the worker process every time (a submission that crashes every grader)."""
    os._exit(1)


def raise_once(task):
    """Raise the first time this task runs (marker file), succeed afterwards."""
    marker = Path(task["marker"])
    if not marker.exists():
        marker.write_text("raised")
        raise RuntimeError("transient failure")
    return {"task": task["n"], "status": "ok"}


def always_raise(task):
    """Raise every time, with a two-line message."""
    raise ValueError("bad notebook\nsecond line")


def mark_then(result):
    """The last stage: note the process it ran in."""
    if result["task"] == result.get("raise_then"):
        raise RuntimeError("page failed")
    return dict(result, then_pid=os.getpid())


def square_then(task):
    """square, and what mark_then needs to raise for task["raise_then"]."""
    return dict(square(task), raise_then=task.get("raise_then"), marker=task.get("marker"))


def slow_then(result):
    """The last stage, taking half a second."""
    time.sleep(0.5)
    return dict(result, then_pid=os.getpid())


def die_in_first_then(result):
    """Kill the process the last stage runs in the first time (marker file), succeed afterwards."""
    marker = Path(result["marker"])
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(1)
    return dict(result, then_pid=os.getpid())


WARMED = []  # the processes warm_here ran in, as the process itself saw it


def warm_here():
    """A warm-up: note the process it ran in."""
    WARMED.append(os.getpid())


def warm_and_raise():
    """A warm-up that fails."""
    raise RuntimeError("no warm-up")


def mark_warmed_then(result):
    """The last stage: note its process, the warm-ups that process had run before, and its niceness."""
    return dict(result, then_pid=os.getpid(), warmed=list(WARMED), nice=os.nice(0))


def visible_devices(task):
    """The CUDA devices this worker process may use."""
    return {"task": task, "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"), "pid": os.getpid()}


def test_existing_scheduler_runs_every_task_on_both_workers(address):
    """Does run(scheduler=ADDRESS) compute every task, in task order, on two worker processes?"""
    tasks = [{"n": n, "sleep": 0.3} for n in range(6)]
    results = scheduler.run(tasks, square, scheduler=address)
    assert [r["value"] for r in results] == [n * n for n in range(6)]
    pids = {r["pid"] for r in results}
    assert os.getpid() not in pids, "tasks ran in the parent process, not on the workers"
    assert len(pids) == 2, f"expected both worker processes to get tasks, saw pids {pids}"
    assert scheduler.last_stats.mode == "scheduler" and scheduler.last_stats.n_workers == 2


def test_on_result_sees_each_result_once_as_it_finishes(address):
    """Is on_result called once per task, in completion order, while slower tasks still run?"""
    tasks = [{"n": 0, "sleep": 3.0}] + [{"n": n, "sleep": 0.05} for n in range(1, 5)]
    seen = []
    results = scheduler.run(tasks, square, scheduler=address, on_result=lambda r: seen.append((r["task"], time.time())))
    order = [n for n, _ in seen]
    assert sorted(order) == [0, 1, 2, 3, 4], f"expected each task reported once, saw {order}"
    assert order[-1] == 0, f"expected the slow task reported last, saw order {order}"
    assert seen[0][1] < results[0]["finished_at"], "first result was reported only after the slow task finished"
    assert [r["task"] for r in results] == [0, 1, 2, 3, 4]


def test_task_whose_worker_is_killed_is_retried_and_reported_once(address, tmp_path):
    """Does a task whose worker process dies mid-task run again and appear exactly once?"""
    attempts = tmp_path / "attempts.txt"
    tasks = [
        {"n": n, "marker": str(tmp_path / ("die" if n == 1 else f"ok{n}")), "attempts": str(attempts)} for n in range(3)
    ]
    for n in (0, 2):
        Path(tasks[n]["marker"]).write_text("do not die")
    reported = []
    results = scheduler.run(tasks, die_once, scheduler=address, on_result=reported.append)
    assert [r["status"] for r in results] == ["ok", "ok", "ok"]
    assert sorted(r["task"] for r in reported) == [0, 1, 2], f"expected each task once, got {reported}"
    assert sorted(attempts.read_text().split()) == ["0", "1", "2"], "a completed task was run twice"
    killed_pid = int(Path(tasks[1]["marker"]).read_text())
    assert results[1]["pid"] != killed_pid, "the retried task claims to have run on the worker that died"


def test_a_worker_that_dies_is_named_with_the_task_it_held(address, tmp_path):
    """When a worker process dies mid-task, is on_worker_lost told once which worker it was and which task runs
    again, while a task that did not lose its worker is not named?"""
    tasks = [{"n": n, "marker": str(tmp_path / f"m{n}"), "attempts": str(tmp_path / "attempts")} for n in range(2)]
    Path(tasks[0]["marker"]).write_text("do not die")
    lost = []
    results = scheduler.run(tasks, die_once, scheduler=address, on_worker_lost=lambda w, t: lost.append((w, t)))
    assert [r["status"] for r in results] == ["ok", "ok"]
    assert [held for _, held in lost] == [[tasks[1]]], lost
    assert lost[0][0].startswith("tcp://127.0.0.1:"), lost


def test_task_that_keeps_killing_workers_becomes_a_recorded_failure(address):
    """Does a task that kills every worker end as a one-line failure while the rest of the batch is graded?"""
    results = scheduler.run([{"n": 0}], always_die, scheduler=address)
    assert results[0].task == {"n": 0}
    assert "worker process died 2 times" in results[0].status, results[0].status
    assert "\n" not in results[0].status
    again = scheduler.run([{"n": n} for n in range(3)], square, scheduler=address)
    assert [r["value"] for r in again] == [0, 1, 4], "the cluster did not recover after the killed workers"


def test_raising_task_is_retried_on_the_cluster(address, tmp_path):
    """Does a task whose fn raises once get a second attempt (Dask retries) and succeed?"""
    results = scheduler.run([{"n": 7, "marker": str(tmp_path / "m")}], raise_once, scheduler=address)
    assert results == [{"task": 7, "status": "ok"}]


def test_task_that_always_raises_is_recorded_with_a_one_line_reason(address):
    """Does a task that always raises give {'task', 'status'} with the exception in one line?"""
    results = scheduler.run([{"n": 1}, {"n": 2}], always_raise, scheduler=address)
    assert results[0] == scheduler.TaskFailure({"n": 1}, "raised ValueError: bad notebook")
    assert scheduler.last_stats.failures == 2


def test_local_cluster_pins_each_worker_to_one_gpu():
    """Does run(workers=2, gpus=[...]) start two worker processes, each seeing only its own GPU?"""
    results = scheduler.run(list(range(6)), visible_devices, workers=2, gpus=["0", "1"])
    by_pid = {}
    for r in results:
        by_pid.setdefault(r["pid"], set()).add(r["cuda"])
    assert os.getpid() not in by_pid and len(by_pid) == 2, f"expected 2 worker processes, saw {by_pid}"
    assert sorted(d for devices in by_pid.values() for d in devices) == ["0", "1"], by_pid
    assert scheduler.last_stats.mode == "local-cluster"


def test_local_cluster_without_gpus_sets_no_device():
    """Does a CPU-only local cluster leave CUDA_VISIBLE_DEVICES alone on its workers?"""
    parent = os.environ.get("CUDA_VISIBLE_DEVICES")
    results = scheduler.run([0, 1], visible_devices, workers=2, gpus=[])
    assert {r["cuda"] for r in results} == {parent}


def test_stats_report_peak_memory_per_worker():
    """Does last_stats report, per worker process, its tasks and a positive peak RSS?"""
    scheduler.run([{"n": n} for n in range(3)], square, workers=1)
    stats = scheduler.last_stats.as_dict()
    assert stats["mode"] == "in-process" and stats["n_tasks"] == 3
    (worker,) = stats["workers"]
    assert worker["tasks"] == 3 and worker["peak_rss_mb"] > 10, worker


def test_one_worker_runs_in_process_and_records_failures():
    """Does workers=1 run here, keep task order and turn an exception into a failure result?"""
    results = scheduler.run([{"n": 2}, {"n": 3}], square, workers=1)
    assert [(r["value"], r["pid"]) for r in results] == [(4, os.getpid()), (9, os.getpid())]
    assert scheduler.run(["x"], always_raise, workers=1) == [
        scheduler.TaskFailure("x", "raised ValueError: bad notebook")
    ]


def test_one_worker_runs_then_in_a_second_process_and_keeps_task_order():
    """With one worker, does `then` run for every task in one other process (beside fn for the next task), each
    result coming back in task order?"""
    seen = []
    results = scheduler.run([{"n": n} for n in range(4)], square_then, then=mark_then, workers=1, on_result=seen.append)
    assert [r["value"] for r in results] == [0, 1, 4, 9] and seen == results
    assert {r["pid"] for r in results} == {os.getpid()}
    (then_pid,) = {r["then_pid"] for r in results}
    assert then_pid != os.getpid()


def test_with_one_worker_a_slow_then_lets_fn_run_ahead_and_results_still_come_in_order():
    """With one worker and a `then` slower than fn, does fn run for BESIDE_AHEAD more tasks before the first
    result is waited for (instead of waiting for each `then` in turn), every result still reported in task order?"""
    ran, seen = [], []  # fn runs here: `ran` counts its calls when each result is reported

    def fn(task):
        ran.append(task["n"])
        return square_then(task)

    def on_result(result):
        seen.append((result["value"], len(ran)))

    tasks = [{"n": n} for n in range(scheduler.BESIDE_AHEAD + 2)]
    scheduler.run(tasks, fn, then=slow_then, workers=1, on_result=on_result)
    assert [value for value, _ in seen] == [n * n for n in range(len(tasks))]
    assert seen[0][1] == scheduler.BESIDE_AHEAD + 1


def test_with_one_worker_the_process_beside_fn_warms_up_first_at_a_lower_priority():
    """With one worker, does the process that runs `then` run warm_then once, before the first task's `then`, at a
    lower priority than this process, so that what it runs ahead never slows fn?"""
    tasks = [{"n": n} for n in range(3)]
    results = scheduler.run(tasks, square_then, then=mark_warmed_then, warm_then=warm_here, workers=1)
    (then_pid,) = {r["then_pid"] for r in results}
    assert [r["warmed"] for r in results] == [[then_pid]] * 3 and then_pid != os.getpid()
    assert {r["nice"] for r in results} == {min(19, os.nice(0) + scheduler.BESIDE_NICE)}
    assert WARMED == []  # none in this process


def test_a_warm_up_that_raises_changes_no_result():
    """Does a warm_then that raises leave every task's `then` to run, with the results it gives without one?"""
    tasks = [{"n": n} for n in range(3)]
    results = scheduler.run(tasks, square_then, then=mark_warmed_then, warm_then=warm_and_raise, workers=1)
    assert [r["value"] for r in results] == [0, 1, 4] and all(r["warmed"] == [] for r in results)


def test_a_then_that_raises_fails_only_its_task():
    """Does a `then` that raises turn its own task, and no other, into a failure result?"""
    results = scheduler.run([{"n": n, "raise_then": 1} for n in range(3)], square_then, then=mark_then, workers=1)
    assert isinstance(results[1], scheduler.TaskFailure) and "page failed" in results[1].status
    assert [r["value"] for i, r in enumerate(results) if i != 1] == [0, 4]


def test_when_the_then_process_dies_then_runs_here(tmp_path):
    """When the process `then` runs in dies, does every task still get its result, `then` running in this
    process instead?"""
    marker = tmp_path / "died"
    tasks = [{"n": n, "marker": str(marker)} for n in range(3)]
    results = scheduler.run(tasks, square_then, then=die_in_first_then, workers=1)
    assert [r["value"] for r in results] == [0, 1, 4]
    assert marker.read_text() != str(os.getpid()) and results[0]["then_pid"] == os.getpid()


def test_then_runs_after_fn_on_the_cluster(address):
    """On Dask, does `then` run in the worker that ran fn, right after it?"""
    results = scheduler.run([{"n": n} for n in range(3)], square_then, then=mark_then, scheduler=address)
    assert [r["value"] for r in results] == [0, 1, 4] and all(r["then_pid"] == r["pid"] for r in results)


def test_progress_bar_counts_tasks(capsys):
    """Does the tqdm bar carry the description and reach n/n?"""
    scheduler.run([{"n": n} for n in range(3)], square, workers=1, desc="grading students")
    err = capsys.readouterr().err
    assert "grading students" in err and "3/3" in err, err[-300:]


def test_no_tasks_starts_nothing():
    """Does an empty batch return [] without starting a cluster?"""
    assert scheduler.run([], square, workers=4) == []
    assert scheduler.last_stats.n_workers == 0


@pytest.mark.parametrize(
    "visible, expected",
    [
        ("0,1", ["0", "1"]),
        ("2", ["2"]),
        ("", []),
        ("-1", []),
    ],
)
def test_detect_gpus_honours_cuda_visible_devices(monkeypatch, visible, expected):
    """Does detect_gpus read CUDA_VISIBLE_DEVICES ('' and '-1' mean no GPU)?"""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert scheduler.detect_gpus() == expected


def test_workers_are_pinned_round_robin():
    """Do more workers than GPUs share the GPUs round robin?"""
    assert [scheduler.worker_env(i, ["0", "1"]) for i in range(3)] == [
        {"CUDA_VISIBLE_DEVICES": "0"},
        {"CUDA_VISIBLE_DEVICES": "1"},
        {"CUDA_VISIBLE_DEVICES": "0"},
    ]
    assert scheduler.worker_env(0, []) == {}


def test_unreachable_scheduler_is_a_clear_error():
    """Does an address with no scheduler raise one clear error instead of hanging?"""
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        with pytest.raises(RuntimeError, match="cannot reach the Dask scheduler"):
            scheduler.run([1], square, scheduler="tcp://127.0.0.1:9")


def test_results_consumed_as_they_come_are_not_kept():
    """With keep_results=False, does every result reach on_result while the returned list holds None for each
    (a class's notebooks and pages are not all held in memory at once)?"""
    seen = []
    results = scheduler.run([{"n": i} for i in range(3)], square, workers=1, on_result=seen.append, keep_results=False)
    assert results == [None, None, None]
    assert sorted(r["value"] for r in seen) == [0, 1, 4]


def test_a_single_task_gets_then_here():
    """With one worker and one task, does `then` run on it here (no process is started for one task)?"""
    results = scheduler.run([{"n": 3}], square_then, then=mark_then, workers=1)
    assert [(r["value"], r["then_pid"]) for r in results] == [(9, os.getpid())]
