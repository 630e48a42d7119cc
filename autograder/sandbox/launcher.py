"""The grading kernelspec: a Jupyter kernel whose process runs in the bubblewrap sandbox.

`install_kernel(workspace, env)` writes a private kernelspec for one student's workspace and returns
what the nbgrader subprocess needs (kernel name, extra environment, traitlets config). The kernelspec's
argv runs this module (`python -m autograder.sandbox.launcher launch ...`) on the host: it asks the
workspace's zygote (`autograder.sandbox.zygote.client.request`) for the kernel, or wraps
`python -m autograder.sandbox.kernel -f {connection_file}` in `bwrap` itself (`autograder.sandbox.bwrap`).

The pass-token key travels from the kernelspec to the kernel through a pipe, never through the
sandbox's environment or command line, so `/proc/self/environ` does not show it. Resource limits,
the output cap and the event log (attempts to reach hidden files or the network) live in
`autograder.sandbox.kernel`. Per-cell and per-notebook wall-clock limits are the caller's
(Execute.timeout, and killing the nbgrader subprocess).
"""

import argparse
import json
import os
import shutil
import socket
import sys
from pathlib import Path

from autograder import envvars
from autograder.sandbox import linux
from autograder.sandbox.bwrap import (
    EVENTS_FILE,
    FORCED_ENV,
    NEVER_ENV,
    STATE,
    available,
    bwrap_command,
    kernel_variables,
    prepare_workspace,
    python_module,
    runtime_dir,
    sandboxed_environment,
)
from autograder.sandbox.limits import limits
from autograder.sandbox.zygote import client

MODULE = "autograder.sandbox.launcher"  # the kernelspec's command runs it
LAUNCH = [*python_module(MODULE), "launch"]  # how that command begins
KERNEL_NAME = "python3"  # shadows the stock kernel in this workspace, so no kernel escapes the sandbox
KERNELS = "kernels"  # the kernelspecs' folder in the workspace's sandbox state (JUPYTER_PATH)


def install_kernel(workspace, env, sandbox=None) -> dict:
    """Install the grading kernelspec for one workspace (one student).

    Inputs:
    - workspace: Path, the student's nbgrader course folder; notebooks must execute below it.
    - env: dict of variables the kernel must see (A3_CHECK_KEY, NBGRADER_EXECUTION, ...). The key is
      stored in the kernelspec (mode 0600, outside the sandbox) and handed to the kernel by a pipe.
    - sandbox: True/False to force bubblewrap on/off; None uses it whenever available().

    Returns:
    - dict with kernel_name (str), env (extra environment for the nbgrader subprocess: JUPYTER_PATH),
      config (traitlets config to merge into nbgrader's), sandboxed (bool),
      runtime_dir (str, removed by `uninstall_kernel(workspace)`), limits (see `limits()`).
    """
    workspace = Path(workspace).resolve()
    sandboxed = available() if sandbox is None else bool(sandbox)
    if sandboxed and not available():
        raise RuntimeError("bubblewrap (bwrap) is not usable on this machine; install the Debian package 'bubblewrap'")
    lim = limits()
    state, runtime = prepare_workspace(workspace)
    kernel_dir = state / KERNELS / KERNEL_NAME
    kernel_dir.mkdir(parents=True, exist_ok=True)
    passed = sorted(k for k in env if k not in NEVER_ENV)
    argv = [
        *LAUNCH,  # on the host, in the notebook's folder
        "--workspace",
        str(workspace),
        "--pass-env",
        ",".join(passed),
        "--bwrap" if sandboxed else "--no-bwrap",
        "-f",
        "{connection_file}",
    ]
    spec = {
        "argv": argv,
        "display_name": "Python 3 (A3 grading sandbox)",
        "language": "python",
        "interrupt_mode": "message",
        "env": {k: str(v) for k, v in env.items()},
        "metadata": {"debugger": False},
    }
    path = kernel_dir / "kernel.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(spec, f, indent=1)
    config = {
        # Unix sockets at an absolute path; the launcher binds their folder (and the connection file) in.
        "KernelManager": {"transport": "ipc", "ip": str(runtime / "k")},
        "Execute": {
            "kernel_name": KERNEL_NAME,
            "interrupt_on_timeout": True,
            "startup_timeout": 120,
            "iopub_timeout": 10,
        },
        "LimitOutput": {"max_lines": 1000, "max_traceback": 100},
        "OverwriteCells": {"add_missing_cells": True},
    }
    return {
        "kernel_name": KERNEL_NAME,
        "env": {"JUPYTER_PATH": str(state)},
        "config": config,
        "sandboxed": sandboxed,
        "runtime_dir": str(runtime),
        "limits": lim,
    }


def uninstall_kernel(workspace) -> None:
    """Remove the runtime folder of this workspace (the kernelspec goes with the workspace)."""
    shutil.rmtree(runtime_dir(workspace), ignore_errors=True)


def clear_kernel(workspace) -> None:
    """Remove the workspace's kernelspec and empty its runtime folder, which stays: a running zygote has it
    mounted, and a folder made again would not show through that mount."""
    shutil.rmtree(Path(workspace) / STATE / KERNELS, ignore_errors=True)
    linux.empty(runtime_dir(workspace))


def _inside(path, root):
    """True when path is root or lies below it (both resolved)."""
    path, root = Path(path).resolve(), Path(root).resolve()
    return path == root or root in path.parents


def _arguments(argv):
    """(the launcher's options, the kernel options after them such as --HistoryManager.hist_file)."""
    parser = argparse.ArgumentParser(prog="python -m autograder.sandbox.launcher launch")
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--pass-env", default="")
    parser.add_argument("--bwrap", dest="bwrap", action="store_true", default=True)
    parser.add_argument("--no-bwrap", dest="bwrap", action="store_false")
    parser.add_argument("--no-zygote", dest="zygote", action="store_false", default=True, help=argparse.SUPPRESS)
    parser.add_argument("-f", dest="connection_file", required=True)
    return parser.parse_known_args(argv)


def _checked(args, cwd: Path, environ) -> tuple[Path, Path, Path, dict[str, str]]:
    """(workspace, connection file, the kernels' sockets folder, kernel variables from `environ`) for a kernel to run
    in folder `cwd`; ValueError saying why when the launcher refuses it."""
    workspace = args.workspace.resolve()
    if not _inside(cwd, workspace) or cwd == workspace:
        raise ValueError(f"refusing to run a kernel in {cwd}: it is not below {workspace}")
    connection_file = Path(args.connection_file).resolve()
    ip = json.loads(connection_file.read_text()).get("ip", "")
    if not os.path.isabs(ip):
        raise ValueError(
            "set KernelManager.transport='ipc' and an absolute KernelManager.ip (install_kernel's config does), "
            f"got ip={ip!r}"
        )
    kernel_env = kernel_variables(environ, [n for n in args.pass_env.split(",") if n])
    return workspace, connection_file, Path(ip).parent, kernel_env


def is_launcher(cmd: list[str]) -> bool:
    """True when `cmd` runs this launcher (the grading kernelspec's command)."""
    return list(cmd[: len(LAUNCH)]) == LAUNCH


def zygote_kernel(
    cmd: list[str], env: dict[str, str], cwd, stdio: list[int], notebook: str = ""
) -> socket.socket | None:
    """For a caller about to run this kernelspec's command `cmd` in folder `cwd` with environment `env` (nbgrader's
    kernel manager): the kernel the workspace's zygote forks for it, as `launch` would have it, without starting a
    launcher process (about 60 ms a kernel), with the file descriptors `stdio` as its stdin, stdout and stderr, once
    the libraries of `notebook` are in (see `autograder.sandbox.zygote.preload`; '': all of them).

    Returns:
    - the connection to the zygote, open while the kernel runs (closing it ends the kernel), or None when the
      launcher must run: a command of another kernel, no sandbox, a folder the launcher refuses, or no zygote
      that serves.
    """
    if not is_launcher(cmd):
        return None
    args, extra = _arguments(list(cmd[len(LAUNCH) :]))
    if not args.bwrap:
        return None
    cwd = Path(cwd).resolve()
    try:
        workspace, connection_file, _, kernel_env = _checked(args, cwd, env)
    except ValueError:  # the launcher says why
        return None
    key = env.get(envvars.CHECK_KEY, "")
    return client.ask(workspace, cwd, connection_file, extra, key, kernel_env, stdio, notebook)


def launch(argv=None) -> None:
    """Kernelspec entry point (runs on the host): hand the key over by pipe and exec the kernel."""
    args, extra = _arguments(argv)
    cwd = Path.cwd().resolve()
    key = os.environ.pop(envvars.CHECK_KEY, "")
    try:
        workspace, connection_file, sockets, kernel_env = _checked(args, cwd, os.environ)
    except ValueError as refused:
        sys.exit(f"autograder.sandbox.launcher: {refused}")
    kernel_args = ["-f", str(connection_file)] + extra
    if args.bwrap and args.zygote:
        code = client.request(workspace, cwd, connection_file, extra, key, kernel_env)
        if code is not None:  # the student's zygote ran this kernel
            sys.exit(code)
    r, w = os.pipe()
    os.write(w, key.encode())
    os.close(w)
    os.set_inheritable(r, True)
    events_path = workspace / STATE / EVENTS_FILE
    events = os.open(events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.set_inheritable(events, True)
    fds = {envvars.KEY_FD: str(r), envvars.EVENTS_FD: str(events)}
    if args.bwrap:
        env = sandboxed_environment(workspace, [cwd, sockets], kernel_env, fds)
        os.execvp("bwrap", bwrap_command(workspace, cwd, connection_file, sockets, env) + kernel_args)
    env = {k: v for k, v in os.environ.items() if k not in NEVER_ENV}
    env.update(FORCED_ENV)
    env.update(fds)
    env["PYTHONPATH"] = str(workspace / STATE / "lib")
    os.execve(sys.executable, python_module("autograder.sandbox.kernel") + kernel_args, env)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "launch":
        launch(sys.argv[2:])
    else:
        sys.exit("usage: python -m autograder.sandbox.launcher launch --workspace W -f CONNECTION_FILE")
