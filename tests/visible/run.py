"""Run the visible checks of a release notebook as a student would, with catalogue answers swapped in.

Not a test module. A catalogue (mutants_<notebook>.py beside this file) lists, per graded cell, wrong
answers (`Wrong`) with the words their visible failure must contain, and correct alternatives (`Right`)
that must print "visible checks passed". `execute_cases` puts the reference solution into every graded
cell of release/a3/<notebook>.ipynb, then right after a cell's test cell adds, for each case of that cell,
the case's answer and a copy of the test cell (what a student does when they fix a cell and run its test
again), and finally the reference answer, so later cells see a working object. It runs the notebook in
an empty folder, the data fetched from release/a3 through A3_DATA_URL, in quick mode, with `autograder`
not importable (students do not have it), up to the last test cell that has cases. Provided cells that
no test cell reads (training, plots) are left out to save time; they do not change what a test cell does.
"""

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder import contract, demo
from autograder.paths import RELEASE, SOURCE
from tests.notebooks import run_notebook

PASSED = "visible checks passed"

# Provided cells (by grade id) that test cells read: setup, imports, the vocabulary, the models and features.
PROVIDED = {
    "nmt": ("setup", "imports", "data", "attention_checks", "decoder_checks"),
    "bert": ("setup", "imports", "data", "models", "classifier_checks"),
    "clip": ("setup", "imports", "load_model", "images", "encode", "ranking_checks"),
    "theory": ("setup", "imports", "llm_norms_claim", "ridge_checks", "layer_checks"),
}


@dataclass(frozen=True)
class Case:
    """One answer for one graded cell: the reference with `edits` ((old, new) pairs) applied, or `source`."""

    grade_id: str
    name: str
    edits: tuple = ()
    source: str = None
    expect: str = None  # Wrong: words the one-line AssertionError must contain; Right: None

    @property
    def key(self):
        return f"{self.grade_id}:{self.name}"


def Wrong(grade_id, name, expect, edits=(), source=None):
    """A realistic wrong answer whose visible test cell must fail with an AssertionError containing `expect`."""
    return Case(grade_id, name, tuple(edits), source, expect)


def Right(grade_id, name, edits=(), source=None):
    """A correct alternative whose visible test cell must print "visible checks passed"."""
    return Case(grade_id, name, tuple(edits), source, None)


def reference_answer(notebook, grade_id):
    """The source notebook's solution for `grade_id`, solution markers removed."""
    nb = nbformat.read(SOURCE / f"{notebook}.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return demo.strip_markers(cell.source)


def answer(notebook, case):
    """The solution cell source of `case`; an edit whose old text is not found exactly once is an error."""
    if case.source is not None:
        return case.source
    text = reference_answer(notebook, case.grade_id)
    for old, new in case.edits:
        if text.count(old) != 1:
            raise ValueError(
                f"{case.key}: expected {old!r} once in the reference answer, found it {text.count(old)} times"
            )
        text = text.replace(old, new)
    return text


def student_notebook(notebook, cases, release=RELEASE):
    """The release notebook with reference answers and `cases` inserted; returns (nb, {case key: test cell index})."""
    release_nb = nbformat.read(release / f"{notebook}.ipynb", as_version=4)
    nb = demo.reference_submission(release_nb, nbformat.read(SOURCE / f"{notebook}.ipynb", as_version=4))
    by_grade = {}
    for case in cases:
        by_grade.setdefault(case.grade_id, []).append(case)
    graded = {contract.test_cell_id(g): g for g in by_grade}
    solutions = {
        c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
    }
    cells, where = [], {}
    last = max(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") in graded)
    for cell in nb.cells[: last + 1]:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type != "code" or not (gid in PROVIDED[notebook] or gid in solutions or gid.startswith("test_")):
            continue
        cells.append(cell)
        for case in by_grade.get(graded.get(gid), ()):
            cells.append(nbformat.v4.new_code_cell(answer(notebook, case)))
            where[case.key] = len(cells)
            cells.append(nbformat.v4.new_code_cell(cell.source))
        if gid in graded:
            cells.append(nbformat.v4.new_code_cell(solutions[graded[gid]]))
    nb.cells = cells
    return nb, where


@dataclass
class Outcome:
    """What one test cell showed: stdout, stderr text, and (ename, evalue) of its error, if any."""

    stdout: str
    stderr: str
    error: tuple = None
    traceback: list = field(default_factory=list)

    @property
    def passed(self):
        return PASSED in self.stdout and self.error is None and not self.stderr

    def caught(self, expect):
        """True when the cell stopped with a one-line AssertionError containing `expect`."""
        return (
            self.error is not None
            and self.error[0] == "AssertionError"
            and expect in self.error[1]
            and "\n" not in self.error[1].strip()
            and PASSED not in self.stdout
        )

    def __str__(self):
        error = f"{self.error[0]}: {self.error[1]}" if self.error else "no error"
        return f"{error}; stdout {self.stdout.strip()[-160:]!r}" + (
            f"; stderr {self.stderr[:200]!r}" if self.stderr else ""
        )


def outcome(cell):
    stdout = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
    stderr = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stderr")
    errors = [o for o in cell.outputs if o.output_type == "error"]
    error = (errors[0].ename, errors[0].evalue) if errors else None
    return Outcome(stdout, stderr, error, errors[0].traceback if errors else [])


def execute_cases(notebook, cases, release=RELEASE, timeout=300):
    """Run the student notebook of `cases`; returns ({case key: Outcome}, wall seconds)."""
    nb, where = student_notebook(notebook, cases, release)
    with tempfile.TemporaryDirectory(prefix="a3-visible-") as tmp:
        tmp = Path(tmp)
        stub = tmp / "stub" / "autograder"
        stub.mkdir(parents=True)
        (stub / "__init__.py").write_text(
            "raise ModuleNotFoundError(\"No module named 'autograder' (students do not have it)\", name='autograder')\n"
        )
        work = tmp / "student"
        work.mkdir()
        env = {
            "A3_QUICK": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "OMP_NUM_THREADS": "1",
            "A3_DATA_URL": Path(release).resolve().as_uri(),
            "A3_MODEL_CACHE": str(tmp / "no-models"),
            "PYTHONPATH": str(stub.parent),
            "NBGRADER_EXECUTION": None,
        }
        seconds = run_notebook(nb, work, env, timeout, allow_errors=True)
    return {key: outcome(nb.cells[i]) for key, i in where.items()}, seconds
