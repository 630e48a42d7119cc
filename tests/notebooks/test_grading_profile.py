"""The grading profile: while nbgrader runs a notebook (NBGRADER_EXECUTION set, hence GRADING in the setup
cell), provided cells skip the training runs, sweeps and figures that no test cell needs, and no test cell's
verdict changes; a student's quick mode (A3_QUICK=1) is untouched.

The demo's sample submissions of a notebook are run in two executions per profile (with and without
NBGRADER_EXECUTION), as tests/visible/run.py batches its catalogue: the untouched release on its own, and one
notebook holding the reference submission followed, for each wrong sample, by the code cells from that
sample's cell to the end with the sample in place. A wrong sample's test cells before its cell ran the
reference's code, so their verdicts are the reference section's.
"""

import functools
import os
import sys

import nbformat
import pytest

from autograder import demo, paths
from autograder.content import build
from tests.notebooks import SETUP_CELL, run_notebook

NOTEBOOKS = build.notebooks_in(paths.RELEASE)
# The demo's sample submissions: the reference solution, the untouched release, one realistic wrong answer each.
SUBMISSIONS = [
    (nb, student)
    for nb in NOTEBOOKS
    for student in ["reference", "untouched"] + [f"wrong_{gid}" for gid in sorted(demo.wrong_samples(nb))]
]
QUICK_ENV = {
    "A3_QUICK": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "OMP_NUM_THREADS": "1",
    "MPLBACKEND": "module://autograder.sandbox.nofigures",
    "PYTHONPATH": os.pathsep.join([str(paths.ROOT), os.environ.get("PYTHONPATH", "")]),
}


def setup_namespace(monkeypatch, **env):
    """The names the setup cell (docs/setup_cell.py) defines under `env` (NBGRADER_EXECUTION, A3_QUICK unset)."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.delenv("A3_QUICK", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    namespace = {}
    exec(SETUP_CELL.read_text(), namespace)
    return namespace


def test_grading_flag_is_set_only_while_nbgrader_runs_the_notebook(monkeypatch):
    """Is GRADING True (and quick mode on) exactly when NBGRADER_EXECUTION is set?"""
    graded = setup_namespace(monkeypatch, NBGRADER_EXECUTION="autograde")
    assert graded["GRADING"] is True and graded["QUICK"] is True
    plain = setup_namespace(monkeypatch)
    assert plain["GRADING"] is False and plain["QUICK"] is False


def test_student_quick_mode_is_not_the_grading_profile(monkeypatch):
    """With A3_QUICK=1 alone, does a student get quick mode without the grading profile?"""
    quick = setup_namespace(monkeypatch, A3_QUICK="1")
    assert quick["QUICK"] is True and quick["GRADING"] is False


# Names the provided training cells of nmt define: the study, the decoder-only run and the sweep.
TRAINED = ("runs", "decoder_history", "sweep", "optima")
PROBE = f"print(sorted(name for name in {TRAINED!r} if name in globals()))"


def grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def is_test_cell(cell):
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def reference(nb_name):
    """The demo's reference submission of `nb_name` (see autograder.demo.write_submissions)."""
    release = nbformat.read(paths.RELEASE / f"{nb_name}.ipynb", as_version=4)
    return demo.reference_submission(release, nbformat.read(paths.SOURCE / f"{nb_name}.ipynb", as_version=4))


def batch(nb_name):
    """The reference submission, the probe cell, then per wrong sample the code cells from its cell to the end.

    Returns (notebook, {student: {test cell grade id: index of the cell that gives its verdict}}, probe index)."""
    ref = reference(nb_name)
    cells = list(ref.cells)
    where = {"reference": {grade_id(c): i for i, c in enumerate(cells) if is_test_cell(c)}}
    probe = len(cells)
    cells.append(nbformat.v4.new_code_cell(PROBE))
    for wrong_id, source in sorted(demo.wrong_samples(nb_name).items()):
        (start,) = [i for i, c in enumerate(ref.cells) if grade_id(c) == wrong_id and not is_test_cell(c)]
        where[f"wrong_{wrong_id}"] = seen = dict(where["reference"])
        for i, cell in enumerate(ref.cells[start:], start):
            if cell.cell_type != "code":
                continue
            copy = nbformat.v4.new_code_cell(source if i == start else cell.source, metadata=cell.metadata)
            if is_test_cell(cell):
                seen[grade_id(cell)] = len(cells)
            cells.append(copy)
    nb = nbformat.v4.new_notebook(cells=cells, metadata=ref.metadata)
    return nb, where, probe


def execute(nb, grading):
    """Execute nb in place in quick mode next to the release's data, with or without NBGRADER_EXECUTION; returns
    the wall seconds."""
    env = dict(QUICK_ENV, NBGRADER_EXECUTION="autograde" if grading else None)
    return run_notebook(nb, paths.RELEASE, env, timeout=300, allow_errors=True)


def failure(cell):
    """Why a test cell failed, or None: as nbgrader scores a test cell, it passes when it raised nothing (and, as
    the grader requires, wrote nothing to stderr)."""
    why = [
        f"{o.ename}: {o.evalue}" if o.output_type == "error" else f"stderr: {o.text}"
        for o in cell.outputs
        if o.output_type == "error" or (o.output_type == "stream" and o.name == "stderr")
    ]
    return " | ".join(why)[:300] or None


@functools.lru_cache(maxsize=None)
def outcomes(nb_name, grading):
    """({student: {test cell grade id: why it failed, or None}}, probe cell's printed text) of every demo sample
    of `nb_name` under one profile, from two executions (the untouched release, then the batch)."""
    untouched = nbformat.read(paths.RELEASE / f"{nb_name}.ipynb", as_version=4)
    untouched_s = execute(untouched, grading)
    nb, where, probe = batch(nb_name)
    batch_s = execute(nb, grading)
    profile = "with" if grading else "without"
    print(
        f"{nb_name} {profile} the profile: untouched {untouched_s:.1f} s, "
        f"reference and {len(where) - 1} wrong samples {batch_s:.1f} s",
        file=sys.stderr,
    )
    found = {student: {gid: failure(nb.cells[i]) for gid, i in cells.items()} for student, cells in where.items()}
    found["untouched"] = {grade_id(c): failure(c) for c in untouched.cells if is_test_cell(c)}
    probed = "".join(o.get("text", "") for o in nb.cells[probe].outputs if o.get("name") == "stdout")
    return found, probed.strip()


@pytest.mark.slow
@pytest.mark.parametrize("nb_name, student", SUBMISSIONS, ids=[f"{nb}-{s}" for nb, s in SUBMISSIONS])
def test_profile_keeps_every_verdict(nb_name, student):
    """For each demo sample submission, is every test cell's verdict the same with and without the grading profile?"""
    plain = outcomes(nb_name, grading=False)[0][student]
    graded = outcomes(nb_name, grading=True)[0][student]
    assert plain, "no test cell found"
    assert plain.keys() == graded.keys()
    differ = {gid: (plain[gid], graded[gid]) for gid in plain if (plain[gid] is None) != (graded[gid] is None)}
    assert not differ, f"verdicts differ (failure without the profile, with it): {differ}"


@pytest.mark.slow
def test_profile_skips_the_provided_training():
    """Graded, does the reference nmt notebook leave the study, the decoder-only run and the sweep untrained (which
    the same notebook without the profile trains)?"""
    _, plain = outcomes("nmt", grading=False)
    found, graded = outcomes("nmt", grading=True)
    assert graded == "[]"
    assert plain == str(sorted(TRAINED))
    assert all(why is None for why in found["reference"].values()), found["reference"]
