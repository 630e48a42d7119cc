"""The learning management systems a class is downloaded from and released back to: one record each, in REGISTRY.

A record says how the LMS's download names a student (grading.discover), the ids it gives them (OUT/lms_ids.csv,
and the student id 'Anna Lee~moodle1017'), how its gradebook file and a release's feedback files must look for its
importers (reports.export, reports.release), how its own grade export reads as a roster, and which setting of the
course file a release needs. Another LMS is one more record and its tests; the code around reads the registry.

Moodle (mod/assign): a folder per participant, '<Full name>_<participant id>_assignsubmission_<plugin>_'. Its zip
importer (feedback/file/importziplib.php) splits a path part on '_' into at most 5 pieces and needs 4 or more, the
second a participant id; its worksheet importer (feedback/offline) needs "Identifier", "Grade" and "Last modified
(grade)", ignores "Maximum Grade" and skips a grade above the assignment's maximum grade, so grades are scaled to it.
Canvas: one file per submitted file, '<login>[_LATE]_<user id>_<submission file id>_<file name>'; its re-upload
(Assignment#infer_comment_context_from_filename) takes the first two all-digit pieces of a name as the user id and
the id of one of that submission's files, and its gradebook importer finds the assignment by the id in a column
header 'Title (id)' (GradebookImporter), else creates a new assignment.
"""

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from autograder import csvsafe
from autograder.contract import ASSIGNMENT
from autograder.out import Out


@dataclass(frozen=True)
class LmsId:
    """A student's account in an LMS: which LMS, its user id there, the name it knows them by, and the id of one file
    they submitted through it (Canvas's re-upload names feedback by it; empty when a roster gave the id)."""

    lms: str
    user_id: str
    name: str = ""
    file_id: str = ""


NO_ID = LmsId("", "")  # a student no LMS named (a plain folder, no roster row)


def ids(out: "Out | Path | str", lms: str | None = None) -> dict[str, LmsId]:
    """{student: LmsId} of everyone OUT has an LMS id for, from its three records read as one table: a roster
    `release --roster` kept (term/roster.csv), then what grading found in the download (lms_ids.csv, and
    term/lms_files.csv with a file id), which wins. `lms`: only that LMS's ids."""
    out = Out.at(out)
    found: dict[str, LmsId] = {}
    for path in (out.roster, out.lms_ids, out.lms_files):  # later files win: the LMS's own names over a roster
        if not path.exists():
            continue
        with open(path, newline="", encoding="utf-8") as f:
            for row in csvsafe.DictReader(f):
                if not row.get("lms") or lms is not None and row["lms"] != lms:
                    continue
                before = found.get(row["student"], NO_ID)
                before = before if before.lms == row["lms"] else NO_ID
                found[row["student"]] = LmsId(
                    row["lms"],
                    row.get("lms_user_id") or before.user_id,
                    row.get("lms_name") or before.name,
                    row.get("lms_file_id") or before.file_id,
                )
    return found


class LMS:
    """What the kit knows of one LMS. Subclasses fill in the constants and the methods."""

    id: str  # in student ids, lms_ids.csv, HISTORY.csv and `release --lms`
    name: str  # as people write it
    user_id: str  # what the LMS calls a user's id
    download: re.Pattern  # a name in its download: a student's folder (per_student == "folder") or one of their files
    per_student: str  # "folder" or "file"
    setting: str  # the key under [lms] in course.toml (and the `release` option) that a release needs
    setting_type: type  # float or int
    setting_help: str  # the `release` option's help
    setting_needed: str  # the one-line error of a release without it ({total}: the course's points)
    sheet: str  # the gradebook file a release writes (export writes <id>_grades.csv)
    steps: str  # how to upload a release ({sheet}, {zip}, {setting}, {column})
    export_name: str  # what people call the LMS's own grade export (a roster)
    export_unset: str  # the line `export` prints when the course file lacks the setting ({title}: the column)

    def ids(self, match: re.Match) -> tuple[str, dict]:
        """(the student's name as the download gives it, {"lms", "user_id", "name", ...}) from a match of download."""
        raise NotImplementedError

    def file_name(self, match: re.Match) -> str:
        """The submitted file's own name in a download name (per_student == "file")."""
        raise NotImplementedError

    def setting_value(self, value) -> float | int | None:
        """A setting as a release uses it (a number > 0), or None when it is missing or not one."""
        raise NotImplementedError

    def columns(self, setting) -> list[str]:
        """The header of the gradebook file (setting: setting_value's, or None)."""
        raise NotImplementedError

    def head_rows(self, possible: float) -> list[list[str]]:
        """The gradebook file's rows before the students' (possible: the most points a student could have)."""
        return []

    def scale(self, score: float, total: float, setting) -> tuple[float, float]:
        """(grade, out of) as the LMS takes them, from points `score` of `total` (setting: setting_value's)."""
        return score, total

    def scaled_line(self, grade: float, setting, total: float) -> str:
        """The line a student's summary gives for a grade the LMS shows on another scale ('' when none)."""
        return ""

    def row(self, ids: LmsId, student: str, name: str, grade: str, top: str, stamp: str, comment: str):
        """A student's row of the gradebook file.

        Inputs:
        - ids: their LMS ids (ids(); NO_ID without); student: their id; name: as the LMS shows it.
        - grade, top: the grade and its maximum as written; stamp: the time of the file; comment: for the student.
        """
        raise NotImplementedError

    def feedback_files(self, ids: LmsId, student: str, pages: Mapping[str, bytes], summary: bytes):
        """{path in the feedback zip: bytes} for one student's pages and summary, or None when the LMS cannot take
        files for this student (ids: their LMS ids)."""
        raise NotImplementedError

    def is_roster(self, header: list[str]) -> bool:
        """True when a CSV header is the LMS's own grade export (read as a roster)."""
        raise NotImplementedError

    def roster_names(self, row: Mapping[str, str]) -> tuple[str, list[str]]:
        """(user id, the names the row's student may have submitted under) of a row of the LMS's own export."""
        raise NotImplementedError


class Moodle(LMS):
    id, name, user_id, per_student = "moodle", "Moodle", "Moodle participant id", "folder"
    download = re.compile(r"^(?P<name>.+?)_(?P<uid>\d+)_assignsubmission_[a-z]+_?$")
    setting, setting_type = "moodle_max", float
    setting_help = "the Moodle assignment's maximum grade: grades are scaled to it"
    setting_needed = (
        "Moodle ignores the worksheet's Maximum Grade and skips a grade above the assignment's maximum grade (100 "
        "unless changed), so scores out of {total:g} would import as points out of that maximum: pass --moodle-max N "
        "(the assignment's Maximum grade in Moodle) or set moodle_max under [lms] in course.toml"
    )
    sheet = "moodle_worksheet.csv"
    export_name = "grading worksheet"
    export_unset = (
        "export: moodle_grades.csv gives points out of the course total, which Moodle reads as out of the "
        "assignment's maximum grade: set moodle_max under [lms] in the course file, or use release --lms moodle "
        "--moodle-max N"
    )
    steps = """\
Upload to Moodle in this order (the assignment > View all submissions > Grading action):
  1. "Upload grading worksheet": {sheet} (leave "Allow updating records that have been modified more recently in
     Moodle than in the spreadsheet" unticked), then "Import grades".
  2. "Upload multiple feedback files in a zip": {zip}. Not before the worksheet: the zip import stamps every grade
     it touches as modified now, and the worksheet's grades and comments are then skipped as stale.
  The assignment needs Feedback types "Feedback comments", "Offline grading worksheet" and "Feedback files", and
  Maximum grade {setting:g} (as --moodle-max)."""
    # the columns its importer looks for (English language pack; a feedback plugin's column by its name)
    COLUMNS = ["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)", "Feedback comments"]

    def ids(self, match):
        return match.group("name"), {"lms": self.id, "user_id": match.group("uid"), "name": match.group("name")}

    def setting_value(self, value):
        return float(value) if value and value > 0 else None

    def columns(self, setting):
        return list(self.COLUMNS)

    def scale(self, score, total, setting):  # Moodle reads a grade as out of the assignment's maximum grade
        return (round(score * setting / total, 2), setting) if setting and total else (score, total)

    def scaled_line(self, grade, setting, total):
        return f"{self.name} grade: {round(grade, 2):g} / {setting:g}" if setting and setting != total else ""

    def row(self, ids, student, name, grade, top, stamp, comment):
        ident = f"Participant {ids.user_id}" if ids.lms == self.id else student
        return [ident, name, grade, top, stamp, comment]

    def folder(self, name: str, participant: str) -> str:
        """The folder the zip import reads for a participant: '<name>_<id>_assignsubmission_file_' ('_' in a name
        becomes a space, as in Moodle's own download: it would hide the participant id)."""
        clean = re.sub(r"[\s_]+", " ", unicodedata.normalize("NFC", name)).strip(" .~/\\") or "student"
        return f"{clean.replace('/', ' ')}_{participant}_assignsubmission_file_"

    def feedback_files(self, ids, student, pages, summary):
        folder = self.folder(ids.name or student, ids.user_id)
        return {f"{folder}/{name}": data for name, data in pages.items()} | {f"{folder}/summary.txt": summary}

    def is_roster(self, header):
        return {"Identifier", "Full name"} <= set(header)

    def roster_names(self, row):
        email = (row.get("Email address") or "").strip()
        return re.sub(r"^\D*", "", row["Identifier"] or ""), [row["Full name"], email, email.split("@")[0]]


class Canvas(LMS):
    id, name, user_id, per_student = "canvas", "Canvas", "Canvas user id", "file"
    download = re.compile(r"^(?P<login>[^_\s/]+)(?P<late>_LATE)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<file>.+)$")
    setting, setting_type = "canvas_assignment_id", int
    setting_help = "the Canvas assignment's id: the gradebook column 'a3 (id)'"
    setting_needed = (
        "Canvas matches a gradebook column to its assignment by the id in 'Title (id)' and creates a new assignment "
        "otherwise: pass --canvas-assignment-id N (the number in the assignment's URL, .../assignments/N) or set "
        "canvas_assignment_id under [lms] in course.toml"
    )
    sheet = "canvas_grades.csv"
    export_name = "gradebook export"
    export_unset = (
        "export: canvas_grades.csv's column {title!r} names no assignment id, so Canvas would create a new "
        "assignment: set canvas_assignment_id under [lms] in the course file, or use release --lms canvas "
        "--canvas-assignment-id N"
    )
    steps = """\
Upload to Canvas (either order):
  - Grades > Import: {sheet} (its column "{column}" is the assignment with that id).
  - The assignment > Download submissions' page > "Re-upload submissions": {zip} (attached as comments)."""
    COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]

    def ids(self, match):
        login = match.group("login")
        found = {"lms": self.id, "user_id": match.group("uid"), "name": login, "file_id": match.group("sid")}
        if match.group("late"):  # Canvas says late (no time): the late policy's one unit
            found["late"] = True
        return login, found

    def file_name(self, match):
        return re.sub(r"-\d+(?=\.[A-Za-z]+$)", "", match.group("file"))  # a resubmission's suffix goes

    def setting_value(self, value):
        return int(value) if value and value > 0 else None

    def columns(self, setting):
        return [*self.COLUMNS, self.column(setting)]

    def column(self, assignment_id: int | None) -> str:
        """The gradebook import's assignment column: 'a3 (<id>)', or 'a3 (autograder)' without an id."""
        return f"{ASSIGNMENT} ({assignment_id or 'autograder'})"

    def head_rows(self, possible):
        return [["Points Possible", "", "", "", "", f"{possible:g}"]]

    def row(self, ids, student, name, grade, top, stamp, comment):  # matched by its ID, the Canvas user id
        canvas = ids.lms == self.id
        return [name, ids.user_id if canvas else "", "", "" if canvas else student, "", grade]

    def prefix(self, login: str, user_id: str, file_id: str) -> str:
        """The start of a feedback file's name the re-upload matches: '<login>_<user id>_<file id>_'."""
        login = re.sub(r"[\s_/\\]+", "-", login).strip(".-")
        if not login or login.isdigit():  # an all-digit login would be read as the user id
            login = "student"
        return f"{login}_{user_id}_{file_id}_"

    def feedback_files(self, ids, student, pages, summary):
        if not ids.file_id:  # from a roster: Canvas attaches files only to a file submitted through it
            return None
        prefix = self.prefix(ids.name or student, ids.user_id, ids.file_id)
        return {f"{prefix}feedback-{name}": data for name, data in pages.items()} | {f"{prefix}summary.txt": summary}

    def is_roster(self, header):
        return header[:2] == ["Student", "ID"]

    def roster_names(self, row):
        student = (row.get("Student") or "").strip()
        last, _, first = student.partition(", ")  # Canvas's sortable name: 'Lee, Anna'
        return (row.get("ID") or "").strip(), [
            student,
            f"{first} {last}" if first else student,
            row.get("SIS Login ID") or "",
            row.get("SIS User ID") or "",
        ]


def option(lms: LMS) -> str:
    """The `release` option that gives an LMS's setting: '--moodle-max'."""
    return "--" + lms.setting.replace("_", "-")


MOODLE, CANVAS = Moodle(), Canvas()
REGISTRY: dict[str, LMS] = {lms.id: lms for lms in (CANVAS, MOODLE)}
# The end of a student id that an LMS gave ('Anna Lee~moodle1017'): the grader's, never the student's
ID_SUFFIX = re.compile(rf"~(?:{'|'.join(REGISTRY)})\d+$")
