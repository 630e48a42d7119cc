"""The released notebooks teach the method and leave the result to the student: no visible test prints the value
or the formula it checks, no provided cell holds a graded value, no text states a written answer's point.

Each test names the giveaway it guards against (issue 57): they read release/a3, what students get.
"""

import math
import re

import nbformat
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder import contract, paths


def release_cells(notebook):
    """The cells of release/a3/<notebook>.ipynb."""
    return nbformat.read(paths.RELEASE / f"{notebook}.ipynb", as_version=4).cells


def release_cell(notebook, grade_id):
    """The source of the released cell whose nbgrader grade_id is `grade_id`."""
    for cell in release_cells(notebook):
        if contract.nbgrader_meta(cell).get("grade_id") == grade_id:
            return cell.source
    raise AssertionError(f"release/a3/{notebook}.ipynb has no cell {grade_id!r}")


def release_text(notebook):
    """Every markdown cell of the released notebook, whitespace folded."""
    return " ".join(" ".join(c.source for c in release_cells(notebook) if c.cell_type == "markdown").split())


def visible_failure(notebook, grade_id, **names):
    """The one-line AssertionError the visible asserts of a released test cell raise with `names` defined."""
    source = release_cell(notebook, grade_id)
    namespace = {"np": np, "nn": nn, "torch": torch, "attempt": lambda fn, *args, what: fn(*args), **names}
    with pytest.raises(AssertionError) as failure:
        exec(compile(source, f"{notebook}:{grade_id}", "exec"), namespace)
    return str(failure.value)


@pytest.mark.parametrize(
    "wrong",
    [
        lambda V, H, L: 2 * V * H + 4 * L * H * H,  # no biases
        lambda V, H, L: 0,
        lambda V, H, L: 10**9,
    ],
    ids=["no-biases", "zero", "huge"],
)
def test_decoder_params_visible_failure_shows_neither_the_count_nor_the_formula(wrong):
    """Does a wrong decoder_params fail its visible test with a message that says too few or too many, without
    the expected count, and does the released test cell compute no formula of its own?"""
    message = visible_failure("nmt", "test_decoder_params", decoder_params=wrong)
    assert "counts too" in message
    assert not re.search(r"10,?333|374|3,?741", message), message
    source = release_cell("nmt", "test_decoder_params")
    assert "_H * _H" not in source and "_V * _H" not in source


def _log2_then_exp(logits, targets, pad_index):
    bits = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=pad_index)
    return math.exp(bits.item() / math.log(2))


@pytest.mark.parametrize(
    "wrong",
    [lambda logits, targets, pad_index: (logits.argmax(-1) == targets)[targets != pad_index].float().mean().item(),
     lambda logits, targets, pad_index: 1.0],
    ids=["accuracy", "one"],
)  # fmt: skip
def test_perplexity_visible_failure_shows_neither_the_value_nor_the_formula(wrong):
    """Does a wrong perplexity fail its visible test without being shown the perplexity equal logits should have
    (the vocabulary size, 30), and does the released test cell compute no perplexity of its own?"""
    names = {"set_seed": lambda seed=0: torch.manual_seed(seed), "VOCAB_SIZE": 30, "F": F, "math": math}
    message = visible_failure("nmt", "test_perplexity", perplexity=wrong, **names)
    assert "equal logits (every token equally likely) give" in message, message
    assert not re.search(r"\b30(\.0*)?\b", message), message
    source = release_cell("nmt", "test_perplexity")
    assert "cross_entropy" not in source and "log_softmax" not in source and ".exp(" not in source


def test_perplexity_visible_test_does_not_say_what_equal_logits_give():
    """Does the released test of perplexity no longer hold that equal logits give VOCAB_SIZE (the fact question
    N4(c) asks the student to explain)? A perplexity off by a power (log base 2, then exp: V^1.44 for equal logits)
    passes the visible part, which checks only that equal logits give one value above 1 whatever the batch; the
    hidden check catches it."""
    source = release_cell("nmt", "test_perplexity").split("### BEGIN HIDDEN TESTS")[0]
    assert "- VOCAB_SIZE" not in source and "== VOCAB_SIZE" not in source
    namespace = {"np": np, "nn": nn, "torch": torch, "F": F, "math": math, "VOCAB_SIZE": 30,
                 "attempt": lambda fn, *args, what: fn(*args), "set_seed": lambda seed=0: torch.manual_seed(seed),
                 "perplexity": _log2_then_exp}  # fmt: skip
    exec(compile(source, "nmt:test_perplexity", "exec"), namespace)  # no AssertionError: the value is not checked
    from autograder.checks import CheckFailed
    from autograder.checks.nmt import check_perplexity
    from tests.checks import notebook_cell

    log2_then_exp = notebook_cell(
        "import math\nimport torch.nn.functional as F\n",
        "def perplexity(logits, targets, pad_index):\n"
        "    bits = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),"
        " ignore_index=pad_index)\n"
        "    return math.exp(bits.item() / math.log(2))\n",
        "perplexity",
    )
    with pytest.raises(CheckFailed, match="the log is base 2 but the power is e"):
        check_perplexity(log2_then_exp)


@pytest.mark.parametrize("wrong", [lambda d: 1.0, lambda d: d, lambda d: np.sqrt(d - 1)], ids=["one", "d", "root-d-1"])
def test_layernorm_norm_visible_failure_does_not_show_the_norm(wrong):
    """Does a wrong layernorm_norm fail its visible test without being shown √d?"""
    message = visible_failure("theory", "test_layernorm_norm", layernorm_norm=wrong)
    assert "is not the norm of LN(x)" in message and "layernorm_norm(2)" in message
    assert "1.414" not in message, message  # √2: each wrong answer above fails at d = 2 first


def test_the_write_ups_conv_layer_holds_no_weights_of_the_answer():
    """Does the provided cell that tests the write-up's convolution hold no W_Q, W_K or W_V (the conv1d_layer
    answer's weights) and print no ⅔–⅓ weights (σ(ln 2))?"""
    source = release_cell("theory", "writeup_conv_claim")
    assert not re.search(r"W_[QKV]\"\s*:", source)
    assert "1 + np.exp(" not in source and "sigmoid" not in source.lower()
    assert "⅔" not in release_text("theory") and "tfrac23" not in release_text("theory")


def test_theory_text_does_not_name_the_knee_or_the_divergence_limit():
    """Does theory's text not say where C sits ("where perfect scaling meets the floor", the
    most_efficient_batch answer), nor state that SGD diverges past η = 2/a (question T4's answer), and does
    the steps plot compute no knee?"""
    text = release_text("theory")
    assert "meets the dotted floor" not in text and "where perfect scaling meets" not in text
    assert "2/a$ SGD diverges" not in text and "diverges whatever" not in text
    assert "knee" not in release_cell("theory", "steps_plot")


def test_layernorm_plot_title_states_no_answer():
    """Does the LayerNorm histogram's title not state question T8's point ("the norm depends on x")?"""
    assert "depends on x" not in release_cell("theory", "layernorm_affine_claim")


def test_nmt_text_gives_no_written_answer():
    """Does nmt's text not say that attention is order-blind (half of N1(a)), where the decoder jumps back in
    the heat map (N2(b)), or that the IsoFLOP losses form a valley and why (N7(a))?"""
    text = release_text("nmt")
    assert "as a *set*" not in text and "permuting the keys" not in text
    assert "jumps back" not in text
    assert "valley" not in text and "lack capacity" not in text


def test_bert_question_b1_does_not_give_what_remains():
    """Does question B1 not tell the student that the frozen encoder still processes every sentence (its
    `remains` item)?"""
    assert "still processes every sentence" not in release_text("bert")


def test_clip_todo_does_not_give_the_caption_questions_example():
    """Does the scavenger hunt's TODO not name what the target shares with another image (the woman in front
    of an American flag, question C1's `did-not` example)?"""
    assert "American flag" not in release_text("clip")


def test_theory_computes_no_ridge_closed_form_outside_the_graded_cell():
    """Does no released cell of theory hold the 1-D ridge weight in closed form (Σxt / (Σx² + 2nλ), the factor 2nλ
    that is ridge_closed_form's trap and gives eps_to_zero_logit at once), and does the ε plot find its weight
    numerically with the provided ridge_weight instead?"""
    for cell in release_cells("theory"):
        if cell.cell_type == "code":
            assert not re.search(r"\+\s*2\s*\*\s*(len\(\w+\)|n\w*)\s*\*\s*lam", cell.source), cell.source
            assert "np.sum(X_1d ** 2)" not in cell.source
    assert "ridge_weight(X_1d, t_1d, lam)" in release_cell("theory", "eps_plot")


def test_theory_text_does_not_state_the_weight_decay_contradiction():
    """Does 1.2.3 not tell the student that the printed answer contradicts itself or which half is wrong (question
    T2's `printed` item), nor call its derivation "wrong" before the student has tested it?"""
    text = release_text("theory")
    assert "contradicts itself" not in text and "At most one half" not in text and "*easier* to attack" not in text
    assert "wrong derivation" not in text and "wrong derivation" not in release_cell("theory", "eps_plot")


@pytest.mark.parametrize(
    "wrong",
    [{(0.5, -0.5), (-0.5, 0.5)}, {(2**-0.5, -(2**-0.5)), (-(2**-0.5), 2**-0.5)}, {(1.0, 0.0), (0.0, 1.0)}],
    ids=["half", "unit-norm", "not-centred"],
)
def test_layernorm_d2_visible_failure_does_not_state_what_every_output_has(wrong):
    """Does a wrong layernorm_d2 fail its visible test without being told that every output has mean 0 and mean
    square 1 (the key fact of 4.1, which gives layernorm_norm = √d), and does neither the released test cell nor
    Problem 4's text state it?"""
    message = visible_failure("theory", "test_layernorm_d2", layernorm_d2=wrong)
    assert "is not an output of LN" in message and "mean" not in message, message
    source = release_cell("theory", "test_layernorm_d2")
    assert "_a + _b" not in source and "** 2) / 2" not in source and "mean square" not in source
    assert "their mean and their mean square" not in release_text("theory")


def _offset_j_minus_i(q, k, v, p):  # relative attention with the offset the wrong way round
    scores = np.outer(q, k) + np.array([[p(j - i) for j in range(len(q))] for i in range(len(q))])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)) @ v


def test_relative_attention_visible_failure_does_not_say_which_neighbour_an_offset_picks():
    """Does relative attention with the offset reversed fail its visible test without being told that offset +1 is
    x_(i−1) (out_i averages v_i and v_(i−1): half of conv1d_layer), and does theory not hint at maxpool_layer's
    scores (near 900 = 30 · 30) in the TODO or the test cell?"""
    message = visible_failure("theory", "test_relative_attention", relative_attention=_offset_j_minus_i)
    assert "row i should average" in message, message
    assert not re.search(r"i\s*[−-]\s*1", message), message
    source = release_cell("theory", "test_relative_attention")
    assert not re.search(r"v_\(?i\s*[−-]\s*1", source) and "900" not in source and "30.0" not in source
    assert "900" not in release_text("theory")


def test_rnn_jacobian_visible_test_gives_neither_the_steepest_point_nor_the_bound():
    """Does the RNN test cell not say that every pre-activation is 0 where σ is steepest, does the text not state
    σ′(z) ≤ σ′(0), and does a wrong bound fail without being shown the value the test's W reaches (the answer,
    (σ_max/4)^(n − 1), at that point)?"""
    source = release_cell("theory", "test_rnn_jacobian_bound")
    assert "steepest" not in source and "pre-activation" not in source
    assert "never larger than $\\sigma'(0)$" not in release_text("theory")
    for wrong, hidden in ((lambda s, n: s ** (n - 1), "0.0625"), (lambda s, n: (s / 8) ** (n - 1), "0.0625")):
        message = visible_failure("theory", "test_rnn_jacobian_bound", rnn_jacobian_bound=wrong)
        assert "σ_max(W) = 1.0, n = 3" in message and hidden not in message and "0.062" not in message, message


@pytest.mark.parametrize(
    "wrong",
    [lambda ws: (0.0, float(np.sum(np.abs(ws)))), lambda ws: (0.0, float(np.max(np.abs(ws)))), lambda ws: (-1.0, 1.0)],
    ids=["sum-of-abs", "max-weight", "negative-lower"],
)
def test_relu_chain_visible_failure_does_not_show_the_range_of_the_slope(wrong):
    """Does a wrong relu_chain_grad_bound fail its visible test without being shown the range of |f′(x)| for the
    test's weights (0 and ∏|w_i| = 4.5: the answer for that input), only where its bounds fail or which one is
    not reached?"""
    message = visible_failure("theory", "test_relu_chain_grad_bound", relu_chain_grad_bound=wrong)
    assert "the bounds fail" in message or "not tight" in message, message
    assert "4.5" not in message and "ranges over" not in message, message
