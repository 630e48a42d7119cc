"""Release feedback through the LMS (issue 24): `python -m autograder release OUT --lms canvas|moodle [--partial]`.

Writes OUT/release/:
- moodle: moodle_feedback.zip for "Upload multiple feedback files in a zip" (one folder per participant, named as
  Moodle downloads it: `<Full name>_<participant id>_assignsubmission_file_/`), and moodle_worksheet.csv for
  "Upload grading worksheet" (Identifier "Participant <id>", Grade, Last modified (grade), Feedback comments);
- canvas: canvas_feedback.zip for "Re-upload submissions" (each file named `<login>_<user id>_<file id>_...`, the
  ids of the student's downloaded file, which is how Canvas finds the submission to comment on), and
  canvas_grades.csv (the gradebook import, released students only);
- MANIFEST.csv: student, LMS id, file, score, and "released" or why not.
What students may read only: their feedback pages (hidden tests and solutions already removed by reports.feedback,
checked again here) and a score summary with the late note. Never the similarity report, the TA index, grading.log,
the gradebook, autograded notebooks or anything else in OUT.

Moodle's rules (mod/assign/feedback/file/importziplib.php): a path part split on '_' into at most 5 pieces needs
4 or more, the second a participant id of the assignment, the third and fourth a plugin type and name; files and
folders starting with '.' or '~' are ignored. So a full name with '_' in it would hide the participant id: like
Moodle's own download, '_' in names becomes a space. The worksheet importer (feedback/offline/importgradeslib.php)
needs the columns "Identifier", "Grade" and "Last modified (grade)" and reads "Feedback comments" when it is not the
first column. Canvas's rule (Assignment#infer_comment_context_from_filename): in the file's base name split on '_',
the first two all-digit pieces are the user id and the id of one of that submission's files.
"""

import csv
import io
import re
import sys
import unicodedata
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from autograder import term, tokens
from autograder.contract import ASSIGNMENT
from autograder.records import Results, atomic_write
from autograder.reports import export

MANIFEST_COLUMNS = ["student", "lms_id", "file", "score", "status"]
LMS_FILES = Path(term.TERM_DIR) / "lms_files.csv"
# What a page a student reads must never hold (feedback pages are cleaned of them; checked again before release)
FORBIDDEN = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN SOLUTION", "END SOLUTION")
WORKSHEET_COLUMNS = ["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)", "Feedback comments"]


def _lms_ids(out: Path, lms: str) -> dict[str, dict]:
    """{student: {"lms_user_id", "lms_file_id", "lms_name"}} of the students `lms` named at grading time."""
    path = out / LMS_FILES
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {r["student"]: r for r in csv.DictReader(f) if r["lms"] == lms}


def moodle_folder(name: str, participant: str) -> str:
    """The folder Moodle's feedback zip import reads for a participant: '<name>_<id>_assignsubmission_file_'."""
    clean = re.sub(r"[\s_]+", " ", unicodedata.normalize("NFC", name)).strip(" .~/\\") or "student"
    return f"{clean.replace('/', ' ')}_{participant}_assignsubmission_file_"


def canvas_prefix(login: str, user_id: str, file_id: str) -> str:
    """The start of a feedback file's name Canvas's re-upload matches: '<login>_<user id>_<file id>_'."""
    login = re.sub(r"[\s_/\\]+", "-", login).strip(".-")
    if not login or login.isdigit():  # an all-digit login would be read as the user id
        login = "student"
    return f"{login}_{user_id}_{file_id}_"


def summary_text(student: str, score: float, raw: float, total: float, late_line: str, notes: list[str]) -> str:
    """What the student reads beside their pages: the score out of the total, and the late note."""
    lines = [f"{ASSIGNMENT}: {score:g} / {total:g}"]
    if late_line:
        lines.append(f"{late_line} (raw score {raw:g})")
    lines += [n for n in notes if not n.startswith("late penalty")]
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
    folder = out / "feedback" / student
    return sorted(p for p in folder.glob("*.html") if p.is_file()) if folder.is_dir() else []


def release(out: Path | str, lms: str, *, partial: bool = False, lms_applies_late_policy: bool = False) -> dict:
    """Build OUT/release for `lms` ("canvas" or "moodle").

    Returns:
    - {"released": [students], "held": {student: why}, "refused": [students with cells to grade by hand] (set only
       when nothing was written because of them), "files": [paths written]}
    """
    out = Path(out)
    if (out / ".state").is_dir():  # grades.csv from the hand grades and term files as they are now, never stale
        Results(out).write_csvs()
    grades = export.read_grades(out)
    waiting = {s: why for s, nbs in grades.items() if (why := not_final(nbs))}
    if waiting and not partial:
        return {"released": [], "held": {}, "refused": list(waiting), "why": waiting, "files": []}
    ids, late = _lms_ids(out, lms), term.Term.load(out)
    dest = out / "release"
    dest.mkdir(parents=True, exist_ok=True)
    manifest, released, held = [], [], {}
    members: dict[str, bytes] = {}
    sheet, stamp = [], datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S +0000")
    for student, notebooks in grades.items():
        lms_id = ids.get(student, {})
        raw, total, notes = export.student_totals(notebooks)
        penalty, _, _ = term.student_late(notebooks.values())
        score = raw if lms_applies_late_policy else max(0.0, raw - penalty)
        why = ""
        if student in waiting:
            why = f"not released: {waiting[student]}"
        elif not lms_id.get("lms_user_id"):
            why = f"not released: no {lms} id (the submission did not come from {lms})"
        elif lms == "canvas" and not lms_id.get("lms_file_id"):
            why = "not released: no Canvas file id to attach the feedback to"
        pages = _pages(out, student)
        if not why:
            bad = [p.name for p in pages if leaks(p.read_text(encoding="utf-8"))]
            if bad:
                why = f"not released: {', '.join(bad)} shows hidden tests, solution markers or pass tokens"
        if why:
            held[student] = why
            manifest.append([student, lms_id.get("lms_user_id", ""), "", f"{score:g}", why])
            continue
        st = late.late(student)
        line = term.describe(st, raw) if st is not None else ""
        summary = summary_text(student, score, raw, total, line, notes).encode()
        if lms == "moodle":
            folder = moodle_folder(lms_id.get("lms_name") or student, lms_id["lms_user_id"])
            files = {f"{folder}/{p.name}": p.read_bytes() for p in pages}
            files[f"{folder}/summary.txt"] = summary
            comment = " ".join(summary.decode().split("\n")).strip()
            sheet.append(
                [
                    f"Participant {lms_id['lms_user_id']}",
                    lms_id.get("lms_name") or student,
                    f"{score:g}",
                    f"{total:g}",
                    stamp,
                    comment,
                ]
            )
        else:
            prefix = canvas_prefix(lms_id.get("lms_name") or student, lms_id["lms_user_id"], lms_id["lms_file_id"])
            files = {f"{prefix}feedback-{p.name}": p.read_bytes() for p in pages}
            files[f"{prefix}summary.txt"] = summary
        members.update(files)
        released.append(student)
        manifest += [[student, lms_id["lms_user_id"], name, f"{score:g}", "released"] for name in files]
    written = []
    zip_path = dest / f"{lms}_feedback.zip"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(members):
            z.writestr(name, members[name])
    atomic_write(zip_path, buf.getvalue())
    written.append(zip_path)
    if lms == "moodle":
        written.append(_write(dest / "moodle_worksheet.csv", WORKSHEET_COLUMNS, sheet))
    else:
        written.append(
            _canvas_grades(
                out, dest / "canvas_grades.csv", {ids[s]["lms_user_id"] for s in released}, lms_applies_late_policy
            )
        )
    written.append(_write(dest / "MANIFEST.csv", MANIFEST_COLUMNS, manifest))
    return {"released": released, "held": held, "refused": [], "files": written, "stale": stale_pages(out, released)}


def stale_pages(out: Path, students: list[str]) -> int:
    """How many of the students' feedback pages are older than the hand grades or the term files (their scores and
    late notes may be out of date until `feedback OUT` renders them again)."""
    sources = [out / "gradebook.db", *(out / term.TERM_DIR).glob("*")]
    newest = max((p.stat().st_mtime for p in sources if p.exists()), default=0.0)
    return sum(1 for s in students for p in _pages(out, s) if p.stat().st_mtime < newest)


def _write(path: Path, columns: list[str], rows: list[list[str]]) -> Path:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    atomic_write(path, buf.getvalue())
    return path


def _canvas_grades(out: Path, path: Path, user_ids: set[str], lms_applies_late_policy: bool) -> Path:
    """reports.export's Canvas gradebook import, with only the released students' rows (and Points Possible)."""
    tmp = path.with_name(".canvas_grades.all.csv")
    export.write_canvas_csv(out, tmp, lms_applies_late_policy=lms_applies_late_policy)
    with open(tmp, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    tmp.unlink()
    keep = [r for r in rows[1:] if r[0] == "Points Possible" or r[1] in user_ids]
    return _write(path, rows[0], keep)


def main(
    *,
    out: Path,
    lms: str,
    partial: bool = False,
    lms_applies_late_policy: bool = False,
    course: Path | None = None,
    extensions: Path | None = None,
) -> int:
    """`release`: write OUT/release for the LMS; refuses while a student has cells to grade by hand (see --partial)."""
    out = Path(out)
    try:
        export.use_term_files(out, course, extensions)  # grades.csv re-computed with them
        got = release(out, lms, partial=partial, lms_applies_late_policy=lms_applies_late_policy)
    except (FileNotFoundError, term.TermError) as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 1
    if got["refused"]:
        first = ", ".join(got["refused"][:5])
        print(
            f"release: {len(got['refused'])} students are not final ({first}"
            f"{', ...' if len(got['refused']) > 5 else ''}): grade their cells in formgrader or download a damaged "
            "submission again, or release the others with --partial",
            file=sys.stderr,
        )
        for student, why in list(got["why"].items())[:5]:
            print(f"  {student}: {why}", file=sys.stderr)
        return 1
    print(f"released {len(got['released'])} students to {lms}; held back {len(got['held'])}")
    if got["stale"]:
        print(
            f"  warning: {got['stale']} released feedback pages are older than the hand grades or term files: run "
            f"`python -m autograder feedback {out}` and release again so they show final scores and late notes"
        )
    for student, why in got["held"].items():
        print(f"  {student}: {why}")
    for path in got["files"]:
        print(f"wrote {path}")
    return 0
