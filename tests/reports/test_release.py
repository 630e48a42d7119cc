"""autograder.reports.release: feedback zips and worksheets as Moodle and Canvas import them, checked
against the rules of their import code; the refusal while hand grading is open, --partial, the manifest."""

import csv
import io
import shutil
import zipfile

import pytest

from autograder import contract
from autograder.lms import REGISTRY
from autograder.reports import release
from tests.fixtures import term as term_fixture
from tests.fixtures.lms_rules import (
    canvas_accepts,
    canvas_import_assignment,
    moodle_accepts,
    moodle_import_worksheet,
    names,
)

DUE = "2023-03-31T23:59:00-04:00"
TOTAL = sum(contract.max_score(nb) for nb in contract.NOTEBOOKS)  # every autograded point of the course
MAXIMUM = TOTAL + sum(contract.written_max_score(nb) for nb in contract.NOTEBOOKS)  # and the written ones
CANVAS_ID = 48213
# student id: (shown name, moodle participant id, canvas login, canvas user id, canvas file id, days late)
STUDENTS = {
    "李明": ("李明", "101", "liming", "201", "301", 2),
    "Zoë Ñúñez": ("Zoë Ñúñez", "102", "nunezz", "202", "302", 0),
    "Anna Lee~moodle103": ("Anna Lee", "103", "leea", "203", "303", 0),
    "Anna Lee~moodle104": ("Anna Lee", "104", "leeann", "204", "304", 0),
    "Jane_Doe": ("Jane_Doe", "105", "doej", "205", "305", 0),
}
PENDING = "Pending Person"  # a written answer still to grade


def write_out(out, lms, pending=True, students=None):
    """A graded OUT as grade leaves it: grades.csv (every autograded point, lateness columns), OUT/term/lms_files.csv
    and OUT/course files, one feedback page per notebook, and the staff-only files release must never ship."""
    head = [*"student notebook score max_score status written_score written_max_score ungraded".split()]
    rows = [head + ["submitted_as", "submitted_at", "due", "late_units", "late_penalty"]]
    lms_rows = [["student", "lms", "lms_user_id", "lms_file_id", "lms_name"]]
    everyone = dict(
        students or STUDENTS, **({PENDING: ("Pending Person", "106", "pendp", "206", "306", 0)} if pending else {})
    )
    for student, (name, pid, login, uid, fid, days) in everyone.items():
        for nb in contract.NOTEBOOKS:
            pts = contract.max_score(nb)
            ungraded = "written_scaling" if student == PENDING and nb == "nmt" else ""
            units = str(days)
            rows.append(
                [student, nb, pts, pts, "graded", "", "", ungraded, name, "", DUE, units, f"{pts * days / 10:g}"]
            )
            page = out / "feedback" / student / f"{nb}.html"
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(f"<html><body>Feedback {nb} for {name}: PASSED check</body></html>", encoding="utf-8")
        lms_rows.append([student, "moodle", pid, "", name] if lms == "moodle" else [student, "canvas", uid, fid, login])
    (out / "term").mkdir(parents=True, exist_ok=True)
    (out / "term" / "course.toml").write_text(term_fixture.COURSE)
    late = ["student,submitted_at,evidence"] + [
        f"{s},2023-04-02T23:00:00-04:00,--submitted" for s, v in everyone.items() if v[5] == 2
    ]
    (out / "term" / "submitted.csv").write_text("\n".join(late) + "\n", encoding="utf-8")
    lms_ids = [["student", "lms", "lms_user_id", "lms_name"]] + [[r[0], r[1], r[2], r[4]] for r in lms_rows[1:]]
    for path, data in (
        (out / "grades.csv", rows),
        (out / "term" / "lms_files.csv", lms_rows),
        (out / "lms_ids.csv", lms_ids),
    ):
        with open(path, "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(data)
    (out / "similarity.html").write_text("pairs of students")
    (out / "feedback" / "index.html").write_text("TA index")
    (out / "grading.log").write_text("staff notes")
    return out


@pytest.fixture
def moodle(tmp_path):
    out = write_out(tmp_path / "out", "moodle", pending=False)
    return out, release.release(out, "moodle", setting=MAXIMUM)


@pytest.fixture
def canvas(tmp_path):
    out = write_out(tmp_path / "out", "canvas", pending=False)
    return out, release.release(out, "canvas", setting=CANVAS_ID)


def test_moodle_zip_files_every_member_under_its_participant(moodle):
    """Does Moodle's import rule file every member of moodle_feedback.zip under the right participant (two Anna
    Lees apart, 'Jane_Doe' whose '_' would otherwise hide her id)?"""
    out, _ = moodle
    pids = {v[1]: v[0] for v in STUDENTS.values()}
    got = {}
    for m in names(out / "release" / "moodle_feedback.zip"):
        got.setdefault(moodle_accepts(m, pids), set()).add(m.rsplit("/", 1)[-1])
    want = {f"{nb}.html" for nb in contract.NOTEBOOKS} | {"summary.txt"}
    assert got == {pid: want for pid in pids}


def test_moodle_folder_is_named_as_moodle_downloads(moodle):
    """Is 李明's folder named as Moodle downloads it: '李明_101_assignsubmission_file_'?"""
    out, _ = moodle
    assert "李明_101_assignsubmission_file_/nmt.html" in names(out / "release" / "moodle_feedback.zip")


def test_moodle_worksheet_has_the_columns_the_importer_needs(moodle):
    """Does the worksheet hold Identifier, Grade and Last modified (grade) (without which Moodle's importer
    refuses the file) and Feedback comments not as the first column (which it would skip)?"""
    out, _ = moodle
    with open(out / "release" / "moodle_worksheet.csv", encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert {"Identifier", "Grade", "Last modified (grade)"} <= set(header) and header.index("Feedback comments") > 0


def test_moodle_worksheet_carries_penalty_and_late_note(moodle):
    """Does 李明's worksheet row give 'Participant 101', the penalised grade (the total − 20 %) and the late note?"""
    out, _ = moodle
    with open(out / "release" / "moodle_worksheet.csv", encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["Identifier"] == "Participant 101")
    assert (row["Grade"], "late" in row["Feedback comments"]) == (str(round(TOTAL * 0.8, 2)), True)


def test_canvas_zip_names_carry_user_and_file_ids(canvas):
    """Does Canvas's re-upload rule read each member's user id and submitted file id as the student's own?"""
    out, _ = canvas
    want = {(v[3], v[4]) for v in STUDENTS.values()}
    got = {canvas_accepts(m) for m in names(out / "release" / "canvas_feedback.zip")}
    assert got == want


def test_canvas_grades_released_students_only(tmp_path):
    """With --partial, does canvas_grades.csv hold the released students (and Points Possible) but not the one
    still waiting for a hand grade?"""
    out = write_out(tmp_path / "out", "canvas")
    release.release(out, "canvas", setting=CANVAS_ID, partial=True)
    with open(out / "release" / "canvas_grades.csv", encoding="utf-8") as f:
        ids = [r[1] for r in list(csv.reader(f))[1:]]
    assert sorted(ids) == ["", "201", "202", "203", "204", "205"]


def test_refuses_while_hand_grading_is_open(tmp_path, capsys):
    """Does release exit non-zero, naming the count and the student, while a cell waits for a hand grade, and
    write nothing?"""
    out = write_out(tmp_path / "out", "moodle")
    code = release.main(out=out, lms="moodle", moodle_max=MAXIMUM)
    err = capsys.readouterr().err
    assert (code, "1 students are not final (Pending Person)" in err, "cells to grade by hand" in err) == (
        1,
        True,
        True,
    )
    assert not (out / "release").exists()


def test_partial_lists_who_was_held_back(tmp_path):
    """With --partial, does MANIFEST.csv say the waiting student was not released and why?"""
    out = write_out(tmp_path / "out", "moodle")
    release.release(out, "moodle", setting=MAXIMUM, partial=True)
    with open(out / "release" / "MANIFEST.csv", encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["student"] == PENDING)
    assert row["status"] == "not released: cells to grade by hand (nmt/written_scaling)"


def set_grades(out, student, **columns):
    """Change `student`'s rows of OUT/grades.csv (a regrade resolved, a hand grade entered since a release)."""
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if row["student"] == student:
            row.update(columns)
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_partial_releases_again_only_whose_grade_or_page_changed(tmp_path):
    """After a release, does --partial release only the students whose grade changed, whose page changed, or who
    became final since, in the zip and worksheet alone, the others named unchanged in MANIFEST.csv?"""
    out = write_out(tmp_path / "out", "moodle")
    first = release.release(out, "moodle", setting=MAXIMUM, partial=True)
    assert sorted(first["released"]) == sorted(STUDENTS)
    set_grades(out, "Zoë Ñúñez", written_score="1", written_max_score="2")
    (out / "feedback" / "Jane_Doe" / "bert.html").write_text("<html><body>a TA's comment</body></html>")
    set_grades(out, PENDING, ungraded="")
    got = release.release(out, "moodle", setting=MAXIMUM, partial=True)
    assert sorted(got["released"]) == sorted(["Zoë Ñúñez", "Jane_Doe", PENDING])
    assert sorted(got["unchanged"]) == sorted(set(STUDENTS) - {"Zoë Ñúñez", "Jane_Doe"})
    assert {m.split("_")[1] for m in names(out / "release" / "moodle_feedback.zip")} == {"102", "105", "106"}
    with open(out / "release" / "moodle_worksheet.csv", encoding="utf-8") as f:
        assert sorted(r["Identifier"] for r in csv.DictReader(f)) == ["Participant 102", "Participant 105",
                                                                     "Participant 106"]  # fmt: skip
    with open(out / "release" / "MANIFEST.csv", encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["student"] == "李明")
    assert row["status"].startswith("not released: unchanged since the release of ")


def test_release_history_keeps_every_release(tmp_path):
    """Does OUT/release/HISTORY.csv keep one row per student per release (a full release re-releasing everyone),
    so that --partial compares with the latest?"""
    out = write_out(tmp_path / "out", "moodle", pending=False)
    release.release(out, "moodle", setting=MAXIMUM)
    release.release(out, "moodle", setting=MAXIMUM)
    with open(out / "release" / "HISTORY.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * len(STUDENTS) and set(release.released_before(out, "moodle")) == set(STUDENTS)
    assert release.released_before(out, "canvas") == {}


def test_partial_with_nothing_changed_writes_nothing_to_upload(tmp_path, capsys):
    """When nothing changed since the last release, does --partial say so, exit 0 and leave no zip or worksheet
    that could be uploaded twice?"""
    out = write_out(tmp_path / "out", "moodle", pending=False)
    assert release.main(out=out, lms="moodle", moodle_max=MAXIMUM) == 0
    capsys.readouterr()
    assert release.main(out=out, lms="moodle", moodle_max=MAXIMUM, partial=True) == 0
    said = capsys.readouterr().out
    assert f"released 0 students to moodle; held back 0; {len(STUDENTS)} unchanged since their last release" in said
    assert "nothing changed since the last release to moodle" in said
    assert not (out / "release" / "moodle_feedback.zip").exists()
    assert not (out / "release" / "moodle_worksheet.csv").exists()


def damage(out, student, notebook):
    """Mark `student`'s `notebook` in OUT/grades.csv as grading records a notebook the TA's LMS download damaged."""
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    for row in rows:
        if row[:2] == [student, notebook]:
            row[2], row[4] = "", f"damaged download: '{notebook}.ipynb' could not be read from the LMS download"
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)


def test_partial_holds_back_a_damaged_download(tmp_path):
    """With --partial, is a student whose notebook the LMS download damaged held back (not released at 0), the
    manifest saying to download it again?"""
    out = write_out(tmp_path / "out", "moodle", pending=False)
    damage(out, "Zoë Ñúñez", "theory")
    got = release.release(out, "moodle", setting=MAXIMUM, partial=True)
    assert got["held"]["Zoë Ñúñez"] == (
        "not released: theory damaged in the LMS download: download the submissions again and grade"
    )
    assert not [m for m in names(out / "release" / "moodle_feedback.zip") if m.startswith("Zoë")]


def test_refuses_while_a_download_is_damaged(tmp_path, capsys):
    """Without --partial, does release refuse while a notebook waits for a good download, saying so?"""
    out = write_out(tmp_path / "out", "moodle", pending=False)
    damage(out, "Zoë Ñúñez", "theory")
    code = release.main(out=out, lms="moodle", moodle_max=MAXIMUM)
    assert (code, "Zoë Ñúñez: theory damaged in the LMS download" in capsys.readouterr().err) == (1, True)


def test_manifest_lists_every_released_file(moodle):
    """Does MANIFEST.csv name every file in the zip, each 'released'?"""
    out, _ = moodle
    with open(out / "release" / "MANIFEST.csv", encoding="utf-8") as f:
        listed = {r["file"] for r in csv.DictReader(f) if r["status"] == "released"}
    assert listed == set(names(out / "release" / "moodle_feedback.zip"))


def test_staff_files_never_released(moodle):
    """Is nothing but feedback pages and summaries in the zip (no similarity report, TA index, log)?"""
    out, _ = moodle
    bases = {m.rsplit("/", 1)[-1] for m in names(out / "release" / "moodle_feedback.zip")}
    assert bases == {f"{nb}.html" for nb in contract.NOTEBOOKS} | {"summary.txt"}


def test_page_with_hidden_tests_is_held_back(tmp_path):
    """Is a student whose page shows a hidden-test region held back instead of released?"""
    out = write_out(tmp_path / "out", "moodle", pending=False)
    (out / "feedback" / "李明" / "nmt.html").write_text("### BEGIN HIDDEN TESTS\ncheck()", encoding="utf-8")
    got = release.release(out, "moodle", setting=MAXIMUM)
    assert "hidden tests" in got["held"]["李明"] and "李明" not in got["released"]


def test_student_without_lms_id_is_held_back(tmp_path):
    """Is a student who did not submit through Canvas held back with the reason?"""
    out = write_out(tmp_path / "out", "canvas", pending=False)
    for ids in (out / "term" / "lms_files.csv", out / "lms_ids.csv"):  # every record of OUT's LMS ids
        text = ids.read_text(encoding="utf-8")
        ids.write_text("\n".join(ln for ln in text.splitlines() if not ln.startswith("李明")))
    assert release.release(out, "canvas", setting=CANVAS_ID)["held"]["李明"].startswith("not released: no canvas id")


def test_lms_applies_late_policy_releases_raw(tmp_path):
    """With --lms-applies-late-policy, does the worksheet carry 李明's raw total?"""
    out = write_out(tmp_path / "out", "moodle", pending=False)
    release.release(out, "moodle", setting=MAXIMUM, lms_applies_late_policy=True)
    text = (out / "release" / "moodle_worksheet.csv").read_text(encoding="utf-8")
    assert next(csv.DictReader(io.StringIO(text)))["Grade"] == str(TOTAL)


@pytest.mark.slow
def test_real_feedback_pages_pass_the_leak_check(tmp_path_factory):
    """Are the feedback pages grading really writes (toy course) free of hidden tests, solutions and tokens?"""
    _, _, out, _ = term_fixture.graded(tmp_path_factory.getbasetemp())
    pages = list((out / "feedback").glob("*/*.html"))
    assert pages and not [p for p in pages if release.leaks(p.read_text(encoding="utf-8"))]


@pytest.mark.slow
def test_graded_toy_course_released_after_hand_grading(tmp_path_factory, capsys):
    """On a really graded OUT (toy course), is release refused while Anna Lee's written answer waits, and once a TA
    has graded it, does the Moodle zip hold each student's real page and 李明's summary the late note?"""
    from nbgrader.api import Gradebook

    _, _, graded, _ = term_fixture.graded(tmp_path_factory.getbasetemp())
    out = tmp_path_factory.mktemp("toy_release") / "out"
    shutil.copytree(graded, out)
    students = sorted(p.stem for p in (out / ".state").glob("*.json"))
    ids = "student,lms,lms_user_id,lms_file_id,lms_name\n" + "".join(
        f"{s},moodle,{500 + i},,{s}\n" for i, s in enumerate(students)
    )
    (out / "term" / "lms_files.csv").write_text(ids, encoding="utf-8")
    refused = release.main(out=out, lms="moodle", moodle_max=MAXIMUM)
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        gb.find_grade("written_toy", "toy", contract.ASSIGNMENT, "Anna Lee").manual_score = 1.0
        gb.db.commit()
    assert (refused, release.main(out=out, lms="moodle", moodle_max=MAXIMUM)) == (1, 0)
    with zipfile.ZipFile(out / "release" / "moodle_feedback.zip") as z:
        pages = [n for n in z.namelist() if n.endswith("/toy.html")]
        summary = z.read(f"李明_{500 + students.index('李明')}_assignsubmission_file_/summary.txt").decode()
    assert len(pages) == len(students) and "Submitted 1 d 3 h late" in summary


def test_pages_older_than_term_files_are_reported(tmp_path):
    """Does release count the pages rendered before the term files last changed (to be rendered again)?"""
    import os

    out = write_out(tmp_path / "out", "moodle", pending=False)
    for page in (out / "feedback").glob("*/*.html"):
        os.utime(page, (1_000_000, 1_000_000))
    got = release.release(out, "moodle", setting=MAXIMUM)
    assert got["stale"] == len(STUDENTS) * len(contract.NOTEBOOKS)


def test_fresh_pages_are_not_reported(tmp_path):
    """Are pages rendered after the term files and hand grades not counted as stale?"""
    import os

    out = write_out(tmp_path / "out", "moodle", pending=False)
    for page in (out / "feedback").glob("*/*.html"):
        os.utime(page, (4_000_000_000, 4_000_000_000))
    assert release.release(out, "moodle", setting=MAXIMUM)["stale"] == 0


# --- what Moodle and Canvas do with the files, by their import code ---------------------------------------------
def test_moodle_grades_are_scaled_to_the_assignments_maximum(tmp_path):
    """With --moodle-max 100, is 李明's grade his penalised points scaled to 100, the worksheet's Maximum Grade 100,
    and does Moodle's importer (maximum 100) take every row?"""
    out = write_out(tmp_path / "out", "moodle", pending=False)
    release.release(out, "moodle", setting=100)
    text = (out / "release" / "moodle_worksheet.csv").read_text(encoding="utf-8")
    row = next(r for r in csv.DictReader(io.StringIO(text)) if r["Identifier"] == "Participant 101")
    assert (row["Grade"], row["Maximum Grade"]) == (f"{round(TOTAL * 0.8 / MAXIMUM * 100, 2):g}", "100")
    stored = moodle_import_worksheet(text, {v[1] for v in STUDENTS.values()}, max_grade=100)
    assert all(grade is not None for grade, _ in stored.values()), stored


def test_moodle_release_without_a_maximum_is_refused(tmp_path, capsys):
    """Without --moodle-max (nor [lms] moodle_max), does release refuse in one line saying what to pass, writing
    nothing (Moodle would read points out of 59 as out of its own maximum)?"""
    out = write_out(tmp_path / "out", "moodle", pending=False)
    code = release.main(out=out, lms="moodle")
    err = capsys.readouterr().err.strip()
    assert (code, len(err.splitlines()), "--moodle-max N" in err, (out / "release").exists()) == (1, 1, True, False)


def test_moodle_maximum_may_come_from_the_course_file(tmp_path):
    """Is the maximum grade in course.toml ([lms] moodle_max) used when --moodle-max is not given?"""
    out = write_out(tmp_path / "out", "moodle", pending=False)
    with open(out / "term" / "course.toml", "a") as f:
        f.write("\n[lms]\nmoodle_max = 10\n")
    release.release(out, "moodle")
    text = (out / "release" / "moodle_worksheet.csv").read_text(encoding="utf-8")
    assert {r["Maximum Grade"] for r in csv.DictReader(io.StringIO(text))} == {"10"}


def test_moodle_upload_order_imports_every_grade_and_comment(tmp_path):
    """Uploaded in the order release prints (worksheet first), does Moodle's importer store every grade and
    comment, where after the feedback zip (which stamps each grade row as modified then) it would skip them all?"""
    import time

    out = write_out(tmp_path / "out", "moodle", pending=False)
    release.release(out, "moodle", setting=MAXIMUM)
    text = (out / "release" / "moodle_worksheet.csv").read_text(encoding="utf-8")
    pids = {v[1] for v in STUDENTS.values()}
    first = moodle_import_worksheet(text, pids, max_grade=MAXIMUM)
    after_zip = moodle_import_worksheet(text, pids, max_grade=MAXIMUM, stamped=dict.fromkeys(pids, time.time() + 120))
    assert all(g is not None and c for g, c in first.values()), first
    assert all(g is None and c is None for g, c in after_zip.values()), after_zip


def test_release_prints_the_moodle_steps_in_the_order_that_works(tmp_path, capsys):
    """Does release tell the TA to upload the worksheet first and the feedback zip second, with the option to
    leave unticked and the feedback types to enable?"""
    out = write_out(tmp_path / "out", "moodle", pending=False)
    assert release.main(out=out, lms="moodle", moodle_max=MAXIMUM) == 0
    printed = capsys.readouterr().out
    sheet, zip_ = printed.find('1. "Upload grading worksheet"'), printed.find('2. "Upload multiple feedback files')
    assert 0 < sheet < zip_ and "unticked" in printed and "Offline grading worksheet" in printed


def test_canvas_column_names_the_assignment_by_its_id(tmp_path):
    """Is canvas_grades.csv's column 'a3 (48213)', which Canvas's importer maps to assignment 48213 whatever its
    title, instead of creating a new assignment?"""
    out = write_out(tmp_path / "out", "canvas", pending=False)
    release.release(out, "canvas", setting=CANVAS_ID)
    with open(out / "release" / "canvas_grades.csv", encoding="utf-8") as f:
        header = next(csv.reader(f))
    assignments = {CANVAS_ID: "Assignment 3: attention and CLIP", 7: "a3"}
    assert (header[-1], canvas_import_assignment(header, assignments)) == ("a3 (48213)", CANVAS_ID)


def test_canvas_release_without_the_assignment_id_is_refused(tmp_path, capsys):
    """Without --canvas-assignment-id (nor [lms] canvas_assignment_id), does release refuse in one line?"""
    out = write_out(tmp_path / "out", "canvas", pending=False)
    code = release.main(out=out, lms="canvas")
    err = capsys.readouterr().err.strip()
    assert (code, len(err.splitlines()), "--canvas-assignment-id N" in err) == (1, 1, True)


# --- plain folders into an LMS: a roster ------------------------------------------------------------------------
# Plain student folders: (folder, moodle participant id, canvas login, canvas user id, canvas file id, days late)
PLAIN = {
    "李明": ("李明", "101", "liming", "201", "", 2),
    "Zoë Ñúñez": ("Zoë Ñúñez", "102", "nunezz", "202", "", 0),
    "Anna Lee": ("Anna Lee", "103", "leea", "203", "", 0),
    "Anna_Lee": ("Anna_Lee", "104", "leeann", "204", "", 0),
}


def plain_out(tmp_path):
    """A graded OUT of plain student folders: no LMS named anyone."""
    out = write_out(tmp_path / "out", "moodle", pending=False, students=PLAIN)
    (out / "term" / "lms_files.csv").unlink()
    (out / "lms_ids.csv").unlink()
    return out


def test_nothing_released_is_an_error(tmp_path, capsys):
    """Does release of plain folders without a roster exit non-zero, saying nothing was released, and write no
    empty zip?"""
    out = plain_out(tmp_path)
    code = release.main(out=out, lms="moodle", moodle_max=MAXIMUM)
    assert (code, "nothing released" in capsys.readouterr().err) == (1, True)
    assert not (out / "release" / "moodle_feedback.zip").exists()


def test_csv_roster_releases_plain_folders_to_moodle(tmp_path):
    """With a roster student,lms_id (ids as 'Participant N' or N), are plain folders released, every zip member
    filed by Moodle's rule under its own participant?"""
    out = plain_out(tmp_path)
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "student,lms_id,email\n李明,Participant 101,li@x\nZoë Ñúñez,102,z@x\nAnna Lee,103,a@x\nAnna_Lee,104,b@x\n"
    )
    got = release.release(out, "moodle", setting=MAXIMUM, roster=roster)
    filed = {moodle_accepts(m, {"101", "102", "103", "104"}) for m in names(out / "release" / "moodle_feedback.zip")}
    assert (sorted(got["released"]), filed) == (sorted(PLAIN), {"101", "102", "103", "104"})


def test_roster_is_kept_for_the_next_release(tmp_path):
    """Once given, is the roster kept in OUT, so the next release (say, after hand grading) needs it no more?"""
    out = plain_out(tmp_path)
    roster = tmp_path / "roster.csv"
    roster.write_text("student,lms_id\n李明,101\n")
    release.release(out, "moodle", setting=MAXIMUM, roster=roster)
    assert release.release(out, "moodle", setting=MAXIMUM)["released"] == ["李明"]


def test_a_roster_given_to_release_reaches_export(tmp_path):
    """After `release --roster` mapped a plain folder to a Moodle participant, does `export` match that student in
    moodle_grades.csv by the same id (one table of LMS ids), and leave the others unmatched?"""
    from autograder.reports import export

    out = plain_out(tmp_path)
    roster = tmp_path / "roster.csv"
    roster.write_text("student,lms_id\n李明,101\n")
    release.release(out, "moodle", setting=MAXIMUM, roster=roster)
    dest = tmp_path / "moodle_grades.csv"
    export.write_gradebook(out, dest, REGISTRY["moodle"], setting=MAXIMUM)
    idents = {row[0] for row in csv.reader(dest.open(encoding="utf-8"))}
    assert "Participant 101" in idents
    assert {"Zoë Ñúñez", "Anna Lee", "Anna_Lee"} <= idents


def test_moodle_worksheet_as_roster_matches_names_and_refuses_a_shared_one(tmp_path):
    """Read as a roster, does Moodle's own grading worksheet map each folder named after a participant's full name
    or email, and leave 'Anna Lee' (two participants of that name) unmapped with a note naming both ids?"""
    out = plain_out(tmp_path)
    sheet = tmp_path / "Grades-A3.csv"
    sheet.write_text(
        "Identifier,Full name,Email address,Status,Grade,Maximum Grade\n"
        "Participant 101,李明,li@uni.edu,Submitted,,100\n"
        "Participant 102,Zoe Nunez,Zoë Ñúñez@uni.edu,Submitted,,100\n"
        "Participant 1001,Anna Lee,anna.lee@uni.edu,Submitted,,100\n"
        "Participant 1017,Anna Lee,alee2@uni.edu,Submitted,,100\n",
        encoding="utf-8",
    )
    got = release.release(out, "moodle", setting=MAXIMUM, roster=sheet, partial=True)
    assert sorted(got["released"]) == ["Zoë Ñúñez", "李明"]
    assert any("'Anna Lee' matches 2 moodle students (1001 and 1017)" in n for n in got["notes"]), got["notes"]


def test_canvas_gradebook_export_as_roster_releases_grades(tmp_path):
    """Read as a roster, does Canvas's gradebook export map folders by sortable name or login, releasing their
    grades by Canvas user id (the pages cannot be attached without a submitted file)?"""
    out = plain_out(tmp_path)
    export = tmp_path / "gradebook.csv"
    export.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,A3 (48213)\n"
        "    Points Possible,,,,,59\n"
        '"Ñúñez, Zoë",202,,nunezz,S1,\n'
        "李明,201,,liming,S1,\n",
        encoding="utf-8",
    )
    got = release.release(out, "canvas", setting=CANVAS_ID, roster=export, partial=True)
    with open(out / "release" / "canvas_grades.csv", encoding="utf-8") as f:
        ids = sorted(r[1] for r in list(csv.reader(f))[2:])
    assert (sorted(got["released"]), ids) == (["Zoë Ñúñez", "李明"], ["201", "202"])


HOSTILE = "=cmd|' -C calc'!A0"  # a student folder a spreadsheet would run as a command


def test_a_formula_like_student_is_quoted_in_the_release_files_and_read_back(tmp_path):
    """Is a student whose folder name starts like a formula written '=cmd… in the Moodle worksheet, MANIFEST.csv and
    HISTORY.csv, and read back bare, so that a --partial release finds them unchanged?"""
    out = write_out(
        tmp_path / "out", "moodle", pending=False, students={HOSTILE: (HOSTILE, "107", "c", "207", "307", 0)}
    )
    release.release(out, "moodle", setting=MAXIMUM)
    for name, column in (
        ("moodle_worksheet.csv", "Full name"),
        ("MANIFEST.csv", "student"),
        ("HISTORY.csv", "student"),
    ):
        with open(out / "release" / name, encoding="utf-8") as f:
            assert {r[column] for r in csv.DictReader(f)} == {"'" + HOSTILE}, name
    assert set(release.released_before(out, "moodle")) == {HOSTILE}
    assert release.release(out, "moodle", setting=MAXIMUM, partial=True)["unchanged"].keys() == {HOSTILE}
