"""The bert checks accept the reference and correct alternatives, and reject the catalogue of mistakes
(tests/checks/mutants_bert.py, run through the loop of tests/checks/harness.py); the tests below it are bert's own."""

import time

import pytest
import torch

from autograder.checks import CheckFailed
from autograder.checks import bert as checks
from autograder.content.reference import bert as ref
from tests.checks import mutants_bert as mutants
from tests.checks.harness import CatalogueTests

CHECKS = {
    "encode_sentences": (checks.check_encode_sentences, ref.encode_sentences),
    "encode_pairs": (checks.check_encode_pairs, ref.encode_pairs),
    "sentence_classifier": (checks.check_sentence_classifier, ref.SentenceClassifier),
    "freeze_encoder": (checks.check_freeze_encoder, ref.freeze_encoder),
}


@pytest.fixture(autouse=True)
def allow_test_modules(monkeypatch):
    """The catalogue lives in a test module, not in a notebook's __main__."""
    monkeypatch.setenv("A3_ALLOW_NON_NOTEBOOK", "1")


def assert_fails(check_fn, obj, fragment, capsys):
    with pytest.raises(CheckFailed) as info:
        check_fn(obj)
    message = str(info.value)
    assert "\n" not in message, f"expected a one-line message, got {message!r}"
    assert message.startswith(f"{check_fn.check_id}: "), f"expected the grade id first, got {message!r}"
    assert fragment in message, f"expected {fragment!r} in the message, got {message!r}"
    out = capsys.readouterr()
    assert "PASSED" not in out.out, f"expected no pass line, got {out.out!r}"
    assert out.err == "", f"expected nothing on stderr, got {out.err!r}"


class TestCatalogue(CatalogueTests):
    """Every check against the reference and every answer of tests/checks/mutants_bert.py (harness.py)."""

    catalogue = mutants.CATALOGUE


@pytest.mark.parametrize("grade_id", sorted(CHECKS))
def test_check_is_fast(grade_id):
    """Does each check finish in under two seconds?"""
    check_fn, solution = CHECKS[grade_id]
    start = time.perf_counter()
    check_fn(solution)
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, f"expected under 2 s, took {elapsed:.2f} s"


@pytest.mark.parametrize("grade_id", sorted(CHECKS))
def test_leaves_global_rng_alone(grade_id):
    """Does running a check leave the student's global torch random state unchanged?"""
    check_fn, solution = CHECKS[grade_id]
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    check_fn(solution)
    got = torch.rand(3)
    assert torch.equal(got, expected), f"expected the same random draws {expected.tolist()}, got {got.tolist()}"


def test_classifier_check_does_not_depend_on_student_rng_use(capsys):
    """Does a correct classifier pass even when its constructor draws extra random numbers?"""

    class Greedy(mutants.ClassifierFirstToken):
        def __init__(self, encoder, num_labels):
            torch.rand(1000)
            super().__init__(encoder, num_labels)

    checks.check_sentence_classifier(Greedy)
    assert capsys.readouterr().out == "PASSED sentence_classifier\n"


def test_rejects_tensor_subclass_with_rigged_equality(capsys):
    """Does check_encode_sentences refuse tensors of a subclass instead of trusting their __eq__?"""

    class Rigged(torch.Tensor):
        def __eq__(self, other):
            return True

    def rigged(tokenizer, sentences, max_len):
        return torch.zeros(len(sentences), max_len, dtype=torch.long).as_subclass(Rigged), torch.zeros(
            len(sentences), max_len, dtype=torch.long
        ).as_subclass(Rigged)

    assert_fails(checks.check_encode_sentences, rigged, "should be a torch.Tensor, got Rigged", capsys)


@pytest.mark.parametrize("grade_id", sorted(CHECKS))
def test_demo_wrong_sample_fails_its_check(grade_id, capsys):
    """Does the demo's wrong answer for this cell, run as notebook code, fail its check?"""
    from autograder.content.samples.bert import WRONG

    namespace = {"__name__": "__main__"}
    exec(compile(WRONG[grade_id], f"<wrong {grade_id}>", "exec"), namespace)
    name = {
        "encode_sentences": "encode_sentences",
        "encode_pairs": "encode_pairs",
        "sentence_classifier": "SentenceClassifier",
        "freeze_encoder": "freeze_encoder",
    }[grade_id]
    check_fn = CHECKS[grade_id][0]
    with pytest.raises(CheckFailed) as info:
        check_fn(namespace[name])
    assert str(info.value).startswith(f"{grade_id}: "), f"expected a {grade_id} failure, got {info.value}"
    assert "raised" not in str(info.value), f"expected a wrong answer, not a crash: {info.value}"
    assert capsys.readouterr().err == ""


def test_demo_samples_cover_every_graded_cell():
    """Is there exactly one demo wrong answer per graded bert cell?"""
    from autograder.content.samples.bert import WRONG
    from autograder.contract import GRADED

    assert sorted(WRONG) == sorted(GRADED["bert"]), f"expected {sorted(GRADED['bert'])}, got {sorted(WRONG)}"
