"""No submission can stop the batch: damaged zips are salvaged, zips in a folder are opened, Ctrl-C and an empty
batch end with one line."""

import csv
import os
import signal
import subprocess
import sys
import time
import zipfile

import nbformat
import pytest

from autograder import contract, paths
from autograder.grading import ingest
from autograder.records import NotebookResult, StudentResult
from tests.fixtures import toy
from tests.slowdown import scaled

STUDENTS = ["李明", "Zoë Ñúñez", "Anna Lee"]


@pytest.fixture(scope="module")
def theory():
    return nbformat.writes(nbformat.read(paths.RELEASE / "theory.ipynb", as_version=4)).encode()


def moodle_zip(path, theory, students=STUDENTS):
    """A Moodle download: one folder per participant, each with theory.ipynb (stored uncompressed: easy to damage)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for uid, name in enumerate(students, start=101):
            zf.writestr(f"{name}_{uid}_assignsubmission_file_/theory.ipynb", theory)
    return path


def statuses(subs):
    return {s.submitted_as: s.status for s in subs if s.notebook == "theory"}


def test_a_truncated_lms_zip_keeps_every_entry_before_the_cut(tmp_path, theory):
    """Is a zip cut short (its index lost) salvaged: the entries before the cut graded, the cut one recorded?"""
    archive = moodle_zip(tmp_path / "moodle.zip", theory)
    data = archive.read_bytes()
    cut = data.find(b"PK\x03\x04", data.find(b"PK\x03\x04", data.find(b"PK\x03\x04") + 4) + 4)  # the third entry
    archive.write_bytes(data[: cut + 200])
    notes = []
    got = statuses(ingest.ingest(archive, tmp_path / "staging", notes=notes))
    assert got["李明"] == "ok" and got["Zoë Ñúñez"] == "ok", got
    assert got["Anna Lee"] == (
        "damaged download: 'theory.ipynb' could not be read from the LMS download: damaged in the zip (truncated); "
        "download it again"
    ), got
    assert any("salvaged 2 entries, 1 damaged" in note for note in notes), notes


def corrupt_second_entry(archive):
    """Overwrite bytes in the middle of the zip's second entry (Zoë Ñúñez's), its index left intact."""
    with zipfile.ZipFile(archive) as zf:
        second = zf.infolist()[1]
    data = bytearray(archive.read_bytes())
    start = second.header_offset + 30 + len(second.filename.encode()) + 40
    data[start : start + 64] = b"\xff" * 64
    archive.write_bytes(bytes(data))
    return archive


def test_a_zip_damaged_in_the_middle_loses_only_the_damaged_entry(tmp_path, theory):
    """Does a zip with one entry's bytes corrupted (index intact) record that entry as a damaged download, waiting
    for a good one, and read the others?"""
    archive = corrupt_second_entry(moodle_zip(tmp_path / "moodle.zip", theory))
    got = statuses(ingest.ingest(archive, tmp_path / "staging"))
    assert got["李明"] == "ok" and got["Anna Lee"] == "ok", got
    assert got["Zoë Ñúñez"].startswith(
        "damaged download: 'theory.ipynb' could not be read from the LMS download: damaged in the zip ("
    ), got


def test_the_note_on_a_damaged_entry_names_the_student(tmp_path, theory):
    """Does the batch's note on an entry the download damaged name the student and notebook it belonged to?"""
    archive = corrupt_second_entry(moodle_zip(tmp_path / "moodle.zip", theory))
    notes = []
    ingest.ingest(archive, tmp_path / "staging", notes=notes)
    assert len(notes) == 1 and notes[0].startswith(
        "Zoë Ñúñez~moodle102/theory: damaged download: 'theory.ipynb' could not be read from the LMS download"
    ), notes


def test_a_damaged_entry_named_after_no_notebook_holds_the_missing_ones(tmp_path, theory):
    """When the download damaged a file whose name names no notebook ('A3 final.ipynb'), do the notebooks the
    student seems not to have wait for a good download instead of counting as missing?"""
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("李明_101_assignsubmission_file_/A3 final.ipynb", theory)
        zf.writestr("Anna Lee_102_assignsubmission_file_/theory.ipynb", theory)
    data = bytearray(archive.read_bytes())
    start = data.find(b'"cells"')
    data[start : start + 32] = b"#" * 32  # the stored bytes no longer match the entry's CRC
    archive.write_bytes(bytes(data))
    subs = [s for s in ingest.ingest(archive, tmp_path / "staging") if s.submitted_as == "李明"]
    assert {s.notebook: s.status.split(":")[0] for s in subs} == dict.fromkeys(contract.NOTEBOOKS, "damaged download")


def test_found_only_leaves_out_nbgraders_timestamp(tmp_path, theory):
    """Does a missing notebook's status name the files the student left instead, but not nbgrader's
    timestamp.txt (which records when they submitted)?"""
    folder = tmp_path / "subs" / "Anna Lee"
    folder.mkdir(parents=True)
    (folder / "theory.ipynb").write_bytes(theory)
    (folder / "timestamp.txt").write_text("2023-03-31 20:00:00.000000 UTC")
    (folder / "notes.md").write_text("my notes")
    got = {s.notebook: s.status for s in ingest.ingest(tmp_path / "subs", tmp_path / "staging")}
    assert got["nmt"] == "missing (found only: notes.md)", got


def test_a_file_that_is_no_zip_gives_no_student_and_a_note(tmp_path):
    """Is a 'zip' that is not one read as an empty batch with a one-line note (no traceback)?"""
    archive = tmp_path / "export.zip"
    archive.write_bytes(b"this is not a zip archive" * 40)
    notes = []
    assert ingest.ingest(archive, tmp_path / "staging", notes=notes) == []
    assert len(notes) == 2 and all("\n" not in n for n in notes), notes


def test_a_zip_in_a_student_folder_is_opened(tmp_path, theory):
    """Is the notebook inside a zip a student put in their folder found and graded, and the unpacking logged?"""
    folder = tmp_path / "subs" / "李明"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / "A3 final.zip", "w") as zf:
        zf.writestr("A3/theory.ipynb", theory)
        zf.writestr("../../escape.ipynb", theory)
    sub = next(s for s in ingest.ingest(tmp_path / "subs", tmp_path / "staging") if s.notebook == "theory")
    assert sub.status == "ok", sub.status
    assert "unpacked 'A3 final.zip': 1 files" in sub.repairs, sub.repairs
    assert not (tmp_path / "escape.ipynb").exists() and not (tmp_path / "staging" / "escape.ipynb").exists()


def test_a_damaged_zip_in_a_student_folder_is_recorded(tmp_path, theory):
    """Is a truncated zip in a student's folder recorded on the notebook it held, the batch going on?"""
    folder = tmp_path / "subs" / "Zoë Ñúñez"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / "hw.zip", "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("theory.ipynb", theory)
    (folder / "hw.zip").write_bytes((folder / "hw.zip").read_bytes()[:300])
    sub = next(s for s in ingest.ingest(tmp_path / "subs", tmp_path / "staging") if s.notebook == "theory")
    assert sub.status == "'hw.zip/theory.ipynb' could not be read: damaged in the zip (truncated)", sub.status


def test_an_empty_submissions_folder_is_an_error(tmp_path, capsys):
    """Does grading an empty folder say there is nothing to grade and exit non-zero?"""
    from autograder.cli import main

    (tmp_path / "subs").mkdir()
    assert main(["grade", str(tmp_path / "subs"), "--out", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err.strip() == f"grade: nothing to grade: {tmp_path / 'subs'} is empty"


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_prints_one_line_and_the_rerun_resumes(tmp_path, workers):
    """Does Ctrl-C during grading print one line (no traceback) and exit 130, list in grades.csv every student
    recorded until then, and does the same command resume?"""
    rel = toy.release(tmp_path.parent)
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    slow = dict(toy.RIGHT, add="import time\ntime.sleep(6)\n" + toy.RIGHT["add"])
    subs = toy.write_students(tmp_path / "subs", rel, {name: toy.fill(nb, slow) for name in STUDENTS + ["王芳"]})
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "autograder", "grade", str(subs), "--out", str(out), "--workers", str(workers)]
    cmd += ["--source", str(toy.TOY_SOURCE)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + scaled(240)
    while time.time() < deadline and not list((out / ".state").glob("*.json")):
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole foreground process group
    _, err = proc.communicate(timeout=scaled(120))
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("grading:")]
    assert proc.returncode == 130, err
    assert "Traceback" not in err and len(lines) == 1 and lines[0].startswith("interrupted: "), err
    assert lines[0].endswith("students graded, rerun the same command to resume"), lines
    recorded = sorted(p.stem for p in (out / ".state").glob("*.json"))
    with open(out / "grades.csv", newline="") as f:  # written as grading stopped, not after each student
        assert sorted({row["student"] for row in csv.DictReader(f)}) == recorded
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=scaled(300))
    assert again.returncode == 0 and "skipped" in again.stdout, again.stdout + again.stderr


def damaged_copy(good, bad, how):
    """`bad`: the one-entry zip `good` cut short ("truncated", its index lost) or with bytes of its stored entry
    overwritten ("crc": they no longer match the entry's CRC)."""
    data = bytearray(good.read_bytes())
    if how == "truncated":
        data = data[: len(data) // 2]
    else:
        start = data.find(b'"cells"')
        data[start : start + 64] = b"#" * 64
    bad.write_bytes(bytes(data))
    return bad


@pytest.mark.slow
@pytest.mark.parametrize("how", ["truncated", "crc"])
def test_a_damaged_download_waits_and_a_good_download_grades_it(tmp_path, theory, how):
    """Is a notebook whose entry the TA's Moodle download damaged (cut short, or a CRC error) recorded with no score
    and not final, its work folder gone, and graded when the good download is graded into the same OUT?"""
    from autograder.grading import pipeline
    from autograder.reports import export, release

    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("Zoë Ñúñez_101_assignsubmission_file_/theory.ipynb", theory)
    bad = damaged_copy(good, tmp_path / "bad.zip", how)
    out, student = tmp_path / "out", "Zoë Ñúñez~moodle101"
    summary = pipeline.grade(bad, out, workers=1)
    assert [line.split(":")[0] for line in summary.not_graded[student]] == ["theory"]
    before = export.read_grades(out)[student]
    assert (before["theory"]["status"].startswith("damaged download:"), before["theory"]["score"]) == (True, None)
    assert release.not_final(before).startswith("theory damaged in the LMS download")
    assert not (out / ".work" / student).exists()
    pipeline.grade(good, out, workers=1)
    after = export.read_grades(out)[student]["theory"]
    assert (after["status"], after["score"]) == ("graded", 0.0)


def test_summary_says_to_download_damaged_notebooks_again(tmp_path, capsys):
    """Does the console summary count the notebooks the LMS download damaged and say to download them again?"""
    from collections import Counter

    from autograder.grading import pipeline

    damaged = "damaged download: 'theory.ipynb' could not be read from the LMS download: damaged in the zip (truncated)"
    summary = pipeline.Summary(graded=["李明"], seconds=1.0, students=2, statuses=Counter({damaged: 2, "graded": 6}))
    pipeline.print_summary(summary, tmp_path)
    assert "2 notebooks could not be read from the LMS download: download the submissions again" in (
        capsys.readouterr().out
    )


def test_summary_names_the_students_whose_notebooks_were_not_graded(tmp_path, capsys):
    """Does the console summary name each student whose notebook could not be read, with the notebook and why?"""
    from collections import Counter

    from autograder.grading import pipeline

    damaged = "damaged download: 'theory.ipynb' could not be read from the LMS download: damaged in the zip (truncated)"
    own = "'hw.zip/nmt.ipynb' could not be read: damaged in the zip (truncated)"
    summary = pipeline.Summary(
        graded=["李明"],
        seconds=1.0,
        statuses=Counter({damaged: 1}),
        students=2,
        not_graded={"Zoë Ñúñez~moodle102": [f"theory: {damaged}"], "李明": [f"nmt: {own}"]},
    )
    pipeline.print_summary(summary, tmp_path)
    printed = capsys.readouterr().out
    assert f"NOT GRADED Zoë Ñúñez~moodle102: theory: {damaged}" in printed
    assert f"NOT GRADED 李明: nmt: {own}" in printed


def test_not_graded_leaves_out_what_was_graded_missing_or_failed():
    """Are only the notebooks that could not be graded (damaged, unreadable) listed as not graded, per student?"""
    from autograder.grading import pipeline

    def state(student, **statuses):
        return StudentResult(student, notebooks={nb: NotebookResult(nb, s, 0.0, 1.0, []) for nb, s in statuses.items()})

    states = [
        state("李明", nmt="graded", bert="missing", clip="needs manual grading: scavenger_caption"),
        state("Zoë Ñúñez", theory="damaged download: 'theory.ipynb' could not be read", nmt="grading failed: boom"),
        state("Anna Lee", bert="not a notebook: the file is a PDF file"),
    ]
    assert pipeline.not_graded(states) == {
        "Zoë Ñúñez": ["theory: damaged download: 'theory.ipynb' could not be read"],
        "Anna Lee": ["bert: not a notebook: the file is a PDF file"],
    }
