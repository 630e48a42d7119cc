"""The course contract: the assignment, its notebooks, their graded cells with grade ids and points, and
how a notebook cell says what kind it is (see SPEC).

GRADED holds the autograded cells (each checked by its test cell `test_<grade id>`), WRITTEN the written
answers a person grades by hand (markdown cells `written_<topic>`). The cell-kind functions below are the one
place that reads a cell's nbgrader metadata for what kind it is; they take nbformat cells or plain dicts.
"""

from collections.abc import Mapping

Cell = Mapping  # a notebook cell: an nbformat NotebookNode or its plain-dict JSON form

GRADED: dict[str, dict[str, int]] = {
    "nmt": {
        "positional_encodings": 1,
        "scaled_dot_attention": 2,
        "causal_scaled_dot_attention": 2,
        "generate_tensors_for_training_decoder_nmt": 2,
        "decoder_only_transformer": 2,
        "perplexity": 1,
        "decoder_params": 1,
        "find_optimal_params": 1,
        "fit_linear_log": 1,
    },
    "bert": {
        "encode_sentences": 1,
        "encode_pairs": 1,
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
    "theory": {
        "counterexample_w": 1,
        "logit_after_fgsm": 1,
        "logit_after_fgm": 1,
        "ridge_closed_form": 2,
        "eps_to_zero_logit": 1,
        "eps_fgsm_to_zero_logit": 1,
        "nqm_expected_loss": 2,
        "best_learning_rate": 1,
        "most_efficient_batch": 1,
        "regimes": 1,
        "scaling_choice": 1,
        "relu_chain_grad_bound": 1,
        "rnn_jacobian_bound": 1,
        "relative_attention": 2,
        "conv1d_layer": 2,
        "maxpool_layer": 2,
        "layernorm_norm": 1,
        "layernorm_d2": 1,
    },
}


WRITTEN: dict[str, dict[str, int]] = {
    "nmt": {
        "written_positional_encodings": 1,
        "written_study_analysis": 2,
        "written_decoder_only": 1,
        "written_lm_vs_classifier": 1,
        "written_causal_vs_masked": 1,
        "written_larger_model": 1,
        "written_scaling": 2,
        "written_compute_optimal": 1,
    },
    "bert": {
        "written_training_time": 1,
        "written_accuracy": 2,
        "written_pretraining": 1,
        "written_invariance": 1,
        "written_model_size": 1,
    },
    "clip": {"written_caption_search": 1},
    "theory": {
        "written_fgsm_bound": 1,
        "written_weight_decay": 1,
        "written_fgsm_weight_decay": 1,
        "written_batch_size": 1,
        "written_most_efficient_batch": 1,
        "written_scaling": 1,
        "written_maxpool_limits": 1,
        "written_layernorm_affine": 1,
    },
}


ASSIGNMENT: str = "a3"
NOTEBOOKS: tuple[str, ...] = tuple(GRADED)  # the course's notebooks, in course order


def test_cell_id(grade_id: str) -> str:
    """nbgrader grade_id of the test cell that checks `grade_id`."""
    return f"test_{grade_id}"


def check_id(test_grade_id: str) -> str:
    """The grade id checked by test cell `test_<id>` (an id without the prefix is returned as is)."""
    return test_grade_id[len("test_") :] if test_grade_id.startswith("test_") else test_grade_id


def nbgrader_meta(cell: Cell) -> Mapping:
    """A notebook cell's nbgrader metadata ({} when it has none)."""
    return (cell.get("metadata") or {}).get("nbgrader") or {}


def is_graded_cell(cell: Cell) -> bool:
    """True for a cell that carries points: an autograded test cell or a manually graded answer."""
    return bool(nbgrader_meta(cell).get("grade"))


def is_test_cell(cell: Cell) -> bool:
    """True for an autograded test cell: a graded code cell that is not a solution."""
    return cell.get("cell_type") == "code" and is_graded_cell(cell) and not is_solution_cell(cell)


def is_solution_cell(cell: Cell) -> bool:
    """True for a cell the student fills in (a graded implementation or a written answer)."""
    return bool(nbgrader_meta(cell).get("solution"))


def is_written_cell(cell: Cell) -> bool:
    """True for a manually graded written answer: a graded markdown cell."""
    return cell.get("cell_type") == "markdown" and is_graded_cell(cell)


def max_score(notebook: str) -> int:
    """Autograded points available in a notebook."""
    return sum(GRADED[notebook].values())


def written_max_score(notebook: str) -> int:
    """Points of the written answers of a notebook (graded by hand)."""
    return sum(WRITTEN.get(notebook, {}).values())
