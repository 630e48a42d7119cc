"""Reference solutions for theory.ipynb; the hidden checks compare student answers against these.

Setting (SPEC part 4): linear classifier f(x; w) = wᵀx whose logit an attack lowers; ridge objective
1/(2n)‖Xw − t‖² + λ‖w‖²; noisy quadratic model L(w) = ½aw² with minibatch gradient noise of variance σ²/B.
"""
import numpy as np

counterexample_w = np.array([0.5, 2.0])  # all positive, but max|w_i| = 2 ≠ 1

REGIMES = ("noise dominated", "curvature dominated")
REMEDIES = ("seek parallel compute", "use higher order optimizers")
regimes = {"A": ("noise dominated", "seek parallel compute"),
           "B": ("curvature dominated", "use higher order optimizers")}
SCALING_OPTIONS = {"A": "same model, same batch size, more steps",
                   "B": "same model, larger batch size (learning rate tuned), same number of steps",
                   "C": "a larger model"}
scaling_choice = "C"
BATCH_POINTS = {"A": "the small-batch end", "B": "the large-batch end", "C": "the knee"}
most_efficient_batch = "C"  # beyond the knee more compute buys little time; before it, time is wasted


def logit_after_fgsm(x, w, eps):
    """
    Logit of a linear classifier after one FGSM step that lowers it.

    Inputs:
    - x: (d,) input
    - w: (d,) weights
    - eps: step size ε > 0

    Returns:
    - f(x') as a float, where x' = x − ε sgn(w), i.e. wᵀx − ε‖w‖₁
    """
    return float(w @ x - eps * np.abs(w).sum())


def logit_after_fgm(x, w, eps):
    """
    Logit of a linear classifier after one FGM step (the gradient, no sign) that lowers it.

    Inputs:
    - x: (d,) input
    - w: (d,) weights
    - eps: step size ε > 0

    Returns:
    - f(x') as a float, where x' = x − ε w, i.e. wᵀx − ε‖w‖₂²
    """
    return float(w @ x - eps * (w @ w))


def ridge_closed_form(X, t, lam):
    """
    Minimiser of 1/(2n)‖Xw − t‖² + λ‖w‖².

    Inputs:
    - X: (n, d) design matrix
    - t: (n,) targets
    - lam: λ > 0

    Returns:
    - w: (d,) array, (XᵀX + 2nλI)⁻¹Xᵀt
    """
    n, d = X.shape
    return np.linalg.solve(X.T @ X + 2 * n * lam * np.eye(d), X.T @ t)  # (d,)


def eps_to_zero_logit(x, X, t, lam):
    """
    FGM step size that brings the logit of the 1-D ridge model f(x) = w x to zero.

    Inputs:
    - x: the input, a float with w x > 0
    - X: (n,) 1-D training inputs
    - t: (n,) targets
    - lam: λ > 0

    Returns:
    - ε as a float: w is the ridge solution, x' = x − ε ∂f/∂x = x − ε w, and f(x') = 0 gives ε = x / w
    """
    w = ridge_closed_form(np.asarray(X, dtype=float).reshape(-1, 1), t, lam)[0]
    return float(x / w)


def eps_fgsm_to_zero_logit(x, X, t, lam):
    """
    FGSM step size that brings the logit of the 1-D ridge model f(x) = w x to zero.

    Inputs:
    - x: the input, a float with w x > 0
    - X: (n,) 1-D training inputs
    - t: (n,) targets
    - lam: λ > 0

    Returns:
    - ε as a float: x' = x − ε sgn(∂f/∂x) = x − ε sgn(w), and f(x') = w x − ε|w| = 0 gives ε = x sgn(w) = |x|,
      whatever λ is
    """
    w = ridge_closed_form(np.asarray(X, dtype=float).reshape(-1, 1), t, lam)[0]
    return float(x * np.sign(w))


def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    """
    Expected loss of SGD on the noisy quadratic model after `steps` steps.

    Inputs:
    - lr: learning rate η
    - batch_size: B; a minibatch gradient is a w + noise of variance σ²/B
    - a: curvature of L(w) = ½ a w²
    - sigma: σ, the standard deviation of one example's gradient noise
    - w0: starting point (deterministic)
    - steps: number of SGD steps (0 gives L(w0))

    Returns:
    - ½ a E[w²] after `steps` steps, as a float; E[w²] follows E[w²]' = (1 − ηa)² E[w²] + η²σ²/B
    """
    second = float(w0) ** 2  # E[w_0²]
    for _ in range(int(steps)):
        second = (1 - lr * a) ** 2 * second + lr ** 2 * sigma ** 2 / batch_size
    return 0.5 * a * second


def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    """
    The learning rate of a grid with the lowest expected NQM loss after `steps` steps.

    Inputs:
    - batch_size: B
    - lrs: sequence of candidate learning rates
    - a, sigma, w0, steps: as in nqm_expected_loss

    Returns:
    - the element of lrs with the lowest nqm_expected_loss
    """
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs]
    return lrs[int(np.argmin(losses))]


def steps_to_target(batch_size, lrs, curvatures, noise, w0, target, max_steps):
    """
    Fewest SGD steps, over a learning-rate grid, for a diagonal NQM to reach an expected loss of `target`.

    The loss of L(w) = ½ Σ h_i w_i² is the sum of 1-D NQM losses, one per direction i.

    Inputs:
    - batch_size: B
    - lrs: candidate learning rates
    - curvatures, noise, w0: (m,) arrays h_i, σ_i, w_0,i
    - target: expected loss to reach
    - max_steps: give up after this many steps

    Returns:
    - the fewest steps (an int), or max_steps + 1 when no learning rate reaches the target
    """
    lr = np.asarray(lrs, dtype=float)[:, None]  # (L, 1)
    decay = (1 - lr * curvatures) ** 2  # (L, m)
    second = np.broadcast_to(np.asarray(w0, dtype=float) ** 2, decay.shape).copy()  # (L, m)
    floor = lr ** 2 * np.asarray(noise, dtype=float) ** 2 / batch_size  # (L, m)
    for step in range(1, max_steps + 1):
        second = decay * second + floor
        if (0.5 * second @ curvatures).min() <= target:
            return step
    return max_steps + 1


# ---------------------------------------------------------------- problem 3: RNN gradients, relative attention


def relu_chain_grad_bound(ws):
    """
    Bounds on |f′(x)| for the scalar chain h_i = ReLU(w_i h_{i−1}), h_0 = x, f(x) = h_n.

    Inputs:
    - ws: the n weights w_1, …, w_n (a list or an (n,) array)

    Returns:
    - (lower, upper) = (0, ∏|w_i|): 0 when some unit is inactive, ∏|w_i| when all are active
    """
    return 0.0, float(np.prod(np.abs(np.asarray(ws, dtype=float))))


def rnn_jacobian_bound(sigma_max_w, n):
    """
    Upper bound on σ_max(∂x_n/∂x_1) for x_{t+1} = sigmoid(W x_t).

    Inputs:
    - sigma_max_w: σ_max(W), the largest singular value of W
    - n: index of the last state (n − 1 steps from x_1 to x_n)

    Returns:
    - (σ_max(W)/4)^(n−1) as a float: ∂x_n/∂x_1 = D_{n−1}W ⋯ D_1W with ‖D_t‖ ≤ ¼
    """
    return float((sigma_max_w / 4) ** (n - 1))


def relative_attention(q, k, v, p):
    """
    Relative attention on a 1-D sequence with one scalar per position (d_k = 1).

    Inputs:
    - q, k, v: (n,) queries, keys, values
    - p: function of an integer offset m = i − j returning the bias p_m (−inf allowed)

    Returns:
    - out: (n,) array, out_i = Σ_j softmax_j(q_i k_j + p(i − j)) v_j
    """
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    n = len(q)
    bias = {m: float(p(m)) for m in range(-(n - 1), n)}  # one call per offset
    offsets = np.arange(n)[:, None] - np.arange(n)[None, :]  # (n, n), entry i − j
    scores = np.outer(q, k) + np.vectorize(bias.get, otypes=[float])(offsets)  # (n, n)
    scores = scores - scores.max(axis=1, keepdims=True)  # no overflow in exp
    weights = np.exp(scores)  # (n, n)
    weights = weights / weights.sum(axis=1, keepdims=True)  # softmax over j
    return weights @ v  # (n,)


def conv_offsets(m):
    """p_m for Conv1D with kernel [2, 0, 1]: x_{i−1} (offset +1) gets twice the weight of x_{i+1} (offset −1)."""
    return {1: float(np.log(2.0)), -1: 0.0}.get(int(m), -np.inf)


# softmax(ln 2, 0) = (⅔, ⅓), times W_V = 3 gives 2 x_{i−1} + x_{i+1}; W_Q W_K = 0 keeps the weights fixed
conv1d_layer = {"p": conv_offsets, "W_Q": 0.0, "W_K": 0.0, "W_V": 3.0}


def maxpool_layer(k):
    """
    Relative attention layer that approximates max pooling of width 2k + 1.

    Inputs:
    - k: half-width of the window

    Returns:
    - {"p", "W_Q", "W_K", "W_V"}: p_m = 0 inside the window (|m| ≤ k), −inf outside; W_Q = W_K = 30 make the
      scores 900 x_i x_j, so the softmax is nearly one-hot on the window's largest x_j (for x in [0.5, 1])
    """
    return {"p": lambda m: 0.0 if abs(m) <= k else -np.inf, "W_Q": 30.0, "W_K": 30.0, "W_V": 1.0}


def layernorm_norm(d):
    """
    Norm of LayerNorm's output (no ε, no affine) for a non-constant x in R^d.

    Inputs:
    - d: the dimension, an int >= 2

    Returns:
    - ‖LN(x)‖ = √d as a float: the d entries have mean 0 and variance 1, so their squares sum to d
    """
    return float(np.sqrt(d))


layernorm_d2 = {(1.0, -1.0), (-1.0, 1.0)}  # x_1 > x_2 or x_1 < x_2; a constant x has no LN (σ = 0)
