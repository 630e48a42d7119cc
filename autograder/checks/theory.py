"""Hidden checks for theory.ipynb: one per graded cell, each called by that cell's hidden test region.

Expected values are computed here with Python floats and with numpy functions captured when this module is
imported (before any student code runs), so patching numpy in a notebook changes nothing. Attacks are checked
against an FGSM/FGM step computed with autograd; the NQM against its moment recursion.
"""

import math
import re
import types

import numpy as np
import torch

from autograder.checks import CheckFailed, check, is_tensor, pristine, require_notebook_defined, substituted
from autograder.content.reference import theory as ref

_np = types.SimpleNamespace(
    asarray=np.asarray,
    solve=np.linalg.solve,
    eye=np.eye,
    isfinite=np.isfinite,
    sign=np.sign,
    array_equal=np.array_equal,
    default_rng=np.random.default_rng,
    ndarray=np.ndarray,
    integer=np.integer,
    floating=np.floating,
    bool_=np.bool_,
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
        if math.prod(shape) == 1 and not (got.dtype == object or "complex" in str(got.dtype)):
            return pristine.float(got.reshape(-1)[0])
        raise CheckFailed(f"{call} should return one number ({what}), got an array of shape {shape}")
    if pristine.isinstance(got, (list, tuple)):
        raise CheckFailed(
            f"{call} should return one number ({what}), got a {kind.__name__} of length {pristine.len(got)}"
        )
    raise CheckFailed(f"{call} should return a float ({what}), got {kind.__name__}")


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
            raise CheckFailed(f"{call}: expected f(x′) = {want:.6g} (wᵀx − {used}), got {got:.6g}{hint}")


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
        raise CheckFailed(
            f"{call}: expected w* = {_fmt(want)}, got {_fmt(got)} (the gradient of the objective "
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


@check("eps_to_zero_logit")
def check_eps_to_zero_logit(eps_to_zero_logit) -> None:
    """ε = x / w for the 1-D ridge w, checked with the reference ridge_closed_form lent to the student's code."""
    require_notebook_defined(eps_to_zero_logit, "eps_to_zero_logit")
    for x, X, t, lam in _eps_cases():
        n = len(X)
        X_in, t_in = X.copy(), t.copy()
        call = f"eps_to_zero_logit(x={x}, X, t, lam={lam}) with n = {n}"
        with substituted(eps_to_zero_logit, ridge_closed_form=ref.ridge_closed_form):
            got = _number(eps_to_zero_logit(x, X_in, t_in, lam), call, "the step size ε")
        _expect_unchanged(X, X_in, "X", call)
        _expect_unchanged(t, t_in, "t", call)
        w = pristine.float(_ridge(X[:, None], t, lam)[0])
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
        raise CheckFailed(
            f"{call}: expected ε = x / w = {want:.6g} (ridge w = {w:.6g}), got {got:.6g} "
            f"(then f(x − εw) = {w * (x - got * w):.3g}, not 0){hint}"
        )


@check("eps_fgsm_to_zero_logit")
def check_eps_fgsm_to_zero_logit(eps_fgsm_to_zero_logit) -> None:
    """ε = x·sgn(w) = |x| for the 1-D ridge w, whatever λ; the reference ridge_closed_form is lent."""
    require_notebook_defined(eps_fgsm_to_zero_logit, "eps_fgsm_to_zero_logit")
    for x, X, t, lam in _eps_cases():
        n = len(X)
        X_in, t_in = X.copy(), t.copy()
        call = f"eps_fgsm_to_zero_logit(x={x}, X, t, lam={lam}) with n = {n}"
        with substituted(eps_fgsm_to_zero_logit, ridge_closed_form=ref.ridge_closed_form):
            got = _number(eps_fgsm_to_zero_logit(x, X_in, t_in, lam), call, "the step size ε")
        _expect_unchanged(X, X_in, "X", call)
        _expect_unchanged(t, t_in, "t", call)
        w = pristine.float(_ridge(X[:, None], t, lam)[0])
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
        raise CheckFailed(
            f"{call}: expected ε = {want:.6g} (ridge w = {w:.6g}), got {got:.6g} "
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
        raise CheckFailed(f"{call}: expected {want:.6g}, got {got:.6g}{hint}")


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
        raise CheckFailed(f"{call}: expected {want}, got {got:.6g}{hint}")


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
