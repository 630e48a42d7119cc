"""One cell, one grade, through the real grading pipeline: a graded cell left undone or raising costs only itself.

One batch holds, for every graded cell of every notebook, the reference submission with that one cell
(a) left as released, (b) defining an object that raises when called (a class whose constructor
raises), (c) raising while the cell runs, so that its name is never defined. In each, every other
graded cell must score what the reference scores, and the cell itself 0.
"""

import csv

import nbformat
import pytest

from autograder import contract, demo, paths
from autograder.content import build
from autograder.contract import GRADED
from autograder.grading import pipeline
from tests.checks import mutants_theory as MT
from tests.notebooks import OBJECT

pytestmark = pytest.mark.slow

NOTEBOOKS = contract.NOTEBOOKS
# answers, not callables (conv1d_layer is a dict: "raises when called" does not apply to it)
VALUES = {
    "scavenger_caption",
    "counterexample_w",
    "most_efficient_batch",
    "regimes",
    "scaling_choice",
    "conv1d_layer",
    "layernorm_d2",
}


def raising_object(name):
    """A cell whose object raises when called: a function that raises, or a class whose constructor does."""
    if name[0].isupper():
        return (
            f"import torch.nn as nn\n\n\nclass {name}(nn.Module):\n    def __init__(self, *args, **kwargs):\n"
            f"        raise RuntimeError('{name} is broken')\n"
        )
    return f"def {name}(*args, **kwargs):\n    raise RuntimeError('{name} is broken')\n"


def raising_cell(answer):
    """A cell that raises before it defines anything (the student's answer below the error never runs)."""
    return "raise RuntimeError('this cell stops here')\n" + answer


# A relative_attention written differently, or wrongly, beside correct layers: the layers keep their points
# (their checks never call it). Each variant maps to the cells that must score 0.
ATTENTION_VARIANTS = {
    "attention_on_offset_arrays": (
        MT.CATALOGUE["relative_attention"].alternative("p on an array of offsets, -inf as -1e9"),
        set(),
    ),
    "attention_without_shift": (
        MT.CATALOGUE["relative_attention"].mutant("no max subtraction"),
        {"relative_attention"},
    ),
}


def variants(notebook, release_nb, reference_nb):
    """{(variant, grade_id): source of the solution cell} for one notebook."""
    released = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in release_nb.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in reference_nb.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    out = {}
    for grade_id in GRADED[notebook]:
        name = OBJECT[notebook][grade_id]
        out[("undone", grade_id)] = released[grade_id]
        if grade_id not in VALUES:
            out[("raises_when_called", grade_id)] = raising_object(name)
        out[("raises_while_defined", grade_id)] = raising_cell(answers[grade_id])
    if notebook == "theory":
        for variant, (source, _) in ATTENTION_VARIANTS.items():
            out[(variant, "relative_attention")] = source
    return out


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """Grade the omission and crash matrices of every notebook in one batch; returns (cells, cases)."""
    root = tmp_path_factory.mktemp("independence")
    build.build(paths.SOURCE, root / "release")
    subs, cases = root / "subs", {}
    for notebook in NOTEBOOKS:
        release_nb = nbformat.read(root / "release" / f"{notebook}.ipynb", as_version=4)
        reference_nb = demo.reference_submission(
            release_nb, nbformat.read(paths.SOURCE / f"{notebook}.ipynb", as_version=4)
        )
        (subs / "reference").mkdir(parents=True, exist_ok=True)
        nbformat.write(reference_nb, subs / "reference" / f"{notebook}.ipynb")
        for (variant, grade_id), source in variants(notebook, release_nb, reference_nb).items():
            index = list(GRADED[notebook]).index(grade_id)
            student = f"{variant}_{index}"  # one notebook of each kind per student
            (subs / student).mkdir(parents=True, exist_ok=True)
            nbformat.write(demo.with_cell(reference_nb, grade_id, source), subs / student / f"{notebook}.ipynb")
            cases[(student, notebook)] = (variant, grade_id)
    out = root / "out"
    pipeline.grade(subs, out, workers=2)
    with open(out / "grades_by_cell.csv", newline="") as f:
        # no score: the student has no such notebook, or the cell waits for a person (scavenger caption offline)
        cells = {
            (r["student"], r["notebook"], r["grade_id"]): float(r["score"]) if r["score"] else None
            for r in csv.DictReader(f)
        }
    return cells, cases


def test_matrix_covers_every_graded_cell(matrix):
    """Is every graded cell of every notebook left undone, made to raise when called and made to raise while
    defined (answers that are values, such as the scavenger caption, are not called)?"""
    _, cases = matrix
    want = sum(3 * len(GRADED[nb]) for nb in NOTEBOOKS) - len(VALUES) + len(ATTENTION_VARIANTS)
    assert len(cases) == want, f"expected {want} cases, got {len(cases)}"


def test_reference_scores_every_cell(matrix):
    """Does the reference earn every autograded point (the scavenger caption waits for a person offline)?"""
    cells, _ = matrix
    for notebook in NOTEBOOKS:
        for grade_id, points in GRADED[notebook].items():
            want = None if grade_id == "scavenger_caption" else points
            assert cells[("reference", notebook, grade_id)] == want, (notebook, grade_id)


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_only_the_broken_cell_loses_points(matrix, notebook):
    """With one cell undone or raising, does that cell score 0 and every other cell what the reference scores (and
    with relative_attention written differently, or wrongly, do the layers still score full marks)?"""
    cells, cases = matrix
    wrong = []
    for (student, nb), (variant, broken) in sorted(cases.items()):
        if nb != notebook:
            continue
        for grade_id in GRADED[notebook]:
            got, ref = cells[(student, notebook, grade_id)], cells[("reference", notebook, grade_id)]
            zeroed = ATTENTION_VARIANTS[variant][1] if variant in ATTENTION_VARIANTS else {broken}
            want = 0.0 if grade_id in zeroed else ref
            if got != want:
                wrong.append(f"{variant} {broken}: {grade_id} scored {got}, expected {want}")
    assert not wrong, "\n".join(wrong)
