"""The state behind the grading-by-question page of `python -m autograder mark OUT` (served by marking.web): one
page per written question with every student's answer, grouped (marking.groups), and the rubric's items as toggles
on an answer or on a whole group. Students are shown under a stable pseudonym unless the TA asks for names. Every
change goes through marking.mark: appended to OUT/marks.jsonl and on disk before it is answered, derived into the
gradebook at once, and into grades.csv and the students' pages in the background (marking.pages: redone after a
kill). Editing an item's points or text rewrites that item in rubrics.toml and re-scores every answer that has it.

A write names the mark it replaces; when another grader has marked the answer since the page was loaded, the write
is refused and the page says who gave which grade.
"""

import datetime
import functools
import hashlib
import json
import math
import multiprocessing
import os
import re
import signal
import sqlite3
import sys
import threading
import time
import webbrowser
from pathlib import Path

from autograder import contract, paths, rubrics
from autograder.contract import check_id
from autograder.files import atomic_write, rewrite
from autograder.marking import mark, pages, refresh
from autograder.marking.groups import EmbeddingCache, Group, Preempted, group_answers, regroup, torch_threads
from autograder.out import Out
from autograder.records import Results
from autograder.text import one_line

SHOWN = 20_000  # characters of an answer shown on the page (a 5 MB paste is cut, and says so)
PAGE = 200  # answers a question's page draws at first, and each time the TA asks for more
PATIENCE = 1.0  # seconds a page waits for its groups by meaning before it opens with groups by words
_spawn = multiprocessing.get_context("spawn")  # a fresh interpreter: the refresh never holds the page's GIL
BUSY_TRIES = 3  # a gradebook locked by another writer (formgrader) is tried again this often, 30 s each


@functools.lru_cache(maxsize=None)
def pseudonym(student: str) -> str:
    """A stable stand-in for a student's name on the page (the same in every session); the page knows students by
    it alone, names are shown only as text on request."""
    return "student " + hashlib.sha256(student.encode()).hexdigest()[:10]


def mark_version(m: mark.Mark | None) -> str:
    """What a page says it saw of an answer's mark: '' for none."""
    return "" if m is None else f"{m.at} {m.grader}"


def said_by(m: mark.Mark, rubric: rubrics.Rubric | None, points: float) -> str:
    """Another grader's mark in a sentence: who, when, which items, what score."""
    when = datetime.datetime.fromisoformat(m.at).strftime("%H:%M:%S UTC")
    if m.items is None:
        return f"{m.grader} cleared this answer's mark at {when}"
    items = ", ".join(m.items) or "no items"
    score = f"{rubrics.score(rubric, m.items, m.adjustment, points):g}" if rubric else "?"
    return f"{m.grader} marked this answer at {when} ({items}: {score} of {points:g} points)"


BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")


def own_outputs(notebook: dict, grade_id: str) -> list[tuple[str, list[dict]]]:
    """[(cell, outputs)] of the student's own run in the provided code cells an answer is about: those between the
    previous written answer (or the notebook's start) and this answer (a written cell, or the solution cell that
    test cell `grade_id` checks), outputs after the marker line that feedback.with_submitted_outputs puts first."""
    from autograder.reports.feedback import OWN_RUN

    cells, found = notebook.get("cells", []), []
    for cell in cells:
        meta = contract.nbgrader_meta(cell)
        if contract.is_solution_cell(cell) and meta.get("grade_id") in (grade_id, contract.check_id(grade_id)):
            return found
        if contract.is_written_cell(cell):
            found = []
        elif (
            cell.get("cell_type") == "code"
            and not contract.is_graded_cell(cell)
            and not contract.is_solution_cell(cell)
        ):
            outputs = cell.get("outputs", [])
            marks = [n for n, o in enumerate(outputs) if "".join(o.get("text", "")) == OWN_RUN]
            if marks:
                found.append((meta.get("grade_id") or "", outputs[marks[0] + 1 :]))
    return []


def inert(found: list[tuple[str, list[dict]]]) -> list[dict]:
    """The outputs as the outputs template shows them: PNG and JPEG images as data URLs, text, nothing else."""
    shown = []
    for cell, outputs in found:
        parts = []
        for o in outputs:
            data = o.get("data") or {}
            for kind in ("image/png", "image/jpeg"):
                image = "".join(data.get(kind) or "")
                if image and BASE64.fullmatch(image):
                    parts.append({"image": f"data:{kind};base64,{image}"})
                    break
            else:
                text = "".join(o.get("text") or data.get("text/plain") or "")
                if text:
                    parts.append({"text": text[:SHOWN]})
        shown.append({"cell": cell, "parts": parts})
    return shown


class Marking:
    """The state one server shares between requests: OUT, the rubric file, the grader and the answer groups."""

    SECOND_ONLY_MARKS = (
        "a second grader marks the sample against the rubric as it is: moves, regrades and item edits are the first "
        "grader's"
    )

    def __init__(self, out: Path, source: Path, grader: str, encoder: str, second: set[mark.Key] | None = None):
        """`second`: the double-marked sample (mark.double_sample) that this grader marks blind, as a second
        grader whose marks feed the agreement figures only (None: the marks that are the grades)."""
        self.out, self.rubric_path, self.grader, self.encoder = (
            Out.at(out),
            Path(source) / rubrics.FILENAME,
            grader,
            encoder,
        )
        self.second = second
        self._rubrics = None
        self._suggesters: dict = {}
        self.suggesting = threading.Lock()
        self._provisional: dict[tuple[str, str], list[Group]] = {}
        self.lock = threading.Lock()  # one write at a time: the log, the gradebook and rubrics.toml
        found = self.all_answers = mark.collect(self.out)  # the sample's cells aside, every cell a rubric is for
        self.answers = found if second is None else {k: a for k, a in found.items() if k in second}
        # every question is grouped in the background from the start, the one a page waits for first; answers
        # encoded once are kept in OUT (groups.EmbeddingCache), so a restarted page groups in a moment
        self.cache = EmbeddingCache(self.out.embeddings, self._preempt) if encoder == "minilm" else None
        self.groups: dict[tuple[str, str], list] = {}
        self.grouping = threading.Condition()
        self.wanted: list[tuple[str, str]] = []
        self.current: tuple[str, str] | None = None  # the question being grouped now
        self.closing = False
        self.grouper = threading.Thread(target=self._group_all, daemon=True)
        self.grouper.start()
        # grades.csv and the students' pages follow the gradebook in a thread of their own, so that a group
        # action answers as soon as the gradebook holds it
        self.pending: set[tuple[str, str]] = set()  # (student, notebook) of the pages to render again
        self.refreshing = threading.Condition()
        self.busy = False
        threading.Thread(target=self._refresh, daemon=True).start()
        threading.Thread(target=self.marks, daemon=True).start()  # the log read once, before the first page asks
        left = pages.pending(self.out)
        if left:  # a refresh a kill interrupted: grades.csv and those pages are brought up to date first
            print(f"mark: {len(left)} page(s) left stale by an interrupted refresh are rendered again", flush=True)
            with self.refreshing:
                self.pending |= left
                self.refreshing.notify_all()

    def rubrics(self) -> rubrics.Rubrics:
        """rubrics.toml as it is now (parsed again only when the file changed)."""
        st = self.rubric_path.stat()
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if self._rubrics is None or self._rubrics[0] != stamp:
            found = rubrics.load(self.rubric_path)
            problems = rubric_problems(found, self.all_answers, self.rubric_path.parent)
            if problems:  # edited on disk while the page runs: nothing is scored with it
                raise rubrics.RubricError(f"{rubrics.FILENAME} changed and {problems[0]}: fix it, nothing was saved")
            mark.note_rubric_changes(self.out, found)  # an edit of the file itself (the page's own are logged as made)
            self._rubrics = (stamp, found)
        return self._rubrics[1]

    @property
    def answers(self) -> dict[mark.Key, mark.Answer]:
        return self._answers

    @answers.setter
    def answers(self, found: dict[mark.Key, mark.Answer]) -> None:
        self._answers, self._by_cell, self._by_shown = found, {}, {}

    def cell_answers(self, cell: tuple[str, str]) -> dict[str, mark.Answer]:
        """{student: answer} of one question (kept: a page asks for them on every change)."""
        if cell not in self._by_cell:
            self._by_cell[cell] = {a.student: a for a in self.answers.values() if (a.notebook, a.grade_id) == cell}
        return self._by_cell[cell]

    def by_pseudonym(self, cell: tuple[str, str]) -> dict[str, mark.Answer]:
        """The answers to a question by the pseudonym the page knows each student by."""
        if cell not in self._by_shown:
            self._by_shown[cell] = {pseudonym(s): a for s, a in self.cell_answers(cell).items()}
        return self._by_shown[cell]

    def grouped(self, cell: tuple[str, str], wait: float | None = None) -> list[Group] | None:
        """The answer groups of a question (computed once per server), after the TAs' moves; None if they are not
        ready within `wait` seconds (None: as long as it takes)."""
        with self.grouping:
            if cell not in self.groups:
                self.wanted.insert(0, cell)
                self.grouping.notify_all()
                if not self.grouping.wait_for(lambda: cell in self.groups, wait):
                    return None
        return regroup(self.groups[cell], mark.read_moves(self.out).get(f"{cell[0]}/{cell[1]}", {}))

    def _group(self, cell: tuple[str, str], encoder: str) -> list[Group]:
        texts = {s: a.typed for s, a in self.cell_answers(cell).items()}
        if encoder == "minilm":
            try:
                return group_answers(texts, mark.STUB, "minilm", self.cache)
            except (ImportError, OSError) as exc:  # no MiniLM model: words still group answers
                print(f"mark: {cell[0]}/{cell[1]} grouped by words: {one_line(exc, 200)}", flush=True)
        return group_answers(texts, mark.STUB, "tfidf")

    def _group_all(self) -> None:
        """Group every question with answers, in the rubric's order, a question a page waits for first; the
        questions no page waits for yet on one PyTorch thread at a lower priority, so that the TA's clicks and the
        pages they change come first."""
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)  # this thread only (Linux)
        except (AttributeError, OSError):
            pass
        order = list(dict.fromkeys((a.notebook, a.grade_id) for a in self.answers.values()))
        while True:
            with self.grouping:
                todo = [cell for cell in self.wanted + order if cell not in self.groups]
                if self.closing:
                    return
                if not todo:
                    self.grouping.wait()  # a question that had no answers when the server started
                    continue
                cell = self.current = todo[0]
                waited_for = cell in self.wanted
            try:
                with torch_threads(None if waited_for or self.encoder != "minilm" else 1):
                    found = self._group(cell, self.encoder)
            except Preempted:  # a page waits for another question (or the server stops): the rows done are kept
                continue
            except Exception as exc:  # one question's failure must not leave the others (or a page) waiting
                print(f"mark: {cell[0]}/{cell[1]} grouped by words: {one_line(exc, 200)}", flush=True)
                found = self.provisional(cell)
            with self.grouping:
                self.groups[cell] = found
                self.grouping.notify_all()

    def _preempt(self) -> bool:
        """True when the question being grouped should wait: the server stops, or a page waits for another."""
        if self.closing:
            return True
        return self.current not in self.wanted and any(cell not in self.groups for cell in self.wanted)

    def close(self) -> None:
        """Stop grouping in the background (after the batch being encoded: the rows done are kept)."""
        with self.grouping:
            self.closing = True
            self.grouping.notify_all()
        self.grouper.join(60)

    def provisional(self, cell: tuple[str, str]) -> list[Group]:
        """Groups by shared words, for a page asked for before its groups by meaning are ready (kept till then)."""
        if cell not in self._provisional:
            self._provisional[cell] = self._group(cell, "tfidf")
        return regroup(self._provisional[cell], {})

    def move(self, cell: tuple[str, str], shown: str, group) -> tuple[int, dict]:
        """Move the answer shown as `shown` to the group named `group` ('': a new group of its own)."""
        answer = self.by_pseudonym(cell).get(shown)
        if answer is None or not isinstance(group, str):
            return 400, {"error": f"no answer of {shown!r} to {cell[0]}/{cell[1]}"}
        student = answer.student
        with self.lock, mark.locked(self.out):
            moves = mark.read_moves(self.out)
            names = {g.name for g in self.grouped(cell)}
            if not group:
                group = next(f"split-{n}" for n in range(1, len(names) + 2) if f"split-{n}" not in names)
            elif group not in names:
                return 400, {"error": f"no group {group!r}"}
            moves.setdefault(f"{cell[0]}/{cell[1]}", {})[student] = group
            atomic_write(self.out.moves, json.dumps(moves, ensure_ascii=False, indent=1, sort_keys=True))
        return 200, {"group": group}

    def marks(self) -> dict[mark.Key, mark.Mark]:
        """The latest marks this page shows and replaces: the grades, or a second grader's own marks (blind)."""
        return mark.read_second(self.out) if self.second is not None else mark.read_log(self.out)[0]

    def scores(
        self, cell: tuple[str, str], marks: dict[mark.Key, mark.Mark], known: dict | None = None
    ) -> dict[str, float | None]:
        """{student: score} of a question: the gradebook's (`known`: read already), or for second marks the score
        their items give."""
        if self.second is None:
            scores = mark.manual_scores(self.out, cell) if known is None else known
            return {s: scores.get(s) for s in self.cell_answers(cell)}
        rubric = self.rubrics().get(cell)
        found = {}
        for student, answer in self.cell_answers(cell).items():
            m = marks.get(answer.key)
            derived = mark.derive(m, answer, rubric) if m is not None and m.items is not None else None
            found[student] = derived[0] if isinstance(derived, tuple) else None
        return found

    def state(
        self, cell: tuple[str, str], marks: dict | None = None, only: set[str] | None = None, known: dict | None = None
    ) -> dict:
        """What the page shows of a question now: each answer's score, mark and version (of the students `only`,
        when given: a reply to a change); graded n of N."""
        marks = self.marks() if marks is None else marks
        scores = self.scores(cell, marks, known)
        answers = self.cell_answers(cell)
        found = {}
        for student, answer in answers.items():
            if only is not None and student not in only:
                continue
            m = marks.get(answer.key)
            live = m is not None and m.items is not None
            found[pseudonym(student)] = {
                "score": 0.0 if scores[student] is None and answer.blank else scores[student],
                "items": list(m.items) if live else [],
                "adjustment": m.adjustment if live else 0.0,
                "comment": m.comment if live else "",
                "version": mark_version(m),
                "by": m.grader if m else "",
            }
        graded = sum(1 for s, a in answers.items() if scores[s] is not None or a.blank)
        return {"answers": found, "graded": graded, "total": len(answers), "regrades": self.open_regrades(cell)}

    def open_regrades(self, cell: tuple[str, str]) -> dict[str, str]:
        """{pseudonym: reason} of the open regrade requests of a question (none for a second grader)."""
        if self.second is not None:
            return {}
        return {
            pseudonym(key[0]): entry["reason"]
            for key, entry in mark.read_regrades(self.out).items()
            if key[1:] == cell and entry["status"] == "open"
        }

    def resolve(self, cell: tuple[str, str], shown: str, why) -> tuple[int, dict]:
        """Close an answer's regrade request: "changed" when its score differs from the one it was asked about,
        else "kept", with who and why, in OUT/regrades.jsonl."""
        answer = self.by_pseudonym(cell).get(shown)
        if answer is None or not isinstance(why, str) or not why.strip():
            return 400, {"error": "resolving a regrade request needs the answer and why"}
        with self.lock, mark.locked(self.out):
            request = mark.read_regrades(self.out).get(answer.key)
            if not request or request["status"] != "open":
                return 409, {"error": "no open regrade request for this answer"}
            score = self.scores(cell, self.marks())[answer.student]
            status = "kept" if score == request.get("score") else "changed"
            entry = dict(request, status=status, score_before=request.get("score"), score_after=score)
            entry.update(why=why.strip(), by=self.grader, at=mark.now())
            mark.append_regrades(self.out, [entry])
        return 200, self.state(cell)

    def apply(self, cell: tuple[str, str], changes: list[dict]) -> tuple[int, dict]:
        """Write the marks of `changes` ({student, items, adjustment, comment, version}) if every answer's mark is
        still the version the page saw; otherwise write nothing and return 409 with those answers' marks now."""
        found = self.rubrics()
        rubric = found.get(cell)
        if rubric is None:
            return 404, {"error": f"no rubric for {cell[0]}/{cell[1]}"}
        answers = self.by_pseudonym(cell)
        points = self._points(cell)
        shown_twice = {s for s in (c.get("student") for c in changes) if isinstance(s, str)}
        if len(shown_twice) != len(changes):
            return 400, {"error": "each answer may be changed once a request"}
        with self.lock, mark.locked(self.out):
            marks = self.marks()
            new, stale = [], []
            for change in changes:
                shown = change.get("student")
                answer = answers.get(shown) if isinstance(shown, str) else None
                if answer is None:
                    return 400, {"error": f"no answer of {shown!r} to {cell[0]}/{cell[1]}"}
                items = change.get("items") or ()
                if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
                    return 400, {"error": "items should be a list of item ids"}
                items = tuple(items)
                if rubrics.unknown(rubric, items):
                    return 400, {"error": f"unknown item(s) for {cell[0]}/{cell[1]}: {list(items)}"}
                if len(set(items)) != len(items):
                    return 400, {"error": f"an item appears twice in {list(items)}"}
                adjustment, comment = change.get("adjustment", 0), change.get("comment", "")
                try:
                    finite = math.isfinite(float(adjustment))
                except (TypeError, ValueError, OverflowError):
                    finite = False
                if not isinstance(adjustment, int | float) or isinstance(adjustment, bool) or not finite:
                    return 400, {"error": "adjustment should be a number of points"}
                if abs(adjustment) > points:
                    return 400, {"error": f"an adjustment is at most the cell's {points:g} points either way"}
                if answer.blank and (items or adjustment):
                    return 400, {"error": f"{shown}'s answer is blank and scores 0 by itself: no items or adjustment "
                                 "apply"}  # fmt: skip
                if not isinstance(comment, str) or len(comment) > mark.MAX_COMMENT or "\x00" in comment:
                    return 400, {"error": f"a comment should be text of at most {mark.MAX_COMMENT:,} characters"}
                if change.get("version", "") != mark_version(marks.get(answer.key)):
                    stale.append(shown)
                    continue
                at = mark.now()
                new.append(
                    mark.Mark(
                        *answer.key,
                        items,
                        float(adjustment),
                        comment,
                        self.grader,
                        at,
                        mark.digest(answer.text),
                        second=self.second is not None,
                    )
                )
            if stale:
                now = self.state(cell, marks, only={answers[s].student for s in stale})["answers"]
                told = [f"{s}: {said_by(marks[answers[s].key], rubric, points)}" for s in stale]
                return 409, {
                    "error": f"{'; '.join(told)}, after you loaded the page: your change was not saved, and the page "
                    "now shows that grade",
                    "now": {s: now[s] for s in stale},
                }
            if self.second is None:  # pages noted before the log holds the mark: a kill never leaves them stale
                pages.note(self.out, {m.key[:2] for m in new})
            mark.append_log(self.out, new)
            if self.second is None:  # second marks never reach the gradebook
                self._derive(found, cell, {m.key for m in new})
        return 200, self.state(cell, only={m.student for m in new})

    def edit_item(self, cell: tuple[str, str], item_id: str, points, text) -> tuple[int, dict]:
        """Change an item's points and text in rubrics.toml, then re-score every answer."""
        if (
            not isinstance(points, int | float)
            or isinstance(points, bool)
            or not math.isfinite(points)
            or not isinstance(text, str)
            or not isinstance(item_id, str)
        ):
            return 400, {"error": "an item edit needs the item, its points as a number and its text"}
        with self.lock, mark.locked(self.out):
            old = self.rubric_path.read_text(encoding="utf-8")
            try:
                edited = rubrics.edit_item(old, *cell, item_id, float(points), text)
                problems = rubrics.problems(rubrics.parse(edited), {cell[0]: {cell[1]: self._points(cell)}})
            except rubrics.RubricError as exc:
                return 400, {"error": str(exc)}
            problems = [p for p in problems if p.startswith(f"{cell[0]}/{cell[1]}:")]
            if problems:
                return 400, {"error": problems[0]}
            mark.note_rubric_changes(self.out, self.rubrics())  # an edit of the file before this one, logged as such
            rewrite(self.rubric_path, edited)
            mark.note_rubric_changes(self.out, rubrics.parse(edited), by=self.grader)
            having = {k for k, m in self.marks().items() if k[1:] == cell and m.items and item_id in m.items}
            self._derive(self.rubrics(), cell, having)
        return 200, self.state(cell)

    def outputs(self, cell: tuple[str, str], shown: str) -> list[dict] | None:
        """The own-run outputs above the question in the notebook of the student shown as `shown` (inert)."""
        answer = self.by_pseudonym(cell).get(shown)
        if answer is None:
            return None
        path = Results(self.out).autograded_path(answer.student, cell[0])
        notebook = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        return inert(own_outputs(notebook, cell[1]))

    def _points(self, cell) -> float:
        return next(a.points for a in self.answers.values() if (a.notebook, a.grade_id) == cell)

    def _derive(self, found, cell: tuple[str, str], touched: set[mark.Key]) -> None:
        """The gradebook from the log for the answers `touched` of one question (mark.sync notes the pages it changes
        in marking.pages first, so a kill before they are rendered again leaves them to the next start)."""
        for attempt in range(BUSY_TRIES):
            try:
                lines, changed = mark.sync(self.out, found, self.answers, csvs=False, cell=cell, keys=touched)
                break
            except sqlite3.OperationalError:  # locked past its 30 s by another writer: the log holds the mark
                if attempt == BUSY_TRIES - 1:
                    raise
                time.sleep(1)
        for line in lines:
            print(line, flush=True)
        with self.refreshing:
            self.pending |= {key[:2] for key in touched | changed}
            self.refreshing.notify_all()

    def _refresh(self) -> None:
        """Render the pages whose marks changed, and grades.csv, as marks come in: in a process of its own at a
        lower priority (marking.refresh), so a class's worth of pages never slows the TA's clicks."""
        while True:
            with self.refreshing:
                while not self.pending:
                    self.refreshing.wait()
                self.pending, self.busy = set(), True
            try:
                process = _spawn.Process(target=refresh.refresh, args=(str(self.out), str(self.rubric_path.parent)))
                process.start()
                process.join()
                if process.exitcode:
                    print(f"mark: pages: the refresh ended with exit {process.exitcode}; the journal keeps them for "
                          "the next mark, start or `feedback OUT`", flush=True)  # fmt: skip
            except OSError as exc:  # the journal keeps the pages: the next mark or start renders them
                print(f"mark: pages not re-rendered ({one_line(exc, 200)}); `feedback OUT` renders them", flush=True)
            with self.refreshing:
                self.busy = False
                self.refreshing.notify_all()

    def settle(self, timeout: float = 300) -> bool:
        """Wait until grades.csv and the pages show every mark made so far; False if they did not in time."""
        with self.refreshing:
            return self.refreshing.wait_for(lambda: not self.pending and not self.busy, timeout)

    def suggestions(self, cell: tuple[str, str]) -> dict:
        """The suggester's view of a question's answers still to grade (marking.suggest), for the page: {"answers":
        {pseudonym: {"items", "confidence", "like"}}, "next": pseudonyms to grade, least certain first}. Learned
        again from the marks as they are now (the features once per question and rubric); the suggestions shown are
        logged (mark.log_suggestions) so that --status can say how often TAs accepted them. A second grader, who
        marks blind, gets none."""
        from autograder.marking import suggest as suggesting

        if self.second is not None:
            return {"answers": {}, "next": [], "rubric": None}
        rubric = self.rubrics()[cell]
        key = (cell, rubric.stamp)
        with self.suggesting:
            if key not in self._suggesters:
                mine = self.cell_answers(cell)
                texts = {s: a.typed for s, a in mine.items() if not a.blank}
                points = self._points(cell)
                try:
                    engine = suggesting.Suggester(texts, rubric, points, self.encoder, self.cache)
                except (ImportError, OSError):  # no MiniLM: words still suggest
                    engine = suggesting.Suggester(texts, rubric, points, "tfidf")
                self._suggesters = {key: engine}  # one question and rubric at a time: the one being graded
            engine = self._suggesters[key]
        answers = {a.key: a for a in self.cell_answers(cell).values()}
        live = mark.live_marks(self.out, cell, answers, rubric)
        made = engine.suggest(live)
        shown = {pseudonym(s): {"items": None if g.items is None else list(g.items), "confidence": g.confidence,
                                "like": pseudonym(g.like) if g.like else ""} for s, g in made.items()}  # fmt: skip
        order = sorted(made, key=lambda s: (made[s].items is not None, made[s].confidence or 0.0, pseudonym(s)))
        mark.log_suggestions(self.out, cell, {s: g.items for s, g in made.items()}, rubric.stamp, self.grader)
        return {"answers": shown, "next": [pseudonym(s) for s in order], "rubric": rubric.stamp}

    def index_rows(self) -> list[dict]:
        """The index's rows: each question with answers, how far it is, open regrades and, for the first grader or
        once the blind sample is done, the two graders' agreement."""
        found = self.rubrics()
        marks = self.marks()
        known = mark.manual_scores(self.out) if self.second is None else {}
        states = {cell: self.state(cell, marks, known=known.get(cell, {})) for cell in found if self.cell_answers(cell)}
        sample_done = all(s["graded"] == s["total"] for s in states.values())
        agreed = mark.agreement(found, self.answers, self.out) if self.second is None or sample_done else {}
        rows = []
        for cell, state in states.items():
            notes = [f"graded {state['graded']} of {state['total']}"]
            flagged = sum(1 for a in self.cell_answers(cell).values() if a.flag)
            if flagged:
                notes.append(f"{flagged} found in an added cell")
            if state["regrades"]:
                notes.append(f"{len(state['regrades'])} regrade request(s) open")
            if cell in agreed:
                n, kappa, gap = agreed[cell]
                shown = "n/a" if kappa is None else f"{kappa:.2f}"
                notes.append(f"agreement on {n} double-marked: kappa {shown}, mean |score difference| {gap:.2f}")
            rows.append({"notebook": cell[0], "grade_id": cell[1], "notes": " · ".join(notes)})
        return rows

    def question_view(self, cell: tuple[str, str], names: bool, start: int = 0, count: int | None = None) -> dict:
        """What the question's templates show: the rubric, the answers `start` to `start + count` in their groups
        (a page draws the next ones when asked), the regrade queue, and the data the page's script starts from:
        every answer's state and every group's members, so a group action reaches answers not drawn yet."""
        rubric = self.rubrics()[cell]
        answers = self.cell_answers(cell)
        requests = self.open_regrades(cell)
        grouped = self.grouped(cell, PATIENCE)
        waiting = grouped is None  # still grouping by meaning: open now with groups by words
        if waiting:
            grouped = self.provisional(cell)
        ordered = [(group.name, student) for group in grouped for student in group.students]
        count = PAGE if count is None else count
        sizes = {g.name: len(g.students) for g in grouped}
        kinds = {g.name: g.kind for g in grouped}
        groups: list[dict] = []
        for name, student in ordered[start : start + count]:
            if not groups or groups[-1]["name"] != name:
                continued = not groups and start > 0 and ordered[start - 1][0] == name
                groups.append({"name": name, "size": sizes[name], "cards": [], "continued": continued,
                               "blank": kinds[name] == "blank"})  # fmt: skip
            text = answers[student].typed
            shown = text[:SHOWN] + (f"\n[cut: {len(text):,} characters in all]" if len(text) > SHOWN else "")
            who = pseudonym(student)
            groups[-1]["cards"].append({"id": who, "name": student if names else who, "text": shown,
                                        "regrade": requests.get(who), "flag": answers[student].flag})  # fmt: skip
        following = start + count if start + count < len(ordered) else None
        points = self._points(cell)
        data = {"notebook": cell[0], "grade_id": cell[1], "points": points, "items": rubric.ids, "waiting": waiting,
                "rubric": rubric.stamp, "groups": [g.name for g in grouped], "names": names,
                "members": {g.name: [pseudonym(s) for s in g.students] for g in grouped}}  # fmt: skip
        return {
            "cell": cell, "points": points, "rubric": rubric, "groups": groups, "waiting": waiting, "names": names,
            "second": self.second is not None, "total": len(answers), "requests": sorted(requests.items()),
            "data": data, "state": self.state(cell) if start == 0 else {}, "following": following,
            "left": len(ordered) - (following or len(ordered)),
        }  # fmt: skip


def rubric_problems(found: rubrics.Rubrics, answers: dict[mark.Key, mark.Answer], source: Path) -> list[str]:
    """What `build --check` would refuse in the rubrics `mark` is about to score with: against the source notebooks
    when `source` holds them, else against the cells graded in OUT."""
    from autograder.content import build

    if any(Path(source).glob("*.ipynb")):
        return build.rubric_problems(source)
    written: dict[str, dict[str, float]] = {}
    for a in answers.values():
        written.setdefault(a.notebook, {})[a.grade_id] = a.points
    # a check cell's rubric (the caption's) is used only when its check cannot decide: no answer in OUT may need it
    checked = {nb: {gid: sum(i.points for i in r.items if i.points > 0)} for (nb, gid), r in found.items()
               if check_id(gid) != gid and gid not in written.get(nb, {})}  # fmt: skip
    return rubrics.problems(found, written, checked)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(
    *,
    out: Path,
    export: Path | None = None,
    import_csv: Path | None = None,
    groups: str | None = None,
    output: Path | None = None,
    rubric: str | None = None,
    grader: str | None = None,
    encoder: str = "minilm",
    double: str | None = None,
    second: bool = False,
    regrades: Path | None = None,
    status: bool = False,
    suggest: str | None = None,
    serve: bool = False,
    port: int = 8891,
    browser: bool = True,
    allow_host: tuple[str, ...] = (),
    source: Path = paths.SOURCE,
) -> int:
    """`mark`: reports.mark.main with these options, then, when none of --status, --export, --import, --regrades,
    --groups, --rubric or --suggest was given (or --serve was), the page. Returns the exit status."""
    import getpass

    grader = grader or getpass.getuser()
    try:
        found = rubrics.load(Path(source) / rubrics.FILENAME)
    except rubrics.RubricError as exc:
        print(f"mark: {one_line(exc.args[0], 300)}", file=sys.stderr)
        return 1
    if Path(out, "gradebook.db").exists():
        problems = rubric_problems(found, mark.collect(Path(out)), source)
        if problems:
            more = f" (and {len(problems) - 1} more: `build --check` lists them)" if len(problems) > 1 else ""
            print(f"mark: {rubrics.FILENAME}: {problems[0]}{more}; nothing scored", file=sys.stderr)
            return 1
    options = dict(export=export, import_csv=import_csv, groups=groups, output=output, rubric=rubric, double=double)
    options.update(second=second, regrades=regrades, status=status, suggest=suggest)
    try:
        code = mark.main(out=out, grader=grader, encoder=encoder, source=source, **options)
    except sqlite3.OperationalError as exc:
        print(f"mark: the gradebook is busy or unreadable ({one_line(exc, 120)}): try again", file=sys.stderr)
        return 1
    asked = status or export or import_csv or regrades or groups or rubric or suggest  # something other than the page
    if code or (asked and not serve):
        return code
    if second:  # a second grader's page: the double-marked sample, blind
        if double is None:
            print("mark: --second on the page needs --double SHARE, the sample to mark (e.g. 10%)", file=sys.stderr)
            return 1
        sample = mark.double_sample(mark.collect(Path(out)), mark.share(double))
        return serve_page(Marking(out, source, grader, encoder, second=sample), port, browser, allow_host)
    return serve_page(Marking(out, source, grader, encoder), port, browser, allow_host)


def serve_page(marking: Marking, port: int, browser: bool, allow_host: tuple[str, ...] = ()) -> int:
    """Serve until interrupted; every mark is on disk before the page is told it was saved."""
    from autograder.marking import web

    try:
        served = web.Served(marking, port, allow_hosts=allow_host)
    except OSError as exc:
        marking.close()
        print(f"mark: cannot serve the page: {one_line(exc, 200)}", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, _interrupt)  # a plain kill stops it as Ctrl-C does, pages brought up to date
    if served.moved:
        print(f"mark: port {port} is in use; serving on {served.port}", flush=True)
    print(f"grading by question at {served.url}  (Ctrl-C to stop; every mark is saved as it is made)", flush=True)
    if browser:
        webbrowser.open(served.url)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        served.stop()
        marking.close()
        marking.settle()
    return 0
