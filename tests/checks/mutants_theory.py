"""Catalogue of solution cells for theory.ipynb, in the shape of tests/checks/harness.py: correct alternatives
(`Correct`) and realistic wrong ones (`Mutant`, with a fragment its one-line failure must contain where one is given).

Each answer is (label, source of a complete solution cell). Every mutant's comment names the student mistake it
models. The sources are exec'd after PRELUDE as if they were notebook cells (module __main__). Value cells (the
vector, the dict, the letter) define the graded name; function cells define the function.
"""

from tests.checks.harness import Catalogue, Cell, Correct, Mutant

PRELUDE = "import numpy as np\nimport torch\n"

# ---------------------------------------------------------------- counterexample_w
COUNTEREXAMPLE_CORRECT = [
    Correct("the handout's counterexample", "counterexample_w = np.array([0.5, 2.0])"),
    Correct("a list of small entries", "counterexample_w = [0.1, 0.2, 0.3]"),
    Correct("equal entries, not 1", "counterexample_w = np.full(4, 2.0)"),
    Correct("integers", "counterexample_w = np.array([3, 1, 2])"),
    Correct("a torch tensor", "counterexample_w = torch.tensor([0.25, 0.5])"),
]
COUNTEREXAMPLE_MUTANTS = [
    # all ones: the norms agree, so this supports the claim instead of refuting it
    Mutant("all ones", "counterexample_w = np.ones(3)"),
    # largest entry exactly 1: still equal
    Mutant("max entry is 1", "counterexample_w = np.array([0.5, 1.0])", "pick w whose largest entry is not 1"),
    # mixed signs: the claim is about all-positive w
    Mutant(
        "mixed signs", "counterexample_w = np.array([1.0, -2.0])", "every entry of counterexample_w should be positive"
    ),
    # a zero entry is not positive (and sgn(0) = 0)
    Mutant("zero entry", "counterexample_w = np.array([0.0, 2.0])"),
    # a matrix, not a vector
    Mutant("2-D array", "counterexample_w = np.array([[0.5, 2.0]])"),
    # a scalar
    Mutant("scalar", "counterexample_w = 2.0"),
    # the norms themselves instead of w
    Mutant("tuple of the norms as strings", "counterexample_w = ('0.1', '0.2')"),
    # an empty vector
    Mutant("empty", "counterexample_w = np.array([])"),
    # not finite
    Mutant("infinite entry", "counterexample_w = np.array([0.5, np.inf])"),
    # booleans are 1 when True
    Mutant("booleans", "counterexample_w = np.array([True, True])"),
]

# ---------------------------------------------------------------- logit_after_fgsm
FGSM_CORRECT = [
    Correct(
        "closed form with np.abs",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - eps * np.abs(w).sum())
""",
    ),
    Correct(
        "build x' and evaluate",
        """
def logit_after_fgsm(x, w, eps):
    x_adv = x - eps * np.sign(w)
    return float(np.dot(w, x_adv))
""",
    ),
    Correct(
        "np.linalg.norm with ord=1",
        """
def logit_after_fgsm(x, w, eps):
    return np.dot(w, x) - eps * np.linalg.norm(w, ord=1)
""",
    ),
    Correct(
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
    Mutant(
        "plus sign",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x + eps * np.abs(w).sum())
""",
    ),
    # uses the FGM result (no sign)
    Mutant(
        "FGM formula",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - eps * w @ w)
""",
        "that is the FGM logit",
    ),
    # sgn(w)ᵀw taken as Σw (wrong with negative weights)
    Mutant(
        "sum without abs",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - eps * w.sum())
""",
        "sgn(w)ᵀw = Σ|wᵢ|",
    ),
    # the 2-norm instead of the 1-norm
    Mutant(
        "l2 norm",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - eps * np.linalg.norm(w))
""",
    ),
    # the sign of the input instead of the gradient
    Mutant(
        "sign of x",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ (x - eps * np.sign(x)))
""",
    ),
    # returns the adversarial input, not its logit
    Mutant(
        "returns x'",
        """
def logit_after_fgsm(x, w, eps):
    return x - eps * np.sign(w)
""",
        "should return one number (the logit f(x′)), got an array of shape (5,)",
    ),
    # perturbs x in place
    Mutant(
        "in place",
        """
def logit_after_fgsm(x, w, eps):
    x -= eps * np.sign(w)
    return float(w @ x)
""",
        "should leave x unchanged",
    ),
    # forgets ε
    Mutant(
        "eps ignored",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - np.abs(w).sum())
""",
    ),
    # ε times the number of entries
    Mutant(
        "eps times d",
        """
def logit_after_fgsm(x, w, eps):
    return float(w @ x - eps * len(w))
""",
    ),
]

# ---------------------------------------------------------------- logit_after_fgm
FGM_CORRECT = [
    Correct(
        "closed form",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x - eps * (w @ w))
""",
    ),
    Correct(
        "build x' and evaluate",
        """
def logit_after_fgm(x, w, eps):
    return float(np.dot(w, x - eps * w))
""",
    ),
    Correct(
        "squared norm",
        """
def logit_after_fgm(x, w, eps):
    return np.dot(w, x) - eps * np.linalg.norm(w) ** 2
""",
    ),
    Correct(
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
    Mutant(
        "norm not squared",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x - eps * np.linalg.norm(w))
""",
        "you subtracted ε‖w‖₂",
    ),
    # keeps the sign: that is FGSM
    Mutant(
        "FGSM formula",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x - eps * np.abs(w).sum())
""",
        "that is the FGSM logit",
    ),
    # steps up the gradient
    Mutant(
        "plus sign",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x + eps * (w @ w))
""",
    ),
    # sum of weights instead of sum of squares
    Mutant(
        "sum of w",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x - eps * w.sum())
""",
    ),
    # ε squared
    Mutant(
        "eps squared",
        """
def logit_after_fgm(x, w, eps):
    return float(w @ x - eps ** 2 * (w @ w))
""",
    ),
    # elementwise product instead of a dot product: returns a vector
    Mutant(
        "elementwise",
        """
def logit_after_fgm(x, w, eps):
    return w * (x - eps * w)
""",
    ),
    # in place
    Mutant(
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
    Correct(
        "np.linalg.solve",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X + 2 * n * lam * np.eye(d), X.T @ t)
""",
    ),
    Correct(
        "inverse",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.inv(X.T @ X + 2 * n * lam * np.identity(d)) @ X.T @ t
""",
    ),
    Correct(
        "scaled by 1/n on both sides",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X / n + 2 * lam * np.eye(d), X.T @ t / n)
""",
    ),
    Correct(
        "augmented least squares",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    A = np.vstack([X, np.sqrt(2 * n * lam) * np.eye(d)])
    b = np.concatenate([t, np.zeros(d)])
    return np.linalg.lstsq(A, b, rcond=None)[0]
""",
    ),
    Correct(
        "push-through identity (dual form)",
        """
def ridge_closed_form(X, t, lam):
    n = X.shape[0]
    return X.T @ np.linalg.solve(X @ X.T + 2 * n * lam * np.eye(n), t)
""",
    ),
    Correct(
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
    Mutant(
        "LLM answer n lambda",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X + n * lam * np.eye(d), X.T @ t)
""",
        "the printed model answer",
    ),
    # λ without n
    Mutant(
        "lambda without n",
        """
def ridge_closed_form(X, t, lam):
    d = X.shape[1]
    return np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ t)
""",
        "(XᵀX + λI)⁻¹Xᵀt",
    ),
    # 2λ without n
    Mutant(
        "2 lambda without n",
        """
def ridge_closed_form(X, t, lam):
    d = X.shape[1]
    return np.linalg.solve(X.T @ X + 2 * lam * np.eye(d), X.T @ t)
""",
    ),
    # Xᵀt not divided by n after dividing XᵀX
    Mutant(
        "1/n on one side only",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X / n + 2 * lam * np.eye(d), X.T @ t)
""",
        "divide Xᵀt by n too",
    ),
    # identity of the wrong size (n × n): crashes
    Mutant(
        "identity n by n",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X + 2 * n * lam * np.eye(n), X.T @ t)
""",
    ),
    # plain least squares
    Mutant(
        "no regularisation",
        """
def ridge_closed_form(X, t, lam):
    return np.linalg.lstsq(X, t, rcond=None)[0]
""",
    ),
    # a column vector (d, 1)
    Mutant(
        "column vector",
        """
def ridge_closed_form(X, t, lam):
    n, d = X.shape
    return np.linalg.solve(X.T @ X + 2 * n * lam * np.eye(d), X.T @ t.reshape(-1, 1))
""",
        "should return shape (d,) = (3,), got (3, 1)",
    ),
    # a torch tensor
    Mutant(
        "torch result",
        """
def ridge_closed_form(X, t, lam):
    X, t = torch.tensor(X), torch.tensor(t)
    n, d = X.shape
    return torch.linalg.solve(X.T @ X + 2 * n * lam * torch.eye(d, dtype=X.dtype), X.T @ t)
""",
        "should return a numpy array",
    ),
    # centres the data in place (changes the caller's X)
    Mutant(
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
    Correct(
        "uses ridge_closed_form",
        """
def eps_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
    return float(x / w)
""",
    ),
    Correct(
        "1-D formula",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return x / w
""",
    ),
    Correct(
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
    Mutant(
        "x times w",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return x * w
""",
    ),
    # solved w x − ε w = 0
    Mutant(
        "x over w squared",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return x / w ** 2
""",
        "that is x / w²",
    ),
    # the plausible wrong derivation in the handout
    Mutant(
        "handout derivation",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return x * w / ((1 + 2 * lam) * w ** 2)
""",
        "plausible wrong derivation",
    ),
    # the printed model answer's ridge (nλ)
    Mutant(
        "ridge with n lambda",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + n * lam)
    return x / w
""",
        "nλ instead of 2nλ",
    ),
    # λ without n
    Mutant(
        "ridge with lambda",
        """
def eps_to_zero_logit(x, X, t, lam):
    w = np.sum(X * t) / (np.sum(X ** 2) + lam)
    return x / w
""",
    ),
    # sign flipped
    Mutant(
        "negative",
        """
def eps_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return -x / w
""",
    ),
    # no weight decay
    Mutant(
        "least squares w",
        """
def eps_to_zero_logit(x, X, t, lam):
    w = np.sum(X * t) / np.sum(X ** 2)
    return x / w
""",
    ),
    # passes the 1-D inputs to ridge_closed_form, which wants X of shape (n, 1): crashes
    Mutant(
        "1-D X passed to ridge_closed_form",
        """
def eps_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X, t, lam)
    return x / w
""",
    ),
    # returns w instead of ε
    Mutant(
        "returns w",
        """
def eps_to_zero_logit(x, X, t, lam):
    return ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
""",
    ),
]

# ---------------------------------------------------------------- eps_fgsm_to_zero_logit
EPS_FGSM_CORRECT = [
    Correct(
        "uses ridge_closed_form",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
    return float(x * np.sign(w))
""",
    ),
    Correct(
        "absolute value of x",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    return abs(x)  # w x > 0, so x sgn(w) = |x|, and lambda drops out
""",
    ),
    Correct(
        "divides by the sign",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = X @ t / (X @ X + 2 * len(X) * lam)
    return x / np.sign(w)
""",
    ),
    Correct(
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
    Mutant(
        "|x| times (1 + 2 lambda)",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    return float(abs(x) * (1 + 2 * lam))
""",
        "that is |x|(1 + 2λ)",
    ),
    # the same factor on the other side
    Mutant(
        "|x| over (1 + 2 lambda)",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    return float(abs(x) / (1 + 2 * lam))
""",
    ),
    # the FGM answer of 1.2.3, copied
    Mutant(
        "FGM answer x over w",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
    return float(x / w)
""",
        "that is the FGM answer x / w",
    ),
    # ε = x, right only while w > 0
    Mutant(
        "x without abs",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    return float(x)
""",
        "here w < 0 and x < 0",
    ),
    # the step pushed along +sgn(w): ε comes out negative
    Mutant(
        "minus x sgn w",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return float(-x * np.sign(w))
""",
        "the sign is flipped",
    ),
    # the size of w kept, its sign dropped
    Mutant(
        "x over |w|",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    n = len(X)
    w = np.sum(X * t) / (np.sum(X ** 2) + 2 * n * lam)
    return float(x / abs(w))
""",
    ),
    # returns the direction of the step, not its size
    Mutant(
        "returns sgn w",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
    return float(np.sign(w))
""",
    ),
    # solved w x − ε w = 0 with the sign in the wrong place: ε = x·w
    Mutant(
        "x times w",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X.reshape(-1, 1), t, lam)[0]
    return float(x * w)
""",
    ),
    # passes the 1-D inputs to ridge_closed_form, which wants X of shape (n, 1): crashes
    Mutant(
        "1-D X passed to ridge_closed_form",
        """
def eps_fgsm_to_zero_logit(x, X, t, lam):
    w = ridge_closed_form(X, t, lam)
    return float(x * np.sign(w))
""",
        "your code raised ValueError",
    ),
]

# ---------------------------------------------------------------- nqm_expected_loss
NQM_CORRECT = [
    Correct(
        "loop over steps",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) ** 2 * m2 + lr ** 2 * sigma ** 2 / batch_size
    return 0.5 * a * m2
""",
    ),
    Correct(
        "closed form of the geometric series",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    r = (1 - lr * a) ** 2
    q = lr ** 2 * sigma ** 2 / batch_size
    return 0.5 * a * (r ** steps * w0 ** 2 + q * (1 - r ** steps) / (1 - r))
""",
    ),
    Correct(
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
    Correct(
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
    Mutant(
        "lr not squared on noise",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) ** 2 * m2 + lr * sigma ** 2 / batch_size
    return 0.5 * a * m2
""",
        "η²σ²/B, not ησ²/B",
    ),
    # noise not averaged over the batch
    Mutant(
        "no batch size",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) ** 2 * m2 + lr ** 2 * sigma ** 2
    return 0.5 * a * m2
""",
        "divided by the batch size",
    ),
    # σ/B: standard deviation instead of variance
    Mutant(
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
    Mutant(
        "decay not squared",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) * m2 + lr ** 2 * sigma ** 2 / batch_size
    return 0.5 * a * m2
""",
        "(1 − ηa)² per step",
    ),
    # only the mean: noise ignored
    Mutant(
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
    Mutant(
        "no half a",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps):
        m2 = (1 - lr * a) ** 2 * m2 + lr ** 2 * sigma ** 2 / batch_size
    return m2
""",
        "that is E[w²]",
    ),
    # one step too many
    Mutant(
        "off by one",
        """
def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):
    m2 = w0 ** 2
    for _ in range(steps + 1):
        m2 = (1 - lr * a) ** 2 * m2 + lr ** 2 * sigma ** 2 / batch_size
    return 0.5 * a * m2
""",
        "off by one",
    ),
    # E[w0²] taken as w0
    Mutant(
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
    Mutant(
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
    Mutant(
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
    Correct(
        "argmin over a list",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs]
    return lrs[int(np.argmin(losses))]
""",
    ),
    Correct(
        "min with a key",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    return min(lrs, key=lambda lr: nqm_expected_loss(lr, batch_size, a, sigma, w0, steps))
""",
    ),
    Correct(
        "numpy array of lrs",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    lrs = np.asarray(lrs)
    losses = np.array([nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs])
    return lrs[losses.argmin()]
""",
    ),
    Correct(
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
    Mutant(
        "highest loss",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs]
    return lrs[int(np.argmax(losses))]
""",
    ),
    # the index
    Mutant(
        "returns index",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs]
    return int(np.argmin(losses))
""",
        "position of the best learning rate",
    ),
    # the loss
    Mutant(
        "returns loss",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    return min(nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs)
""",
    ),
    # batch size not passed on
    Mutant(
        "batch size ignored",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, 1, a, sigma, w0, steps) for lr in lrs]
    return lrs[int(np.argmin(losses))]
""",
        "pass batch_size on",
    ),
    # argmin taken in the sorted grid, then indexed into the original order
    Mutant(
        "sorted then indexed",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in sorted(lrs)]
    return lrs[int(np.argmin(losses))]
""",
    ),
    # a single step instead of `steps`
    Mutant(
        "one step",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, 1) for lr in lrs]
    return lrs[int(np.argmin(losses))]
""",
    ),
    # the largest stable learning rate, as a rule of thumb
    Mutant(
        "largest stable lr",
        """
def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):
    return max(lr for lr in lrs if lr < 2 / a)
""",
    ),
]

# ---------------------------------------------------------------- most_efficient_batch
EFFICIENT_CORRECT = [
    Correct("the letter", 'most_efficient_batch = "C"'),
    Correct("lower case with spaces", 'most_efficient_batch = " c "'),
    Correct("letter and text", 'most_efficient_batch = "C. the knee"'),
    Correct("in parentheses", 'most_efficient_batch = "(C)"'),
]
EFFICIENT_MUTANTS = [
    # the fewest steps, whatever each costs
    Mutant("B", 'most_efficient_batch = "B"', "'B' (the large-batch end): that is not the best trade-off"),
    # the least compute per example, whatever the wait
    Mutant("A", 'most_efficient_batch = "A"'),
    # two answers
    Mutant("two letters", 'most_efficient_batch = "A, C"'),
    # a list
    Mutant("list", 'most_efficient_batch = ["C"]'),
    # the batch size read off the plot
    Mutant("batch size", 'most_efficient_batch = "128"', "should be one of 'A', 'B' or 'C', got '128'"),
    # the text of the option
    Mutant("text only", 'most_efficient_batch = "the knee"', "should be the option's letter"),
    # an option that does not exist
    Mutant("D", 'most_efficient_batch = "D"'),
    # an index
    Mutant("number", "most_efficient_batch = 3"),
]

# ---------------------------------------------------------------- regimes
REGIMES_CORRECT = [
    Correct(
        "the handout's wording",
        """
regimes = {"A": ("noise dominated", "seek parallel compute"),
           "B": ("curvature dominated", "use higher order optimizers")}
""",
    ),
    Correct(
        "hyphens, capitals and lists",
        """
regimes = {"A": ["Noise-dominated", "Seek parallel compute"],
           "B": ["Curvature-dominated", "Use higher-order optimisers."]}
""",
    ),
]
REGIMES_MUTANTS = [
    # regimes swapped
    Mutant(
        "regimes swapped",
        """
regimes = {"A": ("curvature dominated", "seek parallel compute"),
           "B": ("noise dominated", "use higher order optimizers")}
""",
    ),
    # remedies swapped
    Mutant(
        "remedies swapped",
        """
regimes = {"A": ("noise dominated", "use higher order optimizers"),
           "B": ("curvature dominated", "seek parallel compute")}
""",
        "the remedy of A and the remedy of B are not right",
    ),
    # both swapped
    Mutant(
        "both swapped",
        """
regimes = {"A": ("curvature dominated", "use higher order optimizers"),
           "B": ("noise dominated", "seek parallel compute")}
""",
    ),
    # remedy first
    Mutant(
        "pair in the wrong order",
        """
regimes = {"A": ("seek parallel compute", "noise dominated"),
           "B": ("use higher order optimizers", "curvature dominated")}
""",
        "(regime, remedy) in that order",
    ),
    # own words
    Mutant(
        "own wording",
        """
regimes = {"A": ("noisy", "bigger batches"),
           "B": ("curvature dominated", "use higher order optimizers")}
""",
        "should be one of ['noise dominated', 'curvature dominated']",
    ),
    # lower-case keys
    Mutant(
        "lower-case keys",
        """
regimes = {"a": ("noise dominated", "seek parallel compute"),
           "b": ("curvature dominated", "use higher order optimizers")}
""",
    ),
    # only the regimes
    Mutant(
        "regimes only",
        """
regimes = {"A": "noise dominated", "B": "curvature dominated"}
""",
    ),
]

# ---------------------------------------------------------------- scaling_choice
SCALING_CORRECT = [
    Correct("the letter", 'scaling_choice = "C"'),
    Correct("lower case with spaces", 'scaling_choice = " c "'),
    Correct("letter and text", 'scaling_choice = "C. a larger model"'),
    Correct("in parentheses", 'scaling_choice = "(C)"'),
]
SCALING_MUTANTS = [
    # more steps
    Mutant("A", 'scaling_choice = "A"'),
    # larger batch
    Mutant("B", 'scaling_choice = "B"'),
    # two answers
    Mutant("two letters", 'scaling_choice = "B, C"'),
    # a list
    Mutant("list", 'scaling_choice = ["C"]'),
    # an option that does not exist
    Mutant("D", 'scaling_choice = "D"'),
    # the text of the option
    Mutant("text only", 'scaling_choice = "a larger model"', "should be the option's letter"),
    # an index
    Mutant("number", "scaling_choice = 3"),
]


# ---------------------------------------------------------------- relu_chain_grad_bound
RELU_CHAIN_CORRECT = [
    Correct(
        "np.prod of np.abs",
        """
def relu_chain_grad_bound(ws):
    return 0.0, float(np.prod(np.abs(ws)))
""",
    ),
    Correct(
        "a loop",
        """
def relu_chain_grad_bound(ws):
    upper = 1.0
    for w in ws:
        upper *= abs(w)
    return (0, upper)
""",
    ),
    Correct(
        "abs of the product, as a list",
        """
def relu_chain_grad_bound(ws):
    return [0.0, abs(float(np.prod(ws)))]
""",
    ),
    Correct(
        "math.prod",
        """
import math


def relu_chain_grad_bound(ws):
    return 0, math.prod(abs(float(w)) for w in ws)
""",
    ),
    Correct(
        "float32 tensor product",
        """
def relu_chain_grad_bound(ws):
    return 0.0, torch.tensor(ws).abs().prod()
""",
    ),
    Correct(
        "np.float32",
        """
def relu_chain_grad_bound(ws):
    return np.float32(0), np.prod(np.abs(np.asarray(ws, dtype=np.float32)))
""",
    ),
    Correct(
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
    Mutant(
        "product without abs",
        """
def relu_chain_grad_bound(ws):
    return 0.0, float(np.prod(ws))
""",
        "∏w_i without absolute values",
    ),
    # the largest weight: as if the chain rule took the steepest layer
    Mutant(
        "max weight",
        """
def relu_chain_grad_bound(ws):
    return 0.0, float(np.max(np.abs(ws)))
""",
        "that is max|w_i|",
    ),
    # the w_i = 1 answer for every chain
    Mutant(
        "always 1",
        """
def relu_chain_grad_bound(ws):
    return 0.0, 1.0
""",
        "1 holds only when every |w_i| = 1",
    ),
    # sums the slopes instead of multiplying them
    Mutant(
        "sum of abs",
        """
def relu_chain_grad_bound(ws):
    return 0.0, float(np.sum(np.abs(ws)))
""",
        "your upper is above it",
    ),
    # lower bound −∏|w_i|: a bound on f′, not on |f′|
    Mutant(
        "negative lower bound",
        """
def relu_chain_grad_bound(ws):
    upper = float(np.prod(np.abs(ws)))
    return -upper, upper
""",
        "expected lower = 0, got -1",
    ),
    # skips the first layer's slope
    Mutant(
        "first weight left out",
        """
def relu_chain_grad_bound(ws):
    return 0.0, float(np.prod(np.abs(ws[1:])))
""",
    ),
    # upper and lower swapped
    Mutant(
        "pair swapped",
        """
def relu_chain_grad_bound(ws):
    return float(np.prod(np.abs(ws))), 0.0
""",
    ),
    # returns the upper bound only
    Mutant(
        "upper only",
        """
def relu_chain_grad_bound(ws):
    return float(np.prod(np.abs(ws)))
""",
        "should return a pair (lower, upper)",
    ),
    # lower bound min|w_i|^n: as if every unit were always active
    Mutant(
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
    Correct("closed form", "def rnn_jacobian_bound(sigma_max_w, n):\n    return (sigma_max_w / 4) ** (n - 1)\n"),
    Correct(
        "a loop over the steps",
        """
def rnn_jacobian_bound(sigma_max_w, n):
    bound = 1.0
    for _ in range(n - 1):
        bound *= 0.25 * sigma_max_w
    return bound
""",
    ),
    Correct(
        "np.power, as an array",
        """
def rnn_jacobian_bound(sigma_max_w, n):
    return np.power(np.float64(sigma_max_w) / 4.0, n - 1) * np.ones(1)
""",
    ),
    Correct(
        "in logs",
        """
def rnn_jacobian_bound(sigma_max_w, n):
    return float(np.exp((n - 1) * (np.log(sigma_max_w) - np.log(4))))
""",
    ),
    Correct(
        "0-d tensor", "def rnn_jacobian_bound(sigma_max_w, n):\n    return torch.tensor(sigma_max_w / 4) ** (n - 1)\n"
    ),
    Correct(
        "float32",
        "def rnn_jacobian_bound(sigma_max_w, n):\n    return np.float32(sigma_max_w / 4) ** np.float32(n - 1)\n",
    ),
]
RNN_MUTANTS = [
    # forgets that σ′ ≤ ¼
    Mutant("no quarter", "def rnn_jacobian_bound(sigma_max_w, n):\n    return sigma_max_w ** (n - 1)\n", "σ′ ≤ ¼"),
    # n factors instead of n − 1
    Mutant(
        "n steps", "def rnn_jacobian_bound(sigma_max_w, n):\n    return (sigma_max_w / 4) ** n\n", "the bound fails"
    ),
    # the sigmoid's slope taken as ½
    Mutant(
        "slope one half",
        "def rnn_jacobian_bound(sigma_max_w, n):\n    return (sigma_max_w / 2) ** (n - 1)\n",
        "at most ¼, not ½",
    ),
    # the quarter once, not per step
    Mutant(
        "quarter once",
        "def rnn_jacobian_bound(sigma_max_w, n):\n    return sigma_max_w ** (n - 1) / 4\n",
        "once per step",
    ),
    # the worked example's σ_max = ¼ hard-coded
    Mutant("example hard-coded", "def rnn_jacobian_bound(sigma_max_w, n):\n    return (1 / 16) ** (n - 1)\n"),
    # operator precedence: (σ/4)**n − 1
    Mutant("precedence", "def rnn_jacobian_bound(sigma_max_w, n):\n    return (sigma_max_w / 4) ** n - 1\n"),
    # a loop one step short
    Mutant(
        "loop one short",
        """
def rnn_jacobian_bound(sigma_max_w, n):
    bound = 1.0
    for _ in range(n - 2):
        bound *= sigma_max_w / 4
    return bound
""",
        "holds but is looser than",
    ),
    # adds the steps instead of multiplying them
    Mutant("linear in n", "def rnn_jacobian_bound(sigma_max_w, n):\n    return (n - 1) * sigma_max_w / 4\n"),
]

# ---------------------------------------------------------------- relative_attention
ATTENTION_CORRECT = [
    Correct(
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
    Correct(
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
    Correct(
        "torch softmax",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    bias = torch.tensor([[float(p(i - j)) for j in range(n)] for i in range(n)], dtype=torch.float64)
    scores = torch.outer(torch.as_tensor(q, dtype=torch.float64), torch.as_tensor(k, dtype=torch.float64)) + bias
    return (torch.softmax(scores, dim=-1) @ torch.as_tensor(v, dtype=torch.float64)).numpy()
""",
    ),
    Correct(
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
    Correct(
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
    Mutant(
        "softmax over i",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=0, keepdims=True))
    weights /= weights.sum(axis=0, keepdims=True)
    return weights @ v
""",
        "it should run over j",
    ),
    # offset j − i instead of i − j
    Mutant(
        "offset j minus i",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(j - i) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v
""",
        "the offsets are j − i",
    ),
    # no max subtraction: exp overflows for large scores
    Mutant(
        "no max subtraction",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])
    weights = np.exp(scores)
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v
""",
        "subtract each row's largest score",
    ),
    # the relative bias p left out
    Mutant(
        "p ignored",
        """
def relative_attention(q, k, v, p):
    scores = np.outer(q, k)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ v
""",
        "p was not added",
    ),
    # weights transposed before the values
    Mutant(
        "weights transposed",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights.T @ v
""",
        "the weights are transposed",
    ),
    # p added after the softmax
    Mutant(
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
    Mutant(
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
    Mutant(
        "returns the weights",
        """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)
""",
        "should return shape (n,) = (7,), got (7, 7)",
    ),
    # scaled by 1/√n as if d_k were the sequence length
    Mutant(
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
    Mutant(
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
        "should leave q unchanged",
    ),
]

# ---------------------------------------------------------------- conv1d_layer
_CONV = '{{"p": {p}, "W_Q": {wq}, "W_K": {wk}, "W_V": {wv}}}'


def _conv_cell(p, wq="0.0", wk="0.0", wv="3.0", before=""):
    return before + "conv1d_layer = " + _CONV.format(p=p, wq=wq, wk=wk, wv=wv) + "\n"


CONV_CORRECT = [
    Correct("float32 biases", _conv_cell("lambda m: {1: np.float32(np.log(2)), -1: np.float32(0)}.get(m, -np.inf)")),
    Correct(
        "np.where, works on arrays too",
        _conv_cell("lambda m: np.where(m == 1, np.log(2.0), np.where(m == -1, 0.0, -np.inf))"),
    ),
    Correct("dict lookup", _conv_cell("lambda m: {1: np.log(2), -1: 0.0}.get(m, -np.inf)")),
    Correct(
        "a function, shifted biases, W_Q = 1, W_K = 0",
        _conv_cell(
            "conv_p",
            wq="1.0",
            wk="0",
            before="def conv_p(m):\n    return 5 + np.log(2) if m == 1 else (5.0 if m == -1 else -np.inf)\n\n\n",
        ),
    ),
    Correct(
        "-1e9 for -inf, integer W_V",
        _conv_cell("lambda m: np.log(2) if m == 1 else (0.0 if m == -1 else -1e9)", wv="3"),
    ),
    Correct("log weights", _conv_cell("lambda m: np.log({1: 2.0, -1: 1.0}.get(m, 0.0))", wq="0", wk="2.5")),
]
CONV_MUTANTS = [
    # the sibling write-up: offsets flipped and sigmoid taken for softmax
    Mutant(
        "write-up answer",
        _conv_cell("lambda m: {-1: np.log(2), 1: -np.log(2)}.get(m, -np.inf)"),
        "0.6·x_(i−1) + 0·x_i + 2.4·x_(i+1)",
    ),
    # offsets flipped only
    Mutant(
        "offsets flipped", _conv_cell("lambda m: {-1: np.log(2), 1: 0.0}.get(m, -np.inf)"), "the offsets are flipped"
    ),
    # sigmoid for softmax only: ±ln 2 gives 0.8 and 0.2
    Mutant(
        "sigmoid for softmax",
        _conv_cell("lambda m: {1: np.log(2), -1: -np.log(2)}.get(m, -np.inf)"),
        "the logistic sigmoid of ln 2",
    ),
    # W_V = 1: the weights sum to 1
    Mutant(
        "W_V = 1",
        _conv_cell("lambda m: {1: np.log(2), -1: 0.0}.get(m, -np.inf)", wv="1.0"),
        "coefficients sum to W_V = 1",
    ),
    # offsets outside ±1 left at 0
    Mutant(
        "other offsets 0",
        _conv_cell("lambda m: {1: np.log(2), -1: 0.0}.get(m, 0.0)"),
        "p should be −inf at every offset other than ±1",
    ),
    # W_Q = W_K = 1: the scores depend on x
    Mutant(
        "W_Q W_K = 1",
        _conv_cell("lambda m: {1: np.log(2), -1: 0.0}.get(m, -np.inf)", wq="1.0", wk="1.0"),
        "a convolution's weights do not",
    ),
    # p only defined on ±1: raises KeyError elsewhere
    Mutant("p without a default", _conv_cell("lambda m: {1: np.log(2), -1: 0.0}[m]"), "raised KeyError"),
    # the kernel weights as biases: softmax(2, 1) is not (⅔, ⅓)
    Mutant("kernel values as biases", _conv_cell("lambda m: {1: 2.0, -1: 1.0}.get(m, -np.inf)")),
    # p_0 left finite: x_i gets weight too
    Mutant("offset 0 kept", _conv_cell("lambda m: {1: np.log(2), -1: 0.0, 0: 0.0}.get(m, -np.inf)")),
    # a list of biases, not a function
    Mutant("p as a list", _conv_cell("[0.0, -np.inf, np.log(2)]")),
]

# ---------------------------------------------------------------- maxpool_layer
_POOL = """
def maxpool_layer(k):
    return {{"p": lambda m: {p}, "W_Q": {wq}, "W_K": {wk}, "W_V": {wv}}}
"""


def _pool_cell(p="0.0 if abs(m) <= k else -np.inf", wq="30.0", wk="30.0", wv="1.0"):
    return _POOL.format(p=p, wq=wq, wk=wk, wv=wv)


MAXPOOL_CORRECT = [
    # W_Q·W_K = 625: within 0.0081 up to k = 50, the promise's end
    Correct("C = 25, just sharp enough", _pool_cell(wq="25.0", wk="25.0")),
    # sharper for wider windows: W_Q·W_K = 100 (2k + 1), more near-maxima to outweigh
    Correct("C grows with the window", _pool_cell(wq="10.0 * (2 * k + 1) ** 0.5", wk="10.0 * (2 * k + 1) ** 0.5")),
    Correct("np.where window", _pool_cell(p="np.where(np.abs(m) <= k, 0.0, -np.inf)")),
    Correct("C = 30", _pool_cell()),
    Correct("C = 1000, -1e9 outside", _pool_cell(p="0.0 if -k <= m <= k else -1e9", wq="1000.0", wk="1000.0")),
    Correct("W_Q = C squared, W_K = 1", _pool_cell(wq="900", wk="1")),
    Correct(
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
    Mutant("C = 10", _pool_cell(wq="10.0", wk="10.0")),
    # W_Q·W_K = 144: 0.012 at k = 3 in the worst case
    Mutant("C = 12", _pool_cell(wq="12.0", wk="12.0")),
    # only for small k: W_Q·W_K = 225 is within 0.0072 up to k = 3, 0.0102 at k = 6 (11 near-maxima beside the max)
    Mutant("C = 15, fine for k <= 5", _pool_cell(wq="15.0", wk="15.0"), "maxpool_layer(6)"),
    # only for small k: W_Q·W_K = 400 is within 0.004 up to k = 3 (the check's old range), 0.0101 at k = 21
    Mutant("C = 20, fine for k <= 20", _pool_cell(wq="20.0", wk="20.0"), "maxpool_layer(21)"),
    # only for short sequences: the biases precomputed for the notebook's 16 positions (offsets −15..15)
    Mutant(
        "biases for 16 positions",
        """
def maxpool_layer(k):
    table = [0.0 if abs(m) <= k else -np.inf for m in range(-15, 16)]
    return {"p": lambda m: table[m + 15], "W_Q": 30.0, "W_K": 30.0, "W_V": 1.0}
""",
        "raised IndexError",
    ),
    # the sibling write-up: W_Q = W_K = W_V = 1, nearly the window mean
    Mutant("write-up answer", _pool_cell(wq="1.0", wk="1.0"), "close to the window's mean"),
    # W_Q·W_K < 0: min pooling
    Mutant("negative scale", _pool_cell(wk="-30.0"), "that is min pooling"),
    # p = 0 everywhere: pools over the whole sequence
    Mutant("no window", _pool_cell(p="0.0"), "the maximum over the whole sequence"),
    # width ignores k
    Mutant("window fixed at 3", _pool_cell(p="0.0 if abs(m) <= 1 else -np.inf"), "that is max pooling of width 3"),
    # C too small to be sharp
    Mutant("C = 3", _pool_cell(wq="3.0", wk="3.0"), "not sharp enough"),
    # W_V = C as well
    Mutant("W_V = C", _pool_cell(wv="30.0"), "W_V scales the output"),
    # a one-sided window
    Mutant("one-sided window", _pool_cell(p="0.0 if 0 <= m <= 2 * k else -np.inf")),
    # the window off by one: |m| < k
    Mutant("window too narrow", _pool_cell(p="0.0 if abs(m) < k else -np.inf")),
    # the window inverted: −inf inside
    Mutant("window inverted", _pool_cell(p="-np.inf if abs(m) <= k else 0.0")),
    # returns a tuple instead of the dict
    Mutant(
        "tuple",
        """
def maxpool_layer(k):
    return (lambda m: 0.0 if abs(m) <= k else -np.inf), 30.0, 30.0, 1.0
""",
        "should be a dict",
    ),
]


# ---------------------------------------------------------------- layernorm_norm
def _norm_cell(body):
    return f"def layernorm_norm(d):\n    {body}\n"


LAYERNORM_NORM_CORRECT = [
    Correct("math.sqrt", "import math\n\n\n" + _norm_cell("return math.sqrt(d)")),
    Correct("power one half", _norm_cell("return d**0.5")),
    Correct("a 0-d tensor", _norm_cell("return torch.tensor(float(d)).sqrt()")),
    Correct(
        "measured on a random x",
        """
def layernorm_norm(d):
    x = np.random.default_rng(0).normal(size=d)
    return float(np.linalg.norm((x - x.mean()) / x.std()))
""",
    ),
    Correct("float32", _norm_cell("return np.sqrt(np.float32(d))")),
]
LAYERNORM_NORM_MUTANTS = [
    # LayerNorm taken to normalise the vector's norm
    Mutant("unit norm", _norm_cell("return 1.0")),
    # the squared norm
    Mutant("squared norm", _norm_cell("return float(d)")),
    # the sample standard deviation (1/(d − 1)), as np.std(ddof=1) or torch.std computes it
    Mutant("sample std", _norm_cell("return float(np.sqrt(d - 1))")),
    Mutant(
        "measured with torch.std",
        """
def layernorm_norm(d):
    x = torch.randn(d, dtype=torch.float64)
    return float(torch.linalg.norm((x - x.mean()) / x.std()))
""",
    ),
    # 1/√d: the entries' size taken for the norm
    Mutant("one over root d", _norm_cell("return 1 / np.sqrt(d)")),
    # d squared
    Mutant("d squared", _norm_cell("return float(d**2)")),
    # the mean is 0, so the norm is 0
    Mutant("zero", _norm_cell("return 0.0")),
    # a constant from the d = 2 case
    Mutant("root two always", _norm_cell("return float(np.sqrt(2))")),
    # returns the output vector, not its norm
    Mutant("the vector", _norm_cell("return np.ones(d)")),
]

# ---------------------------------------------------------------- layernorm_d2
LAYERNORM_D2_CORRECT = [
    Correct("a list of tuples", "layernorm_d2 = [(-1.0, 1.0), (1.0, -1.0)]"),
    Correct("integers", "layernorm_d2 = {(1, -1), (-1, 1)}"),
    Correct("numpy arrays", "layernorm_d2 = [np.array([1.0, -1.0]), np.array([-1.0, 1.0])]"),
    Correct("a 2x2 array", "layernorm_d2 = np.array([[1.0, -1.0], [-1.0, 1.0]])"),
    Correct("computed", "layernorm_d2 = {tuple(s * np.array([1.0, -1.0])) for s in (1, -1)}"),
    Correct("a 2x2 tensor", "layernorm_d2 = torch.tensor([[1.0, -1.0], [-1.0, 1.0]])"),
    Correct("a list of lists", "layernorm_d2 = [[1, -1], [-1, 1]]"),
    Correct("a frozenset", "layernorm_d2 = frozenset({(1.0, -1.0), (-1.0, 1.0)})"),
]
LAYERNORM_D2_MUTANTS = [
    # only x_1 > x_2
    Mutant("one output", "layernorm_d2 = {(1.0, -1.0)}"),
    # normalised to unit norm
    Mutant("unit norm", "layernorm_d2 = {(2**-0.5, -(2**-0.5)), (-(2**-0.5), 2**-0.5)}"),
    # the constant x given the output 0
    Mutant("zero included", "layernorm_d2 = {(1.0, -1.0), (-1.0, 1.0), (0.0, 0.0)}"),
    # the sample standard deviation: ±1/√2
    Mutant("sample std", "layernorm_d2 = {(0.5**0.5, -(0.5**0.5)), (-(0.5**0.5), 0.5**0.5)}"),
    # one pair, not a set of pairs
    Mutant("a single pair", "layernorm_d2 = (1.0, -1.0)"),
    # centred only, not scaled
    Mutant("half", "layernorm_d2 = {(0.5, -0.5), (-0.5, 0.5)}"),
    # a string
    Mutant("text", 'layernorm_d2 = "(1, -1) and (-1, 1)"'),
    # infinities for the constant x
    Mutant("infinite", "layernorm_d2 = {(1.0, -1.0), (-1.0, 1.0), (np.inf, -np.inf)}"),
    # the mean left in
    Mutant("not centred", "layernorm_d2 = {(1.0, 0.0), (0.0, 1.0)}"),
    # the pairs as text
    Mutant("text pairs", 'layernorm_d2 = {("1", "-1"), ("-1", "1")}', "should be a pair (a, b) of two numbers"),
    # a flat array of the four numbers
    Mutant("a flat array", "layernorm_d2 = np.array([1.0, -1.0, -1.0, 1.0])", "an array of pairs has shape (m, 2)"),
    # a value a hair off ±1: its message shows more digits than the 1 it is near
    Mutant("off by 2e-6", "layernorm_d2 = {(1 + 2e-6, -1.0), (-1.0, 1.0)}", "holds (1.000002, -1)"),
]


# ---------------------------------------------------------------- the forms both parts of a test cell accept
# The visible asserts and the hidden check of layernorm_norm and layernorm_d2 accept the same answers: each source
# below defines the cell's name; tests/checks/test_theory.py runs the hidden check on every one and
# tests/visible/test_same_answers.py the released visible asserts, and both must agree with the verdict here.
# A number: an int, a float, a numpy number, or a one-element array or tensor of integers or floats (no bool, no
# text, no list). layernorm_d2: a non-empty set, frozenset, list or tuple of pairs, or an (m, 2) array or tensor; a
# pair: a tuple or list of two numbers, or a 1-D array or tensor of two.
LAYERNORM_NORM_FORMS = {
    "accepted": {
        "a float": _norm_cell("return d**0.5"),
        "a numpy float64": _norm_cell("return np.sqrt(d)"),
        "a numpy float32": _norm_cell("return np.sqrt(np.float32(d))"),
        "a 0-d tensor": _norm_cell("return torch.tensor(float(d)).sqrt()"),
        "a 0-d tensor with a gradient": _norm_cell("return torch.tensor(float(d), requires_grad=True).sqrt()"),
        "a one-element tensor": _norm_cell("return torch.tensor([float(d)], dtype=torch.float64).sqrt()"),
        "a one-element array": _norm_cell("return np.array([np.sqrt(d)])"),
        "a 1x1 array": _norm_cell("return np.array([[np.sqrt(d)]])"),
    },
    "rejected": {
        "a list of one": _norm_cell("return [float(np.sqrt(d))]"),
        "a tuple of one": _norm_cell("return (float(np.sqrt(d)),)"),
        "text": _norm_cell("return str(np.sqrt(d))"),
        "a text array": _norm_cell("return np.array(str(np.sqrt(d)))"),
        "a bool": _norm_cell("return True"),
        "a bool array": _norm_cell("return np.array([True])"),
        "a complex number": _norm_cell("return complex(np.sqrt(d))"),
        "None": _norm_cell("return None"),
        "the vector": _norm_cell("return np.ones(d)"),
        "unit norm": _norm_cell("return 1.0"),
        "sample std": _norm_cell("return float(np.sqrt(d - 1))"),
        "off by 3e-6": _norm_cell("return float(np.sqrt(d)) * (1 + 3e-6)"),
    },
}
LAYERNORM_D2_FORMS = {
    "accepted": {
        "a set of float tuples": "layernorm_d2 = {(1.0, -1.0), (-1.0, 1.0)}",
        "a set of int tuples": "layernorm_d2 = {(1, -1), (-1, 1)}",
        "a list of lists": "layernorm_d2 = [[1, -1], [-1, 1]]",
        "a tuple of tuples": "layernorm_d2 = ((-1.0, 1.0), (1.0, -1.0))",
        "a frozenset": "layernorm_d2 = frozenset({(1.0, -1.0), (-1.0, 1.0)})",
        "a 2x2 float array": "layernorm_d2 = np.array([[1.0, -1.0], [-1.0, 1.0]])",
        "a 2x2 int array": "layernorm_d2 = np.array([[1, -1], [-1, 1]])",
        "a 2x2 tensor": "layernorm_d2 = torch.tensor([[1.0, -1.0], [-1.0, 1.0]])",
        "a 2x2 tensor with a gradient": "layernorm_d2 = torch.tensor([[1.0, -1.0], [-1.0, 1.0]], requires_grad=True)",
        "a list of arrays": "layernorm_d2 = [np.array([1.0, -1.0]), np.array([-1.0, 1.0])]",
        "a list of tensors": "layernorm_d2 = [torch.tensor([1.0, -1.0]), torch.tensor([-1.0, 1.0])]",
        "numpy scalars": "layernorm_d2 = {(np.float64(1), np.float64(-1)), (np.float32(-1), np.int64(1))}",
        "0-d tensors": "layernorm_d2 = [(torch.tensor(1.0), torch.tensor(-1.0)), (torch.tensor(-1.0), torch.tensor(1.0))]",
        "one-element arrays": "layernorm_d2 = [(np.array([1.0]), np.array([-1.0])), (np.array([-1.0]), np.array([1.0]))]",
        "a repeated pair": "layernorm_d2 = [(1, -1), (1.0, -1.0), (-1, 1)]",
        "within 1e-7": "layernorm_d2 = {(1 + 1e-7, -1 - 1e-7), (-1.0, 1.0)}",
        "both entries 9e-7 up": "layernorm_d2 = {(1 + 9e-7, -1 + 9e-7), (-1.0, 1.0)}",
    },
    "rejected": {
        "a single pair": "layernorm_d2 = (1.0, -1.0)",
        "a single pair as an array": "layernorm_d2 = np.array([1.0, -1.0])",
        "a flat array of four": "layernorm_d2 = np.array([1.0, -1.0, -1.0, 1.0])",
        "a 2x2x1 array": "layernorm_d2 = np.array([[[1.0], [-1.0]], [[-1.0], [1.0]]])",
        "text": 'layernorm_d2 = "(1, -1) and (-1, 1)"',
        "a dict": "layernorm_d2 = {1: -1, -1: 1}",
        "empty": "layernorm_d2 = set()",
        "text pairs": 'layernorm_d2 = {("1", "-1"), ("-1", "1")}',
        "bool entries": "layernorm_d2 = [(True, -1), (-1, True)]",
        "complex entries": "layernorm_d2 = [(1 + 0j, -1 + 0j), (-1 + 0j, 1 + 0j)]",
        "lists as entries": "layernorm_d2 = [([1.0], [-1.0]), ([-1.0], [1.0])]",
        "triples": "layernorm_d2 = {(1.0, -1.0, 0.0), (-1.0, 1.0, 0.0)}",
        "sets as pairs": "layernorm_d2 = [{1.0, -1.0}, {-1.0, 1.0}]",
        "unit norm": "layernorm_d2 = {(2**-0.5, -(2**-0.5)), (-(2**-0.5), 2**-0.5)}",
        "zero included": "layernorm_d2 = {(1.0, -1.0), (-1.0, 1.0), (0.0, 0.0)}",
        "nan included": "layernorm_d2 = {(1.0, -1.0), (-1.0, 1.0), (np.nan, np.nan)}",
        "off by 2e-6": "layernorm_d2 = {(1 + 2e-6, -1.0), (-1.0, 1.0)}",
        "both entries 2e-6 up": "layernorm_d2 = {(1 + 2e-6, -1 + 2e-6), (-1.0, 1.0)}",
        "a constant pair": "layernorm_d2 = {(1.0, -1.0), (-1.0, 1.0), (0.5, 0.5)}",
        "scaled": "layernorm_d2 = {(3.0, -3.0), (-3.0, 3.0)}",
    },
    # accepted by the visible asserts, which leave completeness to the grader and say so
    "incomplete": {
        "one output": "layernorm_d2 = {(1.0, -1.0)}",
        "one output as an array": "layernorm_d2 = np.array([[-1, 1]])",
    },
}

# ---------------------------------------------------------------- the catalogue
CATALOGUE = Catalogue(
    notebook="theory",
    prelude=PRELUDE,
    cells={
        "counterexample_w": Cell(correct=COUNTEREXAMPLE_CORRECT, mutants=COUNTEREXAMPLE_MUTANTS),
        "logit_after_fgsm": Cell(correct=FGSM_CORRECT, mutants=FGSM_MUTANTS),
        "logit_after_fgm": Cell(correct=FGM_CORRECT, mutants=FGM_MUTANTS),
        "ridge_closed_form": Cell(correct=RIDGE_CORRECT, mutants=RIDGE_MUTANTS),
        "eps_to_zero_logit": Cell(correct=EPS_CORRECT, mutants=EPS_MUTANTS),
        "eps_fgsm_to_zero_logit": Cell(correct=EPS_FGSM_CORRECT, mutants=EPS_FGSM_MUTANTS),
        "nqm_expected_loss": Cell(correct=NQM_CORRECT, mutants=NQM_MUTANTS),
        "best_learning_rate": Cell(correct=BEST_LR_CORRECT, mutants=BEST_LR_MUTANTS),
        "most_efficient_batch": Cell(correct=EFFICIENT_CORRECT, mutants=EFFICIENT_MUTANTS),
        "regimes": Cell(correct=REGIMES_CORRECT, mutants=REGIMES_MUTANTS),
        "scaling_choice": Cell(correct=SCALING_CORRECT, mutants=SCALING_MUTANTS),
        "layernorm_norm": Cell(correct=LAYERNORM_NORM_CORRECT, mutants=LAYERNORM_NORM_MUTANTS),
        "layernorm_d2": Cell(correct=LAYERNORM_D2_CORRECT, mutants=LAYERNORM_D2_MUTANTS),
        "relu_chain_grad_bound": Cell(correct=RELU_CHAIN_CORRECT, mutants=RELU_CHAIN_MUTANTS),
        "rnn_jacobian_bound": Cell(correct=RNN_CORRECT, mutants=RNN_MUTANTS),
        "relative_attention": Cell(correct=ATTENTION_CORRECT, mutants=ATTENTION_MUTANTS),
        "conv1d_layer": Cell(correct=CONV_CORRECT, mutants=CONV_MUTANTS),
        "maxpool_layer": Cell(correct=MAXPOOL_CORRECT, mutants=MAXPOOL_MUTANTS),
    },
)
