"""The source notebook nmt.ipynb: committed clean, nbgrader cells as in the contract, runs in quick mode."""
import os
import sys
import time

import nbformat
import pytest

from autograder import assignment
from autograder.assignment import GRADED
from autograder.paths import ROOT, SOURCE

NOTEBOOK = SOURCE / "nmt.ipynb"
SETUP_CELL = ROOT / "docs" / "setup_cell.py"
WRITTEN = ["written_positional_encodings", "written_study_analysis", "written_decoder_only", "written_scaling"]


def load():
    return nbformat.read(NOTEBOOK, as_version=4)


def nbgrader_meta(cell):
    return cell.metadata.get("nbgrader", {})


def cells_by_grade_id(nb):
    return {nbgrader_meta(c)["grade_id"]: c for c in nb.cells if "grade_id" in nbgrader_meta(c)}


def test_notebook_is_valid_nbformat():
    """Is the notebook valid nbformat 4 with a python3 kernelspec?"""
    nb = load()
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3", f"expected kernel python3, saw {nb.metadata['kernelspec']}"


def test_no_outputs_committed():
    """Is the source notebook committed without outputs or execution counts?"""
    dirty = [i for i, c in enumerate(load().cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"expected no outputs, saw outputs or execution counts in cells {dirty}"


def test_first_code_cell_is_setup_cell():
    """Does the first code cell start with docs/setup_cell.py verbatim?"""
    first = next(c for c in load().cells if c.cell_type == "code")
    assert first.source.startswith(SETUP_CELL.read_text().strip()), "expected the first code cell to be docs/setup_cell.py"


@pytest.mark.parametrize("grade_id, points", sorted(GRADED["nmt"].items()))
def test_graded_cell_pair(grade_id, points):
    """Does this grade id have a solution cell and a locked test cell with the contract's points?"""
    cells = cells_by_grade_id(load())
    assert grade_id in cells, f"expected a solution cell {grade_id!r}"
    sol = nbgrader_meta(cells[grade_id])
    assert (sol["solution"], sol["grade"], sol["locked"]) == (True, False, False), f"{grade_id}: saw metadata {sol}"
    assert "### BEGIN SOLUTION" in cells[grade_id].source and "### END SOLUTION" in cells[grade_id].source
    tid = assignment.test_cell_id(grade_id)
    assert tid in cells, f"expected a test cell {tid!r}"
    meta = nbgrader_meta(cells[tid])
    assert (meta["grade"], meta["solution"], meta["locked"]) == (True, False, True), f"{tid}: saw metadata {meta}"
    assert meta["points"] == points, f"{tid}: expected {points} points, saw {meta['points']}"


@pytest.mark.parametrize("grade_id", sorted(GRADED["nmt"]))
def test_hidden_region_only_calls_its_check(grade_id):
    """Does the test cell's hidden region import and call exactly check_<grade_id>, after the visible asserts?"""
    source = cells_by_grade_id(load())[assignment.test_cell_id(grade_id)].source
    visible, _, rest = source.partition("### BEGIN HIDDEN TESTS\n")
    hidden, _, after = rest.partition("### END HIDDEN TESTS")
    assert "assert " in visible, f"expected visible asserts before the hidden region of {assignment.test_cell_id(grade_id)}"
    lines = hidden.strip().splitlines()
    assert lines[0] == f"from autograder.checks.nmt import check_{grade_id}", f"saw {lines[0]!r}"
    assert len(lines) == 2 and lines[1].startswith(f"check_{grade_id}("), f"saw hidden lines {lines}"
    assert after.strip() == "", f"expected nothing after the hidden region, saw {after.strip()!r}"


def test_grade_ids_unique_and_no_extra_graded_cells():
    """Are grade ids unique, and are the only graded cells the contract's tests and the written answers?"""
    nb = load()
    ids = [nbgrader_meta(c)["grade_id"] for c in nb.cells if "grade_id" in nbgrader_meta(c)]
    assert len(ids) == len(set(ids)), f"expected unique grade ids, saw duplicates {sorted({i for i in ids if ids.count(i) > 1})}"
    graded = {nbgrader_meta(c)["grade_id"] for c in nb.cells if nbgrader_meta(c).get("grade")}
    want = {assignment.test_cell_id(g) for g in GRADED["nmt"]} | set(WRITTEN)
    assert graded == want, f"expected graded cells {sorted(want)}, saw {sorted(graded)}"


@pytest.mark.parametrize("grade_id", WRITTEN)
def test_written_answer_cells(grade_id):
    """Is each written answer a manually graded markdown cell right after a locked question cell?"""
    nb = load()
    index = next(i for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade_id") == grade_id)
    cell, question = nb.cells[index], nb.cells[index - 1]
    meta = nbgrader_meta(cell)
    assert cell.cell_type == "markdown" and meta["grade"] and meta["solution"] and not meta["locked"], f"saw {meta}"
    assert meta["points"] > 0, f"expected points on {grade_id}"
    qmeta = nbgrader_meta(question)
    assert question.cell_type == "markdown" and qmeta.get("locked") and "Question" in question.source, \
        f"expected a locked question cell before {grade_id}"


def test_no_unguarded_cuda_calls():
    """Does the notebook avoid .cuda() and hard-coded 'cuda' devices (everything goes through DEVICE)?"""
    code = "\n".join(c.source for c in load().cells if c.cell_type == "code")
    assert ".cuda()" not in code, "expected no .cuda() calls"
    assert code.count('"cuda"') == 1, "expected 'cuda' to appear only in get_device()"


@pytest.mark.slow
def test_executes_in_quick_mode(tmp_path):
    """Does the source notebook run top to bottom in quick mode, every hidden check passing? (Time is printed, not asserted.)"""
    import nbclient

    nb = load()
    # Last cell: the kernel's own CPU time, which (unlike wall time) does not grow when other jobs share the CPU.
    nb.cells.append(nbformat.v4.new_code_cell(
        "import resource\n_u = resource.getrusage(resource.RUSAGE_SELF)\nprint(f'KERNEL_CPU {_u.ru_utime + _u.ru_stime:.2f}')"))
    env = {"A3_QUICK": "1", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                         resources={"metadata": {"path": str(SOURCE)}})
        start = time.time()
        client.execute()
        seconds = time.time() - start
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    cpu = float(nb.cells[-1].outputs[0]["text"].split()[1])
    print(f"nmt.ipynb quick mode: {seconds:.1f} s wall, {cpu:.1f} s kernel CPU", file=sys.stderr)
    outputs = {}
    for cell in nb.cells:
        gid = nbgrader_meta(cell).get("grade_id")
        if gid and cell.cell_type == "code":
            outputs[gid] = cell.outputs
    for grade_id in GRADED["nmt"]:
        outs = outputs[assignment.test_cell_id(grade_id)]
        stdout = "".join(o.get("text", "") for o in outs if o.get("name") == "stdout")
        stderr = [o for o in outs if o.get("name") == "stderr"]
        assert f"PASSED {grade_id}" in stdout, f"expected 'PASSED {grade_id}' in the test cell output, saw {stdout!r}"
        assert not stderr, f"expected no stderr in {assignment.test_cell_id(grade_id)}, saw {stderr}"
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "quick mode: numbers are not meaningful" in text, "expected the quick-mode warning in the output"
    assert "estimate at C = 1e+15 FLOPs" in text, "expected the 1e15 FLOPs estimate in quick mode too"


def _definitions(source):
    """name -> ast dump (docstrings removed) of every top-level function and class in source."""
    import ast

    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
            node.body = node.body[1:] or [ast.Pass()]
    return {n.name: ast.dump(n) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


@pytest.mark.parametrize("grade_id", sorted(GRADED["nmt"]))
def test_solution_matches_reference(grade_id):
    """Does the solution cell define its object exactly as autograder/reference/nmt.py does (docstrings aside)?"""
    source = cells_by_grade_id(load())[grade_id].source
    ours = _definitions(source.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""))
    reference = _definitions((ROOT / "autograder" / "reference" / "nmt.py").read_text())
    assert len(ours) == 1, f"expected one definition in the {grade_id} cell, saw {sorted(ours)}"
    (name, dump), = ours.items()
    assert name in reference, f"expected {name} in the reference module"
    assert dump == reference[name], f"expected the {grade_id} solution to match reference {name}"
