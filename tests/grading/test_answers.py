"""Answers typed into cells added below an untouched answer cell, as Colab notebooks come back (grading/answers.py):
found at ingest, a written one taken into its answer cell, each flagged for the TA, never a silent 0."""

import json

import nbformat
import pytest

from autograder import paths
from autograder.grading import answers, ingest
from autograder.grading.ingest import Submission
from autograder.grading.worker import Task, _record_notebook
from autograder.records import Results, StudentResult
from autograder.reports import feedback
from tests.corpus import make_corpus as mc

STUB = "YOUR ANSWER HERE"


@pytest.fixture(scope="module")
def rel():
    return nbformat.read(paths.RELEASE / "theory.ipynb", as_version=4)


@pytest.fixture(scope="module")
def src():
    return nbformat.read(paths.SOURCE / "theory.ipynb", as_version=4)


def colab_cell(kind, text, n):
    """A cell added in Colab ("+ Text" or "+ Code"): no nbgrader metadata, Colab's own id in its metadata."""
    cell = nbformat.v4.new_markdown_cell(text) if kind == "markdown" else nbformat.v4.new_code_cell(text)
    cell.metadata = {"id": f"added{n:04d}"}
    return cell


def colab(rel, src, added=(), stubs=()):
    """A Colab download of theory: every answer filled in but `stubs` (back to the release), Colab's metadata, and
    cells added after the cells named in `added` ({after grade id: (kind, text)})."""
    nb = mc.solved(rel, src)
    for gid in stubs:
        nb.cells[mc.index_of(nb, gid)].source = rel.cells[mc.index_of(rel, gid)].source
    mc.colabify(nb)
    for n, (after, (kind, text)) in enumerate(added):
        nb.cells.insert(mc.index_of(nb, after) + 1, colab_cell(kind, text, n))
    return nb


def ingested(tmp_path, nb):
    """The theory Submission of one student who submitted `nb` as Colab names it, and the staged notebook."""
    mc.write(nb, tmp_path / "subs" / "ann" / "Copy of theory.ipynb")
    subs = ingest.ingest(tmp_path / "subs", tmp_path / "staging", release=paths.RELEASE)
    (sub,) = [s for s in subs if s.notebook == "theory"]
    staged = json.loads(sub.path.read_text())
    return sub, {mc.gid(c): c for c in staged["cells"] if mc.gid(c)}


def test_a_markdown_answer_below_the_stub_becomes_the_answer(tmp_path, rel, src):
    """Does a Colab text cell added below the untouched written stub become that answer's text, flagged for the TA
    as an answer found in an added cell?"""
    added = [("written_fgsm_bound", ("markdown", "They are equal when every $|w_i|$ is the same."))]
    sub, cells = ingested(tmp_path, colab(rel, src, added, stubs=["written_fgsm_bound"]))
    assert cells["written_fgsm_bound"]["source"] == "They are equal when every $|w_i|$ is the same."
    assert sub.flags == ["written_fgsm_bound (T1): answer found in an added cell"]


def test_the_student_reads_a_neutral_line(tmp_path, rel, src):
    """Is the answer taken from an added cell told to the student as one neutral repair line naming the question?"""
    added = [("written_fgsm_bound", ("markdown", "Equal when all |w_i| are."))]
    sub, _ = ingested(tmp_path, colab(rel, src, added, stubs=["written_fgsm_bound"]))
    assert "your answer to T1 was taken from the cell you added below the question" in sub.repairs


def test_a_code_cell_below_a_written_stub_is_the_answer_fenced(tmp_path, rel, src):
    """Does a Colab code cell (the "+ Code" button) typed below an untouched written stub become its answer, as a code
    block, with the text cells after it?"""
    added = [
        ("written_scaling", ("markdown", "and so C is the compute-optimal choice.")),
        ("written_scaling", ("code", "# B: more tokens per parameter")),
    ]
    sub, cells = ingested(tmp_path, colab(rel, src, added, stubs=["written_scaling"]))
    assert cells["written_scaling"]["source"] == (
        "```\n# B: more tokens per parameter\n```\n\nand so C is the compute-optimal choice."
    )
    assert sub.flags == ["written_scaling (T6): answer found in an added cell"]


def test_graded_code_below_its_untouched_cell_is_flagged_not_moved(tmp_path, rel, src):
    """Is a graded function left as released, with the student's code in a Colab cell added below its test cell,
    flagged for the TA while its answer cell stays as released (its score stays its test's)?"""
    code = mc.strip_markers(src.cells[mc.index_of(src, "logit_after_fgsm")].source)
    added = [("test_logit_after_fgsm", ("code", code))]
    sub, cells = ingested(tmp_path, colab(rel, src, added, stubs=["logit_after_fgsm"]))
    assert sub.flags == [f"logit_after_fgsm: {answers.CODE_FLAG}"]
    assert cells["logit_after_fgsm"]["source"] == rel.cells[mc.index_of(rel, "logit_after_fgsm")].source
    assert not any(line.startswith("your answer") for line in sub.repairs)


def test_an_answered_cell_with_cells_added_below_is_not_flagged(tmp_path, rel, src):
    """Are cells a student added below answer cells they did fill in (scratch work, notes) left alone, unflagged?"""
    added = [("written_fgsm_bound", ("markdown", "scratch: check d = 2")), ("logit_after_fgsm", ("code", "x = 1"))]
    sub, cells = ingested(tmp_path, colab(rel, src, added))
    assert (
        sub.flags == []
        and cells["written_fgsm_bound"]["source"] == "My answer: the model attends to the right characters."
    )


def test_a_stub_with_nothing_added_stays_blank(tmp_path, rel, src):
    """Does a written stub with no added cell below it stay the stub (blank, scored 0 by itself), unflagged?"""
    sub, cells = ingested(tmp_path, colab(rel, src, stubs=["written_fgsm_bound"]))
    assert sub.flags == [] and cells["written_fgsm_bound"]["source"] == STUB


def test_text_past_the_next_released_cell_is_not_taken(tmp_path, rel, src):
    """Is a cell added below the *next* released cell (a heading after the answer) left out of the answer above?"""
    after = mc.index_of(rel, "written_fgsm_bound") + 1  # the released markdown cell after T1's answer
    assert not mc.gid(rel.cells[after]) and rel.cells[after].cell_type == "markdown"
    nb = colab(rel, src, stubs=["written_fgsm_bound"])
    nb.cells.insert(mc.index_of(nb, "written_fgsm_bound") + 2, colab_cell("markdown", "notes on 1.1.2", 9))
    sub, cells = ingested(tmp_path, nb)
    assert sub.flags == [] and cells["written_fgsm_bound"]["source"] == STUB


def test_empty_added_cells_are_passed_over(tmp_path, rel, src):
    """Does an empty cell added between the stub and the student's text not hide the text below it?"""
    added = [("written_fgsm_bound", ("markdown", "Equal when all |w_i| are.")), ("written_fgsm_bound", ("code", ""))]
    sub, cells = ingested(tmp_path, colab(rel, src, added, stubs=["written_fgsm_bound"]))
    assert cells["written_fgsm_bound"]["source"] == "Equal when all |w_i| are." and len(sub.flags) == 1


def test_the_flag_reaches_the_log_the_csv_and_the_index(tmp_path):
    """Does a notebook's flag reach grading.log (a FLAG line), grades.csv's flags column and the TA's index, and stay
    off the student's page?"""
    flag = "written_fgsm_bound (T1): answer found in an added cell"
    sub = Submission(
        "ann", "theory", None, "ok", ["your answer to T1 was taken from the cell you added below the question"]
    )
    sub.flags = [flag]
    result = StudentResult("ann")
    layout = {"theory": {"tests": {"test_logit_after_fgsm": 1.0}, "manual": {"written_fgsm_bound": 1.0}}}
    task = Task("ann", [sub], str(tmp_path), str(tmp_path))
    _record_notebook(result, task, "theory", sub, layout, {})
    results = Results(tmp_path / "out")
    results.record(result)
    results.write_csvs()
    assert f"FLAG ann/theory: {flag}" in (tmp_path / "out" / "grading.log").read_text()
    (row,) = list(__import__("csv").DictReader(open(tmp_path / "out" / "grades.csv")))
    assert row["flags"] == flag
    index = feedback.index_html(tmp_path / "out")
    assert "Flagged for a look (1)" in index and flag in index
    page = feedback.summary_markdown(feedback.Page.of(result.notebooks["theory"], "ann"))
    assert "answer found in an added cell" not in page and "taken from the cell you added below" in page


def test_the_students_own_run_is_read_before_repair(rel, src):
    """Does own_run read, from the outputs the student's notebook kept, which test cells passed and which failed on
    their run, leaving out cells never run?"""
    nb = mc.solved(rel, src)
    tests = [c for c in nb.cells if c.cell_type == "code" and (mc.gid(c) or "").startswith("test_")]
    tests[0].execution_count, tests[0].outputs = 3, []
    tests[1].execution_count = 4
    tests[1].outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="x", traceback=[])]
    for cell in tests[2:]:
        cell.execution_count = None
    assert answers.own_run(nb) == {mc.gid(tests[0]): "passed", mc.gid(tests[1]): "failed"}


@pytest.mark.parametrize(
    "own, score, note, flagged",
    [
        ("passed", 0.0, "AssertionError: shape (2, 3) expected (3, 2)", "passed on the student's own run, failed"),
        ("passed", 0.0, "timed out after 60 s", "passed on the student's own run, failed"),
        ("passed", 0.0, "AssertionError: logit_after_fgsm: off by 0.5", None),  # the hidden check: never run by them
        ("failed", 1.0, "passed", "failed on the student's own run, passed"),
        ("passed", 1.0, "passed", None),
        ("failed", 0.0, "AssertionError: x", None),
        (None, 0.0, "AssertionError: x", None),
    ],
)
def test_runs_that_disagree_are_flagged_for_the_ta(own, score, note, flagged):
    """Is a test cell flagged when the student's run and the grader's disagree on its visible checks, and not when
    they agree, when the hidden check alone failed, or when the student never ran it?"""
    from autograder.records import CellResult

    cell = CellResult("logit_after_fgsm", score, 1.0, note)
    got = answers.runs_disagree({} if own is None else {"test_logit_after_fgsm": own}, [cell])
    if flagged is None:
        assert got == []
    else:
        (line,) = got
        assert line.startswith("test_logit_after_fgsm: " + flagged)


def test_a_disagreeing_run_reaches_the_log_and_csv_not_the_page(tmp_path):
    """Does the grader record a runs-disagree flag in grading.log and grades.csv, and keep it off the student's
    page?"""
    from autograder.records import CellResult, NotebookResult

    sub = Submission("ann", "theory", None, "ok", [])
    sub.own_run = {"test_logit_after_fgsm": "passed"}
    summary = NotebookResult.graded("theory", [CellResult("logit_after_fgsm", 0.0, 1.0, "AssertionError: got 1")], 1)
    result = StudentResult("ann")
    layout = {"theory": {"tests": {"test_logit_after_fgsm": 1.0}, "manual": {}}}
    _record_notebook(result, Task("ann", [sub], str(tmp_path), str(tmp_path)), "theory", sub, layout,
                     {"theory": (summary, None)})  # fmt: skip
    results = Results(tmp_path / "out")
    results.record(result)
    results.write_csvs()
    log = (tmp_path / "out" / "grading.log").read_text()
    assert "FLAG ann/theory: test_logit_after_fgsm: passed on the student's own run, failed on the grader's" in log
    (row,) = list(__import__("csv").DictReader(open(tmp_path / "out" / "grades.csv")))
    assert "passed on the student's own run" in row["flags"]
    page = feedback.summary_markdown(feedback.Page.of(result.notebooks["theory"], "ann"))
    assert "own run" not in page
