"""Helpers shared by the check tests: run a catalogue source as a notebook cell, call a check, read its verdict.

The loop every notebook's checks go through, and the shape of the catalogues it reads, are in harness.py."""

import contextlib
import io

import pytest

from autograder.checks import CheckFailed


def notebook_cell(prelude, source, name):
    """Run `prelude + source` as a notebook cell (module __main__) and return the object named `name` it defines."""
    namespace = {"__name__": "__main__"}
    exec(compile(prelude + source, f"<cell {name}>", "exec"), namespace)
    return namespace[name]


def run(check, obj, **kwargs):
    """Call a check; return what it printed to stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        check(obj, **kwargs)
    return out.getvalue()


def failure(check, obj, **kwargs):
    """Call a check that must fail; return its one-line message."""
    with pytest.raises(CheckFailed) as info:
        run(check, obj, **kwargs)
    return str(info.value)
