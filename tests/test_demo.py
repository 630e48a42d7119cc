"""python -m autograder demo: its sample submissions, and (slow) the whole loop's scores."""

import csv

import nbformat
import pytest

from autograder import contract, demo, paths

SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def present():
    return [n for n in contract.NOTEBOOKS if (paths.SOURCE / f"{n}.ipynb").exists()]


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    # the committed release, which tests/content/test_build.py keeps equal to a fresh build of source/
    made = demo.write_submissions(root / "subs", release=paths.RELEASE)
    return root, made


def solution_cells(nb):
    return {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in nb.cells
        if c.get("metadata", {}).get("nbgrader", {}).get("solution")
    }


def test_reference_submission_holds_the_source_solutions(samples):
    """Does the reference student's notebook carry the source's solutions without the solution markers?"""
    root, _ = samples
    for name in present():
        sub = nbformat.read(root / "subs" / "reference" / f"{name}.ipynb", as_version=4)
        src = solution_cells(nbformat.read(paths.SOURCE / f"{name}.ipynb", as_version=4))
        got = solution_cells(sub)
        assert got == {k: demo.strip_markers(v) for k, v in src.items()}
        assert not any(m in cell.source for cell in sub.cells for m in SOLUTION_MARKERS)


def provided_sources(nb):
    """The sources of every cell that is not a solution cell."""
    return [c.source for c in nb.cells if not c.get("metadata", {}).get("nbgrader", {}).get("solution")]


def test_reference_submission_is_the_release_otherwise(samples):
    """Are all non-solution cells of the reference submission exactly the release's (hidden tests absent)?"""
    root, _ = samples
    for name in present():
        sub = nbformat.read(root / "subs" / "reference" / f"{name}.ipynb", as_version=4)
        rel = nbformat.read(paths.RELEASE / f"{name}.ipynb", as_version=4)
        assert provided_sources(sub) == provided_sources(rel)


def test_each_wrong_student_differs_from_the_reference_in_one_cell(samples):
    """Does every wrong_<id> student differ from the reference in exactly the solution cell <id>?"""
    root, made = samples
    wrong = [s for s in made if s.startswith("wrong_")]
    assert wrong, "autograder/content/samples provides no WRONG answers"
    for student in wrong:
        (name,) = made[student]
        gid = student[len("wrong_") :]
        sub = solution_cells(nbformat.read(root / "subs" / student / f"{name}.ipynb", as_version=4))
        ref = solution_cells(nbformat.read(root / "subs" / "reference" / f"{name}.ipynb", as_version=4))
        assert [k for k in ref if ref[k] != sub[k]] == [gid]


def test_samples_cover_every_graded_cell(samples):
    """Is there a wrong sample for every graded cell of every notebook that exists?"""
    _, made = samples
    want = {g for n in present() for g in contract.GRADED[n]}
    assert {s[len("wrong_") :] for s in made if s.startswith("wrong_")} == want


@pytest.mark.slow
def test_demo_end_to_end(tmp_path, capsys):
    """Does the demo grade the reference to full marks, the release to 0, and each wrong sample to full minus its cell?"""
    assert demo.main(out=tmp_path / "demo") == 0
    out = tmp_path / "demo" / "out"
    rows = {(r["student"], r["notebook"]): r for r in csv.DictReader(open(out / "grades.csv"))}
    # a check that cannot decide offline (scavenger caption on random weights) leaves its cell to a TA
    manual = {
        (r["notebook"], r["grade_id"])
        for r in csv.DictReader(open(out / "grades_by_cell.csv"))
        if r["student"] == "reference" and r["score"] == "" and r["grade_id"] in contract.GRADED[r["notebook"]]
    }
    problems = []
    for name in present():
        full = contract.max_score(name) - sum(contract.GRADED[name][g] for n, g in manual if n == name)
        if rows[("reference", name)]["score"] != f"{full:g}":
            problems.append(f"reference {name}: {rows[('reference', name)]}")
        if rows[("untouched", name)]["score"] != "0" or rows[("untouched", name)]["status"] != "graded":
            problems.append(f"untouched {name}: {rows[('untouched', name)]}")
        for gid, pts in contract.GRADED[name].items():
            row = rows.get((f"wrong_{gid}", name))
            lost = 0 if (name, gid) in manual else pts
            if row is None or row["score"] != f"{full - lost:g}":
                problems.append(f"wrong_{gid}: expected {full - pts:g}, got {row}")
    assert problems == []
    assert "student" in capsys.readouterr().out
