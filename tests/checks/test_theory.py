"""Hidden checks of theory.ipynb, proved both ways: they pass correct answers and fail realistic mistakes."""

import inspect
import math

import nbformat
import numpy as np
import pytest

from autograder.checks import theory as checks
from autograder.content.reference import theory as ref
from autograder.content.samples.theory import WRONG
from autograder.paths import SOURCE
from tests.checks import failure, notebook_cell, run
from tests.checks import mutants_theory as M
from tests.checks.harness import CatalogueTests

CATALOGUE = M.CATALOGUE
CHECKS = {grade_id: CATALOGUE.check(grade_id) for grade_id in CATALOGUE}


def cell(source, name):
    """Run `source` as a notebook cell (module __main__) and return the object named `name` it defines."""
    return notebook_cell(M.PRELUDE, source, name)


def source_cell(cell_id):
    """The source of the cell with id `cell_id` in source/a3/theory.ipynb."""
    nb = nbformat.read(SOURCE / "theory.ipynb", as_version=4)
    (found,) = [c.source for c in nb.cells if c.get("id") == cell_id]
    return found


def reference_cell(name):
    """The reference answer, re-defined as if typed into the notebook."""
    return cell(inspect.getsource(ref), name)


class TestCatalogue(CatalogueTests):
    """Every check against the reference and every answer of tests/checks/mutants_theory.py (harness.py)."""

    catalogue = CATALOGUE


@pytest.mark.parametrize("grade_id", list(CATALOGUE))
def test_sample_wrong_answer_fails(grade_id):
    """Does the demo's sample wrong answer for this cell lose its point?"""
    failure(CHECKS[grade_id], cell(WRONG[grade_id], grade_id))


def test_crash_in_student_code_is_one_line():
    """Does a crash inside the student's function become a one-line failure naming the exception?"""
    broken = cell(
        "def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):\n    raise NotImplementedError()\n",
        "nqm_expected_loss",
    )
    assert failure(checks.check_nqm_expected_loss, broken) == "nqm_expected_loss: your code raised NotImplementedError:"


def test_patched_numpy_does_not_change_the_expected_answer(monkeypatch):
    """If a notebook patches np.linalg.solve, is the ridge check's expected answer still right?"""
    wrong = cell(CATALOGUE["ridge_closed_form"].mutant("LLM answer n lambda"), "ridge_closed_form")
    monkeypatch.setattr(np.linalg, "solve", lambda A, b: np.zeros(A.shape[1]))
    failure(checks.check_ridge_closed_form, reference_cell("ridge_closed_form"))  # the patch breaks the student
    monkeypatch.undo()
    failure(checks.check_ridge_closed_form, wrong)


def test_eps_check_lends_the_reference_ridge():
    """Is eps_to_zero_logit judged on its own, even when the notebook's ridge_closed_form is wrong?"""
    namespace = {"__name__": "__main__"}
    exec(
        M.PRELUDE
        + CATALOGUE["ridge_closed_form"].mutant("LLM answer n lambda")
        + CATALOGUE["eps_to_zero_logit"].alternative("uses ridge_closed_form"),
        namespace,
    )
    assert run(checks.check_eps_to_zero_logit, namespace["eps_to_zero_logit"]) == "PASSED eps_to_zero_logit\n"
    assert namespace["ridge_closed_form"].__module__ == "__main__"  # the lent reference was taken back


def test_fgsm_eps_check_lends_the_reference_ridge():
    """Is eps_fgsm_to_zero_logit judged on its own, even when the notebook's ridge_closed_form is wrong?"""
    namespace = {"__name__": "__main__"}
    exec(
        M.PRELUDE
        + CATALOGUE["ridge_closed_form"].mutant("LLM answer n lambda")
        + CATALOGUE["eps_fgsm_to_zero_logit"].alternative("uses ridge_closed_form"),
        namespace,
    )
    result = run(checks.check_eps_fgsm_to_zero_logit, namespace["eps_fgsm_to_zero_logit"])
    assert result == "PASSED eps_fgsm_to_zero_logit\n"
    assert namespace["ridge_closed_form"].__module__ == "__main__"  # the lent reference was taken back


def test_best_lr_check_lends_the_reference_nqm():
    """Is best_learning_rate judged on its own, even when the notebook has no working nqm_expected_loss?"""
    namespace = {"__name__": "__main__"}
    alternative = CATALOGUE["best_learning_rate"].alternative("min with a key")
    exec(M.PRELUDE + alternative, namespace)  # nqm_expected_loss never defined
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
    0.002 for k = 1, 2, 3 and within 0.006 for every k up to 50 on every check input, the worst cases included (the
    TODO's promise: within 0.01)?"""
    for x in checks._conv_inputs():
        y = checks._run_layer(checks._layer_parts(reference_cell("conv1d_layer"), "conv1d_layer", len(x)), x)
        assert np.abs(y[1:-1] - (2 * x[:-2] + x[2:])).max() < 1e-12
    for k in checks.MAXPOOL_KS:
        for _, x in checks._pool_inputs(k):
            y = checks._run_layer(checks._layer_parts(reference_cell("maxpool_layer")(k), "maxpool_layer", len(x)), x)
            assert np.abs(y[k:-k] - checks._pool(x, k, np.max)[k:-k]).max() < (2e-3 if k <= 3 else 6e-3)


def test_maxpool_check_covers_the_promise_of_the_todo():
    """Does the maxpool check test every k from 1 to 50, as the TODO promises ("for every k from 1 to 50"), on
    sequences long enough to have an interior for each, and does the promise's end matter: is the reference's worst
    error at k = 50 (0.0058) well above its error at k = 3 (0.0017), so a layer only sharp enough for small k fails?"""
    assert checks.MAXPOOL_KS == tuple(range(1, 51))
    todo = " ".join(source_cell("p3-maxpool-todo").split())
    assert "for every $k$ from 1 to 50" in todo and "an int from 1 to 50" in todo
    layer = reference_cell("maxpool_layer")

    def worst(k):
        errors = []
        for _, x in checks._pool_inputs(k):
            assert len(x) - 2 * k >= 14
            y = checks._run_layer(checks._layer_parts(layer(k), "maxpool_layer", len(x)), x)
            errors.append(np.abs(y[k:-k] - checks._pool(x, k, np.max)[k:-k]).max())
        return max(errors)

    assert worst(50) > 3 * worst(3)


def test_maxpool_failure_shows_expected_and_got_apart():
    """Does a layer that misses by just over 0.01 read as two different numbers ("expected 1, got 0.9899")?"""
    message = failure(
        CHECKS["maxpool_layer"], cell(CATALOGUE["maxpool_layer"].mutant("C = 20, fine for k <= 20"), "maxpool_layer")
    )
    assert "maxpool_layer(21)" in message and "(expected 1, got 0.9899)" in message, message


def test_write_up_answers_miss_by_the_documented_margins():
    """Does the write-up's conv layer miss by 1.31 on x ~ U[0, 1]^12 and its max-pooling layer by about 0.2?"""
    x = np.random.default_rng(0).uniform(0, 1, size=12)
    conv = cell(CATALOGUE["conv1d_layer"].mutant("write-up answer"), "conv1d_layer")
    y = checks._run_layer(checks._layer_parts(conv, "conv1d_layer", 12), x)
    assert round(float(np.abs(y[1:-1] - (2 * x[:-2] + x[2:])).max()), 2) == 1.31
    pool = cell(CATALOGUE["maxpool_layer"].mutant("write-up answer"), "maxpool_layer")
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
        + CATALOGUE["relative_attention"].mutant("offset j minus i")
        + CATALOGUE["conv1d_layer"].alternative("dict lookup")
        + CATALOGUE["maxpool_layer"].alternative("C = 30"),
        namespace,
    )
    assert run(checks.check_conv1d_layer, namespace["conv1d_layer"]) == "PASSED conv1d_layer\n"
    assert run(checks.check_maxpool_layer, namespace["maxpool_layer"]) == "PASSED maxpool_layer\n"


def test_conv_layer_with_the_graders_offsets_is_rejected():
    """Does the conv check refuse a layer whose p is imported from the autograder?"""
    layer = {**ref.conv1d_layer}
    assert "must be defined in this notebook" in failure(checks.check_conv1d_layer, layer)


# ------------------------------------------------------------------ the forms LayerNorm's two cells accept

_FORMS = {"layernorm_norm": M.LAYERNORM_NORM_FORMS, "layernorm_d2": M.LAYERNORM_D2_FORMS}


def _forms(kind):
    return [
        pytest.param(grade_id, source, id=f"{grade_id}: {label}")
        for grade_id, forms in _FORMS.items()
        for label, source in forms.get(kind, {}).items()
    ]


@pytest.mark.parametrize("grade_id, source", _forms("accepted"))
def test_layernorm_check_accepts_every_container_and_number_of_the_family(grade_id, source):
    """Does the hidden check pass every form of the right answer its visible test accepts too (sets, frozensets,
    lists, tuples, (m, 2) arrays and tensors; ints, floats, numpy numbers, one-element arrays and tensors)?"""
    assert run(CHECKS[grade_id], cell(source, grade_id)) == f"PASSED {grade_id}\n"


@pytest.mark.parametrize("grade_id, source", _forms("rejected") + _forms("incomplete"))
def test_layernorm_check_rejects_what_is_not_in_the_family(grade_id, source):
    """Does the hidden check reject, in one line, text, bools, lists for numbers, a lone pair, flat or 3-D arrays,
    wrong values and the incomplete set?"""
    message = failure(CHECKS[grade_id], cell(source, grade_id))
    assert message.startswith(f"{grade_id}: ") and "\n" not in message, message
