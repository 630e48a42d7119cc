"""Hidden checks of theory.ipynb, proved both ways: they pass correct answers and fail realistic mistakes."""

import inspect
import math

import numpy as np
import pytest

from autograder.checks import theory as checks
from autograder.content.reference import theory as ref
from autograder.content.samples.theory import WRONG
from autograder.contract import GRADED
from tests.checks import failure, notebook_cell, run
from tests.checks import mutants_theory as M

CATALOGUE = M.CATALOGUE
CHECKS = {grade_id: getattr(checks, f"check_{grade_id}") for grade_id in CATALOGUE}
FUNCTIONS = [g for g in CATALOGUE if callable(getattr(ref, g))]


def cell(source, name):
    """Run `source` as a notebook cell (module __main__) and return the object named `name` it defines."""
    return notebook_cell(M.PRELUDE, source, name)


def reference_cell(name):
    """The reference answer, re-defined as if typed into the notebook."""
    return cell(inspect.getsource(ref), name)


def entries(which):
    return [
        pytest.param(grade_id, source, id=f"{grade_id}: {label}")
        for grade_id, pair in CATALOGUE.items()
        for label, source in pair[which]
    ]


def test_every_graded_cell_has_a_check():
    """Does every graded cell of theory in the contract have a check and a catalogue?"""
    assert set(CATALOGUE) == set(GRADED["theory"])


@pytest.mark.parametrize("grade_id", list(CATALOGUE))
def test_reference_passes(grade_id):
    """Does the check pass the reference answer and print exactly one PASSED line?"""
    assert run(CHECKS[grade_id], reference_cell(grade_id)) == f"PASSED {grade_id}\n"


@pytest.mark.parametrize("grade_id, source", entries(0))
def test_correct_alternative_passes(grade_id, source):
    """Does the check accept this correct alternative?"""
    assert run(CHECKS[grade_id], cell(source, grade_id)) == f"PASSED {grade_id}\n"


@pytest.mark.parametrize("grade_id, source", entries(1))
def test_mutant_fails(grade_id, source, capsys):
    """Does the check reject this realistic mistake with one line and nothing on stderr?"""
    message = failure(CHECKS[grade_id], cell(source, grade_id))
    assert message.startswith(f"{grade_id}: ") and "\n" not in message, message
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("grade_id", list(CATALOGUE))
def test_sample_wrong_answer_fails(grade_id):
    """Does the demo's sample wrong answer for this cell lose its point?"""
    failure(CHECKS[grade_id], cell(WRONG[grade_id], grade_id))


def test_at_least_six_mutants_per_cell():
    """Does every check face at least six realistic mistakes?"""
    assert all(len(mutants) >= 6 for _, mutants in CATALOGUE.values())


@pytest.mark.parametrize("grade_id", FUNCTIONS)
def test_imported_reference_is_rejected(grade_id):
    """Does the check refuse a function imported from the autograder instead of written in the notebook?"""
    assert "must be defined in this notebook" in failure(CHECKS[grade_id], getattr(ref, grade_id))


@pytest.mark.parametrize(
    "grade_id, label, expected",
    [
        ("counterexample_w", "max entry is 1", "pick w whose largest entry is not 1"),
        ("counterexample_w", "mixed signs", "every entry of counterexample_w should be positive"),
        ("logit_after_fgsm", "FGM formula", "that is the FGM logit"),
        ("logit_after_fgsm", "sum without abs", "sgn(w)ᵀw = Σ|wᵢ|"),
        ("logit_after_fgsm", "returns x'", "should return one number (the logit f(x′)), got an array of shape (5,)"),
        ("logit_after_fgsm", "in place", "should leave x unchanged"),
        ("logit_after_fgm", "norm not squared", "you subtracted ε‖w‖₂"),
        ("logit_after_fgm", "FGSM formula", "that is the FGSM logit"),
        ("ridge_closed_form", "LLM answer n lambda", "the printed model answer"),
        ("ridge_closed_form", "lambda without n", "(XᵀX + λI)⁻¹Xᵀt"),
        ("ridge_closed_form", "1/n on one side only", "divide Xᵀt by n too"),
        ("ridge_closed_form", "column vector", "should return shape (d,) = (3,), got (3, 1)"),
        ("ridge_closed_form", "torch result", "should return a numpy array"),
        ("eps_to_zero_logit", "handout derivation", "plausible wrong derivation"),
        ("eps_to_zero_logit", "ridge with n lambda", "nλ instead of 2nλ"),
        ("eps_to_zero_logit", "x over w squared", "that is x / w²"),
        ("eps_fgsm_to_zero_logit", "|x| times (1 + 2 lambda)", "that is |x|(1 + 2λ)"),
        ("eps_fgsm_to_zero_logit", "FGM answer x over w", "that is the FGM answer x / w"),
        ("eps_fgsm_to_zero_logit", "x without abs", "here w < 0 and x < 0"),
        ("eps_fgsm_to_zero_logit", "minus x sgn w", "the sign is flipped"),
        ("eps_fgsm_to_zero_logit", "1-D X passed to ridge_closed_form", "your code raised ValueError"),
        ("nqm_expected_loss", "lr not squared on noise", "η²σ²/B, not ησ²/B"),
        ("nqm_expected_loss", "no batch size", "divided by the batch size"),
        ("nqm_expected_loss", "decay not squared", "(1 − ηa)² per step"),
        ("nqm_expected_loss", "off by one", "off by one"),
        ("nqm_expected_loss", "no half a", "that is E[w²]"),
        ("best_learning_rate", "returns index", "position of the best learning rate"),
        ("best_learning_rate", "batch size ignored", "pass batch_size on"),
        ("regimes", "pair in the wrong order", "(regime, remedy) in that order"),
        ("regimes", "own wording", "should be one of ['noise dominated', 'curvature dominated']"),
        ("regimes", "remedies swapped", "the remedy of A and the remedy of B are not right"),
        ("most_efficient_batch", "B", "'B' (the large-batch end): that is not the best trade-off"),
        ("most_efficient_batch", "text only", "should be the option's letter"),
        ("most_efficient_batch", "batch size", "should be one of 'A', 'B' or 'C', got '128'"),
        ("scaling_choice", "text only", "should be the option's letter"),
        ("relu_chain_grad_bound", "product without abs", "∏w_i without absolute values"),
        ("relu_chain_grad_bound", "max weight", "that is max|w_i|"),
        ("relu_chain_grad_bound", "always 1", "1 holds only when every |w_i| = 1"),
        ("relu_chain_grad_bound", "sum of abs", "your upper is above it"),
        ("relu_chain_grad_bound", "negative lower bound", "expected lower = 0, got -1"),
        ("relu_chain_grad_bound", "upper only", "should return a pair (lower, upper)"),
        ("rnn_jacobian_bound", "no quarter", "σ′ ≤ ¼"),
        ("rnn_jacobian_bound", "n steps", "the bound fails"),
        ("rnn_jacobian_bound", "slope one half", "at most ¼, not ½"),
        ("rnn_jacobian_bound", "quarter once", "once per step"),
        ("rnn_jacobian_bound", "loop one short", "holds but is looser than"),
        ("relative_attention", "softmax over i", "it should run over j"),
        ("relative_attention", "offset j minus i", "the offsets are j − i"),
        ("relative_attention", "no max subtraction", "subtract each row's largest score"),
        ("relative_attention", "p ignored", "p was not added"),
        ("relative_attention", "weights transposed", "the weights are transposed"),
        ("relative_attention", "returns the weights", "should return shape (n,) = (7,), got (7, 7)"),
        ("relative_attention", "changes q in place", "should leave q unchanged"),
        ("conv1d_layer", "write-up answer", "0.6·x_(i−1) + 0·x_i + 2.4·x_(i+1)"),
        ("conv1d_layer", "offsets flipped", "the offsets are flipped"),
        ("conv1d_layer", "sigmoid for softmax", "the logistic sigmoid of ln 2"),
        ("conv1d_layer", "W_V = 1", "coefficients sum to W_V = 1"),
        ("conv1d_layer", "other offsets 0", "p should be −inf at every offset other than ±1"),
        ("conv1d_layer", "W_Q W_K = 1", "a convolution's weights do not"),
        ("conv1d_layer", "p without a default", "raised KeyError"),
        ("maxpool_layer", "write-up answer", "close to the window's mean"),
        ("maxpool_layer", "negative scale", "that is min pooling"),
        ("maxpool_layer", "no window", "the maximum over the whole sequence"),
        ("maxpool_layer", "window fixed at 3", "that is max pooling of width 3"),
        ("maxpool_layer", "C = 3", "not sharp enough"),
        ("maxpool_layer", "W_V = C", "W_V scales the output"),
        ("maxpool_layer", "tuple", "should be a dict"),
    ],
)
def test_failure_message_names_the_mistake(grade_id, label, expected):
    """Does the one-line failure say what was expected and name the likely mistake?"""
    source = dict(CATALOGUE[grade_id][1])[label]
    assert expected in failure(CHECKS[grade_id], cell(source, grade_id))


def test_crash_in_student_code_is_one_line():
    """Does a crash inside the student's function become a one-line failure naming the exception?"""
    broken = cell(
        "def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):\n    raise NotImplementedError()\n",
        "nqm_expected_loss",
    )
    assert failure(checks.check_nqm_expected_loss, broken) == "nqm_expected_loss: your code raised NotImplementedError:"


def test_patched_numpy_does_not_change_the_expected_answer(monkeypatch):
    """If a notebook patches np.linalg.solve, is the ridge check's expected answer still right?"""
    wrong = cell(dict(M.RIDGE_MUTANTS)["LLM answer n lambda"], "ridge_closed_form")
    monkeypatch.setattr(np.linalg, "solve", lambda A, b: np.zeros(A.shape[1]))
    failure(checks.check_ridge_closed_form, reference_cell("ridge_closed_form"))  # the patch breaks the student
    monkeypatch.undo()
    failure(checks.check_ridge_closed_form, wrong)


def test_eps_check_lends_the_reference_ridge():
    """Is eps_to_zero_logit judged on its own, even when the notebook's ridge_closed_form is wrong?"""
    namespace = {"__name__": "__main__"}
    exec(
        M.PRELUDE + dict(M.RIDGE_MUTANTS)["LLM answer n lambda"] + dict(M.EPS_CORRECT)["uses ridge_closed_form"],
        namespace,
    )
    assert run(checks.check_eps_to_zero_logit, namespace["eps_to_zero_logit"]) == "PASSED eps_to_zero_logit\n"
    assert namespace["ridge_closed_form"].__module__ == "__main__"  # the lent reference was taken back


def test_fgsm_eps_check_lends_the_reference_ridge():
    """Is eps_fgsm_to_zero_logit judged on its own, even when the notebook's ridge_closed_form is wrong?"""
    namespace = {"__name__": "__main__"}
    exec(
        M.PRELUDE + dict(M.RIDGE_MUTANTS)["LLM answer n lambda"] + dict(M.EPS_FGSM_CORRECT)["uses ridge_closed_form"],
        namespace,
    )
    result = run(checks.check_eps_fgsm_to_zero_logit, namespace["eps_fgsm_to_zero_logit"])
    assert result == "PASSED eps_fgsm_to_zero_logit\n"
    assert namespace["ridge_closed_form"].__module__ == "__main__"  # the lent reference was taken back


def test_best_lr_check_lends_the_reference_nqm():
    """Is best_learning_rate judged on its own, even when the notebook has no working nqm_expected_loss?"""
    namespace = {"__name__": "__main__"}
    exec(M.PRELUDE + dict(M.BEST_LR_CORRECT)["min with a key"], namespace)  # nqm_expected_loss never defined
    assert run(checks.check_best_learning_rate, namespace["best_learning_rate"]) == "PASSED best_learning_rate\n"
    assert "nqm_expected_loss" not in namespace


# ---------------------------------------------------------------- the facts the checks rest on


def test_nqm_reference_matches_monte_carlo():
    """Does the moment recursion agree with simulated SGD on the NQM (within four standard errors)?"""
    rng = np.random.default_rng(0)
    for lr, batch, a, sigma, w0, steps in checks.NQM_CASES:
        w = np.full(200_000, float(w0))
        for _ in range(steps):
            w = w - lr * (a * w + rng.normal(0.0, sigma / math.sqrt(batch), size=w.shape))
        losses = 0.5 * a * w**2
        error = losses.std() / math.sqrt(losses.size)
        assert abs(losses.mean() - ref.nqm_expected_loss(lr, batch, a, sigma, w0, steps)) <= 4 * error + 1e-12


def test_ridge_reference_zeroes_the_gradient():
    """Is the reference ridge solution a stationary point of 1/(2n)‖Xw − t‖² + λ‖w‖²?"""
    for X, t, lam in checks._ridge_cases():
        w = ref.ridge_closed_form(X, t, lam)
        grad = X.T @ (X @ w - t) / len(t) + 2 * lam * w
        assert np.abs(grad).max() < 1e-10


def test_fgsm_reference_matches_autograd():
    """Do the closed forms wᵀx − ε‖w‖₁ and wᵀx − ε‖w‖₂² match attacks computed with autograd?"""
    for x, w, eps in checks._attack_cases():
        assert math.isclose(ref.logit_after_fgsm(x, w, eps), checks._autograd_logit(x, w, eps, True), rel_tol=1e-12)
        assert math.isclose(ref.logit_after_fgm(x, w, eps), checks._autograd_logit(x, w, eps, False), rel_tol=1e-12)


def test_fgsm_eps_reference_zeroes_the_logit_whatever_lambda():
    """Does the reference FGSM ε zero the logit after a step computed with autograd, for every λ, and stay the same
    as λ grows while the FGM ε = x / w grows (the contrast 1.2.4 teaches)?"""
    for x, X, t, _ in checks._eps_cases():
        eps = [ref.eps_fgsm_to_zero_logit(x, X, t, lam) for lam in (0.01, 0.1, 1.0, 10.0)]
        fgm = [ref.eps_to_zero_logit(x, X, t, lam) for lam in (0.01, 0.1, 1.0, 10.0)]
        assert max(eps) == min(eps) == abs(x)
        assert all(abs(a) < abs(b) for a, b in zip(fgm, fgm[1:]))
        w = ref.ridge_closed_form(X[:, None], t, 0.1)  # (1,)
        logit = checks._autograd_logit(np.array([x]), w, eps[0], signed=True)
        assert abs(logit) < 1e-12


def test_most_efficient_batch_is_the_knee_of_the_notebook_curve():
    """On the notebook's NQM curve, does doubling the batch still about halve the steps below C = 128 and buy
    almost nothing above it (so C is the knee, A = 2 on the perfect-scaling part and B = 8192 on the floor)?"""
    h = 1 / np.arange(1, 11)
    target = 0.01 * h.sum() / 2
    curve = {
        b: ref.steps_to_target(b, np.geomspace(0.01, 1.9, 16), h, np.sqrt(h), np.ones(10), target, 4096)
        for b in (2, 4, 32, 64, 128, 256, 512, 4096, 8192)
    }
    assert curve[4] / curve[2] < 0.55 and curve[64] / curve[32] < 0.6  # before the knee: time is left on the table
    assert curve[512] / curve[256] > 0.85 and curve[8192] / curve[4096] > 0.95  # beyond it: compute buys little
    knee = curve[2] * 2 / min(curve.values())  # perfect scaling from A meets the floor
    assert 64 < knee < 256, knee


def test_best_lr_cases_depend_on_batch_size():
    """Do the best-lr cases really tell batch sizes apart (so ignoring batch_size cannot pass)?"""
    first, second = checks.BEST_LR_CASES[:2]
    assert ref.best_learning_rate(*first) != ref.best_learning_rate(*second)


def test_steps_to_target_has_both_regimes():
    """Does the notebook's NQM curve halve the steps per doubling at point A and flatten out at point B?"""
    h = 1 / np.arange(1, 31)
    curve = {
        b: ref.steps_to_target(b, np.geomspace(1e-3, 1.9, 40), h, np.sqrt(h), np.ones(30), 0.01 * h.sum() / 2, 100_000)
        for b in (2, 4, 4096, 8192)
    }
    assert curve[4] / curve[2] < 0.55  # noise dominated: doubling B almost halves the steps
    assert curve[8192] / curve[4096] > 0.9  # curvature dominated: more data per step no longer helps


# ---------------------------------------------------------------- problem 3: the facts the checks rest on


def test_relu_chain_bounds_are_reached_by_autograd():
    """On every check chain, does autograd reach both 0 and ∏|w_i| (so a looser or tighter answer must fail)?"""
    for ws in checks._relu_chain_cases():
        _, slopes = checks._relu_chain_slopes(ws)
        assert min(slopes) == 0.0
        assert math.isclose(max(slopes), float(np.prod(np.abs(ws))), rel_tol=1e-12)


def test_rnn_bound_is_reached_and_holds():
    """Does the tight W reach (σ_max/4)^(n−1) exactly, and do random W stay below it (by autograd)?"""
    for s, n in checks.RNN_CASES:
        W, x1 = checks._tight_rnn(s)
        assert np.isclose(np.linalg.svd(W, compute_uv=False)[0], s)
        assert math.isclose(checks._rnn_jacobian_norm(W, x1, n), ref.rnn_jacobian_bound(s, n), rel_tol=1e-9)
        for seed in range(3):
            W, x1 = checks._random_rnn(s, seed)
            assert np.allclose(W, W.T) is False  # the write-up's U Σ^(n−1) Vᵀ step would not apply
            assert checks._rnn_jacobian_norm(W, x1, n) <= ref.rnn_jacobian_bound(s, n) * (1 + 1e-12)


def test_svd_power_step_is_false_for_a_non_symmetric_w():
    """Is the write-up's step W^(n−1) = UΣ^(n−1)Vᵀ false for a random W, while σ_max(W^(n−1)) ≤ σ_max(W)^(n−1)?"""
    W = np.random.default_rng(4).normal(size=(4, 4))
    U, S, Vt = np.linalg.svd(W)
    assert np.abs(np.linalg.matrix_power(W, 3) - U @ np.diag(S**3) @ Vt).max() > 0.1
    assert np.linalg.norm(np.linalg.matrix_power(W, 3), 2) <= S[0] ** 3


def test_check_attention_is_the_reference():
    """Is the checks' own relative attention (captured numpy) the reference relative_attention on every case?"""
    for _, q, k, v, table, default in checks._attention_cases():
        p = checks._offset_function(table, default)
        bias = {m: table.get(m, default) for m in range(-(len(q) - 1), len(q))}
        assert np.allclose(checks._attend(q, k, v, bias), ref.relative_attention(q, k, v, p), rtol=1e-12, atol=1e-12)


def test_reference_layers_compute_convolution_and_max_pooling():
    """Does the reference conv layer give 2x_(i−1) + x_(i+1) exactly, and the max-pooling one max pooling within
    0.002 for k = 1, 2, 3 on every check input, the worst cases included (SPEC: within 0.01)?"""
    for x in checks._conv_inputs():
        y = checks._run_layer(checks._layer_parts(reference_cell("conv1d_layer"), "conv1d_layer", len(x)), x)
        assert np.abs(y[1:-1] - (2 * x[:-2] + x[2:])).max() < 1e-12
    for k in (1, 2, 3):
        for _, x in checks._pool_inputs():
            y = checks._run_layer(checks._layer_parts(reference_cell("maxpool_layer")(k), "maxpool_layer", len(x)), x)
            assert np.abs(y[k:-k] - checks._pool(x, k, np.max)[k:-k]).max() < 2e-3


def test_write_up_answers_miss_by_the_documented_margins():
    """Does the write-up's conv layer miss by 1.31 on x ~ U[0, 1]^12 and its max-pooling layer by about 0.2?"""
    x = np.random.default_rng(0).uniform(0, 1, size=12)
    conv = cell(dict(M.CONV_MUTANTS)["write-up answer"], "conv1d_layer")
    y = checks._run_layer(checks._layer_parts(conv, "conv1d_layer", 12), x)
    assert round(float(np.abs(y[1:-1] - (2 * x[:-2] + x[2:])).max()), 2) == 1.31
    pool = cell(dict(M.MAXPOOL_MUTANTS)["write-up answer"], "maxpool_layer")
    for k in (1, 2):
        _, x = checks._pool_inputs()[0]
        y = checks._run_layer(checks._layer_parts(pool(k), "maxpool_layer", len(x)), x)
        assert 0.15 < np.abs(y[k:-k] - checks._pool(x, k, np.max)[k:-k]).max() < 0.3


def test_layer_checks_do_not_use_the_notebooks_relative_attention():
    """Are conv1d_layer and maxpool_layer judged by the reference attention, whatever the notebook's
    relative_attention does (one cell, one grade)?"""
    namespace = {"__name__": "__main__"}
    exec(
        M.PRELUDE
        + dict(M.ATTENTION_MUTANTS)["offset j minus i"]
        + dict(M.CONV_CORRECT)["dict lookup"]
        + dict(M.MAXPOOL_CORRECT)["C = 30"],
        namespace,
    )
    assert run(checks.check_conv1d_layer, namespace["conv1d_layer"]) == "PASSED conv1d_layer\n"
    assert run(checks.check_maxpool_layer, namespace["maxpool_layer"]) == "PASSED maxpool_layer\n"


def test_conv_layer_with_the_graders_offsets_is_rejected():
    """Does the conv check refuse a layer whose p is imported from the autograder?"""
    layer = {**ref.conv1d_layer}
    assert "must be defined in this notebook" in failure(checks.check_conv1d_layer, layer)
