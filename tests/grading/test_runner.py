"""autograder.grading.runner: the nbgrader process's quickened validators and gradebook decide as nbgrader does."""

import json
import os
import subprocess
import sys

import pytest

from autograder import paths
from tests.slowdown import scaled

# nbgrader metadata of one cell each: valid ones, and ones that nbgrader's own validators reject
CELLS = {
    "solution": {"grade": False, "solution": True, "locked": False, "grade_id": "attn", "schema_version": 3},
    "test": {
        "grade": True,
        "solution": False,
        "locked": True,
        "grade_id": "test_attn",
        "points": 2,
        "schema_version": 3,
    },
    "markdown answer": {
        "grade": True,
        "solution": True,
        "locked": False,
        "grade_id": "written_a",
        "points": 1,
        "schema_version": 3,
    },
    "points as text": {
        "grade": True,
        "solution": False,
        "locked": True,
        "grade_id": "t",
        "points": "two",
        "schema_version": 3,
    },
    "no grade_id": {"grade": True, "solution": False, "locked": True, "points": 1, "schema_version": 3},
    "empty grade_id": {"grade": False, "solution": True, "locked": False, "grade_id": "", "schema_version": 3},
    "no points": {"grade": True, "solution": False, "locked": True, "grade_id": "t", "schema_version": 3},
    "grade as text": {
        "grade": "yes",
        "solution": False,
        "locked": True,
        "grade_id": "t",
        "points": 1,
        "schema_version": 3,
    },
    "old schema": {"grade": False, "solution": True, "locked": False, "grade_id": "a", "schema_version": 1},
    "newer schema": {"grade": False, "solution": True, "locked": False, "grade_id": "a", "schema_version": 4},
    "missing locked": {"grade": False, "solution": True, "grade_id": "a", "schema_version": 3},
    "extra key": {"grade": False, "solution": True, "locked": False, "grade_id": "a", "schema_version": 3, "colab": 1},
}

SCRIPT = """
import json, sys
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.preprocessors import CheckCellMetadata
from autograder.grading import runner

cells = json.loads(sys.argv[1])

def verdicts():
    out = {}
    for name, meta in cells.items():
        make = new_markdown_cell if name.startswith("markdown") else new_code_cell
        nb = new_notebook(cells=[make("x = 1", metadata={"nbgrader": dict(meta)})])
        upgraded = MetadataValidator().upgrade_cell_metadata(make("x = 1", metadata={"nbgrader": dict(meta)}))
        try:
            CheckCellMetadata().preprocess(nb, {})
            checked = "ok"
        except Exception as e:
            checked = f"{type(e).__name__}: {e}"
        try:
            MetadataValidator().validate_nb(nb)
            direct = "ok"
        except Exception as e:
            direct = f"{type(e).__name__}: {e}"
        out[name] = [checked, direct, dict(upgraded.metadata.get("nbgrader", {}))]
    return out

stock = verdicts()
runner._quicken_nbgrader()
print(json.dumps({"stock": stock, "quick": verdicts()}))
"""


def run(script, *args):
    env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=paths.ROOT,
        env=env,
        timeout=scaled(120),
    )  # a new gradebook runs alembic from the environment's bin
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_quickened_metadata_checks_give_nbgrader_verdicts_and_messages():
    """With the schemas read and checked once, does every cell (valid, or rejected for any of ten reasons) get
    the same verdict, error and message from CheckCellMetadata and the validator, and the same upgrade?"""
    got = run(SCRIPT, json.dumps(CELLS))
    assert got["quick"] == got["stock"]
    rejected = [name for name, (checked, _, _) in got["stock"].items() if checked != "ok"]
    assert len(rejected) >= 8, got["stock"]  # the catalogue really exercises the error paths


@pytest.mark.slow
def test_quickened_gradebook_does_not_wait_for_the_disk_and_still_journals():
    """Does a gradebook opened in the nbgrader process commit without fsync (synchronous=OFF) but keep its
    rollback journal, so a process killed mid-commit leaves the shard as it was?"""
    script = """
import json, sys, tempfile
from nbgrader.api import Gradebook
from autograder.grading import runner

def pragmas():
    with Gradebook(f"sqlite:///{tempfile.mkdtemp()}/gradebook.db") as gb:
        conn = gb.db.connection()
        return [conn.exec_driver_sql(f"PRAGMA {p}").scalar() for p in ("synchronous", "journal_mode")]

before = pragmas()
runner._quicken_nbgrader()
print(json.dumps([before, pragmas()]))
"""
    before, after = run(script)
    assert before == [2, "delete"]  # SQLite's defaults: FULL, a rollback journal on disk
    assert after == [0, "delete"]


def test_quickened_gradebooks_share_one_engine_per_database():
    """In the nbgrader process, do two Gradebooks of one database share one engine (so SQLAlchemy compiles each
    query once), see each other's committed rows and leave no connection checked out, while another database
    gets its own engine?"""
    script = """
import json, tempfile
from nbgrader.api import Gradebook
from autograder.grading import runner

runner._quicken_nbgrader()
one, two = (f"sqlite:///{tempfile.mkdtemp()}/gradebook.db" for _ in range(2))
with Gradebook(one) as gb:
    gb.add_student("Zoë Ñúñez")
    engine = gb.engine
with Gradebook(one) as gb:
    shared, seen = gb.engine is engine, [s.id for s in gb.students]
with Gradebook(two) as gb:
    apart, empty = gb.engine is not engine, [s.id for s in gb.students]
print(json.dumps([shared, seen, engine.pool.checkedout(), apart, empty]))
"""
    assert run(script) == [True, ["Zoë Ñúñez"], 0, True, []]


def test_quickened_gradebooks_ask_for_their_tables_once_a_database():
    """In the nbgrader process, does a database's second Gradebook skip asking whether every table exists, while a
    new database still gets its tables and a student added through one Gradebook is seen through the next?"""
    script = """
import json, tempfile
from sqlalchemy import MetaData
from nbgrader.api import Gradebook
from autograder.grading import runner

asked = []
create_all = MetaData.create_all
MetaData.create_all = lambda self, bind, **kw: (asked.append(str(bind.url)), create_all(self, bind=bind, **kw))[1]
runner._quicken_nbgrader()
one, two = (f"sqlite:///{tempfile.mkdtemp()}/gradebook.db" for _ in range(2))
with Gradebook(one) as gb:
    gb.add_student("Zoë Ñúñez")
with Gradebook(one) as gb:
    seen = [s.id for s in gb.students]
with Gradebook(two) as gb:
    empty = [s.id for s in gb.students]
print(json.dumps([[one, two].index(url) for url in asked] + [seen, empty]))
"""
    assert run(script) == [0, 1, ["Zoë Ñúñez"], []]


def test_a_prepared_nbgrader_process_compiles_no_validator_and_configures_no_mapper():
    """After `prepare_nbgrader` (the fork server's), does reading and writing a notebook compile no nbformat
    validator and the gradebook's first query configure no mapper, so a forked process does neither again?"""
    script = """
import json, tempfile
import fastjsonschema, nbformat
from sqlalchemy.orm import mapperlib
from autograder.grading import runner

runner.prepare_nbgrader()
compiled, configured = [], []
compile = fastjsonschema.compile
fastjsonschema.compile = lambda *a, **kw: (compiled.append(1), compile(*a, **kw))[1]
configure = mapperlib._configure_registries
mapperlib._configure_registries = lambda *a, **kw: (configured.append(1), configure(*a, **kw))[1]
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
nbformat.reads(nbformat.writes(nb), as_version=4)
from nbgrader.api import Gradebook
with Gradebook(f"sqlite:///{tempfile.mkdtemp()}/gradebook.db") as gb:
    gb.add_student("李明")
    students = [s.id for s in gb.students]
print(json.dumps([len(compiled), len(configured), students]))
"""
    assert run(script) == [0, 0, ["李明"]]


def _autograde_exporter(tmp_path):
    """nbconvert's exporter as an autograde run's nbgrader_config.py configures it, with three preprocessors: two
    that leave the notebook as it is and one that leaves it invalid when the notebook's metadata asks it to."""
    import nbformat
    from nbconvert.exporters import NotebookExporter
    from nbconvert.preprocessors import Preprocessor
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.content import build
    from autograder.grading import worker

    task = worker.Task(student="s", notebooks=[], template=str(tmp_path), work=str(tmp_path))
    (tmp_path / "nbgrader_config.py").write_text(build.config_text(worker._nbgrader_settings(task, tmp_path)))
    config = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path)).load_config()

    class Keeps(Preprocessor):
        def preprocess(self, nb, resources):
            return nb, resources

    class Breaks(Preprocessor):
        def preprocess(self, nb, resources):
            if nb.metadata.get("break"):
                nb.cells[0]["source"] = 5  # a cell's source must be text
            return nb, resources

    exporter = NotebookExporter(config=config)
    for preprocessor in (Keeps(), Breaks(), Keeps()):
        preprocessor.enabled = True
        exporter.register_preprocessor(preprocessor)
    return exporter, nbformat


def test_an_autograde_run_validates_each_notebook_once(tmp_path, monkeypatch):
    """Does an autograde run's config reach nbconvert's exporter, so that a notebook is validated once, after the
    last preprocessor, instead of after each one (13 a notebook in nbgrader's autograde)?"""
    exporter, nbformat = _autograde_exporter(tmp_path)
    calls = []
    validate = type(exporter)._validate_preprocessor
    monkeypatch.setattr(type(exporter), "_validate_preprocessor", lambda *a: calls.append(validate(*a)))
    exporter.from_notebook_node(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]))
    assert len(calls) == 1


def test_an_autograde_run_still_refuses_a_notebook_a_preprocessor_left_invalid(tmp_path):
    """With one validation a notebook, does a notebook that a preprocessor left invalid still fail its export, so
    that nbgrader writes no autograded notebook for it (and the worker records it as not graded)?"""
    exporter, nbformat = _autograde_exporter(tmp_path)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    exporter.from_notebook_node(nb)  # valid: exported
    nb.metadata["break"] = True
    with pytest.raises(nbformat.ValidationError):
        exporter.from_notebook_node(nb)


def test_a_students_notebooks_are_graded_lightest_first():
    """Does the nbgrader process grade a student's notebooks in the order the zygote makes their kernels ready (theory,
    nmt, clip, bert, then others by name) instead of by name (bert, the heaviest, first), and each of them still?"""
    script = """
import json
from nbgrader.converters.autograde import Autograde
from autograder.grading import runner

def by_name(self, assignment_id, student_id):  # what nbgrader's own leaves: the student's notebooks, sorted
    self.notebooks = sorted(f"/w/autograded/{student_id}/a3/{nb}.ipynb" for nb in ("bert", "clip", "nmt", "theory", "x"))

Autograde.init_assignment = by_name
runner._lightest_first()
converter = Autograde.__new__(Autograde)
Autograde.init_assignment(converter, "a3", "Zoë Ñúñez")
print(json.dumps([n.rsplit("/", 1)[1] for n in converter.notebooks]))
"""
    assert run(script) == ["theory.ipynb", "nmt.ipynb", "clip.ipynb", "bert.ipynb", "x.ipynb"]
