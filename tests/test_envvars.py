"""autograder/envvars.py declares every A3_* environment variable once: checked against the code that sets and reads
them and against the table in docs/ARCHITECTURE.md."""

import ast
import json
import re
from pathlib import Path

from autograder import envvars
from autograder.paths import ROOT
from autograder.sandbox.limits import limits

NAME = re.compile(r"\bA3_[A-Z][A-Z0-9_]*\b")
CONSTANTS = {attr: value for attr, value in vars(envvars).items() if isinstance(value, str) and NAME.fullmatch(value)}
DECLARATION = ROOT / "autograder" / "envvars.py"
# Besides the package: what the notebooks, scripts and pages of the repository name (release/ is generated)
ELSEWHERE = ("tests", "docs", "notebooks", "source", ".ci", "setup.sh", "README.md")


def _files(*roots):
    for root in roots:
        path = ROOT / root
        found = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        yield from (p for p in found if "__pycache__" not in p.parts and p.suffix not in (".pyc", ".png", ".pt"))


def _names_in_text(path):
    try:
        return set(NAME.findall(path.read_text()))
    except UnicodeDecodeError:
        return set()


def _code_names(path):
    """The A3_* names a file uses in code: in Python, a string that is exactly the name, an envvars constant
    (`envvars.CHECK_KEY`, or imported from autograder.envvars) or a keyword argument; in a notebook, a name in a code
    cell; elsewhere (a shell script), any mention."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        return {n for c in cells if c["cell_type"] == "code" for n in NAME.findall("".join(c["source"]))}
    if path.suffix != ".py":
        return _names_in_text(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.fullmatch(node.value):
            found.add(node.value)
        elif isinstance(node, ast.keyword) and node.arg and NAME.fullmatch(node.arg):
            found.add(node.arg)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "envvars":
            if node.attr in CONSTANTS:
                found.add(CONSTANTS[node.attr])
        elif isinstance(node, ast.ImportFrom) and node.module == "autograder.envvars":
            found.update(CONSTANTS[a.name] for a in node.names if a.name in CONSTANTS)
    return found


def test_every_name_in_the_package_is_declared():
    """Is every A3_* name that appears anywhere in autograder/ (code, docstrings, messages) declared in envvars?"""
    undeclared = {
        f"{name} ({path.relative_to(ROOT)})"
        for path in _files("autograder")
        for name in _names_in_text(path)
        if name not in envvars.BY_NAME
    }
    assert not undeclared, f"declare them in autograder/envvars.py: {sorted(undeclared)}"


def test_every_name_elsewhere_in_the_repository_is_declared():
    """Is every A3_* name the tests, docs, notebooks and scripts mention declared too (a variable a notebook or
    setup.sh reads is one of the kit's)?"""
    undeclared = {
        f"{name} ({path.relative_to(ROOT)})"
        for path in _files(*ELSEWHERE)
        for name in _names_in_text(path)
        if name not in envvars.BY_NAME
    }
    assert not undeclared, f"declare them in autograder/envvars.py: {sorted(undeclared)}"


def test_each_name_is_declared_once_with_its_own_constant():
    """Is each variable declared once, under a constant of its own?"""
    names = [var.name for var in envvars.VARIABLES]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert set(names) == set(CONSTANTS.values()), "each declared variable needs one name constant, and vice versa"
    assert len(CONSTANTS) == len(set(CONSTANTS.values())), "two constants hold the same name"


def test_declared_writers_and_readers_use_the_variable():
    """Does every file a declaration names as a writer or reader exist and use that variable in its code (not only in
    a comment or docstring)?"""
    wrong = []
    for var in envvars.VARIABLES:
        assert var.readers or var.writers, f"{var.name}: nobody sets or reads it"
        for rel in set(var.writers + var.readers) - {envvars.USER}:
            path = ROOT / rel
            if not path.is_file():
                wrong.append(f"{var.name}: {rel} does not exist")
            elif var.name not in _code_names(path):
                wrong.append(f"{var.name}: {rel} does not use it")
    assert not wrong, wrong


def test_every_module_using_a_variable_is_declared_as_its_writer_or_reader():
    """Is every module of the package that uses an A3_* variable in its code named as a writer or reader of it?"""
    undeclared = []
    for path in _files("autograder"):
        if path.suffix != ".py" or path == DECLARATION:
            continue
        rel = path.relative_to(ROOT).as_posix()
        for name in _code_names(path):
            var = envvars.BY_NAME.get(name)
            if var is not None and rel not in var.writers + var.readers:
                undeclared.append(f"{name}: {rel}")
    assert not undeclared, f"add them to the declarations in autograder/envvars.py: {sorted(undeclared)}"


def test_every_declared_variable_is_used_outside_its_declaration():
    """Does every declared variable appear somewhere besides autograder/envvars.py (no stale declarations)?"""
    used = set()
    for path in list(_files("autograder", *ELSEWHERE)):
        if path != DECLARATION and path.name != "ARCHITECTURE.md" and path.name != Path(__file__).name:
            used |= _code_names(path) if path.suffix in (".py", ".ipynb") else _names_in_text(path)
    assert not set(envvars.BY_NAME) - used, sorted(set(envvars.BY_NAME) - used)


def _architecture_section():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    start = text.index("\n## Environment variables\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def test_architecture_lists_exactly_the_declared_variables():
    """Does the variable table in docs/ARCHITECTURE.md list exactly the declared names?"""
    rows = [line for line in _architecture_section().splitlines() if line.startswith("| `A3_")]
    listed = [NAME.search(row).group() for row in rows]
    assert sorted(listed) == sorted(envvars.BY_NAME), (
        f"missing: {sorted(set(envvars.BY_NAME) - set(listed))}, not declared: {sorted(set(listed) - set(envvars.BY_NAME))}"
    )


def test_architecture_table_is_the_declarations_table():
    """Is the table in docs/ARCHITECTURE.md the one envvars.table() renders (meaning, default, writers, readers)?"""
    expected = envvars.table()
    assert expected in _architecture_section(), (
        "docs/ARCHITECTURE.md's variable table differs from autograder/envvars.py; replace it with the output of\n"
        '.venv/bin/python -c "from autograder import envvars; print(envvars.table())"'
    )


def test_envvars_imports_nothing_of_the_package():
    """Is envvars in the bottom layer: does it import no module of the package?"""
    tree = ast.parse(DECLARATION.read_text())
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [m for m in imported if m.split(".")[0] == "autograder"], imported


def test_get_applies_the_declared_default(monkeypatch):
    """Does envvars.get return the environment's value when set and the declared default when not?"""
    monkeypatch.delenv(envvars.ZYGOTE, raising=False)
    assert envvars.get(envvars.ZYGOTE) == "1"
    monkeypatch.setenv(envvars.ZYGOTE, "0")
    assert envvars.get(envvars.ZYGOTE) == "0"
    monkeypatch.delenv(envvars.KEYS_FILE, raising=False)
    assert envvars.get(envvars.KEYS_FILE) is None


def test_limits_keep_their_defaults_and_overrides(monkeypatch):
    """Do the sandbox's limits still default to 6 GiB, 1200 CPU s, 512 MB files, 200000 characters and 256 processes,
    and follow their variables when set?"""
    for name in (
        envvars.MEM_LIMIT_MB,
        envvars.CPU_LIMIT_S,
        envvars.FSIZE_LIMIT_MB,
        envvars.OUTPUT_LIMIT_CHARS,
        envvars.PROC_LIMIT,
    ):
        monkeypatch.delenv(name, raising=False)
    assert limits() == {"mem_mb": 6144, "cpu_s": 1200, "fsize_mb": 512, "output_chars": 200_000, "procs": 256}
    monkeypatch.setenv(envvars.MEM_LIMIT_MB, "300")
    monkeypatch.setenv(envvars.PROC_LIMIT, "7")
    assert limits()["mem_mb"] == 300 and limits()["procs"] == 7
