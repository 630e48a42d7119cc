"""The package's one import direction (docs/ARCHITECTURE.md, "Layers"), read from every import in autograder/,
those inside functions included."""

import ast
from pathlib import Path

import autograder
from autograder import paths

PACKAGE = Path(autograder.__file__).parent
LAYERS = (  # bottom up; a module may import its own layer and those below
    (
        "contract",
        "paths",
        "out",
        "tokens",
        "text",
        "csvsafe",
        "files",
        "cores",
        "envvars",
        "lms",
        "term",
        "gradebook",
        "records",
        "rubrics",
        "readiness",
    ),
    ("content",),
    ("checks",),
    ("sandbox",),
    ("reports", "marking"),
    ("grading",),
    ("cli", "demo", "bench", "budget", "__main__"),
)
SANDBOX = (  # inside sandbox: each module imports only the ones before it
    "limits",
    "procs",
    "bwrap",
    "linux",
    "nofigures",
    "kernel",
    "zygote.protocol",
    "zygote.preload",
    "zygote.client",
    "zygote.server",
    "zygote.__main__",
    "launcher",
    "slot",
)


def module_name(path):
    """autograder/sandbox/zygote/client.py -> sandbox.zygote.client (a package's __init__ is the package)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    module_name(p): p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts and p != PACKAGE / "__init__.py"
}


def imported(path):
    """The package modules a file imports (`from autograder.x import y` counts x.y when y is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
        for name in names:
            if name == "autograder" or not name.startswith("autograder."):
                continue
            name = name[len("autograder.") :]
            while name not in MODULES and "." in name:
                name = name.rsplit(".", 1)[0]
            if name in MODULES:
                found.add(name)
    return found


def layer(name):
    top = name.split(".")[0]
    return next(i for i, members in enumerate(LAYERS) if top in members)


def test_every_module_has_a_layer():
    """Does every module of the package belong to a layer (and every sandbox module to the sandbox's order)?"""
    for name in MODULES:
        layer(name)
    inside = {n[len("sandbox.") :] for n in MODULES if n.startswith("sandbox.")} - {"zygote"}
    assert inside == set(SANDBOX), f"sandbox modules without a place in SANDBOX: {sorted(inside ^ set(SANDBOX))}"


def test_no_import_points_upward():
    """Does every import in autograder/ point to the module's own layer or one below?"""
    upward = [
        f"{name} imports {dep}" for name, path in MODULES.items() for dep in imported(path) if layer(dep) > layer(name)
    ]
    assert not upward, f"imports that point up a layer: {upward}"


def test_sandbox_modules_import_only_earlier_ones():
    """Inside sandbox, does each module import only modules before it in SANDBOX (so the worker's Slot sits on
    top and the sandbox side never reaches back to the host side)?"""
    order = {f"sandbox.{n}": i for i, n in enumerate(SANDBOX)}
    wrong = [
        f"{name} imports {dep}"
        for name, path in MODULES.items()
        if name in order
        for dep in imported(path)
        if dep in order and order[dep] >= order[name]
    ]
    assert not wrong, f"sandbox imports out of order: {wrong}"


def test_architecture_names_the_sandbox_order():
    """Does docs/ARCHITECTURE.md's layer list give the sandbox's modules in the order this test checks?"""
    text = " ".join((paths.ROOT / "docs" / "ARCHITECTURE.md").read_text().split())
    listed = ", ".join(f"`{n}`" for n in SANDBOX if n not in ("nofigures", "zygote.__main__"))
    assert f"inside it, in order: {listed};" in text, f"expected ARCHITECTURE.md to list: {listed}"


def test_no_import_cycle():
    """Is the import graph free of cycles, within a layer too (a module never reaches itself through its
    imports, those inside functions included)?"""
    graph = {name: imported(path) - {name} for name, path in MODULES.items()}
    cycles, done = [], set()

    def visit(name, trail):
        if name in trail:
            cycles.append(" -> ".join(trail[trail.index(name) :] + [name]))
            return
        if name in done:
            return
        for dep in sorted(graph.get(name, ())):
            visit(dep, trail + [name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
    assert not cycles, f"import cycles: {cycles}"
