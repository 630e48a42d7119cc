"""The last cell of each released notebook: the check a student runs before submitting (autograder/readiness.py,
embedded by `build`), in a real Jupyter kernel, in Colab (a stand-in `google.colab._message`) and while grading; its
rules are check's and ingest's own."""

import ast
import builtins
import copy
import json
import textwrap
import types
from pathlib import Path

import nbformat
import pytest

from autograder import contract, paths, readiness
from autograder.grading import answers, check, ingest, read
from autograder.reports import feedback
from tests.corpus import make_corpus as mc
from tests.grading.test_check import ran
from tests.notebooks import run_notebook

NOTEBOOKS = contract.NOTEBOOKS
KERNEL_ENV = {"A3_QUICK": "1", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "NBGRADER_EXECUTION": None}


def embedded(nb):
    """(the readiness module the notebook's last cell embeds, run with `autograder` not importable; its Release's
    JSON): read from the cell's call, as the cell itself does."""
    call = ast.parse(nb.cells[-1].source).body[-1].value
    release, contract_source, rules_source = (ast.literal_eval(a) for a in call.args)

    def no_autograder(name, *args, **kwargs):
        if name == "autograder" or name.startswith("autograder."):
            raise ImportError(f"no module named {name!r} (a student's Colab)")
        return builtins.__import__(name, *args, **kwargs)

    safe = dict(vars(builtins), __import__=no_autograder)
    embedded_contract = types.ModuleType("a3_contract")
    embedded_contract.__builtins__ = safe
    exec(contract_source, vars(embedded_contract))
    module = types.ModuleType("a3_readiness")
    module.__builtins__, module.contract = safe, embedded_contract
    exec(rules_source, vars(module))
    return module, release


def in_kernel(nb, folder, env=None, allow_errors=False, timeout=300):
    """Run nb with nbclient in `folder` (the notebook's file written there first as the student saved it is the
    caller's); returns the last cell's outputs."""
    run_notebook(nb, folder, {**KERNEL_ENV, **(env or {})}, timeout, allow_errors)
    return nb.cells[-1].outputs


def printed(outputs):
    """The last cell's stdout, after asserting it wrote nothing to stderr and raised nothing."""
    assert all(o.get("name") != "stderr" and o.get("output_type") != "error" for o in outputs), outputs
    return "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")


def folder_for(tmp_path):
    """A working folder beside the release's data and images, as a student's."""
    for sub in ("data", "images"):
        (tmp_path / sub).symlink_to(paths.RELEASE / sub)
    return tmp_path


# --- the cell as build writes it ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_check_is_the_generated_last_cell(releases, name):
    """Is the last cell of each released notebook the generated check, after the Submitting section, marked
    generated and hidden, with no grading metadata?"""
    cells = releases[name].cells
    last = cells[-1]
    assert readiness.is_generated(last) and last.id == readiness.CELL_ID
    assert last.source.startswith(readiness.CELL_TITLE + "\n" + readiness.CELL_GENERATED)
    assert "nbgrader" not in last.metadata and last.metadata["jupyter"] == {"source_hidden": True}
    assert cells[-2].cell_type == "markdown" and cells[-2].source.startswith("## Submitting")
    assert sum(map(readiness.is_generated, cells)) == 1


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_cell_embeds_the_one_home_of_the_rules(releases, name):
    """Does each notebook's cell embed autograder/readiness.py and contract.py verbatim, and the notebook's own
    Release (the one `check` and ingest compare with)?"""
    call = ast.parse(releases[name].cells[-1].source).body[-1].value
    release, contract_source, rules_source = (ast.literal_eval(a) for a in call.args)
    assert rules_source == Path(readiness.__file__).read_text()
    assert contract_source == Path(contract.__file__).read_text()
    assert release == readiness.Release.of(releases[name], name).to_json()
    assert release["points"] == {**contract.GRADED[name], **contract.WRITTEN[name]}


# --- the same verdicts as `check` ---------------------------------------------------------------------------------


def _added_written(nb):
    at = mc.index_of(nb, "written_fgsm_bound")
    answer = nb.cells[at].source
    nb.cells[at].source = "YOUR ANSWER HERE"
    nb.cells.insert(at + 1, nbformat.v4.new_markdown_cell(answer))
    return nb


def _added_code(nb, rel):
    at = mc.index_of(nb, "ridge_closed_form")
    code = nb.cells[at].source
    nb.cells[at].source = rel.cells[mc.index_of(rel, "ridge_closed_form")].source
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(code))
    return nb


def _edited_test(nb):
    nb.cells[mc.index_of(nb, "test_ridge_closed_form")].source += "\nassert True"
    return nb


def _skip_tag(nb):
    nb.cells[mc.index_of(nb, "test_ridge_closed_form")].metadata["tags"] = ["skip-execution"]
    return nb


def _input_call(nb):
    nb.cells[mc.index_of(nb, "ridge_closed_form")].source += "\nname = input('name?')"
    return nb


def _absolute_path(nb):
    nb.cells.insert(5, nbformat.v4.new_code_cell("data = open('/content/drive/MyDrive/x.csv').read()"))
    return nb


def _lost_metadata(nb):
    del nb.cells[mc.index_of(nb, "test_ridge_closed_form")].metadata["nbgrader"]
    return nb


def _old_check_cell(nb):
    nb.cells[-1].source = nb.cells[-1].source.replace("It changes nothing", "It changed nothing")
    return nb


CASES = {
    "the reference solution, run": lambda s, r: ran(s),
    "the untouched release, run": lambda s, r: ran(copy.deepcopy(r)),
    "the untouched release, never run": lambda s, r: copy.deepcopy(r),
    "a written answer in an added cell": lambda s, r: ran(_added_written(s)),
    "code in an added cell": lambda s, r: ran(_added_code(s, r)),
    "a deleted test cell": lambda s, r: ran(_drop(s, "test_logit_after_fgm")),
    "an edited test cell": lambda s, r: ran(_edited_test(s)),
    "a skip tag on a test cell": lambda s, r: ran(_skip_tag(s)),
    "input() in an answer cell": lambda s, r: ran(_input_call(s)),
    "an absolute path in an added cell": lambda s, r: ran(_absolute_path(s)),
    "a test cell that lost its metadata": lambda s, r: ran(_lost_metadata(s)),
    "an older copy of the check cell": lambda s, r: ran(_old_check_cell(s)),
}


def _drop(nb, grade_id):
    del nb.cells[mc.index_of(nb, grade_id)]
    return nb


@pytest.mark.parametrize("case", CASES)
def test_the_cell_s_rules_give_check_s_verdicts(tmp_path, releases, sources, case):
    """Do the rules embedded in the cell, on the notebook as the cell reads it, give the very lines that
    `python -m autograder check` gives for the saved file?"""
    rel = releases["theory"]
    nb = CASES[case](mc.solved(rel, sources["theory"]), rel)
    path = tmp_path / "theory.ipynb"
    mc.write(nb, path)
    _, want = check.problems(path, read.load_releases(paths.RELEASE), int(check.LMS_LIMIT_MB * 2**20))
    module, release = embedded(rel)
    live = json.loads(path.read_text())
    for cell in live["cells"]:
        cell["source"] = "".join(cell["source"])
    got = module.verdict(live, module.Release.from_json(release), size=path.stat().st_size)
    assert got == want, case
    assert bool(got) == (case not in ("the reference solution, run", "an older copy of the check cell")), got


def test_a_file_over_the_limit_is_the_same_verdict(tmp_path, releases, sources):
    """Is a file over the LMS's limit one line, the same in the cell as in `check --max-mb`?"""
    nb = ran(mc.solved(releases["theory"], sources["theory"]))
    path = tmp_path / "theory.ipynb"
    mc.write(nb, path)
    _, want = check.problems(path, read.load_releases(paths.RELEASE), 10_000)
    module, release = embedded(releases["theory"])
    live = json.loads(path.read_text())
    got = module.verdict(live, module.Release.from_json(release), size=path.stat().st_size, max_bytes=10_000)
    assert got == want and len(got) == 1 and "MB" in got[0]


def test_ingest_takes_the_check_cell_for_no_answer(tmp_path, releases, sources):
    """Does ingest, on a solved notebook whose check cell is an older copy, find no added-cell answer and repair
    nothing about that cell?"""
    rel = releases["theory"]
    path = tmp_path / "theory.ipynb"
    mc.write(_old_check_cell(ran(mc.solved(rel, sources["theory"]))), path)
    name, nb, problem, repairs = ingest.read_submitted(path, {"theory": rel})
    assert name == "theory" and problem is None
    problem, found = ingest.prepare(nb, rel, repairs)
    assert problem is None and found == [] and readiness.is_generated(nb["cells"][-1])
    assert not any(readiness.CELL_ID in line for line in repairs), repairs
    assert not answers.is_added(nb["cells"][-1], answers.release_texts(rel))


def test_feedback_pages_leave_the_check_cell_out(releases):
    """Does a feedback page leave out the generated check cell (no answer, nothing graded)?"""
    nb = feedback._without_colab_badge(copy.deepcopy(releases["nmt"]))
    assert not any(map(readiness.is_generated, nb.cells)) and len(nb.cells) == len(releases["nmt"].cells) - 2


# --- in a real kernel ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_reference_solution_is_ready(tmp_path, releases, sources):
    """Run whole in Jupyter (saved, then run), does the reference solution's last cell say it is ready, with every
    answer and every visible check counted, and write nothing to stderr?"""
    folder = folder_for(tmp_path)
    nb = mc.solved(releases["theory"], sources["theory"])
    mc.write(nb, folder / "theory.ipynb")
    out = printed(in_kernel(nb, folder))
    assert "as saved in theory.ipynb" in out and "ready: every answer is where the grader looks" in out, out
    assert "answered 18 of 18 graded cells and 8 of 8 written answers" in out, out
    assert "Problem 1: robustness and regularisation: 6 of 6 passed (worth 7 of 7 points)" in out, out
    assert "File → Download" in out and "upload theory.ipynb to the LMS" in out


@pytest.mark.slow
def test_the_untouched_release_lists_what_is_left(tmp_path, releases):
    """Run whole, does the untouched release's last cell say nothing is answered and name what is left, in a few
    lines?"""
    folder = folder_for(tmp_path)
    nb = copy.deepcopy(releases["theory"])
    mc.write(nb, folder / "Copy of theory (1).ipynb")
    out = printed(in_kernel(nb, folder, allow_errors=True))
    assert "answered 0 of 18 graded cells and 0 of 8 written answers" in out, out
    assert "still to answer (26): `counterexample_w`, `logit_after_fgsm`" in out and "T8" in out, out
    assert "ready:" not in out and len(out.splitlines()) < 20, out


@pytest.mark.slow
def test_an_answer_in_an_added_cell_is_told_to_move(tmp_path, releases, sources):
    """Run whole, does the last cell tell the student to move a written answer typed into an added cell?"""
    folder = folder_for(tmp_path)
    nb = _added_written(mc.solved(releases["theory"], sources["theory"]))
    mc.write(nb, folder / "theory.ipynb")
    out = printed(in_kernel(nb, folder))
    assert "T1: your answer is in a cell you added below the question" in out and "move it into" in out, out
    assert "ready:" not in out


def test_an_unsaved_notebook_is_told_to_save_first(tmp_path, releases, sources):
    """When the file lacks the kernel's last runs, does the cell say to save first, and check the file as saved?"""
    folder = folder_for(tmp_path)
    nb = mc.solved(releases["theory"], sources["theory"])
    mc.write(nb, folder / "theory.ipynb")
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nb.cells[-1]]
    out = printed(in_kernel(nb, folder))
    assert out.startswith("Save the notebook first") and "as saved in theory.ipynb" in out, out


def _fake_colab(tmp_path, behaviour):
    """A stand-in google.colab._message on a folder for PYTHONPATH: `behaviour` is its blocking_request's body."""
    package = tmp_path / "fake" / "google" / "colab"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "_message.py").write_text(
        "import json, os\n\n\nclass TimeoutException(RuntimeError):\n    pass\n\n\n"
        "def blocking_request(request_type, request='', timeout_sec=5, parent=None):\n"
        + textwrap.indent(textwrap.dedent(behaviour), "    ")
    )
    return {"PYTHONPATH": str(tmp_path / "fake")}


def test_in_colab_the_live_notebook_is_checked(tmp_path, releases, sources):
    """In Colab (a stand-in `google.colab._message` returning the notebook), does the cell check the notebook
    Colab hands over, with no file in the folder?"""
    live = tmp_path / "live.json"
    live.write_text(nbformat.writes(_added_written(ran(mc.solved(releases["theory"], sources["theory"])))))
    env = _fake_colab(tmp_path, "assert request_type == 'get_ipynb' and timeout_sec\n"
                      f"return {{'ipynb': json.load(open({str(live)!r}))}}\n")  # fmt: skip
    nb = nbformat.v4.new_notebook(cells=[copy.deepcopy(releases["theory"].cells[-1])])
    out = printed(in_kernel(nb, tmp_path / "fake", env))
    assert "theory.ipynb, as Colab holds it now:" in out and "T1: your answer is in a cell you added" in out, out
    assert "File → Download → Download .ipynb" in out


def test_in_colab_a_time_out_gives_the_fallback(tmp_path, releases):
    """When Colab does not hand the notebook over in time, does the cell say in two lines how to download the
    notebook and check it?"""
    env = _fake_colab(tmp_path, "raise TimeoutException('timed out')\n")
    nb = nbformat.v4.new_notebook(cells=[copy.deepcopy(releases["theory"].cells[-1])])
    out = printed(in_kernel(nb, tmp_path / "fake", env))
    assert out.splitlines() == [
        "Could not read this notebook from Colab (Colab did not answer within 20 s).",
        "Download it (File → Download → Download .ipynb) and check it with the course repository: "
        "python -m autograder check theory.ipynb",
    ], out


def test_while_grading_the_cell_does_nothing(tmp_path, releases):
    """Under NBGRADER_EXECUTION, does the cell print nothing, write nothing to stderr and leave nothing behind?"""
    folder = folder_for(tmp_path)
    mc.write(copy.deepcopy(releases["theory"]), folder / "theory.ipynb")
    nb = nbformat.v4.new_notebook(cells=[copy.deepcopy(releases["theory"].cells[-1])])
    outputs = in_kernel(nb, folder, {"NBGRADER_EXECUTION": "autograde"})
    assert outputs == [] and sorted(p.name for p in folder.iterdir()) == ["data", "images", "theory.ipynb"]
