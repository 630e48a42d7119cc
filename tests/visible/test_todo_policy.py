"""One TODO policy for every notebook: a graded cell states its goal and shapes and gives hints, not answers."""

import ast
import re

import nbformat
import pytest

from autograder import contract
from autograder.paths import RELEASE, ROOT

NOTEBOOKS = contract.NOTEBOOKS


def graded_code_cells(name):
    nb = nbformat.read(RELEASE / f"{name}.ipynb", as_version=4)
    return [
        (c.metadata["nbgrader"]["grade_id"], c.source)
        for c in nb.cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
    ]


def docstrings(source):
    """The docstrings of every function and class the cell defines (the stub line makes it valid Python)."""
    tree = ast.parse(source)
    return [ast.get_docstring(n) or "" for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_graded_cells_state_goal_and_shapes(name):
    """Does every graded code cell of the release that defines an object say what to write where
    (`# YOUR CODE HERE`), with a docstring giving the goal and the inputs and results with their shapes (`Inputs:` and `Returns:`)?"""
    missing = []
    for grade_id, source in graded_code_cells(name):
        docs = docstrings(source)
        if not docs:  # a value, not a function (the scavenger caption): a comment says what it is
            continue
        text = "\n".join(docs)
        if "# YOUR CODE HERE" not in source or "Inputs:" not in text or "Returns" not in text:
            missing.append(grade_id)
    assert not missing, f"expected `# YOUR CODE HERE` and an Inputs:/Returns: docstring in {missing}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_graded_cells_give_hints_not_todo_recipes(name):
    """Do graded code cells carry `# Hint:` comments, if any, and no `# TODO:` lines (which spelled out the answer)?"""
    todo = [grade_id for grade_id, source in graded_code_cells(name) if re.search(r"#\s*TODO", source)]
    assert not todo, f"expected no '# TODO' comments in graded cells, saw them in {todo}"


def test_readme_describes_the_markers_the_notebooks_use():
    """Does the README's students section name the marker the notebooks use (`# YOUR CODE HERE`), the docstring's
    Inputs:/Returns: and the `# Hint:` comments, and no `# TODO` marker the notebooks lack?"""
    students = ROOT.joinpath("README.md").read_text().split("## Students", 1)[1].split("\n## ", 1)[0]
    for words in ("`# YOUR CODE HERE`", "`Inputs:` / `Returns:`", "`# Hint:`"):
        assert words in students, f"expected {words} in the README's Students section"
    assert "`# TODO`" not in students, "the README still tells students to look for `# TODO`"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_each_graded_cell_is_introduced_by_a_todo(name):
    """Is every graded code cell introduced, in the nearest markdown cell above it, by a **TODO (N points):** line
    that says what to do and what it is worth (the same marker in every notebook; tests/content/test_points_shown.py
    checks the points)?"""
    nb = nbformat.read(RELEASE / f"{name}.ipynb", as_version=4)
    missing = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            above = next(c for c in reversed(nb.cells[:i]) if c.cell_type == "markdown")
            if not re.search(r"\*\*TODO \(\d+ points?[^)]*\):\*\*", above.source):
                missing.append(cell.metadata["nbgrader"]["grade_id"])
    assert not missing, f"expected a **TODO (N points):** line in the markdown above {missing}"
