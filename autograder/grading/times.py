"""When each student submitted, found at grading time, and the term settings recorded in OUT/term.

First found per student: nbgrader's timestamp.txt in the student's folder, the Moodle grading worksheet's
"Last modified (submission)" (`--worksheet`, read in the course file's time zone), then the `--submitted` CSV; Canvas's
_LATE marker alone (no time) records 'late (time unknown)'. No evidence: on time (the summary counts them).
"""

from collections.abc import Mapping
from pathlib import Path

from autograder import csvsafe, lms, term
from autograder.grading.ingest import Submission
from autograder.out import Out


def names(students: Mapping[str, list[Submission]]) -> dict[str, set[str]]:
    """{student id: the names they submitted under (folder name, LMS name)}: how a TA may name them in a term file."""
    return {
        student: {s.submitted_as for s in subs if s.submitted_as} | {s.lms["name"] for s in subs if s.lms.get("name")}
        for student, subs in students.items()
    }


def zone(out: Path | str, course: term.Course | None) -> str:
    """The course's time zone name: from `course` when given, else from the course file OUT keeps ('' if none)."""
    settings = course or term.Term.load(out).course
    return settings.timezone if settings else ""


def evidence(
    students: Mapping[str, list[Submission]],
    submitted: Path | str | None = None,
    worksheet: Path | str | None = None,
    zone: str = "",
) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """Each student's submission time and how we know it.

    Inputs:
    - students: {student: [Submission]} (pipeline.collect; a submission's lms may say "late": True, its timestamp
      is nbgrader's timestamp.txt in the student's folder).
    - submitted: a CSV student,submitted_at (grade --submitted), checked against `students`.
    - worksheet, zone: a Moodle grading worksheet (grade --worksheet) and the time zone its dates are in.
    Returns:
    - ({student: (ISO time or term.UNKNOWN_TIME, evidence)}, log lines: each timestamp.txt that did not parse).
    Raises term.TermError for a bad --submitted file (nothing is graded then).
    """
    given = term.read_times(submitted, term.SUBMITTED_COLUMNS, names(students), "submitted") if submitted else {}
    found, log, sheet = {}, [], {}
    if worksheet:
        participants = {
            s.lms.get("user_id"): student
            for student, subs in students.items()
            for s in subs
            if s.lms.get("lms") == lms.MOODLE.id  # the worksheet is Moodle's
        }
        sheet, notes = term.read_worksheet(worksheet, participants, zone)
        log += [f"WORKSHEET {note}" for note in notes]
    for student, subs in students.items():
        stamp = next((s.timestamp for s in subs if s.timestamp), None)
        if stamp:
            try:
                found[student] = (term.read_timestamp_file(stamp).isoformat(), "timestamp.txt")
                continue
            except term.TermError as exc:
                log.append(f"TIMESTAMP ignored for {student}: {exc}")
        if student in sheet:
            found[student] = (sheet[student].isoformat(), "worksheet")
        elif student in given:
            found[student] = (given[student].isoformat(), "--submitted")
        elif any(s.lms.get("late") for s in subs):
            found[student] = (term.UNKNOWN_TIME, "canvas _LATE")
    return found, log


LMS_FILE_COLUMNS = ["student", "lms", "lms_user_id", "lms_file_id", "lms_name"]


def record_lms_files(out: Path | str, students: Mapping[str, list[Submission]]) -> None:
    """Add OUT/term/lms_files.csv rows (student, lms, user id, the id of one submitted file, name) for `students`:
    what `release` needs to name feedback files as Canvas's re-upload expects (students of earlier runs kept)."""
    import io

    from autograder.files import atomic_write

    path = Out.at(out).lms_files
    rows = {}
    if path.exists():
        with open(path, newline="", encoding="utf-8") as f:
            rows = {r["student"]: [r[c] for c in LMS_FILE_COLUMNS] for r in csvsafe.DictReader(f)}
    for student, subs in students.items():
        lms = next((s.lms for s in subs if s.lms), {})
        if lms:
            rows[student] = [
                student,
                lms.get("lms", ""),
                lms.get("user_id", ""),
                lms.get("file_id", ""),
                lms.get("name", ""),
            ]
    buf = io.StringIO()
    writer = csvsafe.writer(buf, lineterminator="\n")
    writer.writerow(LMS_FILE_COLUMNS)
    writer.writerows(rows[s] for s in sorted(rows))
    atomic_write(path, buf.getvalue())
