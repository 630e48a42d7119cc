"""`python -m autograder check`: what a grader would meet in a notebook, said before it is submitted, with the rules
ingest grades by (grading/check.py, grading/answers.py)."""

import copy
import json
import re
import time

import nbformat
import pytest

from autograder import cli, paths
from autograder.grading import check, ingest
from tests.corpus import make_corpus as mc

NOTEBOOKS = ("nmt", "bert", "clip", "theory")


def ran(nb):
    """The notebook as saved after a run: every code cell with an execution count and an output."""
    for n, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        cell.execution_count = n + 1
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ok\n")]
    return nb


def ready(releases, sources, name="theory"):
    """A notebook a student may submit: every answer filled in (the reference solution), run."""
    return ran(mc.solved(releases[name], sources[name]))


def written_stub(nb, grade_id):
    """The notebook with the written answer `grade_id` back to the released stub."""
    nb.cells[mc.index_of(nb, grade_id)].source = "YOUR ANSWER HERE"
    return nb


def checked(tmp_path, capsys, nb, name="theory.ipynb", max_mb=check.LMS_LIMIT_MB):
    """(exit status, the lines printed, each without the file's name) of `check` on `nb` saved as `name`."""
    path = tmp_path / name
    mc.write(nb, path)
    status = check.main(files=[path], max_mb=max_mb)
    return status, [line.split(": ", 1)[1] for line in capsys.readouterr().out.splitlines()]


def test_a_filled_in_notebook_is_ready(tmp_path, capsys, releases, sources):
    """Does a run notebook with every answer filled in get one line saying it is ready, and exit 0?"""
    status, lines = checked(tmp_path, capsys, ready(releases, sources))
    assert status == 0 and len(lines) == 1 and lines[0].startswith("ready: the theory notebook"), lines


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_notebook_can_be_ready(tmp_path, capsys, releases, sources, name):
    """Is each of the four notebooks, filled in with the reference solution and run, ready?"""
    status, lines = checked(tmp_path, capsys, ready(releases, sources, name), f"{name}.ipynb")
    assert status == 0, lines


def test_missing_answers_are_named(tmp_path, capsys, releases):
    """Does a run notebook left as released name each graded function or value by its name and each written answer
    by its question's label, and exit 1?"""
    status, lines = checked(tmp_path, capsys, ran(copy.deepcopy(releases["theory"])))
    assert status == 1
    assert "`logit_after_fgsm` is left as released (it still raises NotImplementedError): fill in its cell" in lines
    assert "`counterexample_w` is left as released (it still raises NotImplementedError): fill in its cell" in lines
    assert "T1 is not answered: its answer cell still says YOUR ANSWER HERE" in lines


def test_a_function_still_raising_is_left_as_released(tmp_path, capsys, releases, sources):
    """Is a class whose `__init__` was written but whose `forward` still raises the released NotImplementedError
    named as left as released?"""
    nb = ready(releases, sources, "bert")
    stub = next(c.source for c in releases["bert"].cells if mc.gid(c) == "sentence_classifier")
    raises = [line for line in stub.splitlines() if "NotImplementedError" in line][-1]
    cell = nb.cells[mc.index_of(nb, "sentence_classifier")]
    cell.source += "\n\n    def forward(self, input_ids, attention_mask=None, labels=None):\n" + raises
    status, lines = checked(tmp_path, capsys, nb, "bert.ipynb")
    assert status == 1 and any(line.startswith("`SentenceClassifier` is left as released") for line in lines), lines


def test_a_written_answer_in_an_added_cell_is_told_to_move(tmp_path, capsys, releases, sources):
    """Does a written answer typed into a cell added below the untouched stub get one line naming the question (T1)
    and telling the student to move it?"""
    nb = written_stub(ready(releases, sources), "written_fgsm_bound")
    nb.cells.insert(mc.index_of(nb, "written_fgsm_bound") + 1, nbformat.v4.new_markdown_cell("They are equal when"))
    status, lines = checked(tmp_path, capsys, nb)
    assert status == 1 and lines == [
        "T1: your answer is in a cell you added below the question, not in its answer cell: move it into the cell "
        "that says YOUR ANSWER HERE (and delete the added cell)"
    ]


def test_code_in_an_added_cell_is_told_to_move(tmp_path, capsys, releases, sources):
    """Does a graded function left as released, with the student's code in a cell added below its test cell, get
    one line naming the function and telling the student to move the code?"""
    nb = ready(releases, sources)
    code = nb.cells[mc.index_of(nb, "logit_after_fgsm")].source
    nb.cells[mc.index_of(nb, "logit_after_fgsm")].source = (
        releases["theory"].cells[mc.index_of(releases["theory"], "logit_after_fgsm")].source
    )
    mc.insert_after(nb, "test_logit_after_fgsm", code)
    ran(nb)
    status, lines = checked(tmp_path, capsys, nb)
    assert (
        status == 1 and len(lines) == 1 and lines[0].startswith("`logit_after_fgsm`: your code is in a cell you added")
    )


def test_a_deleted_test_cell_is_found(tmp_path, capsys, releases, sources):
    """Does a notebook whose test cell was deleted get a line naming that test cell?"""
    nb = ready(releases, sources)
    del nb.cells[mc.index_of(nb, "test_ridge_closed_form")]
    status, lines = checked(tmp_path, capsys, nb)
    assert status == 1 and lines == [
        "the test cell of `ridge_closed_form` (test_ridge_closed_form) was deleted: the grader puts the released one "
        "back (copy it back in)"
    ]


def test_an_edited_test_cell_is_found(tmp_path, capsys, releases, sources):
    """Does a notebook whose test cell was edited (an assert taken out) get a line saying the edits do not count?"""
    nb = ready(releases, sources)
    cell = nb.cells[mc.index_of(nb, "test_ridge_closed_form")]
    cell.source = "\n".join(line for line in cell.source.splitlines() if not line.startswith("assert"))
    status, lines = checked(tmp_path, capsys, nb)
    assert status == 1 and lines == [
        "the test cell of `ridge_closed_form` (test_ridge_closed_form) was edited: the grader runs the released one "
        "instead, so your edits do not count"
    ]


def test_a_skip_tag_on_a_test_cell_is_found(tmp_path, capsys, releases, sources):
    """Does a test cell tagged `skip-execution` get a line saying the grader removes the tag?"""
    nb = ready(releases, sources)
    nb.cells[mc.index_of(nb, "test_ridge_closed_form")].metadata["tags"] = ["skip-execution"]
    status, lines = checked(tmp_path, capsys, nb)
    assert status == 1 and len(lines) == 1 and "carries the tag(s) skip-execution" in lines[0], lines


def test_another_notebook_under_this_name_is_found(tmp_path, capsys, releases, sources):
    """Does the theory notebook saved as nmt.ipynb get a line saying which notebook the file holds?"""
    status, lines = checked(tmp_path, capsys, ready(releases, sources), "nmt.ipynb")
    assert status == 1 and lines == [
        "this file is named for nmt but holds the theory notebook: the grader would grade it as theory (and nmt as "
        "missing); save the nmt notebook under this name"
    ]


def test_a_notebook_of_another_assignment_is_found(tmp_path, capsys):
    """Does a notebook none of whose cells are A3's, saved as nmt.ipynb, get one line saying it is not this
    assignment's?"""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('assignment 2, question 1')")])
    status, lines = checked(tmp_path, capsys, ran(nb), "nmt.ipynb")
    assert status == 1 and lines == ["not this assignment's notebook (none of its cells match the A3 release)"]


def test_lost_grading_metadata_is_found(tmp_path, capsys, releases, sources):
    """Does a notebook whose cells lost their nbgrader metadata (cells copied into a new notebook) get one line
    counting them?"""
    nb = ready(releases, sources)
    mc.strip_nbgrader(nb)
    status, lines = checked(tmp_path, capsys, nb)
    assert status == 1 and len(lines) == 1 and "cell(s) lost their grading metadata" in lines[0], lines


def test_a_notebook_never_run_is_found(tmp_path, capsys, releases, sources):
    """Does a filled-in notebook with no outputs at all get a line saying it was never run?"""
    status, lines = checked(tmp_path, capsys, mc.solved(releases["theory"], sources["theory"]))
    assert status == 1 and lines == [
        "never run: no cell has an output; run every cell (Colab: Runtime → Run all; Jupyter: Run → Run All "
        "Cells), then save it"
    ]


def test_input_in_an_answer_cell_is_found(tmp_path, capsys, releases, sources):
    """Does an `input()` call in an answer cell get a line naming the cell?"""
    nb = ready(releases, sources)
    nb.cells[mc.index_of(nb, "ridge_closed_form")].source += "\nlam = float(input('lambda? '))"
    status, lines = checked(tmp_path, capsys, nb)
    assert status == 1 and lines == [
        "the answer cell of `ridge_closed_form` calls input(), which waits for a keyboard the grader does not have: "
        "remove it"
    ]


def test_an_absolute_path_in_an_added_cell_is_found(tmp_path, capsys, releases, sources):
    """Does an absolute path (Colab's Drive) in a code cell the student added get a line naming the path?"""
    nb = ready(releases, sources)
    mc.insert_after(nb, "test_ridge_closed_form", "data = open('/content/drive/MyDrive/x.csv').read()")
    ran(nb)
    status, lines = checked(tmp_path, capsys, nb)
    assert status == 1 and len(lines) == 1 and "'/content/drive/MyDrive/x.csv'" in lines[0], lines


def test_a_file_over_the_lms_limit_is_found(tmp_path, capsys, releases, sources):
    """Does a notebook larger than the LMS takes (here a limit of 0.05 MB) get a line with its size?"""
    status, lines = checked(tmp_path, capsys, ready(releases, sources), "theory.ipynb", 0.05)
    assert status == 1 and len(lines) == 1 and "MB an LMS takes by default" in lines[0], lines


def test_the_command_line_runs_the_check(tmp_path, capsys, releases, sources):
    """Does `python -m autograder check FILE FILE` check both files, one ready and one not, and exit 1?"""
    mc.write(ready(releases, sources), tmp_path / "theory.ipynb")
    mc.write(ran(copy.deepcopy(releases["clip"])), tmp_path / "Copy of clip.ipynb")
    assert cli.main(["check", str(tmp_path / "theory.ipynb"), str(tmp_path / "Copy of clip.ipynb")]) == 1
    out = capsys.readouterr().out
    assert f"{tmp_path / 'theory.ipynb'}: ready" in out and "Copy of clip.ipynb: `similarity_matrix` is left" in out
    assert out.splitlines()[-1] == "1 of 2 notebooks are not ready"


def test_a_notebook_takes_under_two_seconds(tmp_path, capsys, releases, sources):
    """Does checking each of the four filled-in notebooks take under 2 s (the command's promise)?"""
    paths_ = []
    for name in NOTEBOOKS:
        mc.write(ready(releases, sources, name), tmp_path / f"{name}.ipynb")
        paths_.append(tmp_path / f"{name}.ipynb")
    start = time.perf_counter()
    assert check.main(files=paths_) == 0
    assert (time.perf_counter() - start) / len(paths_) < 2.0


def test_ready_means_ingest_finds_every_answer(tmp_path, capsys, releases, sources):
    """For each notebook check calls ready, does ingest stage it with every answer cell filled in (no written
    answer blank, no graded cell left as released) and nothing flagged?"""
    from autograder.grading import answers

    for name in NOTEBOOKS:
        mc.write(ready(releases, sources, name), tmp_path / "subs" / "ann" / f"{name}.ipynb")
        assert check.main(files=[tmp_path / "subs" / "ann" / f"{name}.ipynb"]) == 0
    subs = ingest.ingest(tmp_path / "subs", tmp_path / "staging", release=paths.RELEASE)
    for sub in subs:
        assert sub.ready and sub.flags == [], (sub.notebook, sub.status, sub.flags)
        nb, rel = json.loads(sub.path.read_text()), releases[sub.notebook]
        stubs = {mc.gid(c): c.source for c in rel.cells if c.metadata.get("nbgrader", {}).get("solution")}
        left = [mc.gid(c) for c in nb["cells"] if mc.gid(c) in stubs and answers.left_as_released(c, stubs[mc.gid(c)])]
        assert left == [], (sub.notebook, left)


def test_check_and_ingest_name_the_same_added_cells(tmp_path, capsys, releases, sources):
    """On a notebook with answers typed into added cells (two written, one code), does check tell the student to move
    exactly the answers ingest flags for the TA?"""
    nb = ready(releases, sources)
    for gid, text in (("written_fgsm_bound", "equal when"), ("written_scaling", "B, because")):
        written_stub(nb, gid)
        nb.cells.insert(mc.index_of(nb, gid) + 1, nbformat.v4.new_markdown_cell(text))
    rel_cell = releases["theory"].cells[mc.index_of(releases["theory"], "ridge_closed_form")]
    code = nb.cells[mc.index_of(nb, "ridge_closed_form")].source
    nb.cells[mc.index_of(nb, "ridge_closed_form")].source = rel_cell.source
    mc.insert_after(nb, "ridge_closed_form", code)
    ran(nb)
    status, lines = checked(tmp_path, capsys, nb)
    told = {line.split(":")[0].strip("`") for line in lines}
    mc.write(nb, tmp_path / "subs" / "ann" / "theory.ipynb")
    (sub,) = [
        s
        for s in ingest.ingest(tmp_path / "subs", tmp_path / "staging", release=paths.RELEASE)
        if s.notebook == "theory"
    ]
    flagged = {re.match(r"[\w]+(?: \((\w+)\))?", flag).group(1) or flag.split(":")[0] for flag in sub.flags}
    assert status == 1 and told == flagged == {"T1", "T6", "ridge_closed_form"}, (lines, sub.flags)
