"""The grading-by-question page of `python -m autograder mark OUT`: on 127.0.0.1, behind a token, one page
per written question with every student's answer, grouped (marking.groups), and the rubric's items as toggles on
an answer or on a whole group (mouse or keyboard). Students are shown under a stable pseudonym unless the TA asks
for names. Every change goes through marking.mark: appended to OUT/marks.jsonl, derived into the gradebook,
grades.csv and the students' feedback pages at once. Editing an item's points or text rewrites that item in
rubrics.toml and re-scores every answer that has it.

Answers are untrusted: the page shows them as escaped text under a Content-Security-Policy that runs only the
page's own script. A write names the mark it replaces; when another grader has marked the answer since the page
was loaded, the write is refused and the page shows the other grade.
"""

import functools
import hashlib
import html
import json
import math
import os
import re
import secrets
import signal
import sys
import threading
import urllib.parse
import webbrowser
from http import HTTPStatus
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from autograder import contract, paths, rubrics
from autograder.files import atomic_write
from autograder.marking import mark
from autograder.marking.groups import EmbeddingCache, Group, Preempted, group_answers, regroup, torch_threads
from autograder.records import Results
from autograder.text import one_line

SHOWN = 20_000  # characters of an answer shown on the page (a 5 MB paste is cut, and says so)
EMBEDDINGS = "mark_embeddings.npz"  # in OUT: the MiniLM rows of answers already encoded (groups.EmbeddingCache)
SECOND_ONLY_MARKS = "a second grader marks the sample against the rubric as it is: moves, regrades and item edits are the first grader's"
PATIENCE = 1.0  # seconds a page waits for its groups by meaning before it opens with groups by words
MAX_BODY = 1_000_000


@functools.lru_cache(maxsize=None)
def pseudonym(student: str) -> str:
    """A stable stand-in for a student's name on the page (the same in every session); the page knows students by
    it alone, names are shown only as text on request."""
    return "student " + hashlib.sha256(student.encode()).hexdigest()[:10]


def mark_version(m: mark.Mark | None) -> str:
    """What a page says it saw of an answer's mark: '' for none."""
    return "" if m is None else f"{m.at} {m.grader}"


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


def outputs_html(found: list[tuple[str, list[dict]]]) -> str:
    """The outputs as inert HTML: text escaped, PNG and JPEG images as data URLs, nothing else."""
    e = html.escape
    parts = []
    for cell, outputs in found:
        shown = []
        for o in outputs:
            data = o.get("data") or {}
            for kind in ("image/png", "image/jpeg"):
                image = "".join(data.get(kind) or "")
                if image and BASE64.fullmatch(image):
                    shown.append(f'<img alt="{e(cell)}" src="data:{kind};base64,{e(image)}">')
                    break
            else:
                text = "".join(o.get("text") or data.get("text/plain") or "")
                if text:
                    shown.append(f"<pre>{e(text[:SHOWN])}</pre>")
        parts.append(f"<div><b>{e(cell)}</b>{''.join(shown)}</div>")
    return "".join(parts) or "<i>no outputs of their own run were submitted above this question</i>"


class Marking:
    """The state one server shares between requests: OUT, the rubric file, the grader and the answer groups."""

    def __init__(self, out: Path, source: Path, grader: str, encoder: str, second: set[mark.Key] | None = None):
        """`second`: the double-marked sample (mark.double_sample) that this grader marks blind, as a second
        grader whose marks feed the agreement figures only (None: the marks that are the grades)."""
        self.out, self.rubric_path, self.grader, self.encoder = (
            Path(out),
            Path(source) / rubrics.FILENAME,
            grader,
            encoder,
        )
        self.second = second
        self.lock = threading.Lock()  # one write at a time: the log, the gradebook and rubrics.toml
        found = mark.collect(self.out)
        self.answers = found if second is None else {k: a for k, a in found.items() if k in second}
        # every question is grouped in the background from the start, the one a page waits for first; answers
        # encoded once are kept in OUT (groups.EmbeddingCache), so a restarted page groups in a moment
        self.cache = EmbeddingCache(self.out / EMBEDDINGS, self._preempt) if encoder == "minilm" else None
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

    def rubrics(self) -> rubrics.Rubrics:
        return rubrics.load(self.rubric_path)

    @property
    def answers(self) -> dict[mark.Key, mark.Answer]:
        return self._answers

    @answers.setter
    def answers(self, found: dict[mark.Key, mark.Answer]) -> None:
        self._answers, self._by_cell = found, {}

    def cell_answers(self, cell: tuple[str, str]) -> dict[str, mark.Answer]:
        """{student: answer} of one question (kept: a page asks for them on every change)."""
        if cell not in self._by_cell:
            self._by_cell[cell] = {a.student: a for a in self.answers.values() if (a.notebook, a.grade_id) == cell}
        return self._by_cell[cell]

    def by_pseudonym(self, cell: tuple[str, str]) -> dict[str, mark.Answer]:
        """The answers to a question by the pseudonym the page knows each student by."""
        return {pseudonym(s): a for s, a in self.cell_answers(cell).items()}

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
        texts = {s: a.text for s, a in self.cell_answers(cell).items()}
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
        """Groups by shared words, for a page asked for before its groups by meaning are ready."""
        return self._group(cell, "tfidf")

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
            atomic_write(self.out / mark.MOVES, json.dumps(moves, ensure_ascii=False, indent=1, sort_keys=True))
        return 200, {"group": group}

    def marks(self) -> dict[mark.Key, mark.Mark]:
        """The latest marks this page shows and replaces: the grades, or a second grader's own marks (blind)."""
        return mark.read_second(self.out) if self.second is not None else mark.read_log(self.out)[0]

    def scores(self, cell: tuple[str, str], marks: dict[mark.Key, mark.Mark]) -> dict[str, float | None]:
        """{student: score} of a question: the gradebook's, or for second marks the score their items give."""
        if self.second is None:
            scores = mark.manual_scores(self.out, cell)
            return {s: scores.get(s) for s in self.cell_answers(cell)}
        rubric = self.rubrics().get(cell)
        found = {}
        for student, answer in self.cell_answers(cell).items():
            m = marks.get(answer.key)
            derived = mark.derive(m, answer, rubric) if m is not None and m.items is not None else None
            found[student] = derived[0] if isinstance(derived, tuple) else None
        return found

    def state(self, cell: tuple[str, str]) -> dict:
        """What the page shows of a question now: each answer's score, mark and version; graded n of N."""
        marks = self.marks()
        scores = self.scores(cell, marks)
        answers = self.cell_answers(cell)
        found = {}
        for student, answer in answers.items():
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
        with self.lock, mark.locked(self.out):
            marks = self.marks()
            new, stale = [], []
            for change in changes:
                shown = change.get("student")
                answer = answers.get(shown) if isinstance(shown, str) else None
                if answer is None:
                    return 400, {"error": f"no answer of {shown!r} to {cell[0]}/{cell[1]}"}
                items = tuple(change.get("items") or ())
                if rubrics.unknown(rubric, items) or not all(isinstance(i, str) for i in items):
                    return 400, {"error": f"unknown item(s) for {cell[0]}/{cell[1]}: {list(items)}"}
                adjustment, comment = change.get("adjustment", 0), change.get("comment", "")
                if (
                    not isinstance(adjustment, int | float)
                    or isinstance(adjustment, bool)
                    or not math.isfinite(adjustment)
                ):
                    return 400, {"error": "adjustment should be a number of points"}
                if not isinstance(comment, str):
                    return 400, {"error": "comment should be text"}
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
                now = self.state(cell)["answers"]
                return 409, {
                    "error": "marked by someone else since you loaded the page",
                    "now": {s: now[s] for s in stale},
                }
            mark.append_log(self.out, new)
            if self.second is None:  # second marks never reach the gradebook
                self._derive(found, cell)
        return 200, self.state(cell)

    def edit_item(self, cell: tuple[str, str], item_id: str, points, text) -> tuple[int, dict]:
        """Change an item's points and text in rubrics.toml, then re-score every answer."""
        if not isinstance(points, int | float) or isinstance(points, bool) or not isinstance(text, str):
            return 400, {"error": "points should be a number and text a string"}
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
            atomic_write(self.rubric_path, edited)
            self._derive(self.rubrics(), cell)
        return 200, self.state(cell)

    def outputs(self, cell: tuple[str, str], shown: str) -> str | None:
        """The HTML of the own-run outputs above the question in the notebook of the student shown as `shown`."""
        answer = self.by_pseudonym(cell).get(shown)
        if answer is None:
            return None
        path = Results(self.out).autograded_path(answer.student, cell[0])
        notebook = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        return outputs_html(own_outputs(notebook, cell[1]))

    def _points(self, cell) -> float:
        return next(a.points for a in self.answers.values() if (a.notebook, a.grade_id) == cell)

    def _derive(self, found, cell: tuple[str, str]) -> None:
        lines, changed = mark.sync(self.out, found, self.answers, csvs=False, cell=cell)
        for line in lines:
            print(line, flush=True)
        if changed:
            with self.refreshing:
                self.pending |= {key[:2] for key in changed}
                self.refreshing.notify_all()

    def _refresh(self) -> None:
        """Re-render the pages whose marks changed (those notebooks of those students), and grades.csv, as marks come
        in."""
        from autograder.reports.feedback import rerender

        while True:
            with self.refreshing:
                while not self.pending:
                    self.refreshing.wait()
                pages, self.pending, self.busy = self.pending, set(), True
            students, notebooks = {s for s, _ in pages}, {nb for _, nb in pages}
            try:
                rerender(self.out, students=students, source=self.rubric_path.parent, notebooks=notebooks)
            except Exception as exc:  # a page that fails to render must not stop the others; `feedback` redoes all
                print(f"mark: pages of {len(students)} student(s) not re-rendered: {one_line(exc, 200)}", flush=True)
            with self.refreshing:
                self.busy = False
                self.refreshing.notify_all()

    def settle(self, timeout: float = 300) -> bool:
        """Wait until grades.csv and the pages show every mark made so far; False if they did not in time."""
        with self.refreshing:
            return self.refreshing.wait_for(lambda: not self.pending and not self.busy, timeout)


STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 70em; padding: 0 1em; }
.answer { border: 1px solid #ccc; border-radius: 6px; padding: .6em .8em; margin: .5em 0; }
.answer:focus { outline: 3px solid #4a7; }
.answer.regrade { border: 2px solid #c70; }
#regrades { border: 2px solid #c70; padding: .3em .8em; margin: .8em 0; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f7; padding: .4em; margin: .3em 0; }
.group { border-left: 4px solid #8ab; padding-left: .8em; margin: 1.2em 0; }
.score { font-weight: bold; float: right; }
.items label { margin-right: 1em; white-space: nowrap; }
table.rubric td { vertical-align: top; padding: .2em .4em; }
.note { color: #666; font-size: 90%; }
details.outputs img { max-width: 45em; display: block; }
details.outputs pre { max-height: 20em; overflow: auto; background: #f3f3f3; }
#status { position: sticky; top: 0; background: #fff; padding: .3em 0; border-bottom: 1px solid #ddd; }
"""

SCRIPT = r"""
const cell = JSON.parse(document.getElementById("cell").textContent);
const token = document.querySelector("meta[name=a3-token]").content;
async function post(path, body) {
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json", "X-A3-Token": token},
                               body: JSON.stringify(body)});
  return [r.status, await r.json()];
}
function show(state) {
  document.getElementById("graded").textContent = `graded ${state.graded} of ${state.total}`;
  for (const [student, a] of Object.entries(state.answers)) {
    const el = document.querySelector(`.answer[data-student="${CSS.escape(student)}"]`);
    if (!el) continue;
    el.dataset.version = a.version;
    el.querySelector(".score").textContent = (a.score === null ? "to grade" : a.score) + " / " + cell.points;
    el.querySelectorAll("input.item").forEach(box => { box.checked = a.items.includes(box.value); });
    el.querySelector("input.adj").value = a.adjustment;
    el.querySelector("input.comment").value = a.comment;
  }
}
function change(el, items) {
  return {student: el.dataset.student, version: el.dataset.version, items: items,
          adjustment: parseFloat(el.querySelector("input.adj").value || "0"),
          comment: el.querySelector("input.comment").value};
}
function checked(el) { return [...el.querySelectorAll("input.item:checked")].map(b => b.value); }
async function save(changes) {
  const [status, body] = await post("/api/mark", {notebook: cell.notebook, grade_id: cell.grade_id, marks: changes});
  const message = document.getElementById("message");
  if (status === 200) { message.textContent = ""; show(body); return; }
  message.textContent = body.error + (body.now ? ": " + JSON.stringify(body.now) : "");
  if (body.now) show({answers: body.now, graded: "?", total: "?"});
}
async function toggleGroup(group, item) {
  const answers = [...group.querySelectorAll(".answer")];
  const on = !answers.every(el => checked(el).includes(item));
  await save(answers.map(el => change(el, on ? [...new Set([...checked(el), item])] : checked(el).filter(i => i !== item))));
}
document.addEventListener("change", e => {
  const el = e.target.closest(".answer");
  if (!el) return;
  if (e.target.matches("select.move")) {
    post("/api/move", {notebook: cell.notebook, grade_id: cell.grade_id, student: el.dataset.student,
                       group: e.target.value})
      .then(([status, body]) => { if (status === 200) location.reload();
                                  else document.getElementById("message").textContent = body.error; });
    return;
  }
  save([change(el, checked(el))]);
});
document.addEventListener("click", e => {
  const b = e.target.closest("button.group-item");
  if (b) toggleGroup(b.closest(".group"), b.dataset.item);
  const resolve = e.target.closest("button.resolve");
  if (resolve) {
    const el = resolve.closest(".answer");
    post("/api/regrade", {notebook: cell.notebook, grade_id: cell.grade_id, student: el.dataset.student,
                          why: el.querySelector("input.why").value})
      .then(([status, body]) => { if (status === 200) location.reload();
                                  else document.getElementById("message").textContent = body.error; });
  }
  const edit = e.target.closest("button.edit-item");
  if (edit) {
    const row = edit.closest("tr");
    post("/api/item", {notebook: cell.notebook, grade_id: cell.grade_id, item: edit.dataset.item,
                       points: parseFloat(row.querySelector("input.points").value),
                       text: row.querySelector("input.text").value})
      .then(([status, body]) => { if (status === 200) location.reload();
                                  else document.getElementById("message").textContent = body.error; });
  }
});
document.addEventListener("keydown", e => {
  if (e.target.matches("input")) return;
  const all = [...document.querySelectorAll(".answer")];
  const here = document.activeElement.closest ? document.activeElement.closest(".answer") : null;
  if (e.key === "j" || e.key === "k") {
    const i = here ? all.indexOf(here) + (e.key === "j" ? 1 : -1) : 0;
    if (all[i]) all[i].focus();
    e.preventDefault();
  }
  const digit = /^Digit([1-9])$/.exec(e.code);
  if (digit && here) {
    const item = cell.items[parseInt(digit[1]) - 1];
    if (!item) return;
    if (e.shiftKey) toggleGroup(here.closest(".group"), item);
    else save([change(here, checked(here).includes(item) ? checked(here).filter(i => i !== item) : [...checked(here), item])]);
    e.preventDefault();
  }
});
document.addEventListener("toggle", async e => {
  const d = e.target;
  if (!d.matches || !d.matches("details.outputs") || !d.open || d.dataset.loaded) return;
  const who = d.closest(".answer").dataset.student;
  const r = await fetch(`/outputs/${encodeURIComponent(cell.notebook)}/${encodeURIComponent(cell.grade_id)}/${encodeURIComponent(who)}`);
  const box = document.createElement("div");
  box.innerHTML = await r.text();  // built by the server from escaped text and checked base64 images only
  d.appendChild(box);
  d.dataset.loaded = "1";
}, true);
show(JSON.parse(document.getElementById("state").textContent));
if (cell.waiting) {
  const poll = setInterval(async () => {
    const r = await fetch(`/api/ready/${encodeURIComponent(cell.notebook)}/${encodeURIComponent(cell.grade_id)}`);
    if (!r.ok || !(await r.json()).ready) return;
    clearInterval(poll);
    if (document.activeElement && document.activeElement.matches("input")) {  // never lose what is being typed
      document.getElementById("grouping").textContent = "The groups by meaning are ready: reload the page to see them.";
    } else {
      location.reload();
    }
  }, 2000);
}
"""


def _json_script(id_: str, value) -> str:
    text = json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{id_}">{text}</script>'


def _page(title: str, body: str, token: str, nonce: str, data: str = "", script: bool = False) -> str:
    e = html.escape
    code = f'<script nonce="{nonce}">{SCRIPT}</script>' if script else ""
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="a3-token" content="{e(token)}">'
        f'<title>{e(title)}</title><style nonce="{nonce}">{STYLE}</style></head>'
        f"<body><main>{body}</main>{data}{code}</body></html>"
    )


def index_page(marking: Marking, token: str, nonce: str) -> str:
    """Every question with answers: how many are graded, open regrade requests, two graders' agreement."""
    e = html.escape
    found = marking.rubrics()
    agreed = mark.agreement(found, marking.answers, marking.out)
    rows = []
    for cell in found:
        state = marking.state(cell)
        if not state["total"]:
            continue
        notes = [f"graded {state['graded']} of {state['total']}"]
        if state["regrades"]:
            notes.append(f"{len(state['regrades'])} regrade request(s) open")
        if cell in agreed:
            n, kappa, gap = agreed[cell]
            shown = "n/a" if kappa is None else f"{kappa:.2f}"
            notes.append(f"agreement on {n} double-marked: kappa {shown}, mean |score difference| {gap:.2f}")
        href = f"/q/{urllib.parse.quote(cell[0])}/{urllib.parse.quote(cell[1])}"
        rows.append(f'<li><a href="{href}">{e(cell[0])}/{e(cell[1])}</a>: {e(" · ".join(notes))}</li>')
    title = "Second marking, blind, by question" if marking.second is not None else "Written answers by question"
    return _page("written answers", f"<h1>{title}</h1><ul>{''.join(rows)}</ul>", token, nonce)


def question_page(marking: Marking, cell: tuple[str, str], names: bool, token: str, nonce: str) -> str:
    e = html.escape
    rubric = marking.rubrics()[cell]
    answers = marking.cell_answers(cell)
    points = marking._points(cell)
    requests = marking.open_regrades(cell)
    second = marking.second is not None  # a second grader marks blind against the rubric as it is
    keys = "".join(
        (
            f'<tr><td>{n}</td><td>{e(i.id)}</td><td>{i.points:g}</td><td>{e(i.text)}<div class="note">{e(i.note)}</div>'
            "</td><td></td></tr>"
            if second
            else f'<tr><td>{n}</td><td>{e(i.id)}</td><td><input class="points" size="5" value="{i.points:g}" '
            f'aria-label="points of item {e(i.id)}"></td>'
            f'<td><input class="text" type="text" size="90" value="{e(i.text)}" aria-label="text of item {e(i.id)}">'
            f'<div class="note">{e(i.note)}</div></td>'
            f'<td><button class="edit-item" data-item="{e(i.id)}">save item</button></td></tr>'
        )
        for n, i in enumerate(rubric.items, 1)
    )
    groups = []
    grouped = marking.grouped(cell, PATIENCE)
    waiting = grouped is None  # still grouping by meaning: open now with groups by words
    if waiting:
        grouped = marking.provisional(cell)
    for group in grouped:
        buttons = "".join(
            f'<button class="group-item" data-item="{e(i.id)}">{e(i.id)} ({i.points:+g})</button> '
            for i in rubric.items
        )
        moves = "".join(f'<option value="{e(g.name)}">{e(g.name)}</option>' for g in grouped if g is not group)
        cards = []
        for student in group.students:
            answer = answers[student]
            shown = answer.text[:SHOWN] + (
                f"\n[cut: {len(answer.text):,} characters in all]" if len(answer.text) > SHOWN else ""
            )
            boxes = "".join(
                f'<label><input type="checkbox" class="item" value="{e(i.id)}"> {e(i.id)} ({i.points:+g})</label>'
                for i in rubric.items
            )
            who = student if names else pseudonym(student)
            request = requests.get(pseudonym(student))
            regrade = (
                f'<div class="request">regrade requested: {e(request)} — why this grade: '
                f'<input class="why" type="text" size="50" aria-label="why this grade"> <button class="resolve">resolve</button></div>'
                if request
                else ""
            )
            cards.append(
                f'<div class="answer{" regrade" if request else ""}" id="{e(pseudonym(student))}" tabindex="0" '
                f'data-student="{e(pseudonym(student))}" data-version="">{regrade}'
                f'<span class="score"></span><b>{e(who)}</b>'
                f'<div class="text">{e(shown) if shown.strip() else "<i>(blank: 0)</i>"}</div>'
                f'<details class="outputs"><summary>their outputs above the question</summary></details>'
                + (
                    ""
                    if waiting or second
                    else f'<select class="move" aria-label="move this answer to another group">'
                    f'<option value="" selected disabled>move to group…</option>{moves}'
                    f'<option value="">a new group of its own</option></select>'
                )
                + f'<div class="items">{boxes}</div>'
                f'<label>adjustment <input class="adj" size="5"></label> '
                f'<label>comment <input class="comment" type="text" size="70"></label></div>'
            )
        groups.append(
            f'<div class="group"><h2>{e(group.name)}: {len(group.students)} answer(s)</h2>'
            f"<div>apply to the whole group: {buttons}</div>{''.join(cards)}</div>"
        )
    queue = "".join(
        f'<li><a href="#{e(who)}">{e(who)}</a>: {e(reason)}</li>' for who, reason in sorted(requests.items())
    )
    queue = f'<div id="regrades"><b>regrade requests ({len(requests)} open)</b><ul>{queue}</ul></div>' if queue else ""
    toggle = f'<a href="?names={0 if names else 1}">{"hide" if names else "show"} names</a>'
    body = (
        f'<div id="status"><a href="/">all questions</a> · <b>{e(cell[0])}/{e(cell[1])}</b> ({points:g} points) · '
        f'<span id="graded"></span> · {toggle} · <span id="message"></span></div>'
        f"<h1>{e(cell[0])}/{e(cell[1])}</h1>"
        + (
            f'<p id="second" role="note">Second marking, blind: {len(answers)} answer(s) of the double-marked '
            "sample. Your marks are compared with the grades (agreement on the report and in <code>mark OUT "
            "--status</code>) and never change a grade; the first grader's marks are not shown.</p>"
            if second
            else ""
        )
        + (
            '<p id="grouping" role="status">These answers are still being grouped by meaning. Until then they are '
            "grouped by the words they share, and an answer cannot be moved; the page reloads itself when the "
            "groups by meaning are ready.</p>"
            if waiting
            else ""
        )
        + f'<p class="note">Keys: j/k next/previous answer; 1-9 toggle an item on the answer; shift+1-9 on its group.</p>'
        f'<table class="rubric"><tr><th>key</th><th>item</th><th>points</th><th>text (what the student reads)</th></tr>{keys}</table>'
        f'<details><summary>model answer</summary><div class="text">{e(rubric.answer)}</div></details>{queue}'
        + "".join(groups)
    )
    data = _json_script(
        "cell", {"notebook": cell[0], "grade_id": cell[1], "points": points, "items": rubric.ids, "waiting": waiting}
    ) + _json_script("state", marking.state(cell))
    return _page(f"{cell[0]}/{cell[1]}", body, token, nonce, data, script=True)


def handler(marking: Marking, token: str):
    """The request handler class of one server (every request carries the token, as a cookie after the first)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # the console is for marks, not for every request
            pass

        def _authorised(self, query) -> bool:
            cookie = SimpleCookie(self.headers.get("Cookie", ""))
            sent = query.get("token", [""])[0] or (cookie["a3mark"].value if "a3mark" in cookie else "")
            return secrets.compare_digest(sent, token)

        def _send(self, status, body: str, kind="text/html", nonce=""):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header(
                "Content-Security-Policy",
                f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; img-src data:; connect-src 'self'; "
                "form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
            )
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Set-Cookie", f"a3mark={token}; HttpOnly; SameSite=Strict; Path=/")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query)
            if not self._authorised(query):
                return self._send(
                    HTTPStatus.FORBIDDEN, "open the link with its token that `mark` printed", "text/plain"
                )
            nonce = secrets.token_urlsafe(12)
            parts = [urllib.parse.unquote(p) for p in url.path.split("/") if p]
            try:
                if not parts:
                    return self._send(200, index_page(marking, token, nonce), nonce=nonce)
                if len(parts) == 4 and parts[0] == "outputs" and (parts[1], parts[2]) in marking.rubrics():
                    fragment = marking.outputs((parts[1], parts[2]), parts[3])
                    if fragment is not None:
                        return self._send(200, fragment, nonce=nonce)
                if len(parts) == 4 and parts[:2] == ["api", "ready"]:
                    ready = (parts[2], parts[3]) in marking.groups
                    return self._send(200, json.dumps({"ready": ready}), "application/json")
                if len(parts) == 3 and parts[0] == "q" and (parts[1], parts[2]) in marking.rubrics():
                    if not marking.cell_answers((parts[1], parts[2])):  # none submitted, or none in the sample
                        return self._send(HTTPStatus.NOT_FOUND, "no answers to grade for this question", "text/plain")
                    names = query.get("names", ["0"])[0] == "1"
                    return self._send(
                        200, question_page(marking, (parts[1], parts[2]), names, token, nonce), nonce=nonce
                    )
            except rubrics.RubricError as exc:
                return self._send(500, str(exc), "text/plain")
            return self._send(HTTPStatus.NOT_FOUND, "no such question", "text/plain")

        def do_POST(self):
            if not secrets.compare_digest(self.headers.get("X-A3-Token", ""), token):
                return self._send(HTTPStatus.FORBIDDEN, json.dumps({"error": "no token"}), "application/json")
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                return self._send(413, json.dumps({"error": "request too large"}), "application/json")
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
                cell = (body["notebook"], body["grade_id"])
                if marking.second is not None and self.path != "/api/mark":
                    status, reply = 403, {"error": SECOND_ONLY_MARKS}
                elif self.path == "/api/mark":
                    status, reply = marking.apply(cell, list(body["marks"]))
                elif self.path == "/api/regrade":
                    status, reply = marking.resolve(cell, body.get("student"), body.get("why"))
                elif self.path == "/api/move":
                    status, reply = marking.move(cell, body.get("student"), body.get("group"))
                elif self.path == "/api/item":
                    status, reply = marking.edit_item(cell, body["item"], body.get("points"), body.get("text"))
                else:
                    status, reply = 404, {"error": "no such call"}
            except (ValueError, KeyError, TypeError) as exc:
                status, reply = 400, {"error": f"bad request: {exc}"}
            except rubrics.RubricError as exc:
                status, reply = 500, {"error": str(exc)}
            self._send(status, json.dumps(reply, ensure_ascii=False), "application/json")

    return Handler


def make_server(marking: Marking, port: int = 0, token: str | None = None) -> tuple[ThreadingHTTPServer, str]:
    """A server on 127.0.0.1 (port 0: any free one) and the URL with its token."""
    token = token or secrets.token_urlsafe(24)
    server = ThreadingHTTPServer(("127.0.0.1", port), handler(marking, token))
    return server, f"http://127.0.0.1:{server.server_address[1]}/?token={token}"


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
    serve: bool = False,
    port: int = 8891,
    browser: bool = True,
    source: Path = paths.SOURCE,
) -> int:
    """`mark`: marking.mark.main with these options, then, when none of --status, --export, --import, --regrades,
    --groups or --rubric was given (or --serve was), the page. Returns the exit status."""
    import getpass

    grader = grader or getpass.getuser()
    options = dict(export=export, import_csv=import_csv, groups=groups, output=output, rubric=rubric, double=double)
    options.update(second=second, regrades=regrades, status=status)
    code = mark.main(out=out, grader=grader, encoder=encoder, source=source, **options)
    asked = status or export or import_csv or regrades or groups or rubric  # something other than the page
    if code or (asked and not serve):
        return code
    if second:  # a second grader's page: the double-marked sample, blind
        if double is None:
            print("mark: --second on the page needs --double SHARE, the sample to mark (e.g. 10%)", file=sys.stderr)
            return 1
        sample = mark.double_sample(mark.collect(Path(out)), mark.share(double))
        return serve_page(Marking(out, source, grader, encoder, second=sample), port, browser)
    return serve_page(Marking(out, source, grader, encoder), port, browser)


def serve_page(marking: Marking, port: int, browser: bool) -> int:
    """Serve until interrupted; every mark is on disk as soon as the page showed it."""
    server, url = make_server(marking, port)
    signal.signal(signal.SIGTERM, _interrupt)  # a plain kill stops it as Ctrl-C does, pages brought up to date
    print(f"grading by question at {url}  (Ctrl-C to stop; every mark is saved as it is made)", flush=True)
    if browser:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
        marking.close()
        marking.settle()
    return 0
