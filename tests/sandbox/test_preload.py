"""What the zygote imports before it forks a notebook's kernel (autograder.sandbox.zygote.preload) and its background
importer (server.Preload): each notebook's libraries in stages, lightest notebook first, forks only between imports."""

import sys
import threading
import time

import pytest

from autograder.sandbox.zygote import preload, server
from tests.slowdown import scaled

CHECKS = ["autograder.checks.nmt", "autograder.checks.theory", "toycheck", "autograder.checks.bert"]


def test_every_kernel_finds_the_check_modules_in():
    """Are the course's check modules imported with the shared libraries, before any notebook's kernel is forked (each
    kernel imports them all before its first cell)?"""
    (first, modules), *_ = preload.stages(CHECKS)
    assert first is None and modules == preload.COMMON + tuple(CHECKS)


def test_a_notebooks_kernel_waits_for_its_stage_and_every_one_before():
    """Does a kernel for nmt wait for the shared imports, theory's and nmt's own, and no more?"""
    names = [name for name, _ in preload.stages(CHECKS)]
    assert names == [None, "theory", "nmt", "clip", "bert"]
    assert names[: preload.needed("theory")] == [None, "theory"]
    assert names[: preload.needed("nmt")] == [None, "theory", "nmt"]
    assert names[: preload.needed("bert")] == names


def test_a_notebook_the_table_does_not_name_waits_for_every_stage():
    """Does a kernel for another course's notebook, or for any notebook (''), wait until every library is in?"""
    for notebook in ("toy", "", "Theory"):
        assert preload.needed(notebook) == len(preload.stages(CHECKS))


def test_notebooks_are_graded_lightest_first():
    """Does nbgrader get a student's notebooks in the order their kernels are ready (others after, by name)?"""
    paths = [f"/w/submitted/Zoë/a3/{nb}.ipynb" for nb in ("bert", "clip", "extra", "nmt", "theory", "aaa")]
    assert [p.rsplit("/", 1)[1] for p in preload.grading_order(paths)] == [
        "theory.ipynb",
        "nmt.ipynb",
        "clip.ipynb",
        "bert.ipynb",
        "aaa.ipynb",
        "extra.ipynb",
    ]


@pytest.fixture
def slow_modules(tmp_path, monkeypatch):
    """Three modules that each take 0.3 s to import (a3slow_a, a3slow_b, a3slow_c), forgotten afterwards."""
    for name in ("a3slow_a", "a3slow_b", "a3slow_c"):
        (tmp_path / f"{name}.py").write_text("import time\ntime.sleep(0.3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in ("a3slow_a", "a3slow_b", "a3slow_c"):
        sys.modules.pop(name, None)


def _wait(condition, seconds=10):
    deadline = time.monotonic() + scaled(seconds)
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_stage_is_ready_before_the_later_ones_are_imported(slow_modules, monkeypatch):
    """Is the first stage counted as in while a later stage is still being imported (its kernels need not wait)?"""
    monkeypatch.setattr(server, "_warm_tracebacks", lambda: None)
    monkeypatch.setattr(server, "_say", lambda line: None)
    imports = server.Preload([(None, ("a3slow_a",)), ("first", ()), ("second", ("a3slow_b", "a3slow_c"))])
    imports.start()
    _wait(lambda: imports.done >= 2)
    assert "a3slow_a" in sys.modules and "a3slow_c" not in sys.modules
    imports.finish()
    assert imports.done == 3 and "a3slow_c" in sys.modules


def test_no_import_is_under_way_while_paused(slow_modules, monkeypatch):
    """Does pause() say an import is under way until it ends, and then hold the next import back until resume()?"""
    monkeypatch.setattr(server, "_warm_tracebacks", lambda: None)
    monkeypatch.setattr(server, "_say", lambda line: None)
    imports = server.Preload([(None, ("a3slow_a", "a3slow_b", "a3slow_c"))])
    imports.start()
    _wait(lambda: imports._importing)
    assert imports.pause() is False  # a3slow_a is half imported: no fork now
    _wait(imports.pause)
    held = {name for name in ("a3slow_a", "a3slow_b", "a3slow_c") if name in sys.modules}
    time.sleep(0.5)  # longer than an import: none started meanwhile
    assert {name for name in ("a3slow_a", "a3slow_b", "a3slow_c") if name in sys.modules} == held
    assert not imports._importing
    imports.resume()
    imports.finish()
    assert imports.done == 1 and all(name in sys.modules for name in ("a3slow_a", "a3slow_b", "a3slow_c"))


def test_a_module_that_fails_to_import_is_skipped(monkeypatch, capsys):
    """Does a library that cannot be imported leave a line in the zygote's log and the stage counted as in?"""
    monkeypatch.setattr(server, "_warm_tracebacks", lambda: None)
    monkeypatch.setattr(server, "_say", lambda line: None)
    imports = server.Preload([(None, ("a3_no_such_library",)), ("nmt", ("json",))])
    imports.start()
    imports.finish()
    assert imports.done == 2
    assert "not preloaded: a3_no_such_library: ModuleNotFoundError" in capsys.readouterr().out


def test_finish_lets_a_paused_import_go_on(slow_modules, monkeypatch):
    """Does finish() (before a reset) end the imports even when a fork had paused them?"""
    monkeypatch.setattr(server, "_warm_tracebacks", lambda: None)
    monkeypatch.setattr(server, "_say", lambda line: None)
    imports = server.Preload([(None, ("a3slow_a",))])
    imports.pause()
    imports.start()
    time.sleep(0.1)
    assert "a3slow_a" not in sys.modules
    imports.finish()
    assert imports.done == 1 and "a3slow_a" in sys.modules


def test_a_library_that_exits_when_imported_leaves_no_kernel_waiting(tmp_path, monkeypatch):
    """When an import ends the importing thread (a library that calls sys.exit), are all stages counted as in, so that
    the kernels waiting for them are forked (and import what they lack themselves) instead of waiting for ever?"""
    (tmp_path / "a3_exits.py").write_text("raise SystemExit('no')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(server, "_warm_tracebacks", lambda: None)
    monkeypatch.setattr(server, "_say", lambda line: None)
    monkeypatch.setattr(threading, "excepthook", lambda args: None)  # the thread's end is what is tested
    imports = server.Preload([(None, ("a3_exits",)), ("nmt", ("json",)), ("bert", ())])
    imports.start()
    imports.join(scaled(10))
    assert not imports.is_alive() and imports.done == 3 and not imports._importing
    sys.modules.pop("a3_exits", None)


def test_the_first_stage_is_in_before_the_zygote_serves(slow_modules, monkeypatch):
    """Does first_stage() import the shared stage in the caller's thread (its libraries start processes, which the
    serving zygote's guard would reap or kill), and the thread then go on from the next stage?"""
    monkeypatch.setattr(server, "_warm_tracebacks", lambda: None)
    monkeypatch.setattr(server, "_say", lambda line: None)
    imports = server.Preload([(None, ("a3slow_a",)), ("nmt", ("a3slow_b",))])
    imports.first_stage()
    assert imports.done == 1 and "a3slow_a" in sys.modules and "a3slow_b" not in sys.modules
    assert not imports.is_alive()
    imports.start()
    imports.finish()
    assert imports.done == 2 and "a3slow_b" in sys.modules
