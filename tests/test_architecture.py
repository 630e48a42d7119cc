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


PACKAGE = paths.ROOT / "autograder"
NAME = re.compile(r"`([\w/.{},]+?(?:\.py|/))`")


def layout_rows() -> dict[str, str]:
    """The Layout table's rows about the package: {path as the first column writes it: the row}."""
    rows = {}
    for line in ARCHITECTURE.read_text().splitlines():
        found = re.match(r"\| `(autograder/[^`]*)`", line)
        if found:
            rows[found[1]] = line
    return rows


def named_paths() -> tuple[set, list[str]]:
    """Every module or folder of the package the Layout table names (a name in a package's row is looked for
    anywhere under that package), and the names that match nothing."""
    named, unknown = set(), []
    for first, row in layout_rows().items():
        named.update(paths.ROOT / path for path in re.findall(r"`([^`]+)`", row.split("|")[1]))
        if not first.endswith("/"):
            continue
        base = paths.ROOT / first
        for name in NAME.findall(row.split("|")[2]):
            if name.startswith("autograder/"):
                hits = [paths.ROOT / name] if (paths.ROOT / name).exists() else []
            else:
                hits = [p for p in base.rglob(name.rstrip("/")) if p.as_posix().endswith(name.rstrip("/"))]
            named.update(hits) if hits else unknown.append(f"{first}: {name}")
    return named, unknown


def test_every_module_the_layout_names_exists():
    """Does every module and folder named in docs/ARCHITECTURE.md's Layout table exist in the package?"""
    named, unknown = named_paths()
    assert not unknown, f"named in the Layout table but not in the package: {unknown}"
    assert not [p for p in named if not p.exists()], "a row's own path does not exist"


def test_every_module_and_package_is_described():
    """Is every module of the package (and every sub-package) named in the Layout table, itself or through the folder
    that holds it?"""
    named, _ = named_paths()
    left = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in {"__init__.py", "__main__.py"} and path.parent == PACKAGE:
            continue
        whole = path.parent if path.name == "__init__.py" else path
        if not any(whole == n or (n.is_dir() and n != PACKAGE and n in whole.parents) for n in named):
            left.append(whole.relative_to(paths.ROOT).as_posix())
    assert not left, f"modules the Layout table does not describe: {sorted(set(left))}"


def test_a_module_missing_from_the_layout_is_caught(tmp_path, monkeypatch):
    """Would a row naming a module that does not exist be reported?"""
    doc = tmp_path / "ARCHITECTURE.md"
    doc.write_text("| `autograder/marking/` | `log.py` (the log), `gone.py` (removed) | yes |\n")
    monkeypatch.setitem(globals(), "ARCHITECTURE", doc)
    named, unknown = named_paths()
    assert unknown == ["autograder/marking/: gone.py"]
    assert PACKAGE / "marking" / "log.py" in named
