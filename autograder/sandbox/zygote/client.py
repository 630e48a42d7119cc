"""The zygote's host side: start one for a workspace, ask it for a kernel, reset it, ask what it stopped.

`start` runs the server (`autograder.sandbox.zygote.server`) in the workspace's bubblewrap sandbox, showing
the whole AUTOGRADED folder (where nbgrader runs every notebook) instead of one notebook's folder, with its
two listening sockets passed in. `request` is the launcher's side of a kernel, `incidents` the grader's
question after each cell; `Zygote` is the worker's handle (through `autograder.sandbox.slot`).
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

from autograder import envvars
from autograder.sandbox import bwrap, linux, procs
from autograder.sandbox.limits import limits
from autograder.sandbox.zygote import protocol

RESET_TIMEOUT = 30  # seconds the worker waits for a reset (after the preload) before it starts a fresh zygote
READY_TIMEOUT = 60  # seconds a launcher waits for its kernel (the zygote may still be importing its libraries, ~6 s)
LOG = "zygote.log"  # in the workspace's .sandbox folder: the zygote's stdout and stderr


class Zygote:
    """A running zygote of one workspace; `stop()` ends it and its kernels."""

    def __init__(self, proc: subprocess.Popen, workspace: Path, log: Path, cgroup: Path | None = None):
        self.proc, self.workspace, self.path_log, self.cgroup = proc, workspace, log, cgroup

    def report(self) -> dict:
        """What the zygote's log says since its last reset: {"preload_seconds": float or None (the zygote's
        import time, once), "kernels": kernels forked since the last reset, "resets": resets so far}."""
        try:
            text = self.path_log.read_text(errors="replace")
        except OSError:
            text = ""
        found = re.search(r"preloaded in ([0-9.]+) s", text)
        return {
            "preload_seconds": float(found.group(1)) if found else None,
            "resets": len(re.findall(r" reset: ", text)),
            "kernels": len(re.findall(r"forked kernel", text.rsplit(" reset: ", 1)[-1])),
        }

    def reset(self, timeout: float | None = None) -> bool:
        """Make the zygote ready for another student: every other process of its sandbox killed, the
        sandbox's /tmp (home included) and /dev/shm emptied. Returns True when it confirmed in time."""
        if self.proc.poll() is not None:
            return False
        return protocol.ask(self.workspace, protocol.RESET, timeout or RESET_TIMEOUT) == protocol.CLEAN

    def stop(self) -> None:
        """Kill the zygote's sandbox (every process in it dies with it) and remove its sockets."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        if self.cgroup is not None:  # whatever escaped the sandbox's end (nothing should)
            procs.remove_cgroup(self.cgroup)
        shutil.rmtree(protocol.socket_folder(self.workspace), ignore_errors=True)


def _listen(path):
    """A unix socket listening at path."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(16)
    return sock


def start(workspace, source_env: dict, pass_names: list[str]) -> Zygote:
    """Start the zygote of one workspace in a bubblewrap sandbox.

    Inputs:
    - workspace: the slot's workspace (an nbgrader course folder).
    - source_env: the environment the launcher will see (nbgrader's, with the kernelspec's merged in).
    - pass_names: names of the kernelspec's variables (the launcher's --pass-env).
    Returns:
    - Zygote; its log is `<workspace>/.sandbox/zygote.log`.
    """
    workspace = Path(workspace).resolve()
    state, runtime = bwrap.prepare_workspace(workspace)
    root = workspace / protocol.AUTOGRADED
    root.mkdir(exist_ok=True)
    folder = protocol.socket_folder(workspace)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o700, parents=True)
    launch, control = _listen(folder / protocol.LAUNCH), _listen(folder / protocol.CONTROL)
    events = os.open(state / bwrap.EVENTS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    log = os.open(state / LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    kernel_env = bwrap.kernel_variables(source_env, pass_names)
    fds = {
        envvars.EVENTS_FD: str(events),
        envvars.ZYGOTE_FD: str(launch.fileno()),
        envvars.ZYGOTE_CONTROL_FD: str(control.fileno()),
        envvars.ZYGOTE_VARS: json.dumps(kernel_env, sort_keys=True),
    }
    env = bwrap.sandboxed_environment(workspace, [root, runtime], kernel_env, fds)
    cmd = bwrap.bwrap_command(workspace, root, None, runtime, env, module="autograder.sandbox.zygote")
    cgroup = procs.new_cgroup(limits()["procs"])  # the sandbox's processes are bounded from its first one
    try:
        proc = subprocess.Popen(
            procs.in_cgroup(cmd, cgroup),
            pass_fds=(events, launch.fileno(), control.fileno()),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    finally:
        for fd in (events, log):
            os.close(fd)
        launch.close()  # the zygote holds them now; with the zygote gone, connecting fails at once
        control.close()
    return Zygote(proc, workspace, state / LOG, cgroup)


def ask(
    workspace, cwd: Path, connection_file, extra: list[str], key: str, kernel_env: dict, stdio, notebook: str = ""
) -> socket.socket | None:
    """Have the workspace's zygote fork this kernel, with the file descriptors `stdio` as its stdin, stdout and stderr,
    as soon as the libraries of `notebook` are in ('' or a notebook the zygote does not know: all of them).

    Returns:
    - the request's connection, open while the kernel runs (closing it ends the kernel), or None when no zygote
      could start the kernel (none running, dead, stuck, started with another environment, or cwd outside its
      folder); the caller then starts the kernel itself.
    """
    path = protocol.socket_folder(workspace) / protocol.LAUNCH
    root = Path(workspace).resolve() / protocol.AUTOGRADED
    if not path.exists() or not (cwd == root or root in Path(cwd).parents):
        return None
    connection = Path(connection_file).read_text()
    sockets = Path(json.loads(connection)["ip"]).parent
    folders = {str(p): os.stat(p).st_ino for p in (cwd, sockets)}  # the child must see these very folders
    wanted = protocol.KernelRequest(str(cwd), connection, list(extra), key, kernel_env, folders)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(READY_TIMEOUT)
        conn.connect(str(path))
        conn.sendall(protocol.notebook_line(notebook))
        if protocol.read_line(conn) == protocol.READY:  # the kernel's own process, forked: it alone gets the key
            protocol.send_request(conn, wanted, list(stdio))
            reply = protocol.read_line(conn)
        else:
            reply = b""
    except (OSError, ValueError):  # refused (no zygote), timed out (stuck), reset
        reply = b""
    if reply != protocol.OK:
        conn.close()
        return None
    conn.settimeout(None)
    return conn


def request(workspace, cwd: Path, connection_file, extra: list[str], key: str, kernel_env: dict) -> int | None:
    """Launcher side: have the workspace's zygote run this kernel on the launcher's own stdin, stdout and stderr, and
    wait until it ends.

    Returns:
    - the exit status for the launcher once the kernel has ended, or None when no zygote could start the kernel
      (see `ask`); the caller then starts the kernel itself.
    """
    parent = os.getppid()
    linux.die_with_parent()  # nbgrader killed (time limit): this launcher goes, and the kernel with it
    if os.getppid() != parent:
        sys.exit(1)
    conn = ask(workspace, cwd, connection_file, extra, key, kernel_env, [0, 1, 2])
    if conn is None:
        return None
    protocol.wait_closed(conn)  # the kernel's end closes the connection
    return 0


def incidents(workspace, timeout: float = protocol.CHECK_TIMEOUT) -> list[str]:
    """Host side, after each cell: what the workspace's zygote stopped since it was last asked (its process
    guard runs once first), e.g. ["killed: more than 256 processes"]; [] without a zygote."""
    if not (protocol.socket_folder(workspace) / protocol.CONTROL).exists():
        return []
    reply = protocol.ask(workspace, protocol.CHECK, timeout)
    try:
        found = json.loads(reply) if reply else []
    except ValueError:
        return []
    return [str(x) for x in found] if isinstance(found, list) else []
