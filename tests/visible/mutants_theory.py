"""Realistic answers for the visible checks of theory.ipynb: mistakes they must catch, alternatives they must pass.

The answers are those of the hidden checks' catalogue (tests/checks/mutants_theory.py), looked up by name;
`expect` is a fragment of the one-line AssertionError the visible test cell must show. Which answer is
right in `most_efficient_batch`, `regimes` and `scaling_choice` is the grade itself, so their visible checks
judge only the form; their catalogue here holds the mistakes of form.
"""

from tests.checks import mutants_theory as M
from tests.visible.run import Right, Wrong

_CELLS = M.CATALOGUE


def _wrong(grade_id, label, expect):
    return Wrong(grade_id, label.replace(" ", "_"), expect, source=M.PRELUDE + _CELLS[grade_id].mutant(label))


def _right(grade_id, label):
    return Right(grade_id, label.replace(" ", "_"), source=M.PRELUDE + _CELLS[grade_id].alternative(label))


WRONG = [
    _wrong("counterexample_w", "all ones", "does not refute the claim"),
    _wrong("counterexample_w", "max entry is 1", "does not refute the claim"),
    _wrong("counterexample_w", "mixed signs", "should be positive"),
    _wrong("counterexample_w", "zero entry", "should be positive"),
    _wrong("counterexample_w", "2-D array", "shape (d,)"),
    _wrong("counterexample_w", "scalar", "shape (d,)"),
    _wrong("counterexample_w", "empty", "non-empty"),
    _wrong("counterexample_w", "infinite entry", "finite"),
    _wrong("counterexample_w", "booleans", "does not refute the claim"),
    *[
        _wrong("logit_after_fgsm", label, expect)
        for label, expect in [
            ("plus sign", "autograd gives"),
            ("FGM formula", "autograd gives"),
            ("sum without abs", "autograd gives"),
            ("l2 norm", "autograd gives"),
            ("sign of x", "autograd gives"),
            ("returns x'", "one number"),
            ("in place", "in place"),
            ("eps ignored", "autograd gives"),
            ("eps times d", "autograd gives"),
        ]
    ],
    *[
        _wrong("logit_after_fgm", label, expect)
        for label, expect in [
            ("norm not squared", "autograd gives"),
            ("FGSM formula", "autograd gives"),
            ("plus sign", "autograd gives"),
            ("sum of w", "autograd gives"),
            ("eps squared", "autograd gives"),
            ("elementwise", "one number"),
            ("in place", "in place"),
        ]
    ],
    *[
        _wrong("ridge_closed_form", label, expect)
        for label, expect in [
            ("LLM answer n lambda", "gradient of the objective"),
            ("lambda without n", "gradient of the objective"),
            ("2 lambda without n", "gradient of the objective"),
            ("1/n on one side only", "gradient of the objective"),
            ("no regularisation", "gradient of the objective"),
            ("column vector", "shape (d,)"),
            ("torch result", "numpy array"),
            ("centres X in place", "in place"),
        ]
    ],
    *[
        _wrong("eps_to_zero_logit", label, "f(x′)")
        for label in [
            "x times w",
            "x over w squared",
            "handout derivation",
            "ridge with n lambda",
            "ridge with lambda",
            "negative",
            "least squares w",
            "returns w",
        ]
    ],
    *[
        _wrong("eps_fgsm_to_zero_logit", label, "f(x′)")
        for label in [
            "|x| times (1 + 2 lambda)",
            "|x| over (1 + 2 lambda)",
            "FGM answer x over w",
            "x without abs",
            "minus x sgn w",
            "x over |w|",
            "returns sgn w",
            "x times w",
        ]
    ],
    *[
        _wrong("nqm_expected_loss", label, "nqm_expected_loss")
        for label in [
            "lr not squared on noise",
            "no batch size",
            "sigma not squared",
            "decay not squared",
            "mean only",
            "one sampled run",
            "batch squared",
        ]
    ],
    *[
        _wrong("nqm_expected_loss", label, "after 0 steps")
        for label in ["no half a", "off by one", "start not squared"]
    ],
    *[
        _wrong("best_learning_rate", label, expect)
        for label, expect in [
            ("highest loss", "the lowest expected loss is at"),
            ("returns index", "one of lrs"),
            ("returns loss", "one of lrs"),
            ("batch size ignored", "batch size 64"),
            ("sorted then indexed", "the lowest expected loss is at"),
            ("one step", "the lowest expected loss is at"),
            ("largest stable lr", "the lowest expected loss is at"),
        ]
    ],
    *[
        _wrong("most_efficient_batch", label, expect)
        for label, expect in [
            ("two letters", "the letter"),
            ("list", "a string"),
            ("batch size", "the letter"),
            ("text only", "the letter"),
            ("D", "the letter"),
            ("number", "a string"),
        ]
    ],
    *[
        _wrong("regimes", label, expect)
        for label, expect in [
            ("pair in the wrong order", "should be one of"),
            ("own wording", "should be one of"),
            ("lower-case keys", "keys 'A' and 'B'"),
            ("regimes only", "pair"),
        ]
    ],
    *[
        _wrong("scaling_choice", label, expect)
        for label, expect in [
            ("two letters", "the letter"),
            ("list", "a string"),
            ("D", "the letter"),
            ("text only", "the letter"),
            ("number", "a string"),
        ]
    ],
]

RIGHT = [
    *[Right(grade_id, "reference") for grade_id in _CELLS],
    *[_right(grade_id, label) for grade_id, cell in _CELLS.items() for label, _ in cell.correct],
]

# Problem 3.
WRONG += [
    *[
        _wrong("relu_chain_grad_bound", label, expect)
        for label, expect in [
            ("product without abs", "the bounds fail"),
            ("max weight", "the bounds fail"),
            ("always 1", "the bounds fail"),
            ("sum of abs", "not tight"),
            ("negative lower bound", "not tight"),
            ("first weight left out", "the bounds fail"),
            ("pair swapped", "the bounds fail"),
            ("upper only", "a pair (lower, upper)"),
            ("lower bound from the smallest weight", "the bounds fail"),
        ]
    ],
    *[
        _wrong("rnn_jacobian_bound", label, expect)
        for label, expect in [
            ("no quarter", "loose"),
            ("n steps", "the bound fails"),
            ("slope one half", "loose"),
            ("quarter once", "loose"),
            ("example hard-coded", "the bound fails"),
            ("precedence", "the bound fails"),
            ("loop one short", "loose"),
            ("linear in n", "σ_max(∂x_n/∂x_1)"),
        ]
    ],
    *[
        _wrong("relative_attention", label, expect)
        for label, expect in [
            ("softmax over i", "row i should average the values"),
            ("offset j minus i", "row i should average the values"),
            ("no max subtraction", "subtract each row's largest score"),
            ("p ignored", "row i should average the values"),
            ("weights transposed", "row i should average the values"),
            ("p after the softmax", "row i should average the values"),
            ("absolute offset", "row i should average the values"),
            ("returns the weights", "shape (n,)"),
            ("scaled by sqrt n", "with p(m) = 0.5·m"),
            ("changes q in place", "in place"),
        ]
    ],
    *[
        _wrong("conv1d_layer", label, expect)
        for label, expect in [
            ("write-up answer", "2·x_(i−1) + x_(i+1)"),
            ("offsets flipped", "2·x_(i−1) + x_(i+1)"),
            ("sigmoid for softmax", "2·x_(i−1) + x_(i+1)"),
            ("W_V = 1", "2·x_(i−1) + x_(i+1)"),
            ("other offsets 0", "2·x_(i−1) + x_(i+1)"),
            ("W_Q W_K = 1", "2·x_(i−1) + x_(i+1)"),
            ("p without a default", "for every integer offset"),
            ("kernel values as biases", "2·x_(i−1) + x_(i+1)"),
            ("offset 0 kept", "2·x_(i−1) + x_(i+1)"),
            ("p as a list", "should be a function of the offset"),
        ]
    ],
    *[
        _wrong("maxpool_layer", label, expect)
        for label, expect in [
            ("write-up answer", "within 0.01 of max pooling"),
            ("negative scale", "within 0.01 of max pooling"),
            ("no window", "within 0.01 of max pooling"),
            ("window fixed at 3", "within 0.01 of max pooling of width 5"),
            ("C = 3", "within 0.01 of max pooling"),
            ("W_V = C", "within 0.01 of max pooling"),
            ("one-sided window", "within 0.01 of max pooling"),
            ("window too narrow", "within 0.01 of max pooling"),
            ("window inverted", "within 0.01 of max pooling"),
            ("tuple", "should be a dict"),
            ("C = 10", "within 0.01 of max pooling of width 5"),
            ("C = 12", "within 0.01 of max pooling of width 101"),
            ("C = 15, fine for k <= 5", "within 0.01 of max pooling of width 101"),
            ("C = 20, fine for k <= 20", "within 0.01 of max pooling of width 101"),
            ("biases for 16 positions", "raised IndexError"),
        ]
    ],
]

# Problem 4.
WRONG += [
    *[
        _wrong("layernorm_norm", label, expect)
        for label, expect in [
            ("unit norm", "it is not the norm of LN(x)"),
            ("squared norm", "it is not the norm of LN(x)"),
            ("sample std", "it is not the norm of LN(x)"),
            ("measured with torch.std", "it is not the norm of LN(x)"),
            ("one over root d", "is too small: it is not the norm of LN(x)"),
            ("d squared", "is too large: it is not the norm of LN(x)"),
            ("zero", "it is not the norm of LN(x)"),
            ("root two always", "it is not the norm of LN(x)"),
            ("the vector", "one number"),
        ]
    ],
    *[
        _wrong("layernorm_d2", label, expect)
        for label, expect in [
            ("unit norm", "is not an output of LN"),
            ("zero included", "is not an output of LN"),
            ("sample std", "is not an output of LN"),
            ("a single pair", "should be a pair (a, b)"),
            ("half", "is not an output of LN"),
            ("text", "non-empty set of pairs"),
            ("infinite", "is not an output of LN"),
            ("not centred", "is not an output of LN"),
            ("text pairs", "should be a pair (a, b) of two numbers"),
            ("a flat array", "should be a non-empty set of pairs"),
            ("off by 2e-6", "(1.000002, -1) is not an output of LN"),
        ]
    ],
]

# One cell, one grade: a correct layer passes beside a relative_attention that is wrong or written
# differently (the layer checks never call it). The case's cell redefines relative_attention first.
_ATTENTIONS = {
    "without the max shift": _CELLS["relative_attention"].mutant("no max subtraction"),
    "shifted by the global max": """
def relative_attention(q, k, v, p):
    n = len(q)
    scores = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])
    weights = np.exp(scores - scores.max())  # one shift for all rows: rows far below it underflow to 0 / 0
    return (weights / weights.sum(axis=1, keepdims=True)) @ v
""",
    "calling p on an array of offsets": _CELLS["relative_attention"].alternative(
        "p on an array of offsets, -inf as -1e9"
    ),
    "not written yet": """
def relative_attention(q, k, v, p):
    raise NotImplementedError("relative_attention")
""",
}
RIGHT += [
    Right(grade_id, f"{label}_beside_an_attention_{attention}".replace(" ", "_"), source=M.PRELUDE + body + layer)
    for attention, body in _ATTENTIONS.items()
    for grade_id in ("conv1d_layer", "maxpool_layer")
    for label, layer in _CELLS[grade_id].correct[:2]
]
