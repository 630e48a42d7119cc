"""Catalogue of solution cells for theory.ipynb: correct alternatives and realistic wrong ones (mutants).

Each entry is (id, source of a complete solution cell). Every mutant's comment names the student mistake it
models. The sources are exec'd as if they were notebook cells (module __main__). Value cells (the vector, the
dict, the letter) define the graded name; function cells define the function.
"""

PRELUDE = "import numpy as np\nimport torch\n"

# ---------------------------------------------------------------- counterexample_w
COUNTEREXAMPLE_CORRECT = [
    ("the handout's counterexample", "counterexample_w = np.array([0.5, 2.0])"),
    ("a list of small entries", "counterexample_w = [0.1, 0.2, 0.3]"),
    ("equal entries, not 1", "counterexample_w = np.full(4, 2.0)"),
    ("integers", "counterexample_w = np.array([3, 1, 2])"),
    ("a torch tensor", "counterexample_w = torch.tensor([0.25, 0.5])"),
]
COUNTEREXAMPLE_MUTANTS = [
    # all ones: the norms agree, so this supports the claim instead of refuting it
    ("all ones", "counterexample_w = np.ones(3)"),
    # largest entry exactly 1: still equal
    ("max entry is 1", "counterexample_w = np.array([0.5, 1.0])"),
    # mixed signs: the claim is about all-positive w
    ("mixed signs", "counterexample_w = np.array([1.0, -2.0])"),
    # a zero entry is not positive (and sgn(0) = 0)
    ("zero entry", "counterexample_w = np.array([0.0, 2.0])"),
    # a matrix, not a vector
    ("2-D array", "counterexample_w = np.array([[0.5, 2.0]])"),
    # a scalar
    ("scalar", "counterexample_w = 2.0"),
    # the norms themselves instead of w
    ("tuple of the norms as strings", "counterexample_w = ('0.1', '0.2')"),
    # an empty vector
    ("empty", "counterexample_w = np.array([])"),
    # not finite
    ("infinite entry", "counterexample_w = np.array([0.5, np.inf])"),
    # booleans are 1 when True
    ("booleans", "counterexample_w = np.array([True, True])"),
]

# ---------------------------------------------------------------- logit_after_fgsm
FGSM_CORRECT = [
    (
        "closed form with np.abs",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - eps * np.abs(w).sum())
""",
    ),
    (
        "build x' and evaluate",
        """
def logit_after_fgsm(x, w, eps):
    x_adv = x - eps * np.sign(w)
    return float(np.dot(w, x_adv))
""",
    ),
    (
        "np.linalg.norm with ord=1",
        """
def logit_after_fgsm(x, w, eps):
    return np.dot(w, x) - eps * np.linalg.norm(w, ord=1)
""",
    ),
    (
        "autograd",
        """
def logit_after_fgsm(x, w, eps):
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w)
    (wt @ xt).backward()
    return (wt @ (xt - eps * xt.grad.sign())).item()
""",
    ),
]
FGSM_MUTANTS = [
    # steps up the gradient: the logit rises
    (
        "plus sign",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x + eps * np.abs(w).sum())
""",
    ),
    # uses the FGM result (no sign)
    (
        "FGM formula",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - eps * w @ w)
""",
    ),
    # sgn(w)ᵀw taken as Σw (wrong with negative weights)
    (
        "sum without abs",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - eps * w.sum())
""",
    ),
    # the 2-norm instead of the 1-norm
    (
        "l2 norm",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - eps * np.linalg.norm(w))
""",
    ),
    # the sign of the input instead of the gradient
    (
        "sign of x",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ (x - eps * np.sign(x)))
""",
    ),
    # returns the adversarial input, not its logit
    (
        "returns x'",
        """
def logit_after_fgsm(x, w, eps):
    return x - eps * np.sign(w)
""",
    ),
    # perturbs x in place
    (
        "in place",
        """
def logit_after_fgsm(x, w, eps):
    x -= eps * np.sign(w)
    return float(w @ x)
""",
    ),
    # forgets ε
    (
        "eps ignored",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - np.abs(w).sum())
""",
    ),
    # ε times the number of entries
    (
        "eps times d",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - eps * len(w))
""",
    ),
]

# ---------------------------------------------------------------- logit_after_fgm
FGM_CORRECT = [
    (
        "closed form",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x - eps * (w @ w))
""",
    ),
    (
        "build x' and evaluate",
        """
def logit_after_fgm(x, w, eps):
    return float(np.dot(w, x - eps * w))
""",
    ),
    (
        "squared norm",
        """
def logit_after_fgm(x, w, eps):
    return np.dot(w, x) - eps * np.linalg.norm(w) ** 2
""",
    ),
    (
        "autograd",
        """
def logit_after_fgm(x, w, eps):
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w)
    (wt @ xt).backward()
    return (wt @ (xt.detach() - eps * xt.grad)).item()
""",
    ),
]
FGM_MUTANTS = [
    # the norm, not squared (as if the step were normalised)
    (
        "norm not squared",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x - eps * np.linalg.norm(w))
""",
    ),
    # keeps the sign: that is FGSM
    (
        "FGSM formula",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x - eps * np.abs(w).sum())
""",
    ),
    # steps up the gradient
    (
        "plus sign",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x + eps * (w @ w))
""",
    ),
    # sum of weights instead of sum of squares
    (
        "sum of w",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x - eps * w.sum())
""",
    ),
    # ε squared
    (
        "eps squared",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x - eps ** 2 * (w @ w))
""",
    ),
    # elementwise product instead of a dot product: returns a vector
    (
        "elementwise",
        """
def logit_after_fgm(x, w, eps):
    return w * (x - eps * w)
""",
    ),
    # in place
    (
        "in place",
        """
def logit_after_fgm(x, w, eps):
    x -= eps * w
    return float(w @ x)
""",
    ),
]

# ---------------------------------------------------------------- ridge_closed_form
RIDGE_CORRECT = [
    (
        "np.linalg.solve",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X + 2 * n * lam * np.eye(d), X.T @ t)
""",
    ),
    (
        "inverse",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.inv(X.T @ X + 2 * n * lam * np.identity(d)) @ X.T @ t
""",
    ),
    (
        "scaled by 1/n on both sides",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X / n + 2 * lam * np.eye(d), X.T @ t / n)
""",
    ),
    (
        "augmented least squares",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    A = np.vstack([X, np.sqrt(2 * n * lam) * np.eye(d)])
    b = np.concatenate([t, np.zeros(d)])
    return np.linalg.lstsq(A, b, rcond=None)[0]
""",
    ),
    (
        "push-through identity (dual form)",
        """
def ridge_closed_form(X, t, lam):
    n = X.shape[0]
    return X.T @ np.linalg.solve(X @ X.T + 2 * n * lam * np.eye(n), t)
""",
    ),
    (
        "gradient descent to convergence",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    H = X.T @ X / n + 2 * lam * np.eye(d)
    w = np.zeros(d)
    lr = 1 / np.linalg.eigvalsh(H).max()
    for _ in range(20000):
        w = w - lr * (H @ w - X.T @ t / n)
    return w
""",
    ),
]
RIDGE_MUTANTS = [
    # the printed model answer: nλ instead of 2nλ
    (
        "LLM answer n lambda",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X + n * lam * np.eye(d), X.T @ t)
""",
    ),
    # λ without n
    (
        "lambda without n",
        """
def ridge_closed_form(X, t, lam):
    d = X.shape[1]
    return np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ t)
""",
    ),
    # 2λ without n
    (
        "2 lambda without n",
        """
def ridge_closed_form(X, t, lam):
    d = X.shape[1]
    return np.linalg.solve(X.T @ X + 2 * lam * np.eye(d), X.T @ t)
""",
    ),
    # Xᵀt not divided by n after dividing XᵀX
    (
        "1/n on one side only",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X / n + 2 * lam * np.eye(d), X.T @ t)
""",
    ),
    # identity of the wrong size (n × n): crashes
    (
        "identity n by n",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X + 2 * n * lam * np.eye(n), X.T @ t)
""",
    ),
    # plain least squares
    (
        "no regularisation",
        """
def ridge_closed_form(X, t, lam):
    return np.linalg.lstsq(X, t, rcond=None)[0]
""",
    ),
    # a column vector (d, 1)
    (
        "column vector",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X + 2 * n * lam * np.eye(d), X.T @ t.reshape(-1, 1))
""",
    ),
    # a torch tensor
    (
        "torch result",
        """
def ridge_closed_form(X, t, lam):
    X, t = torch.tensor(X), torch.tensor(t)
    n, d = X.shape
    return torch.linalg.solve(X.T @ X + 2 * n * lam * torch.eye(d, dtype=X.dtype), X.T @ t)
""",
    ),
    # centres the data in place (changes the caller's X)
    (
        "centres X in place",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    X -= X.mean(axis=0)
    return np.linalg.solve(X.T @ X + 2 * n * lam * np.eye(d), X.T @ t)
""",
    ),
]

# ---------------------------------------------------------------- eps_to_zero_logit
EPS_CORRECT = [
    (
        "uses ridge_closed_form",
        """
def eps_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
    return float(x / w)
""",
    ),
    (
        "1-D formula",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return x / w
""",
    ),
    (
        "root of the logit by bisection-free algebra",
        """
def eps_to_zero_logit(x, X, t, lam):
    w = X @ t / (X @ X + 2 * len(X) * lam)
    return -(w * x) / (-w * w)
""",
    ),
]
EPS_MUTANTS = [
    # x·w instead of x / w
    (
        "x times w",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return x * w
""",
    ),
    # solved w x − ε w = 0
    (
        "x over w squared",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return x / w ** 2
""",
    ),
    # the plausible wrong derivation in the handout
    (
        "handout derivation",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return x * w / ((1 + 2 * lam) * w ** 2)
""",
    ),
    # the printed model answer's ridge (nλ)
    (
        "ridge with n lambda",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + n * lam)
    return x / w
""",
    ),
    # λ without n
    (
        "ridge with lambda",
        """
def eps_to_zero_logit(x, X, t, lam):
    w = np.sum(X * t) / (np.sum(X ** 2) + lam)
    return x / w
""",
    ),
    # sign flipped
    (
        "negative",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return -x / w
""",
    ),
    # no weight decay
    (
        "least squares w",
        """
def eps_to_zero_logit(x, X, t, lam):
    w = np.sum(X * t) / np.sum(X ** 2)
    return x / w
""",
    ),
    # passes the 1-D inputs to ridge_closed_form, which wants X of shape (n, 1): crashes
    (
        "1-D X passed to ridge_closed_form",
        """
def eps_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X, t, lam)
    return x / w
""",
    ),
    # returns w instead of ε
    (
        "returns w",
        """
def eps_to_zero_logit(x, X, t, lam):
    return ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
""",
    ),
]

# ---------------------------------------------------------------- eps_fgsm_to_zero_logit
EPS_FGSM_CORRECT = [
    (
        "uses ridge_closed_form",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
    return float(x * np.sign(w))
""",
    ),
    (
        "absolute value of x",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    return abs(x)  # w x > 0, so x sgn(w) = |x|, and lambda drops out
""",
    ),
    (
        "divides by the sign",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = X @ t / (X @ X + 2 * len(X) * lam)
    return x / np.sign(w)
""",
    ),
    (
        "the gradient's sign from autograd",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X.reshape(-1, 1), t, lam)  # (1,)
    xt = torch.tensor([float(x)], dtype=torch.float64, requires_grad=True)
    (torch.tensor(w) @ xt).backward()
    return float(x / xt.grad.sign())  # w (x - eps sgn w) = 0
""",
    ),
]
EPS_FGSM_MUTANTS = [
    # the FGM intuition carried over: weight decay shrinks w, so "the step must grow with λ"
    (
        "|x| times (1 + 2 lambda)",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    return float(abs(x) * (1 + 2 * lam))
""",
    ),
    # the same factor on the other side
    (
        "|x| over (1 + 2 lambda)",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    return float(abs(x) / (1 + 2 * lam))
""",
    ),
    # the FGM answer of 1.2.3, copied
    (
        "FGM answer x over w",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
    return float(x / w)
""",
    ),
    # ε = x, right only while w > 0
    (
        "x without abs",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    return float(x)
""",
    ),
    # the step pushed along +sgn(w): ε comes out negative
    (
        "minus x sgn w",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return float(-x * np.sign(w))
""",
    ),
    # the size of w kept, its sign dropped
    (
        "x over |w|",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return float(x / abs(w))
""",
    ),
    # returns the direction of the step, not its size
    (
        "returns sgn w",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
    return float(np.sign(w))
""",
    ),
    # solved w x − ε w = 0 with the sign in the wrong place: ε = x·w
    (
        "x times w",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
    return float(x * w)
""",
    ),
    # passes the 1-D inputs to ridge_closed_form, which wants X of shape (n, 1): crashes
    (
        "1-D X passed to ridge_closed_form",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X, t, lam)
    return float(x * np.sign(w))
""",
    ),
]

# ---------------------------------------------------------------- nqm_expected_loss
NQM_CORRECT = [
    (
        "loop over steps",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) ** 2 * m2 + lr ** 2 * sigma ** 2 / batch_size
    return 0.5 * a * m2
""",
    ),
    (
        "closed form of the geometric series",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    r = (1 - lr * a) ** 2
    q = lr ** 2 * sigma ** 2 / batch_size
    return 0.5 * a * (r ** steps * w0 ** 2 + q * (1 - r ** steps) / (1 - r))
""",
    ),
    (
        "mean and variance tracked separately",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    mean, var = float(w0), 0.0
    for _ in range(steps):
        mean = (1 - lr * a) * mean
        var = (1 - lr * a) ** 2 * var + (lr * sigma) ** 2 / batch_size
    return a * (mean ** 2 + var) / 2
""",
    ),
    (
        "numpy arrays of moments",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    second = np.empty(steps + 1)
    second[0] = w0 ** 2
    for k in range(steps):
        second[k + 1] = (1 - lr * a) ** 2 * second[k] + lr ** 2 * sigma ** 2 / batch_size
    return np.float64(0.5 * a * second[-1])
""",
    ),
]
NQM_MUTANTS = [
    # η instead of η² on the noise
    (
        "lr not squared on noise",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) ** 2 * m2 + lr * sigma ** 2 / batch_size
    return 0.5 * a * m2
""",
    ),
    # noise not averaged over the batch
    (
        "no batch size",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) ** 2 * m2 + lr ** 2 * sigma ** 2
    return 0.5 * a * m2
""",
    ),
    # σ/B: standard deviation instead of variance
    (
        "sigma not squared",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) ** 2 * m2 + lr ** 2 * sigma / batch_size
    return 0.5 * a * m2
""",
    ),
    # E[w] recursion used for E[w²]: (1 − ηa) not squared
    (
        "decay not squared",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) * m2 + lr ** 2 * sigma ** 2 / batch_size
    return 0.5 * a * m2
""",
    ),
    # only the mean: noise ignored
    (
        "mean only",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    mean = w0
    for _ in range(steps):
        mean = (1 - lr * a) * mean
    return 0.5 * a * mean ** 2
""",
    ),
    # returns E[w²]
    (
        "no half a",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) ** 2 * m2 + lr ** 2 * sigma ** 2 / batch_size
    return m2
""",
    ),
    # one step too many
    (
        "off by one",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps + 1):
        m2 = (1 - lr * a) ** 2 * m2 + lr ** 2 * sigma ** 2 / batch_size
    return 0.5 * a * m2
""",
    ),
    # E[w0²] taken as w0
    (
        "start not squared",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0
    for _ in range(steps):
        m2 = (1 - lr * a) ** 2 * m2 + lr ** 2 * sigma ** 2 / batch_size
    return 0.5 * a * m2
""",
    ),
    # variance of a mean taken as σ²/B²
    (
        "batch squared",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) ** 2 * m2 + lr ** 2 * sigma ** 2 / batch_size ** 2
    return 0.5 * a * m2
""",
    ),
    # a single Monte Carlo run instead of the expectation
    (
        "one sampled run",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    rng = np.random.default_rng(0)
    w = w0
    for _ in range(steps):
        w = w - lr * (a * w + rng.normal(0, sigma / np.sqrt(batch_size)))
    return 0.5 * a * w ** 2
""",
    ),
]

# ---------------------------------------------------------------- best_learning_rate
BEST_LR_CORRECT = [
    (
        "argmin over a list",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs]
    return lrs[int(np.argmin(losses))]
""",
    ),
    (
        "min with a key",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    return min(lrs, key=lambda lr: nqm_expected_loss(lr, batch_size, a, sigma, w0, steps))
""",
    ),
    (
        "numpy array of lrs",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    lrs = np.asarray(lrs)
    losses = np.array([nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs])
    return lrs[losses.argmin()]
""",
    ),
    (
        "explicit loop",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    best, best_loss = None, float("inf")
    for lr in lrs:
        loss = nqm_expected_loss(lr, batch_size, a, sigma, w0, steps)
        if loss < best_loss:
            best, best_loss = lr, loss
    return best
""",
    ),
]
BEST_LR_MUTANTS = [
    # argmax
    (
        "highest loss",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs]
    return lrs[int(np.argmax(losses))]
""",
    ),
    # the index
    (
        "returns index",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs]
    return int(np.argmin(losses))
""",
    ),
    # the loss
    (
        "returns loss",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    return min(nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs)
""",
    ),
    # batch size not passed on
    (
        "batch size ignored",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, 1, a, sigma, w0, steps) for lr in lrs]
    return lrs[int(np.argmin(losses))]
""",
    ),
    # argmin taken in the sorted grid, then indexed into the original order
    (
        "sorted then indexed",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in sorted(lrs)]
    return lrs[int(np.argmin(losses))]
""",
    ),
    # a single step instead of `steps`
    (
        "one step",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, 1) for lr in lrs]
    return lrs[int(np.argmin(losses))]
""",
    ),
    # the largest stable learning rate, as a rule of thumb
    (
        "largest stable lr",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    return max(lr for lr in lrs if lr < 2 / a)
""",
    ),
]

# ---------------------------------------------------------------- most_efficient_batch
EFFICIENT_CORRECT = [
    ("the letter", 'most_efficient_batch = "C"'),
    ("lower case with spaces", 'most_efficient_batch = " c "'),
    ("letter and text", 'most_efficient_batch = "C. the knee"'),
    ("in parentheses", 'most_efficient_batch = "(C)"'),
]
EFFICIENT_MUTANTS = [
    # the fewest steps, whatever each costs
    ("B", 'most_efficient_batch = "B"'),
    # the least compute per example, whatever the wait
    ("A", 'most_efficient_batch = "A"'),
    # two answers
    ("two letters", 'most_efficient_batch = "A, C"'),
    # a list
    ("list", 'most_efficient_batch = ["C"]'),
    # the batch size read off the plot
    ("batch size", 'most_efficient_batch = "128"'),
    # the text of the option
    ("text only", 'most_efficient_batch = "the knee"'),
    # an option that does not exist
    ("D", 'most_efficient_batch = "D"'),
    # an index
    ("number", "most_efficient_batch = 3"),
]

# ---------------------------------------------------------------- regimes
REGIMES_CORRECT = [
    (
        "the handout's wording",
        """
regimes = {"A": ("noise dominated", "seek parallel compute"),
           "B": ("curvature dominated", "use higher order optimizers")}
""",
    ),
    (
        "hyphens, capitals and lists",
        """
regimes = {"A": ["Noise-dominated", "Seek parallel compute"],
           "B": ["Curvature-dominated", "Use higher-order optimisers."]}
""",
    ),
]
REGIMES_MUTANTS = [
    # regimes swapped
    (
        "regimes swapped",
        """
regimes = {"A": ("curvature dominated", "seek parallel compute"),
           "B": ("noise dominated", "use higher order optimizers")}
""",
    ),
    # remedies swapped
    (
        "remedies swapped",
        """
regimes = {"A": ("noise dominated", "use higher order optimizers"),
           "B": ("curvature dominated", "seek parallel compute")}
""",
    ),
    # both swapped
    (
        "both swapped",
        """
regimes = {"A": ("curvature dominated", "use higher order optimizers"),
           "B": ("noise dominated", "seek parallel compute")}
""",
    ),
    # remedy first
    (
        "pair in the wrong order",
        """
regimes = {"A": ("seek parallel compute", "noise dominated"),
           "B": ("use higher order optimizers", "curvature dominated")}
""",
    ),
    # own words
    (
        "own wording",
        """
regimes = {"A": ("noisy", "bigger batches"),
           "B": ("curvature dominated", "use higher order optimizers")}
""",
    ),
    # lower-case keys
    (
        "lower-case keys",
        """
regimes = {"a": ("noise dominated", "seek parallel compute"),
           "b": ("curvature dominated", "use higher order optimizers")}
""",
    ),
    # only the regimes
    (
        "regimes only",
        """
regimes = {"A": "noise dominated", "B": "curvature dominated"}
""",
    ),
]

# ---------------------------------------------------------------- scaling_choice
SCALING_CORRECT = [
    ("the letter", 'scaling_choice = "C"'),
    ("lower case with spaces", 'scaling_choice = " c "'),
    ("letter and text", 'scaling_choice = "C. a larger model"'),
    ("in parentheses", 'scaling_choice = "(C)"'),
]
SCALING_MUTANTS = [
    # more steps
    ("A", 'scaling_choice = "A"'),
    # larger batch
    ("B", 'scaling_choice = "B"'),
    # two answers
    ("two letters", 'scaling_choice = "B, C"'),
    # a list
    ("list", 'scaling_choice = ["C"]'),
    # an option that does not exist
    ("D", 'scaling_choice = "D"'),
    # the text of the option
    ("text only", 'scaling_choice = "a larger model"'),
    # an index
    ("number", "scaling_choice = 3"),
]

CATALOGUE = {  # grade id -> (correct alternatives, mutants)
    "counterexample_w": (COUNTEREXAMPLE_CORRECT, COUNTEREXAMPLE_MUTANTS),
    "logit_after_fgsm": (FGSM_CORRECT, FGSM_MUTANTS),
    "logit_after_fgm": (FGM_CORRECT, FGM_MUTANTS),
    "ridge_closed_form": (RIDGE_CORRECT, RIDGE_MUTANTS),
    "eps_to_zero_logit": (EPS_CORRECT, EPS_MUTANTS),
    "eps_fgsm_to_zero_logit": (EPS_FGSM_CORRECT, EPS_FGSM_MUTANTS),
    "nqm_expected_loss": (NQM_CORRECT, NQM_MUTANTS),
    "best_learning_rate": (BEST_LR_CORRECT, BEST_LR_MUTANTS),
    "most_efficient_batch": (EFFICIENT_CORRECT, EFFICIENT_MUTANTS),
    "regimes": (REGIMES_CORRECT, REGIMES_MUTANTS),
    "scaling_choice": (SCALING_CORRECT, SCALING_MUTANTS),
}

# ---------------------------------------------------------------- relu_chain_grad_bound
RELU_CHAIN_CORRECT = [
    (
        "np.prod of np.abs",
        """
def relu_chain_grad_bound(ws):
    return 0.0, float(np.prod(np.abs(ws)))
""",
    ),
    (
        "a loop",
        """
def relu_chain_grad_bound(ws):
    upper = 1.0
    for w in ws:
        upper *= abs(w)
    return (0, upper)
""",
    ),
    (
        "abs of the product, as a list",
        """
def relu_chain_grad_bound(ws):
    return [0.0, abs(float(np.prod(ws)))]
""",
    ),
    (
        "math.prod",
        """
import math


def relu_chain_grad_bound(ws):
    return 0, math.prod(abs(float(w)) for w in ws)
""",
    ),
    (
        "float32 tensor product",
        """
def relu_chain_grad_bound(ws):
    return 0.0, torch.tensor(ws).abs().prod()
""",
    ),
    (
        "np.float32",
        """
def relu_chain_grad_bound(ws):
    return np.float32(0), np.prod(np.abs(np.asarray(ws, dtype=np.float32)))
""",
    ),
    (
        "a tensor pair",
        """
def relu_chain_grad_bound(ws):
    w = torch.as_tensor(ws, dtype=torch.float64)
    return torch.stack([torch.zeros(()), w.abs().prod()])
""",
    ),
]
RELU_CHAIN_MUTANTS = [
    # the product without absolute values: negative when w_1 < 0
    (
        "product without abs",
        """
def relu_chain_grad_bound(ws):
    return 0.0, float(np.prod(ws))
""",
    ),
    # the largest weight: as if the chain rule took the steepest layer
    (
        "max weight",
        """
def relu_chain_grad_bound(ws):
    return 0.0, float(np.max(np.abs(ws)))
""",
    ),
    # the w_i = 1 answer for every chain
    (
        "always 1",
        """
def relu_chain_grad_bound(ws):
    return 0.0, 1.0
""",
    ),
    # sums the slopes instead of multiplying them
    (
        "sum of abs",
        """
def relu_chain_grad_bound(ws):
    return 0.0, float(np.sum(np.abs(ws)))
""",
    ),
    # lower bound −∏|w_i|: a bound on f′, not on |f′|
    (
        "negative lower bound",
        """
def relu_chain_grad_bound(ws):
    upper = float(np.prod(np.abs(ws)))
    return -upper, upper
""",
    ),
    # skips the first layer's slope
    (
        "first weight left out",
        """
def relu_chain_grad_bound(ws):
    return 0.0, float(np.prod(np.abs(ws[1:])))
""",
    ),
    # upper and lower swapped
    (
        "pair swapped",
        """
def relu_chain_grad_bound(ws):
    return float(np.prod(np.abs(ws))), 0.0
""",
    ),
    # returns the upper bound only
    (
        "upper only",
        """
def relu_chain_grad_bound(ws):
    return float(np.prod(np.abs(ws)))
""",
    ),
    # lower bound min|w_i|^n: as if every unit were always active
    (
        "lower bound from the smallest weight",
        """
def relu_chain_grad_bound(ws):
    a = np.abs(ws)
    return float(a.min() ** len(a)), float(np.prod(a))
""",
    ),
]

# ---------------------------------------------------------------- rnn_jacobian_bound
RNN_CORRECT = [
    ("closed form", "def rnn_jacobian_bound(sigma_max_w, n):\n    return (sigma_max_w / 4) ** (n - 1)\n"),
    (
        "a loop over the steps",
        """
def rnn_jacobian_bound(sigma_max_w, n):
    bound = 1.0
    for _ in range(n - 1):
        bound *= 0.25 * sigma_max_w
    return bound
""",
    ),
    (
        "np.power, as an array",
        """
def rnn_jacobian_bound(sigma_max_w, n):
    return np.power(np.float64(sigma_max_w) / 4.0, n - 1) * np.ones(1)
""",
    ),
    (
        "in logs",
        """
def rnn_jacobian_bound(sigma_max_w, n):
    return float(np.exp((n - 1) * (np.log(sigma_max_w) - np.log(4))))
""",
    ),
    ("0-d tensor", "def rnn_jacobian_bound(sigma_max_w, n):\n    return torch.tensor(sigma_max_w / 4) ** (n - 1)\n"),
    (
        "float32",
        "def rnn_jacobian_bound(sigma_max_w, n):\n    return np.float32(sigma_max_w / 4) ** np.float32(n - 1)\n",
    ),
]
RNN_MUTANTS = [
    # forgets that σ′ ≤ ¼
    ("no quarter", "def rnn_jacobian_bound(sigma_max_w, n):\n    return sigma_max_w ** (n - 1)\n"),
    # n factors instead of n − 1
    ("n steps", "def rnn_jacobian_bound(sigma_max_w, n):\n    return (sigma_max_w / 4) ** n\n"),
    # the sigmoid's slope taken as ½
    ("slope one half", "def rnn_jacobian_bound(sigma_max_w, n):\n    return (sigma_max_w / 2) ** (n - 1)\n"),
    # the quarter once, not per step
    ("quarter once", "def rnn_jacobian_bound(sigma_max_w, n):\n    return sigma_max_w ** (n - 1) / 4\n"),
    # the worked example's σ_max = ¼ hard-coded
    ("example hard-coded", "def rnn_jacobian_bound(sigma_max_w, n):\n    return (1 / 16) ** (n - 1)\n"),
    # operator precedence: (σ/4)**n − 1
    ("precedence", "def rnn_jacobian_bound(sigma_max_w, n):\n    return (sigma_max_w / 4) ** n - 1\n"),
    # a loop one step short
    (
        "loop one short",
        """
def rnn_jacobian_bound(sigma_max_w, n):
    bound = 1.0
    for _ in range(n - 2):
        bound *= sigma_max_w / 4
    return bound
""",
    ),
    # adds the steps instead of multiplying them
    ("linear in n", "def rnn_jacobian_bound(sigma_max_w, n):\n    return (n - 1) * sigma_max_w / 4\n"),
]

# ---------------------------------------------------------------- relative_attention
ATTENTION_CORRECT = [
    (
        "float32 throughout",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    bias = np.array([[p(i - j) for j in range(n)] for i in range(n)], dtype=np.float32)
    scores = np.outer(q, k).astype(np.float32) + bias
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)) @ np.asarray(v, dtype=np.float32)
""",
    ),
    (
        "double loop",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    out = np.zeros(n)
    for i in range(n):
        scores = np.array([q[i] * k[j] + p(i - j) for j in range(n)])
        weights = np.exp(scores - scores.max())
        out[i] = weights @ v / weights.sum()
    return out
""",
    ),
    (
        "torch softmax",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    bias = torch.tensor([[float(p(i - j)) for j in range(n)] for i in range(n)], dtype=torch.float64)
    scores = torch.outer(torch.as_tensor(q, dtype=torch.float64), torch.as_tensor(k, dtype=torch.float64)) + bias
    return (torch.softmax(scores, dim=-1) @ torch.as_tensor(v, dtype=torch.float64)).numpy()
""",
    ),
    (
        "p on an array of offsets, -inf as -1e9",
        """
def relative_attention(q, k, v, p):
    idx = np.arange(len(q))
    offsets = idx[:, None] - idx[None, :]  # (n, n)
    scores = np.outer(q, k) + np.nan_to_num(p(offsets), neginf=-1e9)
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.einsum("ij,j->i", weights, v)
""",
    ),
    (
        "logsumexp",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])
    top = scores.max(axis=1, keepdims=True)
    log_weights = scores - top - np.log(np.exp(scores - top).sum(axis=1, keepdims=True))
    return np.exp(log_weights) @ np.asarray(v)
""",
    ),
]
ATTENTION_MUTANTS = [
    # softmax over the queries i instead of the keys j
    (
        "softmax over i",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=0, keepdims=True))
    weights /= weights.sum(axis=0, keepdims=True)
    return weights @ v
""",
    ),
    # offset j − i instead of i − j
    (
        "offset j minus i",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(j - i) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v
""",
    ),
    # no max subtraction: exp overflows for large scores
    (
        "no max subtraction",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])
    weights = np.exp(scores)
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v
""",
    ),
    # the relative bias p left out
    (
        "p ignored",
        """
def relative_attention(q, k, v, p):
    scores = np.outer(q, k)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v
""",
    ),
    # weights transposed before the values
    (
        "weights transposed",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights.T @ v
""",
    ),
    # p added after the softmax
    (
        "p after the softmax",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.outer(q, k)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    bias = np.array([[p(i - j) for j in range(n)] for i in range(n)])
    return (weights + np.nan_to_num(bias, neginf=0.0)) @ v
""",
    ),
    # |i − j|: a symmetric bias
    (
        "absolute offset",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(abs(i - j)) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v
""",
    ),
    # the weights, not the weighted values
    (
        "returns the weights",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)
""",
    ),
    # scaled by 1/√n as if d_k were the sequence length
    (
        "scaled by sqrt n",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] / np.sqrt(n) + p(i - j) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v
""",
    ),
    # normalises q in place
    (
        "changes q in place",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    q -= 0.0 * q.mean()
    q *= 1.0
    q[:] = q - q.min() + q.min()
    q += 1e-3
    scores = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v
""",
    ),
]

# ---------------------------------------------------------------- conv1d_layer
_CONV = '{{"p": {p}, "W_Q": {wq}, "W_K": {wk}, "W_V": {wv}}}'


def _conv_cell(p, wq="0.0", wk="0.0", wv="3.0", before=""):
    return before + "conv1d_layer = " + _CONV.format(p=p, wq=wq, wk=wk, wv=wv) + "\n"


CONV_CORRECT = [
    ("float32 biases", _conv_cell("lambda m: {1: np.float32(np.log(2)), -1: np.float32(0)}.get(m, -np.inf)")),
    (
        "np.where, works on arrays too",
        _conv_cell("lambda m: np.where(m == 1, np.log(2.0), np.where(m == -1, 0.0, -np.inf))"),
    ),
    ("dict lookup", _conv_cell("lambda m: {1: np.log(2), -1: 0.0}.get(m, -np.inf)")),
    (
        "a function, shifted biases, W_Q = 1, W_K = 0",
        _conv_cell(
            "conv_p",
            wq="1.0",
            wk="0",
            before="def conv_p(m):\n    return 5 + np.log(2) if m == 1 else (5.0 if m == -1 else -np.inf)\n\n\n",
        ),
    ),
    ("-1e9 for -inf, integer W_V", _conv_cell("lambda m: np.log(2) if m == 1 else (0.0 if m == -1 else -1e9)", wv="3")),
    ("log weights", _conv_cell("lambda m: np.log({1: 2.0, -1: 1.0}.get(m, 0.0))", wq="0", wk="2.5")),
]
CONV_MUTANTS = [
    # the sibling write-up: offsets flipped and sigmoid taken for softmax
    ("write-up answer", _conv_cell("lambda m: {-1: np.log(2), 1: -np.log(2)}.get(m, -np.inf)")),
    # offsets flipped only
    ("offsets flipped", _conv_cell("lambda m: {-1: np.log(2), 1: 0.0}.get(m, -np.inf)")),
    # sigmoid for softmax only: ±ln 2 gives 0.8 and 0.2
    ("sigmoid for softmax", _conv_cell("lambda m: {1: np.log(2), -1: -np.log(2)}.get(m, -np.inf)")),
    # W_V = 1: the weights sum to 1
    ("W_V = 1", _conv_cell("lambda m: {1: np.log(2), -1: 0.0}.get(m, -np.inf)", wv="1.0")),
    # offsets outside ±1 left at 0
    ("other offsets 0", _conv_cell("lambda m: {1: np.log(2), -1: 0.0}.get(m, 0.0)")),
    # W_Q = W_K = 1: the scores depend on x
    ("W_Q W_K = 1", _conv_cell("lambda m: {1: np.log(2), -1: 0.0}.get(m, -np.inf)", wq="1.0", wk="1.0")),
    # p only defined on ±1: raises KeyError elsewhere
    ("p without a default", _conv_cell("lambda m: {1: np.log(2), -1: 0.0}[m]")),
    # the kernel weights as biases: softmax(2, 1) is not (⅔, ⅓)
    ("kernel values as biases", _conv_cell("lambda m: {1: 2.0, -1: 1.0}.get(m, -np.inf)")),
    # p_0 left finite: x_i gets weight too
    ("offset 0 kept", _conv_cell("lambda m: {1: np.log(2), -1: 0.0, 0: 0.0}.get(m, -np.inf)")),
    # a list of biases, not a function
    ("p as a list", _conv_cell("[0.0, -np.inf, np.log(2)]")),
]

# ---------------------------------------------------------------- maxpool_layer
_POOL = """
def maxpool_layer(k):
    return {{"p": lambda m: {p}, "W_Q": {wq}, "W_K": {wk}, "W_V": {wv}}}
"""


def _pool_cell(p="0.0 if abs(m) <= k else -np.inf", wq="30.0", wk="30.0", wv="1.0"):
    return _POOL.format(p=p, wq=wq, wk=wk, wv=wv)


MAXPOOL_CORRECT = [
    ("C = 20, just sharp enough", _pool_cell(wq="20.0", wk="20.0")),
    ("np.where window", _pool_cell(p="np.where(np.abs(m) <= k, 0.0, -np.inf)")),
    ("C = 30", _pool_cell()),
    ("C = 1000, -1e9 outside", _pool_cell(p="0.0 if -k <= m <= k else -1e9", wq="1000.0", wk="1000.0")),
    ("W_Q = C squared, W_K = 1", _pool_cell(wq="400", wk="1")),
    (
        "a helper and a constant bias",
        """
C = 50.0


def window(k):
    def p(m):
        return 3.0 if abs(m) <= k else -np.inf

    return p


def maxpool_layer(k):
    return {"p": window(k), "W_Q": C, "W_K": C, "W_V": 1}
""",
    ),
]
MAXPOOL_MUTANTS = [
    # W_Q = W_K = 10: within 0.01 on random x, but 0.012 (k = 2) and 0.016 (k = 3) where the query is 0.5
    # and the maximum sits beside near-maxima
    ("C = 10", _pool_cell(wq="10.0", wk="10.0")),
    # W_Q·W_K = 144: 0.012 at k = 3 in the worst case
    ("C = 12", _pool_cell(wq="12.0", wk="12.0")),
    # the sibling write-up: W_Q = W_K = W_V = 1, nearly the window mean
    ("write-up answer", _pool_cell(wq="1.0", wk="1.0")),
    # W_Q·W_K < 0: min pooling
    ("negative scale", _pool_cell(wk="-30.0")),
    # p = 0 everywhere: pools over the whole sequence
    ("no window", _pool_cell(p="0.0")),
    # width ignores k
    ("window fixed at 3", _pool_cell(p="0.0 if abs(m) <= 1 else -np.inf")),
    # C too small to be sharp
    ("C = 3", _pool_cell(wq="3.0", wk="3.0")),
    # W_V = C as well
    ("W_V = C", _pool_cell(wv="30.0")),
    # a one-sided window
    ("one-sided window", _pool_cell(p="0.0 if 0 <= m <= 2 * k else -np.inf")),
    # the window off by one: |m| < k
    ("window too narrow", _pool_cell(p="0.0 if abs(m) < k else -np.inf")),
    # the window inverted: −inf inside
    ("window inverted", _pool_cell(p="-np.inf if abs(m) <= k else 0.0")),
    # returns a tuple instead of the dict
    (
        "tuple",
        """
def maxpool_layer(k):
    return (lambda m: 0.0 if abs(m) <= k else -np.inf), 30.0, 30.0, 1.0
""",
    ),
]


# ---------------------------------------------------------------- layernorm_norm
def _norm_cell(body):
    return f"def layernorm_norm(d):\n    {body}\n"


LAYERNORM_NORM_CORRECT = [
    ("math.sqrt", "import math\n\n\n" + _norm_cell("return math.sqrt(d)")),
    ("power one half", _norm_cell("return d**0.5")),
    ("a 0-d tensor", _norm_cell("return torch.tensor(float(d)).sqrt()")),
    (
        "measured on a random x",
        """
def layernorm_norm(d):
    x = np.random.default_rng(0).normal(size=d)
    return float(np.linalg.norm((x - x.mean()) / x.std()))
""",
    ),
    ("float32", _norm_cell("return np.sqrt(np.float32(d))")),
]
LAYERNORM_NORM_MUTANTS = [
    # LayerNorm taken to normalise the vector's norm
    ("unit norm", _norm_cell("return 1.0")),
    # the squared norm
    ("squared norm", _norm_cell("return float(d)")),
    # the sample standard deviation (1/(d − 1)), as np.std(ddof=1) or torch.std computes it
    ("sample std", _norm_cell("return float(np.sqrt(d - 1))")),
    (
        "measured with torch.std",
        """
def layernorm_norm(d):
    x = torch.randn(d, dtype=torch.float64)
    return float(torch.linalg.norm((x - x.mean()) / x.std()))
""",
    ),
    # 1/√d: the entries' size taken for the norm
    ("one over root d", _norm_cell("return 1 / np.sqrt(d)")),
    # d squared
    ("d squared", _norm_cell("return float(d**2)")),
    # the mean is 0, so the norm is 0
    ("zero", _norm_cell("return 0.0")),
    # a constant from the d = 2 case
    ("root two always", _norm_cell("return float(np.sqrt(2))")),
    # returns the output vector, not its norm
    ("the vector", _norm_cell("return np.ones(d)")),
]

# ---------------------------------------------------------------- layernorm_d2
LAYERNORM_D2_CORRECT = [
    ("a list of tuples", "layernorm_d2 = [(-1.0, 1.0), (1.0, -1.0)]"),
    ("integers", "layernorm_d2 = {(1, -1), (-1, 1)}"),
    ("numpy arrays", "layernorm_d2 = [np.array([1.0, -1.0]), np.array([-1.0, 1.0])]"),
    ("a 2x2 array", "layernorm_d2 = np.array([[1.0, -1.0], [-1.0, 1.0]])"),
    ("computed", "layernorm_d2 = {tuple(s * np.array([1.0, -1.0])) for s in (1, -1)}"),
]
LAYERNORM_D2_MUTANTS = [
    # only x_1 > x_2
    ("one output", "layernorm_d2 = {(1.0, -1.0)}"),
    # normalised to unit norm
    ("unit norm", "layernorm_d2 = {(2**-0.5, -(2**-0.5)), (-(2**-0.5), 2**-0.5)}"),
    # the constant x given the output 0
    ("zero included", "layernorm_d2 = {(1.0, -1.0), (-1.0, 1.0), (0.0, 0.0)}"),
    # the sample standard deviation: ±1/√2
    ("sample std", "layernorm_d2 = {(0.5**0.5, -(0.5**0.5)), (-(0.5**0.5), 0.5**0.5)}"),
    # one pair, not a set of pairs
    ("a single pair", "layernorm_d2 = (1.0, -1.0)"),
    # centred only, not scaled
    ("half", "layernorm_d2 = {(0.5, -0.5), (-0.5, 0.5)}"),
    # a string
    ("text", 'layernorm_d2 = "(1, -1) and (-1, 1)"'),
    # infinities for the constant x
    ("infinite", "layernorm_d2 = {(1.0, -1.0), (-1.0, 1.0), (np.inf, -np.inf)}"),
    # the mean left in
    ("not centred", "layernorm_d2 = {(1.0, 0.0), (0.0, 1.0)}"),
]

CATALOGUE.update(
    {
        "layernorm_norm": (LAYERNORM_NORM_CORRECT, LAYERNORM_NORM_MUTANTS),
        "layernorm_d2": (LAYERNORM_D2_CORRECT, LAYERNORM_D2_MUTANTS),
    }
)

CATALOGUE.update(
    {
        "relu_chain_grad_bound": (RELU_CHAIN_CORRECT, RELU_CHAIN_MUTANTS),
        "rnn_jacobian_bound": (RNN_CORRECT, RNN_MUTANTS),
        "relative_attention": (ATTENTION_CORRECT, ATTENTION_MUTANTS),
        "conv1d_layer": (CONV_CORRECT, CONV_MUTANTS),
        "maxpool_layer": (MAXPOOL_CORRECT, MAXPOOL_MUTANTS),
    }
)
