"""Catalogue for the bert checks, in the shape of tests/checks/harness.py: correct alternatives that must pass
(`Correct`) and realistic wrong answers that must fail (`Mutant`).

Each answer is (label, the object the student's cell defines); the label is the object's name. Each wrong answer
carries a fragment of the one-line message the check should give, and a comment naming the student mistake it
stands for.
"""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from tests.checks.harness import Catalogue, Cell, Correct, Mutant

# ------------------------------------------------------------------------------------------ encode_sentences


def _pad_manually(tokenizer, rows, max_len):
    ids = [r + [tokenizer.pad_token_id] * (max_len - len(r)) for r in rows]
    mask = [[1] * len(r) + [0] * (max_len - len(r)) for r in rows]
    return torch.tensor(ids), torch.tensor(mask)


def encode_tokenizer_call(tokenizer, sentences, max_len):
    batch = tokenizer(sentences, padding="max_length", truncation=True, max_length=max_len, return_tensors="pt")
    return batch["input_ids"], batch["attention_mask"]


def encode_lists_then_tensor(tokenizer, sentences, max_len):
    batch = tokenizer(sentences, padding="max_length", truncation=True, max_length=max_len)
    return torch.tensor(batch["input_ids"]), torch.tensor(batch["attention_mask"])


def encode_manual_loop(tokenizer, sentences, max_len):
    rows = [tokenizer.encode(s, truncation=True, max_length=max_len) for s in sentences]
    return _pad_manually(tokenizer, rows, max_len)


def encode_from_tokens(tokenizer, sentences, max_len):
    rows = []
    for s in sentences:
        pieces = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(s))[: max_len - 2]
        rows.append([tokenizer.cls_token_id] + pieces + [tokenizer.sep_token_id])
    return _pad_manually(tokenizer, rows, max_len)


def encode_tokenizer_pad(tokenizer, sentences, max_len):
    rows = [tokenizer.encode(s, truncation=True, max_length=max_len) for s in sentences]
    batch = tokenizer.pad({"input_ids": rows}, padding="max_length", max_length=max_len, return_tensors="pt")
    return batch["input_ids"], batch["attention_mask"]


ENCODE_CORRECT = [
    Correct("encode_tokenizer_call", encode_tokenizer_call),
    Correct("encode_lists_then_tensor", encode_lists_then_tensor),
    Correct("encode_manual_loop", encode_manual_loop),
    Correct("encode_from_tokens", encode_from_tokens),
    Correct("encode_tokenizer_pad", encode_tokenizer_pad),
]


def encode_left_padding(tokenizer, sentences, max_len):
    # Mistake: pads on the left (padding_side="left", as for decoder-only generation).
    batch = tokenizer(
        sentences, padding="max_length", truncation=True, max_length=max_len, padding_side="left", return_tensors="pt"
    )
    return batch["input_ids"], batch["attention_mask"]


def encode_no_truncation(tokenizer, sentences, max_len):
    # Mistake: forgets truncation=True, so long sentences keep all their tokens.
    rows = [tokenizer.encode(s) for s in sentences]
    width = max(max_len, max(len(r) for r in rows))
    return _pad_manually(tokenizer, rows, width)


def encode_no_truncation_tokenizer(tokenizer, sentences, max_len):
    # Mistake: padding="max_length" without truncation=True: ragged rows cannot become one tensor.
    batch = tokenizer(sentences, padding="max_length", max_length=max_len, return_tensors="pt")
    return batch["input_ids"], batch["attention_mask"]


def encode_pad_to_longest(tokenizer, sentences, max_len):
    # Mistake: padding=True pads to the longest sentence in the batch, not to max_len.
    batch = tokenizer(sentences, padding=True, truncation=True, max_length=max_len, return_tensors="pt")
    return batch["input_ids"], batch["attention_mask"]


def encode_no_padding(tokenizer, sentences, max_len):
    # Mistake: never pads; returns one ragged list per sentence.
    ids = [tokenizer.encode(s, truncation=True, max_length=max_len) for s in sentences]
    return ids, [[1] * len(r) for r in ids]


def encode_mask_inverted(tokenizer, sentences, max_len):
    # Mistake: attention mask marks the padding with 1 and the real tokens with 0.
    ids, mask = encode_tokenizer_call(tokenizer, sentences, max_len)
    return ids, 1 - mask


def encode_mask_all_ones(tokenizer, sentences, max_len):
    # Mistake: builds the mask as ones everywhere, so the model attends to padding.
    ids, _ = encode_tokenizer_call(tokenizer, sentences, max_len)
    return ids, torch.ones_like(ids)


def encode_returns_lists(tokenizer, sentences, max_len):
    # Mistake: forgets return_tensors="pt" and returns Python lists.
    batch = tokenizer(sentences, padding="max_length", truncation=True, max_length=max_len)
    return batch["input_ids"], batch["attention_mask"]


def encode_returns_batch_encoding(tokenizer, sentences, max_len):
    # Mistake: returns the tokenizer's BatchEncoding dict instead of the (ids, mask) tuple.
    return tokenizer(sentences, padding="max_length", truncation=True, max_length=max_len, return_tensors="pt")


def encode_pad_id_zero(tokenizer, sentences, max_len):
    # Mistake: hard-codes 0 as the padding id (true for BERT, wrong for RoBERTa and others).
    rows = [tokenizer.encode(s, truncation=True, max_length=max_len) for s in sentences]
    ids = [r + [0] * (max_len - len(r)) for r in rows]
    mask = [[1] * len(r) + [0] * (max_len - len(r)) for r in rows]
    return torch.tensor(ids), torch.tensor(mask)


def encode_no_special_tokens(tokenizer, sentences, max_len):
    # Mistake: add_special_tokens=False drops [CLS] and [SEP], so there is no first token to classify.
    batch = tokenizer(
        sentences,
        padding="max_length",
        truncation=True,
        max_length=max_len,
        add_special_tokens=False,
        return_tensors="pt",
    )
    return batch["input_ids"], batch["attention_mask"]


def encode_slice_after_encoding(tokenizer, sentences, max_len):
    # Mistake: truncates by slicing the encoded ids, which cuts off [SEP] of long sentences.
    rows = [tokenizer.encode(s)[:max_len] for s in sentences]
    return _pad_manually(tokenizer, rows, max_len)


def encode_swapped(tokenizer, sentences, max_len):
    # Mistake: returns (attention_mask, input_ids).
    ids, mask = encode_tokenizer_call(tokenizer, sentences, max_len)
    return mask, ids


def encode_float_mask(tokenizer, sentences, max_len):
    # Mistake: returns a float mask (the TODO asks for LongTensors).
    ids, mask = encode_tokenizer_call(tokenizer, sentences, max_len)
    return ids, mask.float()


def encode_room_for_specials(tokenizer, sentences, max_len):
    # Mistake: subtracts 2 from max_len "for [CLS] and [SEP]", but max_length already counts them.
    return encode_tokenizer_call(tokenizer, sentences, max_len - 2)


ENCODE_MUTANTS = [
    Mutant("encode_left_padding", encode_left_padding, "padding is on the left"),
    Mutant("encode_no_truncation", encode_no_truncation, "truncate sentences longer than max_len"),
    Mutant("encode_no_truncation_tokenizer", encode_no_truncation_tokenizer, "your code raised"),
    Mutant("encode_pad_to_longest", encode_pad_to_longest, "pad every row to exactly max_len"),
    Mutant("encode_no_padding", encode_no_padding, "should be a torch.Tensor, got list"),
    Mutant("encode_mask_inverted", encode_mask_inverted, "attention_mask is inverted"),
    Mutant("encode_mask_all_ones", encode_mask_all_ones, "attention_mask row"),
    Mutant("encode_returns_lists", encode_returns_lists, "should be a torch.Tensor, got list"),
    Mutant(
        "encode_returns_batch_encoding",
        encode_returns_batch_encoding,
        "should return a tuple (input_ids, attention_mask), got BatchEncoding",
    ),
    Mutant("encode_pad_id_zero", encode_pad_id_zero, "tokenizer.pad_token_id = 4, got [0]"),
    Mutant("encode_no_special_tokens", encode_no_special_tokens, "start with the [CLS] id"),
    Mutant("encode_slice_after_encoding", encode_slice_after_encoding, "should still end with the [SEP]"),
    Mutant("encode_swapped", encode_swapped, "return (input_ids, attention_mask)"),
    Mutant("encode_float_mask", encode_float_mask, "LongTensor (torch.int64), got torch.float32"),
    Mutant("encode_room_for_specials", encode_room_for_specials, "pad every row to exactly max_len"),
]

# ------------------------------------------------------------------------------------------ encode_pairs


def _pad_pair_rows(tokenizer, rows, types, max_len):
    ids = [r + [tokenizer.pad_token_id] * (max_len - len(r)) for r in rows]
    token_types = [t + [0] * (max_len - len(t)) for t in types]
    mask = [[1] * len(r) + [0] * (max_len - len(r)) for r in rows]
    return torch.tensor(ids), torch.tensor(token_types), torch.tensor(mask)


def _longest_first(a, b, budget):
    """Drop ids from the end of the longer list (the second on a tie) until both fit in budget."""
    a, b = list(a), list(b)
    while len(a) + len(b) > budget:
        if len(a) > len(b):
            a.pop()
        else:
            b.pop()
    return a, b


def _pieces(tokenizer, sentence):
    return tokenizer.convert_tokens_to_ids(tokenizer.tokenize(sentence))


def pairs_tokenizer_call(tokenizer, first, second, max_len):
    batch = tokenizer(first, second, padding="max_length", truncation=True, max_length=max_len, return_tensors="pt")
    return batch["input_ids"], batch["token_type_ids"], batch["attention_mask"]


def pairs_zip_lists(tokenizer, first, second, max_len):
    batch = tokenizer(list(zip(first, second)), padding="max_length", truncation="longest_first", max_length=max_len)
    return tuple(torch.tensor(batch[k]) for k in ("input_ids", "token_type_ids", "attention_mask"))


def pairs_manual_loop(tokenizer, first, second, max_len):
    rows, types = [], []
    for a, b in zip(first, second):
        a, b = _longest_first(_pieces(tokenizer, a), _pieces(tokenizer, b), max_len - 3)
        rows.append([tokenizer.cls_token_id, *a, tokenizer.sep_token_id, *b, tokenizer.sep_token_id])
        types.append([0] * (len(a) + 2) + [1] * (len(b) + 1))
    return _pad_pair_rows(tokenizer, rows, types, max_len)


def pairs_manual_first_on_tie(tokenizer, first, second, max_len):
    # Correct too: on a tie it cuts the first sentence (the checks' cases never depend on the tie).
    rows, types = [], []
    for a, b in zip(first, second):
        a, b = _pieces(tokenizer, a), _pieces(tokenizer, b)
        while len(a) + len(b) > max_len - 3:
            (a if len(a) >= len(b) else b).pop()
        rows.append([tokenizer.cls_token_id, *a, tokenizer.sep_token_id, *b, tokenizer.sep_token_id])
        types.append([0] * (len(a) + 2) + [1] * (len(b) + 1))
    return _pad_pair_rows(tokenizer, rows, types, max_len)


def pairs_encode_plus_each(tokenizer, first, second, max_len):
    out = [tokenizer(a, b, padding="max_length", truncation=True, max_length=max_len) for a, b in zip(first, second)]
    return tuple(torch.tensor([o[k] for o in out]) for k in ("input_ids", "token_type_ids", "attention_mask"))


def pairs_types_from_sep(tokenizer, first, second, max_len):
    # Correct too: token types computed from the position of the first [SEP] and the mask.
    batch = tokenizer(first, second, padding="max_length", truncation=True, max_length=max_len, return_tensors="pt")
    ids, mask = batch["input_ids"], batch["attention_mask"]
    after_first_sep = (ids == tokenizer.sep_token_id).long().cumsum(dim=1) - (ids == tokenizer.sep_token_id).long()
    types = (after_first_sep > 0).long() * mask  # 1 after the first [SEP], up to the final one
    return ids, types, mask


PAIRS_CORRECT = [
    Correct("pairs_tokenizer_call", pairs_tokenizer_call),
    Correct("pairs_zip_lists", pairs_zip_lists),
    Correct("pairs_manual_loop", pairs_manual_loop),
    Correct("pairs_manual_first_on_tie", pairs_manual_first_on_tie),
    Correct("pairs_encode_plus_each", pairs_encode_plus_each),
    Correct("pairs_types_from_sep", pairs_types_from_sep),
]


def _manual_pairs(tokenizer, first, second, max_len, build):
    """Rows and types from build(cls, a, sep, b) -> (row, types), after longest-first truncation, then padded."""
    rows, types = [], []
    for a, b in zip(first, second):
        a, b = _longest_first(_pieces(tokenizer, a), _pieces(tokenizer, b), max_len - 3)
        row, t = build(tokenizer.cls_token_id, a, tokenizer.sep_token_id, b)
        rows.append(row)
        types.append(t)
    return _pad_pair_rows(tokenizer, rows, types, max_len)


def pairs_no_final_sep(tokenizer, first, second, max_len):
    # Mistake: [CLS] a [SEP] b, forgetting the [SEP] that closes the second sentence.
    return _manual_pairs(
        tokenizer, first, second, max_len, lambda c, a, s, b: ([c, *a, s, *b], [0] * (len(a) + 2) + [1] * len(b))
    )


def pairs_no_cls(tokenizer, first, second, max_len):
    # Mistake: a [SEP] b [SEP], without the [CLS] the classifier reads.
    return _manual_pairs(
        tokenizer, first, second, max_len, lambda c, a, s, b: ([*a, s, *b, s], [0] * (len(a) + 1) + [1] * (len(b) + 1))
    )


def pairs_types_all_zero(tokenizer, first, second, max_len):
    # Mistake: token types all 0 (return_token_type_ids=False, then zeros), as for a single sentence.
    ids, _, mask = pairs_tokenizer_call(tokenizer, first, second, max_len)
    return ids, torch.zeros_like(ids), mask


def pairs_types_from_first_sep(tokenizer, first, second, max_len):
    # Mistake: segment 1 starts on the first [SEP] instead of the token after it.
    return _manual_pairs(
        tokenizer,
        first,
        second,
        max_len,
        lambda c, a, s, b: ([c, *a, s, *b, s], [0] * (len(a) + 1) + [1] * (len(b) + 2)),
    )


def pairs_final_sep_type_zero(tokenizer, first, second, max_len):
    # Mistake: the final [SEP] gets type 0, as if only the words of b were segment 1.
    return _manual_pairs(
        tokenizer,
        first,
        second,
        max_len,
        lambda c, a, s, b: ([c, *a, s, *b, s], [0] * (len(a) + 2) + [1] * len(b) + [0]),
    )


def pairs_types_into_padding(tokenizer, first, second, max_len):
    # Mistake: everything after the first [SEP] is type 1, the padding included.
    ids, types, mask = pairs_tokenizer_call(tokenizer, first, second, max_len)
    first_sep = (ids == tokenizer.sep_token_id).long().cumsum(dim=1) - (ids == tokenizer.sep_token_id).long()
    return ids, (first_sep > 0).long(), mask


def pairs_pad_id_zero(tokenizer, first, second, max_len):
    # Mistake: pads with id 0 (BERT's [PAD] in its own vocabulary, not every tokenizer's).
    ids, types, mask = pairs_tokenizer_call(tokenizer, first, second, max_len)
    return ids.masked_fill(mask == 0, 0), types, mask


def pairs_mask_all_ones(tokenizer, first, second, max_len):
    # Mistake: a mask of ones everywhere, so the encoder attends to padding.
    ids, types, _ = pairs_tokenizer_call(tokenizer, first, second, max_len)
    return ids, types, torch.ones_like(ids)


def pairs_mask_inverted(tokenizer, first, second, max_len):
    # Mistake: the mask marks padding with 1 and real tokens with 0.
    ids, types, mask = pairs_tokenizer_call(tokenizer, first, second, max_len)
    return ids, types, 1 - mask


def pairs_truncate_left(tokenizer, first, second, max_len):
    # Mistake: sets the tokenizer's truncation_side to "left", so the longer sentence loses its first ids.
    tokenizer.truncation_side = "left"
    batch = tokenizer(first, second, padding="max_length", truncation=True, max_length=max_len, return_tensors="pt")
    return batch["input_ids"], batch["token_type_ids"], batch["attention_mask"]


def pairs_truncate_only_second(tokenizer, first, second, max_len):
    # Mistake: truncation="only_second" cuts the second sentence even when the first is the longer one.
    batch = tokenizer(
        first, second, padding="max_length", truncation="only_second", max_length=max_len, return_tensors="pt"
    )
    return batch["input_ids"], batch["token_type_ids"], batch["attention_mask"]


def pairs_slice_after_encoding(tokenizer, first, second, max_len):
    # Mistake: truncates by slicing the encoded pair, which cuts off the final [SEP] (and b's ids).
    rows, types = [], []
    for a, b in zip(first, second):
        out = tokenizer(a, b)
        rows.append(out["input_ids"][:max_len])
        types.append(out["token_type_ids"][:max_len])
    return _pad_pair_rows(tokenizer, rows, types, max_len)


def pairs_each_sentence_encoded(tokenizer, first, second, max_len):
    # Mistake: encodes each sentence on its own and joins them: [CLS] a [SEP] [CLS] b [SEP].
    rows, types = [], []
    for a, b in zip(first, second):
        ea, eb = tokenizer.encode(a), tokenizer.encode(b)
        rows.append((ea + eb)[:max_len])
        types.append(([0] * len(ea) + [1] * len(eb))[:max_len])
    return _pad_pair_rows(tokenizer, rows, types, max_len)


def pairs_swapped(tokenizer, first, second, max_len):
    # Mistake: passes the sentences the other way round, second before first.
    return pairs_tokenizer_call(tokenizer, second, first, max_len)


def pairs_padding_left(tokenizer, first, second, max_len):
    # Mistake: pads on the left.
    batch = tokenizer(
        first,
        second,
        padding="max_length",
        truncation=True,
        max_length=max_len,
        padding_side="left",
        return_tensors="pt",
    )
    return batch["input_ids"], batch["token_type_ids"], batch["attention_mask"]


def pairs_pad_to_longest(tokenizer, first, second, max_len):
    # Mistake: padding=True pads to the longest pair of the batch, not to max_len.
    batch = tokenizer(first, second, padding=True, truncation=True, max_length=max_len, return_tensors="pt")
    return batch["input_ids"], batch["token_type_ids"], batch["attention_mask"]


def pairs_mask_before_types(tokenizer, first, second, max_len):
    # Mistake: returns (input_ids, attention_mask, token_type_ids).
    ids, types, mask = pairs_tokenizer_call(tokenizer, first, second, max_len)
    return ids, mask, types


def pairs_two_outputs(tokenizer, first, second, max_len):
    # Mistake: returns (input_ids, attention_mask) as encode_sentences does, without the token types.
    ids, _, mask = pairs_tokenizer_call(tokenizer, first, second, max_len)
    return ids, mask


def pairs_one_sentence(tokenizer, first, second, max_len):
    # Mistake: joins the two sentences into one string, so the pair has one [SEP] and no second segment.
    batch = tokenizer(
        [f"{a} {b}" for a, b in zip(first, second)],
        padding="max_length",
        truncation=True,
        max_length=max_len,
        return_tensors="pt",
    )
    return batch["input_ids"], batch["token_type_ids"], batch["attention_mask"]


PAIRS_MUTANTS = [
    Mutant("pairs_no_final_sep", pairs_no_final_sep, "has 1 [SEP] id(s)"),
    Mutant("pairs_no_cls", pairs_no_cls, "start with the [CLS] id"),
    Mutant("pairs_types_all_zero", pairs_types_all_zero, "token_type_ids are all 0"),
    Mutant("pairs_types_from_first_sep", pairs_types_from_first_sep, "is 1 on the first [SEP]"),
    Mutant("pairs_final_sep_type_zero", pairs_final_sep_type_zero, "is 0 on the final [SEP]"),
    Mutant("pairs_types_into_padding", pairs_types_into_padding, "is 1 on padding"),
    Mutant("pairs_pad_id_zero", pairs_pad_id_zero, "should hold tokenizer.pad_token_id, row 0 has [0]"),
    Mutant("pairs_mask_all_ones", pairs_mask_all_ones, "attention_mask row 0 should be 1 on real tokens"),
    Mutant("pairs_mask_inverted", pairs_mask_inverted, "attention_mask is inverted"),
    Mutant("pairs_truncate_left", pairs_truncate_left, "lost ids from the start of its longer sentence"),
    Mutant("pairs_truncate_only_second", pairs_truncate_only_second, "your code raised"),
    Mutant("pairs_slice_after_encoding", pairs_slice_after_encoding, "has 0 [SEP] id(s)"),
    Mutant("pairs_each_sentence_encoded", pairs_each_sentence_encoded, "has [CLS] inside the pair"),
    Mutant("pairs_swapped", pairs_swapped, "the two sentences are swapped"),
    Mutant("pairs_padding_left", pairs_padding_left, "the padding is on the left"),
    Mutant("pairs_pad_to_longest", pairs_pad_to_longest, "pad every row to exactly max_len"),
    Mutant("pairs_mask_before_types", pairs_mask_before_types, "in another order"),
    Mutant("pairs_two_outputs", pairs_two_outputs, "should return a tuple (input_ids, token_type_ids, attention_mask)"),
    Mutant("pairs_one_sentence", pairs_one_sentence, "has 1 [SEP] id(s)"),
]


# ---------------------------------------------------------------------------------------- SentenceClassifier


class ClassifierFirstToken(nn.Module):
    def __init__(self, encoder, num_labels):
        super().__init__()
        self.encoder = encoder
        self.classifier = nn.Linear(encoder.config.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (B, T, H)
        logits = self.classifier(hidden[:, 0])  # (B, C)
        if labels is None:
            return (logits,)
        return logits, F.cross_entropy(logits, labels)


class ClassifierPooler(ClassifierFirstToken):
    def forward(self, input_ids, attention_mask=None, labels=None):
        pooled = self.encoder(input_ids, attention_mask=attention_mask).pooler_output  # (B, H)
        logits = self.classifier(pooled)
        return (logits,) if labels is None else (logits, F.cross_entropy(logits, labels))


class ClassifierTupleIndex(ClassifierFirstToken):
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids, attention_mask)[0][:, 0])
        out = (logits,)
        if labels is not None:
            out = out + (F.cross_entropy(logits, labels),)
        return out


class ClassifierDropoutLossModule(nn.Module):
    def __init__(self, encoder, num_labels):
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(encoder.config.hidden_size, num_labels)
        self.loss_fn = nn.CrossEntropyLoss()

    def forward(self, input_ids, attention_mask=None, labels=None):
        cls = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state[:, 0, :]
        logits = self.classifier(self.dropout(cls))
        if labels is None:
            return [logits]
        return [logits, self.loss_fn(logits, labels)]


class ClassifierAllTokensThenFirst(ClassifierFirstToken):
    def forward(self, input_ids, attention_mask=None, labels=None):
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        logits = self.classifier(out.hidden_states[-1])[:, 0]  # (B, C)
        if labels is None:
            return (logits,)
        return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))


CLASSIFIER_CORRECT = [
    Correct("ClassifierFirstToken", ClassifierFirstToken),
    Correct("ClassifierPooler", ClassifierPooler),
    Correct("ClassifierTupleIndex", ClassifierTupleIndex),
    Correct("ClassifierDropoutLossModule", ClassifierDropoutLossModule),
    Correct("ClassifierAllTokensThenFirst", ClassifierAllTokensThenFirst),
]


class ClassifierThreeClasses(ClassifierFirstToken):
    # Mistake: hard-codes the three classes of this data set instead of using num_labels.
    def __init__(self, encoder, num_labels):
        super().__init__(encoder, num_labels)
        self.classifier = nn.Linear(encoder.config.hidden_size, 3)


class ClassifierHidden768(ClassifierFirstToken):
    # Mistake: hard-codes BERT-base's hidden size 768 instead of encoder.config.hidden_size.
    def __init__(self, encoder, num_labels):
        super().__init__(encoder, num_labels)
        self.classifier = nn.Linear(768, num_labels)


class ClassifierMeanPool(ClassifierFirstToken):
    # Mistake: mean-pools the real tokens instead of using the first token.
    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        m = torch.ones_like(input_ids) if attention_mask is None else attention_mask
        m = m.unsqueeze(-1).float()
        logits = self.classifier((hidden * m).sum(1) / m.sum(1))
        return (logits,) if labels is None else (logits, F.cross_entropy(logits, labels))


class ClassifierMeanAll(ClassifierFirstToken):
    # Mistake: averages over every position, padding included.
    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        logits = self.classifier(hidden.mean(dim=1))
        return (logits,) if labels is None else (logits, F.cross_entropy(logits, labels))


class ClassifierLastToken(ClassifierFirstToken):
    # Mistake: takes the last position (hidden[:, -1]), as for a left-to-right language model.
    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        logits = self.classifier(hidden[:, -1])
        return (logits,) if labels is None else (logits, F.cross_entropy(logits, labels))


class ClassifierNoMask(ClassifierFirstToken):
    # Mistake: never passes attention_mask to the encoder, so [CLS] attends to padding.
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids=input_ids).last_hidden_state[:, 0])
        return (logits,) if labels is None else (logits, F.cross_entropy(logits, labels))


class ClassifierReturnsProbs(ClassifierFirstToken):
    # Mistake: returns softmax probabilities instead of logits.
    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        probs = torch.softmax(self.classifier(hidden[:, 0]), dim=-1)
        return (probs,) if labels is None else (probs, F.cross_entropy(probs, labels))


class ClassifierSoftmaxBeforeLoss(ClassifierFirstToken):
    # Mistake: applies softmax before F.cross_entropy, which applies log-softmax itself.
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state[:, 0])
        if labels is None:
            return (logits,)
        return logits, F.cross_entropy(F.softmax(logits, dim=-1), labels)


class ClassifierMSE(ClassifierFirstToken):
    # Mistake: regresses one-hot labels with MSE instead of cross-entropy.
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state[:, 0])
        if labels is None:
            return (logits,)
        return logits, F.mse_loss(logits, F.one_hot(labels, logits.shape[-1]).float())


class ClassifierSumLoss(ClassifierFirstToken):
    # Mistake: sums the cross-entropy over the batch, so the step size grows with the batch size.
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state[:, 0])
        if labels is None:
            return (logits,)
        return logits, F.cross_entropy(logits, labels, reduction="sum")


class ClassifierNllOnLogits(ClassifierFirstToken):
    # Mistake: nll_loss on raw logits (nll_loss expects log-probabilities).
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state[:, 0])
        if labels is None:
            return (logits,)
        return logits, F.nll_loss(logits, labels)


class ClassifierNoLoss(ClassifierFirstToken):
    # Mistake: ignores labels and never returns the loss.
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state[:, 0])
        return (logits,)


class ClassifierLossFirst(ClassifierFirstToken):
    # Mistake: returns (loss, logits) instead of (logits, loss).
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state[:, 0])
        if labels is None:
            return (logits,)
        return F.cross_entropy(logits, labels), logits


class ClassifierNoneLoss(ClassifierFirstToken):
    # Mistake: always returns two values, (logits, None) when there are no labels.
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state[:, 0])
        loss = None if labels is None else F.cross_entropy(logits, labels)
        return logits, loss


class ClassifierBareLogits(ClassifierFirstToken):
    # Mistake: returns the logits tensor itself instead of the tuple (logits,).
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state[:, 0])
        return logits if labels is None else (logits, F.cross_entropy(logits, labels))


class ClassifierNoGradEncoder(ClassifierFirstToken):
    # Mistake: runs the encoder under torch.no_grad(), so "full fine-tuning" only trains the classifier.
    def forward(self, input_ids, attention_mask=None, labels=None):
        with torch.no_grad():
            hidden = self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state
        logits = self.classifier(hidden[:, 0])
        return (logits,) if labels is None else (logits, F.cross_entropy(logits, labels))


class ClassifierLossNoGrad(ClassifierFirstToken):
    # Mistake: computes the loss from detached logits, so backward() cannot reach any weight.
    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.encoder(input_ids, attention_mask=attention_mask).last_hidden_state[:, 0])
        if labels is None:
            return (logits,)
        return logits, F.cross_entropy(logits.detach(), labels)


class ClassifierRenamedEncoder(nn.Module):
    # Mistake: keeps the encoder as self.bert although the TODO asks for self.encoder (freeze_encoder relies on it).
    def __init__(self, encoder, num_labels):
        super().__init__()
        self.bert = encoder
        self.classifier = nn.Linear(encoder.config.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.classifier(self.bert(input_ids, attention_mask=attention_mask).last_hidden_state[:, 0])
        return (logits,) if labels is None else (logits, F.cross_entropy(logits, labels))


CLASSIFIER_MUTANTS = [
    Mutant("ClassifierThreeClasses", ClassifierThreeClasses, "use num_labels for out_features"),
    Mutant("ClassifierHidden768", ClassifierHidden768, "use encoder.config.hidden_size"),
    Mutant("ClassifierMeanPool", ClassifierMeanPool, "mean-pools the tokens"),
    Mutant("ClassifierMeanAll", ClassifierMeanAll, "averages over every position"),
    Mutant("ClassifierLastToken", ClassifierLastToken, "uses the last position"),
    Mutant("ClassifierNoMask", ClassifierNoMask, "ignores attention_mask"),
    Mutant("ClassifierReturnsProbs", ClassifierReturnsProbs, "applies softmax to the logits"),
    Mutant("ClassifierSoftmaxBeforeLoss", ClassifierSoftmaxBeforeLoss, "the loss applies softmax first"),
    Mutant("ClassifierMSE", ClassifierMSE, "loss should be the mean cross-entropy"),
    Mutant("ClassifierSumLoss", ClassifierSumLoss, "the loss is summed over the batch"),
    Mutant("ClassifierNllOnLogits", ClassifierNllOnLogits, "the loss feeds raw logits to nll_loss"),
    Mutant("ClassifierNoLoss", ClassifierNoLoss, "should return a tuple (logits, loss), got tuple of length 1"),
    Mutant("ClassifierLossFirst", ClassifierLossFirst, "in that order"),
    Mutant("ClassifierNoneLoss", ClassifierNoneLoss, "should return a tuple (logits,), got tuple of length 2"),
    Mutant("ClassifierBareLogits", ClassifierBareLogits, "should return a tuple (logits,), got Tensor"),
    Mutant("ClassifierNoGradEncoder", ClassifierNoGradEncoder, "gives the encoder no gradient"),
    Mutant("ClassifierLossNoGrad", ClassifierLossNoGrad, "the loss has no gradient"),
    Mutant("ClassifierRenamedEncoder", ClassifierRenamedEncoder, ".encoder should be the encoder passed in"),
]

# -------------------------------------------------------------------------------------------- freeze_encoder


def freeze_by_name(model):
    for name, p in model.named_parameters():
        p.requires_grad = name.startswith("classifier.")


def freeze_all_then_unfreeze(model):
    model.requires_grad_(False)
    model.classifier.requires_grad_(True)


def freeze_encoder_attribute(model):
    for p in model.encoder.parameters():
        p.requires_grad = False


def freeze_not_classifier_substring(model):
    for name, p in model.named_parameters():
        if "classifier" not in name:
            p.requires_grad_(False)


def freeze_module_method(model):
    model.encoder.requires_grad_(False)
    return model


FREEZE_CORRECT = [
    Correct("freeze_by_name", freeze_by_name),
    Correct("freeze_all_then_unfreeze", freeze_all_then_unfreeze),
    Correct("freeze_encoder_attribute", freeze_encoder_attribute),
    Correct("freeze_not_classifier_substring", freeze_not_classifier_substring),
    Correct("freeze_module_method", freeze_module_method),
]


def freeze_nothing(model):
    # Mistake: leaves the encoder trainable (an unfinished TODO that returns the model as is).
    return model


def freeze_everything(model):
    # Mistake: freezes the classifier too, so nothing can learn.
    for p in model.parameters():
        p.requires_grad = False


def freeze_only_embeddings(model):
    # Mistake: freezes only the embedding layer; every transformer layer still trains.
    for p in model.encoder.embeddings.parameters():
        p.requires_grad = False


def freeze_module_attribute(model):
    # Mistake: sets a requires_grad attribute on the module, which changes no parameter.
    model.encoder.requires_grad = False


def freeze_inverted(model):
    # Mistake: freezes the classifier and leaves the encoder trainable.
    for name, p in model.named_parameters():
        p.requires_grad = not name.startswith("classifier.")


def freeze_layers_only(model):
    # Mistake: freezes the transformer layers but forgets the embeddings and the pooler.
    for p in model.encoder.encoder.parameters():
        p.requires_grad = False


def freeze_forgets_pooler(model):
    # Mistake: freezes embeddings and layers but not the pooler, which is part of the encoder too.
    for part in (model.encoder.embeddings, model.encoder.encoder):
        for p in part.parameters():
            p.requires_grad = False


def freeze_classifier_bias_too(model):
    # Mistake: keeps only classifier.weight trainable and freezes its bias.
    for name, p in model.named_parameters():
        p.requires_grad = name == "classifier.weight"


def freeze_a_copy(model):
    # Mistake: freezes a deep copy and returns it; the model passed in is unchanged.
    model = copy.deepcopy(model)
    model.encoder.requires_grad_(False)
    return model


def freeze_and_new_classifier(model):
    # Mistake: replaces the classifier with a fresh nn.Linear while freezing.
    model.requires_grad_(False)
    model.classifier = nn.Linear(model.classifier.in_features, model.classifier.out_features)


def freeze_method_typo(model):
    # Mistake: assigns to p.requires_grad_ (the method name) instead of p.requires_grad.
    for p in model.encoder.parameters():
        p.requires_grad_ = False


FREEZE_MUTANTS = [
    Mutant("freeze_nothing", freeze_nothing, "are still trainable"),
    Mutant("freeze_everything", freeze_everything, "should stay trainable"),
    Mutant("freeze_only_embeddings", freeze_only_embeddings, "are still trainable"),
    Mutant("freeze_module_attribute", freeze_module_attribute, "are still trainable"),
    Mutant("freeze_inverted", freeze_inverted, "should stay trainable"),
    Mutant("freeze_layers_only", freeze_layers_only, "are still trainable"),
    Mutant("freeze_forgets_pooler", freeze_forgets_pooler, "encoder.pooler.dense"),
    Mutant("freeze_classifier_bias_too", freeze_classifier_bias_too, "classifier.bias should stay trainable"),
    Mutant("freeze_a_copy", freeze_a_copy, "are still trainable"),
    Mutant("freeze_and_new_classifier", freeze_and_new_classifier, "keep model.classifier"),
    Mutant("freeze_method_typo", freeze_method_typo, "are still trainable"),
]


# ------------------------------------------------------------------------------------------ the catalogue
CATALOGUE = Catalogue(
    notebook="bert",
    cells={
        "encode_sentences": Cell(correct=ENCODE_CORRECT, mutants=ENCODE_MUTANTS),
        "encode_pairs": Cell(correct=PAIRS_CORRECT, mutants=PAIRS_MUTANTS),
        "sentence_classifier": Cell(correct=CLASSIFIER_CORRECT, mutants=CLASSIFIER_MUTANTS, name="SentenceClassifier"),
        "freeze_encoder": Cell(correct=FREEZE_CORRECT, mutants=FREEZE_MUTANTS),
    },
)
