"""The graded cells of each notebook: grade ids and points (part of the contract, see SPEC)."""

GRADED = {
    "nmt": {
        "positional_encodings": 1,
        "scaled_dot_attention": 2,
        "causal_scaled_dot_attention": 2,
        "generate_tensors_for_training_decoder_nmt": 2,
        "decoder_only_transformer": 2,
        "find_optimal_params": 1,
        "fit_linear_log": 1,
    },
    "bert": {
        "encode_sentences": 1,
        "sentence_classifier": 2,
        "freeze_encoder": 1,
    },
    "clip": {
        "similarity_matrix": 1,
        "zero_shot_probs": 1,
        "build_prompts": 1,
        "rank_images": 1,
        "scavenger_caption": 1,
    },
}


def test_cell_id(grade_id):
    """nbgrader grade_id of the test cell that checks `grade_id`."""
    return f"test_{grade_id}"


def max_score(notebook):
    """Autograded points available in a notebook."""
    return sum(GRADED[notebook].values())
