"""docs/ARCHITECTURE.md's list of the places a new notebook touches, held against the four notebooks that exist."""

import re
import subprocess

from autograder import contract, paths
from tests.notebooks import OBJECT
from tests.visible.run import PROVIDED

ARCHITECTURE = paths.ROOT / "docs" / "ARCHITECTURE.md"


def adding_a_notebook():
    """The text of the 'Adding a notebook' item, spaces folded."""
    text = ARCHITECTURE.read_text()
    start = text.index("- Adding a notebook")
    end = text.index("\n- ", start + 1)
    return " ".join(text[start:end].split())


def tracked_files():
    out = subprocess.run(["git", "ls-files"], cwd=paths.ROOT, capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def test_every_file_of_a_notebook_is_listed():
    """Is every tracked file named after a notebook (its checks, reference, samples, tests, catalogues, source and
    release) named in 'Adding a notebook', with <nb> for the notebook?"""
    listed = adding_a_notebook()
    missing = []
    for notebook in contract.NOTEBOOKS:
        pattern = re.compile(rf"(^|/|_){notebook}(\.py|\.ipynb)$")
        for path in tracked_files():
            if pattern.search(path) and f"`{path.replace(notebook, '<nb>')}`" not in listed:
                missing.append(path)
    assert not missing, f"files of a notebook that 'Adding a notebook' does not name: {missing}"


def test_every_table_keyed_by_notebook_is_listed():
    """Are the per-notebook tables the tests read (PROVIDED, OBJECT) and the contract's tables named, and do they
    hold every notebook?"""
    listed = adding_a_notebook()
    for name, table in (("PROVIDED", PROVIDED), ("OBJECT", OBJECT), ("GRADED", contract.GRADED)):
        assert f"`{name}`" in listed, f"'Adding a notebook' does not name {name}"
        assert set(table) == set(contract.NOTEBOOKS), f"{name} holds {sorted(table)}"


def test_readme_has_a_row_and_a_badge_per_notebook():
    """Does the README, as the list says, have a points-table row and a Colab badge for every notebook?"""
    readme = (paths.ROOT / "README.md").read_text()
    for notebook in contract.NOTEBOOKS:
        assert f"| `{notebook}.ipynb` |" in readme, f"no README table row for {notebook}"
        assert f"release/a3/{notebook}.ipynb)" in readme, f"no Colab badge for {notebook}"
