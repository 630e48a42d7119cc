"""mark's CSVs opened in a spreadsheet: a cell that starts like a formula is written with a quote before it, read
back without it by --import, and a spreadsheet's error value (#NAME?, ...) stops the import."""

import csv
import io
import shutil

import pytest

from autograder import rubrics
from autograder.out import Out
from autograder.records import Results
from tests.fixtures import toy
from tests.marking import test_mark
from tests.marking.test_mark import RIGHT, hand, read_csv, run, write_csv

graded, out = test_mark.graded, test_mark.out  # test_mark's graded toy OUT, a fresh copy per test

HOSTILE = "=cmd|' -C calc'!A0"  # a student folder a spreadsheet would run as a command (no '/' in a folder name)
COMMENTS = {"Zoë Ñúñez": '=HYPERLINK("x")', "李明": "-not a number", "Anna Lee~moodle11": "@SUM(1)"}


def raw(path):
    """The cells of a CSV as a spreadsheet receives them (no quote taken off)."""
    return list(csv.reader(open(path, encoding="utf-8")))


def test_formula_like_comments_are_quoted_on_export_and_read_back_on_import(out, tmp_path):
    """Is a comment starting with =, - or @ written '=HYPERLINK(…) by --export (the adjustment -0.25 as it is), and
    does importing that file again change nothing and leave each comment as the TA wrote it?"""
    rows = [[s, "toy", "written_toy", "counting", "-0.25", c] for s, c in COMMENTS.items()]
    assert run(out, import_csv=write_csv(tmp_path / "in.csv", rows), grader="ta-ana") == 0
    assert run(out, export=tmp_path / "first.csv") == 0
    cells = {row[0]: row[4:6] for row in raw(tmp_path / "first.csv")}
    assert {s: cells[s] for s in COMMENTS} == {s: ["-0.25", "'" + c] for s, c in COMMENTS.items()}
    log = Out(out).marks.read_text()
    assert run(out, import_csv=tmp_path / "first.csv", grader="ta-ana") == 0
    assert Out(out).marks.read_text() == log
    assert {s: hand(out, s).comment.rsplit("\n", 1)[-1] for s in COMMENTS} == COMMENTS


def test_a_quoted_cell_a_ta_typed_is_read_without_its_quote(out, tmp_path):
    """Is a comment a TA typed as '=1+1 in a spreadsheet that kept the quote imported as =1+1?"""
    rows = [["Zoë Ñúñez", "toy", "written_toy", "counting", "'-0.25", "'=1+1"]]
    assert run(out, import_csv=write_csv(tmp_path / "in.csv", rows), grader="ta-ana") == 0
    assert hand(out, "Zoë Ñúñez").score == 0.25 and hand(out, "Zoë Ñúñez").comment.endswith("TA\n=1+1")


@pytest.mark.parametrize(
    "row, error",
    [
        (["李明", "toy", "written_toy", "counting", "", "#NAME?"], "in.csv:3: comment is the spreadsheet error #NAME?"),
        (["李明", "toy", "written_toy", "counting", "#VALUE!", ""], "in.csv:3: adjustment is the spreadsheet error"),
        (["李明", "toy", "written_toy", "#REF!", "", ""], "in.csv:3: items is the spreadsheet error #REF!"),
        (["#N/A", "toy", "written_toy", "counting", "", ""], "in.csv:3: student is the spreadsheet error #N/A"),
        (["李明", "toy", "written_toy", "counting", "", "#div/0!"], "in.csv:3: comment is the spreadsheet error"),
    ],
)
def test_a_spreadsheet_error_value_stops_the_import(out, tmp_path, capsys, row, error):
    """Does a cell a spreadsheet turned into an error value (it took the text for a formula) stop the import with one
    line naming the file, the row and the column, leaving the log and the gradebook as they were?"""
    path = write_csv(tmp_path / "in.csv", [["Zoë Ñúñez", "toy", "written_toy", "counting", "", ""], row])
    before = (out / "gradebook.db").read_bytes()
    assert run(out, import_csv=path) == 1
    err = capsys.readouterr().err
    assert "nothing imported, 1 row(s) to fix" in err and error in err
    assert not Out(out).marks.exists()
    assert (out / "gradebook.db").read_bytes() == before


def test_the_rubric_csv_quotes_a_formula_like_text_and_keeps_negative_points(out, capsys):
    """Does --rubric write an item text starting with = as '=…, and the item's -0.5 points as they are?"""
    path = out.parent / "source" / rubrics.FILENAME
    path.write_text(path.read_text().replace('text = "Restates', 'text = "=Restates'), encoding="utf-8")
    assert run(out, rubric="toy/written_toy") == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[-1][:2] == ["circular", "-0.5"] and rows[-1][2].startswith("'=Restates the question")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """An OUT with the toy course graded for a student whose folder name starts like a formula, and for ann."""
    return test_mark.graded_out(tmp_path_factory.mktemp("hostile"), {HOSTILE: RIGHT, "ann": RIGHT})


@pytest.fixture
def hostile_out(hostile, tmp_path):
    """A fresh copy of the hostile OUT and the toy rubric."""
    shutil.copytree(hostile, tmp_path / "out")
    (tmp_path / "source").mkdir()
    shutil.copy2(toy.TOY_SOURCE / rubrics.FILENAME, tmp_path / "source" / rubrics.FILENAME)
    return tmp_path / "out"


def test_a_formula_like_student_is_quoted_on_export_and_found_on_import(hostile_out, tmp_path):
    """Is a student whose folder name starts like a formula written '=cmd… by --export, and is the exported file,
    filled in, imported for that student (the quote taken off to find them)?"""
    assert run(hostile_out, export=tmp_path / "marks.csv") == 0
    rows = raw(tmp_path / "marks.csv")
    assert [row[0] for row in rows[1:]] == ["'" + HOSTILE, "ann"]
    rows[1][3:6] = ["counting;order", "", "Good."]
    with open(tmp_path / "marks.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    assert run(hostile_out, import_csv=tmp_path / "marks.csv", grader="ta-ana") == 0
    assert hand(hostile_out, HOSTILE).score == 1.0


def test_a_formula_like_student_is_quoted_in_the_groups_csv(hostile_out, tmp_path):
    """Does --groups write a student whose folder name starts like a formula as '=cmd…?"""
    assert run(hostile_out, groups="toy/written_toy", output=tmp_path / "g.csv", encoder="tfidf") == 0
    assert sorted(row[0] for row in raw(tmp_path / "g.csv")[1:]) == sorted(["'" + HOSTILE, "ann"])


def test_a_formula_like_student_is_quoted_in_grades_csv(hostile_out):
    """Does grades.csv, written after marking, name a student whose folder name starts like a formula '=cmd…?"""
    Results(hostile_out).write_csvs()
    assert {r["student"] for r in read_csv(hostile_out / "grades.csv")} == {"'" + HOSTILE, "ann"}
