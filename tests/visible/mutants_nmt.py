"""Realistic answers for the visible checks of nmt.ipynb: mistakes they must catch, alternatives they must pass.

Each entry is a whole solution cell: the reference answer with a few edits, or a source of its own. A
comment names the student's mistake (or the alternative's idea); `expect` is a fragment of the one-line
AssertionError the visible test cell must show.
"""

from tests.visible.run import Right, Wrong

PE = "positional_encodings"
SDA = "scaled_dot_attention"
CSDA = "causal_scaled_dot_attention"
GEN = "generate_tensors_for_training_decoder_nmt"
DEC = "decoder_only_transformer"
FOP = "find_optimal_params"
FLL = "fit_linear_log"
DP = "decoder_params"
PPL = "perplexity"
RETURN_PPL = "return math.exp(nll[keep].mean().item())"
NLL = "nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, T): -log p(target) per position"

SCORES = "scores = self.scaling_factor * torch.bmm(q, k.transpose(1, 2))  # (B, k, T)"
MASK = "future = torch.ones(n_q, n_k, dtype=torch.bool, device=scores.device).triu(diagonal=1)  # (k, T)"

_PE_LOOPS = """import numpy as np


def create_positional_encodings(max_seq_len, hidden_size):
    table = np.zeros((max_seq_len, hidden_size), dtype=np.float32)
    for pos in range(max_seq_len):
        for j in range(hidden_size):
            angle = pos / 10000 ** ((j - j % 2) / hidden_size)
            table[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return torch.from_numpy(table)
"""

_PE_WHERE = """def create_positional_encodings(max_seq_len, hidden_size):
    pos = torch.arange(max_seq_len, dtype=torch.float32)[:, None]  # (L, 1)
    j = torch.arange(hidden_size)[None, :]  # (1, d)
    angles = pos / torch.pow(10000.0, {exponent} / hidden_size)  # (L, d)
    return torch.where(j % 2 == 0, torch.sin(angles), torch.cos(angles))
"""

_PE_PAIRS = """def create_positional_encodings(max_seq_len, hidden_size):
    pe = torch.zeros(max_seq_len, hidden_size)
    for pos in range(max_seq_len):
        for i in range(hidden_size // 2):
            angle = pos / 10000 ** (2 * i / hidden_size)
            pe[pos, 2 * i] = math.sin(angle)
            pe[pos, 2 * i + 1] = math.cos(angle)
    return pe
"""

_SDA_SDPA = """class ScaledDotAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.Q = nn.Linear(hidden_size, hidden_size)
        self.K = nn.Linear(hidden_size, hidden_size)
        self.V = nn.Linear(hidden_size, hidden_size)
        self.softmax = nn.Softmax(dim=-1)
        self.scaling_factor = 1.0 / math.sqrt(hidden_size)

    def forward(self, queries, keys, values):
        if queries.dim() == 2:
            queries = queries[:, None, :]
        q, k, v = self.Q(queries), self.K(keys), self.V(values)
        context = F.scaled_dot_product_attention(q, k, v{causal})
        scores = torch.einsum("bqh,bth->bqt", q, k) * self.scaling_factor
        {mask}return context, self.softmax(scores)
"""

WRONG = [
    # Mistake: cos on even dimensions and sin on odd ones.
    Wrong(
        PE,
        "sin_cos_swapped",
        "sin(0) = 0",
        [("[:, 0::2] = torch.sin(", "[:, 0::2] = torch.cos("), ("[:, 1::2] = torch.cos(", "[:, 1::2] = torch.sin(")],
    ),
    # Mistake: frequency base 1000 instead of 10000.
    Wrong(PE, "base_1000", "PE[1, 2]", [("10000 **", "1000 **")]),
    # Mistake: the exponent doubled, 2*(2i)/d, because two_i already holds the even index.
    Wrong(PE, "exponent_doubled", "PE[1, 2]", [("10000 ** (two_i", "10000 ** (2 * two_i")]),
    # Mistake: exponent j/d with the raw column index, so the cos column of a pair gets its own frequency.
    Wrong(PE, "exponent_j", "PE[1, 3]", source=_PE_WHERE.format(exponent="j")),
    # Mistake: integer division 2i // d makes every exponent 0, so every column has frequency 1.
    Wrong(PE, "integer_division", "PE[1, 2]", [("(two_i / hidden_size)", "(two_i // hidden_size)")]),
    # Mistake: assumes an even hidden size: the cos columns get ceil(d/2) angles and crash for odd d.
    Wrong(PE, "odd_d_crash", "odd hidden size", [("torch.cos(angles[:, : hidden_size // 2])", "torch.cos(angles)")]),
    # Mistake: loops over d // 2 pairs, so an odd hidden size leaves the last column at zero.
    Wrong(PE, "odd_d_zero_column", "odd hidden size", source=_PE_PAIRS),
    # Mistake: positions counted from 1.
    Wrong(PE, "positions_from_1", "sin(0) = 0", [("torch.arange(max_seq_len,", "1 + torch.arange(max_seq_len,")]),
    # Mistake: returns the table transposed, (d, L).
    Wrong(PE, "transposed", "expected shape", [("return pos_encodings", "return pos_encodings.T")]),
    # Mistake: a float64 table (numpy), which turns float32 embeddings into float64 when added.
    Wrong(PE, "float64", "float32", source=_PE_LOOPS.replace("dtype=np.float32", "dtype=np.float64")),
    # Mistake: forgets to scale the scores.
    Wrong(SDA, "no_scale", "sqrt", [(SCORES, "scores = torch.bmm(q, k.transpose(1, 2))")]),
    # Mistake: divides the scores by hidden_size instead of its square root.
    Wrong(SDA, "scale_1_over_h", "sqrt", [(SCORES, "scores = torch.bmm(q, k.transpose(1, 2)) / self.hidden_size")]),
    # Mistake: multiplies by sqrt(hidden_size) instead of dividing.
    Wrong(
        SDA,
        "scale_times_sqrt",
        "sqrt",
        [(SCORES, "scores = torch.bmm(q, k.transpose(1, 2)) * math.sqrt(self.hidden_size)")],
    ),
    # Mistake: softmax over the queries axis.
    Wrong(SDA, "softmax_queries_axis", "sum to 1", [("self.softmax(scores)", "torch.softmax(scores, dim=1)")]),
    # Mistake: no Q/K/V projections: attends with the raw inputs.
    Wrong(
        SDA,
        "no_projections",
        "self.Q",
        [
            ("q = self.Q(queries)", "q = queries"),
            ("k = self.K(keys)", "k = keys"),
            ("v = self.V(values)", "v = values"),
        ],
    ),
    # Mistake: projects the keys with V instead of projecting the values.
    Wrong(SDA, "v_from_keys", "self.V(values)", [("v = self.V(values)", "v = self.V(keys)")]),
    # Mistake: uses the K projection for the queries too.
    Wrong(SDA, "k_for_queries", "self.Q", [("q = self.Q(queries)", "q = self.K(queries)")]),
    # Mistake: multiplies by the projection weights without transposing them (x @ W instead of the layer).
    Wrong(
        SDA,
        "untransposed_weights",
        "self.Q",
        [("q = self.Q(queries)", "q = queries @ self.Q.weight"), ("k = self.K(keys)", "k = keys @ self.K.weight")],
    ),
    # Mistake: no support for 2-D queries (B, H).
    Wrong(
        SDA,
        "no_2d_queries",
        "2-D queries",
        [("        if queries.dim() == 2:\n            queries = queries.unsqueeze(1)  # (B, 1, H)\n", "")],
    ),
    # Mistake: 2-D queries handled, but the k = 1 axis squeezed away from the context.
    Wrong(
        SDA,
        "squeezed_context",
        "2-D queries",
        [("return context, attention_weights", "return context.squeeze(1), attention_weights")],
    ),
    # Mistake: attention weights returned as (B, T, k).
    Wrong(
        SDA,
        "weights_transposed",
        "attention_weights: expected shape",
        [("return context, attention_weights", "return context, attention_weights.transpose(1, 2)")],
    ),
    # Mistake: the causal version forgets the scaling.
    Wrong(CSDA, "no_scale", "sqrt", [(SCORES, "scores = torch.bmm(q, k.transpose(1, 2))")]),
    # Mistake: a (T, T) mask from the keys' length: right only when there are as many queries as keys.
    Wrong(
        CSDA, "mask_t_by_t", "3 queries", [("n_q, n_k = scores.shape[1], scores.shape[2]", "n_q = n_k = keys.shape[1]")]
    ),
    # Mistake: a (T, T) mask sliced to its last k rows (aligned to the end of the keys).
    Wrong(
        CSDA,
        "mask_last_rows",
        "3 queries",
        [(MASK, "future = torch.ones(n_k, n_k, dtype=torch.bool, device=scores.device).triu(diagonal=1)[-n_q:]")],
    ),
    # Mistake: off by one, hiding the diagonal too (triu with diagonal=0).
    Wrong(CSDA, "mask_hides_diagonal", "query 0", [("triu(diagonal=1)", "triu(diagonal=0)")]),
    # Mistake: off by one the other way, letting query i see key i + 1.
    Wrong(CSDA, "mask_sees_next", "query 0", [("triu(diagonal=1)", "triu(diagonal=2)")]),
    # Mistake: inverted mask (hides the past instead of the future).
    Wrong(CSDA, "mask_inverted", "query 0", [("triu(diagonal=1)", "tril(diagonal=-1)")]),
    # Mistake: forgets the mask (plain scaled dot attention).
    Wrong(CSDA, "no_mask", "query 0", [("scores = scores.masked_fill(future, self.neg_inf)  # (B, k, T)", "")]),
    # Mistake: masks by value, hiding the scores that are 0 instead of the future positions.
    Wrong(
        CSDA,
        "mask_by_value",
        "query 0",
        [("scores.masked_fill(future, self.neg_inf)", "scores.masked_fill(scores == 0, self.neg_inf)")],
    ),
    # Mistake: no support for 2-D queries (B, H).
    Wrong(
        CSDA,
        "no_2d_queries",
        "2-D queries",
        [("        if queries.dim() == 2:\n            queries = queries.unsqueeze(1)  # (B, 1, H)\n", "")],
    ),
    # Mistake: softmax over the queries axis.
    Wrong(CSDA, "softmax_queries_axis", "sum to 1", [("self.softmax(scores)", "torch.softmax(scores, dim=1)")]),
    # Mistake: projects the keys with V instead of projecting the values.
    Wrong(CSDA, "v_from_keys", "self.V(values)", [("v = self.V(values)", "v = self.V(keys)")]),
    # Mistake (device): the mask is made on the CPU, so masked_fill fails on GPU scores.
    Wrong(CSDA, "mask_on_cpu", "device", [(", device=scores.device)", ")")]),
    # Mistake: the SOS column is built for a batch of one.
    Wrong(GEN, "sos_batch_of_one", "batch of 3", [("torch.full((B, 1),", "torch.full((1, 1),")]),
    # Mistake: forgets to drop the target's last token, so the input is one longer than the target.
    Wrong(GEN, "input_keeps_eos", "expected two", [("tgt_EOS[:, :-1]", "tgt_EOS")]),
    # Mistake: drops the target's first token instead of its last.
    Wrong(GEN, "drops_first", "input row", [("tgt_EOS[:, :-1]", "tgt_EOS[:, 1:]")]),
    # Mistake: SOS appended at the end instead of prepended.
    Wrong(
        GEN,
        "sos_at_end",
        "input row",
        [("torch.cat([SOS, src_EOP, tgt_EOS[:, :-1]], dim=1)", "torch.cat([src_EOP, tgt_EOS[:, :-1], SOS], dim=1)")],
    ),
    # Mistake: the target misses its EOS and starts with SOS (no shift between input and target).
    Wrong(
        GEN,
        "no_shift",
        "target row",
        [("torch.cat([src_EOP, tgt_EOS], dim=1)", "torch.cat([SOS, src_EOP, tgt_EOS[:, :-1]], dim=1)")],
    ),
    # Mistake: a float SOS column (torch.ones * start_token), so cat turns the token indices into floats.
    Wrong(
        GEN,
        "float_sos",
        "LongTensor",
        [
            (
                "torch.full((B, 1), start_token, dtype=src_EOP.dtype, device=src_EOP.device)",
                "torch.ones(B, 1, device=src_EOP.device) * start_token",
            )
        ],
    ),
    # Mistake: hard-codes the notebook's SOS index instead of using start_token.
    Wrong(GEN, "hard_coded_sos", "start_token", [("torch.full((B, 1), start_token,", "torch.full((B, 1), 27,")]),
    # Mistake: returns (target, input).
    Wrong(
        GEN,
        "swapped_outputs",
        "input row",
        [("return SOS_src_EOP_tgt, src_EOP_tgt_EOS", "return src_EOP_tgt_EOS, SOS_src_EOP_tgt")],
    ),
    # Mistake: forgets to add the positional encodings.
    Wrong(
        DEC,
        "no_positional_encodings",
        "positional encodings",
        [("self.embedding(inputs) + self.positional_encodings[:T]", "self.embedding(inputs)")],
    ),
    # Mistake: no residual around the self-attention.
    Wrong(DEC, "no_attention_residual", "residual", [("x = x + context", "x = context")]),
    # Mistake: no residual around the MLP.
    Wrong(DEC, "no_mlp_residual", "residual", [("x = x + mlp(x)  # (B, T, H)", "x = mlp(x)")]),
    # Mistake: the MLP reads the attention output instead of the residual stream.
    Wrong(DEC, "mlp_reads_context", "residual", [("x = x + mlp(x)  # (B, T, H)", "x = x + mlp(context)")]),
    # Mistake: returns softmax probabilities instead of logits.
    Wrong(
        DEC,
        "softmax_output",
        "probabilities",
        [("logits = self.out(x)", "logits = torch.softmax(self.out(x), dim=-1)")],
    ),
    # Mistake: slices the positional encodings by the batch size instead of the sequence length.
    Wrong(DEC, "pe_sliced_by_batch", "raised", [("T = inputs.shape[1]", "T = inputs.shape[0]")]),
    # Mistake: keeps the first layer's attention weights instead of the last layer's.
    Wrong(
        DEC,
        "first_layer_weights",
        "last layer",
        [
            (
                "            context, attention_weights = attention(x, x, x)  # (B, T, H), (B, T, T)\n",
                "            context, w = attention(x, x, x)  # (B, T, H), (B, T, T)\n"
                "            attention_weights = w if attention is self.self_attentions[0] else attention_weights\n",
            )
        ],
    ),
    # Mistake: reuses the first layer's attention in every layer.
    Wrong(
        DEC,
        "first_attention_everywhere",
        "self_attentions",
        [("attention(x, x, x)", "self.self_attentions[0](x, x, x)")],
    ),
    # Mistake: the forward pass under torch.no_grad(), so nothing can be trained.
    Wrong(
        DEC,
        "no_grad",
        "gradients",
        [("    def forward(self, inputs):", "    @torch.no_grad()\n    def forward(self, inputs):")],
    ),
    # Mistake: natural log for the fit, vertex exponentiated with base 10.
    Wrong(FOP, "natural_log", "coefficients", [("np.polyfit(np.log10(x), y, 2)", "np.polyfit(np.log(x), y, 2)")]),
    # Mistake: returns the vertex in log space.
    Wrong(FOP, "vertex_in_log_space", "vertex", [("10 ** (-p[1] / (2 * p[0]))", "-p[1] / (2 * p[0])")]),
    # Mistake: vertex formula without the 2.
    Wrong(FOP, "vertex_without_2", "vertex", [("(2 * p[0])", "p[0]")]),
    # Mistake: returns the data point with the lowest loss instead of the fitted vertex.
    Wrong(
        FOP,
        "lowest_point",
        "vertex",
        [("optimal_params = 10 ** (-p[1] / (2 * p[0]))", "optimal_params = x[np.argmin(y)]")],
    ),
    # Mistake: x and y swapped in np.polyfit.
    Wrong(FOP, "swapped_xy", "coefficients", [("np.polyfit(np.log10(x), y, 2)", "np.polyfit(y, np.log10(x), 2)")]),
    # Mistake: natural log instead of log10.
    Wrong(
        FLL,
        "natural_log",
        "intercept",
        [("np.polyfit(np.log10(x), np.log10(y), 1)", "np.polyfit(np.log(x), np.log(y), 1)")],
    ),
    # Mistake: x and y swapped.
    Wrong(
        FLL,
        "swapped_xy",
        "slope",
        [("np.polyfit(np.log10(x), np.log10(y), 1)", "np.polyfit(np.log10(y), np.log10(x), 1)")],
    ),
    # Mistake: returns (c, m).
    Wrong(FLL, "swapped_outputs", "slope", [("return float(m), float(c)", "return float(c), float(m)")]),
    # Mistake: fits y itself, not log10(y).
    Wrong(FLL, "y_not_logged", "slope", [("np.polyfit(np.log10(x), np.log10(y), 1)", "np.polyfit(np.log10(x), y, 1)")]),
    # Mistake: returns the prefactor 10 ** c instead of the intercept.
    Wrong(FLL, "prefactor", "intercept", [("return float(m), float(c)", "return float(m), float(10 ** c)")]),
    # Mistake: no biases anywhere.
    Wrong(
        DP,
        "no_biases",
        "counts too few parameters",
        [("per_layer = 3 * (H * H + H) + (H * H + H)", "per_layer = 4 * H * H"), ("out = H * V + V", "out = H * V")],
    ),
    # Mistake: the embedding and the output layer taken as one tied matrix.
    Wrong(
        DP,
        "tied",
        "counts too few parameters",
        [("return embedding + L * per_layer + out", "return L * per_layer + out")],
    ),
    # Mistake: one layer whatever num_layers is.
    Wrong(
        DP,
        "one_layer",
        "counts too few parameters",
        [("return embedding + L * per_layer + out", "return embedding + per_layer + out")],
    ),
    # Mistake: the positional encodings counted (a buffer, not parameters).
    Wrong(DP, "counts_positions", "counts too many parameters", [("out = H * V + V", "out = H * V + V + 1000 * H")]),
    # Mistake: the MLP forgotten.
    Wrong(
        DP,
        "no_mlp",
        "counts too few parameters",
        [("per_layer = 3 * (H * H + H) + (H * H + H)", "per_layer = 3 * (H * H + H)")],
    ),
    # Mistake: not by hand: the layers built and their parameters counted.
    Wrong(
        DP,
        "builds_linears",
        "without building a model or a layer (it built Linear)",
        source="""def decoder_params(vocab_size, hidden_size, num_layers):
    layer = sum(p.numel() for p in nn.Linear(hidden_size, hidden_size).parameters())
    out = sum(p.numel() for p in nn.Linear(hidden_size, vocab_size).parameters())
    return vocab_size * hidden_size + 4 * num_layers * layer + out
""",
    ),
    # Mistake: not by hand: the model built (its class found through a helper) and counted.
    Wrong(
        DP,
        "builds_the_model",
        "without building a model or a layer (it built DecoderOnlyTransformer)",
        source="""def build(*sizes):
    return globals()["DecoderOnlyTransformer"](*sizes)


def decoder_params(vocab_size, hidden_size, num_layers):
    return sum(p.numel() for p in build(vocab_size, hidden_size, num_layers).parameters())
""",
    ),
    # Mistake: the count returned as formatted text.
    Wrong(
        DP,
        "text",
        "as a number",
        [("return embedding + L * per_layer + out", 'return f"{embedding + L * per_layer + out:,}"')],
    ),
    # Mistake: the pad positions averaged in like real tokens.
    Wrong(
        PPL,
        "pad_counted",
        "scores at pad positions changed the result",
        [(RETURN_PPL, "return math.exp(nll.mean().item())")],
    ),
    # Mistake: pad_index ignored, 0 taken as the pad.
    Wrong(
        PPL,
        "pad_zero",
        "scores at pad positions changed the result",
        [("keep = targets != pad_index", "keep = targets != 0")],
    ),
    # Mistake: the real tokens' cross-entropy divided by every position, pad included.
    Wrong(
        PPL,
        "divided_by_all",
        "each counts once",
        [(RETURN_PPL, "return math.exp(nll[keep].sum().item() / nll.numel())")],
    ),
    # Mistake: one perplexity per sentence, then their mean.
    Wrong(
        PPL,
        "mean_of_sentences",
        "each counts once",
        [(RETURN_PPL, "return sum(math.exp(n[k].mean().item()) for n, k in zip(nll, keep)) / len(nll)")],
    ),
    # Mistake: each sentence's mean cross-entropy averaged over the batch, then exp.
    Wrong(
        PPL,
        "mean_of_sentence_means",
        "each counts once",
        [(RETURN_PPL, "return math.exp(((nll * keep).sum(1) / keep.sum(1)).mean().item())")],
    ),
    # Mistake: the exp forgotten (the mean cross-entropy).
    Wrong(
        PPL,
        "no_exp",
        "logits sure of each target should give perplexity 1",
        [(RETURN_PPL, "return nll[keep].mean().item()")],
    ),
    # Log base 2 (bits), then exp, passes the visible part: catching it needs the value equal logits give, which
    # the visible test does not state (question N4(c) asks why it is the vocabulary size); the hidden check catches
    # it (tests/checks/mutants_nmt.py: ppl_log2_then_exp).
    # Mistake: softmax applied to the logits before log_softmax.
    Wrong(
        PPL,
        "softmax_twice",
        "logits sure of each target should give perplexity 1",
        [
            (
                "torch.log_softmax(logits.float(), dim=-1)",
                "torch.log_softmax(torch.softmax(logits.float(), dim=-1), dim=-1)",
            )
        ],
    ),
    # Mistake: targets shifted by one, though logits[b, t] already scores targets[b, t].
    Wrong(
        PPL,
        "shifted",
        "logits sure of each target should give perplexity 1",
        [
            (NLL, "nll = -log_probs[:, :-1].gather(-1, targets[:, 1:].unsqueeze(-1)).squeeze(-1)"),
            ("keep = targets != pad_index", "keep = targets[:, 1:] != pad_index"),
        ],
    ),
    # Mistake: argmax accuracy on the real tokens instead of the targets' probabilities.
    Wrong(
        PPL,
        "accuracy",
        "equal logits (every token equally likely) give",
        [(RETURN_PPL, "return (logits.argmax(-1) == targets)[keep].float().mean().item()")],
    ),
    # Mistake: log of softmax: a tiny probability rounds to 0 and its log to -inf.
    Wrong(
        PPL,
        "log_of_softmax",
        "should give a large, finite perplexity",
        [("torch.log_softmax(logits.float(), dim=-1)", "torch.log(torch.softmax(logits.float(), dim=-1))")],
    ),
    # Mistake: the pad targets overwritten in place, changing the caller's tensor.
    Wrong(
        PPL,
        "changes_targets",
        "should leave targets unchanged",
        [("keep = targets != pad_index  # (B, T)", "keep = targets != pad_index  # (B, T)\n    targets[~keep] = 0")],
    ),
    # Mistake: one perplexity per sentence returned, a list.
    Wrong(
        PPL,
        "per_sentence_list",
        "reading perplexity's result as one number",
        [(RETURN_PPL, "return [math.exp(n[k].mean().item()) for n, k in zip(nll, keep)]")],
    ),
]

RIGHT = [Right(g, "reference") for g in (PE, SDA, CSDA, GEN, DEC, PPL, DP, FOP, FLL)] + [
    # Alternative: F.cross_entropy with ignore_index, the perplexity as a 0-d tensor.
    Right(
        PPL,
        "cross_entropy_ignore_index",
        source="""def perplexity(logits, targets, pad_index):
    V = logits.shape[-1]
    return torch.exp(F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=pad_index))
""",
    ),
    # Alternative: base 2 on both sides, 2 ** (mean bits per token).
    Right(PPL, "bits", [(RETURN_PPL, "return 2 ** (nll[keep].mean().item() / math.log(2))")]),
    # Alternative: float64, summed cross-entropy over the count of real tokens, a loop-free mask product.
    Right(
        PPL,
        "sum_over_count",
        source="""def perplexity(logits, targets, pad_index):
    nll = F.cross_entropy(logits.double().transpose(1, 2), targets, reduction="none")  # (B, T)
    mask = (targets != pad_index).double()
    return math.exp((nll * mask).sum().item() / mask.sum().item())
""",
    ),
    # Alternative: a loop over the layers and their four Linear(H, H).
    Right(
        DP,
        "loop",
        source="""def decoder_params(vocab_size, hidden_size, num_layers):
    total = vocab_size * hidden_size
    for _ in range(num_layers * 4):
        total += hidden_size * hidden_size + hidden_size
    return total + (hidden_size + 1) * vocab_size
""",
    ),
    # Alternative: the parameters' shapes written out, the count as a 0-d tensor.
    Right(
        DP,
        "shapes_tensor",
        source="""def decoder_params(vocab_size, hidden_size, num_layers):
    shapes = [(vocab_size, hidden_size), (hidden_size, vocab_size), (vocab_size,)]
    shapes += [(hidden_size, hidden_size), (hidden_size,)] * (4 * num_layers)
    return torch.tensor(sum(math.prod(shape) for shape in shapes))
""",
    ),
    # Alternative: a float with no fraction.
    Right(
        DP, "float", edits=[("return embedding + L * per_layer + out", "return float(embedding + L * per_layer + out)")]
    ),
    # Alternative: nested Python loops in numpy, converted to a float32 tensor.
    Right(PE, "numpy_loops", source=_PE_LOOPS),
    # Alternative: every column's angle with the pair's exponent, then sin or cos picked with torch.where.
    Right(PE, "where", source=_PE_WHERE.format(exponent="(2 * (j // 2)).float()")),
    # Alternative: the "div_term" form exp(-2i ln(10000) / d) of the PyTorch tutorial.
    Right(
        PE,
        "div_term",
        [
            (
                "angles = positions / 10000 ** (two_i / hidden_size)",
                "angles = positions * torch.exp(two_i * (-math.log(10000.0) / hidden_size))",
            )
        ],
    ),
    # Alternative: einsum for both products.
    Right(
        SDA,
        "einsum",
        [
            (SCORES, "scores = torch.einsum('bqh,bth->bqt', q, k) / math.sqrt(self.hidden_size)"),
            ("torch.bmm(attention_weights, v)", "torch.einsum('bqt,bth->bqh', attention_weights, v)"),
        ],
    ),
    # Alternative: F.scaled_dot_product_attention for the context, the weights computed beside it.
    Right(SDA, "sdpa", source=_SDA_SDPA.format(causal="", mask="")),
    # Alternative: matmul with transpose(-2, -1) and torch.softmax.
    Right(
        SDA,
        "matmul",
        [
            (SCORES, "scores = q @ k.transpose(-2, -1) * self.scaling_factor"),
            ("self.softmax(scores)", "torch.softmax(scores, dim=-1)"),
        ],
    ),
    # Alternative: anchor style, a tril mask of ones and torch.where.
    Right(
        CSDA,
        "tril_where",
        [
            (MASK, "keep = torch.tril(torch.ones(n_q, n_k, device=scores.device))"),
            (
                "scores.masked_fill(future, self.neg_inf)",
                "torch.where(keep == 1, scores, torch.full_like(scores, self.neg_inf))",
            ),
        ],
    ),
    # Alternative: masked_fill with float('-inf').
    Right(
        CSDA, "minus_inf", [("scores.masked_fill(future, self.neg_inf)", "scores.masked_fill(future, float('-inf'))")]
    ),
    # Alternative: additive mask, neg_inf times an upper-triangular float matrix on the scores' device.
    Right(
        CSDA,
        "additive",
        [("scores = scores.masked_fill(future, self.neg_inf)", "scores = scores + self.neg_inf * future.float()")],
    ),
    # Alternative: F.scaled_dot_product_attention with a boolean mask (True = may attend).
    Right(
        CSDA,
        "sdpa",
        source=_SDA_SDPA.replace("class ScaledDotAttention", "class CausalScaledDotAttention")
        .replace("self.hidden_size = hidden_size", "self.hidden_size = hidden_size\n        self.neg_inf = -1e7")
        .format(
            causal=", attn_mask=torch.ones(q.shape[1], k.shape[1], dtype=torch.bool, device=q.device).tril()",
            mask="scores = scores.masked_fill(torch.ones(q.shape[1], k.shape[1], dtype=torch.bool, device=q.device).triu(1), float('-inf'))\n        ",
        ),
    ),
    # Alternative: new_full for the SOS column, hstack.
    Right(
        GEN,
        "new_full",
        [
            (
                "torch.full((B, 1), start_token, dtype=src_EOP.dtype, device=src_EOP.device)",
                "src_EOP.new_full((B, 1), start_token)",
            ),
            ("torch.cat([SOS, src_EOP, tgt_EOS[:, :-1]], dim=1)", "torch.hstack([SOS, src_EOP, tgt_EOS[:, :-1]])"),
        ],
    ),
    # Alternative: anchor style, a LongTensor column moved with .cuda() only when the flag says so.
    Right(
        GEN,
        "anchor_cuda_flag",
        [
            (
                "torch.full((B, 1), start_token, dtype=src_EOP.dtype, device=src_EOP.device)",
                "torch.LongTensor([[start_token]] * B)\n    if cuda:\n        SOS = SOS.cuda()",
            )
        ],
    ),
    # Alternative: in-place additions and an index loop over the layers.
    Right(
        DEC,
        "index_loop",
        [
            (
                "        for attention, mlp in zip(self.self_attentions, self.attention_mlps):\n"
                "            context, attention_weights = attention(x, x, x)  # (B, T, H), (B, T, T)\n"
                "            x = x + context  # (B, T, H)\n"
                "            x = x + mlp(x)  # (B, T, H)\n",
                "        for i in range(self.num_layers):\n"
                "            context, attention_weights = self.self_attentions[i](x, x, x)\n"
                "            x = x + context\n"
                "            x = x + self.attention_mlps[i](x.reshape(-1, self.hidden_size)).view_as(x)\n",
            )
        ],
    ),
    # Alternative: the positional table sliced with narrow and unsqueezed for the batch.
    Right(DEC, "narrow", [("self.positional_encodings[:T]", "self.positional_encodings.narrow(0, 0, T).unsqueeze(0)")]),
    # Alternative: closed-form least squares on [log10(x)^2, log10(x), 1].
    Right(
        FOP,
        "lstsq",
        [
            (
                "p = np.polyfit(np.log10(x), y, 2)",
                "lx = np.log10(x)\n    p = np.linalg.lstsq(np.stack([lx ** 2, lx, np.ones_like(lx)], 1), y, rcond=None)[0]",
            )
        ],
    ),
    # Alternative: the vertex as the root of the derivative.
    Right(
        FOP,
        "polyder",
        [("optimal_params = 10 ** (-p[1] / (2 * p[0]))", "optimal_params = 10 ** np.roots(np.polyder(p))[0]")],
    ),
    # Alternative: closed-form slope and intercept from means.
    Right(
        FLL,
        "means",
        [
            (
                "m, c = np.polyfit(np.log10(x), np.log10(y), 1)",
                "lx, ly = np.log10(x), np.log10(y)\n    m = ((lx - lx.mean()) * (ly - ly.mean())).sum() / ((lx - lx.mean()) ** 2).sum()\n    c = ly.mean() - m * lx.mean()",
            )
        ],
    ),
    # Alternative: returns np.polyfit's coefficient array [m, c] directly.
    Right(
        FLL,
        "array",
        [
            (
                "m, c = np.polyfit(np.log10(x), np.log10(y), 1)\n    return float(m), float(c)",
                "return np.polyfit(np.log10(x), np.log10(y), 1)",
            )
        ],
    ),
]
