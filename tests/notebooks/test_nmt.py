"""nmt.ipynb beyond the shared structure (test_structure.py): solutions as in the reference, runs in quick mode."""

import sys

import numpy as np
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
    assert "fits (your numbers for question N7)" in text, "expected the fitted lines in quick mode too"
    assert "estimate at C" not in text, "the 1e15 FLOPs estimate is the student's to compute (question N7)"


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


# --- the cells that print the numbers of the written questions 3.3.1 and 3.3.4 -------------------------------


def provided_cell(grade_id, monkeypatch, grading=False, **names):
    """Run the provided cell `grade_id` after the setup cell, with `names` defined; returns (namespace, stdout)."""
    import contextlib
    import io

    from tests.notebooks import SETUP_CELL

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setenv("A3_QUICK", "1")
    if grading:
        monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    namespace = {"__name__": "__main__"}
    exec(SETUP_CELL.read_text(), namespace)
    namespace.update(names)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(cells_by_grade_id(load("nmt"))[grade_id].source, namespace)
    return namespace, out.getvalue()


def decoder_run(fit_linear_log):
    """What the cells before decoder_only_compute leave for it: one 5-epoch run of a 1,000-parameter model on one
    batch of B = 2 words (source 3, target 4 characters: T = 3 + 4 + 2), two IsoFLOP optima, `fit_linear_log`."""
    import torch

    return {
        "decoder_only": object(),
        "decoder_history": {"train": [1.0] * 5},
        "DATA": {"small": {"train": [(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 4, dtype=torch.long))]}},
        "DECODER_HIDDEN": 8,
        "NUM_LAYERS": 3,
        "count_parameters": lambda model: 1000,
        "training_flops": lambda n, d: 6 * n * d,
        "optima": [(1e6, 100.0), (1e8, 1000.0)],  # N_opt = 10 ** (0.5 log10 C - 1)
        "fit_linear_log": fit_linear_log,
    }


def working_fit(x, y):
    m, c = np.polyfit(np.log10(x), np.log10(y), 1)
    return float(m), float(c)


def test_compute_optimal_cell_relates_the_run_to_the_fit(monkeypatch):
    """Does the 3.3.4 cell print the run's N, D = epochs * sum(B * T) and C = 6ND, and N / N_opt from the
    student's fit at that C?"""
    _, out = provided_cell("decoder_only_compute", monkeypatch, **decoder_run(working_fit))
    c = 6 * 1000 * 5 * 2 * (3 + 4 + 2)  # 540,000 FLOPs
    n_opt = 10 ** (0.5 * np.log10(c) - 1)
    assert "N = 1,000 parameters, D = 90 tokens, C = 6ND = 5.4e+05 FLOPs" in out, out
    assert f"N / N_opt = {1000 / n_opt:.3g}, D / D_opt = {n_opt / 1000:.3g}" in out, out


def test_compute_optimal_cell_says_in_one_line_when_the_fit_does_not_work(monkeypatch):
    """With fit_linear_log still a TODO, does the 3.3.4 cell print one line naming it instead of raising?"""

    def todo(x, y):
        raise NotImplementedError("fit_linear_log is not implemented yet: replace this line with your code")

    _, out = provided_cell("decoder_only_compute", monkeypatch, **decoder_run(todo))
    skipped = [line for line in out.splitlines() if line.startswith("skipped")]
    assert len(skipped) == 1 and "`fit_linear_log`" in skipped[0], out
    assert "N_opt" not in out, out


def test_compute_optimal_cell_waits_for_the_decoder_only_run(monkeypatch):
    """Without the decoder-only run (its cell raised), does the 3.3.4 cell say in one line what it waits for?"""
    names = decoder_run(working_fit)
    del names["decoder_history"]
    _, out = provided_cell("decoder_only_compute", monkeypatch, **names)
    assert out.startswith("skipped: this cell needs decoder_history") and len(out.strip().splitlines()) == 1, out


@pytest.mark.parametrize("grade_id", ["larger_models", "decoder_only_compute"])
def test_question_cells_do_nothing_while_grading(grade_id, monkeypatch):
    """Under the grading profile, with no run trained, does the cell print nothing and raise nothing?"""
    _, out = provided_cell(grade_id, monkeypatch, grading=True)
    assert out == "", out


def test_larger_models_cell_defines_loss_at_budget_while_grading(monkeypatch):
    """Does the 3.3.1 cell define loss_at_budget, which the IsoFLOP cell reads, under the grading profile too?"""
    namespace, _ = provided_cell("larger_models", monkeypatch, grading=True)
    log = {"flops": np.array([1.0, 10.0, 100.0]), "val": np.array([3.0, 2.0, 1.0])}
    assert (namespace["loss_at_budget"](log, 5.0), namespace["loss_at_budget"](log, 1e3)) == (2.0, None)


def test_larger_models_table_marks_the_lowest_loss_per_budget(monkeypatch):
    """Does the 3.3.1 table give each model's loss at each budget, star the lowest, dash a budget not reached, and
    give the loss at the last evaluation with its FLOPs and the FLOPs at the end of the run (past the last
    evaluation for a run the epoch cap stopped)?"""
    small = {"params": 100, "flops": np.array([1.0, 10.0]), "tokens": np.array([1, 2]), "val": np.array([2.0, 1.5]),
             "end_flops": 12.0, "end_tokens": 3}  # fmt: skip
    big = {"params": 1000, "flops": np.array([1.0, 10.0, 100.0]), "tokens": np.array([1, 2, 3]),
           "val": np.array([2.5, 1.0, 0.5]), "end_flops": 100.0, "end_tokens": 3}  # fmt: skip
    _, out = provided_cell("larger_models", monkeypatch, sweep={4: small, 8: big}, BUDGETS=[1.0, 10.0, 100.0])
    rows = {line.split()[0]: line.split()[2:] for line in out.splitlines()[2:4]}
    assert rows == {
        "4": ["2.000*", "1.500", "-", "1.500", "10", "12"],
        "8": ["2.500", "1.000*", "0.500*", "0.500", "100", "100"],
    }
    assert "last loss" in out.splitlines()[1] and "run ended" in out.splitlines()[1]


def test_data_cell_examples_follow_the_data_generator():
    """Does every example translation in the notebook's description of the data (ours and the handout's) agree
    with the generator's rules, and does the cell say that the handout's rules differ?"""
    import re

    from autograder.content.datagen.piglatin import pig_latin

    (text,) = [c.source for c in load("nmt").cells if c.cell_type == "markdown" and c.source.startswith("## Data")]
    examples = re.findall(r"\*([a-z]+)\* → \*([a-z]+)\*", text)
    assert len(examples) >= 10, examples
    wrong = [(en, pl, pig_latin(en)) for en, pl in examples if pig_latin(en) != pl]
    assert not wrong, f"expected the generator's translations, saw (word, notebook, generator) {wrong}"
    assert "not the ones in the original assignment's handout" in text
