"""Every package the kit imports is declared: requirements.txt or requirements-torch.txt names its distribution,
so the kit does not work only because another package happened to bring it along."""

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

from autograder.paths import ROOT

# imported only where the package exists by design: Colab's own module, read in the notebooks' last cell
PROVIDED_ELSEWHERE = {"google"}


def imported_top_level(folder: Path) -> set[str]:
    """Top-level names of the absolute imports in every module under `folder`."""
    names = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def declared() -> set[str]:
    """Distribution names in the requirements files, normalised (PEP 503)."""
    found = set()
    for name in ("requirements.txt", "requirements-torch.txt"):
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
            line = line.split("#")[0].strip()
            if line and not line.startswith("-"):
                found.add(normalise(re.split(r"[=<>!~;\[ ]", line)[0]))
    return found


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_third_party_import_of_the_kit_is_declared():
    """Does each package autograder/ imports (not the standard library, not the kit) have its distribution in the
    requirements files?"""
    third_party = imported_top_level(ROOT / "autograder") - set(sys.stdlib_module_names) - {"autograder"}
    distributions = importlib.metadata.packages_distributions()
    missing = sorted(
        name
        for name in third_party - PROVIDED_ELSEWHERE
        if not {normalise(d) for d in distributions.get(name, [name])} & declared()
    )
    assert not missing, f"imported but not declared in requirements.txt: {', '.join(missing)}"


def test_an_undeclared_import_is_caught(tmp_path):
    """Would a module importing a package nobody declared (here `yaml` from PyYAML) be found?"""
    (tmp_path / "m.py").write_text("import yaml\nfrom numpy import zeros\nfrom . import sibling\n")
    names = imported_top_level(tmp_path)
    assert names == {"yaml", "numpy"}
    assert "pyyaml" not in declared() and "numpy" in declared()
