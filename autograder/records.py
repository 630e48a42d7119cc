"""What a grading run leaves in OUT, written incrementally so a crash keeps every finished student.

OUT/
  grades.csv            student,notebook,score,max_score,status (every student x notebook; score and
                        max_score are the autograded points; no score for a "damaged download", which waits
                        for a good one), then written_score,written_max_score (hand
                        grades entered so far, out of the written answers' points) and ungraded (the cells a
                        person still has to grade: the total is provisional while it is not empty),
                        flags (for the TA, "; "-separated: answers found in cells the student added,
                        grading/answers.py), submitted_as, then submitted_at,due,late_units,late_penalty (the student's lateness and
                        the points it costs on the row's final raw score: autograder/term.py, OUT/term/)
  grades_by_cell.csv    student,notebook,grade_id,score,max_score,message (autograded cells and written
                        answers; empty score = waiting for a person)
  timings.csv           student,notebook,seconds,overhead,setup,cells,tests (where grading time went)
  lms_ids.csv           student,lms,lms_user_id,lms_name (the LMS's own ids that ingest found, for the exports)
  grading.log           every repair, failure and warning
  gradebook.db          nbgrader course gradebook merged from the per-student shards
  feedback/<student>/<nb>.html
  autograded/<student>/a3/<nb>.ipynb   (nbgrader course layout, for formgrader and re-rendering)
  .state/<student>.json the recorded result per student (resume bookkeeping)
  .cache/               the grading template, the notebooks ingest repaired, pages waiting to be recorded
  similarity.csv, similarity.html   pairs of students' cells that look alike, for TAs (reports.similarity)
"""

import functools
import io
import json
import os
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from autograder import contract, csvsafe, gradebook, term
from autograder.files import atomic_write
from autograder.gradebook import NOT_ENTERED, HandGrade, HandGrades, read_hand_grades
from autograder.out import Out
from autograder.readiness import is_blank_answer  # noqa: F401 - the blank-answer rule lives in readiness (one home)

GRADES_COLUMNS = [
    "student",
    "notebook",
    "score",
    "max_score",
    "status",
    "written_score",
    "written_max_score",
    "ungraded",
    "flags",
    "submitted_as",
    *term.LATE_COLUMNS,  # lateness of the student (term.Term.columns), on the row's final raw score
]
CELL_COLUMNS = ["student", "notebook", "grade_id", "score", "max_score", "message", "submitted_as"]
HAND_GRADED = "graded by hand"
WAITING = "waiting for a person"
REDOWNLOAD = "waiting for a good download: download the submissions again and grade"
BLANK = "blank answer: 0 (no response)"
TIMING_COLUMNS = ["student", "notebook", "seconds", "overhead", "setup", "cells", "tests"]
LMS_COLUMNS = ["student", "lms", "lms_user_id", "lms_name"]


def _num(x):
    return "" if x is None else f"{float(x):g}"


def not_graded_yet(path: Path, command: str) -> str:
    """The one-line error of `command` when `path`, a file or folder of OUT, is missing (grade first), else ''."""
    if path.exists():
        return ""
    return f"{command}: {path} not found: grade first (python -m autograder grade SUBMISSIONS --out OUT)"


class Status(str, Enum):
    """The fixed words of a status: a submission's (ingest) and a notebook's recorded one (grades.csv's column).

    A recorded status is GRADED, MISSING (ingest may add " (found only: ...)"), NEEDS_MANUAL, FAILED or DAMAGED
    followed by ": <detail>" (`Status.X.detail(...)`), or a one-line reason the notebook could not be graded. A member is the
    plain string OUT has always held: equal to it, hashed, printed, written to CSV and JSON as it.
    """

    OK = "ok"  # a submission ingest made ready to grade (never recorded)
    MISSING = "missing"  # no file for the notebook
    GRADED = "graded"
    NEEDS_MANUAL = "needs manual grading"  # ": <grade ids>": a person scores those cells (also a cell's note)
    FAILED = "grading failed"  # ": <reason>": the grader itself broke, the next run grades the student again
    # ": <file and why>": the TA's own LMS download is damaged there: never scored, never final, graded again from
    # a good download (its bytes differ, so the next run does not reuse this result)
    DAMAGED = "damaged download"

    __str__ = str.__str__  # "graded", not "Status.GRADED", in f-strings and str() on every Python
    __format__ = str.__format__

    def detail(self, text: str) -> str:
        """The status with its detail: 'needs manual grading: a, b'."""
        return f"{self.value}: {text}"

    def starts(self, status: str) -> bool:
        """True when `status` is this one, with or without a detail."""
        return str(status).startswith(self.value)


def is_settled(status: str) -> bool:
    """True when a notebook needs no one's attention for its status: graded, missing, or left for a person."""
    return status in (Status.GRADED, Status.MISSING) or Status.NEEDS_MANUAL.starts(status)


@dataclass
class CellResult:
    """One autograded cell's verdict: its grade id, score (None: waiting for a person), points and a one-line
    note ("passed" or why not)."""

    grade_id: str
    score: float | None
    max_score: float
    note: str

    def to_dict(self) -> dict:
        """The cell as recorded in OUT/.state and shown on feedback pages."""
        return {"grade_id": self.grade_id, "score": self.score, "max_score": self.max_score, "note": self.note}

    @classmethod
    def from_dict(cls, d: Mapping) -> "CellResult":
        """The cell as read back from OUT/.state (to_dict's inverse)."""
        return cls(d["grade_id"], d["score"], d["max_score"], d.get("note", ""))


@dataclass
class NotebookResult:
    """One notebook's grading result (the summary recorded per student x notebook).

    status: a Status (GRADED, MISSING, NEEDS_MANUAL: ...) or why it could not be graded. sandboxed is None when no
    kernel ran for it (then left out of the recorded dict).
    """

    notebook: str
    status: Status | str
    score: float
    max_score: float
    cells: list[CellResult]
    notes: list[str] = field(default_factory=list)
    timing: dict = field(default_factory=dict)
    repairs: list[str] = field(default_factory=list)
    manual: dict[str, float] = field(default_factory=dict)
    sandboxed: bool | None = None
    blank: list[str] = field(default_factory=list)  # written answers left blank (they score 0 by themselves)
    flags: list[str] = field(default_factory=list)  # for the TA: "<grade id> (<label>): <what>" (grading.answers)

    @classmethod
    def failed(
        cls, notebook: str, tests: Mapping[str, float], why: str, repairs: Iterable[str] = ()
    ) -> "NotebookResult":
        """A notebook that was not graded: every autograded cell 0 with `why` as its note and the status.

        Inputs:
        - tests: {test cell grade id: points} (a course_layout entry's "tests").
        """
        return cls(
            notebook=notebook,
            status=why,
            score=0.0,
            max_score=sum(tests.values()),
            cells=[CellResult(contract.check_id(t), 0.0, p, why) for t, p in tests.items()],
            repairs=list(repairs),
        )

    @classmethod
    def graded(cls, notebook: str, cells: list[CellResult], max_score: float) -> "NotebookResult":
        """A notebook whose cells were verified: GRADED, or "needs manual grading: <ids>" when a cell's score is
        None (a person decides)."""
        ungradable = [c.grade_id for c in cells if c.score is None]
        return cls(
            notebook=notebook,
            max_score=max_score,
            cells=cells,
            status=Status.NEEDS_MANUAL.detail(", ".join(ungradable)) if ungradable else Status.GRADED,
            score=sum(c.score or 0.0 for c in cells),
        )

    def to_dict(self) -> dict:
        """The plain dict recorded in OUT/.state, read by the CSVs and feedback pages."""
        d = {
            "notebook": self.notebook,
            "status": str(self.status),
            "score": self.score,
            "max_score": self.max_score,
            "cells": [c.to_dict() for c in self.cells],
            "notes": list(self.notes),
            "timing": self.timing,
            "repairs": list(self.repairs),
            "manual": dict(self.manual),
            "blank": list(self.blank),
        }
        if self.sandboxed is not None:
            d["sandboxed"] = self.sandboxed
        if self.flags:  # left out when none, so a state without flags reads as it always did
            d["flags"] = list(self.flags)
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> "NotebookResult":
        """The notebook as read back from OUT/.state (to_dict's inverse; a key older states lack takes its
        default)."""
        return cls(
            notebook=d["notebook"],
            status=d["status"],
            score=d["score"],
            max_score=d["max_score"],
            cells=[CellResult.from_dict(c) for c in d.get("cells", [])],
            notes=list(d.get("notes", [])),
            timing=dict(d.get("timing") or {}),
            repairs=list(d.get("repairs", [])),
            manual=dict(d.get("manual") or {}),
            sandboxed=d.get("sandboxed"),
            blank=list(d.get("blank", [])),
            flags=list(d.get("flags", [])),
        )


@dataclass
class StudentResult:
    """One student's grading result: what a worker returns (autograder.grading.worker.render_pages) and
    Results.record stores. OUT/.state/<student>.json holds to_state(), every field but the shard and the pages.

    complete is False only when grading itself broke (error says why: the next run grades the student again).
    """

    student: str
    complete: bool = True
    notebooks: dict[str, NotebookResult] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    seconds: float = 0.0
    shard: bytes | None = None  # the student's gradebook shard (None when nothing was autograded)
    pages: str = ""  # the folder render_pages left <notebook>.ipynb (the reader-safe autograded copy) and
    # <notebook>.html (the feedback page) in, which record moves into OUT ("": no pages)
    error: str | None = None  # "grading failed: ..." when not complete
    limits: list[str] | None = None  # ["<notebook>: cell N (grade id): <cause>"] for each cell a limit stopped
    zygote: dict | None = None  # {"preload_seconds", "kernels", "resets"} when a zygote forked the kernels
    submission: dict[str, str] | None = None  # {"submitted_as", "digest", "source"} (set by the pipeline)

    @classmethod
    def failed(cls, student: str, notebooks: Mapping[str, Mapping], reason: str) -> "StudentResult":
        """The result of a student whose grading never produced one (e.g. the worker kept dying): every notebook
        FAILED with `reason`.

        Inputs:
        - notebooks: the course layout, {notebook: {"tests": {test grade id: points}, ...}}.
        """
        why = Status.FAILED.detail(reason)
        return cls(
            student=student,
            complete=False,
            error=why,
            log=[f"FAILED {student}: {why}"],
            notebooks={nb: NotebookResult.failed(nb, cells["tests"], why) for nb, cells in notebooks.items()},
        )

    @property
    def submitted_as(self) -> str:
        """The name the student submitted under (the id when the pipeline did not record one)."""
        return (self.submission or {}).get("submitted_as") or self.student

    def to_state(self) -> dict:
        """The dict recorded in OUT/.state/<student>.json: every field but the shard and the pages, an optional one
        (error, limits, zygote, submission) only when set. The keys and values are those OUT has always held."""
        state = {
            "student": self.student,
            "complete": self.complete,
            "notebooks": {nb: r.to_dict() for nb, r in self.notebooks.items()},
            "log": list(self.log),
            "seconds": self.seconds,
        }
        for key in ("error", "limits", "zygote", "submission"):
            if getattr(self, key) is not None:
                state[key] = getattr(self, key)
        return state

    @classmethod
    def from_dict(cls, d: Mapping) -> "StudentResult":
        """A result from its dict form: a recorded state (to_state), or one with the shard and the pages as well."""
        return cls(
            student=d["student"],
            complete=d.get("complete", False),
            notebooks={nb: NotebookResult.from_dict(r) for nb, r in d.get("notebooks", {}).items()},
            log=list(d.get("log", [])),
            seconds=d.get("seconds", 0.0),
            shard=d.get("shard"),
            pages=d.get("pages", ""),
            error=d.get("error"),
            limits=d.get("limits"),
            zygote=d.get("zygote"),
            submission=d.get("submission"),
        )


def was_graded(status: str) -> bool:
    """True when a notebook ran through the grader (a formgrader page exists for it): graded, or graded but for
    cells a person decides."""
    return status == Status.GRADED or Status.NEEDS_MANUAL.starts(status)


def final_scores(
    result: NotebookResult, entered: Mapping[str, Mapping]
) -> tuple[NotebookResult, dict[str, tuple[float | None, str]]]:
    """One notebook's scores as they stand: what grading decided, completed by what people entered.

    Inputs:
    - result: the notebook's recorded result (its `manual`: {written grade id: points}).
    - entered: {grade_id: HandGrade} from the gradebook (read_hand_grades) for this student x notebook.
    Returns:
    - (a copy of result with each autograded cell a person scored filled in, its score and status updated;
       {written grade id: (score or None while waiting for a person, one-line note)}).
      A blank written answer scores 0 by itself, and so does every written answer of a notebook that was not
      graded at all (missing, not a notebook, ...: it has no formgrader page); a failure of the grader itself
      leaves them waiting, since the next run grades them, and a damaged download leaves them waiting for a good one.
    """
    cells, by_hand = [], 0.0
    for c in result.cells:
        score = entered.get(contract.test_cell_id(c.grade_id), NOT_ENTERED).score
        if c.score is None and score is not None:
            c = replace(c, score=float(score), note=HAND_GRADED)
            by_hand += float(score)
        cells.append(c)
    status = result.status
    if Status.NEEDS_MANUAL.starts(status) and all(c.score is not None for c in cells):
        status = Status.GRADED
    final = replace(result, cells=cells, score=result.score + by_hand, status=status)
    written = {}
    for gid in result.manual:
        score = entered.get(gid, NOT_ENTERED).score
        if score is not None and was_graded(status):
            written[gid] = (float(score), HAND_GRADED)
        elif Status.DAMAGED.starts(status):
            written[gid] = (None, REDOWNLOAD)
        elif not was_graded(status) and not Status.FAILED.starts(status):
            written[gid] = (0.0, f"not graded: {status}")
        elif gid in result.blank:
            written[gid] = (0.0, BLANK)
        else:
            written[gid] = (None, WAITING)
    return final, written


class Results:
    """The OUT folder of a grading run: recorded students, CSVs, log, feedback and merged gradebook."""

    def __init__(self, out: Path | str, template: Path | str | None = None) -> None:
        self.out = Out.at(out)
        self.state_dir = self.out.state
        self.template = Path(template) if template else None
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self._indexed = False  # OUT's gradebook has _INDEXES (added on the first merge of this object)

    # --- resume bookkeeping -------------------------------------------------------------------
    def state(self, student: str) -> StudentResult | None:
        """The recorded result of `student` (without the shard and the pages), or None."""
        path = self.state_dir / f"{student}.json"
        return StudentResult.from_dict(json.loads(path.read_text())) if path.exists() else None

    def states(self, strict: bool = True) -> list[StudentResult]:
        """All recorded results (without the shard and the pages), sorted by student.

        strict: False skips a state file that does not read as a result (one of another version, a damaged one),
        for readers that can do without it (a report's plot, the names of a table)."""
        found = []
        for path in sorted(self.state_dir.glob("*.json")):
            try:
                found.append(StudentResult.from_dict(json.loads(path.read_text())))
            except (ValueError, KeyError, AttributeError, TypeError):
                if strict:
                    raise
        return found

    def is_done(self, student: str, submission: Mapping[str, str] | None = None) -> bool:
        """True when `student` was graded to the end from this very submission (a crashed grading is retried).

        submission: {"submitted_as", "digest", "source"} of the submission at hand: the recorded result is
        reused only when the student's name as submitted, the hash of their files and the course source's hash
        all match it (None: any recorded complete result will do).
        """
        state = self.state(student)
        if not (state and state.complete):
            return False
        return submission is None or state.submission == dict(submission)

    def why_not_reused(self, student: str, submission: Mapping[str, str]) -> str:
        """Why `student`'s recorded result cannot stand for `submission` (one line), or '' when it can."""
        state = self.state(student)
        if not state:
            return ""
        if not state.complete:
            return "the last grading did not finish"
        old = state.submission or {}
        for key, what in (
            ("submitted_as", "a different name was submitted under this id"),
            ("digest", "the submitted files changed"),
            ("source", "the course source changed"),
        ):
            if old.get(key) != submission.get(key):
                return what
        return ""

    # --- files ---------------------------------------------------------------------------------
    def autograded_path(self, student: str, notebook: str) -> Path:
        return self.out.autograded_notebook(student, notebook)

    def feedback_path(self, student: str, notebook: str) -> Path:
        return self.out.page(student, notebook)

    def place_pages(self, result: StudentResult) -> None:
        """Move the pages render_pages left in result.pages into OUT: each notebook's reader-safe autograded copy
        and feedback page (a rename each: the page stage wrote them, so this process does not handle their bytes)."""
        if not result.pages:
            return
        staged, made = Path(result.pages), set()
        for notebook in result.notebooks:
            for name, final in (
                (f"{notebook}.ipynb", self.autograded_path(result.student, notebook)),
                (f"{notebook}.html", self.feedback_path(result.student, notebook)),
            ):
                if (staged / name).exists():
                    if final.parent not in made:
                        final.parent.mkdir(parents=True, exist_ok=True)
                        made.add(final.parent)
                    os.replace(staged / name, final)
        shutil.rmtree(staged, ignore_errors=True)

    def write_feedback(self, student: str, notebook: str, html: str) -> None:
        atomic_write(self.feedback_path(student, notebook), html)

    def log(self, lines: Iterable[str]) -> None:
        """Append lines to OUT/grading.log with a timestamp."""
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        with open(self.out.log, "a") as f:
            for line in lines:
                f.write(f"{stamp} {line}\n")

    # --- recording -----------------------------------------------------------------------------
    def record(self, result: StudentResult) -> HandGrades:
        """Store one student's result (record_all of one)."""
        return self.record_all([result])[0]

    def record_all(self, results: Sequence[StudentResult]) -> list[HandGrades]:
        """Store students' results: notebooks, feedback, shard merges, states, log. The shards go into the course
        gradebook in one transaction, and each state file is written once it has committed: a state file is what
        says a student is recorded. The CSVs, which read every student, are written by write_csvs once a batch ends
        (or stops).

        Inputs:
        - results: each student at most once.
        Returns:
        - one HandGrades per result, in order: the log lines saying which hand grades were kept ("HAND GRADE
          KEPT ...") and dropped ("... DROPPED").
        """
        graded = []
        for result in results:
            student = result.student
            before = {nb: self.answers(student, nb) for nb in result.notebooks}  # the answers a TA may have graded
            self.place_pages(result)
            if result.shard:
                graded.append(gradebook.Graded(student, result.shard, before, functools.partial(self.answers, student)))
        merged = dict(zip((g.student for g in graded), self.merge_shards(graded)))
        kept = [merged.get(result.student, HandGrades()) for result in results]
        lines = []
        for result, hand in zip(results, kept):
            state = json.dumps(result.to_state(), indent=1, sort_keys=True)
            atomic_write(self.state_dir / f"{result.student}.json", state)
            lines += result.log + list(hand.lines) + [self._summary_line(result)]
        self.log(lines)
        return kept

    def answers(self, student: str, notebook: str) -> dict[str, str]:
        """{grade_id: source} of the answers a person may grade in the student's recorded autograded notebook:
        the written answers, and each solution cell under its test cell's id (a check that cannot decide, such as
        the CLIP caption without its weights, leaves its cell to a person)."""
        path = self.autograded_path(student, notebook)
        if not path.exists():
            return {}
        nb = json.loads(path.read_text())
        found = {}
        for c in nb.get("cells", []):
            gid = contract.nbgrader_meta(c).get("grade_id")
            if contract.is_written_cell(c):
                found[gid] = "".join(c["source"])
            elif contract.is_solution_cell(c) and c.get("cell_type") == "code":
                found[contract.test_cell_id(gid)] = "".join(c["source"])
        return found

    @staticmethod
    def _summary_line(result):
        parts = [f"{nb} {_num(s.score)}/{_num(s.max_score)} {s.status}" for nb, s in result.notebooks.items()]
        return f"DONE {result.student} in {result.seconds:.1f} s: " + "; ".join(parts)

    def record_lms_ids(self, students: Mapping[str, Mapping]) -> None:
        """Add {student: {"lms", "user_id", "name"} or {}} to OUT/lms_ids.csv (students of earlier runs kept)."""
        path = self.out.lms_ids
        rows = {}
        if path.exists():
            with open(path, newline="") as f:
                rows = {r["student"]: [r[c] for c in LMS_COLUMNS] for r in csvsafe.DictReader(f)}
        for student, lms in students.items():
            if lms:
                rows[student] = [student, lms.get("lms", ""), lms.get("user_id", ""), lms.get("name", "")]
        buf = io.StringIO()
        writer = csvsafe.writer(buf, lineterminator="\n")
        writer.writerow(LMS_COLUMNS)
        writer.writerows(rows[s] for s in sorted(rows))
        atomic_write(path, buf.getvalue())

    def hand_grades(self) -> dict[tuple[str, str], dict[str, HandGrade]]:
        """{(student, notebook): {grade_id: HandGrade}}: what people entered for written answers.

        Read from OUT/gradebook.db, where formgrader writes; score is None for an answer nobody graded yet.
        """
        return read_hand_grades(self.gradebook_path())

    def write_csvs(
        self, hand: Mapping[tuple[str, str], Mapping] | None = None, recorded: term.Term | None = None
    ) -> None:
        """Rewrite the CSVs from every recorded student (idempotent: one row per student x notebook).

        `hand` / `recorded`: the hand grades and the term when the caller has read them already (default: read from
        the gradebook and OUT/term).
        """
        grades, cells, timings = [], [], []
        order = {name: i for i, name in enumerate(contract.NOTEBOOKS)}
        hand = self.hand_grades() if hand is None else hand
        late = self.recorded_term() if recorded is None else recorded
        for state in self.states():
            student, submitted_as = state.student, (state.submission or {}).get("submitted_as", "")
            for nb, graded in sorted(state.notebooks.items(), key=lambda kv: (order.get(kv[0], 99), kv[0])):
                s, written = final_scores(graded, hand.get((student, nb), {}))
                entered = [score for score, _ in written.values() if score is not None]
                damaged = Status.DAMAGED.starts(s.status)  # no score at all until a good download is graded
                ungraded = [c.grade_id for c in s.cells if c.score is None]
                ungraded += [gid for gid, (score, note) in written.items() if score is None and note == WAITING]
                grades.append(
                    [
                        student,
                        nb,
                        "" if damaged else _num(s.score),
                        _num(s.max_score),
                        str(s.status),
                        _num(sum(entered)) if entered else "",
                        _num(sum(s.manual.values())) if s.manual else "",
                        " ".join(ungraded),
                        "; ".join(s.flags),
                        submitted_as,
                        *late.columns(student, s.score + sum(entered)),
                    ]
                )
                for c in s.cells:
                    score = None if damaged else c.score
                    cells.append([student, nb, c.grade_id, _num(score), _num(c.max_score), c.note, submitted_as])
                for gid, (score, note) in written.items():
                    cells.append([student, nb, gid, _num(score), _num(s.manual[gid]), note, submitted_as])
                if "setup" in s.timing:
                    timings.append([student, nb] + [f"{s.timing[k]:.3f}" for k in TIMING_COLUMNS[2:]])
        for path, columns, rows in (
            (self.out.grades, GRADES_COLUMNS, grades),
            (self.out.grades_by_cell, CELL_COLUMNS, cells),
            (self.out.timings, TIMING_COLUMNS, timings),
        ):
            buf = io.StringIO()
            writer = csvsafe.writer(buf, lineterminator="\n")
            writer.writerow(columns)
            writer.writerows(rows)
            atomic_write(path, buf.getvalue())

    def recorded_term(self) -> term.Term:
        """The term OUT/term records; a damaged one (a hand-edited file) counts as none, and the log says why."""
        try:
            return term.Term.load(self.out)
        except term.TermError as exc:
            self.log([f"TERM not applied: {exc}"])
            return term.Term(None, {}, {})

    # --- gradebook -----------------------------------------------------------------------------
    def gradebook_path(self) -> Path:
        return self.out.gradebook

    def merge_shard(
        self, student: str, shard_bytes: bytes, before: Mapping[str, Mapping[str, str]] | None = None
    ) -> HandGrades:
        """Put `student`'s submission from a shard into OUT/gradebook.db (replacing an older one), keeping each hand
        grade whose answer is unchanged (`before`: {notebook: {grade_id: answer}} as recorded before this run)."""
        answers = functools.partial(self.answers, student)
        return self.merge_shards([gradebook.Graded(student, shard_bytes, before or {}, answers)])[0]

    def merge_shards(self, graded: Sequence[gradebook.Graded]) -> list[HandGrades]:
        """gradebook.merge_all into OUT/gradebook.db (started from the template's when there is none yet)."""
        if not graded:
            return []
        course = self.gradebook_path()
        if not course.exists():
            if self.template is None:
                raise RuntimeError("no course gradebook yet and no template to start it from")
            shutil.copy2(self.template / "gradebook.db", course)
        if not self._indexed:
            gradebook.add_indexes(course)
            self._indexed = True
        return gradebook.merge_all(course, graded)
