"""python -m autograder mark OUT: grade the written answers with the rubrics of source/a3/rubrics.toml.

A mark is what a TA decided for one student's answer to one written cell: the rubric items that apply, a free
adjustment and a comment. Marks are kept in OUT/marks.jsonl, an append-only log (one JSON line per mark: who,
when, and the digest of the answer it was given for); the latest line of a student x cell is its mark. Every
run derives from the log and the current rubric the gradebook's manual score and comment of each marked
answer (nbgrader's gradebook, where formgrader writes too), so `feedback`, `export`, `release`, the final
scores and the late penalty read them; an item whose points or text changed changes every answer that has
it. A mark whose item left the rubric, or whose answer changed since, is cleared (the answer is to grade
again) and named on the console; it never becomes 0 by itself.

    mark OUT                          re-derive the gradebook from the log; the command (marking.server.main)
                                      then serves the grading-by-question page on 127.0.0.1 behind a token
    mark OUT --status                 re-derive, then say how far each question is (agreement, open regrades)
    mark OUT --export FILE.csv        student,notebook,grade_id,items,adjustment,comment: one row per answer
    mark OUT --import FILE.csv        the same columns back (validated first; nothing written on an error)
    mark OUT --groups NB/GRADE_ID     student,group,size: the answers grouped (blank, identical, near, similar)
    mark OUT --rubric NB/GRADE_ID     item,points,text of that question's rubric
    mark OUT --suggest NB/GRADE_ID    student,items,confidence,like: rubric items suggested for that question's
                                      answers still to grade, learned from its marks (marking.suggest; never a mark)
    mark OUT --import F --serve       serve the page after an --import, --export or --regrades as well
    mark OUT --regrades FILE.csv      student,notebook,grade_id,reason: regrade requests, queued on the page
    mark OUT --export F --double 10%  a sample of each question's answers for a second grader, who imports it
                                      with --import F --second: `mark OUT --status` then prints their agreement
    mark OUT --second --double 10%    the page for a second grader: that sample, blind, marks for agreement only
"""

import contextlib
import csv
import datetime
import getpass
import hashlib
import io
import json
import math
import re
import sqlite3
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from autograder import contract, gradebook, paths, rubrics
from autograder.marking import log, pages
from autograder.marking.log import Key, Mark, locked  # noqa: F401  (the log's names, as callers know them)
from autograder.out import Out
from autograder.records import Results, not_graded_yet, was_graded
from autograder.text import one_line

REGRADE_COLUMNS = ["student", "notebook", "grade_id", "reason"]
COLUMNS = ["student", "notebook", "grade_id", "items", "adjustment", "comment"]
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")  # an adjustment as a spreadsheet writes it
MAX_COMMENT = 10_000  # characters of a TA's comment, on the page and in an import
EXPORT_ONLY = ["answer", "flag"]  # --export's last columns, for a TA grading in a spreadsheet; --import ignores them
# characters of an answer --export writes: spreadsheets hold 32,767 in a cell, and a longer one would make the file
# one --import cannot read back (the page shows the whole answer)
EXPORT_ANSWER = 30_000
STUB = "YOUR ANSWER HERE"  # nbgrader's text stub: an answer left as released (blank)


@dataclass(frozen=True)
class Answer:
    """One student's answer to one written cell, as graded (text from OUT/autograded)."""

    student: str
    notebook: str
    grade_id: str
    text: str
    points: float
    blank: bool
    flag: str = ""  # for the TA: where grading found the answer, when not in its cell (grading.answers)

    @property
    def key(self) -> Key:
        return (self.student, self.notebook, self.grade_id)

    @property
    def typed(self) -> str:
        """The text as the student typed it: OUT keeps a written answer reader-safe, where a bare & became &amp;
        (`text`, whose digest marks are checked against, stays as kept)."""
        return self.text.replace("&amp;", "&") if self.grade_id == contract.check_id(self.grade_id) else self.text


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def now() -> str:
    """The time of a mark, to the microsecond: it also tells two marks of one answer apart (mark_server)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")


def collect(out: Path, notebooks: Iterable[str] | None = None) -> dict[Key, Answer]:
    """Every answer a person grades in a graded notebook of OUT (of `notebooks` only, when given): the written
    answers, and the solution cells whose check could not decide, under their test cell's id."""
    results = Results(out)
    found = {}
    for state in results.states():
        for notebook, summary in state.notebooks.items():
            if (notebooks is not None and notebook not in notebooks) or not was_graded(summary.status):
                continue
            texts = results.answers(state.student, notebook)
            flags = {f.split(" ", 1)[0].rstrip(":"): f.split(": ", 1)[-1] for f in summary.flags}
            for grade_id, points in summary.manual.items():
                text = texts.get(grade_id, "")
                answer = Answer(state.student, notebook, grade_id, text, float(points), grade_id in summary.blank,
                                flags.get(grade_id, ""))  # fmt: skip
                found[answer.key] = answer
            for cell in summary.cells:  # a cell its check could not decide: a person grades it
                if cell.score is None:
                    test = contract.test_cell_id(cell.grade_id)
                    answer = Answer(state.student, notebook, test, texts.get(test, ""), float(cell.max_score), False)
                    found[answer.key] = answer
    return found


def read_log(out: Path) -> tuple[dict[Key, Mark], list[str]]:
    """The latest mark of every answer in OUT/marks.jsonl (second marks aside), and one line per log line that
    cannot be read."""
    return log.of(out).latest()


def read_second(out: Path) -> dict[Key, Mark]:
    """The latest second mark of every double-marked answer."""
    return log.of(out).latest_second()


def append_log(out: Path, marks: Iterable[Mark]) -> None:
    """Append marks to OUT/marks.jsonl, on disk before this returns (takes OUT's marking lock)."""
    with locked(out):
        log.write(out, marks)


# comments found by name (gradebook.SOLUTION), so that SQLite looks them up in its indexes (25 s down to 0.2 s for
# 500 students)
SOLUTION = gradebook.SOLUTION
GRADEBOOK_ROWS = (
    """SELECT st.id, nb.name, bc.name, g.id, g.manual_score,
       (SELECT c.id FROM comment c JOIN base_cell cb ON c.cell_id = cb.id
        WHERE c.notebook_id = snb.id AND cb.name IN (bc.name, {solution}) LIMIT 1),
       (SELECT c.manual_comment FROM comment c JOIN base_cell cb ON c.cell_id = cb.id
        WHERE c.notebook_id = snb.id AND cb.name IN (bc.name, {solution}) LIMIT 1)""".format(solution=SOLUTION)
    + gradebook.PERSON_GRADED
    + " AND a.name = :assignment"
)
ONE_CELL = " AND nb.name = :notebook AND bc.name = :grade_id"  # its own clause: SQLite then starts from the cell


SOME_STUDENTS = " AND st.id IN (SELECT value FROM json_each(:students))"
SCORES = "SELECT st.id, nb.name, bc.name, g.manual_score" + gradebook.PERSON_GRADED + " AND a.name = :assignment"


def gradebook_rows(
    con: sqlite3.Connection, cell: tuple[str, str] | None = None, students: Iterable[str] | None = None
) -> list[tuple]:
    """(student, notebook, grade id, grade row id, manual score, comment row id, manual comment) of every answer a
    person grades in the gradebook, of one question's answers (`cell`: its notebook and grade id), or of those of
    `students` only."""
    query = GRADEBOOK_ROWS + (ONE_CELL if cell else "") + (SOME_STUDENTS if students is not None else "")
    notebook, grade_id = cell or (None, None)
    params = {"assignment": contract.ASSIGNMENT, "notebook": notebook, "grade_id": grade_id,
              "students": json.dumps(sorted(students or ()))}  # fmt: skip
    return con.execute(query, params).fetchall()


def manual_scores(out: Path, cell: tuple[str, str] | None = None) -> dict:
    """{student: manual score in the gradebook (None: not graded by a person)} of one question's answers; without
    `cell`, {(notebook, grade id): that} for every question (one query)."""
    params = {"assignment": contract.ASSIGNMENT, "notebook": (cell or ("", ""))[0], "grade_id": (cell or ("", ""))[1]}
    with contextlib.closing(_gradebook(out)) as con:
        rows = con.execute(SCORES + (ONE_CELL if cell else ""), params).fetchall()
    if cell is not None:
        return {student: score for student, _, _, score in rows}
    found: dict[tuple[str, str], dict[str, float | None]] = {}
    for student, notebook, grade_id, score in rows:
        found.setdefault((notebook, grade_id), {})[student] = score
    return found


def _gradebook(out: Path) -> sqlite3.Connection:
    con = sqlite3.connect(Out.at(out).gradebook, timeout=30)
    con.execute("PRAGMA busy_timeout = 30000")  # formgrader may be writing at the same time
    return con


def derive(mark: Mark, answer: Answer | None, rubric: rubrics.Rubric | None) -> tuple[float, str] | str:
    """(score, the comment a student reads) of a mark under the current rubric, or why it no longer holds."""
    if answer is None:
        return "the answer is no longer in OUT"
    if digest(answer.text) != mark.answer:
        return "the answer changed since it was marked"
    if rubric is None:
        return "the cell has no rubric any more"
    gone = rubrics.unknown(rubric, mark.items)
    if gone:
        return f"item(s) {', '.join(map(repr, gone))} no longer in the rubric"
    return (
        rubrics.score(rubric, mark.items, mark.adjustment, answer.points),
        rubrics.comment(rubric, mark.items, mark.adjustment, mark.comment),
    )


def sync(
    out: Path,
    found: Mapping[tuple[str, str], rubrics.Rubric],
    answers: Mapping[Key, Answer],
    csvs: bool = True,
    cell: tuple[str, str] | None = None,
    keys: set[Key] | None = None,
) -> tuple[list[str], set[Key]]:
    """Derive the gradebook's manual scores and comments from the log and the rubrics (of one question's answers
    only, with `cell`: a page's change touches no other; of `keys` only: a click touches one answer); clear (and log) the marks that no longer hold; rewrite
    grades.csv when something changed (csvs=False: the caller does). Returns console lines (what changed, each
    answer to grade again) and the answers whose gradebook score or comment changed."""
    marks, lines = read_log(out)
    cleared, wanted = [], {}
    chosen = marks.items() if keys is None else ((k, marks[k]) for k in keys if k in marks)
    for key, mark in sorted(chosen):
        if mark.items is None or (cell is not None and key[1:] != cell) or (keys is not None and key not in keys):
            continue
        result = derive(mark, answers.get(key), found.get(key[1:]))
        if isinstance(result, str):
            cleared.append(Mark(*key, None, 0.0, "", "mark", now(), mark.answer, result))
            wanted[key] = (None, None)
            lines.append(f"to grade again: {key[0]} {key[1]}/{key[2]}: {result} (was marked by {mark.grader})")
        else:
            wanted[key] = result
    changed = set()
    if not wanted:
        return lines, changed
    with contextlib.closing(_gradebook(out)) as con, con:
        updates = []
        students = None if keys is None else {key[0] for key in keys}
        for student, nb, gid, grade, score, comment_id, comment in gradebook_rows(con, cell, students):
            want = wanted.get((student, nb, gid))
            if want is not None and (score, comment) != want:
                updates.append(((student, nb, gid), grade, comment_id, *want))
        # the pages these change are noted first: a kill before they are rendered leaves them to the next start
        pages.note(out, {key[:2] for key, *_ in updates})
        for key, grade, comment_id, new_score, new_comment in updates:
            con.execute(
                "UPDATE grade SET manual_score = ?, needs_manual_grade = ? WHERE id = ?",
                (new_score, new_score is None, grade),
            )
            if comment_id is not None:
                con.execute("UPDATE comment SET manual_comment = ? WHERE id = ?", (new_comment, comment_id))
            changed.add(key)
    append_log(out, cleared)  # after the gradebook: a crash in between clears them again on the next run
    if changed and csvs:
        Results(out).write_csvs()
        lines.append(
            f"gradebook: {len(changed)} answer(s) updated from the marks and the rubrics; grades.csv rewritten"
        )
    return lines, changed


def read_moves(out: Path) -> dict[str, dict[str, str]]:
    """The TAs' moves of answers between groups, per question ("NB/GRADE_ID")."""
    path = Out.at(out).moves
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _cell(spec: str, found: Mapping[tuple[str, str], rubrics.Rubric]) -> tuple[str, str]:
    notebook, _, grade_id = spec.partition("/")
    if (notebook, grade_id) not in found:
        known = ", ".join(f"{n}/{g}" for n, g in found)
        raise LookupError(f"unknown written cell {spec!r} (NOTEBOOK/GRADE_ID, one of: {known})")
    return notebook, grade_id


def _order(key: Key) -> tuple:
    student, notebook, grade_id = key
    nbs = list(contract.NOTEBOOKS)
    written = list(contract.WRITTEN.get(notebook, {}))
    return (
        nbs.index(notebook) if notebook in nbs else len(nbs),
        notebook,
        written.index(grade_id) if grade_id in written else len(written),
        grade_id,
        student,
    )


def _num(x: float) -> str:
    return f"{x:g}"


def export_csv(answers: Mapping[Key, Answer], marks: Mapping[Key, Mark], only: set[Key] | None = None) -> str:
    """One row per answer (of `only`, when given); an answer without a mark has empty items and adjustment; an answer
    past EXPORT_ANSWER characters is cut, saying so."""
    from autograder import csvsafe

    buf = io.StringIO()
    writer = csvsafe.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS + EXPORT_ONLY)
    for key in sorted(answers if only is None else only, key=_order):
        mark, answer = marks.get(key), answers.get(key)
        text = answer.typed if answer else ""
        if len(text) > EXPORT_ANSWER:
            text = (
                text[:EXPORT_ANSWER]
                + f"\n[cut: {len(text):,} characters in all; the student's notebook holds it whole]"
            )
        shown = [text, answer.flag if answer else ""]
        if mark is None or mark.items is None:
            writer.writerow([*key, "", "", "", *shown])
        else:
            writer.writerow([*key, ";".join(mark.items), _num(mark.adjustment), mark.comment, *shown])
    return buf.getvalue()


def _rows(reader, name: str, errors: list[str]):
    """The rows of a CSV reader until one cannot be read (a cell past the csv module's 131,072 characters, a quote
    left open): that one is an error line, and reading stops."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            errors.append(f"{name}:{reader.line_num + 1}: cannot be read as CSV ({one_line(exc.args[0], 120)})")
            return


def parse_import(
    text: str,
    name: str,
    answers: Mapping[Key, Answer],
    found: Mapping[tuple[str, str], rubrics.Rubric],
) -> tuple[dict[Key, tuple[tuple[str, ...], float, str]], list[str]]:
    """The rows of an import file that carry a grade ({key: (items, adjustment, comment)}; a row with empty items,
    adjustment and comment is left out), and one error line per row that cannot be imported."""
    from autograder import csvsafe

    rows, errors, seen = {}, [], {}
    reader = csvsafe.DictReader(io.StringIO(text))  # the quote --export put before a formula-like cell taken off
    try:
        fields = reader.fieldnames or []
    except csv.Error as exc:
        return {}, [f"{name}:1: cannot be read as CSV ({one_line(exc.args[0], 120)})"]
    missing = [c for c in COLUMNS if c not in fields]
    if missing:
        return {}, [f"{name}: missing column(s) {', '.join(missing)} (expected {','.join(COLUMNS)})"]
    cells = {(a.notebook, a.grade_id) for a in answers.values()}
    students = {a.student for a in answers.values()}
    for row in _rows(reader, name, errors):
        where = f"{name}:{reader.line_num}"
        cells_of_row = [(c or "a cell", v) for c, x in row.items() for v in (x if isinstance(x, list) else [x])]
        failed = [(c, v.strip()) for c, v in cells_of_row if csvsafe.spreadsheet_error(v)]
        if failed:  # what a spreadsheet leaves of a cell it took for a formula: the text is lost
            errors.append(f"{where}: {failed[0][0]} is the spreadsheet error {failed[0][1]} (type what it should say)")
            continue
        values = {c: (row.get(c) or "").strip() for c in COLUMNS}
        key = (values["student"], values["notebook"], values["grade_id"])
        cell = key[1:]
        if cell not in cells and cell not in found:
            errors.append(f"{where}: unknown written cell {key[1]}/{key[2]}")
            continue
        if cell not in found:
            errors.append(f"{where}: {key[1]}/{key[2]} has no rubric in {rubrics.FILENAME}")
            continue
        if key[0] not in students:
            errors.append(f"{where}: unknown student {key[0]!r}")
            continue
        if key not in answers:
            errors.append(f"{where}: {key[0]!r} has no graded answer to {key[1]}/{key[2]}")
            continue
        if key in seen:
            errors.append(f"{where}: {key[0]} {key[1]}/{key[2]} again (first on line {seen[key]})")
            continue
        seen[key] = reader.line_num
        items = tuple(i.strip() for i in values["items"].split(";") if i.strip())
        gone = rubrics.unknown(found[cell], items)
        if gone:
            known = ", ".join(found[cell].ids)
            errors.append(f"{where}: unknown item(s) {', '.join(gone)} for {key[1]}/{key[2]} (items: {known})")
            continue
        if len(set(items)) != len(items):
            errors.append(f"{where}: an item appears twice in {values['items']!r}")
            continue
        given = values["adjustment"]
        adjustment = float(given) if NUMBER.fullmatch(given) else 0.0 if not given else math.nan
        if not math.isfinite(adjustment):
            errors.append(f"{where}: adjustment should be a number of points, got {given!r}")
            continue
        if abs(adjustment) > answers[key].points:
            errors.append(f"{where}: an adjustment is at most the cell's {answers[key].points:g} points either way")
            continue
        if answers[key].blank and (items or adjustment):
            errors.append(f"{where}: {key[0]}'s answer to {key[1]}/{key[2]} is blank and scores 0 by itself: no items "
                          "or adjustment apply")  # fmt: skip
            continue
        comment = row.get("comment") or ""
        if len(comment) > MAX_COMMENT or "\x00" in comment:
            errors.append(f"{where}: a comment should be text of at most {MAX_COMMENT:,} characters")
            continue
        if items or values["adjustment"] or values["comment"]:
            rows[key] = (items, adjustment, comment)
    return rows, errors


def _import(out, path, answers, found, grader, second=False) -> int:
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:  # a spreadsheet may save a byte-order mark;
            text = f.read()  # newline="": a carriage return in a cell is read back as written
    except (OSError, UnicodeDecodeError) as exc:
        print(f"mark: cannot read {path}: {one_line(exc)}", file=sys.stderr)
        return 1
    rows, errors = parse_import(text, str(path), answers, found)
    if errors:
        print(f"mark: {path}: nothing imported, {len(errors)} row(s) to fix:", file=sys.stderr)
        for line in errors:
            print(f"  {line}", file=sys.stderr)
        return 1
    marks = read_second(out) if second else read_log(out)[0]
    new, at = [], now()
    for key, (items, adjustment, comment) in sorted(rows.items(), key=lambda kv: _order(kv[0])):
        old = marks.get(key)
        if old and old.items is not None and (old.items, old.adjustment, old.comment) == (items, adjustment, comment):
            continue
        if old and old.items is not None and old.grader != grader:
            print(f"{key[0]} {key[1]}/{key[2]}: replaces {old.grader}'s mark of {old.at}")
        new.append(Mark(*key, items, adjustment, comment, grader, at, digest(answers[key].text), second=second))
    append_log(out, new)
    what = "second mark(s), for agreement only," if second else "mark(s)"
    print(f"imported {len(new)} {what} from {path} ({len(rows) - len(new)} unchanged) as {grader}")
    return 0


OUTSIDE = "rubrics.toml, edited outside the page"  # who a rubric change noticed on reading the file is logged as


def note_rubric_changes(out: Path, found: rubrics.Rubrics, by: str = OUTSIDE) -> list[dict]:
    """Log in OUT/rubric_edits.jsonl every item added, removed or changed (points, text) since `mark` last saw the
    rubric (OUT/.rubric_seen.json), as made by `by`, and remember the rubric as it is now; the first look logs
    nothing. Returns the entries logged."""
    from autograder.files import atomic_write

    where = Out.at(out)
    shown = {f"{nb}/{gid}": {i.id: [i.points, i.text] for i in r.items} for (nb, gid), r in found.items()}
    with log.locked(out):
        try:
            seen = json.loads(where.rubric_seen.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            seen = None
        if seen == shown:
            return []
        entries, at = [], now()
        for cell in sorted(set(seen or {}) | set(shown)) if seen is not None else []:
            before, after = seen.get(cell, {}), shown.get(cell, {})
            for item in sorted(set(before) | set(after)):
                if before.get(item) != after.get(item):
                    notebook, grade_id = cell.split("/", 1)
                    entries.append({"at": at, "by": by, "notebook": notebook, "grade_id": grade_id, "item": item,
                                    "before": _item_record(before.get(item)), "after": _item_record(after.get(item))})  # fmt: skip
        log.append_records(out, where.rubric_edits, entries)
        atomic_write(where.rubric_seen, json.dumps(shown, ensure_ascii=False, sort_keys=True))
    return entries


def _item_record(item: list | None) -> dict | None:
    return None if item is None else {"points": item[0], "text": item[1]}


def read_rubric_edits(out: Path) -> list[dict]:
    """Every item edit logged in OUT, oldest first."""
    return log.read_records(Out.at(out).rubric_edits)


def log_suggestions(
    out: Path, cell: tuple[str, str], made: Mapping[str, tuple[str, ...] | None], stamp: str, by: str
) -> None:
    """Append to OUT/suggestions.jsonl the suggestions a page showed for a question that differ from the last ones
    logged for those answers ({student: items, None where it abstained}), with when, for whom and under which
    rubric (`stamp`: rubrics.Rubric.stamp), so that agreement can be measured on answers marked after them."""
    last = {(e["student"], e["notebook"], e["grade_id"]): e for e in read_suggestions(out)}
    at = now()
    entries = []
    for student, items in sorted(made.items()):
        before = last.get((student, *cell))
        shown = None if items is None else list(items)
        if before is not None and before.get("items") == shown and before.get("rubric") == stamp:
            continue
        entries.append({"student": student, "notebook": cell[0], "grade_id": cell[1], "items": shown, "at": at,
                        "by": by, "rubric": stamp})  # fmt: skip
    log.append_records(out, Out.at(out).suggestions, entries)


def read_suggestions(out: Path) -> list[dict]:
    """Every suggestion logged in OUT, oldest first."""
    return log.read_records(Out.at(out).suggestions)


def suggestion_agreement(out: Path, marks: Mapping[Key, Mark], found: rubrics.Rubrics) -> dict[tuple[str, str], dict]:
    """Per question: how the TAs' marks compare with the suggestion shown last before each mark, over the answers
    marked after a suggestion (not an abstention) was shown under the question's rubric as it is now: {"n",
    "unchanged" (share accepted as suggested; None when n is 0), "items": {item: (precision, recall)}, "stale":
    answers whose last suggestion was made under another version of the rubric, left out of the rest}."""
    shown: dict[Key, list[dict]] = {}
    for e in read_suggestions(out):
        shown.setdefault((e["student"], e["notebook"], e["grade_id"]), []).append(e)
    pairs: dict[tuple[str, str], list[tuple[set, set]]] = {}
    stale: dict[tuple[str, str], int] = {}
    for key, m in marks.items():
        if m.items is None or key not in shown:
            continue
        before = [e for e in shown[key] if e["at"] <= m.at]
        if not before or before[-1]["items"] is None:
            continue
        rubric = found.get(key[1:])
        if rubric is None or before[-1].get("rubric") != rubric.stamp:
            stale[key[1:]] = stale.get(key[1:], 0) + 1
            continue
        pairs.setdefault(key[1:], []).append((set(before[-1]["items"]), set(m.items)))
    agreed = {}
    for cell in sorted(pairs.keys() | stale.keys()):
        made = pairs.get(cell, [])
        per_item = {}
        for item in sorted({i for a, b in made for i in a | b}):
            tp = sum(1 for a, b in made if item in a and item in b)
            suggested = sum(1 for a, _ in made if item in a)
            marked = sum(1 for _, b in made if item in b)
            per_item[item] = (tp / suggested if suggested else None, tp / marked if marked else None)
        unchanged = sum(a == b for a, b in made) / len(made) if made else None
        agreed[cell] = {"n": len(made), "unchanged": unchanged, "items": per_item, "stale": stale.get(cell, 0)}
    return agreed


def read_regrades(out: Path) -> dict[Key, dict]:
    """The latest regrade entry of every answer that has one: a request ("open") or its resolution."""
    return {
        (d["student"], d["notebook"], d["grade_id"]): d
        for d in log.read_records(Out.at(out).regrades)
        if all(isinstance(d.get(k), str) for k in ("student", "notebook", "grade_id"))
    }


def append_regrades(out: Path, entries: Iterable[dict]) -> None:
    """Append regrade requests or resolutions to OUT/regrades.jsonl, on disk before this returns."""
    log.append_records(out, Out.at(out).regrades, entries)


def _regrades(out, path, answers, grader) -> int:
    """Queue the regrade requests of a CSV (student,notebook,grade_id,reason), every row checked first."""
    try:
        reader = csv.DictReader(io.StringIO(Path(path).read_text(encoding="utf-8-sig")))
        rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        print(f"mark: cannot read {path}: {one_line(exc)}", file=sys.stderr)
        return 1
    missing = [c for c in REGRADE_COLUMNS if c not in (reader.fieldnames or [])]
    errors = (
        [f"{path}: missing column(s) {', '.join(missing)} (expected {','.join(REGRADE_COLUMNS)})"] if missing else []
    )
    wanted = {}
    for n, row in enumerate(rows if not missing else [], 2):
        key = tuple((row.get(c) or "").strip() for c in REGRADE_COLUMNS[:3])
        if key not in answers:
            errors.append(f"{path}:{n}: no graded answer of {key[0]!r} to {key[1]}/{key[2]}")
        elif not (row.get("reason") or "").strip():
            errors.append(f"{path}:{n}: a regrade request needs a reason")
        else:
            wanted[key] = row["reason"].strip()
    if errors:
        print(f"mark: {path}: nothing queued, {len(errors)} row(s) to fix:", file=sys.stderr)
        for line in errors:
            print(f"  {line}", file=sys.stderr)
        return 1
    hand, open_now, at = gradebook.read_hand_grades(Out.at(out).gradebook), read_regrades(out), now()
    new = []
    for key, reason in sorted(wanted.items(), key=lambda kv: _order(kv[0])):
        if (open_now.get(key) or {}).get("status") == "open" and open_now[key]["reason"] == reason:
            continue
        score = hand.get(key[:2], {}).get(key[2], gradebook.NOT_ENTERED).score
        new.append(dict(zip(("student", "notebook", "grade_id"), key), status="open", reason=reason, score=score,
                        by=grader, at=at))  # fmt: skip
    append_regrades(out, new)
    print(f"queued {len(new)} regrade request(s) from {path} ({len(wanted) - len(new)} already open)")
    return 0


def share(text: str) -> float:
    """A share written as "10%" or "0.1" (ValueError for anything else)."""
    return float(text[:-1]) / 100 if text.endswith("%") else float(text)


def double_sample(answers: Mapping[Key, Answer], fraction: float) -> set[Key]:
    """The answers two graders mark independently: per question, `fraction` of its answers that are not blank (at
    least one), the same ones on every run (chosen by a hash of student and cell)."""
    by_cell: dict[tuple[str, str], list[Key]] = {}
    for key, answer in answers.items():
        if not answer.blank:
            by_cell.setdefault(key[1:], []).append(key)
    chosen = set()
    for keys in by_cell.values():
        keys.sort(key=lambda k: hashlib.sha256("/".join(k).encode()).hexdigest())
        chosen.update(keys[: max(1, math.ceil(fraction * len(keys)))])
    return chosen


def agreement(
    found: Mapping[tuple[str, str], rubrics.Rubric], answers: Mapping[Key, Answer], out: Path
) -> dict[tuple[str, str], tuple[int, float | None, float]]:
    """Per question with double-marked answers: (answers marked by two graders, Cohen's kappa on the items, mean
    absolute difference of the scores). Kappa pools every item of every such answer as one yes/no decision; it is
    None when both graders made the same single choice everywhere (nothing to chance-correct)."""
    first, second = read_log(out)[0], read_second(out)
    pairs: dict[tuple[str, str], list[tuple[Mark, Mark]]] = {}
    for key, b in second.items():
        a, rubric = first.get(key), found.get(key[1:])
        if a is None or a.items is None or b.items is None or rubric is None or key not in answers:
            continue
        if rubrics.unknown(rubric, a.items) or rubrics.unknown(rubric, b.items) or a.grader == b.grader:
            continue
        pairs.setdefault(key[1:], []).append((a, b))
    result = {}
    for cell, marked in pairs.items():
        rubric, decisions, gaps = found[cell], [], []
        for a, b in marked:
            decisions += [(i.id in a.items, i.id in b.items) for i in rubric.items]
            points = answers[a.key].points
            gaps.append(
                abs(
                    rubrics.score(rubric, a.items, a.adjustment, points)
                    - rubrics.score(rubric, b.items, b.adjustment, points)
                )
            )
        observed = sum(x == y for x, y in decisions) / len(decisions)
        pa, pb = sum(x for x, _ in decisions) / len(decisions), sum(y for _, y in decisions) / len(decisions)
        chance = pa * pb + (1 - pa) * (1 - pb)
        kappa = None if chance == 1 else (observed - chance) / (1 - chance)
        result[cell] = (len(marked), kappa, sum(gaps) / len(gaps))
    return result


def _groups(out, answers, spec, found, output, encoder) -> int:
    from autograder.marking.groups import group_answers, regroup

    notebook, grade_id = _cell(spec, found)
    texts = {a.student: a.typed for a in answers.values() if (a.notebook, a.grade_id) == (notebook, grade_id)}
    from autograder import csvsafe

    buf = io.StringIO()
    writer = csvsafe.writer(buf, lineterminator="\n")
    writer.writerow(["student", "group", "size"])
    try:
        grouped = group_answers(texts, STUB, encoder)
    except (ImportError, OSError) as exc:  # no MiniLM package or model files: words still group answers
        print(
            f"mark: the {encoder} encoder is not available ({one_line(exc, 120)}); grouping by TF-IDF", file=sys.stderr
        )
        grouped = group_answers(texts, STUB, "tfidf")
    for group in regroup(grouped, read_moves(out).get(f"{notebook}/{grade_id}", {})):
        writer.writerows([s, group.name, len(group.students)] for s in group.students)
    if output is None:
        sys.stdout.write(buf.getvalue())
    else:
        Path(output).write_text(buf.getvalue(), encoding="utf-8")
        print(f"wrote the groups of {len(texts)} answers to {output}")
    return 0


def live_marks(out: Path, cell: tuple[str, str], answers: Mapping[Key, Answer], rubric) -> dict[str, tuple[str, ...]]:
    """{student: items} of the latest mark of each answer to one question that still holds (see `derive`)."""
    return {
        key[0]: m.items
        for key, m in read_log(out)[0].items()
        if key[1:] == cell and m.items is not None and not isinstance(derive(m, answers.get(key), rubric), str)
    }


def _suggest(out, answers, spec, found, output, encoder) -> int:
    """student,items,confidence,like for one question's answers still to grade (marking.suggest), learned from its
    live marks and model answer."""
    from autograder.marking import suggest as suggesting
    from autograder.marking.groups import EmbeddingCache

    cell = _cell(spec, found)
    mine = {key: a for key, a in answers.items() if key[1:] == cell}
    texts = {key[0]: a.typed for key, a in mine.items() if not a.blank}
    points = max((a.points for a in mine.values()), default=None)
    live = live_marks(out, cell, mine, found[cell])
    try:
        cache = EmbeddingCache(Out.at(out).embeddings) if encoder == "minilm" else None
        suggestions = suggesting.Suggester(texts, found[cell], points, encoder, cache).suggest(live)
    except (ImportError, OSError) as exc:  # no MiniLM package or model files: words still suggest
        print(f"mark: the {encoder} encoder is not available ({one_line(exc, 120)}); suggesting by TF-IDF",
              file=sys.stderr)  # fmt: skip
        suggestions = suggesting.Suggester(texts, found[cell], points, "tfidf").suggest(live)
    text = suggesting.to_csv(suggestions)
    if output is None:
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8")
        made = sum(s.items is not None for s in suggestions.values())
        print(f"wrote suggestions for {made} of the {len(suggestions)} answers to grade of {spec} to {output}")
    return 0


def _summary(out, answers, found) -> None:
    """Per question: answers, blank, graded so far (by anyone, in the gradebook), to grade; then the graders'
    agreement where answers were marked twice."""

    hand = gradebook.read_hand_grades(Out.at(out).gradebook)
    counts = {}
    for key, answer in answers.items():
        c = counts.setdefault(key[1:], [0, 0, 0, 0])
        scored = hand.get(key[:2], {}).get(key[2], gradebook.NOT_ENTERED).score is not None
        c[0] += 1
        c[1] += scored
        c[2] += answer.blank and not scored
        c[3] += bool(answer.flag)
    for (notebook, grade_id), (n, graded, blank, flagged) in sorted(
        counts.items(), key=lambda kv: _order(("",) + kv[0])
    ):
        added = f"; {flagged} found in an added cell (flagged on the page)" if flagged else ""
        print(f"{notebook}/{grade_id}: {graded} of {n} graded, {blank} blank (0), {n - graded - blank} to grade{added}")
    for (notebook, grade_id), got in sorted(
        suggestion_agreement(out, read_log(out)[0], found).items(), key=lambda kv: _order(("",) + kv[0])
    ):
        stale = f" ({got['stale']} more under an older rubric: stale, not counted)" if got["stale"] else ""
        if not got["n"]:
            print(f"{notebook}/{grade_id}: no suggestion under its rubric as it is now{stale}")
            continue
        items = ", ".join(
            f"{item} precision {'n/a' if p is None else f'{p:.2f}'} recall {'n/a' if r is None else f'{r:.2f}'}"
            for item, (p, r) in got["items"].items()
        )
        print(
            f"{notebook}/{grade_id}: suggestions on {got['n']} answer(s) marked after one was shown{stale}: "
            f"{got['unchanged']:.0%} accepted unchanged; {items}"
        )
    for (student, notebook, grade_id), entry in sorted(read_regrades(out).items(), key=lambda kv: _order(kv[0])):
        if entry["status"] == "open":
            print(f"regrade requested: {student} {notebook}/{grade_id}: {one_line(entry['reason'], 200)}")
    for (notebook, grade_id), (n, kappa, gap) in sorted(
        agreement(found, answers, out).items(), key=lambda kv: _order(("",) + kv[0])
    ):
        shown = "n/a (both graders made one choice throughout)" if kappa is None else f"{kappa:.2f}"
        print(
            f"{notebook}/{grade_id}: agreement on {n} double-marked answer(s): Cohen's kappa on the items {shown}, "
            f"mean |score difference| {gap:.2f}"
        )


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
    source: Path = paths.SOURCE,
) -> int:
    """What `mark` does before its page (see the module docstring). Returns the exit status."""
    out = Path(out)
    missing = not_graded_yet(Out.at(out).gradebook, "mark")
    if missing:
        print(missing, file=sys.stderr)
        return 1
    try:
        found = rubrics.load(Path(source) / rubrics.FILENAME)
        note_rubric_changes(out, found)
        if rubric is not None:
            notebook, grade_id = _cell(rubric, found)
            from autograder import csvsafe

            buf = io.StringIO()
            writer = csvsafe.writer(buf, lineterminator="\n")
            writer.writerow(["item", "points", "text"])
            writer.writerows([i.id, _num(i.points), i.text] for i in found[(notebook, grade_id)].items)
            sys.stdout.write(buf.getvalue())
            return 0
        if groups is not None:
            _cell(groups, found)
        if suggest is not None:
            _cell(suggest, found)
    except (rubrics.RubricError, LookupError) as exc:
        print(f"mark: {exc.args[0]}", file=sys.stderr)
        return 1
    fraction = None
    if double is not None:
        try:
            fraction = share(double)
        except ValueError:
            fraction = math.nan
        if not 0 < fraction <= 1 or (export is None and not second):
            print(
                f"mark: --double takes a share of the answers with --export or --second, e.g. 10%, got {double!r}",
                file=sys.stderr,
            )
            return 1
    answers = collect(out)
    if groups is not None:
        return _groups(out, answers, groups, found, output, encoder)
    if suggest is not None:  # reads the log and OUT's answers; writes no mark
        return _suggest(out, answers, suggest, found, output, encoder)
    grader = grader or getpass.getuser()
    code = 0
    with locked(out):
        if import_csv is not None:
            code = _import(out, import_csv, answers, found, grader, second)
        if regrades is not None:
            code = _regrades(out, regrades, answers, grader) or code
        for line in sync(out, found, answers)[0]:
            print(line)
    if pages.pending(out):  # the students' pages the marks changed (or a refresh cut short left), as the page does
        from autograder.reports.feedback import rerender

        done = pages.refresh(out, lambda who, nbs: rerender(out, students=who, source=Path(source), notebooks=nbs))
        print(f"feedback: {done} student page(s) rendered again with the marks")
    if export is not None:
        only = None if fraction is None else double_sample(answers, fraction)
        marks = read_second(out) if only is not None else read_log(out)[0]
        Path(export).write_text(export_csv(answers, marks, only), encoding="utf-8")
        shown = len(answers) if only is None else f"{len(only)} double-marked"
        print(f"wrote {shown} answers to {export} ({','.join(COLUMNS)})")
    if status:
        _summary(out, answers, found)
    return code
