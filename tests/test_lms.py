"""autograder.lms: one record per LMS, read by discover, export, release and the command line."""

import csv
import re

import pytest

from autograder import cli, lms
from autograder.grading import discover
from autograder.reports import export, feedback
from tests.reports.test_export import write_grades

NAMES = ["Zoë Ñúñez", "李明", "Anna_Lee", "O'Brien"]


@pytest.mark.parametrize("name", NAMES)
def test_moodle_feedback_folder_reads_back_as_the_same_participant(name):
    """Is the folder a Moodle release writes for a participant read by the download pattern as that participant
    (what Moodle's zip importer needs), whatever the name?"""
    m = lms.MOODLE.download.match(lms.MOODLE.folder(name, "1017"))
    assert m and lms.MOODLE.ids(m)[1]["user_id"] == "1017"


@pytest.mark.parametrize("login", ["leeanna", "zoë.ñúñez", "li_ming", "12345", ""])
def test_canvas_feedback_file_reads_back_as_the_same_user_and_file(login):
    """Is a feedback file a Canvas release names for a submission read back with the same user id and file id
    (Canvas's re-upload takes the first two all-digit pieces), even for a login with '_' or all digits?"""
    name = lms.CANVAS.prefix(login, "4321", "98765") + "feedback-nmt.html"
    m = lms.CANVAS.download.match(name)
    assert m and {k: lms.CANVAS.ids(m)[1][k] for k in ("user_id", "file_id")} == {"user_id": "4321", "file_id": "98765"}
    assert [p for p in name.split("_") if p.isdigit()][:2] == ["4321", "98765"]


@pytest.mark.parametrize("system", lms.REGISTRY.values(), ids=list(lms.REGISTRY))
def test_an_lms_student_id_loses_its_suffix_on_the_page(system):
    """Does the page name a student an LMS named without the '~<lms><user id>' the grader added?"""
    student = discover.student_id("Zoë Ñúñez", {"lms": system.id, "user_id": "1017"})
    assert lms.ID_SUFFIX.search(student) and feedback.shown_name(student) == "Zoë Ñúñez"


def test_release_offers_every_lms_and_its_setting():
    """Does `release` take --lms for every record and each record's setting option?"""
    args = cli.parser().parse_args(["release", "OUT", "--lms", "canvas", "--moodle-max", "50"])
    assert (args.lms, args.moodle_max, args.canvas_assignment_id) == ("canvas", 50.0, None)
    for system in lms.REGISTRY.values():
        assert vars(cli.parser().parse_args(["release", "OUT", "--lms", system.id]))[system.setting] is None


class Classroom(lms.Canvas):
    """A made-up third LMS, as its record would be added: ids and a gradebook file of its own."""

    id, name, user_id = "classroom", "Classroom", "Classroom user id"
    download = re.compile(r"^(?P<login>[^()/]+) \((?P<uid>\d+)\)(?P<late>) (?P<sid>\d+) (?P<file>.+)$")
    setting, export_unset = "classroom_id", "export: classroom_grades.csv names no course"


def test_another_lms_is_one_record(tmp_path, monkeypatch, capsys):
    """With one more record in the registry and nothing else changed, does `export` write its gradebook file, and
    does discover name its students by its ids?"""
    monkeypatch.setitem(lms.REGISTRY, Classroom.id, Classroom())
    write_grades(tmp_path, pending=False)
    export.export(tmp_path)
    with open(tmp_path / "export" / "classroom_grades.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0][-1] == "a3 (autograder)" and {r[3] for r in rows[2:]} == {"alice", "bob", "carol"}
    assert "export: classroom_grades.csv names no course" in capsys.readouterr().out
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "Li Ming (7) 8 nmt.ipynb").write_text("{}")
    assert list(discover.discover(tmp_path / "subs")) == ["Li Ming~classroom7"]
