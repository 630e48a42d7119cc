"""Grade a batch of submissions: python -m autograder grade SUBMISSIONS --out OUT [--workers N] [--scheduler ADDRESS] [--force]

ingest (repair, one status per student x notebook) -> one task per student -> worker.grade, worker.render_pages
(isolated workspace, own gradebook shard, sandboxed kernel, pass-token verification, feedback) ->
results recorded in OUT as each student finishes. Students already graded in OUT are skipped unless
--force. See autograder/records.py for what OUT holds.
"""

import functools
import hashlib
import json
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder import contract, cores, envvars, paths, rubrics, term
from autograder.content import build
from autograder.gradebook import HandGrades
from autograder.grading import discover, ingest, scheduler, times, worker
from autograder.grading.ingest import Submission
from autograder.out import Out
from autograder.records import Results, Status, StudentResult, is_settled
from autograder.reports import feedback, similarity, timeontask
from autograder.sandbox import slot

IngestFn = Callable[[Path | str, Path | str, list[str]], list[Submission]]  # (submissions, staging, notebooks)


def source_digest(source: Path | str) -> str:
    """Hash of every file under `source` (names and bytes), to reuse a template built from the same source.

    The rubrics are left out: grading never reads them, and a TA editing one must not re-grade the class."""
    h = hashlib.sha256()
    for p in sorted(Path(source).rglob("*")):
        if p == Path(source) / rubrics.FILENAME:
            continue
        if p.is_file() and ".ipynb_checkpoints" not in p.parts and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(source)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def ensure_template(out: Path | str, source: Path | str = paths.SOURCE) -> Path:
    """OUT/.cache/template: the grading template built from `source` (rebuilt only when source changed)."""
    cache = Out.at(out).template
    digest = source_digest(source)
    stamp = cache / "source.sha256"
    if not (stamp.exists() and stamp.read_text() == digest and (cache / "gradebook.db").exists()):
        if cache.exists():
            shutil.rmtree(cache)
        build.template(cache, source)
        stamp.write_text(digest)
    return cache


def plain_ingest(submissions: Path | str, staging: Path | str, notebooks: Iterable[str]) -> list[Submission]:
    """Minimal ingest: SUBMISSIONS/<student>/<nb>.ipynb taken as they are (used without autograder.grading.ingest).

    Returns:
    - one Submission per student x notebook (no repairs, no LMS ids).
    """
    subs = []
    for folder in sorted(p for p in Path(submissions).iterdir() if p.is_dir() and not p.name.startswith(".")):
        digest = discover.submission_digest(folder.name, [(f.name, f) for f in folder.iterdir() if f.is_file()])
        student = discover.student_id(folder.name)
        stamp = folder / discover.TIMESTAMP_FILE
        given = dict(submitted_as=folder.name, digest=digest, timestamp=stamp if stamp.is_file() else None)
        for nb in notebooks:
            path = folder / f"{nb}.ipynb"
            if path.is_file():
                subs.append(Submission(student, nb, path, Status.OK, **given))
            else:
                subs.append(Submission.missing(student, nb, **given))
    return subs


def collect(
    submissions: Path | str,
    staging: Path | str,
    notebooks: list[str],
    release: Path | str,
    ingest_fn: IngestFn | None = None,
    notes: list[str] | None = None,
) -> dict[str, list[Submission]]:
    """{student: [Submission per notebook of `notebooks`, in that order]} for every student.

    ingest_fn: default autograder.grading.ingest (repairs Colab/LMS damage against `release`; `notes` receives the
    batch's own problems, such as a damaged LMS zip).
    """
    if ingest_fn is None:
        subs = ingest.ingest(Path(submissions), Path(staging), release=Path(release), notes=notes)
    else:
        subs = ingest_fn(submissions, staging, notebooks)
    by_student = {}
    for s in subs:
        if s.notebook in notebooks:
            by_student.setdefault(s.student, {})[s.notebook] = s
    return {
        student: [got.get(nb) or Submission.missing(student, nb) for nb in notebooks]
        for student, got in sorted(by_student.items())
    }


@dataclass(frozen=True)
class Summary:
    """What one `grade` run did, for the summary it prints and the callers that check it.

    limits: {student: ["<notebook>: cell N (grade id): <cause>"]} for cells a limit stopped (time, memory,
    processes) and not_graded: {student: ["<notebook>: <status>"]} for notebooks that could not be graded, both
    for every student of the batch, those recorded by an earlier run included; workers_lost: ["<worker> died
    holding <students>"] for each Dask worker that died; no_submission_time: students taken as on time for want
    of evidence; look_alikes: one line per group of students whose names a reader could take for one another;
    phases: {phase: seconds} of this run in order (PHASES), which `autograder bench` accounts a run's wall time with.
    """

    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    statuses: Counter = field(default_factory=Counter)
    hand_grades: dict[str, int] = field(default_factory=dict)  # {"kept": n, "dropped": n}, the counts that are not 0
    students: int = 0
    notes: list[str] = field(default_factory=list)  # the batch's own problems (a damaged LMS zip)
    limits: dict[str, list[str]] = field(default_factory=dict)
    not_graded: dict[str, list[str]] = field(default_factory=dict)
    workers_lost: list[str] = field(default_factory=list)
    no_submission_time: list[str] = field(default_factory=list)
    look_alikes: list[str] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)


PHASES = {  # a run's phases, as Summary.phases names them, and what each one does
    "set-up": "the course term read, the grading template checked (built when the source changed), the worker's "
    "zygote and nbgrader's fork server started",
    "take in": "the submissions found, read, repaired and staged; the term's submission times",
    "students": "the workers grading, each student recorded and their pages written as they come in",
    "finish": "the pages still being written, the term, the CSVs and exports, the similarity report, the TA index",
}


@dataclass(frozen=True)
class Batch:
    """The students of a run, taken in: each one's notebooks as ingest left them, and what identifies them."""

    students: dict[str, list[Submission]]
    identity: dict[str, dict[str, str]]  # {student: submission_identity(...)}
    notes: list[str]
    timed: set[str]  # the students whose submission time was found
    log: list[str]  # lines for grading.log on the submission times (a timestamp.txt that did not read, ...)


@dataclass(frozen=True)
class Stages:
    """What grades one student, renders their pages and warms a worker up: the worker's own (None); `bench
    --pipeline` puts recorded results in their place to measure the pipeline alone."""

    grade: Callable[[worker.Task], worker.Graded] | None = None
    render_pages: Callable[[worker.Graded], StudentResult] | None = None
    warm_up: Callable[[worker.Task], None] | None = None

    def of(self, name: str) -> Callable:
        """The stage `name`: this record's, else the worker's (looked up now, so a test may stand one in)."""
        return getattr(self, name) or getattr(worker, name)


@dataclass(frozen=True)
class Options:
    """How `grade` runs: where students are graded, what it reads besides the submissions, and its limits."""

    workers: int | None = None  # Dask local workers (None: all usable cores)
    scheduler_address: str | None = None  # an existing Dask scheduler instead of local workers
    force: bool = False  # grade everyone again (hand grades of unchanged answers kept)
    source: Path | str = paths.SOURCE  # the instructor source
    ingest_fn: IngestFn | None = None  # (submissions, staging, notebooks) -> [Submission]; None: grading.ingest
    cell_timeout: int = worker.CELL_TIMEOUT
    notebook_timeout: int = worker.NOTEBOOK_TIMEOUT
    keep_work: bool = False  # keep each student's workspace in OUT/.work
    # the term's files (autograder/term.py), checked before anything is graded and kept in OUT/term (None: keep what
    # OUT has): course file, extensions, submission times, an LMS grading worksheet with times
    course: Path | str | None = None
    extensions: Path | str | None = None
    submitted: Path | str | None = None
    worksheet: Path | str | None = None
    stages: Stages = Stages()


def grade(submissions: Path | str, out: Path | str, options: Options | None = None, **given) -> Summary:
    """Grade every student in `submissions` into `out`: take the batch in, grade who needs it, finish OUT.

    Inputs:
    - submissions: folder of student folders, or an LMS zip (handled by autograder.grading.ingest).
    - out: output folder (created); students already graded there are skipped unless `force`.
    - options: how to run (Options); `given`: fields of Options that replace its values (grade(s, o, workers=1)).
    Raises term.TermError (one line) for a bad term file, before anything is graded.
    Returns:
    - a Summary.
    """
    opts = replace(options or Options(), **given)
    start = time.perf_counter()
    phases = {}
    out = Path(out)
    course_file = term.read_course(opts.course) if opts.course is not None else None  # a bad one stops the run here
    out.mkdir(parents=True, exist_ok=True)
    template = ensure_template(out, opts.source)
    layout = worker.course_layout(template / "release")
    results = Results(out, template)
    n_workers = opts.workers or cores.usable()
    threads = max(1, cores.usable() // n_workers) if not opts.scheduler_address else None
    if not opts.scheduler_address and n_workers == 1:  # grading runs here: its zygote and fork server import meanwhile
        opts.stages.of("warm_up")(
            worker.Task(
                student="", notebooks=[], template=str(template), work=str(Out.at(out).work / "-"), threads=threads
            )
        )
    phases["set-up"] = time.perf_counter() - start
    batch = take_in(submissions, out, template, list(layout), results, opts, course_file)
    results.log([f"RUN grade {submissions} -> {out} ({len(batch.students)} students, force={opts.force})"] + batch.log)
    alike = look_alikes(batch.students)
    results.log(alike)
    recorded = results.recorded_term()  # the term as recorded: late notes on the pages, columns of the CSVs
    defaults = worker.Task(
        student="",
        notebooks=[],
        template=str(template),
        work="",
        cell_timeout=opts.cell_timeout,
        notebook_timeout=opts.notebook_timeout,
        threads=threads,
        keep_work=opts.keep_work,
        model_answers=feedback.model_answers(recorded, opts.source),
    )
    tasks, skipped = plan(batch, results, out, recorded, defaults, opts.force)
    phases["take in"] = time.perf_counter() - start - sum(phases.values())
    failed, hand, lost = run_tasks(tasks, batch, results, layout, opts)
    phases["students"] = time.perf_counter() - start - sum(phases.values())
    finish(out, results, recorded, opts.scheduler_address, opts.source, redo=[s for s, h in hand.items() if h.kept])
    remember_rubric(out, opts.source)
    phases["finish"] = time.perf_counter() - start - sum(phases.values())
    everyone = results.states()
    states = [st for st in everyone if st.student in batch.students]  # those it skipped too
    hand_counts = {"kept": sum(h.kept for h in hand.values()), "dropped": sum(h.dropped for h in hand.values())}
    summary = Summary(
        graded=sorted(t.student for t in tasks if t.student not in failed),
        skipped=skipped,
        failed=failed,
        seconds=time.perf_counter() - start,
        statuses=Counter(str(s.status) for st in everyone for s in st.notebooks.values()),
        hand_grades={what: n for what, n in hand_counts.items() if n},
        students=len(batch.students),
        notes=batch.notes,
        limits={st.student: st.limits for st in states if st.limits},
        not_graded=not_graded(states),
        workers_lost=lost,
        no_submission_time=sorted(set(batch.students) - batch.timed),
        look_alikes=alike,
        phases=phases,
    )
    results.log(
        [f"END graded {len(summary.graded)}, skipped {len(skipped)}, failed {len(failed)} in {summary.seconds:.1f} s"]
    )
    return summary


def remember_rubric(out: Path, source: Path | str) -> None:
    """Keep in OUT the rubric graded with (marking.mark.note_rubric_changes), so that an edit of rubrics.toml made
    before the first `mark` is logged as one; a rubric `mark` would refuse is left for it to say so."""
    from autograder.marking import mark

    path = Path(source) / rubrics.FILENAME
    try:
        found = rubrics.load(path) if path.exists() else None
    except rubrics.RubricError:
        return
    if found:
        mark.note_rubric_changes(out, found)


def take_in(
    submissions: Path | str,
    out: Path,
    template: Path,
    notebooks: list[str],
    results: Results,
    opts: Options,
    course_file: term.Course | None,
) -> Batch:
    """Ingest the submissions, record the LMS's ids and the term (course, extensions, when each student submitted).

    notebooks: the course's notebooks (the template's layout); course_file: the course file `opts.course` as read
    (None: none given). Raises term.TermError for a bad term file."""
    staging = Out.at(out).staging
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    notes = []
    students = collect(submissions, staging, notebooks, template / "release", opts.ingest_fn, notes)
    results.log(f"SUBMISSIONS {note}" for note in notes)
    results.record_lms_ids({student: next((s.lms for s in subs if s.lms), {}) for student, subs in students.items()})
    found, stamp_log = times.evidence(students, opts.submitted, opts.worksheet, times.zone(out, course_file))
    everyone = {**term.recorded_names(out), **times.names(students)}  # a TA names students as they know them
    term.write_term(out, course=opts.course, extensions=opts.extensions, evidence=found, students=everyone)
    timeontask.forget(out)  # the course may turn time on task off: the execution times ingest kept go
    times.record_lms_files(out, students)
    source_hash = (template / "source.sha256").read_text()
    identity = {student: submission_identity(subs, student, source_hash) for student, subs in students.items()}
    return Batch(students, identity, notes, set(found), stamp_log)


def plan(
    batch: Batch, results: Results, out: Path, recorded: term.Term, settings: worker.Task, force: bool
) -> tuple[list[worker.Task], list[str]]:
    """(one Task per student to grade, heaviest first; the students skipped as graded from the same files).

    settings: a Task whose grading settings (time limits, threads, model answers) every task takes."""
    tasks, skipped, regrade = [], [], []
    for student, subs in batch.students.items():
        if not force and results.is_done(student, batch.identity[student]):
            skipped.append(student)
            continue
        why = results.why_not_reused(student, batch.identity[student])
        if why and not force:
            regrade.append(f"REGRADE {student}: {why}")
        tasks.append(
            replace(
                settings,
                student=student,
                notebooks=subs,
                work=str(Out.at(out).work / student),
                pages=str(Out.at(out).staged_pages / student),
                submitted_as=batch.identity[student]["submitted_as"],
                late=recorded.late(student),
            )
        )
    # Heaviest students first, so that no worker is left alone with a full student at the end of the batch
    tasks.sort(key=lambda t: -sum(1 for s in t.notebooks if s.ready))
    if skipped:
        results.log([f"SKIP {len(skipped)} students already graded from the same files (use --force to regrade)"])
    results.log(regrade)
    return tasks, skipped


GROUP_SECONDS = 0.5  # a result that comes sooner than this after the last commit waits to share the next one
GROUP_MOST = 32  # students in one gradebook commit at most


class Recorder:
    """Records students as their results come: one at a time while they come slower than GROUP_SECONDS apart, as
    one kernel grades them; several to a gradebook commit when they come faster (many workers, replayed results),
    so that the wait for the disk is paid once a group instead of once a student. A student held for company is
    recorded with the next result, when GROUP_MOST are held, or at flush(); a crash meanwhile only means that
    student is graded again on the next run (their state file is not written yet)."""

    def __init__(self, results: Results):
        self.results = results
        self.held: list[StudentResult] = []
        self.hand: dict[str, HandGrades] = {}  # {student: HandGrades} of those with hand grades kept or dropped
        self.last = float("-inf")  # when the last group was recorded

    def add(self, result: StudentResult) -> None:
        """Record `result` now, or hold it for the next commit when the last one was less than GROUP_SECONDS ago."""
        if any(held.student == result.student for held in self.held):
            self.flush()  # a student appears once in a commit
        self.held.append(result)
        if len(self.held) >= GROUP_MOST or time.monotonic() - self.last >= GROUP_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Record every student held."""
        held, self.held = self.held, []
        for result, recorded in zip(held, self.results.record_all(held)):
            if recorded.kept or recorded.dropped:
                self.hand[result.student] = recorded
        self.last = time.monotonic()


def run_tasks(tasks, batch, results, layout, opts: Options):
    """Grade `tasks` on the workers, recording each student as their result comes (Recorder).

    Returns:
    - ({student: why} of those whose grading failed, {student: HandGrades} of those with hand grades kept or
       dropped, ["<worker> died holding <students>"])."""
    failed, lost = {}, []
    recorder = Recorder(results)

    def on_result(result: StudentResult | scheduler.TaskFailure):
        if isinstance(result, scheduler.TaskFailure):  # the worker never returned a result
            result = StudentResult.failed(result.task.student, layout, result.status)
        if not result.complete:
            failed[result.student] = result.error or Status.FAILED
        result.submission = batch.identity[result.student]
        recorder.add(result)

    def on_worker_lost(address: str, held: list[worker.Task]):
        names = ", ".join(t.student for t in held)
        lost.append(f"{address} died holding {names}")
        line = f"WORKER LOST: Dask worker {address} died holding {names}; graded again on another worker"
        results.log([line])
        print(line, file=sys.stderr)

    try:
        scheduler.run(
            tasks,
            opts.stages.of("grade"),
            then=opts.stages.of("render_pages"),  # one student's pages rendered while the next is graded
            warm_then=worker.warm_pages,
            workers=opts.workers,
            scheduler=opts.scheduler_address,
            on_result=on_result,
            on_worker_lost=on_worker_lost,
            desc="grading",
            keep_results=False,  # each result is recorded as it comes (on_result)
        )
    except BaseException:  # Ctrl-C, a lost scheduler: the CSVs show every student recorded so far
        try:
            recorder.flush()
        finally:
            results.write_csvs()
        raise
    recorder.flush()
    return failed, recorder.hand, lost


def finish(out, results, recorded, scheduler_address, source, redo):
    """After the workers: free their slots, re-render the pages of `redo` (students whose kept hand grades the
    workers could not know), then the CSVs, the similarity report and the TA index."""
    worker.release_slot()  # this process's zygote, when it graded in-process
    # A local cluster's workers have exited; an existing cluster's give back their slots of this run, after
    # which what is left belongs to workers that died
    if not scheduler_address or scheduler.run_on_workers(
        scheduler_address, functools.partial(worker.release_slots, Out.at(out).work)
    ):
        for left in slot.leftovers(Out.at(out).work):
            shutil.rmtree(left, ignore_errors=True)
    shutil.rmtree(Out.at(out).staged_pages, ignore_errors=True)  # pages an interrupted run staged and never recorded
    hand = results.hand_grades()
    if redo:
        feedback.rerender(out, students=redo, source=source, tables=False, hand=hand, recorded=recorded)
    results.write_csvs(hand, recorded)
    try:  # the TA-only similarity report; its failure never fails grading
        similarity.write_report(out, scheduler_address)
    except Exception as exc:
        results.log([f"SIMILARITY not written: {type(exc).__name__}: {exc}"])
    feedback.write_index(out)


def not_graded(states: list[StudentResult]) -> dict[str, list[str]]:
    """{student: ["<notebook>: <status>"]} for the notebooks of recorded `states` that could not be graded
    (damaged, not a notebook, ...), missing ones and grader failures left out."""
    found = {}
    for st in states:
        for nb, s in st.notebooks.items():
            if not is_settled(s.status) and not Status.FAILED.starts(s.status):
                found.setdefault(st.student, []).append(f"{nb}: {s.status}")
    return found


def submission_identity(subs: list[Submission], student: str, source_hash: str) -> dict[str, str]:
    """What a recorded result must match to be reused: the name as submitted, the files' hash, the course source."""
    first = next((s for s in subs if s.digest), None)
    return {
        "submitted_as": first.submitted_as if first else student,
        "digest": first.digest if first else "",
        "source": source_hash,
    }


def look_alikes(students: dict[str, list[Submission]]) -> list[str]:
    """Log lines naming the students whose names a reader could take for one another ('Anna Lee', 'Anna_Lee')."""
    groups = {}
    for student, subs in students.items():
        shown = next((s.submitted_as for s in subs if s.submitted_as), student)
        groups.setdefault(discover.look_alike_key(shown), []).append(student)
    return [
        f"LOOK-ALIKE names, graded as different students: {', '.join(_spelled_out(s) for s in sorted(group))}"
        for group in sorted(groups.values())
        if len(group) > 1
    ]


def _spelled_out(name: str) -> str:
    """A name quoted, and with its code points spelled out when it is not plain ASCII, so that a reader of the log
    sees which of two look-alikes is which: a John with a Cyrillic o reads 'J\\u043ehn'."""
    return repr(name) if name.isascii() else f"{name!r} (as {ascii(name)})"


def print_summary(summary: Summary, out: Path) -> None:
    """The end-of-run summary: counts, failures with reasons, Dask workers that died, each student's notebooks
    that could not be graded and why, the students whose cells a limit stopped (and which), hand grades kept and
    dropped, look-alike names, time, where things are."""
    for note in summary.notes:
        print(f"submissions: {note}")
    print(
        f"graded {len(summary.graded)} students, skipped {len(summary.skipped)} already graded, "
        f"{len(summary.failed)} failed, in {summary.seconds:.1f} s"
    )
    for status, n in sorted(summary.statuses.items()):
        print(f"  {n:4d} notebooks: {status}")
    for student, why in summary.failed.items():
        print(f"  FAILED {student}: {why}")
    for line in summary.workers_lost:
        print(f"  Dask worker {line}: graded again on another worker (grading.log)")
    damaged = sum(n for status, n in summary.statuses.items() if Status.DAMAGED.starts(status))
    if damaged:
        print(
            f"  {damaged} notebooks could not be read from the LMS download: download the submissions again and grade "
            "them into the same OUT (until then they have no score and are not released)"
        )
    for student, lines in summary.not_graded.items():
        for line in lines:
            print(f"    NOT GRADED {student}: {line}")
    hand = summary.hand_grades
    if hand:
        print(
            f"  hand grades: {hand.get('kept', 0)} kept (answer unchanged), {hand.get('dropped', 0)} dropped "
            "(answer changed: grade it again; grading.log names each)"
        )
    stopped = summary.limits
    if stopped:
        print(f"  {len(stopped)} student(s) had cells stopped by a limit (their feedback pages say so):")
        for student, lines in stopped.items():
            for line in lines:
                print(f"    {student}: {line}")
    for line in summary.look_alikes:
        print(f"  {line}")
    where = Out.at(out)
    if summary.no_submission_time and where.course.exists():
        print(f"  {len(summary.no_submission_time)} students without a submission time: taken as on time")
    print(f"grades: {where.grades}, {where.grades_by_cell}; feedback: {where.feedback}; log: {where.log}")


def is_course_source(source: Path | str) -> bool:
    """True when `source` holds the course's notebooks only (source/a3 or a copy of it, as the bench grades):
    autograder.grading.ingest knows how to repair their submissions. Another course is taken as it is."""
    names = {p.stem for p in Path(source).glob("*.ipynb")}
    return bool(names) and names <= set(contract.NOTEBOOKS)


def main(
    *,
    submissions: Path,
    out: Path,
    workers: int | None = None,
    scheduler_address: str | None = None,
    force: bool = False,
    source: Path = paths.SOURCE,
    keep_work: bool = False,
    course: Path | None = None,
    extensions: Path | None = None,
    submitted: Path | None = None,
    worksheet: Path | None = None,
) -> int:
    """`grade`: grade SUBMISSIONS into OUT and print the summary. Returns the exit status (1: nothing to grade,
    2: no such SUBMISSIONS, 130: interrupted)."""
    submissions = Path(submissions)
    if not submissions.exists():
        print(f"grade: {submissions} does not exist", file=sys.stderr)
        return 2
    if submissions.is_dir() and not any(p for p in submissions.iterdir() if not p.name.startswith(".")):
        print(f"grade: nothing to grade: {submissions} is empty", file=sys.stderr)
        return 1
    if course is None and is_course_source(source) and not Out.at(out).course.exists():
        course = paths.ROOT / "course.toml" if (paths.ROOT / "course.toml").exists() else None  # a3's term
    try:
        options = Options(
            workers=workers,
            scheduler_address=scheduler_address,
            force=force,
            source=source,
            keep_work=keep_work,
            ingest_fn=None if is_course_source(source) else plain_ingest,
            course=course,
            extensions=extensions,
            submitted=submitted,
            worksheet=worksheet,
        )
        summary = grade(submissions, out, options)
    except term.TermError as exc:
        print(f"grade: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        done = sum(1 for state in Results(out).states() if state.complete) if Path(out).exists() else 0
        print(f"\ninterrupted: {done} students graded, rerun the same command to resume", file=sys.stderr)
        return 130
    print_summary(summary, out)
    if os.environ.get(envvars.RUN_STATS):  # set by `autograder bench` around a grading subprocess
        stats = dict(scheduler.last_stats.as_dict(), phases=summary.phases)
        Path(os.environ[envvars.RUN_STATS]).write_text(json.dumps(stats, indent=1))
    if not summary.students:
        print(f"grade: nothing to grade: no student folders or LMS-named files found in {submissions}", file=sys.stderr)
        return 1
    return 0
