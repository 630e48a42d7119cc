"""A student's grade is their own: ids come from the student's own submission, never from the batch around it."""

import csv
import shutil
import unicodedata
import zipfile

import nbformat
import pytest

from autograder.grading import discover, ingest, pipeline
from tests.fixtures import toy

NAMES = ["李明", "王芳", "Zoë Ñúñez", "Anna Lee", "Anna_Lee", "O'Brien", "Ава Ли"]


def ids_of(root):
    """{student id: name as submitted} that discover gives the folders under root."""
    return {sid: raw for sid, (raw, _) in discover.discover(root).items()}


def folders(root, names):
    for name in names:
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "theory.ipynb").write_text("{}")
    return root


def test_names_students_really_have_are_their_ids():
    """Are Unicode names, names with spaces, apostrophes and Cyrillic look-alikes kept as they are?"""
    assert [discover.student_id(n) for n in NAMES] == NAMES


def test_id_does_not_depend_on_the_other_students(tmp_path):
    """Does adding a student (who sorts first) between two runs leave every other student's id as it was?"""
    before = ids_of(folders(tmp_path / "a", ["李明", "王芳"]))
    after = ids_of(folders(tmp_path / "b", ["丁一", "李明", "王芳"]))
    assert {s: before[s] for s in before} == {s: after[s] for s in before}, (before, after)
    assert set(after) == {"丁一", "李明", "王芳"}


def test_look_alike_names_get_different_ids(tmp_path):
    """Do 'Anna Lee', 'Anna_Lee', 'anna lee', a Cyrillic 'Аnna Lee' and 'Zoë' in NFC and NFD stay apart?"""
    names = ["Anna Lee", "Anna_Lee", "anna lee", "\u0410nna Lee", "Zoë", unicodedata.normalize("NFD", "Zoë")]
    found = ids_of(folders(tmp_path, names))
    assert sorted(found.values()) == sorted(names) and len(found) == len(names), found


def test_a_name_in_nfd_is_escaped_stably():
    """Is a name that is not in NFC (macOS zips) given an NFC id with a hash of its exact text, the same every time?"""
    nfd = unicodedata.normalize("NFD", "Zoë")
    sid = discover.student_id(nfd)
    assert sid == discover.student_id(nfd) and sid.startswith("Zoë~") and sid != "Zoë", sid
    assert unicodedata.is_normalized("NFC", sid)


def test_unsafe_characters_are_escaped_with_a_stable_hash():
    """Is a name with glob and separator characters escaped into a safe id that no other name gets?"""
    a, b = discover.student_id("a*b?[c]"), discover.student_id("a_b_c")
    assert not set("*?[]") & set(a) and a.startswith("a_b_c~") and b == "a_b_c" and a != b, (a, b)
    assert discover.student_id("a*b?[c]") == a


def test_a_folder_cannot_take_an_lms_students_id():
    """Can a plain folder named like an LMS id ('Jane Doe~moodle123') never be that Moodle student?"""
    moodle = discover.student_id("Jane Doe", {"lms": "moodle", "user_id": "123"})
    assert moodle == "Jane Doe~moodle123"
    assert discover.student_id("Jane Doe~moodle123") != moodle


def test_a_very_long_name_is_shortened_with_a_hash():
    """Does a name longer than a file name may be get an id of bounded length, still telling two apart?"""
    a, b = discover.student_id("李" * 300), discover.student_id("李" * 301)
    assert a != b and len(a.encode()) < 255 and len(b.encode()) < 255


def test_two_lms_students_of_one_full_name_in_a_zip(tmp_path):
    """Does a Moodle zip holding two students called '李明' give two students, each with their own LMS id?"""
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("李明_501_assignsubmission_file_/theory.ipynb", "{}")
        zf.writestr("李明_502_assignsubmission_file_/theory.ipynb", "{}")
    subs = [s for s in ingest.ingest(archive, tmp_path / "staging") if s.notebook == "theory"]
    assert {s.student: (s.submitted_as, s.lms["user_id"]) for s in subs} == {
        "李明~moodle501": ("李明", "501"),
        "李明~moodle502": ("李明", "502"),
    }


def test_same_bytes_give_the_same_digest_and_changed_bytes_another(tmp_path):
    """Does the submission digest change when a file's bytes change, and only then?"""
    f = tmp_path / "theory.ipynb"
    f.write_text("{}")
    one = discover.submission_digest("李明", [("theory.ipynb", f)])
    assert one == discover.submission_digest("李明", [("theory.ipynb", f)])
    assert one != discover.submission_digest("王芳", [("theory.ipynb", f)])
    f.write_text("{ }")
    assert one != discover.submission_digest("李明", [("theory.ipynb", f)])


# --- through the pipeline (the toy course) ------------------------------------------------------------------


def grades(out):
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def rerun(tmp_path_factory):
    """李明 (right), 王芳 (untouched), Anna Lee (right) and Anna_Lee (untouched) graded; then 丁一 (untouched) added
    and the same command run again on the same OUT."""
    root = tmp_path_factory.mktemp("identity")
    rel = toy.release(tmp_path_factory.getbasetemp())
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    right = toy.fill(nb, toy.RIGHT)
    subs = toy.write_students(root / "subs", rel, {"李明": right, "王芳": nb, "Anna Lee": right, "Anna_Lee": nb})
    out = root / "out"
    kwargs = dict(workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    first = pipeline.grade(subs, out, **kwargs)
    before = grades(out)
    toy.write_students(subs, rel, {"丁一": nb})
    second = pipeline.grade(subs, out, **kwargs)
    return out, first, second, before


def test_adding_a_student_keeps_every_grade_with_its_student(rerun):
    """After 丁一 is added and the batch re-run, does everyone keep their own score (丁一 0, 李明 3, 王芳 0)?"""
    out, _, second, _ = rerun
    got = {s: r["score"] for s, r in grades(out).items()}
    assert got == {"丁一": "0", "李明": "3", "王芳": "0", "Anna Lee": "3", "Anna_Lee": "0"}, got
    assert second.graded == ["丁一"] and sorted(second.skipped) == sorted(["李明", "王芳", "Anna Lee", "Anna_Lee"])


def test_look_alike_names_keep_their_own_grades(rerun):
    """Do 'Anna Lee' (right) and 'Anna_Lee' (untouched) get their own scores, and does the log name the pair?"""
    out, _, _, before = rerun
    assert (before["Anna Lee"]["score"], before["Anna_Lee"]["score"]) == ("3", "0")
    assert "LOOK-ALIKE names, graded as different students: 'Anna Lee', 'Anna_Lee'" in (out / "grading.log").read_text(
        encoding="utf-8"
    )


def test_run_summary_names_the_look_alike_names(rerun, capsys):
    """Does the summary `grade` prints name 'Anna Lee' and 'Anna_Lee' as look-alikes, as the log does?"""
    out, first, _, _ = rerun
    line = "LOOK-ALIKE names, graded as different students: 'Anna Lee', 'Anna_Lee'"
    assert first.look_alikes == [line]
    pipeline.print_summary(first, out)
    assert f"  {line}" in capsys.readouterr().out.splitlines()


def test_run_phases_are_the_named_ones_and_fit_in_the_run(rerun):
    """Does a run's summary time its phases, in order, each at least 0 s, together within the run's own seconds?"""
    _, first, second, _ = rerun
    for summary in (first, second):
        assert list(summary.phases) == list(pipeline.PHASES)
        assert min(summary.phases.values()) >= 0 and sum(summary.phases.values()) <= summary.seconds


def test_every_row_names_the_student_as_submitted(rerun):
    """Does every row of grades.csv and grades_by_cell.csv carry the folder name as submitted?"""
    out, *_ = rerun
    for name in ("grades.csv", "grades_by_cell.csv"):
        with open(out / name, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        assert rows and all(r["submitted_as"] == r["student"] for r in rows), name


KWARGS = dict(workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)


def graded_once(tmp_path, name):
    """One student `name` with the toy's right answers graded into tmp_path/out: (release notebook, subs, out)."""
    rel = toy.release(tmp_path.parent)
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    subs = toy.write_students(tmp_path / "subs", rel, {name: toy.fill(nb, toy.RIGHT)})
    pipeline.grade(subs, tmp_path / "out", **KWARGS)
    return nb, subs, tmp_path / "out"


@pytest.mark.slow
def test_changed_files_are_graded_again_without_force(tmp_path):
    """Is a saved result reused only for the same bytes: a resubmission is graded again, and the log says why?"""
    nb, subs, out = graded_once(tmp_path, "Zoë Ñúñez")
    rel = toy.release(tmp_path.parent)
    toy.write_students(subs, rel, {"Zoë Ñúñez": toy.fill(nb, dict(toy.RIGHT, mul=toy.WRONG_MUL))})
    again = pipeline.grade(subs, out, **KWARGS)
    assert again.graded == ["Zoë Ñúñez"] and grades(out)["Zoë Ñúñez"]["score"] == "1"
    assert "REGRADE Zoë Ñúñez: the submitted files changed" in (out / "grading.log").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_renamed_folder_does_not_inherit_a_grade(tmp_path):
    """When the folder of a graded student is replaced by another student's under another name, is nothing reused?"""
    nb, subs, out = graded_once(tmp_path, "李明")
    shutil.rmtree(subs / "李明")
    toy.write_students(subs, toy.release(tmp_path.parent), {"李 明": nb})
    again = pipeline.grade(subs, out, **KWARGS)
    assert again.graded == ["李 明"] and grades(out)["李 明"]["score"] == "0"
