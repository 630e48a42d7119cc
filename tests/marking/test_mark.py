"""python -m autograder mark without the browser: marks by rubric item in OUT/marks.jsonl, derived into the
gradebook (so grades.csv, feedback and the exports see them), CSV export and import, groups, retroactive
rubric edits."""

import csv
import functools
import io
import json
import shutil
import tempfile
import warnings
from pathlib import Path

import nbformat
import pytest

from autograder import contract, rubrics
from autograder.content import build
from autograder.gradebook import HandGrade, read_hand_grades
from autograder.marking import mark
from autograder.out import Out
from autograder.records import CellResult, NotebookResult, Results, StudentResult
from autograder.reports import feedback
from tests.fixtures import toy

RIGHT = "Adding counts the objects, and counting does not depend on order."
STUDENTS = {  # names students really have: Unicode, and two Moodle students called Anna Lee
    "Zoë Ñúñez": RIGHT,
    "李明": RIGHT,
    "Anna Lee~moodle11": "Because a + b = b + a.",
    "Anna Lee~moodle12": "YOUR ANSWER HERE",
}


def shard(template, student, blank):
    """The student's gradebook shard as the worker leaves it: tests passed, the written answer to grade (or
    blank: 0, nobody needs to grade it)."""
    from nbgrader.api import Gradebook

    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbgrader's own SQLAlchemy warnings on add_submission
        db = Path(tmp) / "gradebook.db"
        shutil.copy2(template / "gradebook.db", db)
        with Gradebook(f"sqlite:///{db}") as gb:
            gb.update_or_create_student(student)
            gb.add_submission(contract.ASSIGNMENT, student)
            for test, points in (("test_add", 1.0), ("test_mul", 2.0)):
                gb.find_grade(test, "toy", contract.ASSIGNMENT, student).auto_score = points
            written = gb.find_grade("written_toy", "toy", contract.ASSIGNMENT, student)
            written.needs_manual_grade = not blank
            written.auto_score = 0.0 if blank else None
            gb.db.commit()
        return db.read_bytes()


def graded_out(root, students):
    """An OUT under `root` with the toy course graded for `students` ({student: written answer}), recorded as the
    pipeline records a student."""
    template = build.template(root / "template", toy.TOY_SOURCE)
    release = nbformat.read(template / "release" / "toy.ipynb", as_version=4)
    results = Results(root / "out", template)
    for student, answer in students.items():
        blank = answer == mark.STUB
        summary = NotebookResult.graded(
            "toy", [CellResult("add", 1.0, 1, "passed"), CellResult("mul", 2.0, 2, "passed")], 3
        )
        summary.manual, summary.blank = {"written_toy": 1.0}, ["written_toy"] if blank else []
        pages = root / "out" / ".cache" / "pages" / student  # as render_pages leaves them
        pages.mkdir(parents=True)
        (pages / "toy.ipynb").write_text(nbformat.writes(toy.fill(release, dict(toy.RIGHT, written_toy=answer))))
        (pages / "toy.html").write_text("<html></html>")
        results.record(
            StudentResult(
                student,
                notebooks={"toy": summary},
                shard=shard(template, student, blank),
                pages=str(pages),
                submission={"submitted_as": student, "digest": "d", "source": "s"},
            )
        )
    return root / "out"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """An OUT with the toy course graded for STUDENTS, recorded as the pipeline records a student."""
    return graded_out(tmp_path_factory.mktemp("mark"), STUDENTS)


@pytest.fixture
def out(graded, tmp_path):
    """A fresh copy of the graded OUT and of the toy rubric (tests change both)."""
    copy = tmp_path / "out"
    shutil.copytree(graded, copy)
    (tmp_path / "source").mkdir()
    shutil.copy2(toy.TOY_SOURCE / rubrics.FILENAME, tmp_path / "source" / rubrics.FILENAME)
    return copy


def source(out):
    return out.parent / "source"


def run(out, **options):
    return mark.main(out=out, source=source(out), **options)


def write_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(mark.COLUMNS)
        writer.writerows(rows)
    return path


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def hand(out, student):
    return read_hand_grades(out / "gradebook.db")[(student, "toy")]["written_toy"]


def test_export_lists_every_answer_to_grade(out, tmp_path):
    """Does --export write one row per student x written cell, with empty items and adjustment before grading?"""
    assert run(out, export=tmp_path / "marks.csv") == 0
    rows = read_csv(tmp_path / "marks.csv")
    assert [r["student"] for r in rows] == sorted(STUDENTS)
    assert all(
        (r["notebook"], r["grade_id"], r["items"], r["adjustment"]) == ("toy", "written_toy", "", "") for r in rows
    )


def test_import_writes_score_and_comment_into_the_gradebook(out, tmp_path):
    """After --import, does the gradebook hold each answer's clamped score and the comment the student reads?"""
    write_csv(
        tmp_path / "in.csv",
        [
            ["Zoë Ñúñez", "toy", "written_toy", "counting;order", "", "Clear."],
            ["Anna Lee~moodle11", "toy", "written_toy", "circular", "", ""],
        ],
    )
    assert run(out, import_csv=tmp_path / "in.csv", grader="ta-ana") == 0
    assert hand(out, "Zoë Ñúñez") == HandGrade(
        1.0, "+0.5 Relates addition to counting.\n+0.5 Says the count does not depend on the order.\nClear."
    )
    assert hand(out, "Anna Lee~moodle11") == HandGrade(
        0.0, "-0.5 Restates the question (a + b = b + a) instead of explaining it."
    )
    assert hand(out, "李明").score is None


def test_export_and_import_round_trip(out, tmp_path):
    """Does an exported file, imported again, change nothing, and give back the same rows?"""
    rows = [
        ["李明", "toy", "written_toy", "counting", "0.25", 'Say "why", with sets; or an example.'],
        ["Anna Lee~moodle12", "toy", "written_toy", "", "0", ""],
    ]
    assert run(out, import_csv=write_csv(tmp_path / "in.csv", rows), grader="ta-ana") == 0
    assert run(out, export=tmp_path / "first.csv") == 0
    log = Out(out).marks.read_text()
    assert run(out, import_csv=tmp_path / "first.csv", grader="ta-ana") == 0
    assert Out(out).marks.read_text() == log
    assert run(out, export=tmp_path / "second.csv") == 0
    assert (tmp_path / "second.csv").read_text() == (tmp_path / "first.csv").read_text()
    got = {r["student"]: [r["items"], r["adjustment"], r["comment"]] for r in read_csv(tmp_path / "second.csv")}
    assert got["李明"] == ["counting", "0.25", 'Say "why", with sets; or an example.']
    assert got["Anna Lee~moodle12"] == ["", "0", ""]  # graded 0 on purpose, not left to grade
    assert got["Zoë Ñúñez"] == ["", "", ""]
    assert hand(out, "李明").score == 0.75


@pytest.mark.parametrize(
    "row, error",
    [
        (["Anna Lee", "toy", "written_toy", "counting", "", ""], "in.csv:3: unknown student 'Anna Lee'"),
        (["李明", "toy", "written_tyo", "counting", "", ""], "in.csv:3: unknown written cell toy/written_tyo"),
        (["李明", "toy", "written_toy", "counting;sets", "", ""], "in.csv:3: unknown item(s) sets for toy/written_toy"),
        (["李明", "toy", "written_toy", "counting", "half", ""], "in.csv:3: adjustment should be a number of points"),
        (["李明", "toy", "written_toy", "counting", "nan", ""], "in.csv:3: adjustment should be a number of points"),
        (
            ["Zoë Ñúñez", "toy", "written_toy", "order", "", ""],
            "in.csv:3: Zoë Ñúñez toy/written_toy again (first on line 2)",
        ),
        (
            ["Anna Lee~moodle12", "toy", "written_toy", "counting", "", ""],
            "in.csv:3: Anna Lee~moodle12's answer to toy/written_toy is blank and scores 0 by itself",
        ),
        (
            ["Anna Lee~moodle12", "toy", "written_toy", "", "0.5", ""],
            "in.csv:3: Anna Lee~moodle12's answer to toy/written_toy is blank and scores 0 by itself",
        ),
    ],
)
def test_import_checks_every_row_first_and_writes_nothing_on_an_error(out, tmp_path, capsys, row, error):
    """Does a bad row (unknown student, cell or item, an adjustment that is no number, a row twice, items or points
    on a blank answer) stop the import with one line naming the row, leaving the log and the gradebook as they
    were?"""
    path = write_csv(tmp_path / "in.csv", [["Zoë Ñúñez", "toy", "written_toy", "counting", "", ""], row])
    before = (out / "gradebook.db").read_bytes()
    assert run(out, import_csv=path) == 1
    err = capsys.readouterr().err
    assert "nothing imported, 1 row(s) to fix" in err and error in err
    assert not Out(out).marks.exists()
    assert (out / "gradebook.db").read_bytes() == before


def test_import_needs_the_columns(out, tmp_path, capsys):
    """Is a file without the expected columns refused in one line?"""
    (tmp_path / "in.csv").write_text("student,score\nZoë Ñúñez,1\n")
    assert run(out, import_csv=tmp_path / "in.csv") == 1
    assert "missing column(s) notebook, grade_id, items, adjustment, comment" in capsys.readouterr().err


def test_two_tas_files_merge(out, tmp_path, capsys):
    """Do two TAs' spreadsheets, each exported before the other's import, merge: each keeps the rows its TA
    filled in, and the log says who marked what?"""
    run(out, export=tmp_path / "blank.csv")
    rows = read_csv(tmp_path / "blank.csv")
    for name, student, items in (("a.csv", "Zoë Ñúñez", "counting;order"), ("b.csv", "李明", "counting")):
        filled = [[r[c] for c in mark.COLUMNS] for r in rows]
        for r in filled:
            if r[0] == student:
                r[3] = items
        write_csv(tmp_path / name, filled)
    assert run(out, import_csv=tmp_path / "a.csv", grader="ta-ana") == 0
    assert run(out, import_csv=tmp_path / "b.csv", grader="ta-ben") == 0
    assert (hand(out, "Zoë Ñúñez").score, hand(out, "李明").score) == (1.0, 0.5)
    log = [json.loads(line) for line in Out(out).marks.read_text().splitlines()]
    assert [(m["student"], m["grader"]) for m in log] == [("Zoë Ñúñez", "ta-ana"), ("李明", "ta-ben")]


def test_a_changed_item_changes_every_answer_that_has_it(out, tmp_path, capsys):
    """After an item's points and text change in rubrics.toml, does the next `mark` run re-score every answer
    that has it, and the comment the students read, with nothing to reopen?"""
    rows = [[s, "toy", "written_toy", "counting", "", ""] for s in ("Zoë Ñúñez", "李明")]
    run(out, import_csv=write_csv(tmp_path / "in.csv", rows), grader="ta-ana")
    path = source(out) / rubrics.FILENAME
    text = path.read_text().replace(
        'points = 0.5\ntext = "Relates addition to counting."', 'points = 0.75\ntext = "Relates adding to counting."'
    )
    path.write_text(text)
    capsys.readouterr()
    assert run(out, status=True) == 0
    assert "gradebook: 2 answer(s) updated" in capsys.readouterr().out
    for student in ("Zoë Ñúñez", "李明"):
        assert hand(out, student) == HandGrade(0.75, "+0.75 Relates adding to counting.")
    rows = {r["student"]: r for r in read_csv(out / "grades.csv")}
    assert rows["李明"]["written_score"] == "0.75"


def test_a_removed_item_sends_its_answers_back_to_grade(out, tmp_path, capsys):
    """When an applied item leaves the rubric, is each answer that had it named on the console and to grade
    again (no score in the gradebook), never silently 0, while the others keep their marks?"""
    rows = [
        ["Zoë Ñúñez", "toy", "written_toy", "counting;order", "", ""],
        ["李明", "toy", "written_toy", "order", "", ""],
    ]
    run(out, import_csv=write_csv(tmp_path / "in.csv", rows), grader="ta-ana")
    path = source(out) / rubrics.FILENAME
    path.write_text(path.read_text().replace('id = "counting"', 'id = "counts"'))
    capsys.readouterr()
    assert run(out, status=True) == 0
    said = capsys.readouterr().out
    assert (
        "to grade again: Zoë Ñúñez toy/written_toy: item(s) 'counting' no longer in the rubric (was marked by ta-ana)"
        in said
    )
    assert hand(out, "Zoë Ñúñez") == HandGrade(None, "")
    assert hand(out, "李明").score == 0.5
    assert "written_toy" in {r["student"]: r for r in read_csv(out / "grades.csv")}["Zoë Ñúñez"]["ungraded"]
    run(out, export=tmp_path / "now.csv")
    assert {r["student"]: r["items"] for r in read_csv(tmp_path / "now.csv")}["Zoë Ñúñez"] == ""
    capsys.readouterr()
    run(out, status=True)
    assert "to grade again" not in capsys.readouterr().out  # named once; a TA may grade it anywhere since


def test_an_answer_that_changed_since_it_was_marked_is_to_grade(out, tmp_path, capsys):
    """When a re-grade brings a different answer, is its old mark cleared and named instead of applied to the
    new text?"""
    run(out, import_csv=write_csv(tmp_path / "in.csv", [["李明", "toy", "written_toy", "counting;order", "", ""]]))
    path = Results(out).autograded_path("李明", "toy")
    path.write_text(path.read_text().replace("counting does not depend", "counting never depends"))
    capsys.readouterr()
    run(out, status=True)
    assert "to grade again: 李明 toy/written_toy: the answer changed since it was marked" in capsys.readouterr().out
    assert hand(out, "李明").score is None


def test_marks_reach_grades_csv_and_the_feedback_page(out, tmp_path):
    """After `mark --import` and `feedback`, do grades.csv and the student's page show the rubric score, the
    items' texts and the TA's comment, with the total no longer provisional?"""
    rows = [["Zoë Ñúñez", "toy", "written_toy", "counting;order", "-0.25", "Name the sets."]]
    run(out, import_csv=write_csv(tmp_path / "in.csv", rows), grader="ta-ana")
    assert feedback.main(out=out) == 0
    row = {r["student"]: r for r in read_csv(out / "grades.csv")}["Zoë Ñúñez"]
    assert (row["written_score"], row["written_max_score"], row["ungraded"]) == ("0.75", "1", "")
    page = (out / "feedback" / "Zoë Ñúñez" / "toy.html").read_text()
    assert "0.75 / 1" in page and "Relates addition to counting." in page and "Name the sets." in page
    assert "Also accept" not in page  # the TA-only note


MODEL = "Adding counts objects, and counting does not depend on the order in which they are counted."


def model_answers_page(out, tmp_path, option):
    """Zoë's page after a mark and a re-render, with OUT's course file saying `option` under [release] (None: a
    course file without the section)."""
    from tests.fixtures import term as term_fixture

    rows = [["Zoë Ñúñez", "toy", "written_toy", "counting", "", "Name the sets."]]
    run(out, import_csv=write_csv(tmp_path / "in.csv", rows), grader="ta-ana")
    release = "" if option is None else f"\n[release]\nmodel_answers = {option}\n"
    (out / "term").mkdir(exist_ok=True)
    (out / "term" / "course.toml").write_text(term_fixture.COURSE + release)
    feedback.rerender(out, source=source(out))
    return (out / "feedback" / "Zoë Ñúñez" / "toy.html").read_text()


def test_model_answer_is_not_on_the_page_by_default(out, tmp_path):
    """Without [release] model_answers, does the student's page show the marks but never the model answer?"""
    for option in (None, "false"):
        page = model_answers_page(out, tmp_path, option)
        assert "Relates addition to counting." in page and MODEL not in page and "Model answer" not in page


def test_model_answer_is_under_the_marks_with_the_course_option(out, tmp_path):
    """With [release] model_answers = true, does each written answer's page show, under the student's answer, the
    rubric items applied (with their points), the TA's comment, then the model answer?"""
    page = model_answers_page(out, tmp_path, "true")
    answer, items, comment = page.index(RIGHT), page.rindex("+0.5 Relates"), page.rindex("Name the")  # (also on top)
    assert answer < items < comment < page.index("Model answer for") < page.index(MODEL)
    blank = (out / "feedback" / "Anna Lee~moodle12" / "toy.html").read_text()
    assert MODEL in blank and "Marks on" not in blank  # a blank answer has no marks, still the model answer


def test_pages_of_other_notebooks_are_not_rendered_again(out):
    """When only some notebooks' marks changed, does re-rendering with `notebooks` leave the others' pages as they
    were (the grading page refreshes only what a mark changed)?"""
    page = out / "feedback" / "李明" / "toy.html"
    assert feedback.rerender(out, students={"李明"}, notebooks={"nmt"}) == 0
    assert page.read_text() == "<html></html>"
    assert feedback.rerender(out, students={"李明"}, notebooks={"toy"}) == 1
    assert page.read_text() != "<html></html>"


def test_rubric_prints_the_items(out, capsys):
    """Does --rubric print the question's items as CSV item,points,text?"""
    assert run(out, rubric="toy/written_toy") == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["item", "points", "text"]
    assert rows[1:] == [
        ["counting", "0.5", "Relates addition to counting."],
        ["order", "0.5", "Says the count does not depend on the order."],
        ["circular", "-0.5", "Restates the question (a + b = b + a) instead of explaining it."],
    ]


def test_groups_writes_who_goes_with_whom(out, tmp_path):
    """Does --groups -o FILE write student,group,size with identical answers in one group and blank ones in
    another?"""
    assert run(out, groups="toy/written_toy", output=tmp_path / "g.csv", encoder="tfidf") == 0
    rows = {r["student"]: (r["group"], r["size"]) for r in read_csv(tmp_path / "g.csv")}
    assert rows["Zoë Ñúñez"] == rows["李明"] == ("g1-identical", "2")
    assert rows["Anna Lee~moodle12"] == ("blank", "1")
    assert rows["Anna Lee~moodle11"][1] == "1"


@pytest.mark.parametrize("option", ["groups", "rubric"])
def test_an_unknown_question_is_one_line(out, capsys, option):
    """Does --groups or --rubric with a cell that has no rubric say so in one line, naming the known ones?"""
    assert run(out, **{option: "toy/written_tyo"}) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown written cell 'toy/written_tyo'" in err and "toy/written_toy" in err


def test_a_log_line_cut_short_is_moved_aside_and_never_eats_the_next_mark(out, tmp_path, capsys):
    """When a killed process left half a line at the end of the log, are the marks before it kept, the cut line
    moved aside with one console line, and the mark written next kept whole?"""
    run(out, import_csv=write_csv(tmp_path / "in.csv", [["李明", "toy", "written_toy", "order", "", ""]]))
    with open(Out(out).marks, "a") as f:
        f.write('{"student": "Zoë Ñúñez", "items": ["cou')
    capsys.readouterr()
    assert (
        run(out, import_csv=write_csv(tmp_path / "in2.csv", [["Zoë Ñúñez", "toy", "written_toy", "order", "", ""]]))
        == 0
    )
    said = capsys.readouterr().out
    assert said.count("a last line cut short") == 1 and "moved to marks.jsonl.torn" in said
    assert (out / "marks.jsonl.torn").read_text() == '{"student": "Zoë Ñúñez", "items": ["cou\n'
    assert hand(out, "李明").score == 0.5 and hand(out, "Zoë Ñúñez").score == 0.5
    assert all(line.endswith("}") for line in Out(out).marks.read_text().splitlines())


def test_a_hand_edited_log_line_is_named_with_its_number(out, tmp_path, capsys):
    """Is a log line that is whole but not a mark (a NaN adjustment edited in) skipped and named by its number?"""
    run(out, import_csv=write_csv(tmp_path / "in.csv", [["李明", "toy", "written_toy", "order", "", ""]]))
    line = Out(out).marks.read_text().splitlines()[0].replace('"adjustment": 0.0', '"adjustment": NaN')
    with open(Out(out).marks, "a") as f:
        f.write(line.replace("李明", "Zoë Ñúñez") + "\n")
    capsys.readouterr()
    assert run(out, status=True) == 0
    said = capsys.readouterr().out
    assert f"{Out(out).marks}:2: skipped, not a mark (NaN is not a number of points)" in said
    assert hand(out, "李明").score == 0.5 and hand(out, "Zoë Ñúñez").score is None


def test_the_summary_counts_what_is_left(out, tmp_path, capsys):
    """Does `mark OUT --status` say, per question, how many answers are graded, blank and still to grade?"""
    run(out, import_csv=write_csv(tmp_path / "in.csv", [["李明", "toy", "written_toy", "order", "", ""]]))
    capsys.readouterr()
    assert run(out, status=True) == 0
    assert "toy/written_toy: 1 of 4 graded, 1 blank (0), 2 to grade" in capsys.readouterr().out


def test_mark_alone_serves_the_page(out, monkeypatch):
    """Does `mark OUT` with no other option serve the grading page (after bringing the gradebook up to date),
    while --status, --export, --import and --regrades run without it unless --serve is given too?"""
    from autograder.marking import server as mark_server

    served = []
    monkeypatch.setattr(
        mark_server, "serve_page", lambda marking, port, browser, allow=(): served.append((marking.out.root, port)) or 0
    )
    command = functools.partial(mark_server.main, out=out, source=source(out), encoder="tfidf")
    assert command(port=9001) == 0
    assert served == [(out, 9001)]
    assert command(status=True) == 0 and command(export=out / "e.csv") == 0
    assert len(served) == 1
    assert command(export=out / "e.csv", serve=True) == 0
    assert len(served) == 2


def test_mark_needs_a_graded_out(tmp_path, capsys):
    """Is `mark` on a folder that was never graded one line saying to grade first?"""
    assert mark.main(out=tmp_path) == 1
    assert "gradebook.db not found: grade first" in capsys.readouterr().err


@pytest.mark.slow
def test_marks_on_a_real_grading_run_reach_grades_csv(tmp_path_factory, capsys):
    """Through the real pipeline: students graded, marked by CSV, then `feedback`: does grades.csv carry the
    rubric scores, and does the mark survive a grade --force of the unchanged answers?"""
    from autograder.grading import pipeline

    root = tmp_path_factory.mktemp("mark-real")
    rel = toy.release(tmp_path_factory.getbasetemp())
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    students = {name: toy.fill(nb, dict(toy.RIGHT, written_toy=text)) for name, text in STUDENTS.items()}
    subs = toy.write_students(root / "subs", rel, {"Zoë Ñúñez": students["Zoë Ñúñez"], "李明": students["李明"]})
    out = root / "out"
    kwargs = dict(workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    pipeline.grade(subs, out, **kwargs)
    rows = [
        ["Zoë Ñúñez", "toy", "written_toy", "counting;order", "", ""],
        ["李明", "toy", "written_toy", "order", "", ""],
    ]
    assert mark.main(out=out, import_csv=write_csv(root / "in.csv", rows), grader="ta-ana", source=toy.TOY_SOURCE) == 0
    pipeline.grade(subs, out, force=True, **kwargs)
    assert feedback.main(out=out) == 0
    got = {r["student"]: (r["written_score"], r["ungraded"]) for r in read_csv(out / "grades.csv")}
    assert got == {"Zoë Ñúñez": ("1", ""), "李明": ("0.5", "")}
    capsys.readouterr()
    assert mark.main(out=out, source=toy.TOY_SOURCE, status=True) == 0
    assert "to grade again" not in capsys.readouterr().out


def test_a_cell_its_check_could_not_decide_is_marked_by_rubric(out, tmp_path):
    """When a check could not decide a cell (as the CLIP caption without its weights), is that cell's answer listed,
    marked by its own rubric and counted in the notebook's score, its comment on the solution cell?"""
    import sqlite3

    state_path = out / ".state" / "李明.json"
    state = json.loads(state_path.read_text())
    toy_nb = state["notebooks"]["toy"]
    toy_nb["cells"][1].update(score=None, note="needs manual grading")
    toy_nb.update(score=1.0, status="needs manual grading: mul")
    state_path.write_text(json.dumps(state))
    with sqlite3.connect(out / "gradebook.db") as con:
        con.execute(
            "UPDATE grade SET auto_score = NULL, needs_manual_grade = 1 WHERE id = (SELECT g.id FROM grade g "
            "JOIN base_cell bc ON g.cell_id = bc.id JOIN submitted_notebook snb ON g.notebook_id = snb.id "
            "JOIN submitted_assignment sa ON snb.assignment_id = sa.id WHERE bc.name = 'test_mul' AND sa.student_id = '李明')"
        )
    with open(source(out) / rubrics.FILENAME, "a") as f:
        f.write(
            '\n[toy.test_mul]\nanswer = "return a * b"\n\n[[toy.test_mul.items]]\nid = "product"\npoints = 2\n'
            'text = "Returns the product, sign included."\n'
        )
    assert run(out, export=tmp_path / "all.csv") == 0
    assert [r["student"] for r in read_csv(tmp_path / "all.csv") if r["grade_id"] == "test_mul"] == ["李明"]
    rows = [["李明", "toy", "test_mul", "product", "", "Checked by hand: 2 * -3 = -6."]]
    assert run(out, import_csv=write_csv(tmp_path / "in.csv", rows)) == 0
    entered = read_hand_grades(out / "gradebook.db")[("李明", "toy")]
    assert entered["test_mul"].score == 2.0
    with sqlite3.connect(out / "gradebook.db") as con:
        (comment,) = con.execute(
            "SELECT c.manual_comment FROM comment c JOIN base_cell bc ON c.cell_id = bc.id JOIN submitted_notebook snb "
            "ON c.notebook_id = snb.id JOIN submitted_assignment sa ON snb.assignment_id = sa.id "
            "WHERE bc.name = 'mul' AND sa.student_id = '李明'"
        ).fetchone()
    assert comment == "+2 Returns the product, sign included.\nChecked by hand: 2 * -3 = -6."
    row = {r["student"]: r for r in read_csv(out / "grades.csv")}["李明"]
    assert (row["score"], row["status"], row["ungraded"]) == ("3", "graded", "written_toy")
    assert entered["test_mul"].comment == comment  # read back for the pages from the solution cell


def test_a_hand_graded_check_cells_items_and_comment_reach_the_students_page(out, tmp_path):
    """Once a TA marked a cell its check could not decide (the CLIP caption), does the student's page show the
    rubric items applied and the comment there, as for a written answer?"""
    test_a_cell_its_check_could_not_decide_is_marked_by_rubric(out, tmp_path)
    feedback.rerender(out, students={"李明"}, source=source(out))
    page = (out / "feedback" / "李明" / "toy.html").read_text()
    assert page.count("Returns the product, sign included.") == 2  # the summary's table and under the cell
    assert page.count("Checked by hand: 2 * -3 = -6.") == 2


def test_a_double_marking_sample_is_exported_blind(out, tmp_path, capsys):
    """Does --export --double 50% write, per question, half of the answers that are not blank (the same ones every
    time), without the first grader's marks?"""
    rows = [[s, "toy", "written_toy", "counting", "", ""] for s in ("Zoë Ñúñez", "李明", "Anna Lee~moodle11")]
    run(out, import_csv=write_csv(tmp_path / "a.csv", rows), grader="ta-ana")
    assert run(out, export=tmp_path / "s1.csv", double="50%") == 0
    assert run(out, export=tmp_path / "s2.csv", double="0.5") == 0
    sample = read_csv(tmp_path / "s1.csv")
    assert len(sample) == 2 and (tmp_path / "s1.csv").read_text() == (tmp_path / "s2.csv").read_text()
    assert all(r["student"] != "Anna Lee~moodle12" and r["items"] == "" for r in sample)


def test_second_marks_give_agreement_and_leave_the_grade(out, tmp_path, capsys):
    """When a second grader marks the same answers (--import --second), is the grade still the first grader's, and
    does `mark OUT` print Cohen's kappa on the items and the mean score difference for the question?"""
    first = [
        ["Zoë Ñúñez", "toy", "written_toy", "counting;order", "", ""],
        ["李明", "toy", "written_toy", "counting", "", ""],
        ["Anna Lee~moodle11", "toy", "written_toy", "circular", "", ""],
    ]
    second = [
        ["Zoë Ñúñez", "toy", "written_toy", "counting;order", "", ""],
        ["李明", "toy", "written_toy", "counting;order", "", ""],
        ["Anna Lee~moodle11", "toy", "written_toy", "circular", "", ""],
    ]
    run(out, import_csv=write_csv(tmp_path / "a.csv", first), grader="ta-ana")
    assert run(out, import_csv=write_csv(tmp_path / "b.csv", second), grader="ta-ben", second=True) == 0
    assert hand(out, "李明").score == 0.5
    capsys.readouterr()
    assert run(out, status=True) == 0
    # 9 decisions (3 answers x 3 items), 8 agree; ana says yes 4 times, ben 5: chance 4/9 * 5/9 + 5/9 * 4/9
    chance = 40 / 81
    kappa = (8 / 9 - chance) / (1 - chance)
    said = capsys.readouterr().out
    assert (
        f"toy/written_toy: agreement on 3 double-marked answer(s): Cohen's kappa on the items {kappa:.2f}, "
        "mean |score difference| 0.17" in said
    )


def test_double_needs_a_share_and_export(out, capsys):
    """Is --double without --export or --second, or with a share that is not one, refused in one line?"""
    assert run(out, double="10%") == 1
    assert run(out, export=out / "x.csv", double="lots") == 1
    assert (
        capsys.readouterr().err.count("--double takes a share of the answers with --export or --second, e.g. 10%") == 2
    )


def test_regrade_requests_are_checked_then_queued(out, tmp_path, capsys):
    """Does --regrades queue each request with the score it was asked about, list the open ones in `mark OUT`, and
    refuse a file with an unknown answer or no reason, queueing nothing?"""
    run(out, import_csv=write_csv(tmp_path / "in.csv", [["李明", "toy", "written_toy", "order", "", ""]]))
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "student,notebook,grade_id,reason\n李明,toy,written_toy,I named the sets.\nAnna Lee,toy,written_toy,x\n李明,toy,written_tyo,\n"
    )
    assert run(out, regrades=bad) == 1
    err = capsys.readouterr().err
    assert (
        "bad.csv:3: no graded answer of 'Anna Lee' to toy/written_toy" in err and "bad.csv:4: no graded answer" in err
    )
    assert not Out(out).regrades.exists()
    good = tmp_path / "good.csv"
    good.write_text("student,notebook,grade_id,reason\n李明,toy,written_toy,I named the sets.\n")
    assert run(out, regrades=good, grader="head-ta") == 0
    assert run(out, regrades=good, grader="head-ta") == 0
    assert "queued 0 regrade request(s)" in capsys.readouterr().out
    (entry,) = [json.loads(line) for line in Out(out).regrades.read_text().splitlines()]
    assert (entry["status"], entry["score"], entry["reason"], entry["by"]) == (
        "open",
        0.5,
        "I named the sets.",
        "head-ta",
    )
    run(out, status=True)
    assert "regrade requested: 李明 toy/written_toy: I named the sets." in capsys.readouterr().out


def test_a_huge_answer_is_cut_in_the_export_and_the_file_imports_back(tmp_path):
    """With one answer of a million characters in the class, is its exported text cut (saying so) so that the whole
    export, untouched or filled in, imports back?"""
    folder = graded_out(tmp_path / "huge", dict(STUDENTS, huge="why " * 260_000))
    shutil.copytree(toy.TOY_SOURCE, tmp_path / "huge" / "source", dirs_exist_ok=True)
    kwargs = {"source": tmp_path / "huge" / "source", "encoder": "tfidf"}
    assert mark.main(out=folder, export=tmp_path / "all.csv", **kwargs) == 0
    rows = read_csv(tmp_path / "all.csv")
    cut = next(r["answer"] for r in rows if r["student"] == "huge")
    assert len(cut) < mark.EXPORT_ANSWER + 100 and "[cut: 1,040,000 characters in all" in cut
    assert mark.main(out=folder, import_csv=tmp_path / "all.csv", **kwargs) == 0  # untouched
    with open(tmp_path / "in.csv", "w", newline="", encoding="utf-8") as f:  # filled in, every column kept
        writer = csv.DictWriter(f, mark.COLUMNS + mark.EXPORT_ONLY)
        writer.writeheader()
        writer.writerows(dict(r, items="counting") if r["student"] == "李明" else r for r in rows)
    assert mark.main(out=folder, import_csv=tmp_path / "in.csv", **kwargs) == 0
    assert hand(folder, "李明").score == 0.5


def test_an_ampersand_reads_as_typed_and_the_mark_holds(tmp_path):
    """OUT keeps a written answer reader-safe, a bare & as &amp;: does the TA's export (and the page, and the groups)
    read the & the student typed, while a mark made on that answer stays attached to it?"""
    folder = graded_out(tmp_path / "amp", {"ann": "loss falls when N &amp; D grow together"})
    shutil.copytree(toy.TOY_SOURCE, tmp_path / "amp" / "source", dirs_exist_ok=True)
    kwargs = {"source": tmp_path / "amp" / "source", "encoder": "tfidf"}
    assert mark.main(out=folder, export=tmp_path / "all.csv", **kwargs) == 0
    (row,) = read_csv(tmp_path / "all.csv")
    assert row["answer"] == "loss falls when N & D grow together"
    assert (
        mark.main(
            out=folder,
            import_csv=write_csv(tmp_path / "in.csv", [["ann", "toy", "written_toy", "order", "", ""]]),
            **kwargs,
        )
        == 0
    )
    assert mark.main(out=folder, status=True, **kwargs) == 0
    assert hand(folder, "ann").score == 0.5
    answers = mark.collect(folder)
    assert answers[("ann", "toy", "written_toy")].typed == "loss falls when N & D grow together"


def test_an_edit_of_rubrics_toml_itself_is_logged_once(out, capsys):
    """When an item's text is changed in rubrics.toml with an editor, does the next `mark` log it in
    OUT/rubric_edits.jsonl (the item before and after, as edited outside the page), and the run after it nothing
    more; and is an item added or removed logged with nothing on the other side?"""
    assert run(out, status=True) == 0  # mark's first look at the rubric: nothing to compare with yet
    assert mark.read_rubric_edits(out) == []
    path = source(out) / rubrics.FILENAME
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("Relates addition to counting.", "Says that adding is counting."), encoding="utf-8")
    assert run(out, status=True) == 0 and run(out, status=True) == 0
    (edit,) = mark.read_rubric_edits(out)
    assert (edit["by"], edit["item"], edit["before"]["text"], edit["after"]["text"]) == (
        mark.OUTSIDE,
        "counting",
        "Relates addition to counting.",
        "Says that adding is counting.",
    )
    cut = path.read_text(encoding="utf-8").split("[[toy.written_toy.items]]")
    path.write_text("[[toy.written_toy.items]]".join(cut[:-1]), encoding="utf-8")  # the deduction `circular` gone
    assert run(out, status=True) == 0
    gone = mark.read_rubric_edits(out)[-1]
    assert (gone["item"], gone["before"]["points"], gone["after"]) == ("circular", -0.5, None)


def test_an_import_renders_the_pages_it_changed(out, capsys):
    """After --import, does the student's feedback page already show the new mark (no `feedback OUT` needed), with
    nothing left noted for the page to redo?"""
    from autograder.marking import pages

    rows = [["李明", "toy", "written_toy", "counting", "", "Say why."]]
    assert run(out, import_csv=write_csv(out.parent / "in.csv", rows)) == 0
    assert "feedback: 1 student page(s) rendered again with the marks" in capsys.readouterr().out
    page = (out / "feedback" / "李明" / "toy.html").read_text(encoding="utf-8")
    assert "Say why." in page and "Relates addition to counting." in page
    assert not pages.pending(out)
