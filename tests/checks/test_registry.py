"""The check registry of autograder.checks: one registered check per graded cell of the course contract."""

import ast
import importlib
import inspect
import os
import subprocess
import sys
from collections import Counter

import autograder.checks as checks
from autograder import contract

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COURSE = {nb: importlib.import_module(f"autograder.checks.{nb}") for nb in contract.NOTEBOOKS}


def decorated_ids(module):
    """Grade ids of every `@check("<id>")` in the module's source (also those a later definition shadows)."""
    found = []
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        for deco in getattr(node, "decorator_list", []):
            if isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "check":
                found.append(deco.args[0].value)
    return found


def test_every_graded_cell_has_exactly_one_registered_check():
    """Does every grade id of contract.GRADED have exactly one @check, registered from its notebook's module?"""
    for nb, module in COURSE.items():
        counts = Counter(decorated_ids(module))
        assert counts == Counter(list(contract.GRADED[nb])), f"{module.__name__}: checks {dict(counts)}"
        for gid in contract.GRADED[nb]:
            fn = checks.registry.get(gid)
            assert fn is not None, f"no check registered for {gid}"
            assert fn.check_id == gid and fn.__module__ == module.__name__, f"{gid}: registered {fn!r}"


def test_checks_defined_after_seal_are_not_registered():
    """Does the registry keep only the checks defined before seal() (the genuine ones)?"""
    code = (
        "from autograder.checks import check, registry, seal\n"
        "@check('before')\ndef before(): pass\n"
        "seal()\n"
        "@check('after')\ndef after(): pass\n"
        "print(sorted(registry))\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("A3_CHECK_KEY", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['before']"
