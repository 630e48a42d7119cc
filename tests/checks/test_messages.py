"""A failure that shows numbers shows different numbers: never "expected 0.30, got 0.30" (issue 57).

Every check whose message prints what was expected beside what was seen is given a near miss, an answer off by just
more than the check's tolerance, where a fixed number of digits would print both alike. The message must show two
different texts (checks.differing adds digits until they differ).
"""

import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks import bert as bert_checks
from autograder.checks import differing, digits_to_differ
from autograder.checks import nmt as nmt_checks
from autograder.checks import theory as theory_checks
from autograder.content.reference import nmt as nmt_ref
from tests.checks import failure, notebook_cell
from tests.checks import mutants_bert as B
from tests.checks import mutants_theory as T

NUMBER = r"(-?[0-9][0-9.e+\-]*|\[\[.*?\]\]|\[[^\]]*\]|\([^)]*\))"  # a number, a (nested) list, a tuple


def theory(source, name):
    return notebook_cell(T.PRELUDE, source, name)


# ---------------------------------------------------------------------------------------------- theory near misses
THEORY = {
    "logit_after_fgsm": (
        "def logit_after_fgsm(x, w, eps):\n    return float(w @ x - eps * np.abs(w).sum()) * (1 + 3e-6)\n",
        rf"expected f\(x′\) = {NUMBER} .*got {NUMBER}",
    ),
    "logit_after_fgm": (
        "def logit_after_fgm(x, w, eps):\n    return float(w @ x - eps * (w @ w)) * (1 + 3e-6)\n",
        rf"expected f\(x′\) = {NUMBER} .*got {NUMBER}",
    ),
    "ridge_closed_form": (
        "def ridge_closed_form(X, t, lam):\n    n, d = X.shape\n"
        "    return np.linalg.solve(X.T @ X + 2 * n * lam * np.eye(d), X.T @ t) * (1 + 3e-5)\n",
        rf"expected w\* = {NUMBER}, got {NUMBER}",
    ),
    "eps_to_zero_logit": (
        "def eps_to_zero_logit(x, X, t, lam):\n    w = (X @ t) / (X @ X + 2 * len(X) * lam)\n"
        "    return x / w * (1 + 3e-6)\n",
        rf"expected ε = x / w = {NUMBER} .*got {NUMBER}",
    ),
    "eps_fgsm_to_zero_logit": (
        "def eps_fgsm_to_zero_logit(x, X, t, lam):\n    w = (X @ t) / (X @ X + 2 * len(X) * lam)\n"
        "    return x * np.sign(w) * (1 + 3e-6)\n",
        rf"expected ε = {NUMBER} .*got {NUMBER}",
    ),
    "nqm_expected_loss": (
        "def nqm_expected_loss(lr, batch_size, a, sigma, w0, steps):\n    m = w0 ** 2\n"
        "    for _ in range(steps):\n        m = (1 - lr * a) ** 2 * m + lr ** 2 * sigma ** 2 / batch_size\n"
        "    return 0.5 * a * m * (1 + 3e-6)\n",
        rf"expected {NUMBER}, got {NUMBER}",
    ),
    "relu_chain_grad_bound": (
        "def relu_chain_grad_bound(ws):\n    return 0.0, float(np.prod(np.abs(ws))) * (1 + 3e-6)\n",
        rf"expected upper = {NUMBER}, got {NUMBER}",
    ),
    "rnn_jacobian_bound": (
        "def rnn_jacobian_bound(sigma_max_w, n):\n    return (sigma_max_w / 4) ** (n - 1) * (1 + 3e-6)\n",
        rf"expected {NUMBER}, got {NUMBER}",
    ),
    "relative_attention": (
        "def relative_attention(q, k, v, p):\n    n = len(q)\n"
        "    s = np.array([[q[i] * k[j] + p(i - j) for j in range(n)] for i in range(n)])\n"
        "    a = np.exp(s - s.max(axis=1, keepdims=True))\n"
        "    return (a / a.sum(axis=1, keepdims=True)) @ v * (1 + 3e-5)\n",
        rf"expected {NUMBER}, got {NUMBER}",
    ),
    "layernorm_norm": (
        "def layernorm_norm(d):\n    return float(np.sqrt(d)) * (1 + 3e-6)\n",
        rf"expected {NUMBER}, got {NUMBER}",
    ),
    "maxpool_layer": (
        T.CATALOGUE["maxpool_layer"].mutant("C = 20, fine for k <= 20"),
        rf"expected {NUMBER}, got {NUMBER}",
    ),
}


@pytest.mark.parametrize("grade_id", list(THEORY))
def test_theory_near_miss_shows_two_different_numbers(grade_id):
    """Does a theory answer off by just more than the tolerance fail with expected and got printed differently?"""
    source, pattern = THEORY[grade_id]
    name = T.CATALOGUE.name(grade_id)
    message = failure(getattr(theory_checks, f"check_{grade_id}"), theory(source, name))
    found = re.search(pattern, message)
    assert found, f"expected {pattern!r} in {message!r}"
    assert found.group(1).replace(" ", "") != found.group(2).replace(" ", ""), message


def test_best_learning_rate_near_miss_shows_two_different_numbers():
    """Does a learning rate a hair off the grid's best (1e-9 relative) read differently from the best?"""
    source = (
        "def best_learning_rate(batch_size, lrs, a, sigma, w0, steps):\n"
        "    losses = [nqm_expected_loss(lr, batch_size, a, sigma, w0, steps) for lr in lrs]\n"
        "    return lrs[int(np.argmin(losses))] * (1 + 1e-9)\n"
    )
    message = failure(theory_checks.check_best_learning_rate, theory(source, "best_learning_rate"))
    found = re.search(rf"expected {NUMBER}, got {NUMBER}", message)
    assert found and found.group(1) != found.group(2), message


def test_conv_layer_near_miss_shows_coefficients_apart_from_2_0_1():
    """Does a conv layer whose W_V is 3(1 + 1e-5) show coefficients that do not read as 2, 0 and 1?"""
    source = (
        "conv1d_layer = {'p': lambda m: {1: np.log(2), -1: 0.0}.get(m, -np.inf), "
        "'W_Q': 0.0, 'W_K': 0.0, 'W_V': 3 * (1 + 1e-5)}\n"
    )
    message = failure(theory_checks.check_conv1d_layer, theory(source, "conv1d_layer"))
    computes = message.split("the layer computes ")[1].split(";")[0]
    assert computes != "2·x_(i−1) + 0·x_i + 1·x_(i+1)", message
    assert "W_V = 3.00003, not 2 + 0 + 1 = 3" in message, message


def test_layernorm_d2_near_miss_does_not_read_as_an_output():
    """Does a pair 2e-6 off (1, −1) show digits that tell it from (1, −1)?"""
    message = failure(
        theory_checks.check_layernorm_d2, theory("layernorm_d2 = {(1 + 2e-6, -1.0), (-1.0, 1.0)}", "layernorm_d2")
    )
    pair = re.search(r"holds \(([^,]+), ([^)]+)\)", message)
    assert pair and (pair.group(1), pair.group(2)) != ("1", "-1"), message


# ---------------------------------------------------------------------------------------------- nmt near misses


@pytest.fixture
def notebook_objects(monkeypatch):
    """Objects defined in this module count as notebook-defined."""
    monkeypatch.setenv("A3_ALLOW_NON_NOTEBOOK", "1")


def pe_near_miss(max_seq_len, hidden_size):  # position 0's cos 0 read as 0.9998
    pe = nmt_ref.create_positional_encodings(max_seq_len, hidden_size).clone()
    pe[0, 1] -= 2e-4
    return pe


class SDAScaleAttributeNearMiss(nmt_ref.ScaledDotAttention):  # scaling_factor 2e-5 off 1/sqrt(H)
    def __init__(self, hidden_size):
        super().__init__(hidden_size)
        self.scaling_factor = self.scaling_factor + 2e-5


class SDAScoresNearMiss(nmt_ref.ScaledDotAttention):  # the scores scaled by 1.001/sqrt(H)
    def forward(self, queries, keys, values):
        queries = queries.unsqueeze(1) if queries.dim() == 2 else queries
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        weights = torch.softmax(q @ k.transpose(1, 2) * self.scaling_factor * 1.001, dim=-1)
        return weights @ v, weights


class SDARowsNearMiss(nmt_ref.ScaledDotAttention):  # the weights' rows sum to 1.0002
    def forward(self, queries, keys, values):
        context, weights = super().forward(queries, keys, values)
        return context, weights * 1.0002


class CausalFirstKeyNearMiss(nmt_ref.CausalScaledDotAttention):  # key 0's score 0.001 too high
    def forward(self, queries, keys, values):
        queries = queries.unsqueeze(1) if queries.dim() == 2 else queries
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        scores = q @ k.transpose(1, 2) * self.scaling_factor
        scores[..., 0] += 1e-3
        future = torch.ones(scores.shape[-2:], dtype=torch.bool, device=scores.device).triu(1)
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        return weights @ v, weights


def fop_near_miss(x, y):  # the vertex 1e-5 off
    p, opt = nmt_ref.find_optimal_params(x, y)
    return p, opt * (1 + 1e-5)


def fop_p_near_miss(x, y):  # the coefficients 1e-5 off
    p, opt = nmt_ref.find_optimal_params(x, y)
    return np.asarray(p) * (1 + 1e-5), opt


def fll_near_miss(x, y):  # the slope 1e-5 off
    m, c = nmt_ref.fit_linear_log(x, y)
    return m * (1 + 1e-5), c


NMT = {
    "positional_encodings": (pe_near_miss, rf"should be {NUMBER} .*got {NUMBER}"),
    "scaled_dot_attention: scaling_factor": (SDAScaleAttributeNearMiss, rf"= {NUMBER}, got {NUMBER}"),
    "scaled_dot_attention: weights": (SDAScoresNearMiss, rf"attention_weights should be {NUMBER}, got {NUMBER}"),
    "scaled_dot_attention: row sums": (SDARowsNearMiss, r"sum to (1) over the keys .* range from (\S+) to"),
    "causal_scaled_dot_attention": (CausalFirstKeyNearMiss, rf"should be {NUMBER}, got {NUMBER}"),
    "find_optimal_params": (fop_near_miss, rf"optimal_params should be {NUMBER} parameters .*got {NUMBER}"),
    "find_optimal_params: p": (fop_p_near_miss, rf"= {NUMBER} on .*got {NUMBER}"),
    "fit_linear_log": (fll_near_miss, rf"should be {NUMBER} for .*got {NUMBER}"),
}


@pytest.mark.parametrize("case", list(NMT))
def test_nmt_near_miss_shows_two_different_numbers(case, notebook_objects):
    """Does an nmt answer off by just more than the tolerance fail with expected and got printed differently?"""
    answer, pattern = NMT[case]
    message = failure(getattr(nmt_checks, f"check_{case.split(':')[0]}"), answer)
    found = re.search(pattern, message)
    assert found, f"expected {pattern!r} in {message!r}"
    assert found.group(1).replace(" ", "") != found.group(2).replace(" ", ""), message


# ---------------------------------------------------------------------------------------------- bert near misses


class ClassifierLossNearMiss(B.ClassifierFirstToken):  # the loss 0.1 % too large
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state[:, 0])
        if labels is None:
            return (logits,)
        return logits, F.cross_entropy(logits, labels) * 1.001


def test_bert_loss_near_miss_shows_two_different_numbers(notebook_objects):
    """Does a loss 0.1 % off the mean cross-entropy fail with the two losses printed differently?"""
    message = failure(bert_checks.check_sentence_classifier, ClassifierLossNearMiss)
    found = re.search(rf"mean cross-entropy {NUMBER}, got {NUMBER}", message)
    assert found and found.group(1) != found.group(2), message


# ---------------------------------------------------------------------------------------------- the helper itself


@pytest.mark.parametrize(
    "want, got, digits, shown, needed",
    [
        (0.3, 0.30004, 2, ("0.3", "0.30004"), 5),
        (1.0, 1.0, 4, ("1", "1"), 4),
        (0.7310586, 0.73097, 3, ("0.7311", "0.731"), 4),
        ([1.0, 2.0], [1.0, 2.000001], 4, ("[1, 2]", "[1, 2.000001]"), 7),
        (math.sqrt(2), math.sqrt(2) * (1 + 3e-6), 6, ("1.41421", "1.41422"), 6),
        (1.0, math.nan, 4, ("1", "nan"), 4),
    ],
)
def test_differing_adds_digits_until_the_texts_differ(want, got, digits, shown, needed):
    """Does differing keep `digits` where that tells the values apart, and add just enough digits where not?"""
    assert differing(want, got, digits) == shown
    assert digits_to_differ(want, got, digits) == needed
