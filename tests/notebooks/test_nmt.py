"""nmt.ipynb beyond the shared structure (test_structure.py): solutions as in the reference, runs in quick mode."""

import sys

import pytest

from autograder.contract import GRADED
from autograder.paths import ROOT
from tests.notebooks import assert_checks_passed, cells_by_grade_id, definitions, execute, load, output_text

# Last cell: the kernel's own CPU time, which (unlike wall time) does not grow when other jobs share the CPU.
KERNEL_CPU = (
    "import resource\n_u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(f'KERNEL_CPU {_u.ru_utime + _u.ru_stime:.2f}')"
)


@pytest.mark.slow
def test_executes_in_quick_mode():
    """Does the source notebook run top to bottom in quick mode, every hidden check passing? (Time is printed, not asserted.)"""
    nb, seconds = execute("nmt", extra_cells=[KERNEL_CPU])
    cpu = float(nb.cells[-1].outputs[0]["text"].split()[1])
    print(f"nmt.ipynb quick mode: {seconds:.1f} s wall, {cpu:.1f} s kernel CPU", file=sys.stderr)
    assert_checks_passed(nb, "nmt")
    text = output_text(nb)
    assert "quick mode: numbers are not meaningful" in text, "expected the quick-mode warning in the output"
    assert "estimate at C = 1e+15 FLOPs" in text, "expected the 1e15 FLOPs estimate in quick mode too"


@pytest.mark.parametrize("grade_id", sorted(GRADED["nmt"]))
def test_solution_matches_reference(grade_id):
    """Does the solution cell define its object exactly as autograder/content/reference/nmt.py does (docstrings aside)?"""
    source = cells_by_grade_id(load("nmt"))[grade_id].source
    ours = definitions(source.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""))
    reference = definitions((ROOT / "autograder" / "content" / "reference" / "nmt.py").read_text())
    assert len(ours) == 1, f"expected one definition in the {grade_id} cell, saw {sorted(ours)}"
    ((name, dump),) = ours.items()
    assert name in reference, f"expected {name} in the reference module"
    assert dump == reference[name], f"expected the {grade_id} solution to match reference {name}"
