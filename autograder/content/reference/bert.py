"""Reference solutions for bert.ipynb: the checks in autograder/checks/bert.py compare against these."""
import torch.nn as nn
import torch.nn.functional as F


def encode_sentences(tokenizer, sentences, max_len):
    """Tokenise sentences into fixed-length id and attention-mask tensors (right padding, truncation).

    Inputs:
    - tokenizer: a Hugging Face tokenizer
    - sentences: list of N strings
    - max_len: length of every encoded sentence, special tokens included

    Returns a tuple of:
    - input_ids: LongTensor of shape (N, max_len); [CLS] ... [SEP] then the tokenizer's pad id
    - attention_mask: LongTensor of shape (N, max_len); 1 for real tokens, 0 for padding
    """
    batch = tokenizer(list(sentences), padding="max_length", truncation=True, max_length=max_len,
                      return_tensors="pt")
    return batch["input_ids"], batch["attention_mask"]



def encode_pairs(tokenizer, first, second, max_len):
    """Tokenise sentence pairs into fixed-length tensors for a BERT encoder: [CLS] a [SEP] b [SEP].

    Inputs:
    - tokenizer: a Hugging Face BERT tokenizer (one with [CLS], [SEP] and token type ids)
    - first, second: lists of N strings; pair i is (first[i], second[i])
    - max_len: length of every encoded pair, the three special tokens included

    Returns a tuple of three LongTensors of shape (N, max_len):
    - input_ids: [CLS] a [SEP] b [SEP] then the tokenizer's pad id; a longer pair loses ids from the end of its
      longer sentence until it fits (the tokenizer's "longest_first" truncation), both [SEP] kept
    - token_type_ids: 0 on [CLS], a and the first [SEP]; 1 on b and the final [SEP]; 0 on padding
    - attention_mask: 1 for real tokens, 0 for padding
    """
    batch = tokenizer(list(first), list(second), padding="max_length", truncation=True, max_length=max_len,
                      return_token_type_ids=True, return_tensors="pt")
    return batch["input_ids"], batch["token_type_ids"], batch["attention_mask"]

class SentenceClassifier(nn.Module):
    """A pretrained encoder with a linear classifier on the final hidden state of the first token."""

    def __init__(self, encoder, num_labels):
        """
        Inputs:
        - encoder: a Hugging Face encoder (BertModel, RobertaModel, ...) with encoder.config.hidden_size
        - num_labels: number of classes
        """
        super().__init__()
        self.encoder = encoder
        self.num_labels = num_labels
        self.classifier = nn.Linear(encoder.config.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask=None, labels=None):
        """
        Inputs:
        - input_ids: LongTensor of shape (B, T)
        - attention_mask: optional LongTensor of shape (B, T), 1 for real tokens, 0 for padding
        - labels: optional LongTensor of shape (B,) with class indices

        Returns a tuple (logits,) without labels, or (logits, loss) with labels, where logits has
        shape (B, num_labels) and loss is the mean cross-entropy, a scalar.
        """
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # (B, T, H)
        logits = self.classifier(hidden[:, 0])  # (B, num_labels)
        if labels is None:
            return (logits,)
        return logits, F.cross_entropy(logits, labels)


def freeze_encoder(model):
    """Make every parameter of model untrainable except those of model.classifier (in place).

    Inputs:
    - model: an nn.Module with a `classifier` submodule, e.g. a SentenceClassifier
    """
    for name, param in model.named_parameters():
        param.requires_grad = name.startswith("classifier.")
