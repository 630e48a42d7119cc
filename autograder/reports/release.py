"""Release feedback through the LMS: `python -m autograder release OUT --lms canvas|moodle [--partial]`.

Writes OUT/release/:
- moodle: moodle_feedback.zip for "Upload multiple feedback files in a zip" (one folder per participant, named as
  Moodle downloads it: `<Full name>_<participant id>_assignsubmission_file_/`), and moodle_worksheet.csv for
  "Upload grading worksheet" (Identifier "Participant <id>", Grade, Last modified (grade), Feedback comments);
- canvas: canvas_feedback.zip for "Re-upload submissions" (each file named `<login>_<user id>_<file id>_...`, the
  ids of the student's downloaded file, which is how Canvas finds the submission to comment on), and
  canvas_grades.csv (the gradebook import, released students only);
- MANIFEST.csv: student, LMS id, file, score, and "released" or why not;
- HISTORY.csv: every student each release put in the LMS's files, with the digest of what they were given (grade,
  pages, summary). `--partial` releases only the final students whose digest differs from their last release to
  that LMS (a regrade resolved, a mark or a late note changed, never released), and leaves out the rest.
What students may read only: their feedback pages (hidden tests and solutions already removed by reports.feedback,
checked again here) and a score summary with the late note. Never the similarity report, the TA index, grading.log,
the gradebook, autograded notebooks or anything else in OUT.

Upload order for Moodle (from its code): the worksheet first, then the feedback zip. The zip importer
(feedback/file/importziplib.php, import_zip_files) creates or touches each participant's grade row, so its time
becomes "now"; the worksheet importer (feedback/offline/locallib.php, process_import_grades) then skips every grade
and comment whose row was modified more than 60 s after the worksheet's "Last modified (grade)", unless "Allow
updating records that have been modified more recently in Moodle than in the spreadsheet" is ticked. It also
ignores "Maximum Grade" and skips a grade above the assignment's maximum grade (100 by default), so a grade is
scaled to that maximum (`--moodle-max N` or [lms] moodle_max in course.toml) and release refuses without it.
Canvas's gradebook importer (GradebookImporter#parse_assignments, Assignment.title_and_id) finds the assignment by
the id in a column header "Title (id)", else by an exact title, else creates a new assignment: the column is
"a3 (<id>)" (`--canvas-assignment-id N` or [lms] canvas_assignment_id), and release refuses without it.
Students graded from plain folders reach the LMS through a roster (`--roster FILE`, kept in OUT/term/roster.csv):
a CSV student,lms_id,... (Moodle participant id or Canvas user id), Moodle's grading worksheet or Canvas's
gradebook export, each matched to the folder or LMS name a student submitted under.

Moodle's rules (mod/assign/feedback/file/importziplib.php): a path part split on '_' into at most 5 pieces needs
4 or more, the second a participant id of the assignment, the third and fourth a plugin type and name; files and
folders starting with '.' or '~' are ignored. So a full name with '_' in it would hide the participant id: like
Moodle's own download, '_' in names becomes a space. The worksheet importer (feedback/offline/importgradeslib.php)
needs the columns "Identifier", "Grade" and "Last modified (grade)" and reads "Feedback comments" when it is not the
first column. Canvas's rule (Assignment#infer_comment_context_from_filename): in the file's base name split on '_',
the first two all-digit pieces are the user id and the id of one of that submission's files.
"""

import hashlib
import io
import re
import sys
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from autograder import csvsafe, term, tokens
from autograder.contract import ASSIGNMENT, NOTEBOOKS, max_score, written_max_score
from autograder.files import atomic_write
from autograder.lms import LMS, NO_ID, REGISTRY
from autograder.lms import ids as lms_ids
from autograder.marking import pages
from autograder.out import Out
from autograder.records import Results
from autograder.reports import export

MANIFEST_COLUMNS = ["student", "lms_id", "file", "score", "status"]
HISTORY_COLUMNS = ["student", "lms", "lms_id", "score", "digest", "released_at"]
ROSTER_COLUMNS = ["student", "lms", "lms_user_id", "lms_name"]


class ReleaseError(ValueError):
    """A release that cannot be made as asked: its message is one line saying what to pass."""


# What a page a student reads must never hold (feedback pages are cleaned of them; checked again before release)
FORBIDDEN = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN SOLUTION", "END SOLUTION")


def _roster_rows(path: Path) -> tuple[str, list[tuple[int, dict]]]:
    """(kind, [(line, row)]) of a roster file: 'csv' (student,lms_id,...) or the id of the LMS whose own grade export
    it is (Moodle's grading worksheet, Canvas's gradebook export). Raises ReleaseError for anything else."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"{path}: cannot read the roster: {exc}") from None
    reader = csvsafe.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    reader.fieldnames = header
    kind = (
        "csv"
        if header[:2] == ["student", "lms_id"]
        else next((l for l in REGISTRY if REGISTRY[l].is_roster(header)), "")
    )
    if not kind:
        exports = " or ".join(f"{lms.name}'s {lms.export_name}" for lms in REGISTRY.values())
        raise ReleaseError(
            f"{path}:1: a roster is a CSV student,lms_id,..., {exports}, not a file with the columns {','.join(header)}"
        )
    rows = [(reader.line_num, row) for row in reader if any((v or "").strip() for v in row.values())]
    return kind, rows


def read_roster(path: Path | str, lms: str, students: dict[str, set[str]]) -> tuple[dict[str, dict], list[str]]:
    """Map students to their LMS ids from a roster.

    Inputs:
    - path: a CSV student,lms_id,... (student: id, folder or LMS name, see term.resolve_student; lms_id: the Moodle
      participant id, "Participant 1001" or 1001, or the Canvas user id), Moodle's grading worksheet, or Canvas's
      gradebook export (a student matched by full name, sortable name, email or login).
    - students: {student id: the names they submitted under} (term.recorded_names).
    Returns:
    - ({student: {"student", "lms", "lms_user_id", "lms_name"}}, notes: one line per row that maps no one, and per
       name several students or rows share).
    Raises ReleaseError (file and line) for a row of a CSV roster that names no student or no id.
    """
    path = Path(path)
    kind, rows = _roster_rows(path)
    found, notes = {}, []
    if kind == "csv":
        for line, row in rows:
            uid = re.sub(r"^\D*", "", (row["lms_id"] or "").strip())
            if not uid.isdigit():
                raise ReleaseError(f"{path}:{line}: lms_id {row['lms_id']!r} is not an LMS id (a number)")
            try:
                student = term.resolve_student(row["student"].strip(), students)
            except LookupError as exc:
                raise ReleaseError(f"{path}:{line}: {exc}") from None
            name = (row.get("lms_name") or row.get("name") or "").strip() or row["student"].strip()
            found[student] = {"student": student, "lms": lms, "lms_user_id": uid, "lms_name": name}
        return found, notes
    keys = {sid: {term.name_key(n) for n in names if n} | {term.name_key(sid)} for sid, names in students.items()}
    matches: dict[str, list[tuple[str, str]]] = {}
    unmatched = []
    for _, row in rows:
        uid, names = REGISTRY[kind].roster_names(row)
        if not uid.isdigit():
            continue  # Canvas's "Points Possible" row, or a row without an id
        wanted = {term.name_key(n) for n in names if n and n.strip()}
        hits = [sid for sid, k in keys.items() if k & wanted]
        for sid in hits:
            matches.setdefault(sid, []).append((uid, names[0]))
        if not hits:
            unmatched.append(names[0])
    if unmatched:  # students of the LMS who submitted nothing here, or under another name
        notes.append(f"{path}: {len(unmatched)} rows match no student graded here ({', '.join(unmatched[:5])})")
    for sid, got in matches.items():
        if len({uid for uid, _ in got}) > 1:
            ids = " and ".join(sorted({uid for uid, _ in got}))
            notes.append(
                f"{path}: {sid!r} matches {len(got)} {lms} students ({ids}): give their id in a CSV student,lms_id"
            )
            continue
        uid, name = got[0]
        found[sid] = {"student": sid, "lms": lms, "lms_user_id": uid, "lms_name": name}
    return found, notes


def keep_roster(out: Path, roster: Path | str, lms: str) -> list[str]:
    """Read `roster` against the students recorded in OUT and keep what it maps in OUT/term/roster.csv (rows of
    earlier rosters for other students kept); returns the notes of read_roster."""
    found, notes = read_roster(roster, lms, term.recorded_names(out))
    rows = {}
    if Out.at(out).roster.exists():
        with open(Out.at(out).roster, newline="", encoding="utf-8") as f:
            rows = {(r["student"], r["lms"]): r for r in csvsafe.DictReader(f)}
    rows.update({(s, lms): r for s, r in found.items()})
    _write(Out.at(out).roster, ROSTER_COLUMNS, [[r[c] for c in ROSTER_COLUMNS] for _, r in sorted(rows.items())])
    return notes


def _points(x: float) -> str:
    """A grade as Moodle's and Canvas's importers read it: at most 2 decimals, a '.' decimal point."""
    return f"{round(x, 2):g}"


def summary_text(notebooks: dict, score: float, raw: float, total: float, late_line: str, scaled: str = "") -> str:
    """What the student reads beside their pages (and in Moodle's comment): the grade out of the total, the LMS's
    scaled grade, the late note, and the points per notebook that add up to the raw score."""
    lines = [f"{ASSIGNMENT}: {_points(score)} / {total:g} points"]
    if scaled:
        lines.append(scaled)
    if late_line:
        lines.append(f"{late_line}; {_points(raw)} points before the penalty")
    lines += export.notebook_parts(notebooks)
    return "\n".join(lines) + "\n"


def not_final(notebooks: dict) -> str:
    """Why a student's grade is not final yet, in one line ('' when it is): notebooks the TA's LMS download damaged
    (never the student's fault: they wait for a good download), cells to grade by hand."""
    parts = []
    damaged = export.damaged_downloads(notebooks)
    if damaged:
        parts.append(f"{', '.join(damaged)} damaged in the LMS download: download the submissions again and grade")
    hand = [f"{nb}/{gid}" for nb, row in notebooks.items() for gid in row.get("ungraded") or []]
    if hand:
        parts.append(f"cells to grade by hand ({', '.join(hand)})")
    return "; ".join(parts)


def leaks(text: str) -> bool:
    """True when a page holds what students must never see: hidden-test or solution markers, or a pass token."""
    return any(m in text for m in FORBIDDEN) or bool(tokens.TOKEN.search(text))


def _pages(out: Path, student: str) -> list[Path]:
    """The student's feedback pages: OUT/feedback/<student>/<notebook>.html, nothing else."""
    folder = Out.at(out).feedback / student
    return sorted(p for p in folder.glob("*.html") if p.is_file()) if folder.is_dir() else []


def released_before(out: Path, lms: str) -> dict[str, dict]:
    """{student: their latest row of OUT/release/HISTORY.csv for `lms`}: what they were last given through it."""
    path = Out.at(out).release / "HISTORY.csv"
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {r["student"]: r for r in csvsafe.DictReader(f) if r["lms"] == lms}


def given(grade: str, files: dict[str, bytes]) -> str:
    """The digest of what a release gives a student: the grade the LMS imports and every file (name and bytes)."""
    h = hashlib.sha256(grade.encode())
    for name in sorted(files):
        h.update(b"\0" + name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return h.hexdigest()


def lms_settings(out: Path, lms: LMS, given: float | int | None) -> float | int:
    """The setting a release to `lms` needs (Moodle's maximum grade, Canvas's assignment id): as given, else from
    OUT's course file; raises ReleaseError (one line) when neither says."""
    value = export.lms_setting(out, lms, given)
    if not value:
        total = sum(max_score(nb) + written_max_score(nb) for nb in NOTEBOOKS)
        raise ReleaseError(lms.setting_needed.format(total=total))
    return value


def release(
    out: Path | str,
    lms: str,
    *,
    partial: bool = False,
    lms_applies_late_policy: bool = False,
    setting: float | int | None = None,
    roster: Path | str | None = None,
) -> dict:
    """Build OUT/release for `lms` (an id of autograder.lms.REGISTRY: "canvas", "moodle").

    Inputs:
    - setting: the LMS's setting (autograder.lms: Moodle's maximum grade, to which grades are scaled; Canvas's
      assignment id); None: OUT's course file, [lms]; ReleaseError when neither gives it.
    - roster: a roster mapping students of plain folders to LMS ids (read_roster), kept in OUT for later runs.
    - partial: release the final students only, and of them only those given something else than at their last
      release to `lms` (OUT/release/HISTORY.csv); the others are "unchanged".
    Returns:
    - {"released": [students], "held": {student: why}, "unchanged": {student: when last released} (partial only),
       "refused": [students not final] (set only when nothing was written because of them), "why": {student: why
       not final}, "files": [paths written], "stale": how many released pages are older than the hand grades or
       the term files, "notes": [roster notes], "setting": the maximum or the id used}
    """
    out, system = Path(out), REGISTRY[lms]
    setting = lms_settings(out, system, setting)
    notes = keep_roster(out, roster, lms) if roster is not None else []
    if Out.at(out).state.is_dir():  # grades.csv from the hand grades and term files as they are now, never stale
        Results(out).write_csvs()
    grades = export.read_grades(out)
    waiting = {s: why for s, nbs in grades.items() if (why := not_final(nbs))}
    if waiting and not partial:
        return {"released": [], "held": {}, "refused": list(waiting), "why": waiting, "files": [], "notes": notes}
    ids, late = lms_ids(out, lms), term.Term.load(out)
    dest = Out.at(out).release
    dest.mkdir(parents=True, exist_ok=True)
    manifest, released, held, unchanged, history = [], [], {}, {}, []
    before = released_before(out, lms) if partial else {}
    members: dict[str, bytes] = {}
    sheet, stamp = [], datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S +0000")
    for student, notebooks in grades.items():
        lms_id = ids.get(student, NO_ID)
        raw, total, _ = export.student_totals(notebooks)
        penalty, _, _ = term.student_late(notebooks.values())
        score = raw if lms_applies_late_policy else max(0.0, raw - penalty)
        why = ""
        if student in waiting:
            why = f"not released: {waiting[student]}"
        elif not lms_id.user_id:
            why = f"not released: no {lms} id (the submission did not come from {lms}; map it with --roster)"
        pages = _pages(out, student)
        if not why:
            bad = [p.name for p in pages if leaks(p.read_text(encoding="utf-8"))]
            if bad:
                why = f"not released: {', '.join(bad)} shows hidden tests, solution markers or pass tokens"
        if why:
            held[student] = why
            manifest.append([student, lms_id.user_id, "", _points(score), why])
            continue
        st = late.late(student)
        line = term.describe(st, raw) if st is not None and not lms_applies_late_policy else ""
        status = "released"
        grade, _ = system.scale(score, total, setting)
        summary = summary_text(notebooks, score, raw, total, line, system.scaled_line(grade, setting, total)).encode()
        files = system.feedback_files(lms_id, student, {p.name: p.read_bytes() for p in pages}, summary)
        if files is None:
            files = {}
            status = f"released: grade only (no {system.name} submission file to attach the feedback pages to)"
        comment = "; ".join(line for line in summary.decode().split("\n") if line)
        name = lms_id.name or student
        row = system.row(lms_id, student, name, _points(grade), f"{setting:g}", stamp, comment)
        digest = given(_points(grade), files)
        last = before.get(student)
        if last and last["digest"] == digest and last["lms_id"] == lms_id.user_id:
            unchanged[student] = last["released_at"]
            why = f"not released: unchanged since the release of {last['released_at']}"
            manifest.append([student, lms_id.user_id, "", _points(score), why])
            continue
        if not files:
            manifest.append([student, lms_id.user_id, "", _points(score), status])
        sheet.append(row)
        members.update(files)
        released.append(student)
        history.append([student, lms, lms_id.user_id, _points(score), digest, stamp])
        manifest += [[student, lms_id.user_id, name, _points(score), status] for name in files]
    written = []
    if released:
        zip_path = dest / f"{lms}_feedback.zip"
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for name in sorted(members):
                z.writestr(name, members[name])
        atomic_write(zip_path, buf.getvalue())
        written.append(zip_path)
        possible = max(export.student_totals(grades[s])[1] for s in released)
        written.append(_write(dest / system.sheet, system.columns(setting), system.head_rows(possible) + sheet))
    else:  # OUT/release holds this release's files only: an earlier one's must not be uploaded twice
        for name in (f"{lms}_feedback.zip", system.sheet):
            (dest / name).unlink(missing_ok=True)
    written.append(_write(dest / "MANIFEST.csv", MANIFEST_COLUMNS, manifest))
    if history:
        _append_history(dest / "HISTORY.csv", history)
    return {
        "released": released,
        "held": held,
        "unchanged": unchanged,
        "refused": [],
        "why": waiting,
        "files": written,
        "stale": stale_pages(out, released),
        "notes": notes,
        "setting": setting,
    }


def stale_pages(out: Path, students: list[str]) -> int:
    """How many of the students' feedback pages are older than the hand grades or the term files (their scores and
    late notes may be out of date until `feedback OUT` renders them again)."""
    sources = [Out.at(out).gradebook, *(p for p in Out.at(out).term.glob("*") if p != Out.at(out).roster)]
    newest = max((p.stat().st_mtime for p in sources if p.exists()), default=0.0)
    noted = pages.pending(out)  # a grading page's refresh not done yet (marking.pages)
    every = ("", "") in noted
    return sum(
        1 for s in students for p in _pages(out, s) if p.stat().st_mtime < newest or every or (s, p.stem) in noted
    )


def _append_history(path: Path, rows: list[list[str]]) -> None:
    """Add a release's rows to HISTORY.csv (the header first when the file is new)."""
    new = not path.exists()
    with open(path, "a", newline="", encoding="utf-8") as f:
        writer = csvsafe.writer(f, lineterminator="\n")
        if new:
            writer.writerow(HISTORY_COLUMNS)
        writer.writerows(rows)


def _write(path: Path, columns: list[str], rows: list[list[str]]) -> Path:
    buf = io.StringIO()
    writer = csvsafe.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    atomic_write(path, buf.getvalue())
    return path


def main(
    *,
    out: Path,
    lms: str,
    partial: bool = False,
    lms_applies_late_policy: bool = False,
    course: Path | None = None,
    extensions: Path | None = None,
    roster: Path | None = None,
    **settings: float | int | None,
) -> int:
    """`release`: write OUT/release for the LMS and say how to upload it. Returns 1 when it refuses (a student not
    final without --partial, no Moodle maximum or Canvas id, a bad roster) or releases no one.

    settings: each LMS's setting by its key (autograder.lms: moodle_max, canvas_assignment_id), None when not given.
    """
    out, system = Path(out), REGISTRY[lms]
    try:
        export.use_term_files(out, course, extensions)  # grades.csv re-computed with them
        got = release(
            out,
            lms,
            partial=partial,
            lms_applies_late_policy=lms_applies_late_policy,
            setting=settings.get(system.setting),
            roster=roster,
        )
    except (FileNotFoundError, term.TermError, ReleaseError) as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 1
    for note in got["notes"]:
        print(f"roster: {note}")
    if got["refused"]:
        first = ", ".join(got["refused"][:5])
        print(
            f"release: {len(got['refused'])} students are not final ({first}"
            f"{', ...' if len(got['refused']) > 5 else ''}): grade their cells (`mark OUT`, or formgrader) or download a damaged "
            "submission again, or release the others with --partial",
            file=sys.stderr,
        )
        for student, why in list(got["why"].items())[:5]:
            print(f"  {student}: {why}", file=sys.stderr)
        return 1
    unchanged = got.get("unchanged") or {}
    print(
        f"released {len(got['released'])} students to {lms}; held back {len(got['held'])}"
        + (f"; {len(unchanged)} unchanged since their last release, left out" if unchanged else "")
    )
    if got["stale"]:
        print(
            f"  warning: {got['stale']} released feedback pages are older than the hand grades or term files: run "
            f"`python -m autograder feedback {out}` and release again so they show final scores and late notes"
        )
    for student, why in got["held"].items():
        print(f"  {student}: {why}")
    for path in got["files"]:
        print(f"wrote {path}")
    if not got["released"] and unchanged:
        print(f"release: nothing changed since the last release to {lms}: nothing to upload")
        return 0
    if not got["released"]:
        print(f"release: nothing released to {lms}: MANIFEST.csv says why for each student", file=sys.stderr)
        return 1
    dest = Out.at(out).release
    sheet, column = dest / system.sheet, system.columns(got["setting"])[-1]
    print(system.steps.format(sheet=sheet, zip=dest / f"{lms}_feedback.zip", setting=got["setting"], column=column))
    return 0
