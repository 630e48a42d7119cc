"""The grading kernel's matplotlib backend: figures are closed undrawn and leave one line of text."""

import os

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.paths import ROOT
from autograder.sandbox import nofigures
from tests.slowdown import kernel_waits

CELLS = [
    "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()",
    "fig, axes = plt.subplots(1, 2)\nplt.tight_layout()",
    "plt.figure()\nplt.figure()\nplt.show()\nprint('after')",
    "print('no figure here')",
    "print(len(plt.get_fignums()))",
]


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    env = dict(os.environ, MPLBACKEND="module://autograder.sandbox.nofigures", PYTHONPATH=str(ROOT))
    NotebookClient(nb, kernel_name="python3", **kernel_waits()).execute(env=env)
    return nb


def text(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_show_replaces_the_figure_with_a_note(executed):
    """Does plt.show() leave a one-line note and no image?"""
    cell = executed.cells[0]
    assert text(cell) == nofigures.NOTE.format("1 figure") + "\n"
    assert not any("image/png" in o.get("data", {}) for o in cell.outputs)


def test_figure_left_open_is_closed_at_the_end_of_the_cell(executed):
    """Is a figure made without show() closed (with its note) when the cell ends, as inline would show it?"""
    assert text(executed.cells[1]) == nofigures.NOTE.format("1 figure") + "\n"


def test_note_counts_figures_and_keeps_later_output(executed):
    """Does one show() of two figures say 2 and keep what the cell printed after it?"""
    assert text(executed.cells[2]) == nofigures.NOTE.format("2 figures") + "\nafter\n"


def test_cell_without_figures_gets_no_note(executed):
    """Is a cell that made no figure left alone?"""
    assert text(executed.cells[3]) == "no figure here\n"


def test_no_figure_stays_open(executed):
    """Are all figures closed between cells (no memory growth, no too-many-figures warning)?"""
    assert text(executed.cells[4]) == "0\n"


def test_nothing_written_to_stderr(executed):
    """Does the backend write nothing to stderr (a test cell with stderr scores 0)?"""
    assert not [o for c in executed.cells for o in c.outputs if o.get("name") == "stderr"]
