"""Visible test cells a student can read on Colab: short, and no wider than Colab shows without wrapping.

The visible part of a test cell is its source above `### BEGIN HIDDEN TESTS`. The setup cell's helpers
(`expect_shape`, `attempt`, `needs`) keep most of them within LINES lines; the few that hold many checks
(a stand-in model, several calls) are capped at their size today, so they can shrink but not grow.
"""

import pytest

from autograder import contract
from autograder.contract import GRADED, NOTEBOOKS
from tests.notebooks import cells_by_grade_id, load

LINES = 25
COLUMNS = 100  # Colab wraps code wider than about 100 columns
LONGER = {
    ("clip", "test_rank_images"): 45,
}


def visible_lines(cell):
    """The lines of a test cell above its hidden region, trailing blank lines dropped."""
    return cell.source.split("### BEGIN HIDDEN TESTS")[0].rstrip().splitlines()


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_visible_test_cells_fit_a_colab_screen(notebook):
    """Is every visible test cell at most COLUMNS wide and LINES long (or its LONGER cap)?"""
    cells = cells_by_grade_id(load(notebook))
    too_big = []
    for grade_id in GRADED[notebook]:
        tid = contract.test_cell_id(grade_id)
        lines = visible_lines(cells[tid])
        cap = LONGER.get((notebook, tid), LINES)
        width = max(map(len, lines), default=0)
        if len(lines) > cap or width > COLUMNS:
            too_big.append(f"{tid}: {len(lines)} lines (at most {cap}), {width} columns (at most {COLUMNS})")
    assert not too_big, f"visible test cells too big: {'; '.join(too_big)}"


def test_longer_caps_name_real_cells():
    """Does every LONGER entry name an existing test cell that still needs more than LINES lines?"""
    for (notebook, tid), cap in LONGER.items():
        cells = cells_by_grade_id(load(notebook))
        assert tid in cells, f"{notebook}: no cell {tid}"
        assert len(visible_lines(cells[tid])) > LINES, f"{notebook} {tid} fits in {LINES} lines: drop its cap"
