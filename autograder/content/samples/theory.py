"""Realistic wrong answers for the graded cells of theory.ipynb, one per grade id.

WRONG[grade_id] is the complete source of a solution cell that defines the same name as the reference
answer but makes one common mistake. Replacing that one cell of the reference notebook with it must lose
exactly that cell's points; every sample keeps the types right so that the rest of the notebook still runs.
"""

WRONG = {
    # Takes the language model's claim at face value: all entries positive, but max|w_i| = 1.
    "counterexample_w": """counterexample_w = np.array([1.0, 1.0])
""",
    # Forgets the sign: this is the FGM logit.
    "logit_after_fgsm": """def logit_after_fgsm(x, w, eps):
    return float(w @ x - eps * (w @ w))
""",
    # Normalises the gradient step: subtracts ε‖w‖₂ instead of ε‖w‖₂².
    "logit_after_fgm": """def logit_after_fgm(x, w, eps):
    return float(w @ x - eps * np.linalg.norm(w))
""",
    # The printed model answer: nλ where the gradient gives 2nλ.
    "ridge_closed_form": """def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X + n * lam * np.eye(d), X.T @ t)
""",
    # Solves w x − ε w = 0 (forgets that the step x − εw is multiplied by w again).
    "eps_to_zero_logit": """def eps_to_zero_logit(x, X, t, lam):
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * len(X) * lam)
    return float(x / w ** 2)
""",
    # Carries the FGM intuition over: weight decay shrinks w, so the step must grow with λ.
    "eps_fgsm_to_zero_logit": """def eps_fgsm_to_zero_logit(x, X, t, lam):
    return float(abs(x) * (1 + 2 * lam))
""",
    # The noise term uses η instead of η².
    "nqm_expected_loss": """def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    second = w0 ** 2
    for _ in range(steps):
        second = (1 - lr * a) ** 2 * second + lr * sigma ** 2 / batch_size
    return 0.5 * a * second
""",
    # Returns the position of the best learning rate instead of the learning rate.
    "best_learning_rate": """def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs]
    return int(np.argmin(losses))
""",
    # The fewest steps: the large-batch end, ignoring what each step costs.
    "most_efficient_batch": """most_efficient_batch = "B"
""",
    # The two regimes swapped.
    "regimes": """regimes = {"A": ("curvature dominated", "use higher order optimizers"),
           "B": ("noise dominated", "seek parallel compute")}
""",
    # More steps with the same model.
    "scaling_choice": """scaling_choice = "A"
""",
}

WRONG.update(
    {
        # Drops the absolute values: the product of the weights is negative when w_1 < 0.
        "relu_chain_grad_bound": """def relu_chain_grad_bound(ws):
    return 0.0, float(np.prod(ws))
""",
        # Forgets the sigmoid's slope: σ_max(W)^(n−1).
        "rnn_jacobian_bound": """def rnn_jacobian_bound(sigma_max_w, n):
    return float(sigma_max_w ** (n - 1))
""",
        # Offsets j − i instead of i − j.
        "relative_attention": """def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(j - i) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return weights @ v / weights.sum(axis=1)
""",
        # The sibling write-up's answer: offsets flipped, and the logistic sigmoid taken for the softmax.
        "conv1d_layer": """conv1d_layer = {"p": lambda m: {-1: np.log(2), 1: -np.log(2)}.get(m, -np.inf), "W_Q": 0.0, "W_K": 0.0, "W_V": 3.0}
""",
        # The sibling write-up's answer W_Q = W_K = W_V = 1: nearly the window mean.
        "maxpool_layer": """def maxpool_layer(k):
    return {"p": lambda m: 0.0 if abs(m) <= k else -np.inf, "W_Q": 1.0, "W_K": 1.0, "W_V": 1.0}
""",
        # Normalised to unit norm, as if LayerNorm made the vector's norm 1.
        "layernorm_norm": """def layernorm_norm(d):
    return 1.0
""",
        # Only the case x_1 > x_2.
        "layernorm_d2": """layernorm_d2 = {(1.0, -1.0)}
""",
    }
)
