"""The source notebook clip.ipynb: committed clean, nbgrader cells as in the contract, runs in quick mode."""
import os
import sys
import time

import nbformat
import pytest

from autograder import assignment
from autograder.assignment import GRADED
from autograder.paths import ROOT, SOURCE
from autograder.reference import clip as ref

NOTEBOOK = SOURCE / "clip.ipynb"
SETUP_CELL = ROOT / "docs" / "setup_cell.py"


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
    assert first.source.startswith(SETUP_CELL.read_text().strip()), \
        "expected the first code cell to be docs/setup_cell.py"


@pytest.mark.parametrize("grade_id, points", sorted(GRADED["clip"].items()))
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


@pytest.mark.parametrize("grade_id", sorted(GRADED["clip"]))
def test_hidden_region_only_calls_its_check(grade_id):
    """Does the test cell's hidden region import and call exactly check_<grade_id>, after the visible asserts?"""
    source = cells_by_grade_id(load())[assignment.test_cell_id(grade_id)].source
    visible, _, rest = source.partition("### BEGIN HIDDEN TESTS\n")
    hidden, _, after = rest.partition("### END HIDDEN TESTS")
    assert "assert " in visible, f"expected visible asserts before the hidden region of test_{grade_id}"
    lines = hidden.strip().splitlines()
    assert lines == [f"from autograder.checks.clip import check_{grade_id}", f"check_{grade_id}({grade_id})"], \
        f"saw hidden lines {lines}"
    assert after.strip() == "", f"expected nothing after the hidden region, saw {after.strip()!r}"


def test_grade_ids_unique_and_only_contract_cells_graded():
    """Are grade ids unique, and are the only graded cells the contract's test cells?"""
    nb = load()
    ids = [nbgrader_meta(c)["grade_id"] for c in nb.cells if "grade_id" in nbgrader_meta(c)]
    assert len(ids) == len(set(ids)), f"expected unique grade ids, saw {ids}"
    graded = {nbgrader_meta(c)["grade_id"] for c in nb.cells if nbgrader_meta(c).get("grade")}
    want = {assignment.test_cell_id(g) for g in GRADED["clip"]}
    assert graded == want, f"expected graded cells {sorted(want)}, saw {sorted(graded)}"


def test_provided_code_cells_are_locked():
    """Is every code cell that is not a solution cell locked, so that nbgrader restores it?"""
    unlocked = [c.id for c in load().cells if c.cell_type == "code"
                and not nbgrader_meta(c).get("solution") and not nbgrader_meta(c).get("locked")]
    assert not unlocked, f"expected every provided code cell locked, saw unlocked {unlocked}"


@pytest.mark.parametrize("grade_id", sorted(g for g in GRADED["clip"] if g != "scavenger_caption"))
def test_solution_cell_is_the_reference(grade_id):
    """Is the notebook's solution (markers removed) exactly the reference the checks compare against?"""
    import inspect

    source = cells_by_grade_id(load())[grade_id].source
    solution = "\n".join(line for line in source.splitlines() if "### " not in line)
    reference = inspect.getsource(getattr(ref, grade_id)).rstrip()
    assert solution == reference, f"expected the solution of {grade_id} to equal autograder/reference/clip.py"


def test_scavenger_solution_is_the_reference_caption():
    """Does the notebook's scavenger solution set the reference caption?"""
    namespace = {}
    exec(cells_by_grade_id(load())["scavenger_caption"].source, namespace)
    assert namespace["scavenger_caption"] == ref.scavenger_caption, f"saw {namespace['scavenger_caption']!r}"


def test_no_unguarded_cuda_calls():
    """Does the notebook avoid .cuda() and hard-coded 'cuda' devices (everything goes through DEVICE)?"""
    code = "\n".join(c.source for c in load().cells if c.cell_type == "code")
    assert ".cuda()" not in code, "expected no .cuda() calls"
    assert code.count('"cuda"') == 1, "expected 'cuda' to appear only in get_device()"


def test_open_clip_install_is_guarded():
    """Is open_clip_torch installed only when the import fails (and nbgrader never)?"""
    code = "\n".join(c.source for c in load().cells if c.cell_type == "code")
    assert "try:\n    import open_clip\nexcept ImportError:\n    %pip install -q open_clip_torch" in code
    assert "install -q nbgrader" not in code and "install nbgrader" not in code


def execute(tmp_path, extra_env):
    """Run the source notebook with nbclient (errors recorded, not raised); return (notebook, seconds)."""
    import nbclient

    nb = load()
    env = {"A3_QUICK": "1", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), **extra_env}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
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
    return nb, seconds


@pytest.mark.slow
def test_executes_in_quick_mode(tmp_path):
    """Offline in quick mode, does the notebook run in well under 60 s, every check PASSED but the scavenger
    hunt, which must say UNGRADABLE (no real weights) and score nothing?"""
    nb, seconds = execute(tmp_path, {"A3_MODEL_CACHE": str(tmp_path / "empty-cache")})
    print(f"clip.ipynb quick mode: {seconds:.1f} s", file=sys.stderr)
    by_id = {nbgrader_meta(c).get("grade_id"): c for c in nb.cells if c.cell_type == "code"}
    errors = {gid: o for gid, c in by_id.items() for o in c.outputs if o.output_type == "error"}
    assert set(errors) == {"test_scavenger_caption"}, f"expected only the scavenger test cell to stop, saw {errors}"
    for grade_id in GRADED["clip"]:
        outs = by_id[assignment.test_cell_id(grade_id)].outputs
        stdout = "".join(o.get("text", "") for o in outs if o.get("name") == "stdout")
        stderr = [o for o in outs if o.get("name") == "stderr"]
        assert not stderr, f"expected no stderr in test_{grade_id}, saw {stderr}"
        if grade_id == "scavenger_caption":
            assert "UNGRADABLE scavenger_caption: no cached ViT-B-32 OpenAI weights" in stdout, f"saw {stdout!r}"
            assert "PASSED" not in stdout, f"saw {stdout!r}"
            assert "not graded automatically" in errors["test_scavenger_caption"].evalue
        else:
            assert f"PASSED {grade_id}" in stdout, f"expected 'PASSED {grade_id}' in the test cell, saw {stdout!r}"
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "NO PRETRAINED WEIGHTS: this CLIP" in text and "MEANINGLESS" in text, \
        "expected the loud random-weights banner"
    pictures = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert pictures >= 7, f"expected the grid, heat map, bar charts, template plot, searches and target, saw {pictures}"
