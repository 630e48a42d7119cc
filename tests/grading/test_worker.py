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
