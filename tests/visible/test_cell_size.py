"""Visible test cells a student can read on Colab: short, and no wider than Colab shows without wrapping.

The visible part of a test cell is its source above `### BEGIN HIDDEN TESTS`. The setup cell's helpers
(`expect_shape`, `attempt`, `needs`) and a notebook's provided helper cells (a stand-in model, checks two
test cells share: `layer_checks`, `ridge_checks`, `attention_checks`, ...) keep every one within LINES lines.
"""

import pytest

from autograder import contract
from autograder.contract import GRADED, NOTEBOOKS
from tests.notebooks import cells_by_grade_id, load

LINES = 25
COLUMNS = 100  # Colab wraps code wider than about 100 columns


def visible_lines(cell):
    """The lines of a test cell above its hidden region, trailing blank lines dropped."""
    return cell.source.split("### BEGIN HIDDEN TESTS")[0].rstrip().splitlines()


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_visible_test_cells_fit_a_colab_screen(notebook):
    """Is every visible test cell at most COLUMNS wide and LINES long?"""
    cells = cells_by_grade_id(load(notebook))
    too_big = []
    for grade_id in GRADED[notebook]:
        tid = contract.test_cell_id(grade_id)
        lines = visible_lines(cells[tid])
        width = max(map(len, lines), default=0)
        if len(lines) > LINES or width > COLUMNS:
            too_big.append(f"{tid}: {len(lines)} lines (at most {LINES}), {width} columns (at most {COLUMNS})")
    assert not too_big, f"visible test cells too big: {'; '.join(too_big)}"
