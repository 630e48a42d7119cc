"""Realistic wrong answers for the graded cells of bert.ipynb, one per grade id.

WRONG[grade_id] is the complete source of a solution cell that defines the same name as the
reference solution but makes one common mistake. Replacing that one cell of the reference notebook
with it must lose exactly that cell's points; every sample keeps the shapes right so that the rest
of the notebook still runs.
"""

WRONG = {
    # Mistake: pads on the left, so position 0 is padding for every sentence shorter than max_len.
    "encode_sentences": '''def encode_sentences(tokenizer, sentences, max_len):
    """
    Tokenise sentences into fixed-length tensors of token ids and attention masks.

    Inputs:
    - tokenizer: a Hugging Face tokenizer
    - sentences: list of N strings
    - max_len: number of ids per sentence, special tokens included

    Returns a tuple (input_ids, attention_mask) of two LongTensors of shape (N, max_len).
    """
    batch = tokenizer(sentences, padding="max_length", truncation=True, max_length=max_len,
                      padding_side="left", return_tensors="pt")
    return batch["input_ids"], batch["attention_mask"]
''',
    # Mistake: token_type_ids all 0, as for one sentence, so the encoder cannot tell the two sentences apart.
    "encode_pairs": '''import torch


def encode_pairs(tokenizer, first, second, max_len):
    """
    Tokenise sentence pairs into fixed-length tensors for a BERT encoder: [CLS] a [SEP] b [SEP].

    Returns a tuple (input_ids, token_type_ids, attention_mask) of three LongTensors of shape (N, max_len).
    """
    batch = tokenizer(list(first), list(second), padding="max_length", truncation=True, max_length=max_len,
                      return_tensors="pt")
    return batch["input_ids"], torch.zeros_like(batch["input_ids"]), batch["attention_mask"]
''',
    # Mistake: averages the final hidden states of all positions (padding included) instead of
    # reading the first token.
    "sentence_classifier": '''import torch.nn as nn
import torch.nn.functional as F


class SentenceClassifier(nn.Module):
    """A pretrained encoder with a linear classifier on top."""

    def __init__(self, encoder, num_labels):
        super().__init__()
        self.encoder = encoder
        self.num_labels = num_labels
        self.classifier = nn.Linear(encoder.config.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (B, T, H)
        logits = self.classifier(hidden.mean(dim=1))  # (B, num_labels)
        if labels is None:
            return (logits,)
        return logits, F.cross_entropy(logits, labels)
''',
    # Mistake: freezes only the embedding layer; every transformer layer and the pooler still train.
    "freeze_encoder": '''def freeze_encoder(model):
    """Make every parameter of model untrainable except those of model.classifier (in place)."""
    for param in model.encoder.embeddings.parameters():
        param.requires_grad = False
''',
}
