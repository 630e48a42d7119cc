"""`mark` checked where it is used (issue 55): a rubric `build --check` refuses is refused at start, an item edit
keeps rubrics.toml's mode and symlink and leaves no temporary file, blind second marking stays blind until the
sample is done, and every error is one line."""

import os
import sqlite3
import stat

import pytest

from autograder import rubrics
from autograder.marking import mark
from autograder.marking import server as mark_server
from autograder.out import Out
from tests.marking.test_mark import graded, hand, out, run, source, write_csv  # noqa: F401
from tests.marking.test_server import get, post, serving

CELL = {"notebook": "toy", "grade_id": "written_toy"}


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda t: t.replace("points = 0.5\ntext = \"Relates", "points = 0.25\ntext = \"Relates"),
         "toy/written_toy: the positive items add up to 0.75 of the cell's 1 points"),
        (lambda t: t.replace("points = -0.5", "points = -10"), "item 'circular' is worth -10, more than the cell's 1"),
        (lambda t: t + '\n[toy.written_gone]\nanswer = "x"\n[[toy.written_gone.items]]\nid = "a"\npoints = 1\ntext = "t"\n',
         "toy/written_gone: a rubric for a cell that is not a written answer"),
    ],
)  # fmt: skip
def test_a_rubric_build_check_refuses_is_refused_at_start(out, capsys, edit, said):  # noqa: F811
    """Does `mark` refuse, in one line naming the cell, a rubric `build --check` would refuse, and score nothing?"""
    path = source(out) / rubrics.FILENAME
    path.write_text(edit(path.read_text()))
    code = mark_server.main(out=out, source=source(out), status=True, browser=False)
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and said in err and "nothing scored" in err


def test_an_item_edit_keeps_the_files_mode_and_symlink(out):  # noqa: F811
    """Does an item edit from the page write through a symlinked rubrics.toml, keep its mode 0600, and leave no
    temporary file beside it?"""
    real = out.parent / "kept" / rubrics.FILENAME
    real.parent.mkdir()
    link = source(out) / rubrics.FILENAME
    real.write_text(link.read_text())
    real.chmod(0o600)
    link.unlink()
    link.symlink_to(real)
    marking = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
    with serving(marking) as base:
        status, _ = post(base, "/api/item", dict(CELL, item="order", points=0.5, text="Order does not matter."))
    marking.close()
    marking.settle()
    assert status == 200 and link.is_symlink() and "Order does not matter." in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert sorted(os.listdir(real.parent)) == [rubrics.FILENAME] and sorted(os.listdir(source(out))) == [
        rubrics.FILENAME
    ]


def test_a_failed_item_edit_leaves_no_temporary_file(out, monkeypatch):  # noqa: F811
    """When writing rubrics.toml fails half-way (a full disk), is the file as it was and no temporary file left?"""
    from autograder import files

    before = (source(out) / rubrics.FILENAME).read_text()

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", full_disk)
    with pytest.raises(OSError):
        files.rewrite(source(out) / rubrics.FILENAME, before + "# more\n")
    assert (source(out) / rubrics.FILENAME).read_text() == before
    assert os.listdir(source(out)) == [rubrics.FILENAME]


def test_blind_second_marking_shows_agreement_only_when_the_sample_is_done(out, tmp_path):  # noqa: F811
    """Does the second grader's index hide the agreement (which would tell the first grade) until every answer of
    the sample has their mark, and show it then?"""
    first = [[s, "toy", "written_toy", "counting", "", ""] for s in ("Zoë Ñúñez", "李明", "Anna Lee~moodle11")]
    assert run(out, import_csv=write_csv(tmp_path / "a.csv", first), grader="ta-ana") == 0
    sample = mark.double_sample(mark.collect(out), mark.share("100%"))
    marking = mark_server.Marking(out, source(out), "ta-ben", "tfidf", second=sample)
    with serving(marking) as base:
        post(base, "/api/mark", dict(CELL, marks=[{"student": mark_server.pseudonym("李明"), "items": ["order"]}]))
        index, _ = get(base, "/")
        assert "graded 1 of 3" in index and "agreement" not in index and "kappa" not in index
        rest = [
            {"student": mark_server.pseudonym(s), "items": ["counting"]} for s in ("Zoë Ñúñez", "Anna Lee~moodle11")
        ]
        assert post(base, "/api/mark", dict(CELL, marks=rest))[0] == 200
        index, _ = get(base, "/")
        assert "agreement on 3 double-marked" in index
    marking.close()


def test_an_import_field_too_long_is_one_line(out, tmp_path, capsys):  # noqa: F811
    """Is an import file with a cell past 131,072 characters refused in one line naming the row, not a traceback?"""
    path = write_csv(tmp_path / "in.csv", [["李明", "toy", "written_toy", "order", "", "x" * 140_000]])
    assert run(out, import_csv=path) == 1
    err = capsys.readouterr().err
    assert f"{path}:2: cannot be read as CSV (field larger than field limit" in err and "Traceback" not in err
    assert not Out(out).marks.exists()


def test_a_busy_gradebook_is_a_sentence_on_the_page(out, monkeypatch):  # noqa: F811
    """When the gradebook stays locked by another writer, is the write answered 503 with a sentence (the mark is in
    the log and reaches the gradebook at the next start), not a dropped connection?"""
    monkeypatch.setattr(mark_server, "BUSY_TRIES", 1)

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(mark, "sync", locked)
    marking = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
    with serving(marking) as base:
        status, reply = post(base, "/api/mark", dict(CELL, marks=[{"student": mark_server.pseudonym("李明"),
                                                                      "items": ["order"]}]))  # fmt: skip
    marking.close()
    assert status == 503 and reply["error"].startswith("the gradebook is busy")
    monkeypatch.undo()
    assert run(out, status=True) == 0 and hand(out, "李明").score == 0.5


def test_a_rubric_broken_on_disk_while_the_page_runs_scores_nothing(out):  # noqa: F811
    """When rubrics.toml is edited on disk into one `build --check` refuses while the page runs, is a mark refused
    in a sentence (nothing saved), and taken again once the file is fixed?"""
    path = source(out) / rubrics.FILENAME
    good = path.read_text()
    marking = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
    with serving(marking) as base:
        path.write_text(good.replace("points = -0.5", "points = -10"))
        body = dict(CELL, marks=[{"student": mark_server.pseudonym("李明"), "items": ["order"]}])
        status, reply = post(base, "/api/mark", body)
        assert (
            status == 500 and "rubrics.toml changed and toy/written_toy: item 'circular' is worth -10" in reply["error"]
        )
        assert ("李明", "toy", "written_toy") not in mark.read_log(out)[0]
        path.write_text(good)
        assert post(base, "/api/mark", body)[0] == 200
    marking.close()


@pytest.mark.parametrize(
    "adjustment, comment, said",
    [
        ("1_0", "", "adjustment should be a number of points, got '1_0'"),
        ("1e308", "", "an adjustment is at most the cell's 1 points either way"),
        ("-2", "", "an adjustment is at most the cell's 1 points either way"),
        ("", "x" * 10_001, "a comment should be text of at most 10,000 characters"),
    ],
)
def test_an_import_is_held_to_the_pages_limits(out, tmp_path, capsys, adjustment, comment, said):  # noqa: F811
    """Does --import refuse what the page refuses (an adjustment past the cell's points or not a plain number, a
    comment past 10,000 characters), naming the row?"""
    path = write_csv(tmp_path / "in.csv", [["李明", "toy", "written_toy", "order", adjustment, comment]])
    assert run(out, import_csv=path) == 1
    assert f"{path}:2: {said}" in capsys.readouterr().err


def test_a_comment_starting_with_a_carriage_return_survives_export_and_import(out, tmp_path):  # noqa: F811
    """Is a comment that starts with a carriage return exported quoted and read back exactly as it was?"""
    write_csv(tmp_path / "in.csv", [["李明", "toy", "written_toy", "order", "", "\r=y"]])
    assert run(out, import_csv=tmp_path / "in.csv") == 0
    assert run(out, export=tmp_path / "out.csv") == 0
    assert run(out, import_csv=tmp_path / "out.csv") == 0
    assert mark.read_log(out)[0][("李明", "toy", "written_toy")].comment == "\r=y"
    assert len([line for line in Out(out).marks.read_text().splitlines() if "李明" in line]) == 1


def test_a_check_cells_rubric_without_answers_is_not_a_problem(out, capsys):  # noqa: F811
    """Is a rubric for a check cell (the caption's, used only when its check cannot decide) accepted at start when no
    answer in OUT needs it, while one for an unknown written cell is refused?"""
    path = source(out) / rubrics.FILENAME
    path.write_text(
        path.read_text()
        + '\n[toy.test_mul]\nanswer = "a * b"\n[[toy.test_mul.items]]\nid = "p"\npoints = 2\ntext = "t"\n'
    )
    assert mark_server.main(out=out, source=source(out), status=True, browser=False) == 0
    path.write_text(
        path.read_text()
        + '\n[toy.written_gone]\nanswer = "x"\n[[toy.written_gone.items]]\nid = "a"\npoints = 1\ntext = "t"\n'
    )
    assert mark_server.main(out=out, source=source(out), status=True, browser=False) == 1
    assert "toy/written_gone: a rubric for a cell that is not a written answer" in capsys.readouterr().err
