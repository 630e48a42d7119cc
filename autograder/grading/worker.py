"""Grade ONE student: all their notebooks, in an isolated workspace with its own gradebook shard.

The workspace is a tiny nbgrader course (`<work>/`): a copy of the template gradebook (the shard),
`source/a3/` with the release's data (nbgrader copies it next to each notebook), and
`submitted/<student>/a3/<nb>.ipynb`. One `nbgrader autograde` process (autograder.grading.runner) grades
all of the student's notebooks, each in a fresh sandbox kernel under its own random check key (a notebook
that run did not finish is graded again on its own). The kernels are forked
from the zygote of the worker's slot, which has the libraries imported (autograder.sandbox.slot). A test cell's points
are kept only when its output carries the matching pass token. The result (scores, timings, log lines,
the shard, the autograded notebooks and feedback HTML) goes back to the caller, which writes OUT.
Kernels draw no figures (autograder.sandbox.nofigures): quick-mode plots mean nothing and cost seconds.
"""

import atexit
import functools
import logging
import os
import re
import secrets
import shutil
import threading
import time
import traceback
from collections.abc import Iterable, Mapping
from copy import deepcopy
from dataclasses import dataclass, field
from multiprocessing.reduction import ForkingPickler
from pathlib import Path

import nbformat

from autograder import contract, envvars, files, gradebook, paths, term, tokens
from autograder.content import build
from autograder.grading import answers, runner
from autograder.grading.ingest import Submission
from autograder.records import CellResult, NotebookResult, Status, StudentResult, is_blank_answer, is_settled
from autograder.reports import feedback, sanitize
from autograder.sandbox import launcher, procs, slot
from autograder.sandbox.slot import Slot
from autograder.text import one_line

log = logging.getLogger(__name__)

CELL_TIMEOUT = 60  # seconds per cell (nbgrader's 30 s default is too short for training cells)
NOTEBOOK_TIMEOUT = 600  # seconds for one notebook's whole nbgrader run; then it is killed


@dataclass
class Task:
    """One unit of grading work: a student and their (ingested) notebooks."""

    student: str
    notebooks: list[Submission]  # the student's ingested notebooks
    template: str  # course folder from build.template(): gradebook.db and release/a3
    work: str  # workspace folder for this student (emptied first)
    cell_timeout: int = CELL_TIMEOUT
    notebook_timeout: int = NOTEBOOK_TIMEOUT
    threads: int | None = None  # OMP/torch threads for the kernel (None: library default)
    keep_work: bool = False  # keep the workspace after a clean run
    env: dict = field(default_factory=dict)  # extra environment for the kernel
    submitted_as: str = ""  # the name the student submitted under, which their pages show ('': the id)
    late: term.Late | None = None  # the student's lateness, for the late note on their pages (None: no course file)
    model_answers: dict = field(default_factory=dict)  # {notebook: {grade id: markdown}} shown on the pages
    pages: str = ""  # folder render_pages writes the student's pages into (emptied first), for record to move


SHARD = "gradebook.db"  # in a workspace: the gradebook shard nbgrader grades into (a copy of the template's)


def course_layout(release: Path | str) -> dict[str, dict[str, dict[str, float]]]:
    """Graded cells of each release notebook (read once a process while the folder's notebooks stay as they are).

    Inputs:
    - release: folder with the normalised release notebooks.
    Returns:
    - {notebook: {"tests": {test_grade_id: points}, "manual": {grade_id: points}}}, notebooks sorted
      as in contract.NOTEBOOKS first, then by name (a copy: the caller may change it).
    """
    return deepcopy(_course_layout(Path(release), files.stamp(release)))


@functools.lru_cache(maxsize=8)
def _course_layout(release: Path, stamp: tuple) -> dict[str, dict[str, dict[str, float]]]:
    """course_layout as the folder's notebooks were when they had `stamp` (files.stamp)."""
    order = {name: i for i, name in enumerate(contract.NOTEBOOKS)}
    layout = {}
    for path in sorted(release.glob("*.ipynb"), key=lambda p: (order.get(p.stem, 99), p.stem)):
        nb = nbformat.read(path, as_version=4)
        tests, manual = {}, {}
        for cell in nb.cells:
            meta = contract.nbgrader_meta(cell)
            if contract.is_test_cell(cell):
                tests[meta["grade_id"]] = float(meta.get("points", 0))
            elif contract.is_graded_cell(cell):  # a written answer (or other manually graded cell)
                manual[meta["grade_id"]] = float(meta.get("points", 0))
        layout[path.stem] = {"tests": tests, "manual": manual}
    return layout


def course_check_modules(template: Path | str) -> list[str]:
    """Modules the course's test cells import from (`from autograder.checks.nmt import ...`), read from the
    template's source notebooks (once a process while they stay as they are): each grading kernel imports them
    before any student code, then seals the check runtime (autograder.sandbox.kernel)."""
    source = Path(template) / "course" / "source"
    return list(_check_modules(source, files.stamp(source, "**/*.ipynb")))


@functools.lru_cache(maxsize=8)
def _check_modules(source: Path, stamp: tuple) -> tuple[str, ...]:
    """course_check_modules of the source notebooks under `source` as they were when they had `stamp`."""
    found = set()
    for path in sorted(source.rglob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if contract.is_test_cell(cell):
                found.update(re.findall(r"^\s*from\s+([A-Za-z_][\w.]*)\s+import\b", cell.source, re.M))
    return tuple(sorted(found))


def _stdout_text(cell):
    return "".join(
        o.get("text", "")
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stdout"
    )


def _error_line(cell):
    """One line describing why a test cell failed, from its outputs ('' when it did not fail): the limit that
    stopped it when one did."""
    limits_hit = [o.get("evalue", "") for o in cell.get("outputs", []) if o.get("ename") == runner.LIMIT_ERROR]
    if limits_hit:
        return "; ".join(limits_hit)
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            if out.get("ename") == "CellTimeoutError":
                return "the cell ran out of time"
            text = f"{out.get('ename', 'Error')}: {out.get('evalue', '')}".strip().rstrip(":")
            return one_line(text, 400)
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stderr":
            return "the cell wrote to stderr (a test cell must not): " + one_line(out.get("text", ""), 200)
    return ""


def verify_cell(
    cell: Mapping | None, grade_id: str, key: bytes, nbgrader_score: float | None, points: float
) -> tuple[float | None, str]:
    """Decide a test cell's score from nbgrader's score and the pass token in its output.

    Inputs:
    - cell: the autograded test cell (or None when the submission lacks it).
    - grade_id: the spec's id (without `test_`).
    - key: bytes, the check key this notebook ran under.
    - nbgrader_score: float or None, what nbgrader awarded.
    - points: the cell's maximum.
    Returns:
    - (score or None for Status.NEEDS_MANUAL, one-line note for the student and the log).
    """
    if cell is None:
        return 0.0, "test cell missing from the graded notebook"
    text = _stdout_text(cell)
    reason = tokens.ungradable_reason(text, grade_id, key)
    if reason is not None:
        return None, Status.NEEDS_MANUAL.detail(reason or "the check could not decide")
    error = _error_line(cell)
    if error:
        return 0.0, error
    if not tokens.is_passed(text, grade_id, key):
        return 0.0, "the hidden check did not run to completion (no valid pass token in the cell's output)"
    if not nbgrader_score:
        return 0.0, "nbgrader gave this cell no points"
    return min(float(nbgrader_score), points), "passed"


def _prepare_workspace(task, ws, claimed=None):
    """Create the workspace course for `task` in `ws` (the claimed slot's workspace is emptied but for what
    its zygote has mounted); returns {notebook: submitted path} to grade."""
    if claimed is not None:
        claimed.empty()
    elif ws.exists():
        shutil.rmtree(ws)
    template = Path(task.template)
    (ws / "source").mkdir(parents=True)
    shutil.copytree(
        template / "release",
        ws / "source" / contract.ASSIGNMENT,
        ignore=shutil.ignore_patterns("*.ipynb", "GENERATED.md"),
    )
    shutil.copy2(template / "gradebook.db", ws / SHARD)
    submitted = ws / "submitted" / task.student / contract.ASSIGNMENT
    submitted.mkdir(parents=True)
    todo = {}
    for sub in task.notebooks:
        if sub.ready:
            dest = submitted / f"{sub.notebook}.ipynb"
            shutil.copyfile(sub.path, dest)
            todo[sub.notebook] = dest
    return todo


_said = set()  # what this process has logged once already


def _say_once(log_lines, line):
    """Log `line` once per grading process."""
    if line not in _said:
        _said.add(line)
        log_lines.append(line)


_slots: dict[int, Slot] = {}  # {thread: its slot}, reused from student to student


def _python_path() -> str:
    """The kit's folder, then this process's PYTHONPATH without its empty or relative entries: those name the
    working folder, which for a kernel's launcher is a notebook's folder."""
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if os.path.isabs(p)]
    return os.pathsep.join([str(paths.ROOT), *inherited])


def grading_variables(task: Task) -> dict[str, str]:
    """The grading kernels' environment for `task`: quick mode, offline hubs, no figures, the course's check
    modules, the task's threads and extra variables."""
    env = {
        envvars.QUICK: "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "MPLBACKEND": "module://autograder.sandbox.nofigures",
        "PYTHONPATH": _python_path(),
        envvars.CHECK_MODULES: ",".join(course_check_modules(task.template)),
        **task.env,
    }
    if task.threads:
        env.update(OMP_NUM_THREADS=str(task.threads), MKL_NUM_THREADS=str(task.threads))
    return env


def warm_up(task: Task) -> None:
    """Start, in this thread, what every student's grading waits for the first time: the slot's zygote (it
    imports the libraries, about 5 s) and nbgrader's fork server (it imports nbgrader, about 3 s). Both start
    in the background, so a caller can ingest meanwhile; the first task like `task` (same template, threads
    and environment) then finds them started. Without zygotes only the fork server starts."""
    if slot.available():
        _slot_for(task, grading_variables(task))
    runner.start_fork_server()


def _slot_for(task, kernel_env):
    """This thread's slot for the task's kernel environment, next to task.work: the one it had when that
    still serves, else a fresh one (the old one stopped)."""
    parent = Path(task.work).parent.resolve()
    source_env = dict(build.nbgrader_env(parent), NBGRADER_EXECUTION="autograde")
    source_env.update(kernel_env)
    thread = threading.get_ident()  # a worker with several threads grades several students at once
    old = _slots.get(thread)
    if old and old.serves(parent, source_env, list(kernel_env)):
        return old
    release_slot(thread)
    _slots[thread] = Slot.start(parent, source_env, list(kernel_env))
    return _slots[thread]


def _claim_slot(task, kernel_env) -> Slot:
    """This thread's slot, ready for the task's student (see `Slot.claim`): one that warm_up started and no
    student has used is taken as it is, any other is reset, and one that does not confirm its reset is
    replaced by a fresh slot."""
    claimed = _slot_for(task, kernel_env)
    if not claimed.claim():
        release_slot(threading.get_ident())
        claimed = _slot_for(task, kernel_env)
        claimed.claim()
    return claimed


def release_slot(thread: int | None = None) -> None:
    """Stop a thread's slot (every thread's by default): at exit, at the end of an in-process run, or when a
    fresh one replaces it."""
    for key in [thread] if thread is not None else list(_slots):
        old = _slots.pop(key, None)
        if old:
            old.stop()


atexit.register(release_slot)


def release_slots(parent: Path | str) -> int:
    """Stop this process's slots that lie in `parent` (a run's OUT/.work: a cluster's worker keeps its slot from
    student to student, and gives it back when the run is over). Returns how many it stopped."""
    parent = Path(parent).resolve()
    mine = [thread for thread, held in list(_slots.items()) if held.parent == parent]
    for thread in mine:
        release_slot(thread)
    return len(mine)


def _verify_notebook(task, ws, notebook, key, layout, log_lines, run_id):
    """Scores of one autograded notebook after token verification (the shard is updated to match).

    Returns:
    - (NotebookResult, autograded notebook), or (None, None) when the run `run_id` did not finish executing
      it (nbgrader writes a copy of the submission there before executing it).
    """
    graded = ws / "autograded" / task.student / contract.ASSIGNMENT / f"{notebook}.ipynb"
    if not graded.exists():
        return None, None
    nb = nbformat.read(graded, as_version=4)
    if nb.metadata.get("a3_run") != run_id:
        return None, None
    tests = layout[notebook]["tests"]
    by_id = {contract.nbgrader_meta(c).get("grade_id"): c for c in nb.cells}
    position = {gid: i for i, gid in enumerate(contract.nbgrader_meta(c).get("grade_id") for c in nb.cells)}
    incidents = _incidents(nb)
    for index, cause in incidents:
        log_lines.append(f"LIMIT {task.student}/{notebook}: {_cell_name(nb, index)}: {cause}")
    shard = ws / SHARD
    grades = gradebook.shard_grades(shard, task.student, notebook)
    scores, cells = {}, []
    for test_id, points in tests.items():
        gid = contract.check_id(test_id)
        grade = grades.get(test_id)
        score, note = verify_cell(by_id.get(test_id), gid, key.encode(), grade and grade.auto_score, points)
        if score == 0 and test_id in position:
            note = _with_earlier_cause(nb, incidents, position[test_id], note)
        if grade is not None:
            scores[grade.id] = score
        if score is None:
            log_lines.append(f"MANUAL {task.student}/{notebook}/{gid}: {note}")
        elif note != "passed":
            log_lines.append(f"CHECK {task.student}/{notebook}/{gid}: 0/{points:g}: {note}")
        cells.append(CellResult(gid, score, points, note))
    blank = _blank_answers(nb, Path(task.template) / "release" / f"{notebook}.ipynb")
    for gid in blank:  # as nbgrader scores an untouched answer ("No response"): 0, nobody needs to grade it
        if gid in grades and grades[gid].manual_score is None:
            scores[grades[gid].id] = 0.0
    gradebook.set_shard_scores(shard, scores)
    summary = NotebookResult.graded(notebook, cells, sum(tests.values()))
    summary.notes += [f"{_cell_name(nb, index)}: {cause}" for index, cause in incidents]
    summary.blank = blank
    return summary, nb


@functools.lru_cache(maxsize=16)
def _stubs(release_nb: Path, mtime_ns: int) -> dict[str, str]:
    """{grade id: released text} of a release notebook's written answer cells (as of mtime_ns)."""
    nb = nbformat.read(release_nb, as_version=4)
    return {contract.nbgrader_meta(c)["grade_id"]: c.source for c in nb.cells if contract.is_written_cell(c)}


def _blank_answers(nb, release_nb: Path) -> list[str]:
    """Grade ids of the written answers left blank in `nb` (empty, or the released text unchanged)."""
    stubs = _stubs(release_nb, release_nb.stat().st_mtime_ns) if release_nb.exists() else {}
    return [
        contract.nbgrader_meta(c)["grade_id"]
        for c in nb.cells
        if contract.is_written_cell(c)
        and is_blank_answer(c.source, stubs.get(contract.nbgrader_meta(c)["grade_id"], ""))
    ]


def _incidents(nb):
    """[(cell index, cause)] of the cells a limit stopped (autograder.grading.execute), in cell order."""
    found = nb.metadata.get("a3_incidents") or []
    return sorted(
        ((int(i["cell"]), str(i["cause"])) for i in found if isinstance(i, Mapping) and "cell" in i),
        key=lambda incident: incident[0],  # in the order they happened within a cell
    )


def _cell_name(nb, index):
    """'cell N (grade id)' for the cell at `index` of nb (N counts from 1, as a reader does), or 'cell N'."""
    gid = contract.nbgrader_meta(nb.cells[index]).get("grade_id") if 0 <= index < len(nb.cells) else None
    return f"cell {index + 1} ({gid})" if gid else f"cell {index + 1}"


def _with_earlier_cause(nb, incidents, index, note):
    """A failed test cell's note, led by the limit that stopped an earlier cell (its failure likely follows
    from that one): the cause is recorded where it happened, not as the next cell's symptom."""
    earlier = [i for i, _ in incidents if i < index]
    if not earlier or any(i == index for i, _ in incidents):
        return note
    causes = "; ".join(cause for i, cause in incidents if i == earlier[-1])
    where = f"{causes} in an earlier cell, {_cell_name(nb, earlier[-1])}"
    if note.startswith("KernelDied: not run"):
        return f"{where}; this test was not run (the kernel was stopped there)"
    return f"{where}; then this test failed: {note}"


def _grade_notebooks(task, ws, todo, layout, base_settings, base_env, kernel_env, log_lines):
    """Autograde and verify every submitted notebook: first all in one nbgrader process (one start-up),
    then, one at a time, any that the shared run did not finish (a crash or time-out there).

    Returns:
    - {notebook: (NotebookResult, autograded notebook or None)}
    """
    done = {}
    keys = {nb: secrets.token_hex(16) for nb in todo}
    run = functools.partial(
        runner.run_autograde,
        workspace=ws,
        student=task.student,
        settings=base_settings,
        env=base_env,
        kernel_env=kernel_env,
        cell_timeout=task.cell_timeout,
        notebook_timeout=task.notebook_timeout,
        log_lines=log_lines,
    )
    if len(todo) > 1:
        shared_run = run(notebooks=list(todo), keys=keys)
        verified = {nb: _verify_notebook(task, ws, nb, keys[nb], layout, log_lines, shared_run.run_id) for nb in todo}
        finished = {nb: v for nb, v in verified.items() if v[0] is not None}
        if len(finished) < len(todo):
            log_lines.append(
                f"RETRY {task.student}: the shared run left {sorted(set(todo) - set(finished))} "
                f"ungraded ({shared_run.failure()}); grading them one by one"
            )
        cell_time = {nb: sum(runner.cell_seconds(c) for c in v[1].cells) for nb, v in finished.items()}
        shared = max(0.0, shared_run.wall - sum(cell_time.values())) / max(1, len(finished))
        for nb, (summary, graded_nb) in finished.items():
            summary.timing = runner.timing(graded_nb, cell_time[nb] + shared, shared_run.kernel_asked.get(nb))
            summary.timing["shared_process"] = True
            summary.sandboxed = shared_run.sandboxed
            done[nb] = (summary, graded_nb)
    for nb in todo:
        if nb in done:
            continue
        keys[nb] = secrets.token_hex(16)
        one = run(notebooks=[nb], keys=keys)
        summary, graded_nb = _verify_notebook(task, ws, nb, keys[nb], layout, log_lines, one.run_id)
        if summary is None:
            why = (
                f"notebook ran past {task.notebook_timeout} s and was stopped"
                if one.timed_out
                else f"nbgrader could not grade it: {runner.last_error(one.output)}"
            )
            log_lines.append(f"FAILED {task.student}/{nb}: {why}")
            gradebook.zero_shard_notebook(ws / SHARD, task.student, nb)
            summary = NotebookResult.failed(nb, layout[nb]["tests"], why)
            summary.timing = {"seconds": round(one.wall, 3)}
        else:
            summary.timing = runner.timing(graded_nb, one.wall, one.kernel_asked.get(nb))
        summary.sandboxed = one.sandboxed
        done[nb] = (summary, graded_nb)
    return done


def _nbgrader_settings(task: Task, ws: Path) -> dict:
    """nbgrader's settings for grading in workspace `ws` (the kernel's are added per run)."""
    settings = dict(build.NBGRADER_SETTINGS)
    settings.update(
        {
            "CourseDirectory.root": str(ws.resolve()),
            "CourseDirectory.db_url": f"sqlite:///{(ws / SHARD).resolve()}",
            "Execute.timeout": task.cell_timeout,
            "Execute.shutdown_kernel": "immediate",  # outputs are in; a graceful kernel shutdown costs ~2 s
            "ClearMetadataPreprocessor.preserve_cell_metadata_mask": {"nbgrader", "execution", "tags"},
            "ClearMetadataPreprocessor.preserve_nb_metadata_mask": {
                ("language_info", "name"),
                "a3_run",
                "a3_incidents",
            },
            "Autograde.create_student": True,
            # nbconvert validates the notebook after each preprocessor: 13 validations a notebook, about 0.2 s a
            # student. Once, after the last, decides the same (the notebook is written only if valid).
            "Exporter.optimistic_validation": True,
        }
    )
    return settings


def _graded_or_not(task, ws, todo, layout, kernel_env, log_lines):
    """_grade_notebooks for `todo`; when grading itself raises, every one of them fails with the reason."""
    settings, env = _nbgrader_settings(task, ws), build.nbgrader_env(ws)
    try:
        return _grade_notebooks(task, ws, todo, layout, settings, env, kernel_env, log_lines)
    except Exception as exc:  # report it for these notebooks and keep the student's other results
        why = f"grading error: {type(exc).__name__}: {one_line(str(exc), 200)}"
        log_lines.append(f"FAILED {task.student}/{','.join(todo)}: {why}\n{traceback.format_exc()}")
        return {nb: (NotebookResult.failed(nb, layout[nb]["tests"], why), None) for nb in todo}


def _record_notebook(result, task, notebook, sub, layout, graded):
    """Put one notebook's summary and log lines into `result`; returns the graded notebook for its page (or None)."""
    for line in sub.repairs:
        result.log.append(f"REPAIR {task.student}/{notebook}: {line}")
    flags = list(sub.flags)
    if notebook in graded:
        summary, nb = graded[notebook]
        flags += answers.runs_disagree(sub.own_run, summary.cells)  # a check the two runs disagree on
    else:
        status = sub.status if sub.status != Status.OK else Status.MISSING
        if status != Status.MISSING:
            result.log.append(f"NOT GRADED {task.student}/{notebook}: {status}")
        summary, nb = NotebookResult.failed(notebook, layout[notebook]["tests"], status), None
    summary.repairs = list(sub.repairs)
    for line in flags:  # for the TA: an answer found in an added cell, runs that disagree (grading.answers)
        result.log.append(f"FLAG {task.student}/{notebook}: {line}")
    summary.flags = flags
    summary.manual = dict(layout[notebook]["manual"])
    result.notebooks[notebook] = summary
    return nb


def _render_notebook(result, task, notebook, nb, submitted):
    """One notebook's (reader-safe autograded copy as JSON or None, feedback page HTML); `submitted`: the path of
    the notebook as submitted, whose outputs the page shows, or None."""
    if nb is not None and submitted:
        try:  # the TA reads written answers beside the student's own full-run outputs
            nb = feedback.with_submitted_outputs(nb, nbformat.read(submitted, as_version=4))
        except (OSError, ValueError) as exc:
            result.log.append(f"NOTE {task.student}/{notebook}: submitted outputs not shown ({exc})")
    copy = nbformat.writes(sanitize.safe_for_readers(nb)) if nb is not None else None  # formgrader shows it
    page = feedback.Page.of(
        result.notebooks[notebook],
        task.submitted_as or task.student,
        late=task.late,
        model_answers=task.model_answers.get(notebook),
    )
    return copy, feedback.render(nb, page)


@dataclass
class Graded:
    """A student graded, their pages not yet rendered: what `grade` hands to `render_pages`."""

    task: Task
    result: StudentResult  # scores, statuses, log, shard: everything but the autograded notebooks and pages
    notebooks: dict = field(default_factory=dict)  # {notebook: (graded notebook or None, submitted path or None)}


def _node(items: dict) -> nbformat.NotebookNode:
    """A NotebookNode holding `items` as they are (their own nodes are rebuilt before them)."""
    node = nbformat.NotebookNode.__new__(nbformat.NotebookNode)
    dict.update(node, items)
    return node


# A Graded crosses to the page process (one worker) by multiprocessing's pickler. Unpickled as it is, a NotebookNode
# runs its own __setitem__ for every key: 5.8 ms for the four graded notebooks of a student, against 0.9 ms rebuilt
# by _node. The registration holds for that pickler only, not for pickle itself or Dask.
ForkingPickler.register(nbformat.NotebookNode, lambda node: (_node, (dict(node),)))


def _workspace(task: Task, kernel_env: dict[str, str], log: list[str]) -> tuple[Slot | None, Path]:
    """(the slot claimed for `task`, None without one; the workspace grading runs in: the slot's, else task.work).

    A student with nothing to grade, or a machine without slots, grades in task.work."""
    if not (any(s.ready for s in task.notebooks) and slot.available()):
        return None, Path(task.work)
    if Path(task.work).exists():
        shutil.rmtree(task.work)  # a workspace kept by an earlier run
    claimed = _claim_slot(task, kernel_env)
    if procs.cgroup_base() is None:  # a weaker bound on a student's processes: say so, once
        _say_once(log, f"WARNING process limit: {procs.bound()}")
    return claimed, claimed.workspace


def _is_clean(result: StudentResult, ran: Iterable[str]) -> bool:
    """True when grading completed and every notebook that ran was graded or left for manual grading. A notebook
    that never ran (missing, damaged, not a notebook) left nothing in the workspace worth keeping."""
    return result.complete and all(is_settled(result.notebooks[nb].status) for nb in ran if nb in result.notebooks)


def grade(task: Task) -> Graded:
    """Grade every notebook of one student (see module docstring); the pages are left to render_pages.

    Inputs:
    - task: a Task.
    Returns:
    - Graded: its result's complete is False only when grading itself broke; the result carries the gradebook
      shard, zygote is set when a zygote forked the kernels, and limits lists each cell that a limit stopped.
    """
    start = time.perf_counter()
    layout = course_layout(Path(task.template) / "release")
    result = StudentResult(student=task.student)
    done = Graded(task, result)
    subs = {s.notebook: s for s in task.notebooks}
    claimed, ws, todo = None, Path(task.work), {}  # until a slot is claimed, the workspace is the task's own folder
    try:
        kernel_env = grading_variables(task)
        claimed, ws = _workspace(task, kernel_env, result.log)
        todo = _prepare_workspace(task, ws, claimed)
        graded = _graded_or_not(task, ws, todo, layout, kernel_env, result.log)
        for notebook in layout:
            sub = subs.get(notebook) or Submission.missing(task.student, notebook)
            done.notebooks[notebook] = (_record_notebook(result, task, notebook, sub, layout, graded), sub.path)
        if todo and (ws / SHARD).exists():
            result.shard = (ws / SHARD).read_bytes()
    except Exception as exc:  # the workspace itself broke: report, let the caller retry on a later run
        _broke(result, exc)
        done.notebooks = {}  # no pages: the student is graded again on the next run
        for notebook in layout:
            if notebook not in result.notebooks:
                repairs = subs[notebook].repairs if notebook in subs else []
                failed = NotebookResult.failed(notebook, layout[notebook]["tests"], result.error, repairs)
                result.notebooks[notebook] = failed
    finally:
        if claimed is not None:
            result.zygote = claimed.report()
        else:
            launcher.uninstall_kernel(ws)
    result.seconds = round(time.perf_counter() - start, 3)
    prefix = f"LIMIT {task.student}/"
    result.limits = [line[len(prefix) :] for line in result.log if line.startswith(prefix)]
    clean = _is_clean(result, todo)
    if claimed is not None and (task.keep_work or not clean):
        shutil.copytree(ws, task.work, symlinks=True)  # the slot goes on to the next student
    elif clean and not task.keep_work and ws.exists() and claimed is None:
        shutil.rmtree(ws, ignore_errors=True)
    return done


def _broke(result, exc):
    """Mark `result` incomplete because grading itself raised `exc` (the caller retries it on a later run)."""
    result.complete = False
    result.error = why = Status.FAILED.detail(f"{type(exc).__name__}: {one_line(str(exc), 200)}")
    result.log.append(f"FAILED {result.student}: {why}\n{traceback.format_exc()}")


def render_pages(graded: Graded) -> StudentResult:
    """The result of `grade`, its pages written: each notebook's reader-safe autograded copy (<notebook>.ipynb) and
    feedback page (<notebook>.html) in the folder task.pages, which result.pages names. It needs no workspace, so a
    worker can render one student's pages while it grades the next; writing them here spares the process that
    records the student their bytes."""
    start, result = time.perf_counter(), graded.result
    try:
        if not graded.task.pages:
            raise ValueError("the task names no folder for its pages (Task.pages)")
        folder = Path(graded.task.pages)
        shutil.rmtree(folder, ignore_errors=True)  # what an earlier run left
        folder.mkdir(parents=True)
        result.pages = str(folder)
        for notebook, (nb, submitted) in graded.notebooks.items():
            copy, page = _render_notebook(result, graded.task, notebook, nb, submitted)
            if copy is not None:
                files.write_staged(folder / f"{notebook}.ipynb", copy)
            files.write_staged(folder / f"{notebook}.html", page)
    except Exception as exc:  # a page that cannot be rendered: the student is graded again on the next run
        _broke(result, exc)
    result.seconds = round(result.seconds + time.perf_counter() - start, 3)
    return result


def warm_pages() -> None:
    """Render one small notebook's page and reader-safe copy as `render_pages` does, and throw both away: a process's
    first page otherwise pays about 2 s of one-time costs (the imports, nbconvert's templates, pygments' lexers)."""
    v4 = nbformat.v4
    code = v4.new_code_cell("import math\nfor i in range(3):\n    print(f'{i}: {math.sqrt(i):.2f}')  # a comment")
    code.outputs = [
        v4.new_output("stream", name="stdout", text="0: 0.00\n"),
        v4.new_output("execute_result", data={"text/plain": "3"}, execution_count=1),
        v4.new_output("error", ename="ValueError", evalue="no", traceback=["\x1b[0;31mValueError\x1b[0m: no"]),
    ]
    nb = v4.new_notebook(cells=[v4.new_markdown_cell("# Warm-up\nAn answer with $x^2$ and `code`."), code])
    result = StudentResult(student="warm-up")
    result.notebooks["warm-up"] = NotebookResult.graded("warm-up", [CellResult("warm_up", 1.0, 1.0, "passed")], 1.0)
    _render_notebook(result, Task(student="warm-up", notebooks=[], template="", work=""), "warm-up", nb, None)
