"""Hidden checks for theory.ipynb: one per graded cell, each called by that cell's hidden test region.

Expected values are computed here with Python floats and with numpy functions captured when this module is
imported (before any student code runs), so patching numpy in a notebook changes nothing. Attacks are checked
against an FGSM/FGM step computed with autograd; the NQM against its moment recursion.
"""

import math
import os
import re
import types

import numpy as np
import torch

from autograder.checks import (
    CheckFailed,
    check,
    differing,
    digits_to_differ,
    is_tensor,
    pristine,
    require_notebook_defined,
    substituted,
)
from autograder.content.reference import theory as ref
from autograder.text import one_line

_np = types.SimpleNamespace(
    asarray=np.asarray,
    solve=np.linalg.solve,
    eye=np.eye,
    isfinite=np.isfinite,
    isnan=np.isnan,
    sign=np.sign,
    array_equal=np.array_equal,
    default_rng=np.random.default_rng,
    ndarray=np.ndarray,
    integer=np.integer,
    floating=np.floating,
    bool_=np.bool_,
    exp=np.exp,
    log=np.log,
    outer=np.outer,
    arange=np.arange,
    abs=np.abs,
    prod=np.prod,
    vectorize=np.vectorize,
    linspace=np.linspace,
    int_=int,  # the builtin, captured before student code runs like the numpy functions
)

# ------------------------------------------------------------------------------------------ helpers


def _number(got, call, what):
    """`got` as a Python float: a real number, or a 0-d / one-element array or tensor; else CheckFailed."""
    kind = pristine.type(got)
    if kind is bool or pristine.isinstance(got, _np.bool_):
        raise CheckFailed(f"{call} should return a float ({what}), got a bool")
    if pristine.isinstance(got, (int, float, _np.integer, _np.floating)):
        return pristine.float(got)
    if pristine.isinstance(got, _np.ndarray) or is_tensor(got):
        shape = tuple(got.shape)
        if math.prod(shape) == 1 and _real_dtype(got):
            return pristine.float(got.reshape(-1)[0])
        if math.prod(shape) == 1:
            raise CheckFailed(f"{call} should return one real number ({what}), got an array of dtype {got.dtype}")
        raise CheckFailed(f"{call} should return one number ({what}), got an array of shape {shape}")
    if pristine.isinstance(got, (list, tuple)):
        raise CheckFailed(
            f"{call} should return one number ({what}), got a {kind.__name__} of length {pristine.len(got)}"
        )
    raise CheckFailed(f"{call} should return a float ({what}), got {kind.__name__}")


def _real_dtype(array):
    """True for a numpy array or tensor of integers or floats (not bool, complex, text or objects)."""
    if is_tensor(array):
        return not (array.dtype.is_complex or array.dtype == torch.bool)
    return array.dtype.kind in "iuf"


def _close(a, b, rel=1e-6, abs_=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def _hint(got, candidates):
    """The hint of the first wrong-but-common value that `got` matches, else ''."""
    for value, hint in candidates:
        if value is not None and math.isfinite(value) and _close(got, value):
            return f"; {hint}"
    return ""


def _rng(seed):
    return _np.default_rng(seed)


def _expect_unchanged(before, after, name, call):
    if not _np.array_equal(before, after):
        raise CheckFailed(f"{call} should leave {name} unchanged, but it was modified in place")


def _fmt(values):
    return "[" + ", ".join(f"{v:.4g}" for v in values) + "]"


# Problems 3 and 4's numeric answers are judged to a relative 1e-6, as their visible checks do: a correct answer
# computed in float32 (about 6e-8 relative error) passes, and every mistake the catalogues know is off by far more.
ANSWER_RTOL = 1e-6


# ------------------------------------------------------------------------------------------ 1.1 attacks


@check("counterexample_w")
def check_counterexample_w(w) -> None:
    """A vector with all entries positive for which ‖ε sgn(w)‖∞ ≠ ‖ε w‖∞, i.e. max|w_i| ≠ 1."""
    if pristine.isinstance(w, (str, bytes, dict, set)) or w is None:
        raise CheckFailed(f"counterexample_w should be a numpy vector of numbers, got {pristine.type(w).__name__}")
    try:
        values = _np.asarray(w.detach().cpu() if is_tensor(w) else w)
    except Exception:  # noqa: BLE001 - ragged lists and other non-arrays
        raise CheckFailed("counterexample_w should be a numpy vector of numbers, e.g. np.array([...])") from None
    if values.dtype.kind not in "iuf":
        raise CheckFailed(f"counterexample_w should hold real numbers, got dtype {values.dtype}")
    if values.ndim != 1 or values.size == 0:
        raise CheckFailed(f"counterexample_w should be a non-empty 1-D vector, got shape {values.shape}")
    values = values.astype(float)
    if not bool(_np.isfinite(values).all()):
        raise CheckFailed(f"counterexample_w should hold finite numbers, got {values.tolist()}")
    if not bool((values > 0).all()):
        raise CheckFailed(
            f"every entry of counterexample_w should be positive (the claim is about such w), got {_fmt(values)}"
        )
    eps = 0.1
    sign_norm, grad_norm = eps * 1.0, eps * pristine.float(values.max())
    if _close(sign_norm, grad_norm, rel=1e-9, abs_=1e-12):
        raise CheckFailed(
            f"with w = {_fmt(values)}, ‖ε sgn(w)‖∞ = ε and ‖ε w‖∞ = ε·max|w_i| = ε agree, so this "
            f"is no counterexample; pick w whose largest entry is not 1"
        )


def _attack_cases():
    """(x, w, eps) triples: mixed signs, a zero weight, all-negative weights, ε below and above 1."""
    rng = _rng(7)
    w1 = _np.asarray([1.5, -0.5, 2.0, -3.0, 0.25])
    w2 = _np.asarray([0.0, 2.0, -1.0])
    w3 = -rng.uniform(0.5, 2.0, size=4)
    return [(rng.normal(size=5) + w1, w1, 0.1), (rng.normal(size=3), w2, 0.5), (-w3 * 2, w3, 2.0)]


def _autograd_logit(x, w, eps, signed):
    """f(x') after one attack step x' = x − ε·(sgn of) ∇ₓf, with the gradient from autograd (float64)."""
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    wt = torch.tensor(w, dtype=torch.float64)
    (wt @ xt).backward()
    step = xt.grad.sign() if signed else xt.grad  # (d,)
    return pristine.float(pristine.tensor_item(wt @ (xt.detach() - eps * step)))


def _check_attack(fn, name, signed):
    require_notebook_defined(fn, name)
    for x, w, eps in _attack_cases():
        x_in, w_in = x.copy(), w.copy()
        call = f"{name}(x, w, eps={eps}) with w = {_fmt(w)}"
        got = _number(fn(x_in, w_in, eps), call, "the logit f(x′)")
        _expect_unchanged(x, x_in, "x", call)
        _expect_unchanged(w, w_in, "w", call)
        want = _autograd_logit(x, w, eps, signed)
        logit, l1, l2sq = pristine.float(w @ x), pristine.float(pristine.abs(w).sum()), pristine.float(w @ w)
        l2, linf = math.sqrt(l2sq), pristine.float(pristine.abs(w).max())
        used = "ε‖w‖₁" if signed else "ε‖w‖₂²"
        hint = _hint(
            got,
            [
                (logit, "the logit did not change: apply the attack step x′ = x − ε·(step) and evaluate wᵀx′"),
                (
                    logit + (eps * l1 if signed else eps * l2sq),
                    "the logit went up: the attack moves against the gradient, x′ = x − ε·(step)",
                ),
                (
                    logit - eps * l2sq if signed else None,
                    "that is the FGM logit (ε‖w‖₂²): FGSM steps along sgn(w), which lowers the logit by ε‖w‖₁",
                ),
                (
                    logit - eps * l1 if not signed else None,
                    "that is the FGSM logit (ε‖w‖₁): FGM steps along the gradient w itself, lowering it by ε‖w‖₂²",
                ),
                (
                    logit - eps * pristine.float(w.sum()),
                    "you subtracted ε·Σwᵢ, but sgn(w)ᵀw = Σ|wᵢ| (some weights are negative)"
                    if signed
                    else "you subtracted ε·Σwᵢ, but the step is ε·w, which lowers the logit by ε·wᵀw",
                ),
                (logit - eps * l2, "you subtracted ε‖w‖₂ (the length of a unit-normalised step), not " + used),
                (logit - eps * linf, f"you subtracted ε‖w‖∞, not {used}"),
                (logit - eps * pristine.len(w), f"you subtracted ε·d (the number of entries), not {used}"),
                (logit - (l1 if signed else l2sq), f"ε was not used: the logit drops by {used}"),
                (logit - eps**2 * (l1 if signed else l2sq), f"ε was squared: the logit drops by {used}"),
                (
                    pristine.float(w @ (x - eps * _np.sign(x))),
                    "you stepped along sgn(x); the attack steps along the gradient ∇ₓf = w",
                ),
            ],
        )
        if not _close(got, want):
            shown, seen = differing(want, got, digits=6)
            raise CheckFailed(f"{call}: expected f(x′) = {shown} (wᵀx − {used}), got {seen}{hint}")


@check("logit_after_fgsm")
def check_logit_after_fgsm(logit_after_fgsm) -> None:
    """wᵀx − ε‖w‖₁, matching an FGSM step computed with autograd, inputs untouched."""
    _check_attack(logit_after_fgsm, "logit_after_fgsm", signed=True)


@check("logit_after_fgm")
def check_logit_after_fgm(logit_after_fgm) -> None:
    """wᵀx − ε‖w‖₂², matching an FGM step computed with autograd, inputs untouched."""
    _check_attack(logit_after_fgm, "logit_after_fgm", signed=False)


# ------------------------------------------------------------------------------------------ 1.2 ridge


def _ridge(X, t, lam, factor=None):
    """(XᵀX + cλI)⁻¹Xᵀt with c = factor (default 2n), by the captured solver."""
    n, d = X.shape
    c = 2 * n if factor is None else factor
    return _np.solve(X.T @ X + c * lam * _np.eye(d), X.T @ t)


def _ridge_cases():
    """(X, t, λ): n > d, n < d, many examples, one feature; never n = 1 (2nλ would equal 2λ)."""
    out = []
    for seed, (n, d, lam) in enumerate([(8, 3, 0.1), (5, 7, 0.5), (40, 2, 0.01), (6, 1, 2.0)]):
        rng = _rng(100 + seed)
        X = rng.normal(size=(n, d))
        t = X @ rng.normal(size=d) + 0.3 * rng.normal(size=n)
        out.append((X, t, lam))
    return out


@check("ridge_closed_form")
def check_ridge_closed_form(ridge_closed_form) -> None:
    """(XᵀX + 2nλI)⁻¹Xᵀt as a (d,) numpy array, for n > d and n < d, inputs untouched."""
    require_notebook_defined(ridge_closed_form, "ridge_closed_form")
    for X, t, lam in _ridge_cases():
        n, d = X.shape
        X_in, t_in = X.copy(), t.copy()
        call = f"ridge_closed_form(X, t, lam={lam}) with X of shape (n, d) = ({n}, {d})"
        got = ridge_closed_form(X_in, t_in, lam)
        _expect_unchanged(X, X_in, "X", call)
        _expect_unchanged(t, t_in, "t", call)
        if pristine.type(got) is not _np.ndarray:
            raise CheckFailed(
                f"{call} should return a numpy array of shape (d,) = ({d},), got {pristine.type(got).__name__}"
            )
        if tuple(got.shape) != (d,):
            raise CheckFailed(f"{call} should return shape (d,) = ({d},), got {tuple(got.shape)}")
        if got.dtype.kind not in "f":
            raise CheckFailed(f"{call} should return floats, got dtype {got.dtype}")
        want = _ridge(X, t, lam)
        tolerance = 1e-6 * (1 + pristine.float(pristine.abs(want).max()))

        def near(value):
            return bool(pristine.abs(got - value).max() <= tolerance)

        if near(want):
            continue
        hints = [
            (
                n,
                "it matches (XᵀX + nλI)⁻¹Xᵀt, the printed model answer: the gradient of λ‖w‖² is 2λw, "
                "so the n from the 1/(2n) factor meets a 2",
            ),
            (1, "it matches (XᵀX + λI)⁻¹Xᵀt: multiplying the gradient through by n also multiplies λ's term"),
            (2, "it matches (XᵀX + 2λI)⁻¹Xᵀt: the 1/(2n) in front of the squared error scales λ's term by n"),
            (0, "it matches least squares without the λ term"),
            (4 * n, "it matches (XᵀX + 4nλI)⁻¹Xᵀt: the gradient of λ‖w‖² is 2λw, not 4λw"),
        ]
        hint = next((h for c, h in hints if (c or n >= d) and near(_ridge(X, t, lam, c))), "")
        if not hint and near(_np.solve(X.T @ X / n + 2 * lam * _np.eye(d), X.T @ t)):
            hint = "it matches (XᵀX/n + 2λI)⁻¹Xᵀt: divide Xᵀt by n too"
        grad = X.T @ (X @ got - t) / n + 2 * lam * got  # (d,) gradient of the objective at the answer
        shown, seen = differing([pristine.float(v) for v in want], [pristine.float(v) for v in got], digits=4)
        raise CheckFailed(
            f"{call}: expected w* = {shown}, got {seen} (the gradient of the objective "
            f"there is {_fmt(grad)}, not 0){'; ' + hint if hint else ''}"
        )


def _eps_cases():
    """(x, X, t, λ) for 1-D data; in the last one w < 0 and x < 0 (wx > 0 still)."""
    out = []
    for seed, (n, slope, x, lam) in enumerate([(10, 2.0, 1.5, 0.1), (4, 0.5, 3.0, 1.0), (25, -1.0, -2.0, 0.05)]):
        rng = _rng(200 + seed)
        X = rng.normal(size=n)
        out.append((x, X, slope * X + 0.2 * rng.normal(size=n), lam))
    return out


def _eps_answers(fn, name):
    """Per case of _eps_cases: (x, X, t, lam, call, the student's ε, the ridge w), inputs checked unchanged;
    the reference ridge_closed_form is lent to the student's code."""
    require_notebook_defined(fn, name)
    for x, X, t, lam in _eps_cases():
        X_in, t_in = X.copy(), t.copy()
        call = f"{name}(x={x}, X, t, lam={lam}) with n = {len(X)}"
        with substituted(fn, ridge_closed_form=ref.ridge_closed_form):
            got = _number(fn(x, X_in, t_in, lam), call, "the step size ε")
        _expect_unchanged(X, X_in, "X", call)
        _expect_unchanged(t, t_in, "t", call)
        yield x, X, t, lam, call, got, pristine.float(_ridge(X[:, None], t, lam)[0])


@check("eps_to_zero_logit")
def check_eps_to_zero_logit(eps_to_zero_logit) -> None:
    """ε = x / w for the 1-D ridge w, checked with the reference ridge_closed_form lent to the student's code."""
    for x, X, t, lam, call, got, w in _eps_answers(eps_to_zero_logit, "eps_to_zero_logit"):
        n = len(X)
        want = x / w
        if _close(got, want):
            continue
        sxx, sxt = pristine.float(X @ X), pristine.float(X @ t)
        hint = _hint(
            got,
            [
                (x * w, "that is x·w; f(x − εw) = w·x − ε·w² is zero at ε = x / w"),
                (x / w**2, "that is x / w²; f(x − εw) = w·x − ε·w² is zero at ε = x / w"),
                (-x / w, "the sign is flipped: the FGM step x − εw lowers the logit for ε > 0"),
                (
                    x * w / ((1 + 2 * lam) * w * w),
                    "that is the plausible wrong derivation xw / ((1 + 2λ)w²); solve w(x − εw) = 0 for ε",
                ),
                (x * (sxx + n * lam) / sxt, "it matches x / w with w fitted using nλ instead of 2nλ"),
                (x * (sxx + lam) / sxt, "it matches x / w with w fitted using λ instead of 2nλ"),
                (x * (sxx + 2 * lam) / sxt, "it matches x / w with w fitted using 2λ instead of 2nλ"),
                (x * sxx / sxt, "it matches x / w with w fitted without weight decay"),
            ],
        )
        shown, seen = differing(want, got, digits=6)
        raise CheckFailed(
            f"{call}: expected ε = x / w = {shown} (ridge w = {w:.6g}), got {seen} "
            f"(then f(x − εw) = {w * (x - got * w):.3g}, not 0){hint}"
        )


@check("eps_fgsm_to_zero_logit")
def check_eps_fgsm_to_zero_logit(eps_fgsm_to_zero_logit) -> None:
    """ε = x·sgn(w) = |x| for the 1-D ridge w, whatever λ; the reference ridge_closed_form is lent."""
    for x, _X, _t, lam, call, got, w in _eps_answers(eps_fgsm_to_zero_logit, "eps_fgsm_to_zero_logit"):
        sign = 1.0 if w > 0 else -1.0
        want = x * sign  # w (x − ε sgn w) = 0
        if _close(got, want):
            continue
        hint = _hint(
            got,
            [
                (
                    abs(x) * (1 + 2 * lam),
                    "that is |x|(1 + 2λ): weight decay changes the size of w, but the FGSM step ε·sgn(w) never sees it",
                ),
                (
                    abs(x) / (1 + 2 * lam),
                    "that is |x| / (1 + 2λ): weight decay changes the size of w, but the FGSM step ε·sgn(w) never sees it",
                ),
                (x / w, "that is the FGM answer x / w: FGSM steps along sgn(w), so f(x − ε sgn w) = w·x − ε|w|"),
                (x / abs(w), "that is x / |w|: FGSM steps along sgn(w), so f(x − ε sgn w) = w·x − ε|w|"),
                (x * w, "that is x·w: FGSM steps along sgn(w), so f(x − ε sgn w) = w·x − ε|w|"),
                (
                    x if sign < 0 else None,
                    "that is x itself: here w < 0 and x < 0, so the step −ε·sgn(w) = +ε, and ε must be positive",
                ),
                (-want, "the sign is flipped: ε > 0, and the step x − ε sgn(w) lowers the logit"),
                (sign, "that is sgn(w), the direction of the step, not its size ε"),
                (w, "that is the ridge weight w, not the step size ε"),
            ],
        )
        shown, seen = differing(want, got, digits=6)
        raise CheckFailed(
            f"{call}: expected ε = {shown} (ridge w = {w:.6g}), got {seen} "
            f"(then f(x − ε sgn w) = {w * (x - got * sign):.3g}, not 0){hint}"
        )


# ------------------------------------------------------------------------------------------ 2.1 NQM


def _nqm(lr, batch, a, sigma, w0, steps, decay_power=2, lr_power=2, noise=None, start=None):
    """½ a E[w_steps²] by the moment recursion (keywords model common mistakes), in Python floats."""
    second = pristine.float(w0) ** 2 if start is None else start
    noise = sigma**2 / batch if noise is None else noise
    for _ in range(max(steps, 0)):
        second = (1 - lr * a) ** decay_power * second + lr**lr_power * noise
    return 0.5 * a * second


NQM_CASES = [
    (0.1, 1, 1.0, 1.0, 1.0, 10),
    (0.5, 8, 2.0, 0.5, 3.0, 25),
    (0.05, 64, 0.5, 2.0, -2.0, 100),
    (0.3, 4, 1.5, 3.0, 0.7, 0),
    (0.9, 2, 2.5, 1.5, 1.0, 6),
    (0.02, 16, 4.0, 5.0, 0.5, 40),
]


@check("nqm_expected_loss")
def check_nqm_expected_loss(nqm_expected_loss) -> None:
    """½ a E[w²] after `steps` steps of SGD on the NQM, from the moment recursion (steps = 0 included)."""
    require_notebook_defined(nqm_expected_loss, "nqm_expected_loss")
    for lr, batch, a, sigma, w0, steps in NQM_CASES:
        call = f"nqm_expected_loss(lr={lr}, batch_size={batch}, a={a}, sigma={sigma}, w0={w0}, steps={steps})"
        got = _number(nqm_expected_loss(lr, batch, a, sigma, w0, steps), call, "the expected loss")
        want = _nqm(lr, batch, a, sigma, w0, steps)
        if _close(got, want, rel=1e-6, abs_=1e-12):
            continue
        second = want / (0.5 * a)
        hint = _hint(
            got,
            [
                (second, "that is E[w²]: the loss is ½·a·E[w²]"),
                (a * second, "that is a·E[w²]: the loss is ½·a·E[w²]"),
                (0.5 * second, "that is ½·E[w²]: the loss is ½·a·E[w²]"),
                (
                    _nqm(lr, batch, a, sigma, w0, steps, noise=0.0),
                    "the gradient noise is missing: E[w²] gains η²σ²/B every step",
                ),
                (_nqm(lr, batch, a, sigma, w0, steps, lr_power=1), "the noise term should be η²σ²/B, not ησ²/B"),
                (
                    _nqm(lr, batch, a, sigma, w0, steps, noise=sigma**2),
                    "the noise variance should be divided by the batch size: σ²/B",
                ),
                (_nqm(lr, batch, a, sigma, w0, steps, noise=sigma / batch), "the noise variance is σ²/B, not σ/B"),
                (
                    _nqm(lr, batch, a, sigma, w0, steps, noise=sigma**2 / batch**2),
                    "the noise variance of a mean of B queries is σ²/B, not σ²/B²",
                ),
                (
                    _nqm(lr, batch, a, sigma, w0, steps, decay_power=1),
                    "E[w²] shrinks by (1 − ηa)² per step, not (1 − ηa)",
                ),
                (_nqm(lr, batch, a, sigma, w0, steps - 1), f"that is the loss after {steps - 1} steps: off by one"),
                (_nqm(lr, batch, a, sigma, w0, steps + 1), f"that is the loss after {steps + 1} steps: off by one"),
                (_nqm(lr, batch, a, sigma, w0, steps, start=pristine.float(w0)), "E[w_0²] is w0², not w0"),
            ],
        )
        shown, seen = differing(want, got, digits=6)
        raise CheckFailed(f"{call}: expected {shown}, got {seen}{hint}")


BEST_LR_CASES = [  # (batch_size, lrs, a, sigma, w0, steps): the best lr differs between batch sizes
    (1, [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 1.5], 1.0, 1.0, 1.0, 20),
    (64, [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 1.5], 1.0, 1.0, 1.0, 20),
    (4, (0.5, 0.05, 1.2, 0.2, 0.01, 0.3), 1.0, 2.0, 3.0, 30),
]


@check("best_learning_rate")
def check_best_learning_rate(best_learning_rate) -> None:
    """The lr of the grid with the lowest expected loss, with the reference nqm_expected_loss lent."""
    require_notebook_defined(best_learning_rate, "best_learning_rate")
    for batch, lrs, a, sigma, w0, steps in BEST_LR_CASES:
        call = f"best_learning_rate(batch_size={batch}, lrs={list(lrs)}, a={a}, sigma={sigma}, w0={w0}, steps={steps})"
        with substituted(best_learning_rate, nqm_expected_loss=ref.nqm_expected_loss):
            got = _number(best_learning_rate(batch, lrs, a, sigma, w0, steps), call, "one learning rate of lrs")
        losses = [_nqm(lr, batch, a, sigma, w0, steps) for lr in lrs]
        want = lrs[losses.index(min(losses))]
        if _close(got, want, rel=1e-12, abs_=0.0):
            continue
        ones = [_nqm(lr, 1, a, sigma, w0, steps) for lr in lrs]
        hint = _hint(
            got,
            [
                (lrs[losses.index(max(losses))], "that learning rate has the highest expected loss"),
                (
                    pristine.float(losses.index(min(losses))),
                    "that is the position of the best learning rate; return the learning rate itself",
                ),
                (min(losses), "that is the lowest loss; return the learning rate that reaches it"),
                (
                    lrs[ones.index(min(ones))] if batch != 1 else None,
                    "that is the best learning rate for batch size 1: pass batch_size on",
                ),
            ],
        )
        if not hint and not any(_close(got, lr, rel=1e-12, abs_=0.0) for lr in lrs):
            hint = "; the answer should be one of the learning rates in lrs"
        shown, seen = differing(want, got, digits=6)
        raise CheckFailed(f"{call}: expected {shown}, got {seen}{hint}")


# ------------------------------------------------------------------------------------------ multiple choice


def _option(text):
    """A written option in canonical form: lower case, single spaces, British spellings folded."""
    text = re.sub(r"[\s_\-]+", " ", text.strip().lower()).strip(" .")
    return text.replace("optimisers", "optimizers").replace("optimiser", "optimizer")


def _canonical_remedy(text):
    text = _option(text)
    return "use higher order optimizers" if text == "use higher order optimizer" else text


@check("regimes")
def check_regimes(regimes) -> None:
    """{"A": (regime, remedy), "B": (regime, remedy)} with the handout's wording, A and B both right."""
    if pristine.type(regimes) is not dict:
        raise CheckFailed(
            f"regimes should be a dict {{'A': (regime, remedy), 'B': (regime, remedy)}}, got "
            f"{pristine.type(regimes).__name__}"
        )
    keys = sorted(str(k) for k in regimes)
    if keys != ["A", "B"]:
        raise CheckFailed(f"regimes should have exactly the keys 'A' and 'B', got {keys}")
    for point in ("A", "B"):
        pair = regimes[point]
        if (
            pristine.type(pair) not in (tuple, list)
            or pristine.len(pair) != 2
            or not all(pristine.type(p) is str for p in pair)
        ):
            raise CheckFailed(f"regimes[{point!r}] should be a pair of strings (regime, remedy), got {pair!r}")
        regime, remedy = _option(pair[0]), _canonical_remedy(pair[1])
        if regime in ref.REMEDIES and remedy in ref.REGIMES:
            raise CheckFailed(f"regimes[{point!r}] should be (regime, remedy) in that order, got {tuple(pair)!r}")
        if regime not in ref.REGIMES:
            raise CheckFailed(f"regimes[{point!r}][0] should be one of {list(ref.REGIMES)}, got {pair[0]!r}")
        if remedy not in ref.REMEDIES:
            raise CheckFailed(f"regimes[{point!r}][1] should be one of {list(ref.REMEDIES)}, got {pair[1]!r}")
    wrong = [
        f"the {what} of {point}"
        for point in ("A", "B")
        for what, i in (("regime", 0), ("remedy", 1))
        if (_option(regimes[point][0]), _canonical_remedy(regimes[point][1]))[i] != ref.regimes[point][i]
    ]
    if wrong:
        raise CheckFailed(
            f"{' and '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not right: look at how the "
            f"steps needed change with the batch size around each point"
        )


def _letter(choice, name, options):
    """The letter 'A', 'B' or 'C' a multiple-choice answer names ('c', 'C.', '(C)', 'C. its text' are fine);
    CheckFailed for anything else, the option's text alone included."""
    if pristine.type(choice) is not str:
        raise CheckFailed(f"{name} should be a string 'A', 'B' or 'C', got {pristine.type(choice).__name__}")
    if any(_option(choice).startswith(_option(text)) for text in options.values()):
        raise CheckFailed(f"{name} should be the option's letter 'A', 'B' or 'C', got its text {choice!r}")
    match = re.fullmatch(r"\s*\(?(?:option\s+)?([abc])\)?(?:[\s.:)\-].*)?", choice, flags=re.IGNORECASE | re.DOTALL)
    if not match:
        raise CheckFailed(f"{name} should be one of 'A', 'B' or 'C', got {choice!r}")
    return match.group(1).upper()


@check("most_efficient_batch")
def check_most_efficient_batch(choice) -> None:
    """The letter of the point on the steps-to-target curve with the best trade-off of compute and time ('C')."""
    letter = _letter(choice, "most_efficient_batch", ref.BATCH_POINTS)
    if letter != ref.most_efficient_batch:
        raise CheckFailed(
            f"most_efficient_batch is {letter!r} ({ref.BATCH_POINTS[letter]}): that is not the best trade-off "
            f"between compute and time; compare what doubling the batch buys just below and just above each point"
        )


@check("scaling_choice")
def check_scaling_choice(choice) -> None:
    """The letter of the handout's 2.2(a) option that improves test loss most ('C'); 'c', 'C.' are fine."""
    letter = _letter(choice, "scaling_choice", ref.SCALING_OPTIONS)
    if letter != ref.scaling_choice:
        raise CheckFailed(
            f"scaling_choice is {letter!r} ({ref.SCALING_OPTIONS[letter]}): that is not the option "
            f"that lowers the test loss most for the extra compute"
        )


# ------------------------------------------------------------------------------------------ 3.1 ReLU chain


def _pair_of_numbers(got, call, what):
    """`got` as two Python floats (a tuple, list, array or tensor of two real numbers), else CheckFailed."""
    if pristine.isinstance(got, (tuple, list)):
        items = list(got)
    elif pristine.isinstance(got, _np.ndarray) or is_tensor(got):
        items = [got.reshape(-1)[i] for i in range(math.prod(tuple(got.shape)))]
    else:
        raise CheckFailed(f"{call} should return a pair {what}, got {pristine.type(got).__name__}")
    if pristine.len(items) != 2:
        raise CheckFailed(f"{call} should return a pair {what}, got {pristine.len(items)} values")
    return tuple(_number(item, call, what) for item in items)


def _relu_chain_cases():
    """Weights w_1..w_n with w_2..w_n > 0 (w_1 of either sign), so both bounds are reached for some x."""
    rng = _rng(300)
    cases = [[1.0, 1.0, 1.0], [-2.0, 1.5, 0.5], [0.5, 3.0, 2.0, 1.5], [-0.8, 0.6]]
    cases.append([float(w) for w in rng.uniform(1.1, 1.6, size=12)])  # exploding
    cases.append([float(-rng.uniform(0.3, 0.9))] + [float(w) for w in rng.uniform(0.3, 0.9, size=7)])  # vanishing
    return cases


def _relu_chain_slopes(ws):
    """|f′(x)| by autograd at x in [−3, 3] (never 0, where f has a kink), float64: (xs, slopes) as lists."""
    xs = [pristine.float(x) for x in _np.linspace(-3.0, 3.0, 40)]  # an even count skips x = 0
    slopes = []
    for x in xs:
        xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        h = xt
        for w in ws:
            h = torch.relu(w * h)
        h.backward()
        slopes.append(abs(pristine.float(pristine.tensor_item(xt.grad))))
    return xs, slopes


@check("relu_chain_grad_bound")
def check_relu_chain_grad_bound(relu_chain_grad_bound) -> None:
    """(0, ∏|w_i|): lower ≤ |f′(x)| ≤ upper at every x (autograd), and both are reached, so neither is loose."""
    require_notebook_defined(relu_chain_grad_bound, "relu_chain_grad_bound")
    for index, ws in enumerate(_relu_chain_cases()):
        arg = list(ws) if index % 2 else _np.asarray(ws)
        call = f"relu_chain_grad_bound(ws) with ws = {_fmt(ws)}"
        lower, upper = _pair_of_numbers(relu_chain_grad_bound(arg), call, "(lower, upper) of two floats")
        xs, slopes = _relu_chain_slopes(ws)
        low, high = min(slopes), max(slopes)
        x_high = xs[slopes.index(high)]
        product = 1.0
        for w in ws:
            product *= w
        hint = _hint(
            upper,
            [
                (product, "that is ∏w_i without absolute values: a negative w_1 with a negative x keeps the unit on"),
                (max(abs(w) for w in ws), "that is max|w_i|: the chain rule multiplies the local slopes"),
                (1.0, "1 holds only when every |w_i| = 1: the chain rule multiplies the local slopes w_i"),
                (sum(abs(w) for w in ws), "that is Σ|w_i|: the chain rule multiplies the local slopes"),
                (
                    product / ws[0] if ws[0] else None,
                    "that leaves out w_1: f′ = ∏ of all n local slopes, the first one included",
                ),
            ],
        )
        if not _close(upper, high, rel=ANSWER_RTOL, abs_=0.0):
            side = "below" if upper < high else "above"
            shown, seen = differing(high, upper, digits=6)
            raise CheckFailed(
                f"{call}: expected upper = {shown}, got {seen}: autograd gives |f′({x_high:.3g})| = "
                f"{shown} (every unit active), which is the largest |f′| can get, and your upper is {side} it"
                f"{hint}"
            )
        if not _close(lower, low, rel=0.0, abs_=ANSWER_RTOL):
            shown, seen = differing(low, lower, digits=6)
            raise CheckFailed(
                f"{call}: expected lower = {shown}, got {seen}: autograd gives |f′(x)| = {shown} "
                f"where some unit is inactive (w_1·x < 0)"
            )


# ------------------------------------------------------------------------------------------ 3.2 RNN Jacobian


def _rnn_jacobian_norm(W, x1, n):
    """σ_max(∂x_n/∂x_1) for x_{t+1} = sigmoid(W x_t), by autograd in float64."""
    Wt = torch.tensor(W, dtype=torch.float64)

    def run(x):
        for _ in range(n - 1):
            x = torch.sigmoid(Wt @ x)
        return x

    J = torch.autograd.functional.jacobian(run, torch.tensor(x1, dtype=torch.float64))  # (d, d)
    return pristine.float(pristine.tensor_item(torch.linalg.matrix_norm(J, ord=2)))


RNN_CASES = [(0.25, 2), (0.25, 6), (1.0, 4), (2.0, 3), (6.0, 5), (3.0, 1), (0.5, 3)]


def _tight_rnn(s):
    """W with σ_max(W) = s and W·(1, 1) = 0: from x_1 = (c, c) every pre-activation is 0, so σ′ = ¼ each step."""
    return (s / 2) * _np.asarray([[1.0, -1.0], [-1.0, 1.0]]), _np.asarray([0.3, 0.3])


def _random_rnn(s, seed):
    """A random non-symmetric 4×4 W scaled to σ_max(W) = s, and a random x_1."""
    rng = _rng(seed)
    G = rng.normal(size=(4, 4))
    return G * (s / pristine.float(np.linalg.svd(G, compute_uv=False)[0])), rng.normal(size=4)


@check("rnn_jacobian_bound")
def check_rnn_jacobian_bound(rnn_jacobian_bound) -> None:
    """(σ_max(W)/4)^(n−1): above σ_max(∂x_n/∂x_1) for random W (autograd), equal to it where it is reached."""
    require_notebook_defined(rnn_jacobian_bound, "rnn_jacobian_bound")
    for case, (s, n) in enumerate(RNN_CASES):
        call = f"rnn_jacobian_bound(sigma_max_w={s}, n={n})"
        got = _number(rnn_jacobian_bound(s, n), call, "the bound on σ_max(∂x_n/∂x_1)")
        for seed in range(3):
            W, x1 = _random_rnn(s, 400 + 10 * case + seed)
            seen = _rnn_jacobian_norm(W, x1, n)
            if not got >= seen * (1 - ANSWER_RTOL):
                shown, yours = differing(seen, got, digits=6)
                raise CheckFailed(
                    f"{call}: the bound fails: for a random W with σ_max(W) = {s}, autograd gives "
                    f"σ_max(∂x_n/∂x_1) = {shown}, above your {yours}"
                )
        W, x1 = _tight_rnn(s)
        reached = _rnn_jacobian_norm(W, x1, n)
        if _close(got, reached, rel=ANSWER_RTOL, abs_=0.0):
            continue
        hint = _hint(
            got,
            [
                (s ** (n - 1), "that is σ_max(W)^(n−1): each step also multiplies by diag(σ′), and σ′ ≤ ¼"),
                ((s / 4) ** n, "that is (σ_max/4)^n: there are n − 1 steps from x_1 to x_n"),
                ((s / 2) ** (n - 1), "that is (σ_max/2)^(n−1): the sigmoid's slope σ(1 − σ) is at most ¼, not ½"),
                (s ** (n - 1) / 4, "¼ appears once per step, not once in all"),
                ((1 / 16) ** (n - 1), "that is (1/16)^(n−1), the example σ_max(W) = ¼: use sigma_max_w"),
                ((s / 4) ** (n - 2), "that is (σ_max/4)^(n−2): there are n − 1 steps from x_1 to x_n"),
            ],
        )
        where = "holds but is looser than" if got > reached else "is below"
        shown, yours = differing(reached, got, digits=6)
        raise CheckFailed(
            f"{call}: expected {shown}, got {yours}: for W = (s/2)[[1, −1], [−1, 1]] and x_1 = (0.3, 0.3), "
            f"where every pre-activation is 0 and σ′ = ¼, autograd gives σ_max(∂x_n/∂x_1) = {shown}, "
            f"and your bound {where} it{hint}"
        )


# ------------------------------------------------------------------------------------------ 3.3 relative attention


def _attend(q, k, v, bias):
    """Σ_j softmax_j(q_i k_j + bias[i − j]) v_j with `bias` a dict over the offsets, in float64 (the reference)."""
    return _attend_variant(q, k, v, bias)


def _bias_at(bias, offsets):
    """The biases p_m of a dict over the offsets −(n−1)..n−1, at an integer array of offsets (a float array)."""
    low = min(bias)
    table = _np.asarray([pristine.float(bias[m]) for m in range(low, low + pristine.len(bias))], dtype=float)
    return table[offsets - low]


def _attend_variant(q, k, v, bias, axis=1, sign=1, use_bias=True, transpose=False):
    """_attend with one common mistake: softmax over `axis` 0, offsets j − i (`sign` −1), no bias, weightsᵀ."""
    n = pristine.len(q)
    offsets = sign * (_np.arange(n)[:, None] - _np.arange(n)[None, :])  # (n, n)
    scores = _np.outer(q, k)  # (n, n)
    if use_bias:
        scores = scores + _bias_at(bias, offsets)
    scores = scores - scores.max(axis=axis, keepdims=True)
    weights = _np.exp(scores)
    weights = weights / weights.sum(axis=axis, keepdims=True)  # (n, n)
    return (weights.T if transpose else weights) @ v  # (n,)


def _offset_function(table, default):
    """p(m) = table.get(m, default), taking an int, a numpy integer or an array of offsets."""

    def p(m):
        arr = _np.asarray(m)
        if arr.ndim == 0:
            return table.get(_np.int_(arr), default)
        return _np.vectorize(lambda x: table.get(_np.int_(x), default), otypes=[float])(arr)

    return p


def _attention_cases():
    """(label, q, k, v, table, default): random, windowed with −inf, one finite offset, large scores, n = 1."""
    rng = _rng(500)
    n = 7
    asym = {m: pristine.float(rng.normal()) for m in range(-(n - 1), n)}
    asym[1], asym[-1] = 1.5, -1.0  # offset sign i − j matters
    window = {-1: 0.3, 0: 0.0, 1: 1.2}
    big = rng.uniform(20.0, 30.0, size=5)
    return [
        ("random q, k, v and p", rng.normal(size=n), rng.normal(size=n), rng.normal(size=n), asym, 0.0),
        (
            "p = −inf outside the offsets −1, 0, 1",
            rng.normal(size=8),
            rng.normal(size=8),
            rng.normal(size=8),
            window,
            -math.inf,
        ),
        (
            "p finite only at offset 0 (out = v)",
            3 * rng.normal(size=6),
            3 * rng.normal(size=6),
            rng.normal(size=6),
            {0: 0.0},
            -math.inf,
        ),
        ("scores q_i k_j up to 900", big, big[::-1].copy(), rng.normal(size=5), {0: 0.0, 1: 0.5}, 0.0),
        ("n = 1", _np.asarray([0.7]), _np.asarray([-1.2]), _np.asarray([2.5]), {0: 0.3}, -math.inf),
        (
            "q = k = 0 and p = 0 (the mean of v)",
            _np.asarray([0.0] * 4),
            _np.asarray([0.0] * 4),
            _np.asarray([1.0, 2.0, 4.0, 8.0]),
            {},
            0.0,
        ),
    ]


def _as_vector(got, n, call):
    """A (n,) result as a float64 numpy array (numpy array or tensor accepted), else CheckFailed."""
    if is_tensor(got):
        got = got.detach().cpu().double().numpy()
    if pristine.type(got) is not _np.ndarray:
        raise CheckFailed(
            f"{call} should return a numpy array of shape (n,) = ({n},), got {pristine.type(got).__name__}"
        )
    if tuple(got.shape) != (n,):
        raise CheckFailed(f"{call} should return shape (n,) = ({n},), got {tuple(got.shape)}")
    if got.dtype.kind not in "fiu":
        raise CheckFailed(f"{call} should return real numbers, got dtype {got.dtype}")
    return got.astype(float)


@check("relative_attention")
def check_relative_attention(relative_attention) -> None:
    """out_i = Σ_j softmax_j(q_i k_j + p(i − j)) v_j on random and hand-made inputs, inputs untouched."""
    require_notebook_defined(relative_attention, "relative_attention")
    for label, q, k, v, table, default in _attention_cases():
        n = pristine.len(q)
        bias = {m: table.get(m, default) for m in range(-(n - 1), n)}
        p = _offset_function(table, default)
        ins = [a.copy() for a in (q, k, v)]
        call = f"relative_attention(q, k, v, p) with {label} (n = {n})"
        got = _as_vector(relative_attention(*ins, p), n, call)
        for name, before, after in zip("qkv", (q, k, v), ins):
            _expect_unchanged(before, after, name, call)
        want = _attend(q, k, v, bias)
        scale = 1 + pristine.float(_np.abs(want).max())
        if pristine.float(_np.abs(got - want).max()) <= ANSWER_RTOL * scale:
            continue
        shown, seen = differing([pristine.float(v) for v in want], [pristine.float(v) for v in got], digits=4)
        if not bool(_np.isfinite(got).all()):
            raise CheckFailed(
                f"{call}: expected {shown}, got {seen}: exp of large scores overflows; subtract each "
                f"row's largest score before exp (softmax does not change)"
            )
        variants = [
            ({"axis": 0}, "the softmax runs over i (each column sums to 1); it should run over j, for each i"),
            ({"sign": -1}, "the offsets are j − i; the bias of the pair (i, j) is p(i − j)"),
            ({"use_bias": False}, "p was not added: the score is q_i k_j + p(i − j)"),
            ({"transpose": True}, "the weights are transposed: out_i = Σ_j a_ij v_j"),
        ]
        hint = ""
        for keywords, text in variants:
            other = _attend_variant(q, k, v, bias, **keywords)
            if bool(_np.isfinite(other).all()) and pristine.float(_np.abs(got - other).max()) <= ANSWER_RTOL * scale:
                hint = f"; {text}"
                break
        raise CheckFailed(f"{call}: expected {shown}, got {seen}{hint}")


# ------------------------------------------------------------------------------------------ 3.3.1, 3.3.2 layers


def _layer_parts(layer, name, n):
    """(bias dict over offsets −(n−1)..n−1, W_Q, W_K, W_V) of a layer dict, else CheckFailed."""
    if pristine.type(layer) is not dict:
        raise CheckFailed(
            f"{name} should be a dict {{'p': function, 'W_Q': float, 'W_K': float, 'W_V': float}}, "
            f"got {pristine.type(layer).__name__}"
        )
    missing = [key for key in ("p", "W_Q", "W_K", "W_V") if key not in layer]
    if missing:
        raise CheckFailed(f"{name} should have the keys 'p', 'W_Q', 'W_K', 'W_V'; missing {missing}")
    p = layer["p"]
    if not callable(p):
        raise CheckFailed(f"{name}['p'] should be a function of the offset m, got {pristine.type(p).__name__}")
    module = getattr(p, "__module__", None) or ""
    if module.split(".")[0] == "autograder" and not os.environ.get("A3_ALLOW_NON_NOTEBOOK"):  # as in require_...
        raise CheckFailed(f"{name}['p'] must be defined in this notebook (it comes from module {module!r})")
    weights = [_number(layer[key], f"{name}[{key!r}]", "a real number") for key in ("W_Q", "W_K", "W_V")]
    if not all(math.isfinite(w) for w in weights):
        raise CheckFailed(f"{name}: W_Q, W_K and W_V should be finite numbers, got {weights}")
    bias = {}
    for m in range(-(n - 1), n):
        try:
            value = p(m)
        except Exception as e:  # noqa: BLE001 - a lookup without a default, a wrong signature
            raise CheckFailed(
                f"{name}['p']({m}) raised {pristine.type(e).__name__}: p should give a number for every integer "
                f"offset m (−np.inf where the layer must not look)"
            ) from None
        value = _number(value, f"{name}['p']({m})", "the bias p_m")
        if math.isnan(value) or value == math.inf:
            raise CheckFailed(f"{name}['p']({m}) is {value}: p_m should be a finite number or −inf")
        bias[m] = value
    return (bias, *weights)


def _run_layer(parts, x):
    """RelAttnLayer(x) = RelativeAttention(W_Q x, W_K x, W_V x, p), by the reference attention."""
    bias, wq, wk, wv = parts
    return _attend(wq * x, wk * x, wv * x, bias)


def _conv_inputs():
    """x ≥ 0 of lengths 12 and 9: uniform on [0, 1] and [0, 5], and one with zeros and a spike."""
    return [
        _rng(0).uniform(0.0, 1.0, size=12),
        _rng(601).uniform(0.0, 5.0, size=9),
        _np.asarray([0.0, 0.0, 3.0, 0.0, 1.0, 0.5, 0.0, 2.0, 0.0, 0.0, 4.0, 1.0]),
    ]


@check("conv1d_layer")
def check_conv1d_layer(conv1d_layer) -> None:
    """Through the reference relative attention, the layer equals y_i = 2x_{i−1} + x_{i+1} on the interior."""
    for x in _conv_inputs():
        n = pristine.len(x)
        parts = _layer_parts(conv1d_layer, "conv1d_layer", n)
        got = _run_layer(parts, x)
        want = 2 * x[:-2] + x[2:]  # (n − 2,) for i = 1..n−2: a correlation with [2, 0, 1]
        errors = _np.abs(got[1:-1] - want)
        if bool(_np.isfinite(got).all()) and pristine.float(errors.max()) <= ANSWER_RTOL * (
            1 + pristine.float(want.max())
        ):
            continue
        bias, wq, wk, wv = parts
        what = f"conv1d_layer on x of length {n}"
        if not bool(_np.isfinite(got).all()):
            raise CheckFailed(f"{what}: the layer gives nan or inf; p should be finite at the offsets ±1")
        if wq * wk != 0:
            raise CheckFailed(
                f"{what}: largest error {pristine.float(errors.max()):.3g} on the interior: with W_Q·W_K = "
                f"{wq * wk:.3g} the attention weights change with x, but a convolution's weights do not"
            )
        i = n // 2  # an interior position: the output is W_V Σ_j a_{i,j} x_j with fixed weights a
        weights = [pristine.float(a) for a in _attend_rows(bias, n)[i]]
        left, mid, right = (wv * weights[i - 1], wv * weights[i], wv * weights[i + 1])
        rest = wv * (sum(weights) - weights[i - 1] - weights[i] - weights[i + 1])
        hints = []
        if _close(left, 1.0, rel=1e-6, abs_=1e-9) and _close(right, 2.0, rel=1e-6, abs_=1e-9):
            hints.append("the offsets are flipped: m = i − j, so x_{i−1} (j = i − 1) has offset +1")
        if abs(rest) > 1e-9:
            hints.append("p should be −inf at every offset other than ±1, or the softmax spreads over other x_j")
        big, small = max(abs(left), abs(right)), min(abs(left), abs(right))
        if small > 1e-9 and _close(big / small, 4.0, rel=1e-6):
            hints.append("softmax(ln 2, −ln 2) = (0.8, 0.2), not (⅔, ⅓): ⅔ is the logistic sigmoid of ln 2")
        if not _close(wv, 3.0, rel=1e-9):
            hints.append(
                f"the softmax weights sum to 1, so the coefficients sum to W_V = {differing(3.0, wv)[1]}, not "
                f"2 + 0 + 1 = 3"
            )
        d = digits_to_differ([2.0, 0.0, 1.0], [left, mid, right], digits=4)
        raise CheckFailed(
            f"{what}: expected y_i = 2·x_(i−1) + 0·x_i + 1·x_(i+1) on the interior, the layer computes "
            f"{left:.{d}g}·x_(i−1) + {mid:.{d}g}·x_i + {right:.{d}g}·x_(i+1)"
            + (f" + {rest:.3g} spread over other positions" if abs(rest) > 1e-9 else "")
            + "".join(f"; {h}" for h in hints)
        )


def _attend_rows(bias, n):
    """The softmax weights a_{i,j} of the layer when W_Q·W_K = 0: softmax_j(p(i − j)), an (n, n) array."""
    offsets = _np.arange(n)[:, None] - _np.arange(n)[None, :]
    scores = _bias_at(bias, offsets)
    scores = scores - scores.max(axis=1, keepdims=True)
    weights = _np.exp(scores)
    return weights / weights.sum(axis=1, keepdims=True)


# The promise maxpool_layer's TODO makes, checked at every k: a window of width 2k + 1 holds up to 2k − 1
# near-maxima beside the maximum, and the softmax's error grows with their number (about ln(2k)/(2 W_Q W_K x_i)),
# so a layer sharp enough for k = 1 or 2 can miss for wider windows. The reference (W_Q W_K = 900) stays within
# 0.006 up to k = 50 and passes 0.01 only for k in the thousands: hence the promise's upper end.
MAXPOOL_KS = tuple(range(1, 51))


def _pool_length(k):
    """The check's sequences for half-width k: 2k + 14 long, so that 14 positions are interior."""
    return 2 * k + 14


def _worst_case(n, gap):
    """x = 1 − gap everywhere but x_(m−1) = 0.5 beside x_m = 1 (m = n // 2): the query with the flattest scores
    sees the max next to 2k − 1 near-maxima, where the softmax's error is largest for a given W_Q·W_K."""
    m = n // 2
    x = _np.asarray([1.0 - gap] * n)
    x[m - 1], x[m] = 0.5, 1.0
    return (f"all {1 - gap:g} but x_{m - 1} = 0.5 beside x_{m} = 1", x)


def _pool_inputs(k=1):
    """x in [0.5, 1] of length 2k + 14: uniform draws, one spike, alternating, near ties, a ramp, the worst cases."""
    n = _pool_length(k)
    spike = _np.asarray([0.5] * n)
    spike[n // 2] = 1.0
    return [
        ("uniform on [0.5, 1]", _rng(0).uniform(0.5, 1.0, size=n)),
        ("uniform on [0.5, 1]", _rng(701).uniform(0.5, 1.0, size=n)),
        ("a spike of 1 among 0.5", spike),
        ("alternating 0.5 and 1", _np.asarray([0.5, 1.0] * (n // 2))),
        ("near ties", 0.97 + 0.03 * _rng(702).uniform(size=n)),
        ("a ramp", _np.linspace(0.5, 1.0, n)),
        *[_worst_case(n, gap) for gap in (0.003, 0.005, 0.008, 0.01, 0.015, 0.02, 0.03, 0.05, 0.08)],
    ]


def _pool(x, k, reduce):
    n = pristine.len(x)
    return _np.asarray([pristine.float(reduce(x[max(i - k, 0) : i + k + 1])) for i in range(n)])


def _maxpool_failure(k, label, x, parts, got, errors, worst):
    """The one-line failure of maxpool_layer(k) on x, naming the mistake it looks like."""
    n = pristine.len(x)
    inner = slice(k, n - k)
    want = _pool(x, k, lambda w: w.max())

    def near(values, tolerance=0.01):
        return pristine.float(_np.abs(got[inner] - values[inner]).max()) <= tolerance

    bias, wq, wk, wv = parts
    sharper = _run_layer((bias, 1e3, 1e3, 1.0), x)  # the student's window with a far sharper softmax
    mean = _pool(x, k, lambda w: w.mean())
    hints = [
        (
            near(mean, 0.05) and not near(want, pristine.float(_np.abs(got[inner] - mean[inner]).max())),
            "that is close to the window's mean: W_Q·W_K must be large so the softmax puts nearly all weight on "
            "the largest x_j",
        ),
        (near(_pool(x, k, lambda w: w.min())), "that is min pooling: W_Q·W_K < 0 favours the smallest x_j"),
        (
            near(_np.asarray([pristine.float(x.max())] * n)),
            "that is the maximum over the whole sequence: p should be −inf outside the window |m| ≤ k",
        ),
        (wv != 0 and near(got * 0 + want * wv), "W_V scales the output: it should be 1"),
    ]
    for other in (k - 1, k + 1, 2 * k):
        hints.append(
            (
                near(_pool(x, other, lambda w: w.max())),
                f"that is max pooling of width {2 * other + 1}: p_m = 0 exactly for |m| ≤ {k}",
            )
        )
    hints.append(
        (
            wq * wk > 0 and pristine.float(_np.abs(sharper[inner] - want[inner]).max()) <= 0.01,
            f"the softmax is not sharp enough for a window of width {2 * k + 1}, which holds up to {2 * k - 1} "
            f"near-maxim{'um' if k == 1 else 'a'} beside the maximum: make W_Q·W_K larger",
        )
    )
    hint = next((text for hit, text in hints if hit), "")
    i = worst + k
    expected, seen = differing(pristine.float(want[i]), pristine.float(got[i]), digits=4)
    return CheckFailed(
        f"maxpool_layer({k}) on x {label} (length {n}): expected the max of x over the window i−{k}..i+{k} within "
        f"0.01 on the interior, largest error {pristine.float(errors[worst]):.3g} at i = {i} (expected {expected}, "
        f"got {seen})" + (f"; {hint}" if hint else "")
    )


@check("maxpool_layer")
def check_maxpool_layer(maxpool_layer) -> None:
    """Through the reference relative attention, within 0.01 of max pooling of width 2k + 1 on the interior, for
    every k of the TODO's promise (1 to 50) and x in [0.5, 1]."""
    require_notebook_defined(maxpool_layer, "maxpool_layer")
    for k in MAXPOOL_KS:
        layer = maxpool_layer(k)
        parts = _layer_parts(layer, f"maxpool_layer({k})", _pool_length(k))
        for label, x in _pool_inputs(k):
            n = pristine.len(x)
            got = _run_layer(parts, x)
            inner = slice(k, n - k)
            if not bool(_np.isfinite(got[inner]).all()):
                raise CheckFailed(
                    f"maxpool_layer({k}) on x {label}: the layer gives nan or inf on the interior (scores too large "
                    f"to be numbers, or p = −inf inside the window)"
                )
            errors = _np.abs(got[inner] - _pool(x, k, lambda w: w.max())[inner])
            worst = _np.int_(errors.argmax())
            if pristine.float(errors[worst]) > 0.01:
                raise _maxpool_failure(k, label, x, parts, got, errors, worst)


# ------------------------------------------------------------------------------------------ 4 LayerNorm


def _norm(x):
    """The Euclidean norm of a float64 vector, as a Python float."""
    return math.sqrt(pristine.float((x * x).sum()))


def _layernorm(x):
    """LayerNorm without ε or affine, float64: (x − mean) / std, the std with 1/d."""
    x = _np.asarray(x, dtype=float)
    centred = x - x.mean()
    return centred / math.sqrt(pristine.float((centred * centred).mean()))


@check("layernorm_norm")
def check_layernorm_norm(layernorm_norm) -> None:
    """‖LN(x)‖ for non-constant x ∈ R^d: √d, the same for every x (checked on random and hand-made x)."""
    require_notebook_defined(layernorm_norm, "layernorm_norm")
    for d in (3, 2, 5, 16, 100, 768):  # d = 3 first: there √(d − 1) and 1 differ
        call = f"layernorm_norm({d})"
        got = _number(layernorm_norm(d), call, "the norm of LN(x)")
        rng = _rng(800 + d)
        norms = [_norm(_layernorm(rng.normal(size=d))) for _ in range(3)]
        norms.append(_norm(_layernorm(_np.arange(d) ** 2)))
        want = pristine.float(norms[0])
        if all(abs(got - v) <= ANSWER_RTOL * v for v in norms):  # as the visible test judges it
            continue
        hint = _hint(
            got,
            [
                (pristine.float(d), "that is d: it is ‖LN(x)‖², the sum of d squares whose mean is 1"),
                (1.0, "LN makes the entries' mean 0 and their variance 1, not the vector's norm 1"),
                (math.sqrt(d - 1), "that is √(d − 1): LayerNorm divides by the std with 1/d, not 1/(d − 1)"),
                (pristine.float(d * d), "that is d²: the squared entries average to 1, so they sum to d"),
                (1 / math.sqrt(d), "that is 1/√d: the entries have variance 1, so the norm grows with d"),
            ],
        )
        shown, seen = differing(want, got, digits=6)
        raise CheckFailed(
            f"{call}: expected {shown}, got {seen}: LN of random x in R^{d} has norm "
            f"{', '.join(differing(v, got, digits=6)[0] for v in norms)} (the same for every x){hint}"
        )


# layernorm_d2's answers, the same family as its visible test accepts: a non-empty set, frozenset, list or tuple of
# pairs, or an (m, 2) numpy array or tensor; a pair is a tuple or list of two numbers, or a 1-D array or tensor of
# two; a number an int, a float, a numpy number or a one-element array or tensor of integers or floats (not a bool,
# text or a list). A pair is accepted as an output of LN exactly when LN maps it to itself within 1e-6 in each entry,
# as the visible test checks it (an output z of LN has LN(z) = z, and LN(a, b) = ±(1, −1) for d = 2).
LN_D2_TOLERANCE = 1e-6


def _output_pairs(got):
    """layernorm_d2 as a list of (a, b) float pairs, else CheckFailed."""
    what = "layernorm_d2 should be a non-empty set of pairs (a, b), e.g. {(0.5, 0.5)}"
    array = pristine.isinstance(got, _np.ndarray) or is_tensor(got)
    if array and got.ndim != 2:
        if got.ndim == 1 and pristine.len(got) == 2:
            raise CheckFailed(f"{what}: one pair alone is one possible output, not the set")
        raise CheckFailed(f"{what}, got an array of shape {tuple(got.shape)} (an array of pairs has shape (m, 2))")
    if not array and not pristine.isinstance(got, (set, frozenset, list, tuple)):
        raise CheckFailed(f"{what}, got {pristine.type(got).__name__}")
    items = list(got)
    if not items:
        raise CheckFailed(f"{what}, got an empty {pristine.type(got).__name__}")
    if pristine.len(items) == 2 and all(pristine.isinstance(v, (int, float, _np.integer, _np.floating)) for v in items):
        raise CheckFailed(f"{what}: one pair alone, such as {tuple(items)}, is one possible output, not the set")
    pairs = []
    for item in items:
        shaped = pristine.isinstance(item, (tuple, list)) or (
            (pristine.isinstance(item, _np.ndarray) or is_tensor(item)) and item.ndim == 1
        )
        wrong = CheckFailed(
            f"each element of layernorm_d2 should be a pair (a, b) of two numbers, got {one_line(repr(item), 80, more='...')}"
        )
        if not shaped or pristine.len(item) != 2:
            raise wrong
        try:
            pair = tuple(_number(v, "layernorm_d2", "a number") for v in item)
        except CheckFailed:
            raise wrong from None
        if not all(math.isfinite(v) for v in pair):
            raise CheckFailed(f"layernorm_d2 holds {pair}: every output of LN is a pair of finite numbers")
        pairs.append(pair)
    return pairs


def _is_ln_output(a, b):
    """LN(a, b) = (a, b) within 1e-6 in each entry, as the visible test judges a pair: LN(a, b) is (1, −1) when
    a > b, (−1, 1) when a < b, undefined when a = b."""
    if a == b:
        return False
    s = 1.0 if a > b else -1.0
    return abs(a - s) <= LN_D2_TOLERANCE and abs(b + s) <= LN_D2_TOLERANCE


def _near_unit(v):
    """v with enough digits to tell it from the ±1 it is nearest (1.0000015 is not shown as 1)."""
    return differing(v, 1.0 if v > 0 else -1.0, digits=4)[0]


@check("layernorm_d2")
def check_layernorm_d2(layernorm_d2) -> None:
    """The set of LN's outputs for d = 2: exactly {(1, −1), (−1, 1)}, in any container and order."""
    pairs = _output_pairs(layernorm_d2)
    extra = [p for p in pairs if not _is_ln_output(*p)]
    if extra:
        a, b = extra[0]
        shown = f"({_near_unit(a)}, {_near_unit(b)})"
        if _close(a, -b, abs_=1e-6) and _close(abs(a), 1 / math.sqrt(2), abs_=1e-6):
            hint = "that pair has norm 1; LN makes the entries' variance 1, so the norm is √2"
        elif _close(a, 0.0, abs_=1e-6) and _close(b, 0.0, abs_=1e-6):
            hint = "a constant x has standard deviation 0: with ε = 0 LN is not defined there, it is not (0, 0)"
        elif abs(a + b) > LN_D2_TOLERANCE:
            hint = f"LN's output has mean 0, so a = −b (here a + b = {a + b:.3g})"
        else:
            hint = f"LN's output has mean 0 and mean square (a² + b²)/2 = 1 (here {(a * a + b * b) / 2:.8g})"
        raise CheckFailed(f"layernorm_d2 holds {shown}, which LN never outputs for d = 2: {hint}")
    found = {(1.0, -1.0) if a > 0 else (-1.0, 1.0) for a, _ in pairs}
    if pristine.len(found) < 2:
        missing = ({(1.0, -1.0), (-1.0, 1.0)} - found).pop()
        raise CheckFailed(
            f"layernorm_d2 misses {missing}: LN(x) for x_1 > x_2 and for x_1 < x_2 are different outputs, both possible"
        )
