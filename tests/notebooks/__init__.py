"""Helpers shared by the source-notebook tests (tests/notebooks/test_*.py) and tests/visible/run.py."""

import ast
import os
import time

import nbformat

from autograder import contract
from autograder.contract import GRADED, NOTEBOOKS, WRITTEN  # noqa: F401 - WRITTEN is read by test_structure
from autograder.paths import ROOT, SOURCE

NAMES = NOTEBOOKS
SETUP_CELL = ROOT / "docs" / "setup_cell.py"

# The object each test cell's hidden region hands to check_<grade_id>: check_<grade_id>(<object>).
OBJECT = {
    "nmt": {
        "positional_encodings": "create_positional_encodings",
        "scaled_dot_attention": "ScaledDotAttention",
        "causal_scaled_dot_attention": "CausalScaledDotAttention",
        "generate_tensors_for_training_decoder_nmt": "generate_tensors_for_training_decoder_nmt",
        "decoder_only_transformer": "DecoderOnlyTransformer",
        "perplexity": "perplexity",
        "decoder_params": "decoder_params",
        "find_optimal_params": "find_optimal_params",
        "fit_linear_log": "fit_linear_log",
    },
    "bert": {
        "encode_sentences": "encode_sentences",
        "encode_pairs": "encode_pairs",
        "sentence_classifier": "SentenceClassifier",
        "freeze_encoder": "freeze_encoder",
    },
    "clip": {
        "similarity_matrix": "similarity_matrix",
        "zero_shot_probs": "zero_shot_probs",
        "build_prompts": "build_prompts",
        "rank_images": "rank_images",
        "scavenger_caption": "scavenger_caption",
    },
    "theory": {grade_id: grade_id for grade_id in GRADED["theory"]},
}


def path(name):
    """The source notebook source/<name>.ipynb."""
    return SOURCE / f"{name}.ipynb"


def load(name):
    return nbformat.read(path(name), as_version=4)


def nbgrader_meta(cell):
    return cell.metadata.get("nbgrader", {})


def cells_by_grade_id(nb):
    return {nbgrader_meta(c)["grade_id"]: c for c in nb.cells if "grade_id" in nbgrader_meta(c)}


def code(nb):
    """All code cells' source, joined."""
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def streams(outputs):
    """(stdout text, stderr outputs) of one cell's outputs."""
    stdout = "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")
    return stdout, [o for o in outputs if o.get("name") == "stderr"]


def assert_checks_passed(nb, name, except_for=()):
    """Every test cell of `name` printed `PASSED <grade_id>` (but those in except_for) and nothing on stderr."""
    cells = cells_by_grade_id(nb)
    for grade_id in GRADED[name]:
        tid = contract.test_cell_id(grade_id)
        stdout, stderr = streams(cells[tid].outputs)
        assert not stderr, f"expected no stderr in {tid}, saw {stderr}"
        if grade_id not in except_for:
            assert f"PASSED {grade_id}" in stdout, f"expected 'PASSED {grade_id}' in {tid}'s output, saw {stdout!r}"


def output_text(nb):
    """Every code cell's text output, joined."""
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def definitions(source):
    """name -> ast dump (docstrings removed) of every top-level function and class in source."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
            node.body = node.body[1:] or [ast.Pass()]
    return {n.name: ast.dump(n) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def execute(name, extra_env=None, allow_errors=False, timeout=120, extra_cells=(), folder=SOURCE):
    """Run <folder>/<name>.ipynb (default source/a3) with nbclient in quick mode, offline, one thread, the repo
    root importable.

    extra_env is added to (and may override) that environment; os.environ is restored afterwards.
    extra_cells (code sources) are appended to the notebook before it runs. Returns (executed notebook, wall seconds).
    """
    nb = nbformat.read(folder / f"{name}.ipynb", as_version=4)
    nb.cells.extend(nbformat.v4.new_code_cell(source) for source in extra_cells)
    env = {
        "A3_QUICK": "1",
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        **(extra_env or {}),
    }
    return nb, run_notebook(nb, folder, env, timeout, allow_errors)


def run_notebook(nb, cwd, env, timeout, allow_errors):
    """Execute nb in place with nbclient in folder cwd, os.environ changed by env (None unsets) for the run.

    Returns the wall seconds; os.environ is restored afterwards."""
    import nbclient

    old = {k: os.environ.get(k) for k in env}
    try:
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        client = nbclient.NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=allow_errors,
            resources={"metadata": {"path": str(cwd)}},
        )
        start = time.time()
        client.execute()
        return time.time() - start
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
