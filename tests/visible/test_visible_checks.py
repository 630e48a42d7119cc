"""Visible checks that teach: the asserts above each test cell's hidden region catch realistic mistakes.

The catalogues (mutants_<notebook>.py beside this file) hold realistic wrong answers, each with the words
its one-line failure must contain, and correct alternatives that must print "visible checks passed".
They are run as a student runs the release notebook: reference answers everywhere, one catalogue answer
at a time swapped into its cell and its test cell run again, in an empty folder, data fetched through
A3_DATA_URL, quick mode, no `autograder` package (see run.py).
"""

import functools
import importlib
import sys

import pytest

from autograder import contract
from autograder.contract import GRADED
from tests.visible.run import Case, answer, execute_cases, reference_answer

NOTEBOOKS = contract.NOTEBOOKS
CATALOGUE = {name: importlib.import_module(f"tests.visible.mutants_{name}") for name in NOTEBOOKS}
GOAL = 0.9  # share of the catalogue's wrong answers the visible checks must catch

wrong_cases = pytest.mark.parametrize(
    "notebook, case",
    [pytest.param(name, case, id=f"{name}-{case.key}") for name in NOTEBOOKS for case in CATALOGUE[name].WRONG],
)
right_cases = pytest.mark.parametrize(
    "notebook, case",
    [pytest.param(name, case, id=f"{name}-{case.key}") for name in NOTEBOOKS for case in CATALOGUE[name].RIGHT],
)


@functools.lru_cache(maxsize=None)
def outcomes(notebook):
    """{case key: Outcome} of every catalogue case of `notebook`, from one execution of its release notebook."""
    module = CATALOGUE[notebook]
    result, seconds = execute_cases(notebook, module.WRONG + module.RIGHT)
    print(f"{notebook}: {len(result)} visible test cells run in {seconds:.0f} s", file=sys.stderr)
    return result


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_catalogue_covers_every_graded_cell(notebook):
    """Does the catalogue hold, for every graded cell, the reference answer among the correct ones, and a wrong
    answer with a message fragment for every graded cell that can be got wrong in code?"""
    module = CATALOGUE[notebook]
    cells = set(GRADED[notebook])
    assert {c.grade_id for c in module.RIGHT if c.name == "reference"} == cells
    assert {c.grade_id for c in module.WRONG} == cells, (
        f"no wrong answer for {sorted(cells - {c.grade_id for c in module.WRONG})}"
    )
    assert all(isinstance(c, Case) and c.expect for c in module.WRONG), (
        "every wrong answer names the words of its failure"
    )
    keys = [c.key for c in module.WRONG + module.RIGHT]
    assert len(keys) == len(set(keys)), f"duplicate case names {sorted({k for k in keys if keys.count(k) > 1})}"


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_catalogue_edits_apply_to_the_reference(notebook):
    """Does every catalogue answer built by editing the reference find each text it replaces exactly once, and
    differ from the reference (or is it the reference itself, for the `reference` entries)?"""
    for case in CATALOGUE[notebook].WRONG + CATALOGUE[notebook].RIGHT:
        source = answer(notebook, case)  # raises when an edit's old text is not there exactly once
        if case.name == "reference":
            assert source == reference_answer(notebook, case.grade_id)
        else:
            assert source != reference_answer(notebook, case.grade_id), f"{case.key} is the reference answer"


@pytest.mark.slow
@wrong_cases
def test_wrong_answer_fails_visibly_with_its_message(notebook, case):
    """With this realistic mistake in its cell, does the visible test cell stop with a one-line AssertionError
    that names the mistake, instead of printing "visible checks passed"?"""
    seen = outcomes(notebook)[case.key]
    assert seen.caught(case.expect), f"expected an AssertionError containing {case.expect!r}, saw {seen}"


@pytest.mark.slow
@right_cases
def test_correct_alternative_passes(notebook, case):
    """With this correct answer in its cell, does the visible test cell print "visible checks passed" and nothing
    on stderr?"""
    seen = outcomes(notebook)[case.key]
    assert seen.passed, f"expected 'visible checks passed', saw {seen}"


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_catch_rate_reaches_the_goal(notebook):
    """Do the visible checks catch at least 90 % of the notebook's catalogue of wrong answers?"""
    wrong = CATALOGUE[notebook].WRONG
    caught = [c for c in wrong if outcomes(notebook)[c.key].caught(c.expect)]
    print(f"{notebook}: visible checks catch {len(caught)}/{len(wrong)} wrong answers", file=sys.stderr)
    assert len(caught) >= GOAL * len(wrong), (
        f"expected at least {GOAL:.0%} caught, saw {len(caught)}/{len(wrong)}; missed {[c.key for c in wrong if c not in caught]}"
    )
