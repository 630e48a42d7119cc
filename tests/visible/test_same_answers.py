"""The visible asserts and the hidden check of a test cell accept the same answers (issue 57).

For layernorm_norm and layernorm_d2, every form of an answer in tests/checks/mutants_theory.py's
LAYERNORM_*_FORMS is run through the released test cell's visible part (what a student runs) and through the hidden
check (what grades): an accepted form passes both, a rejected one fails both (the visible part with a one-line
AssertionError), and an incomplete set passes the visible part, which says completeness is checked when grading,
and fails the hidden check.
"""

import contextlib
import io

import numpy as np
import pytest
import torch

from autograder import contract, paths
from autograder.checks import CheckFailed
from autograder.checks import theory as checks
from tests.checks import mutants_theory as M
from tests.checks import notebook_cell
from tests.visible.run import PASSED

FORMS = {"layernorm_norm": M.LAYERNORM_NORM_FORMS, "layernorm_d2": M.LAYERNORM_D2_FORMS}


def visible_part(grade_id):
    """The released test cell of `grade_id` above its hidden region."""
    import nbformat

    nb = nbformat.read(paths.RELEASE / "theory.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if contract.nbgrader_meta(c).get("grade_id") == contract.test_cell_id(grade_id)]
    return cell.source.split("### BEGIN HIDDEN TESTS")[0]


def visible_verdict(grade_id, source):
    """'passed' or the visible part's one-line AssertionError, with the answer `source` defined."""
    namespace = {"__name__": "__main__", "np": np, "torch": torch}
    exec(compile(M.PRELUDE + source, "<answer>", "exec"), namespace)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(visible_part(grade_id), f"<test_{grade_id}>", "exec"), namespace)
    except AssertionError as e:
        assert "\n" not in str(e).strip(), f"expected a one-line failure, got {e}"
        return str(e)
    assert PASSED in out.getvalue(), out.getvalue()
    return "passed"


def hidden_verdict(grade_id, source):
    """'passed' or the hidden check's one-line failure."""
    check = getattr(checks, f"check_{grade_id}")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            check(notebook_cell(M.PRELUDE, source, grade_id))
    except CheckFailed as e:
        return str(e)
    return "passed"


def _cases(kind):
    return [
        pytest.param(grade_id, source, id=f"{grade_id}: {label}")
        for grade_id, forms in FORMS.items()
        for label, source in forms.get(kind, {}).items()
    ]


@pytest.mark.parametrize("grade_id, source", _cases("accepted"))
def test_both_parts_accept_the_answer_in_this_form(grade_id, source):
    """Do the visible asserts and the hidden check both pass this form of the right answer?"""
    assert (visible_verdict(grade_id, source), hidden_verdict(grade_id, source)) == ("passed", "passed")


@pytest.mark.parametrize("grade_id, source", _cases("rejected"))
def test_both_parts_reject_the_answer_in_this_form(grade_id, source):
    """Do the visible asserts and the hidden check both reject this answer (a form outside the family, or a wrong
    value), each in one line?"""
    visible, hidden = visible_verdict(grade_id, source), hidden_verdict(grade_id, source)
    assert visible != "passed", f"the visible part passed what the hidden check rejects: {hidden}"
    assert hidden != "passed", f"the hidden check passed what the visible part rejects: {visible}"


@pytest.mark.parametrize("grade_id, source", _cases("incomplete"))
def test_an_incomplete_set_passes_the_visible_part_only(grade_id, source):
    """Does a set that misses an output pass the visible part (which leaves completeness to the grader, and says
    so) and fail the hidden check with 'misses'?"""
    assert visible_verdict(grade_id, source) == "passed"
    assert "misses" in hidden_verdict(grade_id, source)
    assert "whether the set is complete is checked when grading" in visible_part(grade_id)
