"""The code base passes its linter (ruff, configured in pyproject.toml)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.paths import ROOT


def ruff():
    """The ruff executable installed beside this Python (setup.sh installs it), else one on PATH."""
    local = Path(sys.executable).parent / "ruff"
    return str(local) if local.exists() else shutil.which("ruff")


def test_ruff_finds_no_lint_errors():
    """Does `ruff check` find no undefined or unused names, syntax or import errors, or unsorted imports, in the
    package and tests?"""
    if ruff() is None:
        pytest.fail("ruff is not installed: run ./setup.sh (requirements.txt pins it)")
    done = subprocess.run(
        [ruff(), "check", "--output-format", "concise", "autograder", "tests"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_code_is_formatted_as_ruff_formats_it():
    """Is every file already in `ruff format`'s form (pyproject's [tool.ruff.format]), so a diff shows only real
    changes?"""
    if ruff() is None:
        pytest.fail("ruff is not installed: run ./setup.sh (requirements.txt pins it)")
    done = subprocess.run(
        [ruff(), "format", "--check", "autograder", "tests"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
