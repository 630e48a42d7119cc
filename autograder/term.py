"""A course term: the due date and late policy (course.toml), extensions, submission times, and the penalty.

What a grading run keeps of it in OUT, so that every later command on OUT agrees without repeating flags:

OUT/term/
  course.toml      the course file graded with (`grade --course FILE`, default the repository's course.toml)
  extensions.csv   student,due: one student's own due date (`grade --extensions FILE`; private, never committed)
  submitted.csv    student,submitted_at,evidence: when each student submitted and how we know (timestamp.txt,
                   --submitted, canvas _LATE marker); a student absent from it submitted on time as far as we know

The penalty is never stored: `Term.lateness` and `penalty` compute it from the final raw score whenever an output is
written, so a hand grade entered later or an extension granted later is always counted.
"""

import csv
import io
import math
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder import csvsafe
from autograder.out import Out

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10 (pyproject allows it)
    import tomli as tomllib


@dataclass(frozen=True)
class LatePolicy:
    """A late policy: the unit lateness is counted in, whether it takes `percent` per unit, and the share of the
    raw score it takes off for some units late (`max_days` past, a penalising policy takes it all)."""

    unit: timedelta
    per_unit: bool
    fraction: Callable[[int, float], float]  # (started units late, percent) -> share taken off, 0 to 1

    @property
    def penalises(self) -> bool:
        return self.per_unit or self.fraction(1, 0.0) > 0


def _per_unit(units: int, percent: float) -> float:
    return min(1.0, units * percent / 100)


# [late] policy in course.toml: a new policy is one entry here (and its test in tests/test_term.py)
POLICIES = {
    "none": LatePolicy(timedelta(days=1), per_unit=False, fraction=lambda units, percent: 0.0),
    "zero": LatePolicy(timedelta(days=1), per_unit=False, fraction=lambda units, percent: 1.0),
    "per_day": LatePolicy(timedelta(days=1), per_unit=True, fraction=_per_unit),
    "per_hour": LatePolicy(timedelta(hours=1), per_unit=True, fraction=_per_unit),
}
SCHEMA = {
    "assignment": ("due", "grace_minutes", "timezone"),
    "late": ("policy", "percent", "max_days"),
    "lms": ("moodle_max", "canvas_assignment_id"),
    "release": ("model_answers",),
    "report": ("time_on_task",),
}
UNKNOWN_TIME = "late (time unknown)"
EXTENSION_COLUMNS = ["student", "due"]
SUBMITTED_COLUMNS = ["student", "submitted_at"]
EVIDENCE_COLUMNS = ["student", "submitted_at", "evidence"]
LATE_COLUMNS = ["submitted_at", "due", "late_units", "late_penalty"]
NBGRADER_TIME = re.compile(r"^(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?) ?(UTC|GMT|Z)$")


class TermError(ValueError):
    """Bad course file, extensions or submission times: its message is one line naming the file, line and key."""


@dataclass(frozen=True)
class Course:
    """The course file's settings: the assignment's due date (with its UTC offset) and the late policy."""

    due: datetime
    grace_minutes: float = 0.0
    policy: str = "none"
    percent: float = 0.0
    max_days: float | None = None
    timezone: str = ""  # IANA name ("America/Toronto"): how to read LMS times given without an offset (worksheet)
    moodle_max: float | None = None  # the Moodle assignment's "Maximum grade": grades are scaled to it
    canvas_assignment_id: int | None = None  # the Canvas assignment's id: its gradebook column is "Title (id)"
    model_answers: bool = False  # feedback pages show each written answer's model answer (rubrics.toml)
    time_on_task: bool = True  # the report reads the notebooks' own execution times (reports.timeontask)

    @property
    def late_policy(self) -> LatePolicy:
        return POLICIES[self.policy]

    @property
    def unit(self) -> timedelta:
        """The unit lateness is counted in (an hour for per_hour, else a day)."""
        return self.late_policy.unit


@dataclass(frozen=True)
class Late:
    """One student's lateness: when they submitted (None: no time known), their due date, and what it costs.

    fraction: the share of the raw score taken off (0 on time, 1 scores zero).
    """

    submitted: datetime | None
    due: datetime
    extended: bool
    units: int
    fraction: float
    late_unknown: bool = False

    @property
    def submitted_text(self) -> str:
        """The submission time as grades.csv shows it ('' when unknown and on time)."""
        if self.submitted is not None:
            return self.submitted.isoformat()
        return UNKNOWN_TIME if self.late_unknown else ""


def _line_of(text: str, section: str, key: str | None = None) -> int:
    """The 1-based line of `[section]` (or of `key = ` inside it) in TOML text; 0 when not found."""
    current = None
    for i, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        m = re.match(r"^\[\s*([^\]]+?)\s*\]", stripped)
        if m:
            current = m.group(1).strip().strip('"')
            if key is None and current == section:
                return i
        elif key is not None and current == section and re.match(rf"^\"?{re.escape(key)}\"?\s*=", stripped):
            return i
    return 0


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def parse_course(text: str, name: str = "course.toml") -> Course:
    """The course settings in TOML `text`; raises TermError naming `name`, the line and the key of the first fault.

    Inputs:
    - text: the course file's contents; name: how to call it in errors.
    Returns:
    - Course
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TermError(f"{name}: not valid TOML: {exc}") from None

    def fail(section, key, why):
        line = _line_of(text, section, key)
        where = f"{name}:{line}" if line else name
        raise TermError(f"{where}: {section + '.' + key if key else section}: {why}")

    for section, table in data.items():
        if section not in SCHEMA:
            fail(section, None, f"unknown section (known: {', '.join(SCHEMA)})")
        if not isinstance(table, dict):
            fail(section, None, "must be a [table]")
        for key in table:
            if key not in SCHEMA[section]:
                fail(section, key, f"unknown key (known in [{section}]: {', '.join(SCHEMA[section])})")
    assignment, late, lms = data.get("assignment", {}), data.get("late", {}), data.get("lms", {})
    model_answers = data.get("release", {}).get("model_answers", False)
    if not isinstance(model_answers, bool):
        fail("release", "model_answers", f"must be true or false, not {model_answers!r}")
    time_on_task = data.get("report", {}).get("time_on_task", True)
    if not isinstance(time_on_task, bool):
        fail("report", "time_on_task", f"must be true or false, not {time_on_task!r}")
    due = assignment.get("due")
    if due is None:
        fail("assignment", None, "missing key 'due' (a TOML date-time with a UTC offset)")
    if not isinstance(due, datetime):
        fail("assignment", "due", f"must be a TOML date-time such as 2023-03-31T23:59:00-04:00, not {due!r}")
    if due.tzinfo is None:
        fail("assignment", "due", f"{due.isoformat()} has no UTC offset (write e.g. {due.isoformat()}-04:00)")
    grace = assignment.get("grace_minutes", 0)
    if not _is_number(grace) or grace < 0:
        fail("assignment", "grace_minutes", f"must be a number of minutes >= 0, not {grace!r}")
    policy = late.get("policy", "none")
    if policy not in POLICIES:
        fail("late", "policy", f"must be one of {', '.join(POLICIES)}, not {policy!r}")
    percent = late.get("percent", 0)
    if not _is_number(percent) or not 0 <= percent <= 100:
        fail("late", "percent", f"must be a number from 0 to 100, not {percent!r}")
    if policy in POLICIES and POLICIES[policy].per_unit and "percent" not in late:
        fail("late", None, f"policy {policy!r} needs 'percent' (of the raw score per started unit)")
    max_days = late.get("max_days")
    if max_days is not None and (not _is_number(max_days) or max_days < 0):
        fail("late", "max_days", f"must be a number of days >= 0, not {max_days!r}")
    zone = assignment.get("timezone", "")
    if zone:
        try:
            ZoneInfo(zone)
        except (ValueError, ZoneInfoNotFoundError):
            fail("assignment", "timezone", f"{zone!r} is not a time zone name (e.g. 'America/Toronto')")
    moodle_max = lms.get("moodle_max")
    if moodle_max is not None and (not _is_number(moodle_max) or moodle_max <= 0):
        fail("lms", "moodle_max", f"must be the Moodle assignment's maximum grade (a number > 0), not {moodle_max!r}")
    canvas_id = lms.get("canvas_assignment_id")
    if canvas_id is not None and (not isinstance(canvas_id, int) or isinstance(canvas_id, bool) or canvas_id <= 0):
        fail("lms", "canvas_assignment_id", f"must be the Canvas assignment's numeric id, not {canvas_id!r}")
    return Course(
        moodle_max=None if moodle_max is None else float(moodle_max),
        canvas_assignment_id=canvas_id,
        model_answers=model_answers,
        time_on_task=time_on_task,
        timezone=zone,
        due=due,
        grace_minutes=float(grace),
        policy=policy,
        percent=float(percent),
        max_days=None if max_days is None else float(max_days),
    )


def read_course(path: Path | str) -> Course:
    """The course file at `path` (see parse_course); a missing or unreadable file is a TermError too."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TermError(f"{path}: cannot read the course file: {exc}") from None
    return parse_course(text, str(path))


def parse_time(text: str) -> datetime:
    """A time with its UTC offset: ISO 8601 ('2023-03-31T23:59:00-04:00', '...Z') or nbgrader's timestamp.txt
    ('2023-04-01 03:12:00.123456 UTC'). Raises ValueError (one line) for anything else, a time without an offset
    included: no penalty is ever applied from a guessed time zone."""
    text = text.strip()
    m = NBGRADER_TIME.match(text)
    if m:
        return datetime.fromisoformat(m.group(1).replace(" ", "T")).replace(tzinfo=timezone.utc)
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a time (ISO 8601 with an offset, or nbgrader's '... UTC')") from None
    if when.tzinfo is None:
        raise ValueError(f"{text!r} has no UTC offset (write e.g. {text}+00:00)")
    return when


def _read_text(path: Path, what: str) -> str:
    """The text of a term file (a byte-order mark dropped); TermError naming the file when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise TermError(f"{path}: cannot read the {what}: {exc}") from None


def _read_csv(path: Path | str, columns: list[str], what: str) -> list[tuple[int, dict]]:
    """[(line number, row)] of a CSV whose header must be exactly `columns`; TermError otherwise."""
    path = Path(path)
    text = _read_text(path, f"{what} file")
    reader = csvsafe.reader(io.StringIO(text))
    header = next(reader, None)
    if [h.strip() for h in header or []] != columns:
        raise TermError(f"{path}:1: the {what} file's header must be {','.join(columns)}, not {','.join(header or [])}")
    rows = []
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            raise TermError(f"{path}:{line}: expected {len(columns)} fields ({','.join(columns)}), got {len(row)}")
        rows.append((line, dict(zip(columns, (c.strip() for c in row), strict=True))))
    return rows


def name_key(name: str) -> str:
    """How a TA's spelling of a name is compared: NFC, spaces collapsed, case folded."""
    return " ".join(unicodedata.normalize("NFC", name).split()).casefold()


def resolve_student(name: str, students: Mapping[str, Iterable[str]]) -> str:
    """The id of the student a TA means by `name`: a student id as it is, else the one student who submitted under
    that name (their folder name or their name in the LMS).

    Inputs:
    - students: {student id: the names they submitted under}.
    Raises LookupError with a one-line reason: no such student, or several of that name (naming the ids to use).
    """
    if name in students:
        return name
    hits = sorted(sid for sid, names in students.items() if name_key(name) in {name_key(n) for n in names if n})
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise LookupError(f"unknown student {name!r} (not graded in this OUT)")
    count = {2: "two", 3: "three", 4: "four"}.get(len(hits), str(len(hits)))
    raise LookupError(f"{count} students called {name}: use {', '.join(hits[:-1])} or {hits[-1]}")


def read_times(
    path: Path | str,
    columns: list[str],
    students: Mapping[str, Iterable[str]] | Iterable[str] | None = None,
    what: str = "extensions",
) -> dict[str, datetime]:
    """{student id: time} from a CSV `student,<time column>` (extensions: student,due; --submitted:
    student,submitted_at).

    Inputs:
    - students: the students of OUT, {id: names they submitted under} (or their ids alone): a row may name a student
      by id or, when only one student has it, by folder or LMS name; a row naming anyone else is an error (None:
      names taken as ids, not checked).
    Raises TermError naming the file and line of the first bad row (unknown student, a name several students share,
    twice the same student, a time that does not parse or has no offset).
    """
    if students is not None and not isinstance(students, Mapping):
        students = {sid: () for sid in students}
    found = {}
    for line, row in _read_csv(path, columns, what):
        student, when = row["student"], row[columns[1]]
        if students is not None:
            try:
                student = resolve_student(student, students)
            except LookupError as exc:
                raise TermError(f"{path}:{line}: {exc}") from None
        if student in found:
            raise TermError(f"{path}:{line}: student {student!r} is listed twice")
        try:
            found[student] = parse_time(when)
        except ValueError as exc:
            raise TermError(f"{path}:{line}: {columns[1]}: {exc}") from None
    return found


def read_timestamp_file(path: Path | str) -> datetime:
    """The time in an nbgrader timestamp.txt; raises TermError naming the file when it does not parse."""
    try:
        return parse_time(Path(path).read_text(encoding="utf-8").strip().splitlines()[0])
    except (OSError, UnicodeDecodeError, IndexError, ValueError) as exc:
        raise TermError(f"{path}:1: not a submission time: {exc}") from None


def lateness(
    submitted: datetime | None, due: datetime, course: Course, *, late_unknown: bool = False
) -> tuple[int, float]:
    """How late a submission is and what share of its raw score that costs under the course's policy.

    Inputs:
    - submitted: when the student submitted (None: unknown); due: the student's own due date (extension applied).
    - late_unknown: the LMS says late without a time (Canvas's _LATE): counted as one unit late.
    Returns:
    - (late units: started days, or hours for per_hour, after the due date; 0 within the grace,
       fraction of the raw score taken off, from 0 to 1)
    """
    if submitted is None:
        units, beyond = (1 if late_unknown else 0), False
    else:
        late = submitted - due
        if late <= timedelta(minutes=course.grace_minutes):
            return 0, 0.0
        units = math.ceil(late / course.unit)
        beyond = course.max_days is not None and late > timedelta(days=course.max_days)
    rule = course.late_policy
    if units == 0 or not rule.penalises:
        return units, 0.0
    return units, 1.0 if beyond else rule.fraction(units, course.percent)


def penalty(raw: float, fraction: float) -> float:
    """The points taken off a raw score (nbgrader's late_submission_penalty): score = max(0, raw - penalty)."""
    return round(max(0.0, raw) * fraction, 6)


def describe(late: Late, raw: float) -> str:
    """The student's feedback line: 'Submitted 1 d 3 h late (due ... with extension) → −10 % (−4.0 points)',
    or '' when on time."""
    if late.units == 0:
        return ""
    due = late.due.strftime("%Y-%m-%d %H:%M %z") + (" with extension" if late.extended else "")
    if late.submitted is None:
        when = "Submitted late (the LMS gave no time; counted as 1 unit)"
    else:
        minutes = int((late.submitted - late.due).total_seconds() // 60)
        days, rest = divmod(minutes, 24 * 60)
        hours, mins = divmod(rest, 60)
        parts = [f"{days} d"] * bool(days) + [f"{hours} h"] * bool(hours) + [f"{mins} min"] * (not days and mins > 0)
        when = f"Submitted {' '.join(parts) or '0 min'} late"
    cost = f"−{late.fraction * 100:g} % (−{penalty(raw, late.fraction):g} points)" if late.fraction else "no penalty"
    return f"{when} (due {due}) → {cost}"


def _read_evidence(out: Out) -> list[tuple[int, dict]]:
    return _read_csv(out.submission_times, EVIDENCE_COLUMNS, "submission times")


_LOADED: dict[str, tuple[tuple, "Term"]] = {}  # OUT/term's resolved path -> (its files' stamps, the Term read)
_LOADED_LOCK = threading.Lock()


def _stamp(path: Path) -> tuple | None:
    """What tells one version of a file from the next (None: absent): a rewrite is a new inode (files.atomic_write)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


class Term:
    """The term settings recorded in OUT/term: course, extensions, submission evidence (all optional)."""

    def __init__(self, course: Course | None, extensions: Mapping[str, datetime], evidence: Mapping[str, str]):
        self.course, self.extensions, self.evidence = course, dict(extensions), dict(evidence)

    @classmethod
    def load(cls, out: "Out | Path | str") -> "Term":
        """What OUT/term holds (a Term without a course when no course file was recorded), parsed again only when
        one of its files changed since this process last read them."""
        out = Out.at(out)
        files = (out.course, out.extensions, out.submission_times)
        stamp = tuple(_stamp(p) for p in files)
        key = str(out.term.resolve())
        with _LOADED_LOCK:
            if key in _LOADED and _LOADED[key][0] == stamp:
                return _LOADED[key][1]
        course = read_course(out.course) if out.course.exists() else None
        extensions = read_times(out.extensions, EXTENSION_COLUMNS) if out.extensions.exists() else {}
        evidence = {}
        if out.submission_times.exists():
            evidence = {row["student"]: row["submitted_at"] for _, row in _read_evidence(out)}
        found = cls(course, extensions, evidence)
        with _LOADED_LOCK:
            _LOADED[key] = (stamp, found)
        return found

    def late(self, student: str) -> Late | None:
        """The student's lateness (None without a course file)."""
        if self.course is None:
            return None
        due = self.extensions.get(student, self.course.due)
        text = self.evidence.get(student, "")
        unknown = text == UNKNOWN_TIME
        submitted = None if unknown or not text else parse_time(text)
        units, fraction = lateness(submitted, due, self.course, late_unknown=unknown)
        return Late(submitted, due, student in self.extensions, units, fraction, unknown)

    def columns(self, student: str, raw: float) -> list[str]:
        """grades.csv's lateness fields (LATE_COLUMNS) for one row whose raw score is `raw`."""
        late = self.late(student)
        if late is None:
            return [""] * len(LATE_COLUMNS)
        return [late.submitted_text, late.due.isoformat(), str(late.units), f"{penalty(raw, late.fraction):g}"]


def write_term(
    out: "Out | Path | str",
    *,
    course: Path | str | None = None,
    extensions: Path | str | None = None,
    evidence: Mapping[str, tuple[str, str]] | None = None,
    students: Iterable[str] | None = None,
) -> None:
    """Record the course file, the extensions and the submission evidence in OUT/term, after checking them all.

    Inputs:
    - course / extensions: files that replace what OUT holds (None: keep it).
    - evidence: {student: (ISO time or UNKNOWN_TIME, how we know)} found by this run; replaces those students' rows.
    - students: every student of OUT, {id: names they submitted under} or ids (extensions for anyone else are
      refused; extensions are kept by student id).
    Raises TermError before writing anything when a file is bad.
    """
    from autograder.files import atomic_write

    out = Out.at(out)
    if course is not None:
        text = Path(course).read_text(encoding="utf-8") if Path(course).exists() else None
        if text is None:
            raise TermError(f"{course}: course file not found")
        parse_course(text, str(course))
    if extensions is not None:
        due = read_times(extensions, EXTENSION_COLUMNS, students)
    if course is not None:
        atomic_write(out.course, text)
    if extensions is not None:
        buf = io.StringIO()
        writer = csvsafe.writer(buf, lineterminator="\n")
        writer.writerow(EXTENSION_COLUMNS)
        writer.writerows([student, when.isoformat()] for student, when in sorted(due.items()))
        atomic_write(out.extensions, buf.getvalue())
    if evidence:
        rows = {}
        if out.submission_times.exists():
            rows = {r["student"]: (r["submitted_at"], r["evidence"]) for _, r in _read_evidence(out)}
        rows.update(evidence)
        buf = io.StringIO()
        writer = csvsafe.writer(buf, lineterminator="\n")
        writer.writerow(EVIDENCE_COLUMNS)
        writer.writerows([s, *rows[s]] for s in sorted(rows))
        atomic_write(out.submission_times, buf.getvalue())


def student_late(rows: Iterable[Mapping[str, str]]) -> tuple[float, str, str]:
    """One student's lateness as grades.csv gives it, summed over their notebook rows.

    Returns:
    - (late penalty in points, due date ISO 8601 or '', submitted_at or ''): '' and 0 without a course file.
    """
    rows = list(rows)
    points = 0.0
    for row in rows:
        try:
            points += float(row.get("late_penalty") or 0.0)
        except ValueError:
            pass
    first = rows[0] if rows else {}
    return round(points, 6), first.get("due") or "", first.get("submitted_at") or ""


def nbgrader_time(text: str) -> str:
    """An ISO 8601 time as nbgrader's export prints times (UTC, no offset: '2023-04-01 03:59:00'); '' otherwise."""
    try:
        return str(parse_time(text).astimezone(timezone.utc).replace(tzinfo=None))
    except ValueError:
        return ""


# Month names as Moodle's worksheet prints them (userdate, '%A, %d %B %Y, %I:%M %p' in the user's language)
MONTHS = {
    name: i + 1
    for names in (
        "january february march april may june july august september october november december",
        "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
        "januar februar märz april mai juni juli august september oktober november dezember",
        "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    )
    for i, name in enumerate(names.split())
}
LOCAL_DATE = re.compile(
    r"(?P<day>\d{1,2})\.?\s+(?:de\s+)?(?P<month>[^\W\d_]+)\.?\s+(?:de\s+)?(?P<year>\d{4}),?\s+"
    r"(?:à\s+|um\s+)?(?P<hour>\d{1,2})[:h](?P<minute>\d{2})\s*(?P<ampm>[AaPp]\.?[Mm]\.?)?"
)


def parse_local_time(text: str, zone: str) -> datetime | None:
    """A time as Moodle's grading worksheet prints it ('Friday, 31 March 2023, 11:59 PM', 'vendredi 31 mars 2023,
    23:59'), read in time zone `zone`; None for '-' (no submission). Raises ValueError when it does not parse."""
    text = text.strip()
    if text in ("", "-"):
        return None
    m = LOCAL_DATE.search(text)
    month = MONTHS.get(m.group("month").casefold()) if m else None
    if not m or month is None:
        raise ValueError(f"{text!r} is not a date the worksheet reader knows (English, French, German or Spanish)")
    hour = int(m.group("hour"))
    ampm = (m.group("ampm") or "").lower().replace(".", "")
    if ampm:
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    return datetime(
        int(m.group("year")), month, int(m.group("day")), hour, int(m.group("minute")), tzinfo=ZoneInfo(zone)
    )


WORKSHEET_TIME = "Last modified (submission)"


def read_worksheet(
    path: Path | str, participants: Mapping[str, str], zone: str
) -> tuple[dict[str, datetime], list[str]]:
    """Submission times from a Moodle grading worksheet.

    Inputs:
    - participants: {Moodle participant id: student id} of the students being graded.
    - zone: the course's time zone (course.toml assignment.timezone): the worksheet prints times without an offset.
    Returns:
    - ({student: time}, notes: one line per row naming a participant who is not among the students).
    Raises TermError (file and line) for a missing column, a date that does not parse, no time zone, or a
    worksheet whose ids match no student.
    """
    path = Path(path)
    text = _read_text(path, "worksheet")
    reader = csv.DictReader(io.StringIO(text))
    if "Identifier" not in (reader.fieldnames or []) or WORKSHEET_TIME not in (reader.fieldnames or []):
        raise TermError(f"{path}:1: a Moodle grading worksheet needs the columns Identifier and {WORKSHEET_TIME}")
    if not zone:
        raise TermError(f"{path}: worksheet times have no UTC offset: set [assignment] timezone in the course file")
    found, notes, rows = {}, [], 0
    for row in reader:
        line = reader.line_num
        rows += 1
        pid = re.sub(r"^\D*", "", row["Identifier"] or "")
        student = participants.get(pid)
        if student is None:
            notes.append(f"{path}:{line}: {row['Identifier']!r} matches no student graded here")
            continue
        try:
            when = parse_local_time(row[WORKSHEET_TIME] or "", zone)
        except ValueError as exc:
            raise TermError(f"{path}:{line}: {WORKSHEET_TIME}: {exc}") from None
        if when is not None:
            found[student] = when
    if rows and len(notes) == rows:
        raise TermError(f"{path}:2: no Identifier in the worksheet matches a student graded here ({notes[0]})")
    return found, notes


def replace_files(out: Path | str, course: Path | str | None = None, extensions: Path | str | None = None) -> None:
    """A later command's --course/--extensions: checked against the students recorded in OUT, then kept in OUT/term
    in place of what grading recorded (the penalty is re-computed wherever it is shown next). Raises TermError."""
    if course is None and extensions is None:
        return
    write_term(out, course=course, extensions=extensions, students=recorded_names(out))


def recorded_names(out: Path | str) -> dict[str, set[str]]:
    """{student id: the names they submitted under (folder, LMS name)} of the students recorded in OUT (its
    .state, grades.csv and lms_ids.csv)."""
    import json

    names = {}
    grades = Out.at(out).grades
    if grades.exists():
        with open(grades, newline="", encoding="utf-8") as f:
            for row in csvsafe.DictReader(f):
                names.setdefault(row["student"], {row["student"]}).add(row.get("submitted_as") or row["student"])
    for path in Out.at(out).state.glob("*.json"):
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            state = {}
        names.setdefault(path.stem, {path.stem}).add((state.get("submission") or {}).get("submitted_as") or path.stem)
    lms = Out.at(out).lms_ids
    if lms.exists():
        with open(lms, newline="", encoding="utf-8") as f:
            for row in csvsafe.DictReader(f):
                if row.get("student") in names and row.get("lms_name"):
                    names[row["student"]].add(row["lms_name"])
    return names


def late_counts(rows: Iterable[Mapping[str, str]]) -> dict[str, object]:
    """For the report: how many students were on time, late, late without a known time, or without evidence, and
    a histogram of submission times against each student's own due date ({days after due (ceiling), <= 0 on time
    or early: count}), from grades.csv rows."""
    students = {}
    for row in rows:
        students.setdefault(row["student"], row)
    counts = {"on time": 0, "late": 0, "late (time unknown)": 0, "no submission time": 0}
    days = {}
    for row in students.values():
        submitted, due = row.get("submitted_at") or "", row.get("due") or ""
        late = (row.get("late_units") or "0") not in ("0", "")
        if submitted == UNKNOWN_TIME:
            counts["late (time unknown)"] += 1
            continue
        if not submitted:
            counts["no submission time"] += 1
            continue
        counts["late" if late else "on time"] += 1
        if due:
            delta = (parse_time(submitted) - parse_time(due)) / timedelta(days=1)
            key = math.ceil(delta)
            days[key] = days.get(key, 0) + 1
    return {"counts": counts, "days_after_due": dict(sorted(days.items()))}
