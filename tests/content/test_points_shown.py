"""Every TODO and every written question of the released notebooks shows its points, and they are the points its
cells carry (issue 57): nmt showed none, theory only in its top table. Each notebook ends with how to submit.

A TODO line reads "**TODO (N points):**" (or "(N points, M per function)" where one TODO asks for several graded
cells); N is the sum of the nbgrader points of the test cells after it, up to the next TODO or question. A question
shows "N point(s)" on its first line, the points of the written cell that follows it. Both agree with
autograder.contract (SPEC's table of grade ids and points).
"""

import re

import nbformat
import pytest

from autograder import contract, paths, readiness

TODO = re.compile(r"\*\*TODO \((\d+) points?(?:, (\d+) per function)?\):\*\*")
ANY_TODO = re.compile(r"\*\*TODO\b")
QUESTION_POINTS = re.compile(r"\b(\d+) points?\b")


def cells(notebook):
    return nbformat.read(paths.RELEASE / f"{notebook}.ipynb", as_version=4).cells


def meta(cell):
    return contract.nbgrader_meta(cell)


def is_question(cell):
    return meta(cell).get("grade_id", "").startswith(("q_", "question_"))


@pytest.mark.parametrize("notebook", contract.NOTEBOOKS)
def test_every_todo_shows_the_points_of_its_cells(notebook):
    """Does every TODO line read "**TODO (N points):**" with N the points of the test cells it asks for, is every
    autograded cell's test counted by exactly one TODO, and do the points agree with the contract?"""
    nb = cells(notebook)
    counted, wrong = [], []
    for i, cell in enumerate(nb):
        if cell.cell_type != "markdown" or not ANY_TODO.search(cell.source):
            continue
        todos = TODO.findall(cell.source)
        assert len(todos) == len(ANY_TODO.findall(cell.source)) == 1, f"{notebook} cell {i}: {cell.source[:120]!r}"
        (shown, each) = todos[0]
        tests = []
        for later in nb[i + 1 :]:
            if later.cell_type == "markdown" and (ANY_TODO.search(later.source) or is_question(later)):
                break
            if contract.is_test_cell(later):
                tests.append((meta(later)["grade_id"], meta(later)["points"]))
        points = [p for _, p in tests]
        counted += [g for g, _ in tests]
        if not tests or int(shown) != sum(points) or (each and {int(each)} != set(points)):
            wrong.append(f"cell {i} shows {shown} (each {each or '-'}) for {tests}")
        if len(tests) > 1 and not each:
            wrong.append(f"cell {i} asks for {len(tests)} cells: say the points of each")
    assert not wrong, f"{notebook}: {wrong}"
    assert sorted(counted) == sorted(contract.test_cell_id(g) for g in contract.GRADED[notebook]), counted
    by_id = {meta(c)["grade_id"]: meta(c)["points"] for c in nb if contract.is_test_cell(c)}
    assert {contract.check_id(t): p for t, p in by_id.items()} == contract.GRADED[notebook]


@pytest.mark.parametrize("notebook", contract.NOTEBOOKS)
def test_every_written_question_shows_its_points(notebook):
    """Does every written answer cell follow a question whose first line shows its points ("1 point",
    "2 points"), as the written cell's nbgrader points and the contract say?"""
    nb = cells(notebook)
    wrong, seen = [], {}
    for i, cell in enumerate(nb):
        if not contract.is_written_cell(cell):
            continue
        gid, points = meta(cell)["grade_id"], meta(cell)["points"]
        seen[gid] = points
        question = next((c for c in reversed(nb[:i]) if is_question(c)), None)
        first = next((line for line in question.source.splitlines() if line.strip()), "") if question else ""
        shown = QUESTION_POINTS.findall(first)
        if shown != [str(points)]:
            wrong.append(f"{gid} ({points}): its question's first line is {first[:100]!r}")
    assert not wrong, f"{notebook}: {wrong}"
    assert seen == contract.WRITTEN[notebook]


@pytest.mark.parametrize("notebook", contract.NOTEBOOKS)
def test_every_notebook_ends_with_how_to_submit(notebook):
    """Does every released notebook end with a "## Submitting" section saying how to download and submit it, followed
    only by the generated check cell?"""
    *rest, check = cells(notebook)
    assert readiness.is_generated(check) and not any(map(readiness.is_generated, rest))
    last = rest[-1]
    assert last.cell_type == "markdown" and last.source.startswith("## Submitting"), last.source[:80]
    assert "Download .ipynb" in last.source and "test cells" in last.source
