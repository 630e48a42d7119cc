"""Hidden checks for bert.ipynb: encode_sentences, encode_pairs, SentenceClassifier, freeze_encoder.

Every check builds what it needs itself (a tiny WordPiece tokenizer, tiny random BERT and RoBERTa
encoders from autograder.content.tinymodels), so it needs no hub and runs in well under two seconds. Results
are compared with autograder.content.reference.bert; when they differ, the message names the likely mistake.
"""

import torch
import torch.nn as nn

from autograder.checks import (
    CheckFailed,
    check,
    differing,
    expect,
    max_abs_diff,
    pristine,
    require_notebook_defined,
    tensors_close,
)
from autograder.content.reference import bert as ref
from autograder.content.tinymodels import tiny_encoder, tiny_tokenizer

# Sentences for the tiny vocabulary: one longer than every max_len below, one with an unknown word,
# several lengths. `fourteen` is two word pieces (four ##teen).
SENTENCES = [
    "one plus two",
    "what is the sum of fourteen and seventeen and nine",
    "ten minus three",
    "zero",
    "eight times six is what",
    "nine plus unknownword",
]
ENCODE_CASES = [
    (SENTENCES, 7),  # some rows truncated, some padded
    (SENTENCES[2:4], 9),  # every row shorter than max_len: pad to max_len, not to the longest row
    (["five minus four"], 5),  # exactly max_len tokens with [CLS] and [SEP]
]
# (encoder kind, num_labels, seed): BERT and RoBERTa, several class counts.
CLASSIFIER_CASES = [("bert", 2, 0), ("roberta", 5, 1), ("bert", 3, 2)]


def _exact_tensor(x, name):
    """x must be a plain torch.Tensor (not a list, not a subclass)."""
    if pristine.type(x) is not pristine.Tensor:
        raise CheckFailed(f"{name} should be a torch.Tensor, got {pristine.type(x).__name__}")


def _row(x, i):
    """Row i of tensor x as a list of ints."""
    return [int(v) for v in pristine.tensor_to(pristine.tensor_detach(x), "cpu")[i].tolist()]


def _is_sequence(x, n):
    """True when x is a tuple or list of n items."""
    return pristine.type(x) in (tuple, list) and pristine.len(x) == n


def _describe(x):
    """Type name of x, with its length for a tuple or list."""
    what = pristine.type(x).__name__
    return what + (f" of length {pristine.len(x)}" if pristine.type(x) in (tuple, list) else "")


def _first_bad_row(got, want):
    """Index of the first row where got and want differ, or None."""
    for i in range(want.shape[0]):
        if not pristine.equal(got[i], want[i]):
            return i
    return None


# ----------------------------------------------------------------------------------------- encode_sentences


def _explain_ids(got, want, tokenizer, sentences, max_len):
    """One line naming the likely mistake behind wrong input_ids."""
    pad, cls, sep = tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id
    left = ref.encode_sentences(_left_padded_tokenizer(), sentences, max_len)[0]
    if pristine.equal(got, left):
        return "the padding is on the left; put [CLS] first and pad on the right, after [SEP]"
    if not pristine.equal(got[:, 0], want[:, 0]):
        return f"every row should start with the [CLS] id {cls}: keep the tokenizer's special tokens"
    is_pad = want == pad
    if not pristine.equal(got[is_pad], want[is_pad]):
        seen = sorted({int(v) for v in got[is_pad].tolist()})
        return f"padding positions should hold tokenizer.pad_token_id = {pad}, got {seen}"
    if not pristine.equal(got[:, -1][~is_pad[:, -1]], want[:, -1][~is_pad[:, -1]]):
        return (
            f"a truncated sentence should still end with the [SEP] id {sep}, as "
            f"tokenizer(..., truncation=True, max_length=max_len) does"
        )
    i = _first_bad_row(got, want)
    return f"input_ids row {i} ({sentences[i]!r}, max_len={max_len}): expected {_row(want, i)}, got {_row(got, i)}"


def _left_padded_tokenizer():
    """The check's tokenizer, padding on the left."""
    left = tiny_tokenizer()
    left.padding_side = "left"
    return left


@check("encode_sentences")
def check_encode_sentences(encode_sentences) -> None:
    """encode_sentences(tokenizer, sentences, max_len) -> (input_ids, attention_mask), both (N, max_len)."""
    require_notebook_defined(encode_sentences, "encode_sentences")
    for sentences, max_len in ENCODE_CASES:
        want_ids, want_mask = ref.encode_sentences(tiny_tokenizer(), sentences, max_len)
        tokenizer = tiny_tokenizer()  # a fresh one: whatever the student's code does to it stays here
        got = encode_sentences(tokenizer, list(sentences), max_len)
        call = f"encode_sentences(tokenizer, {pristine.len(sentences)} sentences, max_len={max_len})"
        if not _is_sequence(got, 2):
            raise CheckFailed(f"{call} should return a tuple (input_ids, attention_mask), got {_describe(got)}")
        ids, mask = got
        _exact_tensor(ids, "input_ids")
        _exact_tensor(mask, "attention_mask")
        for name, x in (("input_ids", ids), ("attention_mask", mask)):
            expect(x.dtype == torch.long, f"{name} should be a LongTensor (torch.int64), got {x.dtype}")
            if tuple(x.shape) != tuple(want_ids.shape):
                n, width = tuple(want_ids.shape)
                hint = ""
                if x.dim() == 2 and x.shape[1] > max_len:
                    hint = ": truncate sentences longer than max_len"
                elif x.dim() == 2 and x.shape[1] < max_len:
                    hint = ": pad every row to exactly max_len tokens, [CLS] and [SEP] included"
                raise CheckFailed(f"{call}: {name} should have shape ({n}, {width}), got {tuple(x.shape)}{hint}")
        if pristine.equal(ids, want_mask) and pristine.equal(mask, want_ids):
            raise CheckFailed(f"{call} returned (attention_mask, input_ids): return (input_ids, attention_mask)")
        if not pristine.equal(ids, want_ids):
            raise CheckFailed(_explain_ids(ids, want_ids, tiny_tokenizer(), sentences, max_len))
        if not pristine.equal(mask, want_mask):
            if pristine.equal(mask, 1 - want_mask):
                raise CheckFailed("attention_mask is inverted: it should be 1 on real tokens and 0 on padding")
            i = _first_bad_row(mask, want_mask)
            raise CheckFailed(
                f"attention_mask row {i} should be 1 on real tokens ([CLS] ... [SEP]) and 0 on "
                f"padding: expected {_row(want_mask, i)}, got {_row(mask, i)}"
            )


# ----------------------------------------------------------------------------------------- encode_pairs

# (first sentences, second sentences, max_len). The truncated pairs keep an even budget for the two sentences
# (max_len - 3), or one sentence within half of it, so that every "longest first" rule gives the tokenizer's ids.
PAIR_CASES = [
    (
        ["one plus two", "what is the sum of four and six", "zero"],
        ["ten minus three", "nine", "eight times six is what"],
        14,
    ),
    (
        ["what is the sum of fourteen and seventeen and nine", "one plus two"],
        ["one plus two", "what is the sum of fourteen and seventeen and nine"],
        9,
    ),  # row 0: the first sentence is the longer one, row 1: the second
    (["five minus four"], ["three"], 7),  # exactly max_len
    (["nine plus unknownword"], ["two times two is four"], 10),  # only the second sentence is cut
]
PAIR_NAMES = ("input_ids", "token_type_ids", "attention_mask")


def _rows(x):
    """A 2-D tensor as a list of lists of ints."""
    return [[int(v) for v in row] for row in pristine.tensor_to(pristine.tensor_detach(x), "cpu").tolist()]


def _pair_reference(first, second, max_len, **tokenizer_settings):
    """The reference's (ids, types, mask) as lists of rows, with the tokenizer's attributes changed."""
    tokenizer = tiny_tokenizer()
    for name, value in tokenizer_settings.items():
        setattr(tokenizer, name, value)
    return [_rows(x) for x in ref.encode_pairs(tokenizer, first, second, max_len)]


def _first_bad_list_row(got, want):
    """Index of the first row where two lists of rows differ."""
    return next(i for i, (g, w) in enumerate(zip(got, want)) if g != w)


def _first_difference(got_row, want_row):
    """The first position where two rows differ."""
    return next(p for p, (g, w) in enumerate(zip(got_row, want_row)) if g != w)


def _explain_pair_ids(got, want, first, second, max_len):
    """One line naming the likely mistake behind wrong pair input_ids (never the expected ids)."""
    tokenizer = tiny_tokenizer()
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
    if got == _pair_reference(first, second, max_len, padding_side="left")[0]:
        return "the padding is on the left; put [CLS] first and pad on the right, after the final [SEP]"
    if any(row[0] != cls for row in got):
        return "every row should start with the [CLS] id: keep the tokenizer's special tokens"
    if got == _pair_reference(second, first, max_len)[0]:
        return "the two sentences are swapped: first[i] comes right after [CLS], second[i] after the first [SEP]"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.count(cls) > 1:
            return (
                f"row {i} has [CLS] inside the pair: encode each pair as one input, [CLS] a [SEP] b [SEP], not "
                f"each sentence on its own"
            )
        if g.count(sep) != w.count(sep):
            return f"row {i} has {g.count(sep)} [SEP] id(s): a pair is [CLS] a [SEP] b [SEP], with a [SEP] after each sentence"
        padding = [p for p, v in enumerate(w) if v == pad]
        if [g[p] for p in padding] != [pad] * len(padding):
            seen = sorted({g[p] for p in padding})
            return f"padding positions (after the final [SEP]) should hold tokenizer.pad_token_id, row {i} has {seen} there"
    truncated = [i for i, (a, b) in enumerate(zip(first, second)) if len(tokenizer(a, b)["input_ids"]) > max_len]
    if truncated and got == _pair_reference(first, second, max_len, truncation_side="left")[0]:
        return (
            "a pair longer than max_len lost ids from the start of its longer sentence; they come off its end "
            "(the tokenizer's truncation_side is 'right')"
        )
    i = _first_bad_list_row(got, want)
    if i in truncated:
        return (
            f"row {i} (a pair longer than max_len={max_len}) is not truncated as tokenizer(first, second, "
            f"truncation=True, max_length=max_len) truncates it: the longer sentence loses ids from its end until "
            f"the pair fits, and both [SEP] stay"
        )
    p = _first_difference(got[i], want[i])
    return (
        f"input_ids row {i} ({first[i]!r}, {second[i]!r}, max_len={max_len}) is not [CLS] a [SEP] b [SEP] then "
        f"padding: it differs at position {p} (id {got[i][p]} there)"
    )


def _explain_pair_types(got, want, ids):
    """One line naming the likely mistake behind wrong token_type_ids (never the expected row)."""
    sep, pad = tiny_tokenizer().sep_token_id, tiny_tokenizer().pad_token_id
    values = sorted({v for row in got for v in row})
    if not set(values) <= {0, 1}:
        return f"token_type_ids should hold 0 (first segment) and 1 (second segment) only, got the values {values}"
    if all(v == 0 for row in got for v in row):
        return "token_type_ids are all 0: the second sentence and the final [SEP] should have type 1"
    for i, (g, w, row) in enumerate(zip(got, want, ids)):
        if g == w:
            continue
        seps = [p for p, v in enumerate(row) if v == sep]
        if any(g[p] for p, v in enumerate(row) if v == pad):
            return f"token_type_ids row {i} is 1 on padding; padding has type 0"
        if g[seps[0]] == 1:
            return (
                f"token_type_ids row {i} is 1 on the first [SEP]: it belongs to the first segment (type 0); type 1 "
                f"starts on the second sentence's first token"
            )
        if g[seps[-1]] == 0:
            return f"token_type_ids row {i} is 0 on the final [SEP]: it belongs to the second segment (type 1)"
        return (
            f"token_type_ids row {i} should be 0 from [CLS] to the first [SEP] and 1 from the next token to the "
            f"final [SEP]: it differs at position {_first_difference(g, w)}"
        )
    return "token_type_ids differ from the pair's segments"


@check("encode_pairs")
def check_encode_pairs(encode_pairs) -> None:
    """encode_pairs(tokenizer, first, second, max_len) -> (input_ids, token_type_ids, attention_mask), (N, max_len)."""
    require_notebook_defined(encode_pairs, "encode_pairs")
    for first, second, max_len in PAIR_CASES:
        want = _pair_reference(first, second, max_len)
        got = encode_pairs(tiny_tokenizer(), list(first), list(second), max_len)  # a fresh tokenizer per call
        call = f"encode_pairs(tokenizer, {pristine.len(first)} first, {pristine.len(second)} second, max_len={max_len})"
        if not _is_sequence(got, 3):
            raise CheckFailed(
                f"{call} should return a tuple (input_ids, token_type_ids, attention_mask), got {_describe(got)}"
            )
        for name, x in zip(PAIR_NAMES, got):
            _exact_tensor(x, name)
            expect(x.dtype == torch.long, f"{name} should be a LongTensor (torch.int64), got {x.dtype}")
            if tuple(x.shape) != (len(first), max_len):
                hint = ""
                if x.dim() == 2 and x.shape[1] > max_len:
                    hint = ": truncate pairs longer than max_len"
                elif x.dim() == 2 and x.shape[1] < max_len:
                    hint = ": pad every row to exactly max_len ids, the three special tokens included"
                raise CheckFailed(
                    f"{call}: {name} should have shape ({len(first)}, {max_len}), got {tuple(x.shape)}{hint}"
                )
        ids, types, mask = (_rows(x) for x in got)
        if (ids, types, mask) != tuple(want) and sorted(map(str, (ids, types, mask))) == sorted(map(str, want)):
            raise CheckFailed(
                f"{call} returned its three tensors in another order: return (input_ids, token_type_ids, "
                f"attention_mask)"
            )
        if ids != want[0]:
            raise CheckFailed(_explain_pair_ids(ids, want[0], first, second, max_len))
        if types != want[1]:
            raise CheckFailed(_explain_pair_types(types, want[1], ids))
        if mask != want[2]:
            if mask == [[1 - v for v in row] for row in want[2]]:
                raise CheckFailed("attention_mask is inverted: it should be 1 on real tokens and 0 on padding")
            i = _first_bad_list_row(mask, want[2])
            raise CheckFailed(
                f"attention_mask row {i} should be 1 on real tokens ([CLS] a [SEP] b [SEP]) and 0 on padding: it differs "
                f"at position {_first_difference(mask[i], want[2][i])}"
            )


# ----------------------------------------------------------------------------------------- SentenceClassifier


def _batch(kind, vocab_size=64, lengths=(7, 5, 3, 6), seed=0):
    """Right-padded input_ids (B, T) and attention_mask (B, T) for a tiny encoder of `kind`."""
    cls, sep, pad = (1, 2, 0) if kind == "bert" else (0, 2, 1)
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab_size, (len(lengths), max(lengths)), generator=g)  # (B, T)
    mask = torch.zeros_like(ids)  # (B, T)
    for i, n in enumerate(lengths):
        ids[i, 0], ids[i, n - 1] = cls, sep
        ids[i, n:] = pad
        mask[i, :n] = 1
    return ids, mask


def _candidates(encoder, classifier, ids, mask):
    """Accepted logits (first token's final hidden state, pooler output) and (mistake, wrong logits) pairs."""
    with torch.no_grad():
        out = encoder(input_ids=ids, attention_mask=mask)
        no_mask = encoder(input_ids=ids)
        hidden = out.last_hidden_state  # (B, T, H)
        m = torch.ones_like(ids) if mask is None else mask
        weights = m.unsqueeze(-1).to(hidden.dtype)  # (B, T, 1)
        last = m.sum(1) - 1  # (B,)
        accepted = [classifier(hidden[:, 0])]
        if getattr(out, "pooler_output", None) is not None:
            accepted.append(classifier(out.pooler_output))
        wrong = [
            (
                "mean-pools the tokens instead of taking the first token",
                classifier((hidden * weights).sum(1) / weights.sum(1)),
            ),
            ("averages over every position instead of taking the first token", classifier(hidden.mean(1))),
            ("uses the last position instead of the first token", classifier(hidden[:, -1])),
            (
                "uses the last real token instead of the first token",
                classifier(hidden[torch.arange(ids.shape[0]), last]),
            ),
            ("ignores attention_mask: pass it on to the encoder", classifier(no_mask.last_hidden_state[:, 0])),
        ]
        if getattr(no_mask, "pooler_output", None) is not None:
            wrong.append(("ignores attention_mask: pass it on to the encoder", classifier(no_mask.pooler_output)))
        wrong += [
            ("applies softmax to the logits: return the raw classifier outputs", pristine.softmax(a, -1))
            for a in accepted
        ]
    return accepted, wrong


def _close(a, b):
    """True when a is a plain tensor with b's shape and values (within tolerance)."""
    return pristine.type(a) is pristine.Tensor and tensors_close(a, b)


def _expect_logits(logits, encoder, classifier, ids, mask, num_labels, call):
    """logits must match one accepted form; returns the accepted candidates, else names the mistake."""
    _exact_tensor(logits, "logits")
    B = ids.shape[0]
    if tuple(logits.shape) != (B, num_labels):
        raise CheckFailed(f"{call}: logits should have shape ({B}, {num_labels}), got {tuple(logits.shape)}")
    accepted, wrong = _candidates(encoder, classifier, ids, mask)
    if any(_close(logits, a) for a in accepted):
        return accepted
    for mistake, value in wrong:
        if _close(logits, value):
            raise CheckFailed(f"{call}: your forward {mistake}")
    diff = min(max_abs_diff(logits, a) for a in accepted)
    raise CheckFailed(
        f"{call}: logits should be classifier(final hidden state of the first token) or "
        f"classifier(pooler_output); yours differ by up to {diff:.3g}"
    )


def _expect_loss(loss, logits, labels, call):
    """loss must be the mean cross-entropy of logits; otherwise name the likely mistake."""
    _exact_tensor(loss, "loss")
    if loss.numel() != 1:
        raise CheckFailed(f"{call}: loss should be a scalar tensor, got shape {tuple(loss.shape)}")
    with torch.no_grad():
        want = pristine.cross_entropy(logits, labels)
        wrong = {
            "applies softmax first: F.cross_entropy expects raw logits": pristine.cross_entropy(
                pristine.softmax(logits, -1), labels
            ),
            "is summed over the batch: use the mean cross-entropy": pristine.cross_entropy(
                logits, labels, reduction="sum"
            ),
            "feeds raw logits to nll_loss: use F.cross_entropy": torch.nn.functional.nll_loss(logits, labels),
        }
    got = pristine.tensor_detach(loss).reshape(())
    if _close(got, want):
        return
    for mistake, value in wrong.items():
        if _close(got, value):
            raise CheckFailed(f"{call}: the loss {mistake}")
    shown, seen = differing(pristine.tensor_item(want), pristine.tensor_item(got), digits=4)
    raise CheckFailed(f"{call}: loss should be the mean cross-entropy {shown}, got {seen}")


@check("sentence_classifier")
def check_sentence_classifier(SentenceClassifier) -> None:
    """SentenceClassifier(encoder, num_labels) on tiny BERT and RoBERTa encoders, with and without labels."""
    require_notebook_defined(SentenceClassifier, "SentenceClassifier")
    for kind, num_labels, seed in CLASSIFIER_CASES:
        encoder = tiny_encoder(kind, seed=seed)
        H = encoder.config.hidden_size
        name = f"SentenceClassifier(<tiny {kind} encoder, hidden_size={H}>, num_labels={num_labels})"
        model = SentenceClassifier(encoder, num_labels)
        expect(pristine.isinstance(model, pristine.Module), f"{name} should be an nn.Module")
        classifier = getattr(model, "classifier", None)
        if not pristine.isinstance(classifier, nn.Linear):
            raise CheckFailed(f"{name}.classifier should be an nn.Linear, got {pristine.type(classifier).__name__}")
        shape = (classifier.in_features, classifier.out_features)
        if shape != (H, num_labels):
            hint = (
                "use encoder.config.hidden_size for in_features"
                if shape[0] != H
                else "use num_labels for out_features, not a fixed number"
            )
            raise CheckFailed(
                f"{name}.classifier should be nn.Linear({H}, {num_labels}), "
                f"got nn.Linear({shape[0]}, {shape[1]}): {hint}"
            )
        expect(getattr(model, "encoder", None) is encoder, f"{name}.encoder should be the encoder passed in")
        model.to("cpu").eval()  # the check's inputs live on the CPU, whatever DEVICE the student used

        ids, mask = _batch(kind, encoder.config.vocab_size, seed=seed)
        labels = torch.arange(ids.shape[0]) % num_labels
        for kwargs, m in (({"attention_mask": mask}, mask), ({}, None)):
            call = f"{name}(input_ids{', attention_mask' if kwargs else ''})"
            with torch.no_grad():
                out = model(ids, **kwargs)
            if not _is_sequence(out, 1):
                raise CheckFailed(f"{call} without labels should return a tuple (logits,), got {_describe(out)}")
            _expect_logits(out[0], encoder, classifier, ids, m, num_labels, call)

        call = f"{name}(input_ids, attention_mask, labels)"
        model.zero_grad(set_to_none=True)
        out = model(ids, attention_mask=mask, labels=labels)
        if not _is_sequence(out, 2):
            raise CheckFailed(f"{call} should return a tuple (logits, loss), got {_describe(out)}")
        logits, loss = out
        if pristine.type(logits) is pristine.Tensor and logits.dim() == 0:
            raise CheckFailed(f"{call} should return (logits, loss) in that order, got (loss, logits)")
        accepted = _expect_logits(logits, encoder, classifier, ids, mask, num_labels, call)
        target = next(a for a in accepted if _close(logits, a))
        _expect_loss(loss, target, labels, call)
        expect(loss.requires_grad, f"{call}: the loss has no gradient; do not compute it under torch.no_grad()")
        loss.backward()
        grad = classifier.weight.grad
        expect(
            grad is not None and max_abs_diff(grad, torch.zeros_like(grad)) > 0,
            f"{call}: loss.backward() gives the classifier no gradient",
        )
        emb = encoder.get_input_embeddings().weight.grad
        expect(
            emb is not None and max_abs_diff(emb, torch.zeros_like(emb)) > 0,
            f"{call}: loss.backward() gives the encoder no gradient; don't run it under torch.no_grad() "
            f"or detach its output, fine-tuning needs it",
        )


# ----------------------------------------------------------------------------------------- freeze_encoder


@check("freeze_encoder")
def check_freeze_encoder(freeze_encoder) -> None:
    """freeze_encoder(model) leaves exactly the classifier's parameters trainable, weights untouched."""
    require_notebook_defined(freeze_encoder, "freeze_encoder")
    for kind, num_labels, seed in CLASSIFIER_CASES[:2]:
        with torch.random.fork_rng(devices=[]):
            pristine.manual_seed(seed)
            model = ref.SentenceClassifier(tiny_encoder(kind, seed=seed), num_labels)
        before = {name: p.detach().clone() for name, p in model.named_parameters()}
        classifier = model.classifier
        freeze_encoder(model)
        expect(model.classifier is classifier, "freeze_encoder should keep model.classifier, not replace it")
        params = dict(model.named_parameters())
        expect(sorted(params) == sorted(before), "freeze_encoder should not add or remove parameters")
        trainable = [n for n, p in params.items() if p.requires_grad]
        should = [n for n in params if n.startswith("classifier.")]
        still = [n for n in trainable if n not in should]
        frozen_classifier = [n for n in should if n not in trainable]
        if frozen_classifier:
            raise CheckFailed(
                f"{', '.join(frozen_classifier)} should stay trainable (requires_grad=True), only the encoder is frozen"
            )
        if still:
            total = pristine.len([n for n in params if n not in should])
            raise CheckFailed(
                f"every encoder parameter should have requires_grad=False, but {pristine.len(still)} "
                f"of {total} are still trainable, e.g. {still[0]}"
            )
        changed = [n for n, p in params.items() if not pristine.equal(p.detach(), before[n])]
        expect(not changed, f"freeze_encoder should not change any weights, but {changed[:1]} changed")
