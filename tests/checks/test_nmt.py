"""Tests of the hidden NMT checks (autograder/checks/nmt.py).

Each check must accept the reference and correct alternative implementations and reject every
realistic mistake in tests/checks/mutants_nmt.py with a one-line message saying what was expected
(the loop of tests/checks/harness.py); the tests below it are the NMT checks' own.
"""

import inspect
import math
import time
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn

from autograder.checks import CheckFailed
from autograder.checks import nmt as checks
from autograder.content.reference import nmt as ref
from autograder.content.samples.nmt import WRONG
from autograder.contract import GRADED
from tests.checks.harness import CatalogueTests, device_mutants
from tests.checks.mutants_nmt import CATALOGUE

CHECKS = {gid: CATALOGUE.check(gid) for gid in CATALOGUE}
REFERENCES = {gid: CATALOGUE.imported_reference(gid) for gid in CATALOGUE}

# The name each graded solution cell defines.
NAMES = {gid: CATALOGUE.name(gid) for gid in CATALOGUE}


@pytest.fixture(autouse=True)
def allow_test_objects(monkeypatch):
    """Objects defined in test modules count as notebook-defined, except where a test removes this."""
    monkeypatch.setenv("A3_ALLOW_NON_NOTEBOOK", "1")


def _failure(gid, obj):
    with pytest.raises(CheckFailed) as info:
        CHECKS[gid](obj)
    return str(info.value)


def _assert_student_message(gid, message):
    assert message.startswith(f"{gid}: "), message
    assert "\n" not in message, message
    assert "should" in message or "expected" in message, message


def _notebook_namespace(**names):
    """A namespace like a notebook kernel's: __name__ is __main__ and the usual imports are there."""
    namespace = {"__name__": "__main__", "torch": torch, "nn": nn, "np": np, "math": math}
    namespace.update(names)
    return namespace


# --------------------------------------------------------------------------------------------
# both ways: correct answers pass, mistakes fail


class TestCatalogue(CatalogueTests):
    """Every check against the reference and every answer of tests/checks/mutants_nmt.py (harness.py)."""

    catalogue = CATALOGUE
    message_words = ("should", "expected")  # every NMT failure says what was expected


@pytest.mark.gpu
@pytest.mark.parametrize("gid, mutant", device_mutants(CATALOGUE))
def test_device_mutant_is_wrong_on_a_real_gpu(gid, mutant):
    """Does each device mistake really fail on CUDA, so the stand-in GPU judges as a real one would?"""
    with pytest.raises(RuntimeError, match="device"):
        if gid == "generate_tensors_for_training_decoder_nmt":
            mutant(
                torch.ones(2, 3, dtype=torch.long, device="cuda"),
                torch.ones(2, 4, dtype=torch.long, device="cuda"),
                0,
                True,
            )
        elif gid == "causal_scaled_dot_attention":
            x = torch.randn(2, 4, 6, device="cuda")
            mutant(6).to("cuda")(x, x, x)
        else:
            mutant(11, 8, 2).to("cuda")(torch.zeros(2, 5, dtype=torch.long, device="cuda"))


def test_check_rejects_softmax_over_query_axis_with_axis_hint():
    """Does the check reject softmax over the query axis and say which axis softmax belongs on?"""
    from tests.checks.mutants_nmt import SDASoftmaxQueries

    message = _failure("scaled_dot_attention", SDASoftmaxQueries)
    assert "softmax must be taken over the last axis" in message


# --------------------------------------------------------------------------------------------
# notebook-defined objects


@pytest.mark.parametrize("gid", sorted(GRADED["nmt"]))
def test_check_passes_reference_defined_in_notebook(gid, monkeypatch, capsys):
    """Does the reference pass when its source is run in a notebook kernel (__main__), without the override?"""
    monkeypatch.delenv("A3_ALLOW_NON_NOTEBOOK")
    namespace = _notebook_namespace()
    for dependency in (ref.create_positional_encodings, ref.CausalScaledDotAttention, REFERENCES[gid]):
        exec(compile(inspect.getsource(dependency), "<cell>", "exec"), namespace)
    CHECKS[gid](namespace[NAMES[gid]])
    assert capsys.readouterr().out.endswith(f"PASSED {gid}\n")


# --------------------------------------------------------------------------------------------
# sample wrong answers (used by the demo and the grading tests)


@pytest.mark.parametrize("gid", sorted(GRADED["nmt"]))
def test_wrong_sample_defines_the_graded_name(gid):
    """Does the sample wrong cell define the same name as the solution cell?"""
    namespace = _notebook_namespace()
    exec(compile(WRONG[gid], "<cell>", "exec"), namespace)
    assert namespace[NAMES[gid]].__module__ == "__main__"
    assert namespace[NAMES[gid]].__name__ == NAMES[gid]


@pytest.mark.parametrize("gid", sorted(GRADED["nmt"]))
def test_wrong_sample_fails_its_check(gid, monkeypatch):
    """Does the sample wrong cell, run in a notebook kernel, fail its own check?"""
    monkeypatch.delenv("A3_ALLOW_NON_NOTEBOOK")
    namespace = _notebook_namespace(
        CausalScaledDotAttention=ref.CausalScaledDotAttention,
        create_positional_encodings=ref.create_positional_encodings,
    )
    exec(compile(WRONG[gid], "<cell>", "exec"), namespace)
    message = _failure(gid, namespace[NAMES[gid]])
    _assert_student_message(gid, message)


def test_decoder_check_does_not_depend_on_the_other_cells(monkeypatch, capsys):
    """Does a correct decoder still pass when the notebook's attention and positional cells are wrong?"""
    monkeypatch.delenv("A3_ALLOW_NON_NOTEBOOK")
    namespace = _notebook_namespace()
    exec(compile(WRONG["positional_encodings"], "<cell>", "exec"), namespace)
    exec(compile(WRONG["causal_scaled_dot_attention"], "<cell>", "exec"), namespace)
    exec(compile(inspect.getsource(ref.DecoderOnlyTransformer), "<cell>", "exec"), namespace)
    checks.check_decoder_only_transformer(namespace["DecoderOnlyTransformer"])
    assert capsys.readouterr().out == "PASSED decoder_only_transformer\n"


# --------------------------------------------------------------------------------------------
# check runtime behaviours these checks rely on


class _Crashing(ref.ScaledDotAttention):
    def forward(self, queries, keys, values):
        raise ValueError("shapes do not match\nsee above")


class _Noisy(ref.ScaledDotAttention):
    def forward(self, queries, keys, values):
        import sys

        warnings.warn("student warning", UserWarning)
        print("student stderr", file=sys.stderr)
        return super().forward(queries, keys, values)


def test_student_exception_becomes_one_line_failure():
    """Does an exception raised by student code become a one-line CheckFailed that names it?"""
    message = _failure("scaled_dot_attention", _Crashing)
    assert "\n" not in message
    assert "raised ValueError: shapes do not match see above" in message


def test_student_warnings_do_not_reach_stderr(capfd):
    """Do warnings and stderr prints from student code stay off the test cell's stderr?"""
    checks.check_scaled_dot_attention(_Noisy)
    out, err = capfd.readouterr()
    assert err == ""
    assert out == "PASSED scaled_dot_attention\n"


def test_failing_check_writes_nothing_to_stderr(capfd):
    """Does a failing check keep stderr empty (nbgrader scores a cell with stderr output as 0)?"""
    _failure("scaled_dot_attention", _Crashing)
    assert capfd.readouterr().err == ""


def test_check_leaves_student_rng_untouched():
    """Does running a check leave the global torch random state as it was?"""
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    checks.check_scaled_dot_attention(ref.ScaledDotAttention)
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize("gid", sorted(GRADED["nmt"]))
def test_check_is_fast(gid):
    """Does the check run in well under 2 s on the reference (test cells share nbgrader's 30 s budget)?"""
    start = time.perf_counter()
    CHECKS[gid](REFERENCES[gid])
    assert time.perf_counter() - start < 2.0


def test_check_restores_thread_count():
    """Does a check give back the caller's torch thread count after running single-threaded?"""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        checks.check_scaled_dot_attention(ref.ScaledDotAttention)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


# --------------------------------------------------------------------------------------------
# decoder_params: "count by hand, build no model" enforced by what the call does


_NOTEBOOK_DECODER_PARAMS = {
    "the class by name": "    return count_parameters(DecoderOnlyTransformer(vocab_size, hidden_size, num_layers))\n",
    "the class by a computed name": (
        '    cls = globals()["Decoder" + "OnlyTransformer"]\n'
        "    return count_parameters(cls(vocab_size, hidden_size, num_layers))\n"
    ),
    "the class of a trained model": (
        "    return count_parameters(type(trained)(vocab_size, hidden_size, num_layers))\n"
    ),
    "a helper that builds": "    return helper(vocab_size, hidden_size, num_layers)\n",
}


@pytest.mark.parametrize("how", list(_NOTEBOOK_DECODER_PARAMS))
def test_decoder_params_that_builds_the_notebooks_model_fails_and_leaves_the_notebook_as_it_was(
    how, monkeypatch, capsys
):
    """In a notebook kernel with a working DecoderOnlyTransformer and a trained model, does a decoder_params that
    builds a model (by name, computed name, type(trained) or a helper) fail in one line naming the class, and are the
    notebook's class, nn.Module and module building as they were afterwards?"""
    monkeypatch.delenv("A3_ALLOW_NON_NOTEBOOK")
    namespace = _notebook_namespace()
    for dependency in (ref.create_positional_encodings, ref.CausalScaledDotAttention, ref.DecoderOnlyTransformer):
        exec(compile(inspect.getsource(dependency), "<cell>", "exec"), namespace)
    source = (
        "def count_parameters(model):\n    return sum(p.numel() for p in model.parameters() if p.requires_grad)\n\n"
        "trained = DecoderOnlyTransformer(5, 4, 1)\n\n"
        "def helper(V, H, L):\n    return count_parameters(DecoderOnlyTransformer(V, H, L))\n\n"
        "def decoder_params(vocab_size, hidden_size, num_layers):\n" + _NOTEBOOK_DECODER_PARAMS[how]
    )
    exec(compile(source, "<cell>", "exec"), namespace)
    notebook_class, module_init = namespace["DecoderOnlyTransformer"], nn.Module.__init__
    message = _failure("decoder_params", namespace["decoder_params"])
    _assert_student_message("decoder_params", message)
    assert "without building a model or a layer (it built DecoderOnlyTransformer;" in message, message
    assert namespace["DecoderOnlyTransformer"] is notebook_class and nn.Module.__init__ is module_init
    assert namespace["decoder_params"](29, 32, 2) == 10333  # outside the check, the notebook builds models again
    assert capsys.readouterr().out == ""


def test_decoder_params_refusal_lends_no_name_to_a_notebook_without_the_class(monkeypatch):
    """With the DecoderOnlyTransformer cell never run, does a decoder_params that builds it fail for building (not
    with a NameError), and does the check leave no DecoderOnlyTransformer behind in the notebook?"""
    monkeypatch.delenv("A3_ALLOW_NON_NOTEBOOK")
    namespace = _notebook_namespace()
    source = (
        "def decoder_params(vocab_size, hidden_size, num_layers):\n"
        "    return sum(p.numel() for p in DecoderOnlyTransformer(vocab_size, hidden_size, num_layers).parameters())\n"
    )
    exec(compile(source, "<cell>", "exec"), namespace)
    assert "(it built DecoderOnlyTransformer;" in _failure("decoder_params", namespace["decoder_params"])
    assert "DecoderOnlyTransformer" not in namespace


def test_decoder_params_check_restores_module_building_after_a_crash():
    """When decoder_params raises (not for building), does the check say so in one line and leave nn.Module
    buildable?"""

    def crashes(vocab_size, hidden_size, num_layers):
        raise ZeroDivisionError("division by zero")

    message = _failure("decoder_params", crashes)
    assert "should run without errors, but raised ZeroDivisionError" in message, message
    assert nn.Linear(2, 3).weight.shape == (3, 2)
