"""autograder.grading.worker: what a worker process keeps between students."""

import os

from autograder import paths
from autograder.grading import worker
from autograder.sandbox import slot


class StandIn:
    """A zygote stand-in that records whether it was stopped."""

    stopped = False

    def stop(self):
        self.stopped = True


def test_release_slots_stops_only_the_slots_of_that_run(tmp_path, monkeypatch):
    """Does release_slots(OUT/.work) stop and remove this process's slots in that folder, and leave a slot that
    serves another run's folder running?"""
    slots = {}
    for thread, run in enumerate(["Zoë Ñúñez", "李明"]):
        ws = tmp_path / run / ".work" / f"{slot.PREFIX}{thread}-abc"
        ws.mkdir(parents=True)
        slots[thread] = slot.Slot(ws.parent.resolve(), ws, StandIn(), "{}")
    monkeypatch.setattr(worker, "_slots", dict(slots))
    assert worker.release_slots(tmp_path / "Zoë Ñúñez" / ".work") == 1
    assert (slots[0].zygote.stopped, slots[0].workspace.exists()) == (True, False)
    assert (slots[1].zygote.stopped, slots[1].workspace.exists()) == (False, True)
    assert list(worker._slots) == [1]


def test_kernels_python_path_names_no_working_folder(monkeypatch):
    """Does the grading kernels' PYTHONPATH keep the kit's folder and the absolute entries of the grader's, and
    drop the empty and relative ones (each names the working folder, a notebook's folder for a launcher)?"""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["", "/opt/site", "lib", ".", "/srv/Zoë"]))
    assert worker._python_path() == os.pathsep.join([str(paths.ROOT), "/opt/site", "/srv/Zoë"])
    monkeypatch.delenv("PYTHONPATH")
    assert worker._python_path() == str(paths.ROOT)


def test_warming_the_pages_renders_a_page_without_an_error(tmp_path, monkeypatch):
    """Does warm_pages render its page and reader-safe copy without raising, writing nothing? (Where it runs, a
    failure is swallowed: it only costs time, so only this test would show it.)"""
    monkeypatch.chdir(tmp_path)
    worker.warm_pages()
    assert list(tmp_path.iterdir()) == []


def graded_student(tmp_path, pages):
    """A student graded on one notebook ('toy', one passed check), handed to render_pages with Task.pages=`pages`."""
    import nbformat

    from autograder.records import CellResult, NotebookResult, StudentResult

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("An answer, é and 李")])
    result = StudentResult(student="Zoë Ñúñez")
    result.notebooks["toy"] = NotebookResult.graded("toy", [CellResult("check", 1.0, 1.0, "passed")], 1.0)
    task = worker.Task(student="Zoë Ñúñez", notebooks=[], template="", work=str(tmp_path / "work"), pages=pages)
    return worker.Graded(task, result, {"toy": (nb, None)})


def test_the_page_stage_writes_a_students_pages_into_their_folder(tmp_path):
    """Does render_pages write each notebook's reader-safe copy and feedback page into Task.pages, clearing what
    an earlier run left there, and name that folder in the result?"""
    folder = tmp_path / ".cache" / "pages" / "Zoë Ñúñez"
    folder.mkdir(parents=True)
    (folder / "bert.html").write_text("an earlier run's page")
    result = worker.render_pages(graded_student(tmp_path, str(folder)))
    assert result.complete and result.pages == str(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["toy.html", "toy.ipynb"]
    assert "An answer, é and 李" in (folder / "toy.ipynb").read_text(encoding="utf-8")
    assert "Zoë Ñúñez" in (folder / "toy.html").read_text(encoding="utf-8")


def test_the_page_stage_without_a_folder_fails_the_student_and_deletes_nothing(tmp_path, monkeypatch):
    """Does render_pages for a task that names no pages folder fail that student (graded again on the next run)
    instead of writing, or clearing, the working folder?"""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("a file of the working folder")
    result = worker.render_pages(graded_student(tmp_path, ""))
    assert not result.complete and "Task.pages" in result.error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_a_graded_student_reaches_the_page_process_with_the_same_notebooks(tmp_path):
    """Does a Graded, pickled as multiprocessing hands it to the page process, come back with notebooks equal to
    the ones sent, a NotebookNode at every level (attribute access and all)?"""
    import pickle
    from multiprocessing.reduction import ForkingPickler

    import nbformat

    sent = graded_student(tmp_path, "pages")
    nb, _ = sent.notebooks["toy"]
    nb.cells.append(nbformat.v4.new_code_cell("print('Zoë')"))
    nb.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="Zoë\n")]
    back = pickle.loads(ForkingPickler.dumps(sent))
    got, _ = back.notebooks["toy"]
    assert got == nb and back.result == sent.result and back.task == sent.task
    assert type(got) is type(got.cells[1]) is type(got.cells[1].outputs[0]) is nbformat.NotebookNode
    assert got.cells[1].outputs[0].text == "Zoë\n" and got.metadata == nb.metadata


def _notebook(cells):
    """A release-like notebook of (cell type, nbgrader metadata, source) cells."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    for kind, meta, source in cells:
        cell = nbformat.v4.new_code_cell(source) if kind == "code" else nbformat.v4.new_markdown_cell(source)
        cell.metadata["nbgrader"] = {"schema_version": 3, "locked": kind == "code", "solution": kind != "code", **meta}
        nb.cells.append(cell)
    return nb


TEST_CELL = {"grade": True, "grade_id": "test_attn", "points": 2}
WRITTEN = {"grade": True, "grade_id": "written_a", "points": 1}


def test_course_layout_is_read_once_until_the_release_changes(tmp_path, monkeypatch):
    """Is the release's layout read once for every student of a run, read again once a release notebook changes,
    and handed out as a copy that a caller may change?"""
    import nbformat

    release = tmp_path / "Zoë's release"
    release.mkdir()
    nbformat.write(_notebook([("code", TEST_CELL, "check()"), ("markdown", WRITTEN, "answer")]), release / "nmt.ipynb")
    reads = []
    real = nbformat.read
    monkeypatch.setattr(worker.nbformat, "read", lambda *a, **k: reads.append(a[0]) or real(*a, **k))
    first = worker.course_layout(release)
    assert first == {"nmt": {"tests": {"test_attn": 2.0}, "manual": {"written_a": 1.0}}}
    first["nmt"]["tests"]["test_attn"] = 99.0
    assert worker.course_layout(release) == {"nmt": {"tests": {"test_attn": 2.0}, "manual": {"written_a": 1.0}}}
    assert len(reads) == 1
    nbformat.write(_notebook([("code", dict(TEST_CELL, points=3), "check()")]), release / "nmt.ipynb")
    os.utime(release / "nmt.ipynb", ns=(1, 1))  # another change time, however coarse the clock
    assert worker.course_layout(release) == {"nmt": {"tests": {"test_attn": 3.0}, "manual": {}}}
    assert len(reads) == 2


def test_check_modules_are_read_once_until_the_source_changes(tmp_path, monkeypatch):
    """Are the modules the course's test cells import from read once a run from the template's source, and read
    again once a source notebook (in a folder of its own) changes?"""
    import nbformat

    source = tmp_path / "template" / "course" / "source" / "a3"
    source.mkdir(parents=True)
    nbformat.write(_notebook([("code", TEST_CELL, "from toycheck import check\ncheck()")]), source / "nmt.ipynb")
    reads = []
    real = nbformat.read
    monkeypatch.setattr(worker.nbformat, "read", lambda *a, **k: reads.append(a[0]) or real(*a, **k))
    assert worker.course_check_modules(tmp_path / "template") == ["toycheck"]
    assert worker.course_check_modules(tmp_path / "template") == ["toycheck"]
    assert len(reads) == 1
    nbformat.write(_notebook([("code", TEST_CELL, "from autograder.checks.nmt import c\nc()")]), source / "bert.ipynb")
    assert worker.course_check_modules(tmp_path / "template") == ["autograder.checks.nmt", "toycheck"]
    assert len(reads) == 3
