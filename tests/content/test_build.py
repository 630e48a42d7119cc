"""python -m autograder build: deterministic, normalised, stale detection, nothing secret in the release."""

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder import contract, paths
from autograder.content import build
from tests.fixtures import toy

SECRET_MARKERS = (
    "### BEGIN SOLUTION",
    "### END SOLUTION",
    "### BEGIN HIDDEN TESTS",
    "### END HIDDEN TESTS",
    "autograder.checks",
)


def tree(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def toy_release(tmp_path_factory):
    return toy.release(tmp_path_factory.getbasetemp())


@pytest.mark.slow
def test_build_is_deterministic(toy_release, tmp_path):
    """Does building the same source twice give byte-identical files?"""
    again = tmp_path / "a3"
    build.build(toy.TOY_SOURCE, again)
    assert tree(again) == tree(toy_release)


def test_check_passes_on_fresh_release(toy_release):
    """Does --check find nothing to complain about right after a build?"""
    assert build.stale_files(toy.TOY_SOURCE, toy_release) == []


def test_check_detects_changed_missing_and_extra_files(toy_release, tmp_path):
    """Does --check list an edited notebook, a deleted data file and a file that was not generated?"""
    rel = tmp_path / "a3"
    shutil.copytree(toy_release, rel)
    nb = json.loads((rel / "toy.ipynb").read_text())
    nb["cells"][1]["source"] = ["edited by hand"]
    (rel / "toy.ipynb").write_text(json.dumps(nb))
    (rel / "data" / "numbers.txt").unlink()
    (rel / "notes.txt").write_text("mine")
    assert build.stale_files(toy.TOY_SOURCE, rel) == [
        "missing: data/numbers.txt",
        "not generated (extra): notes.txt",
        "stale: toy.ipynb",
    ]


@pytest.mark.slow
def test_check_cli_exits_nonzero_when_stale(toy_release, tmp_path, capsys):
    """Does `build --check` exit non-zero and name the stale file?"""
    rel = tmp_path / "a3"
    shutil.copytree(toy_release, rel)
    (rel / "GENERATED.md").write_text("changed")
    assert build.main(check=True, source=toy.TOY_SOURCE, release=rel) == 1
    assert "stale: GENERATED.md" in capsys.readouterr().err


def test_release_is_normalised(toy_release):
    """Is a released notebook nbformat 4.5, output-free, python3, marked generated, with a Colab badge on top?"""
    nb = nbformat.read(toy_release / "toy.ipynb", as_version=4)
    assert (nb.nbformat, nb.nbformat_minor) == (4, 5)
    assert nb.metadata.kernelspec.name == "python3"
    assert nb.metadata.a3.generated == build.GENERATED
    assert nb.cells[0].source.startswith("[![Open In Colab]")
    assert "colab.research.google.com/github/a3-course/a3/blob/main/release/a3/toy.ipynb" in nb.cells[0].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)


def test_cell_ids_come_from_grade_ids(toy_release):
    """Are cell ids the nbgrader grade ids (stable across rebuilds), unique within the notebook?"""
    nb = nbformat.read(toy_release / "toy.ipynb", as_version=4)
    ids = [c.id for c in nb.cells]
    assert ids[:5] == ["colab-badge", "intro", "setup", "add", "test_add"]
    assert len(set(ids)) == len(ids)


def test_toy_release_hides_solutions_and_hidden_tests(toy_release):
    """Does the toy release lose its solution code and hidden test lines?"""
    text = (toy_release / "toy.ipynb").read_text()
    assert "return a + b" not in text and "check_add" not in text
    assert not any(m in text for m in SECRET_MARKERS)


def test_the_template_gradebook_stays_out_of_the_release(toy_release):
    """Is no gradebook or nbgrader config written into the release?"""
    names = {p.name for p in toy_release.rglob("*")}
    assert not names & {"gradebook.db", "nbgrader_config.py"}


# --- the committed course release -------------------------------------------------------------------


def region_lines(cell, begin):
    """Non-trivial lines inside the `### BEGIN ...` regions (SOLUTION or HIDDEN TESTS) of a cell."""
    lines, inside = [], False
    for line in cell.source.splitlines():
        s = line.strip()
        if s == f"### BEGIN {begin}":
            inside = True
        elif s == f"### END {begin}":
            inside = False
        elif inside and len(s) > 12 and not s.startswith("#"):
            lines.append(s)
    return lines


def by_grade_id(nb):
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.get("metadata", {})}


@pytest.mark.parametrize("name", contract.NOTEBOOKS)
def test_course_release_has_no_solution_or_hidden_test_text(name):
    """Does release/a3/<nb>.ipynb lack the markers, each solution cell's solution lines and every hidden test line?"""
    if not (paths.SOURCE / f"{name}.ipynb").exists():
        pytest.skip(f"source/a3/{name}.ipynb not written yet")
    text = (paths.RELEASE / f"{name}.ipynb").read_text()
    release, source = nbformat.reads(text, as_version=4), nbformat.read(paths.SOURCE / f"{name}.ipynb", as_version=4)
    leaks = [m for m in SECRET_MARKERS if m in text]
    rel_cells, everything = by_grade_id(release), "\n".join(c.source for c in release.cells)
    for gid, cell in by_grade_id(source).items():
        kept = {l.strip() for l in rel_cells[gid].source.splitlines()} if gid in rel_cells else set()
        leaks += [f"{gid}: {l}" for l in region_lines(cell, "SOLUTION") if l in kept]
        leaks += [f"hidden {gid}: {l}" for l in region_lines(cell, "HIDDEN TESTS") if l in everything]
    assert leaks == [], f"release leaks {leaks[:3]}"


def test_course_release_is_up_to_date():
    """Is the committed release/a3 exactly what `python -m autograder build` makes from source/a3?"""
    problems = build.stale_files()
    assert problems == [], f"release/a3 is stale, run `python -m autograder build`: {problems[:5]}"


def test_nbgrader_config_matches_the_build():
    """Does the repository's nbgrader_config.py, as nbgrader loads it, set the build's settings (solution stubs,
    ignored files, cell time-out) to the build's values?"""
    from traitlets.config import Config

    config = Config()
    path = paths.ROOT / "nbgrader_config.py"
    exec(compile(path.read_text(), str(path), "exec"), {"get_config": lambda: config, "__file__": str(path)})
    for key, value in build.NBGRADER_SETTINGS.items():
        section, trait = key.rsplit(".", 1)
        assert config[section][trait] == value, key
