"""Realistic wrong answers for the graded cells of nmt.ipynb, one per grade id.

WRONG[grade_id] is the complete source of a solution cell that defines the same name as the
reference solution but makes one common mistake. Replacing that one cell of the reference notebook
with it must lose exactly that cell's points; every sample keeps the shapes right so that the rest
of the notebook still runs.
"""

WRONG = {
    # Mistake: sin on odd and cos on even dimensions (swapped).
    "positional_encodings": '''import torch


def create_positional_encodings(max_seq_len, hidden_size):
    """
    Sinusoidal positional encodings.

    Inputs:
    - max_seq_len: number of positions (rows)
    - hidden_size: encoding size d (columns)

    Returns:
    - pos_encodings: float32 tensor of shape (max_seq_len, hidden_size)
    """
    positions = torch.arange(max_seq_len, dtype=torch.float32)[:, None]  # (L, 1)
    two_i = torch.arange(0, hidden_size, 2, dtype=torch.float32)[None, :]  # (1, ceil(d/2))
    angles = positions / 10000 ** (two_i / hidden_size)  # (L, ceil(d/2))
    pos_encodings = torch.zeros(max_seq_len, hidden_size)
    pos_encodings[:, 0::2] = torch.cos(angles)
    pos_encodings[:, 1::2] = torch.sin(angles[:, : hidden_size // 2])
    return pos_encodings
''',
    # Mistake: softmax over the queries axis (dim=1) instead of the keys axis.
    "scaled_dot_attention": '''import math

import torch
import torch.nn as nn


class ScaledDotAttention(nn.Module):
    """Scaled dot-product attention with learned query, key and value projections."""

    def __init__(self, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.Q = nn.Linear(hidden_size, hidden_size)
        self.K = nn.Linear(hidden_size, hidden_size)
        self.V = nn.Linear(hidden_size, hidden_size)
        self.softmax = nn.Softmax(dim=1)
        self.scaling_factor = 1.0 / math.sqrt(hidden_size)

    def forward(self, queries, keys, values):
        """
        Inputs:
        - queries: (B, H) or (B, k, H)
        - keys: (B, T, H)
        - values: (B, T, H)

        Returns:
        - context: (B, k, H)
        - attention_weights: (B, k, T)
        """
        if queries.dim() == 2:
            queries = queries.unsqueeze(1)
        q = self.Q(queries)
        k = self.K(keys)
        v = self.V(values)
        scores = self.scaling_factor * torch.bmm(q, k.transpose(1, 2))
        attention_weights = self.softmax(scores)
        context = torch.bmm(attention_weights, v)
        return context, attention_weights
''',
    # Mistake: the causal version forgets to scale the scores. (A mask mistake would also make the
    # notebook's DecoderOnlyTransformer look ahead and fail that cell's visible test too.)
    "causal_scaled_dot_attention": '''import math

import torch
import torch.nn as nn


class CausalScaledDotAttention(nn.Module):
    """Scaled dot-product attention in which query i only attends to keys j <= i."""

    def __init__(self, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.neg_inf = -1e7
        self.Q = nn.Linear(hidden_size, hidden_size)
        self.K = nn.Linear(hidden_size, hidden_size)
        self.V = nn.Linear(hidden_size, hidden_size)
        self.softmax = nn.Softmax(dim=-1)
        self.scaling_factor = 1.0 / math.sqrt(hidden_size)

    def forward(self, queries, keys, values):
        """
        Inputs:
        - queries: (B, H) or (B, k, H)
        - keys: (B, T, H)
        - values: (B, T, H)

        Returns:
        - context: (B, k, H)
        - attention_weights: (B, k, T)
        """
        if queries.dim() == 2:
            queries = queries.unsqueeze(1)
        q = self.Q(queries)
        k = self.K(keys)
        v = self.V(values)
        scores = torch.bmm(q, k.transpose(1, 2))
        mask = torch.triu(torch.ones(scores.shape[1], scores.shape[2], device=scores.device), diagonal=1).bool()
        scores = scores.masked_fill(mask, self.neg_inf)
        attention_weights = self.softmax(scores)
        context = torch.bmm(attention_weights, v)
        return context, attention_weights
''',
    # Mistake: SOS appended at the end of the decoder input instead of the start.
    "generate_tensors_for_training_decoder_nmt": '''import torch


def generate_tensors_for_training_decoder_nmt(src_EOP, tgt_EOS, start_token, cuda):
    """
    Inputs:
    - src_EOP: (B, Ls) source ending with EOP
    - tgt_EOS: (B, Lt) target ending with EOS
    - start_token: index of SOS
    - cuda: whether the inputs are on CUDA

    Returns:
    - SOS_src_EOP_tgt: (B, Ls + Lt)
    - src_EOP_tgt_EOS: (B, Ls + Lt)
    """
    SOS = torch.full((src_EOP.shape[0], 1), start_token, dtype=src_EOP.dtype, device=src_EOP.device)
    SOS_src_EOP_tgt = torch.cat([src_EOP, tgt_EOS[:, :-1], SOS], dim=1)
    src_EOP_tgt_EOS = torch.cat([src_EOP, tgt_EOS], dim=1)
    return SOS_src_EOP_tgt, src_EOP_tgt_EOS
''',
    # Mistake: no residual connection around the MLP.
    "decoder_only_transformer": '''import torch
import torch.nn as nn


class DecoderOnlyTransformer(nn.Module):
    """A stack of causal self-attention + MLP layers with residuals, predicting the next token."""

    def __init__(self, vocab_size, hidden_size, num_layers):
        super().__init__()
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.self_attentions = nn.ModuleList(
            [CausalScaledDotAttention(hidden_size) for _ in range(num_layers)]
        )
        self.attention_mlps = nn.ModuleList(
            [nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.ReLU()) for _ in range(num_layers)]
        )
        self.out = nn.Linear(hidden_size, vocab_size)
        self.register_buffer("positional_encodings", create_positional_encodings(1000, hidden_size))

    def forward(self, inputs):
        """
        Inputs:
        - inputs: (B, T) token indices

        Returns:
        - logits: (B, T, vocab_size)
        - attention_weights: (B, T, T) of the last layer
        """
        T = inputs.shape[1]
        x = self.embedding(inputs) + self.positional_encodings[:T]
        for attention, mlp in zip(self.self_attentions, self.attention_mlps):
            context, attention_weights = attention(x, x, x)
            x = x + context
            x = mlp(x)
        logits = self.out(x)
        return logits, attention_weights
''',
    # Mistake: natural log for the fit, then 10 ** vertex.
    "find_optimal_params": '''import numpy as np


def find_optimal_params(x, y):
    """
    Inputs:
    - x: parameter counts
    - y: losses

    Returns:
    - p: coefficients of the quadratic fit
    - optimal_params: parameter count at the vertex
    """
    p = np.polyfit(np.log(x), y, 2)
    optimal_params = 10 ** (-p[1] / (2 * p[0]))
    return p, optimal_params
''',
    # Mistake: the pad positions are averaged in like real tokens (no mask, no ignore_index).
    "perplexity": '''import math

import torch.nn.functional as F


def perplexity(logits, targets, pad_index):
    """
    Inputs:
    - logits: (B, T, V) scores
    - targets: (B, T) token indices
    - pad_index: the padding index

    Returns:
    - ppl: a float
    """
    B, T, V = logits.shape
    loss = F.cross_entropy(logits.reshape(B * T, V), targets.reshape(B * T))
    return math.exp(loss.item())
''',
    # Mistake: the biases are left out (every nn.Linear has one).
    "decoder_params": '''def decoder_params(vocab_size, hidden_size, num_layers):
    """
    Inputs:
    - vocab_size, hidden_size, num_layers: ints

    Returns:
    - the parameter count, an int
    """
    return 2 * vocab_size * hidden_size + 4 * num_layers * hidden_size**2
''',
    # Mistake: natural log instead of log10 (the slope survives, the intercept does not).
    "fit_linear_log": '''import numpy as np


def fit_linear_log(x, y):
    """
    Inputs:
    - x: positive numbers
    - y: positive numbers

    Returns:
    - m: slope
    - c: intercept
    """
    m, c = np.polyfit(np.log(x), np.log(y), 1)
    return m, c
''',
}
