"""Tiny randomly initialised BERT and RoBERTa encoders and a tiny WordPiece tokenizer, built from configs.

The checks and tests use them instead of downloaded weights: they are built in milliseconds, need no
hub, and have the same classes, outputs (`last_hidden_state`, `pooler_output`) and `config` as the
real models. `save_tiny` writes one with `save_pretrained` so it loads back through `from_pretrained`.
"""

import torch

# Special tokens first but [PAD] deliberately not at id 0, so code that hard-codes 0 as padding shows.
TINY_VOCAB = [
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "[PAD]",
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "plus",
    "minus",
    "times",
    "is",
    "what",
    "the",
    "sum",
    "of",
    "and",
    "##s",
    "##teen",
    "##ty",
]


def tiny_config(kind, hidden_size=16, num_layers=2, vocab_size=64, max_positions=40):
    """A BertConfig (kind "bert") or RobertaConfig (kind "roberta") for a tiny encoder without dropout."""
    from transformers import BertConfig, RobertaConfig  # imported on use: importing the checks stays cheap

    common = dict(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=2,
        intermediate_size=2 * hidden_size,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    if kind == "bert":
        return BertConfig(max_position_embeddings=max_positions, **common)
    if kind == "roberta":
        # RoBERTa numbers positions from pad_token_id + 1, hence the two extra position embeddings.
        return RobertaConfig(
            max_position_embeddings=max_positions + 2,
            pad_token_id=1,
            bos_token_id=0,
            eos_token_id=2,
            type_vocab_size=1,
            **common,
        )
    raise ValueError(f"unknown encoder kind {kind!r} (use 'bert' or 'roberta')")


def tiny_encoder(kind, seed=0, **config):
    """A tiny random BertModel or RobertaModel (with pooler) in eval mode, initialised from `seed`."""
    from transformers import BertModel, RobertaModel

    cfg = tiny_config(kind, **config)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertModel(cfg) if kind == "bert" else RobertaModel(cfg)
    return model.eval()


def tiny_tokenizer():
    """A WordPiece BertTokenizer over TINY_VOCAB ([CLS]=1, [SEP]=2, [PAD]=4), right padding."""
    from transformers import BertTokenizer

    vocab = {token: i for i, token in enumerate(TINY_VOCAB)}
    return BertTokenizer(vocab, model_max_length=512)


def save_tiny(path, kind, seed=0, **config):
    """Save a tiny random encoder with save_pretrained under path; return the path."""
    tiny_encoder(kind, seed, **config).save_pretrained(path)
    return path
