"""Catalogue of student answers for the NMT checks, in the shape of tests/checks/harness.py: correct alternatives
(`Correct`) and realistic mistakes (`Mutant`, with the text its one-line failure must contain; `device=True` for
the mistakes that are right on a CPU and wrong on a GPU).

Each answer is (label, the object the student's cell defines); the label is the object's name.
Each definition carries a one-line comment naming the student's mistake (or the alternative's idea).
Attention mutants subclass the reference so that only the part a student writes differs.
"""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.content.reference import nmt as ref
from autograder.content.reference.nmt import CausalScaledDotAttention, ScaledDotAttention, create_positional_encodings
from tests.checks.harness import Catalogue, Cell, Correct, Mutant


def _as_3d(queries):
    """(B, H) queries as (B, 1, H); (B, k, H) unchanged."""
    return queries.unsqueeze(1) if queries.dim() == 2 else queries


# ============================================================================================
# positional_encodings


# Alternative: nested Python loops in numpy, converted to a float32 tensor.
def pe_loops(max_seq_len, hidden_size):
    table = np.zeros((max_seq_len, hidden_size))
    for pos in range(max_seq_len):
        for j in range(hidden_size):
            angle = pos / 10000 ** ((j - j % 2) / hidden_size)
            table[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return torch.tensor(table, dtype=torch.float32)


# Alternative: "div_term" form exp(-2i ln(10000) / d), as in the PyTorch tutorial, handling odd d.
def pe_div_term(max_seq_len, hidden_size):
    position = torch.arange(max_seq_len).unsqueeze(1).float()  # (L, 1)
    div_term = torch.exp(torch.arange(0, hidden_size, 2).float() * (-math.log(10000.0) / hidden_size))
    pe = torch.zeros(max_seq_len, hidden_size)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)[:, : hidden_size // 2]
    return pe


# Alternative: build every column's angle, then pick sin or cos with torch.where.
def pe_where(max_seq_len, hidden_size):
    pos = torch.arange(max_seq_len, dtype=torch.float32)[:, None]
    j = torch.arange(hidden_size)[None, :]
    angles = pos / torch.pow(10000.0, (2 * (j // 2)).float() / hidden_size)
    return torch.where(j % 2 == 0, torch.sin(angles), torch.cos(angles))


def _pe_template(max_seq_len, hidden_size, base=10000.0, swap=False, exponent="2i", start=0):
    pos = torch.arange(start, start + max_seq_len, dtype=torch.float32)[:, None]
    j = torch.arange(hidden_size)[None, :]
    e = {"2i": (2 * (j // 2)).float(), "j": j.float(), "2j": 2 * j.float()}[exponent]
    angles = pos / base ** (e / hidden_size)
    first, second = (torch.cos, torch.sin) if swap else (torch.sin, torch.cos)
    return torch.where(j % 2 == 0, first(angles), second(angles))


# Mistake: cos on even dimensions and sin on odd ones.
def pe_sin_cos_swapped(max_seq_len, hidden_size):
    return _pe_template(max_seq_len, hidden_size, swap=True)


# Mistake: frequency base 1000 instead of 10000.
def pe_base_1000(max_seq_len, hidden_size):
    return _pe_template(max_seq_len, hidden_size, base=1000.0)


# Mistake: exponent j/d with the raw dimension index instead of 2i/d for the pair (2i, 2i+1).
def pe_exponent_j(max_seq_len, hidden_size):
    return _pe_template(max_seq_len, hidden_size, exponent="j")


# Mistake: exponent 2j/d (doubles the already-even index).
def pe_exponent_2j(max_seq_len, hidden_size):
    return _pe_template(max_seq_len, hidden_size, exponent="2j")


# Mistake: positions counted from 1 instead of 0.
def pe_positions_from_one(max_seq_len, hidden_size):
    return _pe_template(max_seq_len, hidden_size, start=1)


# Mistake: returns the table transposed, (hidden_size, max_seq_len).
def pe_transposed(max_seq_len, hidden_size):
    return ref.create_positional_encodings(max_seq_len, hidden_size).T


# Mistake: integer division 2*i // d makes every exponent 0.
def pe_integer_division(max_seq_len, hidden_size):
    pe = torch.zeros(max_seq_len, hidden_size)
    for pos in range(max_seq_len):
        for j in range(hidden_size):
            angle = pos / 10000 ** (2 * (j // 2) // hidden_size)
            pe[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe


# Mistake: sin block in the first half and cos block in the second half instead of interleaving.
def pe_concatenated(max_seq_len, hidden_size):
    pos = torch.arange(max_seq_len, dtype=torch.float32)[:, None]
    two_i = torch.arange(0, hidden_size, 2, dtype=torch.float32)[None, :]
    angles = pos / 10000 ** (two_i / hidden_size)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)[:, :hidden_size]


# Mistake: assumes an even hidden size (cos needs as many columns as sin), crashing for odd d.
def pe_even_only(max_seq_len, hidden_size):
    pos = torch.arange(max_seq_len, dtype=torch.float32)[:, None]
    two_i = torch.arange(0, hidden_size, 2, dtype=torch.float32)[None, :]
    angles = pos / 10000 ** (two_i / hidden_size)
    pe = torch.zeros(max_seq_len, hidden_size)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


# Mistake: odd hidden size handled with d // 2 sin columns, leaving the last column at zero.
def pe_odd_last_zero(max_seq_len, hidden_size):
    pos = torch.arange(max_seq_len, dtype=torch.float32)[:, None]
    two_i = torch.arange(0, 2 * (hidden_size // 2), 2, dtype=torch.float32)[None, :]
    angles = pos / 10000 ** (two_i / hidden_size)
    pe = torch.zeros(max_seq_len, hidden_size)
    pe[:, 0 : 2 * (hidden_size // 2) : 2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


# Mistake: builds the table in numpy and returns float64 (breaks adding it to float32 embeddings).
def pe_float64(max_seq_len, hidden_size):
    return ref.create_positional_encodings(max_seq_len, hidden_size).double()


# ============================================================================================
# scaled_dot_attention


# Alternative: einsum for both products, softmax from torch.
class SDAEinsum(ScaledDotAttention):
    def forward(self, queries, keys, values):
        if queries.dim() == 2:
            queries = queries[:, None, :]
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        scores = torch.einsum("bkh,bth->bkt", q, k) * self.scaling_factor
        weights = torch.softmax(scores, dim=-1)
        return torch.einsum("bkt,bth->bkh", weights, v), weights


# Alternative: anchor style, view(B, -1, H), rsqrt tensor scale, F.linear with the weights, softmax(dim=2).
class SDAFunctional(ScaledDotAttention):
    def __init__(self, hidden_size):
        super().__init__(hidden_size)
        self.softmax = nn.Softmax(dim=2)
        self.scaling_factor = torch.rsqrt(torch.tensor(hidden_size, dtype=torch.float))

    def forward(self, queries, keys, values):
        batch_size = queries.size(0)
        q = F.linear(queries.view(batch_size, -1, self.hidden_size), self.Q.weight, self.Q.bias)
        k = keys @ self.K.weight.T + self.K.bias
        v = values @ self.V.weight.T + self.V.bias
        weights = self.softmax(self.scaling_factor * (q @ k.transpose(-2, -1)))
        return weights @ v, weights


# Alternative: F.scaled_dot_product_attention for the context, weights computed alongside.
class SDASdpa(ScaledDotAttention):
    def forward(self, queries, keys, values):
        q = self.Q(queries.unsqueeze(1) if queries.ndim == 2 else queries)
        k, v = self.K(keys), self.V(values)
        context = F.scaled_dot_product_attention(q, k, v, scale=self.scaling_factor)
        weights = self.softmax(q @ k.transpose(1, 2) * self.scaling_factor)
        return context, weights


class _SDA(ScaledDotAttention):
    """Reference __init__ with a forward parameterized by the mistake under test."""

    scale = None
    softmax_dim = -1

    def forward(self, queries, keys, values):
        if queries.dim() == 2:
            queries = queries.unsqueeze(1)
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        scale = self.scaling_factor if self.scale is None else self.scale(self.hidden_size)
        weights = torch.softmax(scale * torch.bmm(q, k.transpose(1, 2)), dim=self.softmax_dim)
        return torch.bmm(weights, v), weights


# Mistake: forgets to scale the scores.
class SDANoScale(_SDA):
    scale = staticmethod(lambda h: 1.0)


# Mistake: scales by 1/h instead of 1/sqrt(h).
class SDAScaleOverH(_SDA):
    scale = staticmethod(lambda h: 1.0 / h)


# Mistake: multiplies the scores by sqrt(h) instead of dividing.
class SDAScaleSqrtH(_SDA):
    scale = staticmethod(lambda h: math.sqrt(h))


# Mistake: sets scaling_factor = 1 / hidden_size in __init__.
class SDAScalingAttribute(ScaledDotAttention):
    def __init__(self, hidden_size):
        super().__init__(hidden_size)
        self.scaling_factor = 1.0 / hidden_size


# Mistake: softmax over the queries axis (dim=1) as the anchor's docstring suggested.
class SDASoftmaxQueries(_SDA):
    softmax_dim = 1


# Mistake: softmax over the batch axis (dim=0).
class SDASoftmaxBatch(_SDA):
    softmax_dim = 0


# Mistake: multiplies by .weight without transposing (x @ W instead of the Linear layer).
class SDATransposedWeights(ScaledDotAttention):
    def forward(self, queries, keys, values):
        if queries.dim() == 2:
            queries = queries.unsqueeze(1)
        q = queries @ self.Q.weight + self.Q.bias
        k = keys @ self.K.weight + self.K.bias
        v = values @ self.V.weight + self.V.bias
        weights = self.softmax(self.scaling_factor * q @ k.transpose(1, 2))
        return weights @ v, weights


# Mistake: no support for 2-D queries (B, H): bmm fails on a 2-D tensor.
class SDANo2D(ScaledDotAttention):
    def forward(self, queries, keys, values):
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        weights = self.softmax(self.scaling_factor * torch.bmm(q, k.transpose(1, 2)))
        return torch.bmm(weights, v), weights


# Mistake: handles 2-D queries but squeezes the k = 1 axis away from the outputs.
class SDASqueezes2D(ScaledDotAttention):
    def forward(self, queries, keys, values):
        context, weights = ref.ScaledDotAttention.forward(self, queries, keys, values)
        if queries.dim() == 2:
            return context.squeeze(1), weights.squeeze(1)
        return context, weights


# Mistake: returns attention weights as (B, T, k), the shape in the anchor's docstring.
class SDAWeightsTransposed(ScaledDotAttention):
    def forward(self, queries, keys, values):
        context, weights = ref.ScaledDotAttention.forward(self, queries, keys, values)
        return context, weights.transpose(1, 2)


# Mistake: projects the keys with V instead of projecting the values.
class SDAValuesFromKeys(ScaledDotAttention):
    def forward(self, queries, keys, values):
        return ref.ScaledDotAttention.forward(self, queries, keys, keys)


# Mistake: uses the K projection for the queries too.
class SDAQueriesThroughK(ScaledDotAttention):
    def forward(self, queries, keys, values):
        if queries.dim() == 2:
            queries = queries.unsqueeze(1)
        q, k, v = self.K(queries), self.K(keys), self.V(values)
        weights = self.softmax(self.scaling_factor * torch.bmm(q, k.transpose(1, 2)))
        return torch.bmm(weights, v), weights


# Mistake: returns (attention_weights, context) in the wrong order.
class SDASwappedOutputs(ScaledDotAttention):
    def forward(self, queries, keys, values):
        context, weights = ref.ScaledDotAttention.forward(self, queries, keys, values)
        return weights, context


# ============================================================================================
# causal_scaled_dot_attention


# Alternative: anchor style, a tril mask of ones and torch.where.
class CausalWhereTril(CausalScaledDotAttention):
    def forward(self, queries, keys, values):
        queries = _as_3d(queries)
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        scores = self.scaling_factor * torch.bmm(q, k.transpose(1, 2))
        mask = torch.tril(torch.ones(scores.shape[-2:], device=scores.device)).bool()
        weights = self.softmax(torch.where(mask, scores, self.neg_inf))
        return torch.bmm(weights, v), weights


# Alternative: additive mask, neg_inf times a float (k, T) upper-triangular matrix.
class CausalAdditive(CausalScaledDotAttention):
    def forward(self, queries, keys, values):
        queries = _as_3d(queries)
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        n_q, T = q.size(1), keys.size(1)
        scores = self.scaling_factor * q @ k.transpose(1, 2)
        scores = scores + self.neg_inf * torch.triu(torch.ones(n_q, T, device=keys.device), diagonal=1)
        weights = self.softmax(scores)
        return weights @ v, weights


# Alternative: einsum and masked_fill with float('-inf').
class CausalEinsumInf(CausalScaledDotAttention):
    def __init__(self, hidden_size):
        super().__init__(hidden_size)
        self.neg_inf = float("-inf")

    def forward(self, queries, keys, values):
        queries = _as_3d(queries)
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        scores = torch.einsum("bkh,bth->bkt", q, k) * self.scaling_factor
        future = torch.ones_like(scores[0], dtype=torch.bool).triu(1)
        weights = torch.softmax(scores.masked_fill(future, self.neg_inf), dim=-1)
        return torch.einsum("bkt,bth->bkh", weights, v), weights


# Alternative: F.scaled_dot_product_attention(is_causal=True) for the context, masked weights beside it.
class CausalSdpa(CausalScaledDotAttention):
    def forward(self, queries, keys, values):
        queries = _as_3d(queries)
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        context = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scores = q @ k.transpose(1, 2) * self.scaling_factor
        keep = torch.tril(torch.ones(q.size(1), k.size(1), dtype=torch.bool, device=q.device))
        weights = self.softmax(scores.masked_fill(~keep, self.neg_inf))
        return context, weights


# Alternative: a large causal mask built once in __init__ as a buffer and sliced to the actual sizes.
class CausalBufferMask(CausalScaledDotAttention):
    def __init__(self, hidden_size):
        super().__init__(hidden_size)
        self.register_buffer("future", torch.ones(512, 512, dtype=torch.bool).triu(1), persistent=False)

    def forward(self, queries, keys, values):
        queries = _as_3d(queries)
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        scores = self.scaling_factor * torch.bmm(q, k.transpose(1, 2))
        scores = scores.masked_fill(self.future[: q.size(1), : k.size(1)], self.neg_inf)
        weights = self.softmax(scores)
        return torch.bmm(weights, v), weights


class _Causal(CausalScaledDotAttention):
    """Reference __init__; the forward masks `hidden(scores, keys)` with neg_inf."""

    fill = None
    softmax_dim = -1
    scale = None

    def hidden(self, scores, keys):
        return torch.ones(scores.shape[-2:], dtype=torch.bool, device=scores.device).triu(1)

    def forward(self, queries, keys, values):
        queries = _as_3d(queries)
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        scale = self.scaling_factor if self.scale is None else self.scale(self.hidden_size)
        scores = scale * torch.bmm(q, k.transpose(1, 2))
        scores = scores.masked_fill(self.hidden(scores, keys), self.neg_inf if self.fill is None else self.fill)
        weights = torch.softmax(scores, dim=self.softmax_dim)
        return torch.bmm(weights, v), weights


# Mistake: additive (T, T) mask sized from the keys: right only when there are as many queries as keys.
class CausalAdditiveSquare(CausalScaledDotAttention):
    def forward(self, queries, keys, values):
        queries = _as_3d(queries)
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        T = keys.size(1)
        scores = self.scaling_factor * q @ k.transpose(1, 2)
        scores = scores + self.neg_inf * torch.triu(torch.ones(T, T, device=keys.device), diagonal=1)
        weights = self.softmax(scores)
        return weights @ v, weights


# Mistake: a (T, T) boolean mask from the keys' length, sliced to the last k rows (aligned to the end).
class CausalMaskAlignedToEnd(_Causal):
    def hidden(self, scores, keys):
        T = keys.size(1)
        return torch.ones(T, T, dtype=torch.bool, device=scores.device).triu(1)[T - scores.size(1) :]


# Mistake: masks by value: every entry where tril(scores) is 0, which also hides allowed scores equal to 0.
class CausalMaskTrilZero(_Causal):
    def hidden(self, scores, keys):
        return torch.tril(scores) == 0


# Mistake: masks by value: the nonzero scores above the diagonal (a future score equal to 0 stays visible).
class CausalMaskTriuNonzero(_Causal):
    def hidden(self, scores, keys):
        return scores.triu(1) != 0


# Mistake: no support for 2-D queries (B, H).
class CausalNo2D(CausalScaledDotAttention):
    def forward(self, queries, keys, values):
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        scores = self.scaling_factor * torch.bmm(q, k.transpose(1, 2))
        future = torch.ones(scores.shape[-2:], dtype=torch.bool, device=scores.device).triu(1)
        weights = self.softmax(scores.masked_fill(future, self.neg_inf))
        return torch.bmm(weights, v), weights


# Mistake: forgets the mask entirely (plain scaled dot attention).
class CausalNoMask(_Causal):
    def hidden(self, scores, keys):
        return torch.zeros(scores.shape[-2:], dtype=torch.bool)


# Mistake: mask off by one, hiding the diagonal too (triu with diagonal=0).
class CausalMasksDiagonal(_Causal):
    def hidden(self, scores, keys):
        return torch.ones(scores.shape[-2:], dtype=torch.bool).triu(0)


# Mistake: hides the diagonal too and fills with -inf, so row 0 becomes NaN.
class CausalMasksDiagonalInf(CausalMasksDiagonal):
    fill = float("-inf")


# Mistake: mask off by one the other way, letting query i see key i + 1 (triu diagonal=2).
class CausalOneAhead(_Causal):
    def hidden(self, scores, keys):
        return torch.ones(scores.shape[-2:], dtype=torch.bool).triu(2)


# Mistake: inverted mask (masks the lower triangle, i.e. the past).
class CausalInverted(_Causal):
    def hidden(self, scores, keys):
        return torch.ones(scores.shape[-2:], dtype=torch.bool).tril(0)


# Mistake: masks by value, hiding scores that equal 0 instead of future positions.
class CausalMaskZeroScores(_Causal):
    def hidden(self, scores, keys):
        return scores == 0


# Mistake: masks by value, hiding keys that are all zeros (padding-style) instead of future positions.
class CausalMaskZeroKeys(_Causal):
    def hidden(self, scores, keys):
        return (keys == 0).all(-1)[:, None, :]


# Mistake: mask sized from the batch dimension instead of the sequence length.
class CausalMaskFromBatch(_Causal):
    def hidden(self, scores, keys):
        B = keys.size(0)
        return torch.ones(B, B, dtype=torch.bool).triu(1)


# Mistake: a fixed 5 x 5 mask built in __init__ and never sliced to the actual length.
class CausalFixedSizeMask(_Causal):
    def __init__(self, hidden_size):
        super().__init__(hidden_size)
        self.mask = torch.ones(5, 5, dtype=torch.bool).triu(1)

    def hidden(self, scores, keys):
        return self.mask


# Mistake: mask cached on the first call, so a later call with another length reuses the wrong size.
class CausalCachedMask(_Causal):
    def hidden(self, scores, keys):
        if getattr(self, "cached", None) is None:
            self.cached = torch.ones(scores.shape[-2:], dtype=torch.bool).triu(1)
        return self.cached


# Mistake: the causal version forgets the scaling.
class CausalNoScale(_Causal):
    scale = staticmethod(lambda h: 1.0)


# Mistake: softmax over the queries axis in the causal version.
class CausalSoftmaxQueries(_Causal):
    softmax_dim = 1


# Mistake (device): the mask is created on the CPU (no device=), so masked_fill fails on CUDA scores.
class CausalMaskOnCpu(_Causal):
    def hidden(self, scores, keys):
        return torch.triu(torch.ones(scores.size(1), keys.size(1)), diagonal=1).bool()


# ============================================================================================
# generate_tensors_for_training_decoder_nmt


# Alternative: anchor style, LongTensor SOS column moved with .cuda() when the flag says so.
def gen_anchor(src_EOP, tgt_EOS, start_token, cuda):
    SOS = torch.LongTensor([[start_token]] * src_EOP.size(0))
    if cuda:
        SOS = SOS.cuda()
    return torch.cat([SOS, src_EOP, tgt_EOS[:, :-1]], dim=1), torch.cat([src_EOP, tgt_EOS], dim=1)


# Alternative: allocate the full (B, Ls + Lt) tensors on the input's device and fill slices.
def gen_slices(src_EOP, tgt_EOS, start_token, cuda):
    B, Ls = src_EOP.shape
    Lt = tgt_EOS.shape[1]
    target = torch.empty(B, Ls + Lt, dtype=src_EOP.dtype, device=src_EOP.device)
    target[:, :Ls] = src_EOP
    target[:, Ls:] = tgt_EOS
    decoder_input = torch.empty_like(target)
    decoder_input[:, 0] = start_token
    decoder_input[:, 1:] = target[:, :-1]
    return decoder_input, target


# Alternative: new_full for the SOS column and hstack.
def gen_hstack(src_EOP, tgt_EOS, start_token, cuda):
    SOS = src_EOP.new_full((src_EOP.shape[0], 1), start_token)
    full = torch.hstack([src_EOP, tgt_EOS])
    return torch.hstack([SOS, full[:, :-1]]), full


def _sos(src, start):
    return torch.full((src.shape[0], 1), start, dtype=src.dtype, device=src.device)


# Mistake: forgets to drop the target's last token, so the input is one longer than the target.
def gen_no_drop_last(src_EOP, tgt_EOS, start_token, cuda):
    return torch.cat([_sos(src_EOP, start_token), src_EOP, tgt_EOS], 1), torch.cat([src_EOP, tgt_EOS], 1)


# Mistake: off-by-one shift, dropping the target's first token instead of its last.
def gen_drops_first(src_EOP, tgt_EOS, start_token, cuda):
    return torch.cat([_sos(src_EOP, start_token), src_EOP, tgt_EOS[:, 1:]], 1), torch.cat([src_EOP, tgt_EOS], 1)


# Mistake: SOS appended at the end instead of prepended.
def gen_sos_at_end(src_EOP, tgt_EOS, start_token, cuda):
    return torch.cat([src_EOP, tgt_EOS[:, :-1], _sos(src_EOP, start_token)], 1), torch.cat([src_EOP, tgt_EOS], 1)


# Mistake: EOP lost, slicing it off the source in the decoder input.
def gen_eop_lost(src_EOP, tgt_EOS, start_token, cuda):
    return torch.cat([_sos(src_EOP, start_token), src_EOP[:, :-1], tgt_EOS], 1), torch.cat([src_EOP, tgt_EOS], 1)


# Mistake: target missing its EOS.
def gen_target_no_eos(src_EOP, tgt_EOS, start_token, cuda):
    first = torch.cat([_sos(src_EOP, start_token), src_EOP, tgt_EOS[:, :-1]], 1)
    return first, torch.cat([src_EOP, tgt_EOS[:, :-1]], 1)


# Mistake: the target also starts with SOS (no shift between input and target).
def gen_no_shift(src_EOP, tgt_EOS, start_token, cuda):
    first = torch.cat([_sos(src_EOP, start_token), src_EOP, tgt_EOS[:, :-1]], 1)
    return first, first.clone()


# Mistake: builds SOS with torch.Tensor (float), so cat promotes the token indices to float.
def gen_float_sos(src_EOP, tgt_EOS, start_token, cuda):
    SOS = torch.Tensor([[start_token]] * src_EOP.size(0))
    return torch.cat([SOS, src_EOP, tgt_EOS[:, :-1]], 1), torch.cat([src_EOP, tgt_EOS], 1)


# Mistake: hard-codes the notebook's SOS index 27 instead of using start_token.
def gen_hardcoded_sos(src_EOP, tgt_EOS, start_token, cuda):
    return gen_hstack(src_EOP, tgt_EOS, 27, cuda)


# Mistake: returns (target, input) in the wrong order.
def gen_swapped(src_EOP, tgt_EOS, start_token, cuda):
    first, second = gen_hstack(src_EOP, tgt_EOS, start_token, cuda)
    return second, first


# Mistake: calls .cuda() unconditionally, which fails on a CPU-only machine.
def gen_always_cuda(src_EOP, tgt_EOS, start_token, cuda):
    SOS = torch.LongTensor([[start_token]] * src_EOP.size(0)).cuda()
    return torch.cat([SOS, src_EOP, tgt_EOS[:, :-1]], 1), torch.cat([src_EOP, tgt_EOS], 1)


# Mistake (device): SOS created on the CPU and never moved, ignoring the cuda flag.
def gen_sos_on_cpu(src_EOP, tgt_EOS, start_token, cuda):
    SOS = torch.LongTensor([[start_token]] * src_EOP.size(0))
    return torch.cat([SOS, src_EOP, tgt_EOS[:, :-1]], 1), torch.cat([src_EOP, tgt_EOS], 1)


# ============================================================================================
# decoder_only_transformer


class _Decoder(nn.Module):
    """The reference __init__ (what the notebook provides); mutants override forward or __init__."""

    def __init__(self, vocab_size, hidden_size, num_layers):
        super().__init__()
        self.vocab_size, self.hidden_size, self.num_layers = vocab_size, hidden_size, num_layers
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.self_attentions = nn.ModuleList([CausalScaledDotAttention(hidden_size) for _ in range(num_layers)])
        self.attention_mlps = nn.ModuleList(
            [nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.ReLU()) for _ in range(num_layers)]
        )
        self.out = nn.Linear(hidden_size, vocab_size)
        self.register_buffer("positional_encodings", create_positional_encodings(1000, hidden_size))

    forward = ref.DecoderOnlyTransformer.forward


# Alternative: index loop, MLP on a (B*T, H) view, PE as a plain attribute moved in forward, weights list.
class DecoderLoop(_Decoder):
    def __init__(self, vocab_size, hidden_size, num_layers):
        super().__init__(vocab_size, hidden_size, num_layers)
        del self.positional_encodings
        self.positional_encodings = create_positional_encodings(500, hidden_size)

    def forward(self, inputs):
        batch_size, seq_len = inputs.size()
        contexts = self.embedding(inputs) + self.positional_encodings[:seq_len].unsqueeze(0).to(inputs.device)
        weights = []
        for i in range(self.num_layers):
            new_contexts, w = self.self_attentions[i](contexts, contexts, contexts)
            weights.append(w)
            residual = contexts + new_contexts
            mlp_out = self.attention_mlps[i](residual.view(-1, self.hidden_size))
            contexts = residual + mlp_out.view(batch_size, seq_len, self.hidden_size)
        return self.out(contexts), weights[-1]


# Alternative: in-place additions and a non-persistent buffer of 256 positions.
class DecoderInplace(_Decoder):
    def __init__(self, vocab_size, hidden_size, num_layers):
        super().__init__(vocab_size, hidden_size, num_layers)
        del self.positional_encodings
        self.register_buffer("positional_encodings", create_positional_encodings(256, hidden_size), persistent=False)

    def forward(self, inputs):
        h = self.embedding(inputs)
        h += self.positional_encodings[None, : inputs.shape[1], :]
        for layer in range(self.num_layers):
            attended, weights = self.self_attentions[layer](h, h, h)
            h = h + attended
            h = h + self.attention_mlps[layer](h)
        return self.out(h), weights


# Mistake: uses non-causal ScaledDotAttention layers in the decoder.
class DecoderNonCausal(_Decoder):
    def __init__(self, vocab_size, hidden_size, num_layers):
        super().__init__(vocab_size, hidden_size, num_layers)
        self.self_attentions = nn.ModuleList([ScaledDotAttention(hidden_size) for _ in range(num_layers)])


# Mistake: no residual around the self-attention.
class DecoderNoAttnResidual(_Decoder):
    def forward(self, inputs):
        x = self.embedding(inputs) + self.positional_encodings[: inputs.shape[1]]
        for attention, mlp in zip(self.self_attentions, self.attention_mlps):
            x, w = attention(x, x, x)
            x = x + mlp(x)
        return self.out(x), w


# Mistake: no residual around the MLP.
class DecoderNoMlpResidual(_Decoder):
    def forward(self, inputs):
        x = self.embedding(inputs) + self.positional_encodings[: inputs.shape[1]]
        for attention, mlp in zip(self.self_attentions, self.attention_mlps):
            context, w = attention(x, x, x)
            x = mlp(x + context)
        return self.out(x), w


# Mistake: forgets to add the positional encodings.
class DecoderNoPE(_Decoder):
    def forward(self, inputs):
        x = self.embedding(inputs)
        for attention, mlp in zip(self.self_attentions, self.attention_mlps):
            context, w = attention(x, x, x)
            x = x + context
            x = x + mlp(x)
        return self.out(x), w


# Mistake: wrong output layer, returning softmax probabilities instead of logits.
class DecoderSoftmaxOut(_Decoder):
    def forward(self, inputs):
        logits, w = ref.DecoderOnlyTransformer.forward(self, inputs)
        return torch.softmax(logits, dim=-1), w


# Mistake: keeps the first layer's attention weights instead of the last layer's.
class DecoderFirstWeights(_Decoder):
    def forward(self, inputs):
        x = self.embedding(inputs) + self.positional_encodings[: inputs.shape[1]]
        first = None
        for attention, mlp in zip(self.self_attentions, self.attention_mlps):
            context, w = attention(x, x, x)
            first = w if first is None else first
            x = x + context
            x = x + mlp(x)
        return self.out(x), first


# Mistake: attention weights not returned (only the logits).
class DecoderLogitsOnly(_Decoder):
    def forward(self, inputs):
        return ref.DecoderOnlyTransformer.forward(self, inputs)[0]


# Mistake: slices the positional encodings by the batch size instead of the sequence length.
class DecoderPEByBatch(_Decoder):
    def forward(self, inputs):
        x = self.embedding(inputs) + self.positional_encodings[: inputs.shape[0]]
        for attention, mlp in zip(self.self_attentions, self.attention_mlps):
            context, w = attention(x, x, x)
            x = x + context
            x = x + mlp(x)
        return self.out(x), w


# Mistake: reuses the first layer's attention in every layer.
class DecoderSharedAttention(_Decoder):
    def forward(self, inputs):
        x = self.embedding(inputs) + self.positional_encodings[: inputs.shape[1]]
        for mlp in self.attention_mlps:
            context, w = self.self_attentions[0](x, x, x)
            x = x + context
            x = x + mlp(x)
        return self.out(x), w


# Mistake: the MLP reads the attention output instead of the residual stream.
class DecoderMlpOnContext(_Decoder):
    def forward(self, inputs):
        x = self.embedding(inputs) + self.positional_encodings[: inputs.shape[1]]
        for attention, mlp in zip(self.self_attentions, self.attention_mlps):
            context, w = attention(x, x, x)
            x = x + context
            x = x + mlp(context)
        return self.out(x), w


# Mistake: keeps the layers in a Python list, so they are not registered (never trained, never moved).
class DecoderPlainList(_Decoder):
    def __init__(self, vocab_size, hidden_size, num_layers):
        nn.Module.__init__(self)
        self.vocab_size, self.hidden_size, self.num_layers = vocab_size, hidden_size, num_layers
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.self_attentions = [CausalScaledDotAttention(hidden_size) for _ in range(num_layers)]
        self.attention_mlps = nn.ModuleList(
            [nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.ReLU()) for _ in range(num_layers)]
        )
        self.out = nn.Linear(hidden_size, vocab_size)
        self.register_buffer("positional_encodings", create_positional_encodings(1000, hidden_size))


# Mistake: runs the forward pass under torch.no_grad(), so nothing can be trained.
class DecoderNoGrad(_Decoder):
    def forward(self, inputs):
        with torch.no_grad():
            return ref.DecoderOnlyTransformer.forward(self, inputs)


# Mistake (device): positional encodings kept as a plain CPU attribute that model.to() does not move.
class DecoderPEOnCpu(_Decoder):
    def __init__(self, vocab_size, hidden_size, num_layers):
        super().__init__(vocab_size, hidden_size, num_layers)
        del self.positional_encodings
        self.positional_encodings = create_positional_encodings(1000, hidden_size)


# ============================================================================================
# find_optimal_params


# Alternative: closed-form least squares on the design matrix [log10(x)^2, log10(x), 1].
def fop_lstsq(x, y):
    lx = np.log10(np.asarray(x, dtype=float))
    A = np.stack([lx**2, lx, np.ones_like(lx)], axis=1)
    p, *_ = np.linalg.lstsq(A, np.asarray(y, dtype=float), rcond=None)
    return p, 10 ** (-p[1] / (2 * p[0]))


# Alternative: np.polyfit, vertex as the root of the derivative (np.polyder / np.roots).
def fop_roots(x, y):
    p = np.polyfit(np.log10(x), y, deg=2)
    vertex = np.roots(np.polyder(p))[0]
    return p, float(np.power(10.0, vertex))


# Alternative: np.polynomial.Polynomial.fit, converted back to highest-power-first coefficients.
def fop_polynomial(x, y):
    poly = np.polynomial.Polynomial.fit(np.log10(x), y, 2).convert()
    c, b, a = poly.coef
    return np.array([a, b, c]), 10 ** (-b / (2 * a))


# Mistake: natural log for the fit, but the vertex exponentiated with base 10.
def fop_natural_log(x, y):
    p = np.polyfit(np.log(x), y, 2)
    return p, 10 ** (-p[1] / (2 * p[0]))


# Mistake: fits against the natural log throughout (right vertex, but p is not the log10 fit).
def fop_natural_log_consistent(x, y):
    p = np.polyfit(np.log(x), y, 2)
    return p, np.exp(-p[1] / (2 * p[0]))


# Mistake: returns the vertex in log space instead of as a parameter count.
def fop_vertex_in_log_space(x, y):
    p = np.polyfit(np.log10(x), y, 2)
    return p, -p[1] / (2 * p[0])


# Mistake: x and y swapped in np.polyfit.
def fop_swapped(x, y):
    p = np.polyfit(y, np.log10(x), 2)
    return p, 10 ** (-p[1] / (2 * p[0]))


# Mistake: linear instead of quadratic fit.
def fop_linear(x, y):
    p = np.polyfit(np.log10(x), y, 1)
    return p, 10 ** (-p[1] / p[0])


# Mistake: vertex formula without the 2 (-b / a).
def fop_missing_two(x, y):
    p = np.polyfit(np.log10(x), y, 2)
    return p, 10 ** (-p[1] / p[0])


# Mistake: returns the data point with the lowest loss instead of the fitted vertex.
def fop_argmin(x, y):
    p = np.polyfit(np.log10(x), y, 2)
    return p, x[np.argmin(y)]


# Mistake: coefficients lowest power first (np.polynomial.polynomial.polyfit), as p.
def fop_reversed_coefficients(x, y):
    c, b, a = np.polynomial.polynomial.polyfit(np.log10(x), y, 2)
    return np.array([c, b, a]), 10 ** (-b / (2 * a))


# ============================================================================================
# fit_linear_log


# Alternative: closed-form slope and intercept from means.
def fll_closed_form(x, y):
    lx, ly = np.log10(x), np.log10(y)
    m = ((lx - lx.mean()) * (ly - ly.mean())).sum() / ((lx - lx.mean()) ** 2).sum()
    return m, ly.mean() - m * lx.mean()


# Alternative: np.linalg.lstsq on [log10 x, 1].
def fll_lstsq(x, y):
    A = np.vstack([np.log10(x), np.ones(len(x))]).T
    (m, c), *_ = np.linalg.lstsq(A, np.log10(y), rcond=None)
    return m, c


# Alternative: torch least squares, returning 0-d tensors.
def fll_torch(x, y):
    lx = torch.log10(torch.as_tensor(x, dtype=torch.float64))
    ly = torch.log10(torch.as_tensor(y, dtype=torch.float64))
    A = torch.stack([lx, torch.ones_like(lx)], 1)
    sol = torch.linalg.lstsq(A, ly[:, None]).solution
    return sol[0, 0], sol[1, 0]


# Alternative: returns np.polyfit's coefficient array [m, c] directly.
def fll_polyfit_array(x, y):
    return np.polyfit(np.log10(x), np.log10(y), 1)


# Mistake: natural log instead of log10.
def fll_natural_log(x, y):
    m, c = np.polyfit(np.log(x), np.log(y), 1)
    return m, c


# Mistake: x and y swapped.
def fll_swapped(x, y):
    m, c = np.polyfit(np.log10(y), np.log10(x), 1)
    return m, c


# Mistake: returns (c, m) in the wrong order (np.polynomial order).
def fll_returns_c_m(x, y):
    c, m = np.polynomial.polynomial.polyfit(np.log10(x), np.log10(y), 1)
    return c, m


# Mistake: fits y itself, not log10(y).
def fll_fits_y(x, y):
    m, c = np.polyfit(np.log10(x), y, 1)
    return m, c


# Mistake: takes log10 of y but not of x.
def fll_no_log_x(x, y):
    m, c = np.polyfit(x, np.log10(y), 1)
    return m, c


# Mistake: returns 10 ** c (the prefactor) instead of the intercept c.
def fll_prefactor(x, y):
    m, c = np.polyfit(np.log10(x), np.log10(y), 1)
    return m, 10**c


# Mistake: returns np.polyfit's whole coefficient array of a quadratic fit.
def fll_quadratic(x, y):
    return np.polyfit(np.log10(x), np.log10(y), 2)


# ============================================================================================
# decoder_params: V·H + L·4(H² + H) + H·V + V


def dp_expanded(vocab_size, hidden_size, num_layers):
    return 2 * vocab_size * hidden_size + vocab_size + 4 * num_layers * hidden_size * (hidden_size + 1)


def dp_loop(vocab_size, hidden_size, num_layers):
    total = vocab_size * hidden_size  # embedding
    for _ in range(num_layers):
        for _linear in ("Q", "K", "V", "mlp"):
            total += hidden_size * hidden_size + hidden_size
    return total + hidden_size * vocab_size + vocab_size


# Alternative: the factored form, embedding and output layer together.
def dp_factored(vocab_size, hidden_size, num_layers):
    return vocab_size * (2 * hidden_size + 1) + num_layers * 4 * hidden_size * (hidden_size + 1)


# Alternative: a dict of the parts' counts, summed.
def dp_dict_of_counts(vocab_size, hidden_size, num_layers):
    V, H, L = vocab_size, hidden_size, num_layers
    parts = {"embedding": V * H, "out.weight": H * V, "out.bias": V}
    for layer in range(L):
        for name in ("Q", "K", "V", "mlp"):
            parts[f"{layer}.{name}.weight"] = H * H
            parts[f"{layer}.{name}.bias"] = H
    return sum(parts.values())


# Alternative: the parameters' shapes written out and multiplied with math.prod.
def dp_shapes(vocab_size, hidden_size, num_layers):
    shapes = [(vocab_size, hidden_size), (vocab_size, hidden_size), (vocab_size,)]
    shapes += [(hidden_size, hidden_size), (hidden_size,)] * (4 * num_layers)
    return sum(math.prod(shape) for shape in shapes)


def dp_numpy_int(vocab_size, hidden_size, num_layers):
    sizes = np.array(
        [vocab_size * hidden_size, 4 * num_layers * (hidden_size**2 + hidden_size), (hidden_size + 1) * vocab_size]
    )
    return sizes.sum()


def dp_float(vocab_size, hidden_size, num_layers):
    return float(vocab_size * hidden_size * 2 + vocab_size + num_layers * 4.0 * (hidden_size**2 + hidden_size))


# Mistake: no biases.
def dp_no_biases(vocab_size, hidden_size, num_layers):
    return 2 * vocab_size * hidden_size + 4 * num_layers * hidden_size**2


# Mistake: the output layer's bias forgotten.
def dp_no_out_bias(vocab_size, hidden_size, num_layers):
    return 2 * vocab_size * hidden_size + 4 * num_layers * (hidden_size**2 + hidden_size)


# Mistake: the positional encodings (a buffer of 1000 x H) counted as parameters.
def dp_counts_pe(vocab_size, hidden_size, num_layers):
    return dp_expanded(vocab_size, hidden_size, num_layers) + 1000 * hidden_size


# Mistake: the embedding and the output layer taken as one tied matrix.
def dp_tied(vocab_size, hidden_size, num_layers):
    return vocab_size * hidden_size + vocab_size + 4 * num_layers * (hidden_size**2 + hidden_size)


# Mistake: the MLP forgotten (attention only).
def dp_no_mlp(vocab_size, hidden_size, num_layers):
    return 2 * vocab_size * hidden_size + vocab_size + 3 * num_layers * (hidden_size**2 + hidden_size)


# Mistake: an output projection in the attention as well (5 Linear per layer).
def dp_five_linears(vocab_size, hidden_size, num_layers):
    return 2 * vocab_size * hidden_size + vocab_size + 5 * num_layers * (hidden_size**2 + hidden_size)


# Mistake: one layer counted, whatever num_layers is.
def dp_one_layer(vocab_size, hidden_size, num_layers):
    return 2 * vocab_size * hidden_size + vocab_size + 4 * (hidden_size**2 + hidden_size)


# Mistake: a Linear(H, H) taken to hold H weights.
def dp_linear_as_h(vocab_size, hidden_size, num_layers):
    return 2 * vocab_size * hidden_size + vocab_size + 8 * num_layers * hidden_size


# Mistake: a GPT-style MLP of width 4H, which this model does not have.
def dp_gpt_mlp(vocab_size, hidden_size, num_layers):
    h = hidden_size
    return 2 * vocab_size * h + vocab_size + num_layers * (3 * (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h))


# Mistake: not by hand: builds the model and counts its parameters.
def dp_builds_the_model(vocab_size, hidden_size, num_layers):
    model = DecoderOnlyTransformer(vocab_size, hidden_size, num_layers)  # noqa: F821 - the notebook's class
    return sum(p.numel() for p in model.parameters())


def _count_model(vocab_size, hidden_size, num_layers):
    """A helper of the notebook's that builds the model, its class looked up by a computed name."""
    model = globals()["Decoder" + "OnlyTransformer"](vocab_size, hidden_size, num_layers)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


# Mistake: builds the model through another function, the class found by a computed name.
def dp_builds_through_a_helper(vocab_size, hidden_size, num_layers):
    return _count_model(vocab_size, hidden_size, num_layers)


_TRAINED = ref.DecoderOnlyTransformer(5, 4, 1)  # a model the notebook built earlier (its training runs)


# Mistake: builds a new model of the class of one the notebook already has, type(model)(V, H, L).
def dp_builds_by_type(vocab_size, hidden_size, num_layers):
    model = type(_TRAINED)(vocab_size, hidden_size, num_layers)
    return sum(p.numel() for p in model.parameters())


# Mistake: builds the model on the meta device (no memory used), still a model.
def dp_builds_on_meta(vocab_size, hidden_size, num_layers):
    with torch.device("meta"):
        model = DecoderOnlyTransformer(vocab_size, hidden_size, num_layers)  # noqa: F821 - the notebook's class
    return sum(p.numel() for p in model.parameters())


# Mistake: builds the layers (nn.Linear, as a correct count would use them) and counts their parameters.
def dp_counts_built_linears(vocab_size, hidden_size, num_layers):
    linear = sum(p.numel() for p in nn.Linear(hidden_size, hidden_size).parameters())
    out = sum(p.numel() for p in nn.Linear(hidden_size, vocab_size).parameters())
    return vocab_size * hidden_size + num_layers * 4 * linear + out


# Mistake: builds an nn.Embedding to count the embedding, by hand for the rest.
def dp_counts_built_embedding(vocab_size, hidden_size, num_layers):
    embedding = nn.Embedding(vocab_size, hidden_size).weight.numel()
    return embedding + 4 * num_layers * (hidden_size**2 + hidden_size) + (hidden_size + 1) * vocab_size


# Mistake: tries to build the model and, when that fails, counts by hand: the attempt is caught all the same.
def dp_builds_then_falls_back(vocab_size, hidden_size, num_layers):
    try:
        model = DecoderOnlyTransformer(vocab_size, hidden_size, num_layers)  # noqa: F821 - the notebook's class
        return sum(p.numel() for p in model.parameters())
    except Exception:
        return dp_expanded(vocab_size, hidden_size, num_layers)


# Mistake: a model class made on the fly with type(), holding the layers, then counted.
def dp_builds_a_class_on_the_fly(vocab_size, hidden_size, num_layers):
    def init(self):
        nn.Module.__init__(self)
        self.layers = nn.ModuleList(nn.Linear(hidden_size, hidden_size) for _ in range(4 * num_layers))

    counter = type("Counter", (nn.Module,), {"__init__": init})()
    layers = sum(p.numel() for p in counter.parameters())
    return 2 * vocab_size * hidden_size + vocab_size + layers


# Mistake: the count returned as text.
def dp_text(vocab_size, hidden_size, num_layers):
    return f"{dp_expanded(vocab_size, hidden_size, num_layers):,}"


# ============================================================================================
# perplexity: exp(mean over the non-pad positions of -log softmax(logits)[target])


def _flat(logits, targets):
    """(B*T, V) logits and (B*T,) targets."""
    return logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)


# Alternative: F.cross_entropy with ignore_index, its mean taken over the non-ignored positions.
def ppl_cross_entropy_ignore_index(logits, targets, pad_index):
    return math.exp(F.cross_entropy(*_flat(logits.float(), targets), ignore_index=pad_index).item())


# Alternative: the summed cross-entropy over the real tokens divided by how many there are, a 0-d tensor returned.
def ppl_sum_over_count(logits, targets, pad_index):
    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")  # (B, T)
    mask = (targets != pad_index).float()
    return torch.exp((nll * mask).sum() / mask.sum())


# Alternative: float64 throughout, logsumexp minus the target's score.
def ppl_float64_logsumexp(logits, targets, pad_index):
    x = logits.double()
    nll = torch.logsumexp(x, dim=-1) - x.gather(-1, targets[..., None])[..., 0]
    return float(torch.exp(nll[targets != pad_index].mean()))


# Alternative: one-hot targets against log-probabilities.
def ppl_one_hot(logits, targets, pad_index):
    log_probs = F.log_softmax(logits, dim=-1)
    nll = -(F.one_hot(targets, logits.shape[-1]) * log_probs).sum(-1)
    keep = targets != pad_index
    return math.exp(nll[keep].sum().item() / keep.sum().item())


# Alternative: base 2 on both sides, 2 ** (mean bits per token).
def ppl_bits(logits, targets, pad_index):
    bits = -F.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1) / math.log(2)
    return 2 ** bits[targets != pad_index].mean().item()


# Alternative: a Python loop over the tokens, math.log of each target's probability (float64).
def ppl_loop(logits, targets, pad_index):
    probs = torch.softmax(logits.double(), dim=-1)
    total, count = 0.0, 0
    for b in range(targets.shape[0]):
        for t in range(targets.shape[1]):
            if targets[b, t].item() != pad_index:
                total -= math.log(probs[b, t, targets[b, t]].item())
                count += 1
    return math.exp(total / count)


# Alternative: the pad targets replaced (on a copy) by -100, PyTorch's default ignore_index.
def ppl_masked_fill_ignore(logits, targets, pad_index):
    ignored = targets.masked_fill(targets == pad_index, -100)
    return torch.exp(F.cross_entropy(*_flat(logits, ignored)))


# Mistake: the pad positions are counted like the real tokens.
def ppl_pad_counted(logits, targets, pad_index):
    return math.exp(F.cross_entropy(*_flat(logits, targets)).item())


# Mistake: the real tokens' cross-entropy summed, but divided by every position (pad included).
def ppl_divided_by_all(logits, targets, pad_index):
    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    return math.exp((nll * (targets != pad_index)).sum().item() / targets.numel())


# Mistake: one perplexity per sentence, then their mean.
def ppl_mean_of_sentences(logits, targets, pad_index):
    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    keep = targets != pad_index
    return sum(math.exp(nll[b][keep[b]].mean().item()) for b in range(len(targets))) / len(targets)


# Mistake: each sentence's mean cross-entropy, averaged over the batch, then exp (short sentences weigh more).
def ppl_mean_of_sentence_means(logits, targets, pad_index):
    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    keep = (targets != pad_index).float()
    return math.exp(((nll * keep).sum(1) / keep.sum(1)).mean().item())


# Mistake: log base 2 (bits), then exp.
def ppl_log2_then_exp(logits, targets, pad_index):
    probs = F.softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return math.exp(-torch.log2(probs)[targets != pad_index].mean().item())


# Mistake: the exp forgotten: returns the mean cross-entropy.
def ppl_no_exp(logits, targets, pad_index):
    return F.cross_entropy(*_flat(logits, targets), ignore_index=pad_index).item()


# Mistake: softmax applied to the logits before cross_entropy (which applies its own).
def ppl_softmax_twice(logits, targets, pad_index):
    probs = F.softmax(logits, dim=-1)
    return math.exp(F.cross_entropy(*_flat(probs, targets), ignore_index=pad_index).item())


# Mistake: shifts the targets by one, as when scoring raw inputs, though logits[b, t] already scores targets[b, t].
def ppl_shifted(logits, targets, pad_index):
    lg, tg = logits[:, :-1], targets[:, 1:]
    return math.exp(F.cross_entropy(*_flat(lg, tg), ignore_index=pad_index).item())


# Mistake: argmax accuracy on the real tokens instead of the targets' probabilities.
def ppl_accuracy(logits, targets, pad_index):
    keep = targets != pad_index
    return (logits.argmax(-1) == targets)[keep].float().mean().item()


# Mistake: the mean of the per-token exp(cross-entropy) instead of exp of the mean.
def ppl_mean_of_exps(logits, targets, pad_index):
    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    return nll[targets != pad_index].exp().mean().item()


# Mistake: 1 / the mean probability of the targets.
def ppl_inverse_mean_probability(logits, targets, pad_index):
    probs = F.softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return 1 / probs[targets != pad_index].mean().item()


# Mistake: exp of the summed cross-entropy (the sequence's inverse probability), not of the mean.
def ppl_exp_of_sum(logits, targets, pad_index):
    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    return math.exp(nll[targets != pad_index].sum().item())


# Mistake: pad_index ignored, 0 taken as the pad.
def ppl_pad_zero(logits, targets, pad_index):
    return math.exp(F.cross_entropy(*_flat(logits, targets), ignore_index=0).item())


# Mistake: log of softmax: a tiny probability rounds to 0 in float32 and its log to -inf.
def ppl_log_of_softmax(logits, targets, pad_index):
    probs = F.softmax(logits.float(), dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return torch.exp(-torch.log(probs)[targets != pad_index].mean()).item()


# Mistake: the pad targets overwritten in place (to gather safely), changing the caller's tensor.
def ppl_changes_targets(logits, targets, pad_index):
    keep = targets != pad_index
    targets[~keep] = 0
    nll = -F.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return math.exp(nll[keep].mean().item())


# Mistake (device): the mask is a new CPU tensor filled in a loop, mixed with the logits' device.
def ppl_mask_on_cpu(logits, targets, pad_index):
    mask = torch.zeros(targets.shape)
    mask[targets.cpu() != pad_index] = 1.0
    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    return torch.exp((nll * mask).sum() / mask.sum()).item()


# ============================================================================================
# catalogue

CATALOGUE = Catalogue(
    notebook="nmt",
    cells={
        "positional_encodings": Cell(
            name="create_positional_encodings",
            correct=[
                Correct("pe_loops", pe_loops),
                Correct("pe_div_term", pe_div_term),
                Correct("pe_where", pe_where),
            ],
            mutants=[
                Mutant("pe_sin_cos_swapped", pe_sin_cos_swapped, "position 0 should be [0, 1, 0, 1]"),
                Mutant("pe_base_1000", pe_base_1000, "base is 1000"),
                Mutant("pe_exponent_j", pe_exponent_j, "j/d"),
                Mutant("pe_exponent_2j", pe_exponent_2j, "2j/d"),
                Mutant("pe_positions_from_one", pe_positions_from_one, "position 0 should be"),
                Mutant("pe_transposed", pe_transposed, "transposed"),
                Mutant("pe_integer_division", pe_integer_division, "integer division"),
                Mutant("pe_concatenated", pe_concatenated, "position 0 should be [0, 1, 0, 1]"),
                Mutant("pe_even_only", pe_even_only, "raised RuntimeError"),
                Mutant("pe_odd_last_zero", pe_odd_last_zero, "odd hidden_size"),
                Mutant("pe_float64", pe_float64, "float32"),
            ],
        ),
        "scaled_dot_attention": Cell(
            name="ScaledDotAttention",
            correct=[
                Correct("SDAEinsum", SDAEinsum),
                Correct("SDAFunctional", SDAFunctional),
                Correct("SDASdpa", SDASdpa),
            ],
            mutants=[
                Mutant("SDANoScale", SDANoScale, "not multiplied by scaling_factor"),
                Mutant("SDAScaleOverH", SDAScaleOverH, "scaled by 1/hidden_size"),
                Mutant("SDAScaleSqrtH", SDAScaleSqrtH, "multiplied by sqrt(hidden_size)"),
                Mutant("SDAScalingAttribute", SDAScalingAttribute, "scaling_factor should be 1/sqrt(hidden_size)"),
                Mutant("SDASoftmaxQueries", SDASoftmaxQueries, "sum to 1 over the keys"),
                Mutant("SDASoftmaxBatch", SDASoftmaxBatch, "sum to 1 over the keys"),
                Mutant("SDATransposedWeights", SDATransposedWeights, "without transposing"),
                Mutant("SDANo2D", SDANo2D, "forward with 2-D queries (B, H) = (3, 6) should run without errors"),
                Mutant("SDASqueezes2D", SDASqueezes2D, "should have shape (3, 1, 6)"),
                Mutant("SDAWeightsTransposed", SDAWeightsTransposed, "should have shape (1, 1, 2), got (1, 2, 1)"),
                Mutant("SDAValuesFromKeys", SDAValuesFromKeys, "context for the hand-made example"),
                Mutant(
                    "SDAQueriesThroughK",
                    SDAQueriesThroughK,
                    "attention_weights for queries (3, 4, 6) has the expected shape",
                ),
                Mutant("SDASwappedOutputs", SDASwappedOutputs, "should have shape (1, 1, 2)"),
            ],
        ),
        "causal_scaled_dot_attention": Cell(
            name="CausalScaledDotAttention",
            correct=[
                Correct("CausalWhereTril", CausalWhereTril),
                Correct("CausalAdditive", CausalAdditive),
                Correct("CausalEinsumInf", CausalEinsumInf),
                Correct("CausalSdpa", CausalSdpa),
                Correct("CausalBufferMask", CausalBufferMask),
            ],
            mutants=[
                Mutant("CausalNoMask", CausalNoMask, "no causal mask"),
                Mutant("CausalMasksDiagonal", CausalMasksDiagonal, "hides the diagonal"),
                Mutant("CausalMasksDiagonalInf", CausalMasksDiagonalInf, "finite"),
                Mutant("CausalOneAhead", CausalOneAhead, "see key i+1"),
                Mutant("CausalInverted", CausalInverted, "inverted"),
                Mutant("CausalMaskZeroScores", CausalMaskZeroScores, "no causal mask"),
                Mutant("CausalMaskZeroKeys", CausalMaskZeroKeys, "no causal mask"),
                Mutant("CausalMaskFromBatch", CausalMaskFromBatch, "no causal mask"),
                Mutant("CausalFixedSizeMask", CausalFixedSizeMask, "raised RuntimeError"),
                Mutant("CausalCachedMask", CausalCachedMask, "on (2, 7, 6) should run without errors"),
                Mutant("CausalNoScale", CausalNoScale, "not multiplied by scaling_factor"),
                Mutant("CausalSoftmaxQueries", CausalSoftmaxQueries, "sum to 1 over the keys"),
                Mutant("CausalAdditiveSquare", CausalAdditiveSquare, "3 queries and 5 keys"),
                Mutant("CausalMaskAlignedToEnd", CausalMaskAlignedToEnd, "should give weight 0 to every later key"),
                Mutant("CausalMaskTrilZero", CausalMaskTrilZero, "never from the scores' values"),
                Mutant("CausalMaskTriuNonzero", CausalMaskTriuNonzero, "never from the scores' values"),
                Mutant("CausalNo2D", CausalNo2D, "2-D queries (B, H) = (2, 6)"),
                Mutant(
                    "CausalMaskOnCpu",
                    CausalMaskOnCpu,
                    "on a GPU should run without errors, but it mixes devices",
                    device=True,
                ),
            ],
        ),
        "generate_tensors_for_training_decoder_nmt": Cell(
            correct=[
                Correct("gen_anchor", gen_anchor),
                Correct("gen_slices", gen_slices),
                Correct("gen_hstack", gen_hstack),
            ],
            mutants=[
                Mutant(
                    "gen_no_drop_last",
                    gen_no_drop_last,
                    "SOS_src_EOP_tgt (a hand-made batch) should have shape (2, 8), got (2, 9)",
                ),
                Mutant("gen_drops_first", gen_drops_first, "SOS_src_EOP_tgt[0] should be [27, 3, 4, 5, 29, 9, 10, 11]"),
                Mutant("gen_sos_at_end", gen_sos_at_end, "SOS_src_EOP_tgt[0] should be"),
                Mutant("gen_eop_lost", gen_eop_lost, "SOS_src_EOP_tgt[0] should be"),
                Mutant(
                    "gen_target_no_eos",
                    gen_target_no_eos,
                    "src_EOP_tgt_EOS (a hand-made batch) should have shape (2, 8)",
                ),
                Mutant("gen_no_shift", gen_no_shift, "src_EOP_tgt_EOS[0] should be"),
                Mutant("gen_float_sos", gen_float_sos, "dtype torch.int64"),
                Mutant("gen_hardcoded_sos", gen_hardcoded_sos, "SOS=0"),
                Mutant("gen_swapped", gen_swapped, "SOS_src_EOP_tgt[0] should be"),
                Mutant("gen_always_cuda", gen_always_cuda, "raised"),
                Mutant(
                    "gen_sos_on_cpu",
                    gen_sos_on_cpu,
                    "on a GPU (cuda=True) on a GPU should run without errors, but it mixes devices",
                    device=True,
                ),
            ],
        ),
        "decoder_only_transformer": Cell(
            name="DecoderOnlyTransformer",
            correct=[
                Correct("_Decoder", _Decoder),
                Correct("DecoderLoop", DecoderLoop),
                Correct("DecoderInplace", DecoderInplace),
            ],
            mutants=[
                Mutant("DecoderNonCausal", DecoderNonCausal, "should be a CausalScaledDotAttention"),
                Mutant("DecoderNoAttnResidual", DecoderNoAttnResidual, "residual around self-attention is missing"),
                Mutant("DecoderNoMlpResidual", DecoderNoMlpResidual, "residual around the MLP is missing"),
                Mutant("DecoderNoPE", DecoderNoPE, "positional encodings were not added"),
                Mutant("DecoderSoftmaxOut", DecoderSoftmaxOut, "softmax was applied to the logits"),
                Mutant("DecoderFirstWeights", DecoderFirstWeights, "first layer's attention weights"),
                Mutant("DecoderLogitsOnly", DecoderLogitsOnly, "should return a pair"),
                Mutant("DecoderPEByBatch", DecoderPEByBatch, "raised RuntimeError"),
                Mutant(
                    "DecoderSharedAttention", DecoderSharedAttention, "logits for inputs (3, 6) has the expected shape"
                ),
                Mutant("DecoderMlpOnContext", DecoderMlpOnContext, "logits for inputs (3, 6) has the expected shape"),
                Mutant("DecoderPlainList", DecoderPlainList, "nn.ModuleList"),
                Mutant("DecoderNoGrad", DecoderNoGrad, "carry gradients"),
                Mutant(
                    "DecoderPEOnCpu",
                    DecoderPEOnCpu,
                    "on a GPU (model.to('cuda')) on a GPU should run without errors, but it mixes devices",
                    device=True,
                ),
            ],
        ),
        "decoder_params": Cell(
            correct=[
                Correct("dp_expanded", dp_expanded),
                Correct("dp_loop", dp_loop),
                Correct("dp_factored", dp_factored),
                Correct("dp_dict_of_counts", dp_dict_of_counts),
                Correct("dp_shapes", dp_shapes),
                Correct("dp_numpy_int", dp_numpy_int),
                Correct("dp_float", dp_float),
            ],
            mutants=[
                Mutant("dp_no_biases", dp_no_biases, "the biases are missing"),
                Mutant("dp_no_out_bias", dp_no_out_bias, "output layer's V biases"),
                Mutant("dp_counts_pe", dp_counts_pe, "fixed buffer, not parameters"),
                Mutant("dp_tied", dp_tied, "not tied"),
                Mutant("dp_no_mlp", dp_no_mlp, "the MLP's Linear is missing"),
                Mutant("dp_five_linears", dp_five_linears, "no output projection"),
                Mutant("dp_one_layer", dp_one_layer, "num_layers is ignored"),
                Mutant("dp_linear_as_h", dp_linear_as_h, "H*H weights, not H"),
                Mutant("dp_gpt_mlp", dp_gpt_mlp, "should be 10,333"),
                Mutant("dp_builds_the_model", dp_builds_the_model, "(it built DecoderOnlyTransformer;"),
                Mutant("dp_builds_through_a_helper", dp_builds_through_a_helper, "(it built DecoderOnlyTransformer;"),
                Mutant("dp_builds_by_type", dp_builds_by_type, "(it built DecoderOnlyTransformer;"),
                Mutant("dp_builds_on_meta", dp_builds_on_meta, "(it built DecoderOnlyTransformer;"),
                Mutant("dp_counts_built_linears", dp_counts_built_linears, "without building a model or a layer"),
                Mutant("dp_counts_built_embedding", dp_counts_built_embedding, "(it built Embedding;"),
                Mutant("dp_builds_then_falls_back", dp_builds_then_falls_back, "(it built DecoderOnlyTransformer;"),
                Mutant("dp_builds_a_class_on_the_fly", dp_builds_a_class_on_the_fly, "(it built Counter;"),
                Mutant("dp_text", dp_text, "whole number of parameters, got str"),
            ],
        ),
        "perplexity": Cell(
            correct=[
                Correct("ppl_cross_entropy_ignore_index", ppl_cross_entropy_ignore_index),
                Correct("ppl_sum_over_count", ppl_sum_over_count),
                Correct("ppl_float64_logsumexp", ppl_float64_logsumexp),
                Correct("ppl_one_hot", ppl_one_hot),
                Correct("ppl_bits", ppl_bits),
                Correct("ppl_loop", ppl_loop),
                Correct("ppl_masked_fill_ignore", ppl_masked_fill_ignore),
            ],
            mutants=[
                Mutant("ppl_pad_counted", ppl_pad_counted, "the pad positions were counted"),
                Mutant("ppl_divided_by_all", ppl_divided_by_all, "divided by every position"),
                Mutant("ppl_mean_of_sentences", ppl_mean_of_sentences, "averages per-sentence perplexities"),
                Mutant("ppl_mean_of_sentence_means", ppl_mean_of_sentence_means, "averaged before exp"),
                Mutant("ppl_log2_then_exp", ppl_log2_then_exp, "the log is base 2 but the power is e"),
                Mutant("ppl_no_exp", ppl_no_exp, "exp is missing"),
                Mutant("ppl_softmax_twice", ppl_softmax_twice, "softmax was applied twice"),
                Mutant("ppl_shifted", ppl_shifted, "(no shift)"),
                Mutant("ppl_accuracy", ppl_accuracy, "argmax accuracy"),
                Mutant("ppl_mean_of_exps", ppl_mean_of_exps, "mean of exp(cross-entropy) per token"),
                Mutant("ppl_inverse_mean_probability", ppl_inverse_mean_probability, "1 / the mean probability"),
                Mutant("ppl_exp_of_sum", ppl_exp_of_sum, "summed cross-entropy"),
                Mutant("ppl_pad_zero", ppl_pad_zero, "pad_index was not used"),
                Mutant("ppl_log_of_softmax", ppl_log_of_softmax, "should be a finite number, got inf"),
                Mutant("ppl_changes_targets", ppl_changes_targets, "should not change its inputs, but the targets"),
                Mutant("ppl_mask_on_cpu", ppl_mask_on_cpu, "on a GPU should run without errors", device=True),
            ],
        ),
        "find_optimal_params": Cell(
            correct=[
                Correct("fop_lstsq", fop_lstsq),
                Correct("fop_roots", fop_roots),
                Correct("fop_polynomial", fop_polynomial),
            ],
            mutants=[
                Mutant("fop_natural_log", fop_natural_log, "natural log"),
                Mutant("fop_natural_log_consistent", fop_natural_log_consistent, "natural log"),
                Mutant("fop_vertex_in_log_space", fop_vertex_in_log_space, "log space"),
                Mutant("fop_swapped", fop_swapped, "swapped"),
                Mutant("fop_linear", fop_linear, "degree 2"),
                Mutant("fop_missing_two", fop_missing_two, "factor 2"),
                Mutant("fop_argmin", fop_argmin, "lowest loss"),
                Mutant("fop_reversed_coefficients", fop_reversed_coefficients, "highest power first"),
            ],
        ),
        "fit_linear_log": Cell(
            correct=[
                Correct("fll_closed_form", fll_closed_form),
                Correct("fll_lstsq", fll_lstsq),
                Correct("fll_torch", fll_torch),
                Correct("fll_polyfit_array", fll_polyfit_array),
            ],
            mutants=[
                Mutant("fll_natural_log", fll_natural_log, "natural log"),
                Mutant("fll_swapped", fll_swapped, "x and y were swapped"),
                Mutant("fll_returns_c_m", fll_returns_c_m, "(c, m) was returned"),
                Mutant("fll_fits_y", fll_fits_y, "y was fitted instead of log10(y)"),
                Mutant("fll_no_log_x", fll_no_log_x, "log10(x) was not taken"),
                Mutant("fll_prefactor", fll_prefactor, "10 ** c"),
                Mutant("fll_quadratic", fll_quadratic, "should return a pair (m, c), got an array of shape (3,)"),
            ],
        ),
    },
)
