"""release on the demo course: the demo's sample theory submissions graded under the real course source,
laid out as Moodle folders and as Canvas files, released for each LMS and checked against their import rules."""

import csv
import zipfile

import nbformat
import pytest

from autograder import contract, demo, paths
from autograder.grading import pipeline
from autograder.reports import release
from tests.fixtures import term as term_fixture
from tests.fixtures.lms_rules import canvas_accepts, moodle_accepts, names

pytestmark = pytest.mark.slow

WRONG = "ridge_closed_form"
# (full name, moodle participant id, canvas login, canvas user id, canvas file id, what they submit)
STUDENTS = [
    ("李明", "101", "liming", "201", "301", "reference"),
    ("Zoë Ñúñez", "102", "nunezz", "202", "302", "untouched"),
    ("Anna Lee", "103", "leea", "203", "303", "wrong"),
    ("Anna Lee", "104", "leeann", "204", "304", "reference"),
]
DAMAGED = ("Olga K", "105", "olgak", "205", "305")  # her entry is damaged in the TA's download
# What a student must never read in a released file: instructions and commands for staff, internal ids, the
# grader's paths and the errors of a damaged download
STAFF = (
    "python -m autograder",
    "grading.log",
    "fetch-models",
    "formgrader",
    "REPAIR",
    "is graded as",
    "~moodle",
    "~canvas",
    "Grade by hand",
    "needs manual grading",
    "zlib",
    "damaged in the zip",
    "BEGIN HIDDEN",
    "BEGIN SOLUTION",
    "/tmp/",
    str(paths.ROOT),
)
LATE = "2023-04-02T23:00:00-04:00"  # 李明: 2 started days after the due date -> -20 %


def _notebooks():
    """{what: theory notebook} for the reference, the untouched release and the reference with one wrong answer."""
    rel = nbformat.read(paths.RELEASE / "theory.ipynb", as_version=4)
    ref = demo.reference_submission(rel, nbformat.read(paths.SOURCE / "theory.ipynb", as_version=4))
    return {
        "reference": ref,
        "untouched": rel,
        "wrong": demo.with_cell(ref, WRONG, demo.wrong_samples("theory")[WRONG]),
    }


def _hand_grade_written(out):
    """A TA gives every written answer still waiting full marks (blank ones already score 0)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        for student in gb.students:
            sub = gb.find_submission(contract.ASSIGNMENT, student.id)
            for nb in sub.notebooks:
                for grade in nb.grades:
                    if grade.needs_manual_grade:
                        grade.manual_score = grade.max_score
        gb.db.commit()


def _download(root, subs, lms, notebook):
    """The LMS's zip of `subs` as the TA downloads it, with one more student (DAMAGED) whose entry the download
    damaged: its stored bytes no longer match their CRC."""
    archive = root / f"{lms}.zip"
    damaged = (
        f"{DAMAGED[0]}_{DAMAGED[1]}_assignsubmission_file_/theory.ipynb"
        if lms == "moodle"
        else (f"{DAMAGED[2]}_{DAMAGED[3]}_{DAMAGED[4]}_theory.ipynb")
    )
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(subs.rglob("*.ipynb")):
            z.write(path, path.relative_to(subs).as_posix())
        z.writestr(zipfile.ZipInfo(damaged), notebook, compress_type=zipfile.ZIP_STORED)
    with zipfile.ZipFile(archive) as z:
        info = z.getinfo(damaged)
    data = bytearray(archive.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + 100
    data[start : start + 64] = b"#" * 64
    archive.write_bytes(bytes(data))
    return archive


def _graded(root, lms):
    """The four students submitted through `lms`, graded (theory only) under course.toml with 李明 late, written
    answers hand graded, then released; returns OUT."""
    nbs = _notebooks()
    subs = root / "subs"
    for name, pid, login, uid, fid, what in STUDENTS:
        if lms == "moodle":
            path = subs / f"{name}_{pid}_assignsubmission_file_" / "theory.ipynb"
        else:
            path = subs / f"{login}_{uid}_{fid}_theory.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nbs[what], path)
    download = _download(root, subs, lms, nbformat.writes(nbs["reference"]).encode())
    (root / "course.toml").write_text(term_fixture.COURSE)
    late_id = "李明~moodle101" if lms == "moodle" else "liming~canvas201"  # ingest: <name>~<lms><user id>
    (root / "submitted.csv").write_text(f"student,submitted_at\n{late_id},{LATE}\n", encoding="utf-8")
    out = root / "out"
    pipeline.grade(download, out, workers=1, course=root / "course.toml", submitted=root / "submitted.csv")
    _hand_grade_written(out)
    return out


@pytest.fixture(scope="module")
def moodle(tmp_path_factory):
    out = _graded(tmp_path_factory.mktemp("demo_moodle"), "moodle")
    return out, release.main(out=out, lms="moodle", moodle_max=100, partial=True)


@pytest.fixture(scope="module")
def canvas(tmp_path_factory):
    out = _graded(tmp_path_factory.mktemp("demo_canvas"), "canvas")
    return out, release.main(out=out, lms="canvas", canvas_assignment_id=48213, partial=True)


def test_moodle_release_is_not_refused(moodle):
    """With the written answers graded (blank ones scored 0 by themselves), does release for Moodle succeed?"""
    _, code = moodle
    assert code == 0


def test_moodle_zip_files_every_member_under_its_participant(moodle):
    """Does Moodle's import rule file each demo student's pages (theory graded, the others saying missing) and
    summary under their own participant id (the two Anna Lees apart)?"""
    out, _ = moodle
    pids = {s[1] for s in STUDENTS}
    got = {}
    for m in names(out / "release" / "moodle_feedback.zip"):
        got.setdefault(moodle_accepts(m, pids), set()).add(m.rsplit("/", 1)[-1])
    assert got == {pid: {f"{nb}.html" for nb in contract.NOTEBOOKS} | {"summary.txt"} for pid in pids}


def test_moodle_late_student_note_and_penalised_grade(moodle):
    """Does 李明's worksheet row carry the late note and a grade below Anna Lee 104's, who wrote the same answers
    on time?"""
    out, _ = moodle
    with open(out / "release" / "moodle_worksheet.csv", encoding="utf-8") as f:
        rows = {r["Identifier"]: r for r in csv.DictReader(f)}
    li, anna = rows["Participant 101"], rows["Participant 104"]
    assert ("late" in li["Feedback comments"], float(li["Grade"]) < float(anna["Grade"])) == (True, True)


def test_moodle_pages_are_the_graded_feedback_without_leaks(moodle):
    """Is every page in the Moodle zip a real theory feedback page free of hidden tests, solutions and tokens?"""
    out, _ = moodle
    with zipfile.ZipFile(out / "release" / "moodle_feedback.zip") as z:
        pages = [z.read(n).decode("utf-8") for n in z.namelist() if n.endswith("theory.html")]
    assert (len(pages), [p for p in pages if release.leaks(p)]) == (len(STUDENTS), [])


def test_canvas_release_is_not_refused(canvas):
    """With the written answers graded, does release for Canvas succeed?"""
    _, code = canvas
    assert code == 0


def test_canvas_zip_names_carry_user_and_file_ids(canvas):
    """Does Canvas's re-upload rule read every member's user id and submitted file id as the student's own?"""
    out, _ = canvas
    got = {canvas_accepts(m) for m in names(out / "release" / "canvas_feedback.zip")}
    assert got == {(s[3], s[4]) for s in STUDENTS}


def test_canvas_grades_hold_every_student(canvas):
    """Does canvas_grades.csv hold a row for each Canvas user id (and the Points Possible row)?"""
    out, _ = canvas
    with open(out / "release" / "canvas_grades.csv", encoding="utf-8") as f:
        ids = sorted(r[1] for r in list(csv.reader(f))[1:])
    assert ids == sorted(["", *(s[3] for s in STUDENTS)])


def _staff_text(out, lms):
    """{zip member or worksheet row: the staff words it holds} over everything released to `lms`."""
    found = {}
    with zipfile.ZipFile(out / "release" / f"{lms}_feedback.zip") as z:
        for name in z.namelist():
            text = z.read(name).decode("utf-8")
            found[name] = [w for w in STAFF if w in text]
    sheet = "moodle_worksheet.csv" if lms == "moodle" else "canvas_grades.csv"
    with open(out / "release" / sheet, encoding="utf-8") as f:
        for n, row in enumerate(csv.reader(f)):
            found[f"{sheet}:{n + 1}"] = [w for w in STAFF if w in ",".join(row)]
    return {where: words for where, words in found.items() if words}


@pytest.mark.parametrize("lms", ["moodle", "canvas"])
def test_released_files_hold_no_staff_text(lms, request):
    """Do both release zips (pages and summaries) and the grade files hold no instruction, command, internal id,
    path or zlib error meant for staff?"""
    out, _ = request.getfixturevalue(lms)
    assert _staff_text(out, lms) == {}


@pytest.mark.parametrize("lms", ["moodle", "canvas"])
def test_zips_hold_only_pages_and_summaries(lms, request):
    """Does each zip hold the students' feedback pages and summaries only (nothing else from OUT)?"""
    out, _ = request.getfixturevalue(lms)
    allowed = {f"{nb}.html" for nb in contract.NOTEBOOKS} | {f"feedback-{nb}.html" for nb in contract.NOTEBOOKS}
    bases = {m.rsplit("/", 1)[-1].split("_")[-1] for m in names(out / "release" / f"{lms}_feedback.zip")}
    assert bases <= allowed | {"summary.txt"}


@pytest.mark.parametrize("lms", ["moodle", "canvas"])
def test_damaged_download_is_held_back_not_released(lms, request):
    """Is the student whose entry the TA's download damaged held back with 'download ... again', her pages and
    grade in no released file?"""
    out, _ = request.getfixturevalue(lms)
    with open(out / "release" / "MANIFEST.csv", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["lms_id"] in (DAMAGED[1], DAMAGED[3])]
    assert [r["status"] for r in rows] == [
        "not released: theory damaged in the LMS download: download the submissions again and grade"
    ]
    assert not [m for m in names(out / "release" / f"{lms}_feedback.zip") if DAMAGED[1] in m or DAMAGED[3] in m]
