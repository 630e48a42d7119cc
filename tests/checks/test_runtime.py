"""Tests for the check runtime in autograder/checks/__init__.py (one behaviour each)."""

import os
import subprocess
import sys

import pytest
import torch

import autograder.content.reference.nmt as ref
from autograder.checks import CheckFailed, check, pass_token, require_notebook_defined

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def in_main(obj):
    """Pretend obj was defined in a notebook (module __main__)."""
    obj.__module__ = "__main__"
    return obj


@pytest.fixture(autouse=True)
def strict(monkeypatch):
    monkeypatch.delenv("A3_ALLOW_NON_NOTEBOOK", raising=False)


def test_accepts_own_class():
    """Is a class written in the notebook accepted?"""

    class Mine(torch.nn.Module):
        def forward(self, x):
            return x

    require_notebook_defined(in_main(Mine), "Mine")


def test_rejects_subclass_of_reference():
    """Is a notebook class that merely subclasses the reference rejected?"""

    class ScaledDotAttention(ref.ScaledDotAttention):
        pass

    with pytest.raises(CheckFailed, match="must be your own code"):
        require_notebook_defined(in_main(ScaledDotAttention), "ScaledDotAttention")


def test_rejects_copied_reference_method():
    """Is a notebook class that borrows the reference's forward method rejected?"""

    class Sneaky(torch.nn.Module):
        forward = ref.ScaledDotAttention.forward

    with pytest.raises(CheckFailed, match="autograder.content.reference.nmt"):
        require_notebook_defined(in_main(Sneaky), "Sneaky")


def test_rejects_imported_reference_function():
    """Is a function imported from the grader's references rejected?"""
    with pytest.raises(CheckFailed, match="must be defined in this notebook"):
        require_notebook_defined(ref.create_positional_encodings, "create_positional_encodings")


def test_failure_is_one_line_with_grade_id():
    """Does a failing check raise one line prefixed with its grade id?"""

    @check("demo_cell")
    def demo(_):
        raise CheckFailed("expected 3,\ngot 4")

    with pytest.raises(CheckFailed) as info:
        demo(None)
    assert str(info.value).startswith("demo_cell: "), str(info.value)


def test_key_is_not_a_module_attribute():
    """Is the per-run key kept out of the checks module's namespace (no attribute holds it)?"""
    code = (
        "import autograder.checks as c\n"
        "print([n for n, v in vars(c).items() if isinstance(v, (str, bytes)) and 's3cret' in str(v)])"
    )
    assert run_checks_code(code, key="s3cret").strip() == "[]"


def test_pass_line_carries_token_under_key():
    """With A3_CHECK_KEY set at import, does a passing check print the HMAC token of its grade id?"""
    code = (
        "from autograder.checks import check\n"
        "@check('demo_cell')\n"
        "def demo(): pass\n"
        "import os; assert 'A3_CHECK_KEY' not in os.environ\n"
        "demo()\n"
    )
    env = dict(os.environ, A3_CHECK_KEY="s3cret", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"PASSED demo_cell [a3:{pass_token('demo_cell', b's3cret')}]", out


def test_pass_line_without_key_has_no_token(capsys):
    """Without a key (instructor running the source notebook), is the pass line plain?"""

    @check("demo_cell")
    def demo():
        pass

    demo()
    assert capsys.readouterr().out.strip() == "PASSED demo_cell"


def run_checks_code(code, key=None):
    """stdout of `code` run in a fresh interpreter (A3_CHECK_KEY=key at import when given)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("A3_CHECK_KEY", None)
    if key is not None:
        env["A3_CHECK_KEY"] = key
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout


def test_checks_defined_after_seal_print_no_token():
    """After seal(), does a check defined with @check print its pass line without a token, while a check
    defined before still prints one?"""
    code = (
        "from autograder.checks import check, seal\n"
        "@check('before')\ndef before(): pass\n"
        "seal()\n"
        "@check('after')\ndef after(): pass\n"
        "before(); after()\n"
    )
    out = run_checks_code(code, key="s3cret").split("\n")
    assert out[:2] == [f"PASSED before [a3:{pass_token('before', b's3cret')}]", "PASSED after"], out


def test_key_given_after_definition_is_used():
    """Does a check defined (and sealed) before set_key() sign with the key given later, as forked kernels need?"""
    code = (
        "from autograder.checks import check, seal, set_key\n"
        "@check('cell')\ndef cell(): pass\n"
        "seal(); set_key(b'later')\ncell()\n"
    )
    assert run_checks_code(code).strip() == f"PASSED cell [a3:{pass_token('cell', b'later')}]"


def test_key_cannot_be_replaced():
    """Does set_key() refuse to replace a key that is already set (so notebook code cannot swap in its own)?"""
    code = (
        "from autograder.checks import set_key\n"
        "try:\n    set_key(b'mine')\n    print('replaced')\nexcept RuntimeError:\n    print('refused')\n"
    )
    assert run_checks_code(code, key="s3cret").strip() == "refused"
