"""Realistic answers for the visible checks of bert.ipynb: mistakes they must catch, alternatives they must pass.

Each entry is a whole solution cell: the reference answer with a few edits, or a source of its own. A
comment names the student's mistake (or the alternative's idea); `expect` is a fragment of the one-line
AssertionError the visible test cell must show.
"""

from tests.visible.run import Right, Wrong

ENC = "encode_sentences"
CLS = "sentence_classifier"
FRZ = "freeze_encoder"

CALL = (
    'batch = tokenizer(list(sentences), padding="max_length", truncation=True, max_length=max_len,\n'
    '                      return_tensors="pt")'
)
HIDDEN = "hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (B, T, H)"
LINEAR = "self.classifier = nn.Linear(encoder.config.hidden_size, num_labels)"
RETURN_LOSS = "return logits, F.cross_entropy(logits, labels)"

_ENC_MANUAL = """def encode_sentences(tokenizer, sentences, max_len):
    rows = [tokenizer.encode(s, truncation=True, max_length=max_len) for s in sentences]
    {pad}
    mask = torch.tensor([[1] * len(r) + [0] * (max_len - len(r)) for r in rows])
    return ids, mask
"""
_PAD_RIGHT = "ids = torch.tensor([r + [tokenizer.pad_token_id] * (max_len - len(r)) for r in rows])"


def _tokenizer_call(**changes):
    """The reference's tokenizer call with keyword arguments changed (value None: left out)."""
    kwargs = {"padding": '"max_length"', "truncation": "True", "max_length": "max_len", "return_tensors": '"pt"'}
    kwargs.update(changes)
    args = ", ".join(f"{k}={v}" for k, v in kwargs.items() if v is not None)
    return f"batch = tokenizer(list(sentences), {args})"


WRONG = [
    # Mistake: pads on the left (padding_side="left", as for decoder-only generation).
    Wrong(ENC, "pads_left", "start with the tokenizer's ids", [(CALL, _tokenizer_call(padding_side='"left"'))]),
    # Mistake: padding=True pads to the longest sentence of the batch, not to max_len.
    Wrong(ENC, "pads_to_longest", "expected shape", [(CALL, _tokenizer_call(padding="True"))]),
    # Mistake: forgets truncation=True, so a sentence longer than max_len keeps all its ids.
    Wrong(ENC, "no_truncation", "max_len", [(CALL, _tokenizer_call(truncation=None))]),
    # Mistake: truncates by slicing the encoded ids, which cuts off [SEP] of long sentences.
    Wrong(
        ENC,
        "truncates_by_slicing",
        "[SEP]",
        source=_ENC_MANUAL.replace(
            "tokenizer.encode(s, truncation=True, max_length=max_len)", "tokenizer.encode(s)[:max_len]"
        ).format(pad=_PAD_RIGHT),
    ),
    # Mistake: the attention mask marks the padding with 1 and the real tokens with 0.
    Wrong(
        ENC,
        "mask_inverted",
        "mask",
        [
            (
                'return batch["input_ids"], batch["attention_mask"]',
                'return batch["input_ids"], 1 - batch["attention_mask"]',
            )
        ],
    ),
    # Mistake: a mask of ones everywhere, so the model attends to padding.
    Wrong(
        ENC,
        "mask_all_ones",
        "mask",
        [
            (
                'return batch["input_ids"], batch["attention_mask"]',
                'return batch["input_ids"], torch.ones_like(batch["input_ids"])',
            )
        ],
    ),
    # Mistake: Python lists instead of tensors (no return_tensors="pt").
    Wrong(ENC, "lists", "tensors", [(CALL, _tokenizer_call(return_tensors=None))]),
    # Mistake: returns the tokenizer's whole BatchEncoding instead of the tuple (input_ids, attention_mask).
    Wrong(ENC, "batch_encoding", "tuple", [('return batch["input_ids"], batch["attention_mask"]', "return batch")]),
    # Mistake: hard-codes 0 as the padding id (BERT's; RoBERTa pads with 1).
    Wrong(
        ENC,
        "pad_id_zero",
        "pad_token_id",
        source=_ENC_MANUAL.format(pad="ids = torch.tensor([r + [0] * (max_len - len(r)) for r in rows])"),
    ),
    # Mistake: add_special_tokens=False drops [CLS] and [SEP], so there is no first token to classify.
    Wrong(
        ENC,
        "no_special_tokens",
        "start with the tokenizer's ids",
        [(CALL, _tokenizer_call(add_special_tokens="False"))],
    ),
    # Mistake: returns (attention_mask, input_ids).
    Wrong(
        ENC,
        "swapped_outputs",
        "start with the tokenizer's ids",
        [('return batch["input_ids"], batch["attention_mask"]', 'return batch["attention_mask"], batch["input_ids"]')],
    ),
    # Mistake: a float mask.
    Wrong(
        ENC,
        "float_mask",
        "LongTensors",
        [
            (
                'return batch["input_ids"], batch["attention_mask"]',
                'return batch["input_ids"], batch["attention_mask"].float()',
            )
        ],
    ),
    # Mistake: max_len - 2 "for [CLS] and [SEP]", though max_length already counts them.
    Wrong(ENC, "max_len_minus_2", "expected shape", [(CALL, _tokenizer_call(max_length="max_len - 2"))]),
    # Mistake: hard-codes MiniLM's hidden size 384 (passes offline, breaks with any other encoder).
    Wrong(CLS, "hidden_384", "hidden_size", [(LINEAR, "self.classifier = nn.Linear(384, num_labels)")]),
    # Mistake: hard-codes BERT-base's hidden size 768.
    Wrong(CLS, "hidden_768", "hidden_size", [(LINEAR, "self.classifier = nn.Linear(768, num_labels)")]),
    # Mistake: hard-codes the three classes of this data set.
    Wrong(CLS, "three_classes", "num_labels", [(LINEAR, "self.classifier = nn.Linear(encoder.config.hidden_size, 3)")]),
    # Mistake: the last position (hidden[:, -1]), as for a left-to-right language model.
    Wrong(CLS, "last_token", "first token", [("self.classifier(hidden[:, 0])", "self.classifier(hidden[:, -1])")]),
    # Mistake: mean-pools every position, padding included.
    Wrong(CLS, "mean_pool", "first token", [("self.classifier(hidden[:, 0])", "self.classifier(hidden.mean(dim=1))")]),
    # Mistake: never passes attention_mask on to the encoder, so [CLS] attends to padding.
    Wrong(
        CLS,
        "mask_not_passed",
        "attention_mask",
        [(HIDDEN, "hidden = self.encoder(input_ids=input_ids).last_hidden_state  # (B, T, H)")],
    ),
    # Mistake: returns softmax probabilities as the logits.
    Wrong(
        CLS,
        "softmax_logits",
        "probabilities",
        [
            (
                "logits = self.classifier(hidden[:, 0])  # (B, num_labels)",
                "logits = self.classifier(hidden[:, 0]).softmax(dim=-1)  # (B, num_labels)",
            )
        ],
    ),
    # Mistake: softmax before F.cross_entropy, which applies log-softmax itself.
    Wrong(
        CLS,
        "softmax_before_loss",
        "cross-entropy",
        [(RETURN_LOSS, "return logits, F.cross_entropy(logits.softmax(dim=-1), labels)")],
    ),
    # Mistake: sums the cross-entropy over the batch.
    Wrong(
        CLS,
        "summed_loss",
        "cross-entropy",
        [(RETURN_LOSS, "return logits, F.cross_entropy(logits, labels, reduction='sum')")],
    ),
    # Mistake: ignores labels and never returns the loss.
    Wrong(CLS, "no_loss", "(logits, loss)", [(RETURN_LOSS, "return (logits,)")]),
    # Mistake: returns (loss, logits).
    Wrong(CLS, "swapped_outputs", "logits", [(RETURN_LOSS, "return F.cross_entropy(logits, labels), logits")]),
    # Mistake: returns the logits tensor itself instead of the tuple (logits,).
    Wrong(CLS, "bare_logits", "(logits,)", [("            return (logits,)", "            return logits")]),
    # Mistake: the encoder runs under torch.no_grad(), so "full fine-tuning" trains only the classifier.
    Wrong(CLS, "encoder_no_grad", "gradient", [(HIDDEN, "with torch.no_grad():\n            " + HIDDEN)]),
    # Mistake: leaves the encoder trainable (returns the model as is).
    Wrong(
        FRZ,
        "no_op",
        "only the classifier",
        [('        param.requires_grad = name.startswith("classifier.")', "        pass")],
    ),
    # Mistake: freezes the classifier too, so nothing can learn.
    Wrong(
        FRZ,
        "freezes_everything",
        "only the classifier",
        [('param.requires_grad = name.startswith("classifier.")', "param.requires_grad = False")],
    ),
    # Mistake: freezes only the embedding layer.
    Wrong(
        FRZ,
        "embeddings_only",
        "only the classifier",
        [('param.requires_grad = name.startswith("classifier.")', 'param.requires_grad = "embeddings" not in name')],
    ),
    # Mistake: sets a requires_grad attribute on the module, which changes no parameter.
    Wrong(
        FRZ,
        "module_attribute",
        "only the classifier",
        [
            (
                '    for name, param in model.named_parameters():\n        param.requires_grad = name.startswith("classifier.")',
                "    model.encoder.requires_grad = False",
            )
        ],
    ),
]

RIGHT = [Right(g, "reference") for g in (ENC, CLS, FRZ)] + [
    # Alternative: tokenizer.encode per sentence with truncation, padded by hand with pad_token_id.
    Right(ENC, "manual", source=_ENC_MANUAL.format(pad=_PAD_RIGHT)),
    # Alternative: padding and truncation asked for separately, the mask converted to long explicitly.
    Right(
        ENC,
        "explicit_long",
        [
            (
                'return batch["input_ids"], batch["attention_mask"]',
                'return batch["input_ids"].long(), batch["attention_mask"].to(torch.long)',
            )
        ],
    ),
    # Alternative: the encoder's pooler output over [CLS] where it has one (accepted by the contract).
    Right(
        CLS,
        "pooler",
        [
            (HIDDEN, "out = self.encoder(input_ids, attention_mask=attention_mask)"),
            (
                "self.classifier(hidden[:, 0])",
                "self.classifier(out.pooler_output if getattr(out, 'pooler_output', None) is not None else out.last_hidden_state[:, 0])",
            ),
        ],
    ),
    # Alternative: positional arguments and outputs[0][:, 0, :], loss with nn.CrossEntropyLoss.
    Right(
        CLS,
        "positional",
        [
            (HIDDEN, "hidden = self.encoder(input_ids, attention_mask)[0]"),
            ("self.classifier(hidden[:, 0])", "self.classifier(hidden[:, 0, :])"),
            (RETURN_LOSS, "return logits, nn.CrossEntropyLoss()(logits, labels)"),
        ],
    ),
    # Alternative: freeze everything, then unfreeze the classifier.
    Right(
        FRZ,
        "freeze_then_unfreeze",
        [
            (
                '    for name, param in model.named_parameters():\n        param.requires_grad = name.startswith("classifier.")',
                "    model.requires_grad_(False)\n    model.classifier.requires_grad_(True)",
            )
        ],
    ),
]

# ------------------------------------------------------------------------------------------ encode_pairs
PAIRS = "encode_pairs"
PAIRS_RETURN = 'return batch["input_ids"], batch["token_type_ids"], batch["attention_mask"]'
_PAIRS_MANUAL = """def encode_pairs(tokenizer, first, second, max_len):
    ids, types, mask = [], [], []
    for a, b in zip(first, second):
        a = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(a))
        b = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(b))
        while len(a) + len(b) > max_len - 3:  # the longer sentence loses its last id
            (a if len(a) > len(b) else b).pop()
        row = [tokenizer.cls_token_id, *a, tokenizer.sep_token_id, *b, tokenizer.sep_token_id]
        pad = max_len - len(row)
        ids.append(row + [tokenizer.pad_token_id] * pad)
        types.append({types})
        mask.append([1] * len(row) + [0] * pad)
    return torch.tensor(ids), torch.tensor(types), torch.tensor(mask)
"""
_TYPES_RIGHT = "[0] * (len(a) + 2) + [1] * (len(b) + 1) + [0] * pad"

WRONG += [
    # Mistake: token_type_ids all 0, as for one sentence.
    Wrong(
        PAIRS,
        "types_all_zero",
        "token_type_ids",
        [(PAIRS_RETURN, 'return batch["input_ids"], torch.zeros_like(batch["input_ids"]), batch["attention_mask"]')],
    ),
    # Mistake: segment 1 starts on the first [SEP].
    Wrong(
        PAIRS,
        "types_from_first_sep",
        "token_type_ids",
        source=_PAIRS_MANUAL.format(types="[0] * (len(a) + 1) + [1] * (len(b) + 2) + [0] * pad"),
    ),
    # Mistake: the final [SEP] is left out of segment 1.
    Wrong(
        PAIRS,
        "final_sep_type_zero",
        "token_type_ids",
        source=_PAIRS_MANUAL.format(types="[0] * (len(a) + 2) + [1] * len(b) + [0] * (pad + 1)"),
    ),
    # Mistake: forgets the [SEP] after the second sentence.
    Wrong(
        PAIRS,
        "no_final_sep",
        "input_ids",
        source=_PAIRS_MANUAL.format(types="[0] * (len(a) + 2) + [1] * len(b) + [0] * pad")
        .replace("*b, tokenizer.sep_token_id]", "*b]")
        .replace("max_len - 3", "max_len - 2"),
    ),
    # Mistake: pads with id 0 instead of tokenizer.pad_token_id.
    Wrong(
        PAIRS,
        "pad_id_zero",
        "input_ids",
        source=_PAIRS_MANUAL.format(types=_TYPES_RIGHT).replace("[tokenizer.pad_token_id] * pad", "[0] * pad"),
    ),
    # Mistake: a mask of ones everywhere.
    Wrong(
        PAIRS,
        "mask_all_ones",
        "attention_mask",
        [(PAIRS_RETURN, 'return batch["input_ids"], batch["token_type_ids"], torch.ones_like(batch["input_ids"])')],
    ),
    # Mistake: truncates by slicing the encoded pair, which cuts off the final [SEP].
    Wrong(
        PAIRS,
        "slices",
        "[SEP]",
        source="""def encode_pairs(tokenizer, first, second, max_len):
    out = [tokenizer(a, b) for a, b in zip(first, second)]
    keys = ("input_ids", "token_type_ids", "attention_mask")
    rows = [[o[k][:max_len] for k in keys] for o in out]
    pads = (tokenizer.pad_token_id, 0, 0)
    return tuple(torch.tensor([r[j] + [pads[j]] * (max_len - len(r[j])) for r in rows]) for j in range(3))
""",
    ),
    # Mistake: returns (input_ids, attention_mask) as encode_sentences does.
    Wrong(
        PAIRS,
        "two_outputs",
        "three LongTensors",
        [(PAIRS_RETURN, 'return batch["input_ids"], batch["attention_mask"]')],
    ),
]
RIGHT += [
    Right(PAIRS, "reference"),
    # Alternative: a loop of one's own, truncating the longer sentence id by id.
    Right(PAIRS, "manual", source=_PAIRS_MANUAL.format(types=_TYPES_RIGHT)),
    # Alternative: a list of (a, b) tuples, and lists turned into tensors afterwards.
    Right(
        PAIRS,
        "zipped",
        source="""def encode_pairs(tokenizer, first, second, max_len):
    batch = tokenizer(list(zip(first, second)), padding="max_length", truncation=True, max_length=max_len)
    return tuple(torch.tensor(batch[k]) for k in ("input_ids", "token_type_ids", "attention_mask"))
""",
    ),
]
