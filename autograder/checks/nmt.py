"""Hidden checks for nmt.ipynb: one check per graded cell (see SPEC "Hidden checks").

Each check compares the student's object with autograder/content/reference/nmt.py on inputs drawn from a
seeded generator and on hand-made cases, and explains a mismatch in one line. Where a wrong answer
matches a known mistake (unscaled scores, softmax over the wrong axis, natural log, ...) the
message names it.
"""

import contextlib
import math
import numbers

import numpy as np
import torch
import torch.nn as nn

from autograder.checks import (
    FAKE_CUDA,
    UNDECIDED,
    CheckFailed,
    check,
    cpu64,
    differing,
    digits_to_differ,
    expect_device,
    expect_tensor,
    fmt_shape,
    max_abs_diff,
    pristine,
    require_notebook_defined,
    run_on_gpu,
    seeded_generator,
    substituted,
    tensors_close,
    to_fake_cuda,
)
from autograder.content.reference import nmt as ref
from autograder.text import one_line

# --------------------------------------------------------------------------------------------
# helpers


def _call(what, fn, *args):
    """Call student code; an exception becomes one line that says which call failed."""
    try:
        return fn(*args)
    except CheckFailed:
        raise
    except Exception as e:
        raise CheckFailed(f"{what} should run without errors, but raised {one_line(e, 300, more='...')}") from None


def _pair(out, what, names, allow_array=False):
    """out must be a tuple/list (or, with allow_array, a numpy vector) of exactly two items; returns them."""
    if allow_array and pristine.isinstance(out, np.ndarray):
        if out.shape != (2,):
            raise CheckFailed(f"{what} should return a pair ({names}), got an array of shape {out.shape}")
        out = list(out)
    if not pristine.isinstance(out, (tuple, list)) or pristine.len(out) != 2:
        got = (
            f"{pristine.type(out).__name__} of length {pristine.len(out)}"
            if pristine.isinstance(out, (tuple, list))
            else pristine.type(out).__name__
        )
        raise CheckFailed(f"{what} should return a pair ({names}), got {got}")
    return out[0], out[1]


def _diagnose(got, hypotheses):
    """Name of the first known mistake whose output matches `got`, or ''."""
    for description, value in hypotheses:
        try:
            if tensors_close(got, value):
                return description
        except Exception:
            continue
    return ""


def _expect_close_or_explain(got, want, name, hypotheses, atol=1e-5, rtol=1e-4):
    """Like expect_close, but when got matches a known mistake the message names that mistake."""
    expect_tensor(got, name, tuple(want.shape))
    if not tensors_close(got, want, atol=atol, rtol=rtol):
        hint = _diagnose(got, hypotheses)
        diff = max_abs_diff(got, want)
        msg = f"{name} has the expected shape {tuple(want.shape)} but wrong values (max abs difference {diff:.3g})"
        raise CheckFailed(msg + (f"; it looks like {hint}" if hint else ""))


def _rounded(t, want, digits=3):
    """Short text of a small tensor's values, with at least `digits` significant digits and as many more as it
    takes to read differently from the tensor `want` they should equal (never "should be 0.731, got 0.731")."""
    return differing(cpu64(want).tolist(), cpu64(t).tolist(), digits)[1].replace(" ", "")


def _as_float(v, name):
    """A Python float from a number, a 0-d/1-element numpy array or tensor; CheckFailed otherwise."""
    if pristine.isinstance(v, bool):
        raise CheckFailed(f"{name} should be a number, got bool")
    if pristine.isinstance(v, numbers.Real):
        return pristine.float(v)
    if pristine.isinstance(v, np.ndarray) and v.size == 1 and np.issubdtype(v.dtype, np.number):
        return pristine.float(v.reshape(-1)[0])
    if pristine.isinstance(v, pristine.Tensor) and v.numel() == 1 and v.is_floating_point():
        return pristine.float(pristine.tensor_item(v))
    raise CheckFailed(f"{name} should be a number, got {fmt_shape(v)}")


def _instantiate(cls, name, *args):
    """Build the student's module with a fixed seed; it must be an nn.Module."""
    pristine.manual_seed(0)
    call = f"{name}({', '.join(map(str, args))})"
    module = _call(call, cls, *args)
    if not pristine.isinstance(module, nn.Module):
        raise CheckFailed(f"{call} should build an nn.Module, got {pristine.type(module).__name__}")
    return module


# --------------------------------------------------------------------------------------------
# positional encodings


def _pe_variants(L, d):
    """(description, table) for common wrong positional encodings."""
    pos = torch.arange(L, dtype=torch.float64)[:, None]
    j = torch.arange(d, dtype=torch.float64)[None, :]
    even = (torch.arange(d) % 2 == 0)[None, :]

    def table(angles, first=torch.sin, second=torch.cos):
        return torch.where(even, first(angles), second(angles))

    two_i = 2 * torch.div(j, 2, rounding_mode="floor")
    return [
        (
            "sin and cos are swapped (sin belongs on even dimensions, cos on odd)",
            table(pos / 10000 ** (two_i / d), torch.cos, torch.sin),
        ),
        ("the frequency base is 1000 instead of 10000", table(pos / 1000 ** (two_i / d))),
        (
            "the exponent uses the dimension index j/d instead of 2i/d for the pair (2i, 2i+1)",
            table(pos / 10000 ** (j / d)),
        ),
        ("the exponent is 2j/d instead of 2i/d (i = j // 2)", table(pos / 10000 ** (2 * j / d))),
        ("positions start at 1 instead of 0", table((pos + 1) / 10000 ** (two_i / d))),
        ("the exponent was computed with integer division (always 0)", table(pos.expand(L, d))),
    ]


@check("positional_encodings")
def check_positional_encodings(create_positional_encodings) -> None:
    """create_positional_encodings(max_seq_len, hidden_size) -> (max_seq_len, hidden_size) sinusoid table."""
    require_notebook_defined(create_positional_encodings, "create_positional_encodings")
    # Hand-made: position 0 is [sin 0, cos 0, sin 0, cos 0] = [0, 1, 0, 1].
    pe = _call("create_positional_encodings(3, 4)", create_positional_encodings, 3, 4)
    if pristine.isinstance(pe, pristine.Tensor) and tuple(pe.shape) == (4, 3):
        raise CheckFailed("the table should have shape (max_seq_len, hidden_size) = (3, 4), got (4, 3) (transposed)")
    expect_tensor(pe, "create_positional_encodings(3, 4)", (3, 4))
    if pe.dtype != torch.float32:
        raise CheckFailed(f"the table should be float32 (torch.float), got {pe.dtype}")
    row0 = torch.tensor([0.0, 1.0, 0.0, 1.0])
    if not tensors_close(pe[0], row0):
        raise CheckFailed(f"position 0 should be [0, 1, 0, 1] (sin 0, cos 0, ...), got {_rounded(pe[0], row0)}")
    for L, d in [(50, 16), (9, 7), (6, 1)]:
        what = f"create_positional_encodings({L}, {d})"
        pe = _call(what, create_positional_encodings, L, d)
        want = ref.create_positional_encodings(L, d)
        expect_tensor(pe, what, (L, d))
        if pe.dtype != torch.float32:
            raise CheckFailed(f"the table should be float32 (torch.float), got {pe.dtype}")
        odd = " (odd hidden_size: the last dimension is a sin)" if d % 2 else ""
        _expect_close_or_explain(pe, want, what + odd, _pe_variants(L, d), atol=1e-4)


# --------------------------------------------------------------------------------------------
# attention


def _check_linear(module, attr, H, cls_name):
    """module.<attr> must be an nn.Linear(H, H)."""
    lin = getattr(module, attr, None)
    if not pristine.isinstance(lin, nn.Linear):
        raise CheckFailed(f"{cls_name}.{attr} should be nn.Linear({H}, {H}), got {pristine.type(lin).__name__}")
    if (lin.in_features, lin.out_features) != (H, H):
        raise CheckFailed(
            f"{cls_name}.{attr} should be nn.Linear({H}, {H}), got nn.Linear({lin.in_features}, {lin.out_features})"
        )


def _check_attention_attributes(module, H, cls_name):
    """Q, K, V are nn.Linear(H, H), softmax exists and scaling_factor is 1/sqrt(H)."""
    for attr in ("Q", "K", "V"):
        _check_linear(module, attr, H, cls_name)
    if getattr(module, "softmax", None) is None:
        raise CheckFailed(f"{cls_name} should have a softmax attribute (nn.Softmax over the keys axis)")
    sf = _as_float(getattr(module, "scaling_factor", None), f"{cls_name}.scaling_factor")
    want = 1.0 / H**0.5
    if pristine.abs(sf - want) > 1e-5:
        shown, seen = differing(want, sf, digits=4)
        raise CheckFailed(f"{cls_name}.scaling_factor should be 1/sqrt(hidden_size) = {shown}, got {seen}")


def _randomize_projections(module, gen, H):
    """Give Q, K, V seeded non-symmetric weights and biases; returns {name: (W, b)} as used."""
    params = {}
    with torch.no_grad():
        for attr in ("Q", "K", "V"):
            lin = getattr(module, attr)
            W = torch.randn(H, H, generator=gen) / H**0.5 * 1.5
            b = torch.randn(H, generator=gen) * 0.3
            lin.weight.copy_(W)
            if lin.bias is not None:
                lin.bias.copy_(b)
            else:
                b = torch.zeros(H)
            params[attr] = (W, b)
    return params


def _reference_module(ref_cls, H, params):
    """A reference attention module carrying the projections in `params`."""
    module = ref_cls(H)
    with torch.no_grad():
        for attr, (W, b) in params.items():
            getattr(module, attr).weight.copy_(W)
            getattr(module, attr).bias.copy_(b)
    return module


def _attention_hypotheses(params, queries, keys, values, H, causal):
    """(description, (context, weights)) computed for well-known wrong attention implementations."""
    q_in = queries.unsqueeze(1) if queries.dim() == 2 else queries
    q_in, keys, values = (t.detach().cpu().double() for t in (q_in, keys, values))
    W = {a: (w.double(), b.double()) for a, (w, b) in params.items()}

    def proj(a, x, transposed=False):
        w, b = W[a]
        return x @ w + b if transposed else x @ w.T + b

    def attend(scale=H**-0.5, dim=-1, transposed=False, mask="future"):
        q, k, v = proj("Q", q_in, transposed), proj("K", keys, transposed), proj("V", values, transposed)
        scores = scale * q @ k.transpose(1, 2)  # (B, k, T)
        n_q, n_k = scores.shape[1], scores.shape[2]
        if causal and mask is not None:
            diag = {"future": 1, "diagonal too": 0, "one ahead": 2}.get(mask, 1)
            hidden = torch.ones(n_q, n_k, dtype=torch.bool).triu(diagonal=diag)
            if mask == "inverted":
                hidden = ~hidden
            scores = scores.masked_fill(hidden, -1e7)
        w = torch.softmax(scores, dim=dim)
        return w @ v, w

    hyps = [
        ("the scores were not multiplied by scaling_factor", attend(scale=1.0)),
        ("the scores were scaled by 1/hidden_size instead of 1/sqrt(hidden_size)", attend(scale=1.0 / H)),
        ("the scores were multiplied by sqrt(hidden_size) instead of divided", attend(scale=H**0.5)),
        ("softmax was taken over the queries axis (dim 1) instead of the keys axis (last)", attend(dim=1)),
        ("softmax was taken over the batch axis (dim 0) instead of the keys axis (last)", attend(dim=0)),
        ("the inputs were multiplied by .weight without transposing (x @ W instead of Q(x))", attend(transposed=True)),
    ]
    if causal:
        hyps += [
            ("no causal mask was applied", attend(mask=None)),
            ("the mask also hides the diagonal (query i must see key i)", attend(mask="diagonal too")),
            ("the mask lets query i see key i+1", attend(mask="one ahead")),
            ("the mask is inverted (it hides the past instead of the future)", attend(mask="inverted")),
        ]
    return hyps


def _expect_distributions(weights, what):
    """attention_weights must be finite and sum to 1 over the last axis (the keys)."""
    if not pristine.tensor_item(pristine.isfinite(weights).all()):
        raise CheckFailed(f"attention_weights for {what} should be finite, got NaN/inf (is some row masked entirely?)")
    sums = cpu64(weights).sum(-1)
    if not pristine.allclose(sums, torch.ones_like(sums), atol=1e-4, rtol=0):
        low, high = sums.min().item(), sums.max().item()
        d = digits_to_differ([1.0, 1.0], [low, high], digits=3)
        raise CheckFailed(
            f"each row of attention_weights should sum to 1 over the keys (last axis); row sums for "
            f"{what} range from {low:.{d}g} to {high:.{d}g}; softmax must be taken over the last axis"
        )


def _compare_attention(module, ref_module, params, queries, keys, values, H, causal, what, expect_k):
    """Student forward vs reference on one input: shapes, distributions, causality, then values."""
    B, T = keys.shape[0], keys.shape[1]
    out = _call(f"forward with {what}", module, queries, keys, values)
    context, weights = _pair(out, f"forward with {what}", "context, attention_weights")
    expect_tensor(context, f"context for {what}", (B, expect_k, H))
    expect_tensor(weights, f"attention_weights for {what}", (B, expect_k, T))
    _expect_distributions(weights, what)
    if causal:
        w = cpu64(weights)
        future = torch.ones(expect_k, T, dtype=torch.bool).triu(diagonal=1)
        leak = (w * future).abs()
        if leak.max().item() > 1e-6:
            b, i, j = [int(v) for v in (leak == leak.max()).nonzero()[0]]
            raise CheckFailed(
                f"query {i} should give weight 0 to every later key j > {i}, but gives "
                f"{w[b, i, j].item():.3g} to key {j} ({what})"
            )
        if pristine.abs(w[:, 0, 0].min().item() - 1.0) > 1e-4:
            raise CheckFailed(
                f"query 0 can only see key 0, so its weight on key 0 should be 1, got "
                f"{differing(1.0, w[:, 0, 0].min().item(), digits=3)[1]} (the diagonal j = i must stay visible)"
            )
    want_context, want_weights = ref_module(queries.cpu(), keys.cpu(), values.cpu())
    hyps = _attention_hypotheses(params, queries, keys, values, H, causal)
    _expect_close_or_explain(weights, want_weights, f"attention_weights for {what}", [(d, h[1]) for d, h in hyps])
    _expect_close_or_explain(context, want_context, f"context for {what}", [(d, h[0]) for d, h in hyps])


def _attention_on_gpu(module, queries, keys, values, what):
    """The module and its inputs on the stand-in GPU: forward must run there and keep both outputs there."""
    module.to(FAKE_CUDA)
    out = run_on_gpu(f"forward with {what} (module.to('cuda'))", module, *to_fake_cuda(queries, keys, values))
    if out is UNDECIDED:
        return
    context, weights = _pair(out, f"forward with {what} on a GPU", "context, attention_weights")
    for name, got in (("context", context), ("attention_weights", weights)):
        expect_tensor(got, f"{name} for {what} on a GPU")
        expect_device(got, FAKE_CUDA, f"{name} for {what} on a GPU")


def _identity_projections(module, H):
    """Set Q, K, V to identity maps without bias, for hand-made examples."""
    with torch.no_grad():
        for attr in ("Q", "K", "V"):
            lin = getattr(module, attr)
            lin.weight.copy_(torch.eye(H))
            if lin.bias is not None:
                lin.bias.zero_()


@check("scaled_dot_attention")
def check_scaled_dot_attention(ScaledDotAttention) -> None:
    """ScaledDotAttention(hidden_size): forward(queries, keys, values) -> (context, attention_weights)."""
    require_notebook_defined(ScaledDotAttention, "ScaledDotAttention")
    H = 6
    module = _instantiate(ScaledDotAttention, "ScaledDotAttention", H)
    _check_attention_attributes(module, H, "ScaledDotAttention")

    # Hand-made: identity projections, one query [2, 0, 0, 0] and keys e0, e1 (scale 1/2):
    # scores [1, 0] -> weights [e/(1+e), 1/(1+e)] = [0.731, 0.269]; context = weighted values.
    small = _instantiate(ScaledDotAttention, "ScaledDotAttention", 4)
    _identity_projections(small, 4)
    q = torch.tensor([[[2.0, 0, 0, 0]]])  # (1, 1, 4)
    k = torch.tensor([[[1.0, 0, 0, 0], [0, 1.0, 0, 0]]])  # (1, 2, 4)
    v = torch.tensor([[[1.0, 0, 0, 0], [0, 0, 3.0, 0]]])  # (1, 2, 4)
    out = _call("forward on the hand-made example", small, q, k, v)
    context, weights = _pair(out, "forward", "context, attention_weights")
    expect_tensor(weights, "attention_weights for 1 query and 2 keys", (1, 1, 2))
    _expect_distributions(weights, "1 query and 2 keys")
    want_w = torch.tensor([[[0.7310586, 0.2689414]]])
    if not tensors_close(weights, want_w):
        hint = _diagnose(
            weights,
            [
                ("the scores were not multiplied by scaling_factor", torch.tensor([[[0.8807971, 0.1192029]]])),
                (
                    "the scores were scaled by 1/hidden_size instead of 1/sqrt(hidden_size)",
                    torch.tensor([[[0.6224593, 0.3775407]]]),
                ),
                (
                    "the scores were multiplied by sqrt(hidden_size) instead of divided",
                    torch.tensor([[[0.9820138, 0.0179862]]]),
                ),
            ],
        )
        raise CheckFailed(
            f"with identity Q/K/V, query [2,0,0,0] and keys e0, e1 the scaled scores are [1, 0], so "
            f"attention_weights should be {_rounded(want_w.reshape(-1), weights.reshape(-1))}, "
            f"got {_rounded(weights.reshape(-1), want_w.reshape(-1))}" + (f"; it looks like {hint}" if hint else "")
        )
    _expect_close_or_explain(
        context,
        torch.tensor([[[0.7310586, 0.0, 0.8068243, 0.0]]]),
        "context for the hand-made example (weights times the values)",
        [],
    )

    gen = seeded_generator(1)
    params = _randomize_projections(module, gen, H)
    reference = _reference_module(ref.ScaledDotAttention, H, params)
    B, k, T = 3, 4, 5
    queries, keys, values = (torch.randn(B, n, H, generator=gen) for n in (k, T, T))
    _compare_attention(module, reference, params, queries, keys, values, H, False, "queries (3, 4, 6)", k)
    _compare_attention(
        module, reference, params, queries[:, 0], keys, values, H, False, "2-D queries (B, H) = (3, 6)", 1
    )
    _attention_on_gpu(module, queries, keys, values, "queries (3, 4, 6)")


@check("causal_scaled_dot_attention")
def check_causal_scaled_dot_attention(CausalScaledDotAttention) -> None:
    """CausalScaledDotAttention(hidden_size): query i gives zero weight to every key j > i."""
    require_notebook_defined(CausalScaledDotAttention, "CausalScaledDotAttention")
    H = 6
    module = _instantiate(CausalScaledDotAttention, "CausalScaledDotAttention", H)
    _check_attention_attributes(module, H, "CausalScaledDotAttention")
    neg_inf = _as_float(getattr(module, "neg_inf", None), "CausalScaledDotAttention.neg_inf")
    if not neg_inf <= -1e4:
        raise CheckFailed(f"neg_inf should be a large negative number such as -1e7, got {neg_inf:.3g}")

    # Hand-made: three identical tokens, so all visible keys score the same and row i spreads its
    # weight evenly over keys 0..i.
    small = _instantiate(CausalScaledDotAttention, "CausalScaledDotAttention", 4)
    _identity_projections(small, 4)
    x = torch.tensor([[[1.0, 0.5, 0, 0]] * 3])  # (1, 3, 4)
    out = _call("forward on three identical tokens", small, x, x, x)
    _, weights = _pair(out, "forward", "context, attention_weights")
    expect_tensor(weights, "attention_weights for 3 tokens", (1, 3, 3))
    _expect_distributions(weights, "three identical tokens")
    want = torch.tensor([[[1.0, 0, 0], [0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]]])
    if not tensors_close(weights, want):
        third = [1 / 3] * 3
        hint = _diagnose(
            weights,
            [
                ("no causal mask was applied", torch.tensor([[third] * 3])),
                (
                    "the mask also hides the diagonal (query i must see key i)",
                    torch.tensor([[third, [1.0, 0, 0], [0.5, 0.5, 0]]]),
                ),
                ("the mask lets query i see key i+1", torch.tensor([[[0.5, 0.5, 0], third, third]])),
                (
                    "the mask is inverted (it hides the past instead of the future)",
                    torch.tensor([[[0, 0.5, 0.5], [0, 0, 1.0], third]]),
                ),
            ],
        )
        raise CheckFailed(
            "for three identical tokens attention_weights should be "
            f"{_rounded(want[0], weights[0])}, got {_rounded(weights[0], want[0])}"
            + (f"; it looks like {hint}" if hint else "")
        )

    gen = seeded_generator(2)
    params = _randomize_projections(module, gen, H)
    reference = _reference_module(ref.CausalScaledDotAttention, H, params)
    B = 2
    # Two sequence lengths on the same module: a mask of a fixed or cached size fails the second.
    for T in (5, 7):
        x = torch.randn(B, T, H, generator=gen)
        _compare_attention(module, reference, params, x, x, x, H, True, f"self-attention on (2, {T}, 6)", T)
    y = torch.randn(B, 4, H, generator=gen)
    z = torch.randn(B, 4, H, generator=gen)
    _compare_attention(module, reference, params, y, z, z, H, True, "queries (2, 4, 6) with other keys", 4)
    # Fewer queries than keys: query i still sees keys 0..i, so a (T, T) mask does not fit the scores.
    y = torch.randn(B, 3, H, generator=gen)
    z = torch.randn(B, 5, H, generator=gen)
    _compare_attention(module, reference, params, y, z, z, H, True, "3 queries and 5 keys, (2, 3, 6) and (2, 5, 6)", 3)
    _compare_attention(module, reference, params, y[:, 0], z, z, H, True, "2-D queries (B, H) = (2, 6) and 5 keys", 1)
    # Hand-made: three orthogonal tokens, so every score off the diagonal is exactly 0. A mask computed from
    # the scores' values (scores == 0, tril(scores) == 0, ...) then hides the wrong entries.
    o = torch.eye(4)[:3][None] * 2.0  # (1, 3, 4): tokens 2e0, 2e1, 2e2; scores are 2 on the diagonal, 0 elsewhere
    out = _call("forward on three orthogonal tokens", small, o, o, o)
    _, weights = _pair(out, "forward", "context, attention_weights")
    expect_tensor(weights, "attention_weights for 3 orthogonal tokens", (1, 3, 3))
    _expect_distributions(weights, "three orthogonal tokens")
    scaled = torch.tensor([[[2.0, 0, 0], [0, 2.0, 0], [0, 0, 2.0]]])  # (1, 3, 3) scores after the 1/2 scaling
    want = scaled.masked_fill(torch.ones(3, 3, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
    if not tensors_close(weights, want):
        raise CheckFailed(
            "for three orthogonal tokens (scores 2 on the diagonal, exactly 0 elsewhere) "
            f"attention_weights should be {_rounded(want[0], weights[0])}, got {_rounded(weights[0], want[0])}; "
            f"build the "
            f"mask from positions (j > i), never from the scores' values"
        )

    _attention_on_gpu(module, x, x, x, "self-attention on (2, 7, 6)")


# --------------------------------------------------------------------------------------------
# decoder-only data


def _check_decoder_tensors(fn, src, tgt, start, cuda, what):
    """Student's decoder tensors for one batch vs the expected concatenations."""
    src_before, tgt_before = src.clone(), tgt.clone()
    out = _call(f"generate_tensors_for_training_decoder_nmt on {what}", fn, src, tgt, start, cuda)
    first, second = _pair(out, "generate_tensors_for_training_decoder_nmt", "SOS_src_EOP_tgt, src_EOP_tgt_EOS")
    if not (pristine.equal(src, src_before) and pristine.equal(tgt, tgt_before)):
        raise CheckFailed("the inputs src_EOP and tgt_EOS should be left unchanged, but your function modified them")
    B, Ls, Lt = src.shape[0], src.shape[1], tgt.shape[1]
    want_first = torch.cat([torch.full((B, 1), start), src.cpu(), tgt.cpu()[:, :-1]], 1)
    want_second = torch.cat([src.cpu(), tgt.cpu()], 1)
    for name, got, want in (("SOS_src_EOP_tgt", first, want_first), ("src_EOP_tgt_EOS", second, want_second)):
        expect_tensor(got, f"{name} ({what})", (B, Ls + Lt))
        if got.dtype != src.dtype:
            raise CheckFailed(f"{name} should have the inputs' dtype {src.dtype} (token indices), got {got.dtype}")
        expect_device(got, src.device, name)
        if not pristine.equal(pristine.tensor_to(got, "cpu"), want):
            row = int((got.cpu() != want).any(1).nonzero()[0])
            raise CheckFailed(
                f"{name}[{row}] should be {want[row].tolist()}, got {got[row].tolist()} ({what}; "
                f"SOS={start}, EOP={int(src[row, -1])}, EOS={int(tgt[row, -1])})"
            )


@check("generate_tensors_for_training_decoder_nmt")
def check_generate_tensors_for_training_decoder_nmt(generate_tensors_for_training_decoder_nmt) -> None:
    """Decoder input SOS + src + EOP + tgt[:-1] and target src + EOP + tgt + EOS, on the inputs' device."""
    fn = generate_tensors_for_training_decoder_nmt
    require_notebook_defined(fn, "generate_tensors_for_training_decoder_nmt")
    SOS, EOS, EOP = 27, 28, 29
    src = torch.tensor([[3, 4, 5, EOP], [6, 7, 8, EOP]])  # (2, 4)
    tgt = torch.tensor([[9, 10, 11, EOS], [12, 13, 14, EOS]])  # (2, 4)
    _check_decoder_tensors(fn, src, tgt, SOS, False, "a hand-made batch")
    gen = seeded_generator(3)
    src = torch.cat([torch.randint(1, 27, (5, 6), generator=gen), torch.full((5, 1), 2)], 1)  # (5, 7), EOP = 2
    tgt = torch.cat([torch.randint(1, 27, (5, 3), generator=gen), torch.full((5, 1), 1)], 1)  # (5, 4), EOS = 1
    _check_decoder_tensors(fn, src, tgt, 0, False, "a random batch")
    out = run_on_gpu(
        "generate_tensors_for_training_decoder_nmt with src_EOP and tgt_EOS on a GPU (cuda=True)",
        fn,
        *to_fake_cuda(src, tgt),
        0,
        True,
    )
    if out is not UNDECIDED:
        for name, got in zip(("SOS_src_EOP_tgt", "src_EOP_tgt_EOS"), _pair(out, "on a GPU", "two tensors")):
            expect_tensor(got, f"{name} on a GPU", (5, 11))
            expect_device(got, FAKE_CUDA, f"{name} with inputs on a GPU")


# --------------------------------------------------------------------------------------------
# decoder-only transformer


def _is_causal_attention(module):
    """True when module is a CausalScaledDotAttention (or a subclass of one)."""
    return any(c.__name__ == "CausalScaledDotAttention" for c in pristine.type(module).__mro__)


def _registered(model, submodule):
    """True when every parameter of submodule is among model.parameters()."""
    own = {id(p) for p in model.parameters()}
    return all(id(p) in own for p in submodule.parameters())


def _decoder_variant(model, inputs, pe=True, res_attn=True, res_mlp=True, probs=False, first_weights=False):
    """Forward pass of the reference structure with the model's own submodules, with one part changed."""
    T = inputs.shape[1]
    x = model.embedding(inputs)
    if pe:
        x = x + model.positional_encodings[:T]
    all_weights = []
    for attention, mlp in zip(model.self_attentions, model.attention_mlps):
        context, w = attention(x, x, x)
        all_weights.append(w)
        x = x + context if res_attn else context
        x = x + mlp(x) if res_mlp else mlp(x)
    logits = model.out(x)
    if probs:
        logits = torch.softmax(logits, dim=-1)
    return logits, all_weights[0] if first_weights else all_weights[-1]


@check("decoder_only_transformer")
def check_decoder_only_transformer(DecoderOnlyTransformer) -> None:
    """DecoderOnlyTransformer(vocab, hidden, layers).forward(inputs) -> (logits (B,T,V), weights (B,T,T))."""
    require_notebook_defined(DecoderOnlyTransformer, "DecoderOnlyTransformer")
    V, H, L = 11, 8, 2
    name = "DecoderOnlyTransformer"
    # __init__ builds CausalScaledDotAttention layers and the positional table, graded in their own cells:
    # lend it the reference ones, so an unfinished or broken earlier cell costs nothing here.
    with substituted(
        DecoderOnlyTransformer,
        CausalScaledDotAttention=ref.CausalScaledDotAttention,
        create_positional_encodings=ref.create_positional_encodings,
    ):
        model = _instantiate(DecoderOnlyTransformer, name, V, H, L)
    model.eval()
    if getattr(model, "num_layers", None) != L:
        raise CheckFailed(f"{name}.num_layers should be {L}, got {getattr(model, 'num_layers', None)!r}")
    for attr in ("self_attentions", "attention_mlps"):
        layers = getattr(model, attr, None)
        n = pristine.len(layers) if layers is not None and hasattr(layers, "__len__") else None
        if n != L:
            raise CheckFailed(f"{name}.{attr} should hold num_layers = {L} modules, got {n}")
        for i in range(L):
            if not _registered(model, layers[i]):
                raise CheckFailed(
                    f"{attr}[{i}] should be registered in the model (use nn.ModuleList); its "
                    f"parameters are not in model.parameters(), so they would never be trained"
                )
    for i in range(L):
        if not _is_causal_attention(model.self_attentions[i]):
            raise CheckFailed(
                f"self_attentions[{i}] should be a CausalScaledDotAttention (a decoder must not "
                f"look ahead), got {pristine.type(model.self_attentions[i]).__name__}"
            )
    pe = getattr(model, "positional_encodings", None)
    if not pristine.isinstance(pe, pristine.Tensor) or pe.dim() != 2 or pe.shape[1] != H or pe.shape[0] < 16:
        raise CheckFailed(
            f"{name}.positional_encodings should be a (max_len, hidden_size) = (max_len, {H}) tensor, "
            f"got {fmt_shape(pe)}"
        )
    for attr in ("embedding", "out"):
        if not callable(getattr(model, attr, None)):
            raise CheckFailed(
                f"{name}.{attr} should be a module (nn.Embedding / nn.Linear), got "
                f"{pristine.type(getattr(model, attr, None)).__name__}"
            )

    # Use reference causal attention inside the student's model, so this check grades the decoder
    # itself; CausalScaledDotAttention is checked in its own cell.
    pristine.manual_seed(4)
    model.self_attentions = nn.ModuleList([ref.CausalScaledDotAttention(H) for _ in range(L)])
    gen = seeded_generator(4)
    B, T = 3, 6
    inputs = torch.randint(0, V, (B, T), generator=gen)

    # The positional table is the positional_encodings cell's job; use the reference table here.
    table = ref.create_positional_encodings(pe.shape[0], H)
    model.positional_encodings = (
        nn.Parameter(table, requires_grad=False) if pristine.isinstance(pe, nn.Parameter) else table
    )

    out = _call("forward on inputs (3, 6)", model, inputs)
    logits, weights = _pair(out, "forward", "logits, attention_weights")
    expect_tensor(logits, "logits for inputs (3, 6)", (B, T, V))
    expect_tensor(weights, "attention_weights for inputs (3, 6) (last layer)", (B, T, T))

    # Causality: changing tokens 4 and 5 must not change the logits at positions 0..3.
    changed = inputs.clone()
    changed[:, 4:] = (changed[:, 4:] + 1) % V
    logits2, _ = _pair(_call("forward", model, changed), "forward", "logits, attention_weights")
    expect_tensor(logits2, "logits", (B, T, V))
    if not tensors_close(logits[:, :4], logits2[:, :4]):
        raise CheckFailed(
            "logits at positions 0..3 should not depend on tokens 4 and 5, but they changed "
            "(the decoder must not look ahead)"
        )

    with torch.no_grad():
        want_logits, want_weights = ref.DecoderOnlyTransformer.forward(model, inputs)
        hyps = [
            ("positional encodings were not added", _decoder_variant(model, inputs, pe=False)),
            (
                "the residual around self-attention is missing (x = x + attention)",
                _decoder_variant(model, inputs, res_attn=False),
            ),
            ("the residual around the MLP is missing (x = x + mlp(x))", _decoder_variant(model, inputs, res_mlp=False)),
            ("both residuals are missing", _decoder_variant(model, inputs, res_attn=False, res_mlp=False)),
            (
                "softmax was applied to the logits (return unnormalized scores)",
                _decoder_variant(model, inputs, probs=True),
            ),
            (
                "the first layer's attention weights were returned instead of the last layer's",
                _decoder_variant(model, inputs, first_weights=True),
            ),
        ]
    _expect_close_or_explain(logits, want_logits, "logits for inputs (3, 6)", [(d, h[0]) for d, h in hyps])
    _expect_close_or_explain(weights, want_weights, "attention_weights (last layer)", [(d, h[1]) for d, h in hyps])

    model.train()
    logits, _ = _pair(_call("forward in training mode", model, inputs), "forward", "logits, attention_weights")
    if not (pristine.isinstance(logits, pristine.Tensor) and logits.requires_grad):
        raise CheckFailed("logits should carry gradients in training mode (no torch.no_grad() or .detach() in forward)")

    model.to(FAKE_CUDA)
    out = run_on_gpu("forward with the model and inputs on a GPU (model.to('cuda'))", model, *to_fake_cuda(inputs))
    if out is not UNDECIDED:
        logits, _ = _pair(out, "forward on a GPU", "logits, attention_weights")
        expect_tensor(logits, "logits on a GPU", (B, T, V))
        expect_device(logits, FAKE_CUDA, "logits with the model on a GPU")


# --------------------------------------------------------------------------------------------
# perplexity


def _nll64(logits, targets):
    """-log softmax(logits)[target] per position, (B, T) in float64 (the checks' own, stable computation)."""
    log_probs = torch.log_softmax(cpu64(logits), dim=-1)  # (B, T, V)
    return -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, T)


def _perplexity_hypotheses(logits, targets, pad):
    """(description, value) of the common wrong perplexities of `logits` against `targets` with `pad`."""
    nll, keep = _nll64(logits, targets), targets != pad
    real = nll[keep]
    per_row = [nll[b][keep[b]] for b in range(targets.shape[0]) if keep[b].any()]
    probs = torch.softmax(cpu64(logits), dim=-1)
    twice = -torch.log_softmax(probs, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, T)
    hits = (cpu64(logits).argmax(-1) == targets)[keep].double().mean().item()
    p_target = probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)[keep]
    hyps = [
        ("the pad positions were counted (pad targets should count for nothing)", nll.mean().exp().item()),
        (
            "the real tokens' cross-entropy was divided by every position, pad included (divide by the real tokens)",
            math.exp(real.sum().item() / targets.numel()),
        ),
        (
            "it averages per-sentence perplexities (every token should weigh the same, whatever its sentence)",
            sum(row.mean().exp().item() for row in per_row) / pristine.len(per_row),
        ),
        (
            "each sentence's mean cross-entropy was averaged before exp (every token should weigh the same)",
            math.exp(sum(row.mean().item() for row in per_row) / pristine.len(per_row)),
        ),
        ("exp is missing: this is the mean cross-entropy, not its perplexity", real.mean().item()),
        ("the log is base 2 but the power is e (use one base for both)", math.exp(real.mean().item() / math.log(2))),
        ("the power is 2 but the log is natural (use one base for both)", 2 ** real.mean().item()),
        ("it is the mean of exp(cross-entropy) per token, not exp of the mean", real.exp().mean().item()),
        ("softmax was applied twice (the logits are unnormalised scores)", twice[keep].mean().exp().item()),
        (
            "it is 1 / the mean probability of the targets, not exp of the mean cross-entropy",
            1 / p_target.mean().item(),
        ),
        ("it measures argmax accuracy, not the probabilities of the targets", hits),
    ]
    if hits > 0:
        hyps.append(("it measures argmax accuracy, not the probabilities of the targets", 1 / hits))
    if real.sum().item() < 700:
        hyps.append(("exp of the summed cross-entropy: take the mean over the real tokens", real.exp().prod().item()))
    for shifted, (lg, tg) in {
        "logits[:, :-1] against targets[:, 1:]": (logits[:, :-1], targets[:, 1:]),
        "logits[:, 1:] against targets[:, :-1]": (logits[:, 1:], targets[:, :-1]),
    }.items():
        if (tg != pad).any():
            value = _nll64(lg, tg)[tg != pad].mean().exp().item()
            hyps.append((f"it scores {shifted}: logits[b, t] already scores targets[b, t] (no shift)", value))
    if pad != 0:
        hyps.append(
            (
                "pad_index was not used (0 was taken as the pad)",
                _nll64(logits, targets)[targets != 0].mean().exp().item(),
            )
        )
    return hyps


def _perplexity_cases():
    """(description, logits, targets, pad_index) on which the check compares perplexity with the reference."""
    gen = seeded_generator(7)
    cases = []
    V, pad = 7, 0  # a uniform guess: every logit equal
    targets = torch.randint(1, V, (2, 4), generator=gen)
    targets[0, 3] = pad
    cases.append((f"all-equal logits over {V} tokens", torch.zeros(2, 4, V), targets, pad))
    B, T, V, pad = 4, 6, 11, 0  # right padding, rows of 6, 4, 2 and 5 real tokens
    targets = torch.randint(1, V, (B, T), generator=gen)
    for b, length in enumerate((6, 4, 2, 5)):
        targets[b, length:] = pad
    logits = 2 * torch.randn(B, T, V, generator=gen)
    cases.append(
        (f"random logits (4, 6, {V}) with rows of 6, 4, 2 and 5 real tokens (pad_index {pad})", logits, targets, pad)
    )
    B, T, V, pad = 3, 5, 9, 8  # the last token is the pad; padding on the left and in the middle too
    targets = torch.randint(0, V - 1, (B, T), generator=gen)
    targets[0, :2] = pad
    targets[1, 2] = pad
    logits = 3 * torch.randn(B, T, V, generator=gen, dtype=torch.float64)
    cases.append(
        (
            f"random float64 logits (3, 5, {V}) with padding on the left and in the middle (pad_index {pad})",
            logits,
            targets,
            pad,
        )
    )
    V, pad = 6, 0  # one confidently wrong prediction: its target scores 120 below the best token
    logits = torch.zeros(1, 4, V)
    logits[0, 0, 5] = 120.0
    targets = torch.tensor([[4, 2, 3, 1]])
    cases.append(("logits (1, 4, 6) where one target scores 120 below the best token", logits, targets, pad))
    return cases


@check("perplexity")
def check_perplexity(perplexity) -> None:
    """perplexity(logits (B, T, V), targets (B, T), pad_index) -> exp of the mean cross-entropy over the non-pad
    positions, equal to the reference on hand-made and seeded cases; inputs left unchanged; no tensor made on
    the CPU beside GPU inputs."""
    require_notebook_defined(perplexity, "perplexity")
    for what, logits, targets, pad in _perplexity_cases():
        given_logits, given_targets = logits.clone(), targets.clone()
        out = _call(f"perplexity on {what}", perplexity, given_logits, given_targets, pad)
        if not (pristine.equal(given_logits, logits) and pristine.equal(given_targets, targets)):
            raise CheckFailed(
                f"perplexity should not change its inputs, but the {'targets' if not pristine.equal(given_targets, targets) else 'logits'} "
                f"changed on {what} (work on a copy)"
            )
        got = _as_float(out, "perplexity's result")
        want = ref.perplexity(logits, targets, pad)
        if math.isfinite(got) and math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-6):
            continue
        if not math.isfinite(got):
            raise CheckFailed(
                f"perplexity on {what} should be a finite number, got {got}: log(softmax(...)) rounds a tiny "
                f"probability to 0 and its log to -inf; compute log-probabilities in one stable step"
            )
        hint = next(
            (
                d
                for d, v in _perplexity_hypotheses(logits, targets, pad)
                if math.isclose(got, v, rel_tol=1e-4, abs_tol=1e-6)
            ),
            "",
        )
        raise CheckFailed(
            f"perplexity on {what} should be {'lower' if got > want else 'higher'}, got {got:.4g}"
            + (f"; it looks like {hint}" if hint else "")
        )
    what, logits, targets, pad = _perplexity_cases()[1]
    run_on_gpu(f"perplexity on {what}", perplexity, *to_fake_cuda(logits, targets), pad)


# --------------------------------------------------------------------------------------------
# scaling laws


DECODER_SHAPES = [(29, 32, 2), (29, 64, 4), (10, 7, 1), (100, 16, 3), (29, 128, 6), (5, 3, 0)]


class _BuildRefused(Exception):
    """Raised inside decoder_params when it builds a module; a BaseException subclass would escape `except
    Exception`, but the attempt is recorded anyway, so swallowing it does not help."""


@contextlib.contextmanager
def _no_modules_built(fn):
    """Within the block, building any nn.Module fails and is recorded in the list the block receives.

    nn.Module.__init__ (which every module, the notebook's DecoderOnlyTransformer, nn.Linear and nn.Embedding
    included, runs) is replaced by one that refuses; the name DecoderOnlyTransformer in `fn`'s namespace is
    replaced by a class that refuses to be built (also where the notebook's class is unfinished). So a model built
    directly, through a helper, `globals()[...]`, `type(model)(...)` or a class made on the fly is caught by what
    the call does, not by the names it uses.
    """
    built = []

    def refuse(name):
        built.append(name)
        return _BuildRefused(f"decoder_params must count by hand: building {name} is not allowed here")

    def refused_init(self, *args, **kwargs):
        raise refuse(pristine.type(self).__name__)

    class DecoderOnlyTransformer:  # the stand-in the notebook's name points to while the call runs
        def __new__(cls, *args, **kwargs):
            raise refuse("DecoderOnlyTransformer")

    module = pristine.Module
    had_own = "__init__" in vars(module)
    saved = vars(module).get("__init__")
    module.__init__ = refused_init
    try:
        with substituted(fn, DecoderOnlyTransformer=DecoderOnlyTransformer):
            yield built
    finally:
        if had_own:
            module.__init__ = saved
        else:  # pragma: no cover - nn.Module always defines __init__
            del module.__init__


def _count(value, what):
    """A parameter count as a Python int: an int, a numpy or 0-d tensor integer, or a float without a fraction."""
    if pristine.isinstance(value, bool) or not pristine.isinstance(value, (numbers.Real, np.ndarray, torch.Tensor)):
        raise CheckFailed(f"{what} should return a whole number of parameters, got {pristine.type(value).__name__}")
    if pristine.isinstance(value, (np.ndarray, torch.Tensor)):
        if math.prod(value.shape) != 1:
            raise CheckFailed(f"{what} should return one number, got an array of shape {tuple(value.shape)}")
        value = value.reshape(-1)[0].item()
    number = pristine.float(value)
    if not math.isfinite(number) or number != math.floor(number):
        raise CheckFailed(f"{what} should return a whole number of parameters, got {value!r}")
    return math.floor(number)


def _decoder_param_hypotheses(V, H, L):
    """(description, count) of the common ways to miscount DecoderOnlyTransformer(V, H, L)."""
    return [
        ("the biases are missing: every nn.Linear(H, H) has H*H weights and H biases", 2 * V * H + 4 * L * H * H),
        ("the output layer's V biases are missing", 2 * V * H + 4 * L * (H * H + H)),
        ("the positional encodings are a fixed buffer, not parameters", 2 * V * H + V + 4 * L * (H * H + H) + 1000 * H),
        ("the embedding and the output layer are separate matrices (not tied)", V * H + V + 4 * L * (H * H + H)),
        ("the MLP's Linear is missing: each layer has Q, K, V and one MLP Linear", 2 * V * H + V + 3 * L * (H * H + H)),
        (
            "each layer has 4 Linear(H, H), Q, K, V and the MLP: no output projection",
            2 * V * H + V + 5 * L * (H * H + H),
        ),
        ("num_layers is ignored: every layer has its own weights", 2 * V * H + V + 4 * (H * H + H)),
        ("a Linear(H, H) has H*H weights, not H", 2 * V * H + V + 8 * L * H),
    ]


@check("decoder_params")
def check_decoder_params(decoder_params) -> None:
    """decoder_params(V, H, L) equals the reference DecoderOnlyTransformer's trainable parameters, counted by hand:
    while it runs, building any nn.Module (the notebook's class, nn.Linear, nn.Embedding, ...) is refused."""
    require_notebook_defined(decoder_params, "decoder_params")
    wanted = {}
    for V, H, L in DECODER_SHAPES:  # the reference models are built before the student's code runs
        wanted[V, H, L] = sum(p.numel() for p in ref.DecoderOnlyTransformer(V, H, L).parameters() if p.requires_grad)
    for (V, H, L), want in wanted.items():
        what = f"decoder_params({V}, {H}, {L})"
        error = None
        with _no_modules_built(decoder_params) as built:
            try:
                value = decoder_params(V, H, L)
            except Exception as e:  # noqa: BLE001 - judged below, after what the call built
                error = e
        if built:
            raise CheckFailed(
                f"decoder_params should count by hand from V, H and L, without building a model or a layer "
                f"(it built {built[0]}; {what} must create no nn.Module)"
            )
        if error is not None:
            raise CheckFailed(
                f"{what} should run without errors, but raised {one_line(error, 300, more='...')}"
            ) from None
        got = _count(value, what)
        if got == want:
            continue
        hint = next((d for d, count in _decoder_param_hypotheses(V, H, L) if count == got), "")
        raise CheckFailed(
            f"{what} should be {want:,} (the trainable parameters of DecoderOnlyTransformer({V}, {H}, {L})), "
            f"got {got:,}" + (f"; {hint}" if hint else "")
        )


def _numbers(v, name, n):
    """A float64 numpy vector of length n from an array-like; CheckFailed otherwise."""
    try:
        arr = np.array(v.detach().cpu() if pristine.isinstance(v, pristine.Tensor) else v, dtype=np.float64)
    except Exception:
        raise CheckFailed(f"{name} should be {n} numbers, got {pristine.type(v).__name__}") from None
    if arr.shape != (n,):
        raise CheckFailed(f"{name} should be {n} numbers, got shape {arr.shape}")
    return arr


def _same(a, b, rtol=1e-6, atol=1e-9):
    """Numerically equal numbers or arrays."""
    return bool(pristine.np_allclose(a, b, rtol=rtol, atol=atol))


def _optimal_params_hypotheses(x, y):
    """(description, optimal_params) for common mistakes, and the natural-log fit's coefficients."""
    lx = np.log10(x)
    p = np.polyfit(lx, y, 2)  # the right fit
    vertex = -p[1] / (2 * p[0])
    pn = np.polyfit(np.log(x), y, 2)  # natural log
    ps = np.polyfit(y, lx, 2)  # x and y swapped
    hyps = [
        ("the vertex was returned in log space (return 10 ** vertex)", vertex),
        ("the natural log was used instead of log10", 10 ** (-pn[1] / (2 * pn[0]))),
        ("x and y were swapped in the fit", 10 ** (-ps[1] / (2 * ps[0]))),
        ("the vertex formula is missing the factor 2 (the vertex is at -b / (2a))", 10 ** (-p[1] / p[0])),
        ("the vertex formula has the wrong sign (the vertex is at -b / (2a))", 10 ** (p[1] / (2 * p[0]))),
        ("the data point with the lowest loss was returned instead of the vertex", x[np.argmin(y)]),
    ]
    return hyps, pn


@check("find_optimal_params")
def check_find_optimal_params(find_optimal_params) -> None:
    """find_optimal_params(x, y) -> (p, optimal_params): parabola of loss vs log10(params) and its vertex."""
    require_notebook_defined(find_optimal_params, "find_optimal_params")
    gen = np.random.default_rng(5)
    # Hand-made: losses exactly on a parabola with its minimum at 10 ** 7.7 parameters.
    lx = np.array([6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0])
    cases = [("losses on a parabola with minimum at 10**7.7", 10**lx, 0.2 * (lx - 7.7) ** 2 + 1.5)]
    lx = np.sort(gen.uniform(5.0, 9.0, 6))
    cases.append(("noisy losses of 6 models", 10**lx, 0.15 * (lx - 6.9) ** 2 + 2.0 + gen.normal(0, 0.02, 6)))
    for what, x, y in cases:
        x_in, y_in = x.copy(), y.copy()
        out = _call(f"find_optimal_params on {what}", find_optimal_params, x_in, y_in)
        p, opt = _pair(out, "find_optimal_params", "p, optimal_params")
        if not (np.array_equal(x_in, x) and np.array_equal(y_in, y)):
            raise CheckFailed("find_optimal_params should not modify its inputs x and y")
        want_p, want_opt = ref.find_optimal_params(x, y)
        hyps, p_natural = _optimal_params_hypotheses(x, y)
        if hasattr(p, "__len__") and pristine.len(p) == 2:
            raise CheckFailed(
                f"p should hold 3 coefficients of a quadratic fit (degree 2), got 2 (a straight line) on {what}"
            )
        p_arr = _numbers(p, "p (the quadratic's coefficients [a, b, c])", 3)
        opt_f = _as_float(opt, "optimal_params")
        if not _same(opt_f, want_opt):
            hint = next((d for d, v in hyps if _same(opt_f, v)), "")
            shown, seen = differing(pristine.float(want_opt), opt_f, digits=4)
            raise CheckFailed(
                f"optimal_params should be {shown} parameters on {what}, got {seen}"
                + (f"; it looks like {hint}" if hint else "")
            )
        if not _same(p_arr, want_p):
            if _same(p_arr, want_p[::-1]):
                hint = "; p should list the highest power first, as np.polyfit returns"
            elif _same(p_arr, p_natural):
                hint = "; it looks like the fit used the natural log instead of log10"
            else:
                hint = ""
            shown, seen = differing([float(v) for v in want_p], [float(v) for v in p_arr], digits=4)
            raise CheckFailed(
                f"p should be [a, b, c] of loss ~ a*log10(x)**2 + b*log10(x) + c = {shown} on {what}, got {seen}{hint}"
            )


@check("fit_linear_log")
def check_fit_linear_log(fit_linear_log) -> None:
    """fit_linear_log(x, y) -> (m, c) with log10(y) ≈ m * log10(x) + c."""
    require_notebook_defined(fit_linear_log, "fit_linear_log")
    gen = np.random.default_rng(6)
    x = np.array([1e1, 1e2, 1e3, 1e4])
    cases = [("y = 3 * x**0.5", x, 3 * x**0.5)]
    lx = np.sort(gen.uniform(17, 21, 5))
    cases.append(("noisy data with slope 0.49", 10**lx, 10 ** (0.49 * lx - 1.2 + gen.normal(0, 0.05, 5))))
    for what, x, y in cases:
        x_in, y_in = x.copy(), y.copy()
        out = _call(f"fit_linear_log on {what}", fit_linear_log, x_in, y_in)
        m, c = _pair(out, "fit_linear_log", "m, c", allow_array=True)
        if not (np.array_equal(x_in, x) and np.array_equal(y_in, y)):
            raise CheckFailed("fit_linear_log should not modify its inputs x and y")
        m, c = _as_float(m, "m"), _as_float(c, "c")
        want_m, want_c = ref.fit_linear_log(x, y)
        if _same([m, c], [want_m, want_c]):
            continue
        ln_m, ln_c = np.polyfit(np.log(x), np.log(y), 1)
        sw_m, sw_c = np.polyfit(np.log10(y), np.log10(x), 1)
        hyps = [
            ("(c, m) was returned instead of (m, c)", [want_c, want_m]),
            ("the natural log was used instead of log10", [ln_m, ln_c]),
            ("x and y were swapped", [sw_m, sw_c]),
            ("y was fitted instead of log10(y)", list(np.polyfit(np.log10(x), y, 1))),
            ("log10(x) was not taken", list(np.polyfit(x, np.log10(y), 1))),
            ("10 ** c was returned instead of c", [want_m, 10**want_c]),
        ]
        hint = next((d for d, v in hyps if _same([m, c], v)), "")
        d = digits_to_differ([want_m, want_c], [m, c], digits=4)
        raise CheckFailed(
            f"(m, c) should be ({want_m:.{d}g}, {want_c:.{d}g}) for {what}, got ({m:.{d}g}, {c:.{d}g})"
            + (f"; it looks like {hint}" if hint else "")
        )
