"""Reference implementations of the graded objects of nmt.ipynb (never shipped to students).

The notebook's solution regions hold exactly these definitions; the hidden checks in
autograder/checks/nmt.py compare a student's objects against them.
"""

import math

import numpy as np
import torch
import torch.nn as nn


def create_positional_encodings(max_seq_len, hidden_size):
    """
    Sinusoidal positional encodings: PE[pos, 2i] = sin(pos / 10000^(2i/d)) and
    PE[pos, 2i+1] = cos(pos / 10000^(2i/d)), with d = hidden_size (odd d allowed).

    Inputs:
    - max_seq_len: number of positions (rows)
    - hidden_size: encoding size d (columns)

    Returns:
    - pos_encodings: float32 tensor of shape (max_seq_len, hidden_size)
    """
    positions = torch.arange(max_seq_len, dtype=torch.float32)[:, None]  # (L, 1)
    two_i = torch.arange(0, hidden_size, 2, dtype=torch.float32)[None, :]  # (1, ceil(d/2))
    angles = positions / 10000 ** (two_i / hidden_size)  # (L, ceil(d/2))
    pos_encodings = torch.zeros(max_seq_len, hidden_size)  # (L, d)
    pos_encodings[:, 0::2] = torch.sin(angles)
    pos_encodings[:, 1::2] = torch.cos(angles[:, : hidden_size // 2])
    return pos_encodings


class ScaledDotAttention(nn.Module):
    """Scaled dot-product attention with learned query, key and value projections."""

    def __init__(self, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.Q = nn.Linear(hidden_size, hidden_size)
        self.K = nn.Linear(hidden_size, hidden_size)
        self.V = nn.Linear(hidden_size, hidden_size)
        self.softmax = nn.Softmax(dim=-1)
        self.scaling_factor = 1.0 / math.sqrt(hidden_size)

    def forward(self, queries, keys, values):
        """
        Attend from each query to every key and average the values.

        Inputs:
        - queries: (B, H) for a single query, or (B, k, H)
        - keys: (B, T, H)
        - values: (B, T, H)

        Returns:
        - context: (B, k, H), with k = 1 for 2-D queries
        - attention_weights: (B, k, T); each row sums to 1 over the last axis (the keys)
        """
        if queries.dim() == 2:
            queries = queries.unsqueeze(1)  # (B, 1, H)
        q = self.Q(queries)  # (B, k, H)
        k = self.K(keys)  # (B, T, H)
        v = self.V(values)  # (B, T, H)
        scores = self.scaling_factor * torch.bmm(q, k.transpose(1, 2))  # (B, k, T)
        attention_weights = self.softmax(scores)  # (B, k, T)
        context = torch.bmm(attention_weights, v)  # (B, k, H)
        return context, attention_weights


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
        Attend from query i to keys 0..i only (every key j > i gets weight 0).

        Inputs:
        - queries: (B, H) for a single query, or (B, k, H)
        - keys: (B, T, H)
        - values: (B, T, H)

        Returns:
        - context: (B, k, H), with k = 1 for 2-D queries
        - attention_weights: (B, k, T); each row sums to 1 over the last axis and is 0 for j > i
        """
        if queries.dim() == 2:
            queries = queries.unsqueeze(1)  # (B, 1, H)
        q = self.Q(queries)  # (B, k, H)
        k = self.K(keys)  # (B, T, H)
        v = self.V(values)  # (B, T, H)
        scores = self.scaling_factor * torch.bmm(q, k.transpose(1, 2))  # (B, k, T)
        n_q, n_k = scores.shape[1], scores.shape[2]
        future = torch.ones(n_q, n_k, dtype=torch.bool, device=scores.device).triu(diagonal=1)  # (k, T)
        scores = scores.masked_fill(future, self.neg_inf)  # (B, k, T)
        attention_weights = self.softmax(scores)  # (B, k, T)
        context = torch.bmm(attention_weights, v)  # (B, k, H)
        return context, attention_weights


def generate_tensors_for_training_decoder_nmt(src_EOP, tgt_EOS, start_token, cuda):
    """
    Build the decoder-only input and target sequences from a batch of source/target pairs.

    Inputs:
    - src_EOP: (B, Ls) long tensor, source words ending with the EOP token
    - tgt_EOS: (B, Lt) long tensor, target words ending with the EOS token
    - start_token: index of the SOS token
    - cuda: True exactly when the inputs are on a CUDA device

    Returns:
    - SOS_src_EOP_tgt: (B, Ls + Lt), SOS + source + EOP + target (without its final EOS)
    - src_EOP_tgt_EOS: (B, Ls + Lt), source + EOP + target + EOS (the input shifted left by one)
    New tensors are created on the inputs' device.
    """
    B = src_EOP.shape[0]
    SOS = torch.full((B, 1), start_token, dtype=src_EOP.dtype, device=src_EOP.device)  # (B, 1)
    SOS_src_EOP_tgt = torch.cat([SOS, src_EOP, tgt_EOS[:, :-1]], dim=1)  # (B, Ls + Lt)
    src_EOP_tgt_EOS = torch.cat([src_EOP, tgt_EOS], dim=1)  # (B, Ls + Lt)
    return SOS_src_EOP_tgt, src_EOP_tgt_EOS


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
        # A buffer follows the model across devices with model.to(device).
        self.register_buffer("positional_encodings", create_positional_encodings(1000, hidden_size))

    def forward(self, inputs):
        """
        Embed the tokens, add positional encodings, then per layer: x = x + attention(x), x = x + mlp(x).

        Inputs:
        - inputs: (B, T) long tensor of token indices

        Returns:
        - logits: (B, T, vocab_size), unnormalized scores for the next token at each position
        - attention_weights: (B, T, T), the self-attention weights of the last layer
        """
        T = inputs.shape[1]
        x = self.embedding(inputs) + self.positional_encodings[:T]  # (B, T, H)
        for attention, mlp in zip(self.self_attentions, self.attention_mlps):
            context, attention_weights = attention(x, x, x)  # (B, T, H), (B, T, T)
            x = x + context  # (B, T, H)
            x = x + mlp(x)  # (B, T, H)
        logits = self.out(x)  # (B, T, vocab_size)
        return logits, attention_weights


def perplexity(logits, targets, pad_index):
    """
    Perplexity of next-token predictions: exp of the mean cross-entropy per token, pad positions left out.

    Inputs:
    - logits: (B, T, V) float tensor of unnormalised scores; logits[b, t] scores the token targets[b, t]
      (the two are already aligned: there is no shift to make)
    - targets: (B, T) long tensor of token indices in [0, V)
    - pad_index: int, the index that marks padding in targets; those positions count for nothing
      (at least one position is not padding)

    Returns:
    - ppl: the perplexity, a Python float
    """
    log_probs = torch.log_softmax(logits.float(), dim=-1)  # (B, T, V)
    nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, T): -log p(target) per position
    keep = targets != pad_index  # (B, T)
    return math.exp(nll[keep].mean().item())


def decoder_params(vocab_size, hidden_size, num_layers):
    """
    Trainable parameters of DecoderOnlyTransformer(vocab_size, hidden_size, num_layers), counted by hand.

    Inputs:
    - vocab_size: V, the number of tokens
    - hidden_size: H
    - num_layers: L

    Returns:
    - the parameter count N, an int
    """
    V, H, L = vocab_size, hidden_size, num_layers
    embedding = V * H  # one H-vector per token; the positional encodings are a fixed buffer, not parameters
    per_layer = 3 * (H * H + H) + (H * H + H)  # Q, K, V projections and the MLP's Linear, each with a bias
    out = H * V + V  # the output layer, with a bias
    return embedding + L * per_layer + out


def find_optimal_params(x, y):
    """
    Fit a parabola to loss against log10(parameter count) and locate its minimum.

    Inputs:
    - x: 1-D numpy array of parameter counts (positive)
    - y: 1-D numpy array of validation losses, same length

    Returns:
    - p: numpy array [a, b, c] of the fit y ≈ a*log10(x)**2 + b*log10(x) + c (as np.polyfit returns)
    - optimal_params: the parameter count at the vertex, 10 ** (-b / (2a)) (a count, not a log)
    """
    p = np.polyfit(np.log10(x), y, 2)
    optimal_params = 10 ** (-p[1] / (2 * p[0]))
    return p, optimal_params


def fit_linear_log(x, y):
    """
    Fit a straight line in log-log space: log10(y) ≈ m * log10(x) + c.

    Inputs:
    - x: 1-D numpy array of positive numbers (e.g. FLOP budgets)
    - y: 1-D numpy array of positive numbers, same length (e.g. optimal parameter counts)

    Returns:
    - m: slope of the fit (a float)
    - c: intercept of the fit (a float)
    """
    m, c = np.polyfit(np.log10(x), np.log10(y), 1)
    return float(m), float(c)
