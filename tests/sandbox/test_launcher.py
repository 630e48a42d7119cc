"""The grading sandbox: a kernel started through install_kernel's kernelspec, probed cell by cell."""

import os
import re
import time

import pytest
from jupyter_client.manager import KernelManager
from traitlets.config import Config

from autograder.checks import pass_token
from autograder.grading.execute import ResilientExecute
from autograder.paths import ROOT, SOURCE
from autograder.sandbox import bwrap, launcher, limits
from autograder.sandbox.zygote import protocol
from tests.sandbox.kernels import KEY, errors, execute, start_zygote, stdout, workspace
from tests.slowdown import scaled

PROBES = {  # name -> cell source; each test below reads one cell's output
    "env_key": "import os\n"
    "print('A3_CHECK_KEY' in os.environ, b'A3_CHECK_KEY' in open('/proc/self/environ', 'rb').read())",
    "pass_line": "import numpy as np\nfrom autograder.checks.nmt import check_fit_linear_log\n"
    "def fit_linear_log(x, y):\n    m, c = np.polyfit(np.log10(x), np.log10(y), 1)\n    return m, c\n"
    "check_fit_linear_log(fit_linear_log)",
    "notebook_check": "from autograder.checks import check\n@check('probe')\ndef probe():\n    pass\nprobe()",
    "parent": "print(os.getppid())",
    "hidden": "for p in {paths!r}:\n    try:\n        open(p, 'rb')\n        print(True)\n"
    "    except OSError:\n        print(False)",
    "write_here": "open('written.txt', 'w').write('ok')\nprint(open('written.txt').read())",
    "write_package": "import autograder.checks as c\ntry:\n    open(c.__file__, 'ab')\n"
    "except OSError as e:\n    print(type(e).__name__)",
    "socket": "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 80), timeout=2)\n    print('connected')\n"
    "except OSError as e:\n    print(type(e).__name__)",
    "dns": "try:\n    socket.getaddrinfo('pypi.org', 443)\n    print('resolved')\n"
    "except OSError as e:\n    print(type(e).__name__)",
    "torch": "import torch\nprint(torch.ones(3).sum().item())",
    "no_source": "import inspect, autograder.content.reference.nmt as ref\ntry:\n    inspect.getsource(ref)\n"
    "    print('source visible')\nexcept (OSError, TypeError):\n    print('no source')",
    "memory": "try:\n    x = bytearray(64 * 2**30)\n    print('allocated')\n"
    "except MemoryError:\n    print('MemoryError')",
    "big_print": "print('y' * 1_000_000)",
    "os_exit": "os._exit(3)",
    "alive": "print('alive')",
    "processes": "print(len([p for p in os.listdir('/proc') if p.isdigit()]))",
    "cwd": "print(os.getcwd())",
    "allow_flag": "print(os.environ.get('A3_ALLOW_NON_NOTEBOOK'))",
    "set_flag": "os.environ['A3_ALLOW_NON_NOTEBOOK'] = '1'",
    "flag_after": "print(os.environ.get('A3_ALLOW_NON_NOTEBOOK'))",
}


@pytest.fixture(scope="module", params=["direct", "zygote"])
def probed(request, tmp_path_factory):
    """Every probe cell, executed once in the sandbox, by a kernel started on its own ("direct") or forked
    by the student's zygote ("zygote"); also the workspace and its event log."""
    assert bwrap.available(), "bubblewrap must be installed (./setup.sh installs the Debian package)"
    root = tmp_path_factory.mktemp("out")
    ws, cwd = workspace(root, "alice")
    other, _ = workspace(root, "bob")
    hidden = [
        str(ws / "gradebook.db"),
        str(other / "gradebook.db"),
        str(SOURCE / "nmt.ipynb"),
        str(ROOT / "autograder" / "content" / "reference" / "nmt.py"),
        os.path.expanduser("~/.bashrc"),
        str(protocol.socket_folder(ws) / protocol.LAUNCH),
    ]
    sources = dict(PROBES, hidden=PROBES["hidden"].format(paths=hidden))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("A3_ALLOW_NON_NOTEBOOK", "1")  # set in the grader's environment: must not reach the kernel
        zyg = start_zygote(ws) if request.param == "zygote" else None
        try:
            start = time.perf_counter()
            cells = execute(ws, cwd, list(sources.values()))
            seconds = time.perf_counter() - start
        finally:
            if zyg is not None:
                zyg.stop()
    return {
        "cells": dict(zip(sources, cells)),
        "ws": ws,
        "cwd": cwd,
        "events": bwrap.read_events(ws),
        "seconds": seconds,
        "mode": request.param,
    }


def test_sandbox_available():
    """Is bubblewrap installed and able to build the sandbox's namespaces here?"""
    assert bwrap.available(), "expected bwrap to work (Debian package bubblewrap)"


def test_key_not_in_environment(probed):
    """Is the check key absent from os.environ and /proc/self/environ inside the kernel?"""
    assert stdout(probed["cells"]["env_key"]) == "False False", f"saw {stdout(probed['cells']['env_key'])!r}"


def test_checks_print_a_valid_token(probed):
    """Does a genuine check running in the sandbox print the pass line with the token for the key it was given?"""
    want = f"PASSED fit_linear_log [a3:{pass_token('fit_linear_log', KEY.encode())}]"
    got = stdout(probed["cells"]["pass_line"])
    assert got == want, f"expected {want!r}, saw {got!r}"


def test_checks_defined_in_the_notebook_print_no_token(probed):
    """Does a check that notebook code defines with the real @check decorator print a pass line without a token?"""
    got = stdout(probed["cells"]["notebook_check"])
    assert got == "PASSED probe", f"expected a plain pass line, saw {got!r}"


def test_kernel_comes_from_the_zygote_when_one_runs(probed):
    """Is the kernel forked by the student's zygote when one runs (and started by bwrap's init otherwise)?"""
    parent = stdout(probed["cells"]["parent"])
    if probed["mode"] == "zygote":
        assert parent not in ("", "1"), f"expected the zygote as the kernel's parent, saw pid {parent!r}"
    else:
        assert parent == "1", f"expected bwrap's init as the kernel's parent, saw pid {parent!r}"


def test_files_outside_the_sandbox_are_invisible(probed):
    """Are the gradebook, another student's files, source/, the checks' source, the home and the zygote's
    socket invisible?"""
    seen = stdout(probed["cells"]["hidden"]).split()
    assert seen == ["False"] * 6, f"expected nothing visible, saw {seen}"


def test_notebook_folder_is_writable(probed):
    """Can the notebook write in its own folder (and the file is there afterwards)?"""
    assert stdout(probed["cells"]["write_here"]) == "ok"
    assert (probed["cwd"] / "written.txt").read_text() == "ok", "expected the file in the notebook folder"


def test_autograder_package_is_read_only(probed):
    """Is the check runtime read-only for student code?"""
    assert stdout(probed["cells"]["write_package"]) == "OSError", f"saw {stdout(probed['cells']['write_package'])!r}"


def test_no_network(probed):
    """Does opening a socket or resolving a host fail inside the sandbox?"""
    got = (stdout(probed["cells"]["socket"]), stdout(probed["cells"]["dns"]))
    assert got[0] == "OSError" and got[1] in ("gaierror", "OSError"), f"saw {got}"


def test_torch_imports(probed):
    """Does torch import and compute inside the sandbox?"""
    cell = probed["cells"]["torch"]
    assert stdout(cell) == "3.0", f"expected 3.0, saw {stdout(cell)!r}, errors {errors(cell)}"


def test_reference_source_not_readable(probed):
    """Are the reference implementations importable only as bytecode (no source to print into feedback)?"""
    assert stdout(probed["cells"]["no_source"]) == "no source", f"saw {stdout(probed['cells']['no_source'])!r}"


def test_memory_cap(probed):
    """Does a 64 GB allocation fail with MemoryError instead of taking the machine?"""
    assert stdout(probed["cells"]["memory"]) == "MemoryError", f"saw {stdout(probed['cells']['memory'])!r}"


def test_output_cap(probed):
    """Is a 1,000,000-character print cut to the per-cell limit with a notice?"""
    text = stdout(probed["cells"]["big_print"])
    cap = limits.limits()["output_chars"]
    assert cap <= len(text) < cap + 200, f"expected about {cap} characters, saw {len(text)}"
    assert "output truncated by the grader" in text, "expected the truncation notice"


def test_os_exit_refused_and_kernel_survives(probed):
    """Does os._exit in notebook code raise SystemExit, leaving the kernel alive for the next cell?"""
    assert errors(probed["cells"]["os_exit"]) == ["SystemExit"], f"saw {errors(probed['cells']['os_exit'])}"
    assert stdout(probed["cells"]["alive"]) == "alive"


def test_own_pid_namespace(probed):
    """Does the kernel see only its own few processes (not the grader's or other students')?"""
    n = int(stdout(probed["cells"]["processes"]))
    assert n < 5, f"expected a handful of processes, saw {n}"


def test_check_escape_hatch_not_forwarded(probed):
    """Is A3_ALLOW_NON_NOTEBOOK (which turns off require_notebook_defined) kept out of the kernel?"""
    assert stdout(probed["cells"]["allow_flag"]) == "None", f"saw {stdout(probed['cells']['allow_flag'])!r}"


def test_escape_hatch_cannot_be_set_from_the_notebook(probed):
    """Does setting A3_ALLOW_NON_NOTEBOOK in notebook code fail, leaving it unset?"""
    assert errors(probed["cells"]["set_flag"]) == ["PermissionError"], f"saw {errors(probed['cells']['set_flag'])}"
    assert stdout(probed["cells"]["flag_after"]) == "None", f"saw {stdout(probed['cells']['flag_after'])!r}"


def test_runs_in_the_notebook_folder(probed):
    """Does the kernel start in the folder the notebook executes in?"""
    assert stdout(probed["cells"]["cwd"]) == str(probed["cwd"])


def test_events_logged(probed):
    """Are the blocked reads and the network attempts written to the workspace's event log?"""
    events = "\n".join(probed["events"])
    for pattern in (
        r"tried to read .*/bob/gradebook\.db",
        r"tried to read .*/source/a3/nmt\.ipynb",
        r"network connection to \('1\.1\.1\.1', 80\)",
        r"look up host 'pypi\.org'",
        r"os\._exit: refused",
    ):
        assert re.search(pattern, events), f"expected an event matching {pattern!r}, saw {probed['events']}"
    assert "zygote not used" not in events, probed["events"]


def test_event_log_cleared_after_reading(probed):
    """Does read_events empty the log, so the next notebook's lines are its own?"""
    assert bwrap.read_events(probed["ws"]) == [], "expected an empty log after reading"


# Modules a notebook can leave in its own folder, named as what a fresh Python imports before any grading code:
# the launcher (on the host), a kernel that starts without the zygote, and the package they import. Each leaves a
# file beside itself if it is ever imported.
PLANTED = ("argparse.py", "json.py", "socket.py", "autograder/__init__.py", "autograder/sandbox/__init__.py")
PLANT = (
    "import os\n"
    "for name in {names!r}:\n"
    "    os.makedirs(os.path.dirname(name) or '.', exist_ok=True)\n"
    "    with open(name, 'w') as f:\n"
    "        f.write('import os\\nopen(os.path.join(os.getcwd(), %r), \"w\").close()\\n' % (name.replace('/', '-') + '.ran'))\n"
    "print(sorted(os.listdir('.')))"
).format(names=PLANTED)


@pytest.mark.parametrize("mode", ["direct", "zygote"])
def test_next_kernel_imports_nothing_a_notebook_left_in_its_folder(tmp_path, mode):
    """When a notebook leaves argparse.py, json.py or an autograder package in its folder, does the next notebook's
    kernel (launched on the host, in that folder) still start from the kit's own modules and sign its checks?"""
    ws, cwd = workspace(tmp_path, "mallory")
    zyg = start_zygote(ws) if mode == "zygote" else None
    try:
        (planted,) = execute(ws, cwd, [PLANT], uninstall=False)
        assert "argparse.py" in stdout(planted), f"expected the modules planted, saw {stdout(planted)!r}"
        (check,) = execute(ws, cwd, [PROBES["pass_line"]])
    finally:
        if zyg is not None:
            zyg.stop()
    ran = sorted(p.name for p in cwd.iterdir() if p.name.endswith(".ran"))
    assert ran == [], f"expected no planted module imported, these ran: {ran}"
    want = f"PASSED fit_linear_log [a3:{pass_token('fit_linear_log', KEY.encode())}]"
    assert stdout(check) == want, f"expected {want!r}, saw {stdout(check)!r} {errors(check)}"


def test_infinite_loop_interrupted(tmp_path):
    """Is a cell that never ends interrupted at the cell timeout, and does the next cell still run?"""
    ws, cwd = workspace(tmp_path, "carol")
    loop, after = execute(ws, cwd, ["while True:\n    pass", "print('after')"], timeout=5)
    assert errors(loop), "expected the looping cell to end with an error"
    assert stdout(after) == "after", f"expected the next cell to run, saw {stdout(after)!r} {errors(after)}"


def test_segfault_graded_as_far_as_it_got(tmp_path):
    """With ResilientExecute, does a segfault mark that cell and the rest, keeping what ran before?"""
    ws, cwd = workspace(tmp_path, "dave")
    cells = execute(
        ws,
        cwd,
        ["print('before')", "import ctypes\nctypes.string_at(0)", "print('after')"],
        client_class=ResilientExecute,
    )
    assert stdout(cells[0]) == "before"
    assert errors(cells[1]) == ["KernelDied"] and errors(cells[2]) == ["KernelDied"], (
        f"expected KernelDied on the crashing and later cells, saw {errors(cells[1])}, {errors(cells[2])}"
    )


def test_kernel_refuses_to_run_outside_its_workspace(tmp_path):
    """Does the launcher refuse a notebook folder outside the workspace (so it never binds arbitrary folders)?"""
    ws, _ = workspace(tmp_path, "erin")
    stray = tmp_path / "elsewhere"
    stray.mkdir()
    info = launcher.install_kernel(ws, {"A3_CHECK_KEY": KEY})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", info["env"]["JUPYTER_PATH"])
        km = KernelManager(kernel_name=info["kernel_name"], config=Config(info["config"]))
        km.start_kernel(cwd=str(stray))
        try:
            assert km.provisioner.process.wait(timeout=scaled(60)) != 0, "expected the launcher to exit with an error"
        finally:
            km.shutdown_kernel(now=True) if km.is_alive() else km.cleanup_resources()
    launcher.uninstall_kernel(ws)


def test_model_cache_readable_read_only(tmp_path):
    """Is a model cache named by A3_MODEL_CACHE readable inside the sandbox, at the same path, and read-only?"""
    cache = tmp_path / "models"
    cache.mkdir()
    (cache / "weights.txt").write_text("w")
    ws, cwd = workspace(tmp_path, "carol")
    probe = (
        "import os\np = os.environ['A3_MODEL_CACHE']\nprint(open(os.path.join(p, 'weights.txt')).read())\n"
        "try:\n    open(os.path.join(p, 'new.txt'), 'w')\n    print('writable')\n"
        "except OSError:\n    print('read-only')"
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("A3_MODEL_CACHE", str(cache))
        cells = execute(ws, cwd, [probe])
    assert stdout(cells[0]).split() == ["w", "read-only"], cells[0].outputs
