"""Grade exports from OUT/grades.csv into OUT/export/: nbgrader's CSV, a one-row-per-student summary, and
files Canvas and Moodle import as they are.

`python -m autograder export OUT` writes them all (the report command does it too):
- nbgrader_grades.csv: what `nbgrader export` writes for the same OUT;
- lms_grades.csv: points per notebook, total, percent, whether the total is provisional, and notes (what
  waits for a person, what is missing), for the course staff;
- canvas_grades.csv: Canvas gradebook import (Student, ID, SIS User ID, SIS Login ID, Section, then the
  assignment column and a "Points Possible" row); ID is the Canvas user id ingest read from Canvas's
  download names, so Canvas matches each row to its student;
- moodle_grades.csv: Moodle's offline grading worksheet (Identifier "Participant <id>", from Moodle's
  download folder names; Grade; Last modified (grade), which Moodle's importer requires; Feedback comments,
  which students read), uploaded under the assignment's "Upload grading worksheet".
Scores are the autograded points plus the hand grades entered so far for written answers; a total is
provisional while grades.csv's `ungraded` names a cell that waits for a person. Provisional totals stay out of
the Canvas and Moodle imports (students would read them as final): export() says how many on the console,
and which students the LMS will not match (no LMS id).
"""

import contextlib
import datetime
import functools
import math
import re
import sqlite3
import sys
from pathlib import Path

from autograder import csvsafe, term
from autograder.contract import ASSIGNMENT, NOTEBOOKS, max_score, written_max_score
from autograder.lms import NO_ID, REGISTRY
from autograder.lms import ids as lms_ids
from autograder.out import Out
from autograder.records import Results, Status, was_graded

NBGRADER_COLUMNS = [
    "assignment",
    "duedate",
    "timestamp",
    "student_id",
    "last_name",
    "first_name",
    "email",
    "raw_score",
    "late_submission_penalty",
    "score",
    "max_score",
]


def natural_key(s):
    """Sort key that orders 'student2' before 'student10'."""
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", str(s))]


def _number(value):
    """A CSV cell as a float, or None when empty or not a number (e.g. awaiting manual grading)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def read_grades(out):
    """Rows of OUT/grades.csv as {student: {notebook: row}} with score/max_score as float or None."""
    path = Out.at(out).grades
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: grade first (python -m autograder grade SUBMISSIONS --out OUT)")
    students = {}
    with open(path, newline="") as f:
        for row in csvsafe.DictReader(f):
            row = dict(
                row,
                score=_number(row.get("score")),
                max_score=_number(row.get("max_score")),
                written_score=_number(row.get("written_score")),
                ungraded=(row.get("ungraded") or "").split(),
            )
            students.setdefault(row["student"], {})[row["notebook"]] = row
    return {s: students[s] for s in sorted(students, key=natural_key)}


def _timestamps(out):
    """Submission timestamps (as nbgrader prints them) from OUT/gradebook.db when readable, else {}."""
    db = Out.at(out).gradebook
    if not db.exists():
        return {}
    query = (
        "SELECT s.student_id, s.timestamp FROM submitted_assignment s JOIN assignment a "
        "ON s.assignment_id = a.id WHERE a.name = ? AND s.timestamp IS NOT NULL"
    )
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            rows = con.execute(query, (ASSIGNMENT,)).fetchall()
        return {student: str(datetime.datetime.fromisoformat(stamp)) for student, stamp in rows}
    except (sqlite3.Error, ValueError):  # an unreadable or foreign gradebook only costs the timestamps
        return {}


def _cell(x):
    """Format like nbgrader export: str(float), '' for None."""
    return "" if x is None else str(x)


def student_totals(notebooks):
    """(score, max_score, notes) summed over the assignment's notebooks for one student's rows.

    Written answers count with the hand grades entered so far; a note starting "provisional" names what
    a person still has to grade.
    """
    score, total, notes, waiting = 0.0, 0.0, [], []
    for nb in NOTEBOOKS:
        row = notebooks.get(nb)
        total += (row["max_score"] if row and row["max_score"] is not None else max_score(nb)) + written_max_score(nb)
        if row is None:
            notes.append(f"{nb}: no row in grades.csv")
            continue
        if row["score"] is None:
            notes.append(f"{nb}: score pending ({row['status']})")
        else:
            score += row["score"] + (row.get("written_score") or 0.0)
        if row["status"] != Status.GRADED:
            notes.append(f"{nb}: {row['status']}")
        waiting += [f"{nb}/{gid}" for gid in row.get("ungraded", [])]
    if waiting:
        notes.insert(0, f"provisional: {len(waiting)} cell(s) still to grade by hand ({', '.join(waiting)})")
    damaged = damaged_downloads(notebooks)
    if damaged:
        notes.insert(0, f"provisional: {', '.join(damaged)} damaged in the LMS download (download it again and grade)")
    return score, total, notes


def damaged_downloads(notebooks):
    """The student's notebooks that the TA's LMS download damaged (they wait for a good download)."""
    return [nb for nb, row in notebooks.items() if Status.DAMAGED.starts(row["status"])]


def is_provisional(notebooks):
    """True while the student's total is not final: a grades.csv row names a cell still to grade by hand
    (`ungraded`), or a notebook waits for a good download."""
    return any(row.get("ungraded") for row in notebooks.values()) or bool(damaged_downloads(notebooks))


def submitted_names(out):
    """{student id: the name the student submitted under} from grades.csv's `submitted_as` or the recorded results
    (OUT/.state); the id itself where neither says."""
    names = {}
    if Out.at(out).state.is_dir():  # one of another version is skipped: the id stands for the name
        names = {state.student: state.submitted_as for state in Results(out).states(strict=False)}
    for student, notebooks in read_grades(out).items():
        shown = next((r["submitted_as"] for r in notebooks.values() if r.get("submitted_as")), None)
        names[student] = shown or names.get(student, student)
    return names


def _write_csv(dest, header, rows):
    """Write a CSV file: the header row, then rows (an iterable of lists)."""
    with open(dest, "w", newline="") as f:
        w = csvsafe.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def write_nbgrader_csv(out, dest):
    """nbgrader export format: one row per student for the assignment; returns the row count."""
    grades, stamps = read_grades(out), _timestamps(out)
    rows = []
    for student, notebooks in grades.items():
        score, total, _ = student_totals(notebooks)
        late, due, submitted = term.student_late(notebooks.values())  # nbgrader's late columns
        rows.append(
            [
                ASSIGNMENT,
                term.nbgrader_time(due),
                term.nbgrader_time(submitted) or stamps.get(student, ""),
                student,
                "",
                "",
                "",
                _cell(score),
                _cell(late),
                _cell(max(0.0, score - late)),
                _cell(total),
            ]
        )
    _write_csv(dest, NBGRADER_COLUMNS, rows)
    return len(grades)


def _notebook_points(row):
    """A notebook's points: autograded plus hand-graded so far; None when there is no score yet."""
    if row is None or row["score"] is None:
        return None
    return row["score"] + (row.get("written_score") or 0.0)


LMS_SUMMARY_COLUMNS = [
    "student_id",
    "submitted_as",
    *NOTEBOOKS,
    "total",
    "max_total",
    "percent",
    "provisional",
    "notes",
]


def write_lms_csv(out, dest):
    """One row per student: name as submitted, per-notebook scores, total, maximum, percent, "yes" when the total
    is provisional, and notes; returns the row count."""
    grades, names, rows = read_grades(out), submitted_names(out), []
    for student, notebooks in grades.items():
        score, total, notes = student_totals(notebooks)
        per_nb = [_notebook_points(notebooks.get(nb)) for nb in NOTEBOOKS]
        rows.append(
            [
                student,
                names.get(student, student),
                *("" if s is None else f"{s:g}" for s in per_nb),
                f"{score:g}",
                f"{total:g}",
                f"{100 * score / total:.1f}" if total else "",
                "yes" if is_provisional(notebooks) else "",
                "; ".join(notes),
            ]
        )
    _write_csv(dest, LMS_SUMMARY_COLUMNS, rows)
    return len(grades)


def _final(grades):
    """The students whose totals are final (nothing waits for a person), in grades' order."""
    return {s: nbs for s, nbs in grades.items() if not is_provisional(nbs)}


def write_gradebook(out, dest, lms, setting=None, now=None, lms_applies_late_policy=False):
    """The gradebook file `lms` imports (an autograder.lms record): one row per student with a final total, matched
    by the LMS's own id; returns the row count. Provisional totals are left out (the LMS would post them as the
    grade). Scores carry the late penalty unless `lms_applies_late_policy` (then the LMS deducts it).

    Inputs:
    - setting: the LMS's setting from the course file ([lms]: Canvas's assignment id names the column, Moodle's
      maximum grade scales the grades), None when it has none.
    - now: the time the file says it was written (default: now).
    """
    grades, ids, names = read_grades(out), lms_ids(out), submitted_names(out)
    stamp = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%d %H:%M:%S UTC")
    possible = max((student_totals(nbs)[1] for nbs in grades.values()), default=0)
    final, rows = _final(grades), lms.head_rows(possible)
    for student, notebooks in final.items():
        score, total, _ = _after_late(notebooks, student_totals(notebooks), lms_applies_late_policy)
        theirs = ids.get(student, NO_ID)
        name = theirs.name or names.get(student, student)
        late = 0.0 if lms_applies_late_policy else term.student_late(notebooks.values())[0]
        grade, top = lms.scale(score, total, setting)
        rows.append(lms.row(theirs, student, name, f"{grade:g}", f"{top:g}", stamp, student_comment(notebooks, late)))
    _write_csv(dest, lms.columns(setting), rows)
    return len(final)


def notebook_parts(notebooks):
    """Points per notebook in the student's terms ('bert: 0 / 7 (not submitted)'): no internal statuses, cell ids
    or instructions for staff."""
    parts = []
    for nb in NOTEBOOKS:
        row = notebooks.get(nb)
        points = _notebook_points(row)
        top = (row["max_score"] if row and row["max_score"] is not None else max_score(nb)) + written_max_score(nb)
        part = f"{nb}: {0 if points is None else points:g} / {top:g}"
        if row is None or row["status"] == Status.MISSING:
            part += " (not submitted)"
        elif not was_graded(row["status"]):
            part += " (could not be graded: see your feedback page)"
        parts.append(part)
    return parts


def student_comment(notebooks, late=0.0):
    """The Moodle feedback comment a student reads: points per notebook (notebook_parts) and, when the grade carries
    a late penalty of `late` points, that penalty and the grade it leaves, so the points add up to the grade."""
    text = "Autograded and hand-graded points: " + "; ".join(notebook_parts(notebooks)) + "."
    if late:
        raw, total, _ = student_totals(notebooks)
        text += f" Late penalty: -{late:g} points, so {max(0.0, raw - late):g} / {total:g}."
    return text + " Your feedback pages explain each score."


def lms_warnings(out, first=5):
    """Console lines about the LMS imports: provisional totals left out, and students the LMS cannot match
    because ingest found no Canvas or Moodle id for them (plain folders); each names the first few."""
    grades, ids, names = read_grades(out), lms_ids(out), submitted_names(out)

    def some(students):
        shown = ", ".join(names.get(s, s) for s in students[:first])
        return shown + (f" and {len(students) - first} more" if len(students) > first else "")

    lines = []
    waiting = [s for s, nbs in grades.items() if is_provisional(nbs)]
    if waiting:
        lines.append(
            f"export: {len(waiting)} provisional total(s) left out of canvas_grades.csv and moodle_grades.csv "
            f"(cells still to grade by hand, or a notebook damaged in the LMS download; lms_grades.csv marks them): "
            f"{some(waiting)}"
        )
    final = [s for s in grades if s not in waiting]
    used = sorted({ids[s].lms for s in final if ids.get(s, NO_ID).lms in REGISTRY})
    if final and not used:
        lines.append(
            f"export: {len(final)} student(s) have no LMS id (plain folders, not an LMS download): neither Canvas "
            f"nor Moodle will match their rows in canvas_grades.csv and moodle_grades.csv: {some(final)}"
        )
    for lms in used:
        unmatched = [s for s in final if ids.get(s, NO_ID).lms != lms]
        if unmatched:
            lines.append(
                f"export: {len(unmatched)} student(s) in {lms}_grades.csv have no {REGISTRY[lms].user_id} "
                f"({REGISTRY[lms].name} will not match them): {some(unmatched)}"
            )
    return lines


def _after_late(notebooks, totals, lms_applies_late_policy):
    """(score, total, notes) of student_totals with the late penalty taken off the score, unless the
    LMS applies its own late policy."""
    score, total, notes = totals
    late, _, _ = term.student_late(notebooks.values())
    if late and not lms_applies_late_policy:
        return max(0.0, score - late), total, notes + [f"late penalty -{late:g} points"]
    return score, total, notes


def export(out, *, lms_applies_late_policy=False):
    """Write OUT/export/{nbgrader,lms,canvas,moodle}_grades.csv; returns their paths. The Canvas column names the
    assignment id and the Moodle grades are scaled to its maximum grade when OUT's course file gives them ([lms])."""
    folder = Out.at(out).export
    folder.mkdir(parents=True, exist_ok=True)
    settings = {lms: lms_setting(out, lms) for lms in REGISTRY.values()}
    writers = {"nbgrader_grades.csv": write_nbgrader_csv, "lms_grades.csv": write_lms_csv}
    for lms, setting in settings.items():
        writers[f"{lms.id}_grades.csv"] = functools.partial(
            write_gradebook, lms=lms, setting=setting, lms_applies_late_policy=lms_applies_late_policy
        )
    for name, write in writers.items():
        write(out, folder / name)
    for line in lms_warnings(out):
        print(line)
    for lms, setting in settings.items():
        if not setting:
            print(lms.export_unset.format(title=lms.columns(None)[-1]))
    return tuple(folder / name for name in writers)


def lms_setting(out, lms, given=None):
    """The setting of `lms` (an autograder.lms record: Moodle's maximum grade, Canvas's assignment id) as given, else
    from OUT's course file ([lms]); None when neither gives a usable one."""
    if given is None:
        try:
            course = term.Term.load(out).course
        except term.TermError:  # a damaged course file only costs its [lms] settings here
            course = None
        given = getattr(course, lms.setting, None)
    return lms.setting_value(given)


def use_term_files(out, course=None, extensions=None):
    """A later command's --course/--extensions: kept in OUT/term in place of grading's copies, then
    grades.csv re-computed with them (and the hand grades) so every export agrees. Raises term.TermError."""
    if course is None and extensions is None:
        return
    term.replace_files(out, course, extensions)
    results = Results(out)
    results.write_csvs(results.hand_grades())


def main(
    *, out: Path, lms_applies_late_policy: bool = False, course: Path | None = None, extensions: Path | None = None
) -> int:
    """`export`: write OUT's grade exports (with --course/--extensions in place of OUT's). Returns the exit status."""
    try:
        use_term_files(out, course, extensions)
        paths = export(out, lms_applies_late_policy=lms_applies_late_policy)
    except (FileNotFoundError, term.TermError) as exc:
        print(f"export: {exc}", file=sys.stderr)
        return 1
    for p in paths:
        print(f"wrote {p}")
    return 0
