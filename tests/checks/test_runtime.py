"""Tests for the check runtime in autograder/checks/__init__.py (one behaviour each)."""
import os
import subprocess
import sys

import pytest
import torch

import autograder.reference.nmt as ref
from autograder import checks
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

    with pytest.raises(CheckFailed, match="autograder.reference.nmt"):
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
    """Is the per-run key kept out of the checks module's namespace?"""
    assert not [name for name in vars(checks) if "KEY" in name.upper()], sorted(vars(checks))


def test_pass_line_carries_token_under_key():
    """With A3_CHECK_KEY set at import, does a passing check print the HMAC token of its grade id?"""
    code = ("from autograder.checks import check\n"
            "@check('demo_cell')\n"
            "def demo(): pass\n"
            "import os; assert 'A3_CHECK_KEY' not in os.environ\n"
            "demo()\n")
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
