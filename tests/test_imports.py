"""What a process pays to import the kit: autograder/__init__.py keeps jsonschema from building the IRI grammar of
rfc3987_syntax (about 1.2 s a process), and nothing the kit validates needed it."""

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

IRI_FORMATS = {"iri", "iri-reference"}
LOADED = "import sys; m = sys.modules.get('rfc3987_syntax'); print('loaded' if m is not None else 'skipped')"


def _imports(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_reading_notebooks_after_the_kit_skips_the_iri_grammar():
    """Does a process that imports the kit and then nbformat, nbgrader and jsonschema leave rfc3987_syntax unloaded?"""
    assert _imports(f"import autograder, nbformat, nbgrader.api, jsonschema; {LOADED}") == "skipped"


def _installed(distribution: str) -> bool:
    """Whether a distribution is installed, asked of its metadata (importing it is what the kit prevents)."""
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _installed("rfc3987-syntax"), reason="rfc3987-syntax is not installed")
def test_without_the_kit_first_jsonschema_loads_the_iri_grammar():
    """Without the kit imported first, does jsonschema load rfc3987_syntax (so the test above can fail)?"""
    assert _imports(f"import jsonschema; {LOADED}") == "loaded"


def _schema_formats(node) -> set[str]:
    """Every "format" value in a JSON schema."""
    if isinstance(node, dict):
        own = {node["format"]} if isinstance(node.get("format"), str) else set()
        return own.union(*(_schema_formats(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_schema_formats(v) for v in node))
    return set()


def test_no_schema_the_kit_validates_checks_an_iri():
    """Do nbformat's and nbgrader's schemas (every notebook the kit reads is checked against them) use no IRI format,
    so that skipping rfc3987_syntax changes no verdict?"""
    import nbformat
    import nbgrader.nbgraderformat

    folders = [Path(nbformat.__file__).parent, Path(nbgrader.nbgraderformat.__file__).parent]
    schemas = [p for folder in folders for p in folder.rglob("*.json")]
    assert len(schemas) >= 8, schemas  # nbformat's v3/v4 schemas and nbgrader's metadata schemas
    used = set().union(*(_schema_formats(json.loads(p.read_text())) for p in schemas))
    assert not used & IRI_FORMATS, used


def _probe(path):
    """Runs in a process forked by the nbgrader fork server: notes whether rfc3987_syntax is loaded there."""
    Path(path).write_text("loaded" if sys.modules.get("rfc3987_syntax") is not None else "skipped")


def test_nbgrader_processes_start_without_the_iri_grammar(tmp_path):
    """Does a process forked from the nbgrader fork server (runner._nbgrader_context) start without rfc3987_syntax?"""
    from autograder.grading import runner

    proc = runner._nbgrader_context().Process(target=_probe, args=(str(tmp_path / "probe"),))
    proc.start()
    proc.join(60)
    assert (tmp_path / "probe").read_text() == "skipped"


def test_the_grading_process_leaves_nbgrader_to_the_autograde_process():
    """Does importing the grading pipeline and its worker leave nbgrader (about 0.7 s) unimported, so that a grading
    process starts its zygote without waiting for it? Only the forked `nbgrader autograde` process needs it."""
    code = (
        "import sys; import autograder.grading.pipeline, autograder.grading.worker; "
        "print(sorted(m for m in sys.modules if m == 'nbgrader' or m.startswith('nbgrader.')))"
    )
    assert _imports(code) == "[]"
