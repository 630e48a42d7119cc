"""Realistic answers for the visible checks of clip.ipynb: mistakes they must catch, alternatives they must pass.

Each entry is a whole solution cell: the reference answer with a few edits, or a source of its own. A
comment names the student's mistake (or the alternative's idea); `expect` is a fragment of the one-line
AssertionError the visible test cell must show.
"""

from tests.visible.run import Right, Wrong

SIM = "similarity_matrix"
ZSP = "zero_shot_probs"
BP = "build_prompts"
RANK = "rank_images"
CAP = "scavenger_caption"

NORMS = (
    "    image_features = F.normalize(image_features, dim=-1)  # (N_images, D)\n"
    "    text_features = F.normalize(text_features, dim=-1)  # (N_texts, D)\n"
)
PRODUCT = "return image_features @ text_features.T  # (N_images, N_texts)"
TOKENS = "tokens = tokenizer([caption]).to(image_features.device)  # (1, context_length)"

WRONG = [
    # Mistake: plain dot products, no normalisation.
    Wrong(SIM, "no_normalisation", "expected", [(NORMS, "")]),
    # Mistake: normalises the images only.
    Wrong(
        SIM,
        "images_only",
        "expected",
        [("    text_features = F.normalize(text_features, dim=-1)  # (N_texts, D)\n", "")],
    ),
    # Mistake: normalises over the wrong axis (each feature across the batch).
    Wrong(
        SIM,
        "normalise_dim0",
        "expected",
        [
            ("F.normalize(image_features, dim=-1)", "F.normalize(image_features, dim=0)"),
            ("F.normalize(text_features, dim=-1)", "F.normalize(text_features, dim=0)"),
        ],
    ),
    # Mistake: (N_texts, N_images), texts first.
    Wrong(SIM, "transposed", "expected shape", [(PRODUCT, "return text_features @ image_features.T")]),
    # Mistake: normalises the caller's tensors in place.
    Wrong(
        SIM,
        "in_place",
        "in place",
        [
            (
                NORMS,
                "    image_features /= image_features.norm(dim=-1, keepdim=True)\n"
                "    text_features /= text_features.norm(dim=-1, keepdim=True)\n",
            )
        ],
    ),
    # Mistake: F.cosine_similarity on the two matrices, which pairs row i with row i instead of all pairs.
    Wrong(
        SIM,
        "rowwise_cosine",
        "raised",
        [(NORMS + "    " + PRODUCT, "    return F.cosine_similarity(image_features, text_features, dim=-1)")],
    ),
    # Mistake: softmax over the images (dim=0) instead of the texts.
    Wrong(ZSP, "softmax_over_images", "sum to 1", [("logits.softmax(dim=-1)", "logits.softmax(dim=0)")]),
    # Mistake: forgets the logit scale.
    Wrong(ZSP, "no_scale", "logit_scale=100", [("logit_scale * similarity_matrix", "similarity_matrix")]),
    # Mistake: ignores the logit_scale argument and always multiplies by 100.
    Wrong(ZSP, "fixed_scale", "logit_scale=2", [("logit_scale * similarity_matrix", "100.0 * similarity_matrix")]),
    # Mistake: exponentiates logit_scale as if it were CLIP's log-parameterised scale.
    Wrong(
        ZSP,
        "exp_scale",
        "logit_scale=2",
        [("logit_scale * similarity_matrix", "np.exp(min(logit_scale, 50)) * similarity_matrix")],
    ),
    # Mistake: log-probabilities (log_softmax) instead of probabilities.
    Wrong(ZSP, "log_softmax", "sum to 1", [("logits.softmax(dim=-1)", "logits.log_softmax(dim=-1)")]),
    # Mistake: returns the scaled similarities without a softmax.
    Wrong(ZSP, "no_softmax", "sum to 1", [("return logits.softmax(dim=-1)", "return logits")]),
    # Mistake: writes the prompts into class_names in place.
    Wrong(
        BP,
        "in_place",
        "modified",
        [
            (
                "    return [template.format(name) for name in class_names]",
                "    for i, name in enumerate(class_names):\n        class_names[i] = template.format(name)\n    return class_names",
            )
        ],
    ),
    # Mistake: ignores the template argument.
    Wrong(BP, "ignores_template", "drawing", [("template.format(name)", '"a photo of a " + name')]),
    # Mistake: returns a map object instead of a list.
    Wrong(
        BP, "map", "list", [("[template.format(name) for name in class_names]", "map(template.format, class_names)")]
    ),
    # Mistake: sorts ascending, worst match first.
    Wrong(RANK, "ascending", "best first", [("torch.argsort(scores, descending=True)", "torch.argsort(scores)")]),
    # Mistake: ranks by dot product, without normalising.
    Wrong(
        RANK,
        "dot_product",
        "best first",
        [("similarity_matrix(image_features, text_features)[:, 0]", "(image_features @ text_features.T)[:, 0]")],
    ),
    # Mistake: returns the sorted scores instead of the image indices.
    Wrong(
        RANK,
        "sorted_scores",
        "indices",
        [("return torch.argsort(scores, descending=True)", "return torch.sort(scores, descending=True).values")],
    ),
    # Mistake: the tokens stay on the CPU while the model and image_features are on the GPU.
    Wrong(RANK, "tokens_not_moved", "device", [(TOKENS, "tokens = tokenizer([caption])  # (1, context_length)")]),
    # Mistake: a caption longer than 12 words.
    Wrong(
        CAP,
        "too_long",
        "at most 12 words",
        source='scavenger_caption = "a portrait of an elderly woman with glasses in a dark navy uniform and a white cap"\n',
    ),
    # Mistake: a list of captions instead of one string.
    Wrong(CAP, "list", "string", source='scavenger_caption = ["an older woman in a navy uniform"]\n'),
    # Mistake: 5 words in a row of the target's line in descriptions.csv ("a navy uniform and cap").
    Wrong(
        CAP,
        "copies_five_words",
        "copies the target's line",
        source='scavenger_caption = "she wears a navy uniform and cap"\n',
    ),
    # Mistake: the target's line pasted, in other case and punctuation.
    Wrong(
        CAP,
        "copies_the_line",
        "copies the target's line",
        source='scavenger_caption = "An official portrait of an older woman in a navy uniform and cap."\n',
    ),
    # Mistake: the target's label in a prompt template.
    Wrong(
        CAP,
        "label_alone",
        "copies the target's line or label",
        source='scavenger_caption = "A photo of a naval officer"\n',
    ),
]

RIGHT = [Right(g, "reference") for g in (SIM, ZSP, BP, RANK, CAP)] + [
    # Alternative: 4 words in a row of the target's line ("navy uniform and cap"), one fewer than a copy.
    Right(CAP, "four_words_of_the_line", source='scavenger_caption = "an old woman in navy uniform and cap"\n'),
    # Alternative: the label with words of one's own.
    Right(CAP, "label_and_more", source='scavenger_caption = "a naval officer with glasses in navy uniform"\n'),
    # Alternative: norms divided out by hand, torch.mm.
    Right(
        SIM,
        "by_hand",
        [
            (
                NORMS,
                "    image_features = image_features / image_features.norm(dim=1, keepdim=True)\n"
                "    text_features = text_features / text_features.norm(dim=1, keepdim=True)\n",
            ),
            (PRODUCT, "return torch.mm(image_features, text_features.t())"),
        ],
    ),
    # Alternative: broadcast F.cosine_similarity over all pairs.
    Right(
        SIM,
        "broadcast_cosine",
        [
            (
                NORMS + "    " + PRODUCT,
                "    return F.cosine_similarity(image_features[:, None, :], text_features[None, :, :], dim=-1)",
            )
        ],
    ),
    # Alternative: torch.softmax of the scaled similarities.
    Right(ZSP, "torch_softmax", [("return logits.softmax(dim=-1)", "return torch.softmax(logits, dim=1)")]),
    # Alternative: str.replace instead of format.
    Right(BP, "replace", [("template.format(name)", 'template.replace("{}", name)')]),
    # Alternative: open_clip's own normalisation in encode_text, tokens moved to the model's parameters' device.
    Right(
        RANK,
        "normalize_flag",
        [
            (TOKENS, "tokens = tokenizer([caption]).to(next(model.parameters()).device)"),
            ("text_features = model.encode_text(tokens)", "text_features = model.encode_text(tokens, normalize=True)"),
        ],
    ),
    # Alternative: sort the negated scores.
    Right(RANK, "negated", [("return torch.argsort(scores, descending=True)", "return torch.argsort(-scores)")]),
]
