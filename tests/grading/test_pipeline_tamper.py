"""Tampering does not pay: each tampered submission scores no more than its honest baseline.

The submissions are cases of the corpus (tests/corpus/make_corpus.py), graded in the same batch.
"""

import re

import nbformat
import pytest

from autograder import contract
from tests.corpus import batch

pytestmark = pytest.mark.slow

TAMPERING = {
    "edited_tests": "test cells edited to print fake PASSED lines",
    "skip_tag": "skip-execution tag on the test cells",
    "deleted_tests_unsolved": "test cells deleted",
    "fake_module": "fake autograder.checks.nmt planted in sys.modules",
    "check_decorator": "fake autograder.checks.nmt built with the real @check decorator",
    "reference_import": "solutions imported from autograder.content.reference",
    "redefine_check": "check functions redefined in the notebook",
    "monkeypatch": "torch.allclose, torch.equal, numpy.testing and builtins.abs monkey-patched",
    "eq_true": "results whose __eq__ always returns True",
}


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    return batch.graded_corpus(tmp_path_factory)


def case(corpus, name):
    found = [c for c in corpus["cases"] if c.student == name]
    assert found, f"the corpus has no case {name!r}"
    return found[0]


def score(corpus, student):
    return float(corpus["grades"][(student, "nmt")]["score"])


@pytest.mark.parametrize("name", sorted(TAMPERING))
def test_tampering_does_not_raise_the_grade(corpus, name):
    """Does this kind of tampering score no more than the same work done honestly?"""
    c = case(corpus, name)
    got, base = score(corpus, name), score(corpus, c.baseline)
    assert got <= base, f"{TAMPERING[name]}: expected at most the baseline {c.baseline}'s {base}, got {got}"
    assert got == c.expect["nmt"][1], f"{TAMPERING[name]}: expected {c.expect['nmt'][1]}, got {got}"


@pytest.mark.parametrize("name", ["fake_module", "check_decorator"])
def test_fake_pass_lines_are_rejected(corpus, name):
    """Are PASSED lines printed by a planted fake check module (hand-written, or built with the real @check
    decorator) refused for lack of a valid token?"""
    lines = [l for l in corpus["log"].splitlines() if f"CHECK {name}/nmt/" in l]
    assert len(lines) == len(contract.GRADED["nmt"]), f"expected one refusal per check, got {lines}"
    assert all("no valid pass token" in l for l in lines), f"expected token refusals, got {lines}"


def test_patched_functions_do_not_fool_the_check(corpus):
    """With torch/numpy/builtins patched, does the wrong cell get 0 while the correct ones keep their points?"""
    cells = {g: float(corpus["cells"][("monkeypatch", "nmt", g)]["score"]) for g in contract.GRADED["nmt"]}
    want = dict(contract.GRADED["nmt"], positional_encodings=0)
    assert cells == want, f"expected {want}, got {cells}"


@pytest.mark.parametrize(
    "what, pattern",
    [
        ("the source notebook", r"SANDBOX snoop/nmt: blocked: tried to read .*/source/a3/nmt\.ipynb"),
        ("the gradebook", r"SANDBOX snoop/nmt: blocked: tried to read .*/gradebook\.db"),
        ("the instructor's home", r"SANDBOX snoop/nmt: blocked: tried to read /root/"),
        ("the network", r"SANDBOX snoop/nmt: blocked: tried to open a network connection"),
    ],
)
def test_sandbox_denies_and_logs(corpus, what, pattern):
    """Does a submission that reaches for this get nothing, and does grading.log say so?"""
    assert re.search(pattern, corpus["log"]), f"expected a log line for {what} matching {pattern!r}"
    assert score(corpus, "snoop") == contract.max_score("nmt"), "expected the snooping (correct) notebook in full"


def test_snoop_read_nothing(corpus):
    """Did every read and the socket fail inside the notebook (as its own output shows)?"""
    nb = nbformat.read(corpus["out"] / "autograded" / "snoop" / "a3" / "nmt.ipynb", as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert " read " not in text and "network: connected" not in text, f"expected no successful read, saw {text[:300]!r}"
    assert text.count("-> FileNotFoundError") == 4 and "network -> OSError" in text, f"saw {text[:400]!r}"
