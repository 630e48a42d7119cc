"""The source notebooks (nmt, bert, clip): committed clean, nbgrader cells as in the contract.

Notebook-specific checks and the quick-mode executions live in test_<name>.py beside this file.
"""

import re

import nbformat
import pytest

from autograder import contract
from autograder.contract import GRADED
from autograder.paths import RELEASE
from tests.notebooks import NAMES, OBJECT, SETUP_CELL, WRITTEN, cells_by_grade_id, code, load, nbgrader_meta

each_notebook = pytest.mark.parametrize("name", NAMES)
each_graded = pytest.mark.parametrize(
    "name, grade_id, points",
    [
        pytest.param(name, grade_id, points, id=f"{name}-{grade_id}")
        for name in NAMES
        for grade_id, points in sorted(GRADED[name].items())
    ],
)
each_grade_id = pytest.mark.parametrize(
    "name, grade_id",
    [pytest.param(name, grade_id, id=f"{name}-{grade_id}") for name in NAMES for grade_id in sorted(GRADED[name])],
)
each_written = pytest.mark.parametrize(
    "name, grade_id, points",
    [
        pytest.param(name, grade_id, points, id=f"{name}-{grade_id}")
        for name in NAMES
        for grade_id, points in sorted(WRITTEN[name].items())
    ],
)


@each_notebook
def test_notebook_is_valid_nbformat(name):
    """Is the notebook valid nbformat 4 with a python3 kernelspec?"""
    nb = load(name)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3", f"expected kernel python3, saw {nb.metadata['kernelspec']}"


@each_notebook
def test_no_outputs_committed(name):
    """Is the source notebook committed without outputs or execution counts?"""
    dirty = [
        i
        for i, c in enumerate(load(name).cells)
        if c.cell_type == "code" and (c.outputs or c.execution_count is not None)
    ]
    assert not dirty, f"expected no outputs, saw outputs or execution counts in cells {dirty}"


@each_notebook
def test_first_code_cell_is_setup_cell(name):
    """Does the first code cell start with docs/setup_cell.py verbatim?"""
    first = next(c for c in load(name).cells if c.cell_type == "code")
    assert first.source.startswith(SETUP_CELL.read_text().strip()), (
        "expected the first code cell to be docs/setup_cell.py"
    )


@each_graded
def test_graded_cell_pair(name, grade_id, points):
    """Does this grade id have a solution cell and a locked test cell with the contract's points?"""
    cells = cells_by_grade_id(load(name))
    assert grade_id in cells, f"expected a solution cell {grade_id!r}"
    sol = nbgrader_meta(cells[grade_id])
    assert (sol["solution"], sol["grade"], sol["locked"]) == (True, False, False), f"{grade_id}: saw metadata {sol}"
    assert "### BEGIN SOLUTION" in cells[grade_id].source and "### END SOLUTION" in cells[grade_id].source
    tid = contract.test_cell_id(grade_id)
    assert tid in cells, f"expected a test cell {tid!r}"
    meta = nbgrader_meta(cells[tid])
    assert (meta["grade"], meta["solution"], meta["locked"]) == (True, False, True), f"{tid}: saw metadata {meta}"
    assert meta["points"] == points, f"{tid}: expected {points} points, saw {meta['points']}"


@each_grade_id
def test_hidden_region_only_calls_its_check(name, grade_id):
    """Does the test cell's hidden region import check_<grade_id> and call it on the graded object, and nothing
    else, after the visible asserts?"""
    tid = contract.test_cell_id(grade_id)
    source = cells_by_grade_id(load(name))[tid].source
    visible, _, rest = source.partition("### BEGIN HIDDEN TESTS\n")
    hidden, _, after = rest.partition("### END HIDDEN TESTS")
    assert "assert " in visible, f"expected visible asserts before the hidden region of {tid}"
    lines = hidden.strip().splitlines()
    want = [f"from autograder.checks.{name} import check_{grade_id}", f"check_{grade_id}({OBJECT[name][grade_id]})"]
    assert lines == want, f"expected hidden lines {want}, saw {lines}"
    assert after.strip() == "", f"expected nothing after the hidden region, saw {after.strip()!r}"


@each_notebook
def test_grade_ids_unique_and_only_contract_cells_graded(name):
    """Are grade ids unique, and are the only graded cells the contract's test cells and the written answers?"""
    nb = load(name)
    ids = [nbgrader_meta(c)["grade_id"] for c in nb.cells if "grade_id" in nbgrader_meta(c)]
    assert len(ids) == len(set(ids)), (
        f"expected unique grade ids, saw duplicates {sorted({i for i in ids if ids.count(i) > 1})}"
    )
    graded = {nbgrader_meta(c)["grade_id"] for c in nb.cells if nbgrader_meta(c).get("grade")}
    want = {contract.test_cell_id(g) for g in GRADED[name]} | set(WRITTEN[name])
    assert graded == want, f"expected graded cells {sorted(want)}, saw {sorted(graded)}"


@each_written
def test_written_answer_cells(name, grade_id, points):
    """Is each written answer a manually graded markdown cell, with its points, right after a locked question cell?"""
    nb = load(name)
    index = next(i for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade_id") == grade_id)
    cell, question = nb.cells[index], nb.cells[index - 1]
    meta = nbgrader_meta(cell)
    assert cell.cell_type == "markdown" and meta["grade"] and meta["solution"] and not meta["locked"], f"saw {meta}"
    assert meta["points"] == points, f"expected {points} points on {grade_id}, saw {meta['points']}"
    qmeta = nbgrader_meta(question)
    assert question.cell_type == "markdown" and qmeta.get("locked") and "Question" in question.source, (
        f"expected a locked question cell before {grade_id}"
    )


@each_notebook
def test_provided_code_cells_are_locked(name):
    """Is every code cell that is not a solution cell locked, so that autograding restores provided code?"""
    unlocked = [
        c.id
        for c in load(name).cells
        if c.cell_type == "code" and not nbgrader_meta(c).get("solution") and not nbgrader_meta(c).get("locked")
    ]
    assert not unlocked, f"expected every provided code cell locked, saw unlocked {unlocked}"


@each_notebook
def test_no_unguarded_cuda_calls(name):
    """Does the notebook avoid .cuda() and hard-coded 'cuda' devices (everything goes through DEVICE)?"""
    source = code(load(name))
    assert ".cuda()" not in source, "expected no .cuda() calls"
    assert source.count('"cuda"') == 1, "expected 'cuda' to appear only in get_device()"


def _setup_namespace(monkeypatch, tmp_path, data_url):
    monkeypatch.setenv("A3_DATA_URL", data_url)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    exec(SETUP_CELL.read_text(), namespace)
    return namespace


def test_failed_download_says_which_url_and_how_to_fix_it(monkeypatch, tmp_path, capsys):
    """When the data cannot be downloaded, does fetch name the URL and say how to point A3_DATA_URL elsewhere?"""
    ns = _setup_namespace(monkeypatch, tmp_path, (tmp_path / "nowhere").as_uri())
    with pytest.raises(RuntimeError) as info:
        ns["fetch"]("data/pig_latin_small.txt")
    message = str(info.value)
    assert f"could not download {(tmp_path / 'nowhere').as_uri()}/data/pig_latin_small.txt" in message
    assert "A3_DATA_URL" in message and "\n" not in message


def test_needs_skips_with_one_line_naming_the_cell(monkeypatch, tmp_path, capsys):
    """Does needs() return the probe's value when the earlier cell works, and None with one line naming it
    when it raises?"""
    ns = _setup_namespace(monkeypatch, tmp_path, "https://example.invalid")
    capsys.readouterr()
    assert ns["needs"]("similarity_matrix", lambda: 42) == 42

    def broken():
        raise NotImplementedError("similarity_matrix is not implemented yet")

    assert ns["needs"]("similarity_matrix", broken) is None
    out = capsys.readouterr()
    assert out.out.startswith("skipped: this needs `similarity_matrix`") and out.err == ""
    assert len(out.out.strip().splitlines()) == 1


@each_notebook
def test_release_stubs_name_what_to_implement(name):
    """Does every TODO stub of the release raise NotImplementedError naming the function to implement?"""
    release = nbformat.read(RELEASE / f"{name}.ipynb", as_version=4)
    stubs = [
        line.strip()
        for c in release.cells
        if c.cell_type == "code" and nbgrader_meta(c).get("solution")
        for line in c.source.splitlines()
        if "NotImplementedError" in line
    ]
    assert stubs and all(
        re.fullmatch(
            r'raise NotImplementedError\("[\w.]+ is not implemented yet: replace this '
            r'line with your code"\)',
            s,
        )
        for s in stubs
    ), stubs


@pytest.mark.slow
@each_notebook
def test_untouched_release_fails_only_where_a_todo_is(name):
    """Run as handed out, does every cell that stops stop because of a named TODO (the stub's
    NotImplementedError, or a test cell saying its answer is not set yet), never with a KeyError, NameError or
    empty plot in a provided cell?"""
    from tests.notebooks import execute

    nb, _ = execute(name, allow_errors=True, folder=RELEASE, extra_env={"A3_MODEL_CACHE": "/nonexistent"})
    errors = [
        (c.metadata.get("nbgrader", {}).get("grade_id"), o)
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert errors, "expected the untouched release to stop at its TODOs"
    named = {"NotImplementedError": "is not implemented yet", "AssertionError": "is not set yet"}
    wrong = [(gid, o.ename, o.evalue[:80]) for gid, o in errors if named.get(o.ename, "\0") not in o.evalue]
    assert not wrong, f"expected only named NotImplementedErrors, saw {wrong}"


PART = {"nmt": 1, "bert": 2, "clip": 3, "theory": 4}  # the order the assignment's parts are numbered in


def test_titles_number_the_parts_one_way():
    """Does every notebook's title read "# A3, part N: ..." with the parts numbered in one order (nmt 1, bert 2,
    clip 3, theory 4), and does no other first-level heading say "part" (nmt's own sections are A, B and C, so
    nothing in it can be taken for clip's part 3)? Does nmt's question N4 describe the sentence classifier instead of
    sending a student who has not done bert yet to `SentenceClassifier`?"""
    assert sorted(PART) == sorted(contract.NOTEBOOKS)
    for name, number in PART.items():
        cells = [c for c in load(name).cells if c.cell_type == "markdown"]
        headings = [line for c in cells for line in c.source.splitlines() if line.startswith("# ")]
        assert headings[0].startswith(f"# A3, part {number}: "), (name, headings[0])
        assert not [h for h in headings[1:] if re.search(r"\bpart\b", h, re.I)], (name, headings)
    nmt = " ".join(c.source for c in load("nmt").cells if c.cell_type == "markdown")
    assert "# Section B: " in nmt and "# Section C: " in nmt
    assert re.findall(r"\bpart [1-4]\b", nmt, re.I) == ["part 1"]  # the title's: sections are named by letter
    question = cells_by_grade_id(load("nmt"))["q_lm_vs_classifier"].source
    assert "SentenceClassifier" not in question and "sentence classifier described above" in question
