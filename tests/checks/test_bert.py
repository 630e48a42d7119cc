"""The bert checks accept the reference and correct alternatives, and reject the catalogue of mistakes."""

import time

import pytest
import torch

from autograder.checks import CheckFailed
from autograder.checks import bert as checks
from autograder.content.reference import bert as ref
from tests.checks import mutants_bert as mutants

CHECKS = {
    "encode_sentences": (checks.check_encode_sentences, ref.encode_sentences),
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


@pytest.mark.parametrize("grade_id", sorted(CHECKS))
def test_reference_passes(grade_id, capsys):
    """Does the check pass the reference solution and print exactly one PASSED line, nothing on stderr?"""
    check_fn, solution = CHECKS[grade_id]
    check_fn(solution)
    out = capsys.readouterr()
    assert out.out == f"PASSED {grade_id}\n", f"expected one pass line, got {out.out!r}"
    assert out.err == "", f"expected nothing on stderr, got {out.err!r}"


@pytest.mark.parametrize("grade_id", sorted(CHECKS))
def test_check_is_fast(grade_id):
    """Does each check finish in under two seconds?"""
    check_fn, solution = CHECKS[grade_id]
    start = time.perf_counter()
    check_fn(solution)
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, f"expected under 2 s, took {elapsed:.2f} s"


@pytest.mark.parametrize("grade_id", sorted(CHECKS))
def test_rejects_object_imported_from_autograder(grade_id, monkeypatch, capsys):
    """Does the check refuse the reference itself when it is imported instead of written in the notebook?"""
    monkeypatch.delenv("A3_ALLOW_NON_NOTEBOOK")
    check_fn, solution = CHECKS[grade_id]
    assert_fails(check_fn, solution, "must be defined in this notebook", capsys)


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


@pytest.mark.parametrize("fn", mutants.ENCODE_CORRECT, ids=lambda f: f.__name__)
def test_encode_accepts_correct_alternative(fn, capsys):
    """Does check_encode_sentences accept this correct way of tokenising, padding and truncating?"""
    checks.check_encode_sentences(fn)
    assert capsys.readouterr().out == "PASSED encode_sentences\n"


@pytest.mark.parametrize("fn,fragment", mutants.ENCODE_MUTANTS, ids=lambda x: getattr(x, "__name__", ""))
def test_encode_rejects_mistake(fn, fragment, capsys):
    """Does check_encode_sentences reject this mistake and name it?"""
    assert_fails(checks.check_encode_sentences, fn, fragment, capsys)


@pytest.mark.parametrize("cls", mutants.CLASSIFIER_CORRECT, ids=lambda c: c.__name__)
def test_classifier_accepts_correct_alternative(cls, capsys):
    """Does check_sentence_classifier accept this correct SentenceClassifier (first token or pooler)?"""
    checks.check_sentence_classifier(cls)
    assert capsys.readouterr().out == "PASSED sentence_classifier\n"


@pytest.mark.parametrize("cls,fragment", mutants.CLASSIFIER_MUTANTS, ids=lambda x: getattr(x, "__name__", ""))
def test_classifier_rejects_mistake(cls, fragment, capsys):
    """Does check_sentence_classifier reject this mistake and name it?"""
    assert_fails(checks.check_sentence_classifier, cls, fragment, capsys)


@pytest.mark.parametrize("fn", mutants.FREEZE_CORRECT, ids=lambda f: f.__name__)
def test_freeze_accepts_correct_alternative(fn, capsys):
    """Does check_freeze_encoder accept this correct way of freezing everything but the classifier?"""
    checks.check_freeze_encoder(fn)
    assert capsys.readouterr().out == "PASSED freeze_encoder\n"


@pytest.mark.parametrize("fn,fragment", mutants.FREEZE_MUTANTS, ids=lambda x: getattr(x, "__name__", ""))
def test_freeze_rejects_mistake(fn, fragment, capsys):
    """Does check_freeze_encoder reject this mistake and name it?"""
    assert_fails(checks.check_freeze_encoder, fn, fragment, capsys)


def test_catalogue_is_big_enough():
    """Does the catalogue hold at least six mistakes and two correct alternatives per graded cell?"""
    sizes = {
        "encode_sentences": (len(mutants.ENCODE_MUTANTS), len(mutants.ENCODE_CORRECT)),
        "sentence_classifier": (len(mutants.CLASSIFIER_MUTANTS), len(mutants.CLASSIFIER_CORRECT)),
        "freeze_encoder": (len(mutants.FREEZE_MUTANTS), len(mutants.FREEZE_CORRECT)),
    }
    small = {k: v for k, v in sizes.items() if v[0] < 6 or v[1] < 2}
    assert not small, f"expected >= 6 mistakes and >= 2 alternatives per cell, got {small}"


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
