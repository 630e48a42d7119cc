"""The grading profile: while nbgrader runs a notebook (NBGRADER_EXECUTION set, hence GRADING in the setup
cell), provided cells skip the training runs, sweeps and figures that no test cell needs, and no test cell's
verdict changes; a student's quick mode (A3_QUICK=1) is untouched."""

import os
import time

import nbclient
import nbformat
import pytest

from autograder import demo, paths
from autograder.content import build
from tests.notebooks import SETUP_CELL

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


def submission(nb_name, student):
    """The demo's notebook `nb_name` of `student` (see autograder.demo.write_submissions)."""
    release = nbformat.read(paths.RELEASE / f"{nb_name}.ipynb", as_version=4)
    reference = demo.reference_submission(release, nbformat.read(paths.SOURCE / f"{nb_name}.ipynb", as_version=4))
    if student == "reference":
        return reference
    if student == "untouched":
        return release
    grade_id = student.removeprefix("wrong_")
    return demo.with_cell(reference, grade_id, demo.wrong_samples(nb_name)[grade_id])


def run(nb, monkeypatch, grading):
    """Execute a copy of nb in quick mode next to the release's data, with or without NBGRADER_EXECUTION.

    Returns (executed notebook, seconds)."""
    nb = nbformat.from_dict(nbformat.reads(nbformat.writes(nb), as_version=4))
    with monkeypatch.context() as m:
        for name, value in QUICK_ENV.items():
            m.setenv(name, value)
        if grading:
            m.setenv("NBGRADER_EXECUTION", "autograde")
        else:
            m.delenv("NBGRADER_EXECUTION", raising=False)
        client = nbclient.NotebookClient(
            nb,
            timeout=300,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(paths.RELEASE)}},
        )
        start = time.perf_counter()
        client.execute()
        return nb, time.perf_counter() - start


def failures(nb):
    """{test cell grade id: why it failed, or None}: as nbgrader scores a test cell, it passes when it raised
    nothing (and, as the grader requires, wrote nothing to stderr)."""
    found = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            why = [
                f"{o.ename}: {o.evalue}" if o.output_type == "error" else f"stderr: {o.text}"
                for o in cell.outputs
                if o.output_type == "error" or (o.output_type == "stream" and o.name == "stderr")
            ]
            found[meta["grade_id"]] = " | ".join(why)[:300] or None
    return found


def verdicts(nb):
    """{test cell grade id: passed}."""
    return {gid: why is None for gid, why in failures(nb).items()}


@pytest.mark.slow
@pytest.mark.parametrize("nb_name, student", SUBMISSIONS, ids=[f"{nb}-{s}" for nb, s in SUBMISSIONS])
def test_profile_keeps_every_verdict(nb_name, student, monkeypatch):
    """For each demo sample submission, is every test cell's verdict the same with and without the grading profile?"""
    nb = submission(nb_name, student)
    plain, plain_s = run(nb, monkeypatch, grading=False)
    graded, graded_s = run(nb, monkeypatch, grading=True)
    print(f"{nb_name}/{student}: {plain_s:.1f} s without the profile, {graded_s:.1f} s with it")
    expected = verdicts(plain)
    assert expected, "no test cell found"
    differ = {
        gid: (failures(plain)[gid], failures(graded)[gid]) for gid in expected if verdicts(graded)[gid] != expected[gid]
    }
    assert not differ, f"verdicts differ (failure without the profile, with it): {differ}"


@pytest.mark.slow
def test_profile_skips_the_provided_training(monkeypatch):
    """Graded, does the reference nmt notebook leave the study, the decoder-only run and the sweep untrained?"""
    nb = submission("nmt", "reference")
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "print(sorted(name for name in ('runs', 'decoder_history', 'sweep', 'optima') if name in globals()))"
        )
    )
    graded, _ = run(nb, monkeypatch, grading=True)
    assert graded.cells[-1].outputs[0].text.strip() == "[]"
    assert all(verdicts(graded)[gid] for gid in verdicts(graded))
