"""The setup cell's helpers for visible checks (docs/setup_cell.py): `expect_shape` and `attempt`."""

import numpy as np
import pytest

from tests.notebooks import SETUP_CELL


@pytest.fixture(scope="module")
def setup():
    namespace = {}
    exec(SETUP_CELL.read_text(), namespace)
    return namespace


def test_expect_shape_passes_the_right_shape_and_names_a_wrong_one(setup):
    """Does expect_shape return True for the expected shape, and else raise one line naming `what`?"""
    assert setup["expect_shape"](np.zeros((2, 3)), (2, 3), "logits") is True
    with pytest.raises(AssertionError, match=r"^logits: expected shape \(2, 3\), got \(3, 2\)$"):
        setup["expect_shape"](np.zeros((3, 2)), (2, 3), "logits")


def test_attempt_keeps_a_todo_and_turns_other_errors_into_one_line(setup):
    """Does attempt return the call's result, let a TODO's NotImplementedError through unchanged, and turn
    any other error (a multi-line one too) into a one-line AssertionError that names the call?"""
    attempt = setup["attempt"]
    assert attempt(max, 2, 5, what="max") == 5

    def todo():
        raise NotImplementedError("TODO: write create_positional_encodings")

    with pytest.raises(NotImplementedError, match="^TODO: write create_positional_encodings$"):
        attempt(todo, what="todo()")

    def broken(x):
        raise ValueError(f"bad shape\n  for {x}")

    with pytest.raises(AssertionError) as caught:
        attempt(broken, 3, what="broken(3)")
    assert str(caught.value) == "broken(3) should work, but raised ValueError: bad shape for 3"
