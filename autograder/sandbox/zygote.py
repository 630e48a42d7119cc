"""Kernel zygote: one sandboxed process per worker imports the heavy libraries once and forks each kernel.

A fresh grading kernel spends seconds importing torch, transformers and open_clip before its first cell,
and ipykernel's own start-up imports (its debugger, debugpy) before it answers. The worker starts one
zygote (`start`) for its slot workspace, in the same bubblewrap sandbox a kernel gets, showing the slot's
whole `autograded/` folder (where nbgrader runs every notebook) instead of one notebook's folder, and
resets it between students. The kernelspec launcher (`autograder.sandbox.launcher`) asks it for each
kernel (`request`): the zygote forks, and the child takes the launcher's stdin/stdout/stderr, its own
per-notebook check key and the connection file, then runs ipykernel. The launcher stays as the kernel's
stand-in for nbgrader: it exits when the kernel does, and the kernel exits when the launcher is killed.

What stays as it was without a zygote:
- every kernel starts from the same pristine state (the fork happens before any student code), under
  the sandbox, limits, sealed checks, output cap, exit guard and audit hook of `autograder.sandbox.kernel`;
- the zygote never holds a key: each child gets its own over the request, after the fork;
- the listening socket is in a host folder the sandbox does not show, so notebook code can neither ask
  for kernels nor stand in for the zygote.
A zygote that is missing, dead, stuck or started with another environment costs nothing but time: the
launcher then starts the kernel in a sandbox of its own, as before.
"""

import ctypes
import hashlib
import importlib
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from autograder import envvars
from autograder.sandbox import bwrap, procs
from autograder.sandbox.limits import limits

ROOT = "autograded"  # the workspace folder the zygote's sandbox shows (writable); kernels run below it
PRELOAD = (  # what the notebooks and their checks import; a module missing here is skipped
    "numpy",
    "torch",
    "torch.nn",
    "torch.optim",
    "torch._dynamo",
    "matplotlib",
    "matplotlib.pyplot",
    "autograder.sandbox.nofigures",
    "tqdm.auto",
    "PIL.Image",
    "torchvision",
    "transformers",
    "transformers.models.bert.modeling_bert",
    "transformers.models.bert.tokenization_bert",
    "transformers.models.roberta.modeling_roberta",
    "transformers.modeling_utils",
    "safetensors.torch",
    "open_clip",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    # what IPKernelApp.initialize imports on first use: its debugger (debugpy, pydevd) alone is ~0.3 s a kernel
    "ipykernel.debugger",
    "debugpy",
    "debugpy.server",
    "pdb",
    "sqlite3",
    "tornado.gen",
    "tornado.locks",
    "tornado.queues",
    "tornado.platform.asyncio",
    "IPython.core.completerlib",
    "IPython.core.debugger",
    "IPython.core.oinspect",
    "IPython.extensions.storemagic",
    "IPython.utils.wildcard",
)
RESET_TIMEOUT = 30  # seconds the worker waits for a reset (after the preload) before it starts a fresh zygote
CONTROL = "control.sock"  # the worker's socket beside the launchers' one
READY_TIMEOUT = 60  # seconds a launcher waits for its kernel (the zygote may still be importing, ~6 s)
CHECK_TIMEOUT = 10  # seconds the grader waits for the zygote's answer after a cell
VARS = envvars.ZYGOTE_VARS  # the kernel variables the zygote was started with (JSON), before the sandbox's own


_started_with = {}  # in the zygote: VARS, read at start


def socket_path(workspace) -> Path:
    """Host path of a workspace's zygote socket (in a 0700 folder outside every sandbox)."""
    digest = hashlib.sha256(str(Path(workspace).resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"a3z-{digest}" / "zygote.sock"


class Zygote:
    """A running zygote (host side); `stop()` ends it and its kernels."""

    def __init__(self, proc, path, log, cgroup=None):
        self.proc, self.path, self.path_log, self.cgroup = proc, path, Path(log), cgroup

    def report(self) -> dict:
        """What the zygote's log says since its last reset: {"preload_seconds": float or None (the zygote's
        import time, once), "kernels": kernels forked since the last reset, "resets": resets so far}."""
        try:
            text = (self.path_log).read_text(errors="replace")
        except OSError:
            text = ""
        found = re.search(r"preloaded in ([0-9.]+) s", text)
        resets = len(re.findall(r" reset: ", text))
        return {
            "preload_seconds": float(found.group(1)) if found else None,
            "resets": resets,
            "kernels": len(re.findall(r"forked kernel", text.rsplit(" reset: ", 1)[-1])),
        }

    def reset(self, timeout=None) -> bool:
        """Make the zygote ready for another student: every other process of its sandbox killed, the
        sandbox's /tmp (home included) and /dev/shm emptied. Returns True when it confirmed in time."""
        if self.proc.poll() is not None:
            return False
        return _ask(self.path, b"reset", timeout or RESET_TIMEOUT) == b"clean"

    def stop(self) -> None:
        """Kill the zygote's sandbox (every process in it dies with it) and remove the socket."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        if self.cgroup is not None:  # whatever escaped the sandbox's end (nothing should)
            procs.remove_cgroup(self.cgroup)
        shutil.rmtree(self.path.parent, ignore_errors=True)


def _ask(path, command, timeout):
    """Send `command` to the zygote whose socket is `path` (its control socket lies beside it); its reply
    line (b"" when there is no zygote or it did not answer in time)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    reply = b""
    try:
        conn.settimeout(timeout)
        conn.connect(str(Path(path).with_name(CONTROL)))
        conn.sendall(command + b"\n")
        while not reply.endswith(b"\n"):
            chunk = conn.recv(4096)
            if not chunk:
                break
            reply += chunk
    except OSError:
        return b""
    finally:
        conn.close()
    return reply.strip()


def incidents(workspace, timeout=CHECK_TIMEOUT) -> list[str]:
    """Host side, after each cell: what the workspace's zygote stopped since it was last asked (its process
    guard runs once first), e.g. ["killed: more than 256 processes"]; [] without a zygote."""
    path = socket_path(workspace)
    if not path.exists():
        return []
    reply = _ask(path, b"check", timeout)
    try:
        found = json.loads(reply) if reply else []
    except ValueError:
        return []
    return [str(x) for x in found] if isinstance(found, list) else []


def start(workspace, source_env, pass_names) -> Zygote:
    """Start the zygote of one workspace (one student) in a bubblewrap sandbox.

    Inputs:
    - workspace: the student's workspace (nbgrader course folder).
    - source_env: the environment the launcher will see (nbgrader's, with the kernelspec's merged in).
    - pass_names: names of the kernelspec's variables (the launcher's --pass-env).
    Returns:
    - Zygote; its log is `<workspace>/.sandbox/zygote.log`.
    """

    workspace = Path(workspace).resolve()
    state, runtime = bwrap.prepare_workspace(workspace)
    root = workspace / ROOT
    root.mkdir(exist_ok=True)
    path = socket_path(workspace)
    shutil.rmtree(path.parent, ignore_errors=True)
    path.parent.mkdir(mode=0o700, parents=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    control.bind(str(path.with_name(CONTROL)))
    control.listen(4)
    events = os.open(state / bwrap.EVENTS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    log = os.open(state / "zygote.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    kernel_env = bwrap.kernel_variables(source_env, pass_names)
    fds = {
        envvars.EVENTS_FD: str(events),
        envvars.ZYGOTE_FD: str(listener.fileno()),
        envvars.ZYGOTE_CONTROL_FD: str(control.fileno()),
        VARS: json.dumps(kernel_env, sort_keys=True),
    }
    env = bwrap.kernel_environment(workspace, [root, runtime], kernel_env, fds)
    cmd = bwrap.bwrap_command(workspace, root, None, runtime, env, module="autograder.sandbox.zygote")
    cgroup = procs.new_cgroup(limits()["procs"])  # the sandbox's processes are bounded from its first one
    cmd = procs.in_cgroup(cmd, cgroup)
    try:
        proc = subprocess.Popen(
            cmd,
            pass_fds=(events, listener.fileno(), control.fileno()),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    finally:
        for fd in (events, log):
            os.close(fd)
        listener.close()  # the zygote holds them now; with the zygote gone, connecting fails at once
        control.close()
    return Zygote(proc, path, state / "zygote.log", cgroup)


def _send_request(conn, cwd, connection_file, extra, key, kernel_env):
    connection = Path(connection_file).read_text()
    sockets = Path(json.loads(connection)["ip"]).parent
    folders = {str(p): os.stat(p).st_ino for p in (cwd, sockets)}  # the child must see these very folders
    message = (
        json.dumps(
            {
                "cwd": str(cwd),
                "connection": connection,
                "argv": list(extra),
                "key": key,
                "env": kernel_env,
                "folders": folders,
            }
        ).encode()
        + b"\n"
    )
    socket.send_fds(conn, [message], [0, 1, 2])


def request(workspace, cwd, connection_file, extra, key, kernel_env) -> int | None:
    """Launcher side: have the workspace's zygote run this kernel and wait until it ends.

    Returns:
    - the exit status for the launcher once the kernel has ended, or None when no zygote could start the
      kernel (none running, dead, stuck, started with another environment, or cwd outside its folder);
      the caller then starts the kernel itself.
    """
    path = socket_path(workspace)
    root = Path(workspace).resolve() / ROOT
    if not path.exists() or not (cwd == root or root in Path(cwd).parents):
        return None
    parent = os.getppid()
    die_with_parent()  # nbgrader killed (time limit): this launcher goes, and the kernel with it
    if os.getppid() != parent:
        sys.exit(1)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(READY_TIMEOUT)
        conn.connect(str(path))
        _send_request(conn, cwd, connection_file, extra, key, kernel_env)
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = conn.recv(256)
            if not chunk:
                return None
            reply += chunk
    except OSError:  # refused (no zygote), timed out (stuck), reset
        conn.close()
        return None
    if reply.strip() != b"ok":
        conn.close()
        return None
    conn.settimeout(None)
    try:
        while conn.recv(256):  # the kernel's end closes the connection
            pass
    except OSError:
        pass
    return 0


def _receive(conn):
    """The child's request: (dict, [stdin, stdout, stderr fds])."""
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while data and not data.endswith(b"\n"):
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    return json.loads(data), fds


def _same_folder(path, inode):
    """True when this sandbox shows the host's folder `path` (same inode), not a stale or missing one."""
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _watch(conn, real_exit):
    """Child thread: end the kernel when its launcher goes away (nbgrader killed or shut it down)."""
    try:
        while conn.recv(256):
            pass
    except OSError:
        pass
    real_exit(0)


def _child(conn, checks, real_exit):
    """Forked child: take the launcher's streams, key and connection file, then become the kernel."""
    from autograder.sandbox import kernel

    try:
        os.setsid()  # the kernel leads a session of its own: what it starts is known by that (procs.Guard)
        kernel.mark_kernel()
        req, fds = _receive(conn)
        differs = sorted(n for n in set(req["env"]) | set(_started_with) if req["env"].get(n) != _started_with.get(n))
        unseen = [p for p, inode in req["folders"].items() if not _same_folder(p, inode)]
        if differs or unseen:  # the launcher starts its own kernel instead
            why = (
                f"the kernel's environment differs in {', '.join(differs)}"
                if differs
                else f"its sandbox does not show {', '.join(unseen)} (made again since it started?)"
            )
            kernel.log_event(f"zygote not used: {why}")
            conn.sendall(b"declined\n")
            return
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(req["cwd"])
        sys.path.insert(0, "")  # as `python -m` in the notebook's folder: check modules may live there
        kernel.arm(checks, req["key"].encode())
        kernel.watch_access()  # here, not in the zygote: its own work between students is no student's doing
        connection_file = f"/tmp/kernel-{os.getpid()}.json"
        fd = os.open(connection_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(req["connection"])
        argv = ["-f", connection_file] + [str(a) for a in req["argv"]]
        del req
        conn.sendall(b"ok\n")
        threading.Thread(target=_watch, args=(conn, real_exit), daemon=True).start()
        from ipykernel import kernelapp

        kernelapp.launch_new_instance(argv=argv)
    except BaseException:  # noqa: BLE001  (whatever happens, this process must not return to the zygote loop)
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        real_exit(0)


def die_with_parent() -> None:
    """Get SIGKILL when the parent process dies (Linux prctl PR_SET_PDEATHSIG; a no-op elsewhere)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _set_dumpable(flag):
    """prctl(PR_SET_DUMPABLE): a process that is not dumpable cannot be ptraced or have its memory read
    (/proc/PID/mem) by the kernels, which run as the same user without capabilities."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, int(flag), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def empty(folder, keep=()) -> None:
    """Remove everything inside folder (the folder itself stays: it may be a mount point), except the
    paths in keep and what leads to them (mount points: their contents are not ours to remove)."""
    for entry in Path(folder).iterdir() if Path(folder).is_dir() else []:
        path = str(entry)
        if path in keep:
            continue
        if any(k.startswith(path + "/") for k in keep):
            empty(entry, keep)
        elif entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            try:
                entry.unlink()
            except OSError:
                pass


def _mount_points():
    """Every mount point this process sees (/proc/self/mountinfo, octal escapes decoded)."""
    points = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4]
        points.add(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), point))
    return points


def _reset(home, guard):
    """Between students: kill every process of the sandbox but init and this one (the kernels and whatever
    they started), then empty /tmp and /dev/shm and make the home again."""
    try:
        os.kill(-1, signal.SIGKILL)  # in this pid namespace: everyone but init (pid 1) and the caller
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        guard.watch()
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]
        if not others:
            break
        time.sleep(0.02)
    else:
        raise RuntimeError(f"processes left after the reset: {others}")
    guard.take()
    mounts = _mount_points()  # the student's folders are mounted below /tmp when OUT is there
    for folder in ("/tmp", "/dev/shm"):
        empty(folder, keep=mounts)
    os.makedirs(home, exist_ok=True)


def _control(conn, guard, home):
    """Answer one request on the control socket: "reset" (next student) or "check" (what the process guard
    stopped since the last check, as a JSON list)."""
    conn.settimeout(CHECK_TIMEOUT)
    try:
        command = conn.recv(64).strip()
    except OSError:
        return
    if command == b"check":
        guard.watch()
        reply = json.dumps(guard.take()).encode() + b"\n"
    else:
        try:
            _reset(home, guard)
            reply = b"clean\n"
        except Exception as exc:  # noqa: BLE001  (the worker then starts a fresh zygote)
            reply = f"failed: {exc}\n".encode()
        print(f"zygote: {time.strftime('%H:%M:%S')} reset: {reply.decode().strip()}", flush=True)
    try:
        conn.sendall(reply)
    except OSError:
        pass


def main() -> None:
    """Sandbox side: set up as a kernel would, import PRELOAD, then fork one kernel per connection."""
    from autograder.sandbox import kernel

    global _started_with
    listener = socket.socket(fileno=int(os.environ.pop(envvars.ZYGOTE_FD)))
    control = socket.socket(fileno=int(os.environ.pop(envvars.ZYGOTE_CONTROL_FD)))
    _started_with = json.loads(os.environ.pop(VARS, "{}"))
    real_exit = os._exit
    checks = kernel.prepare()
    start = time.perf_counter()
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]  # imports must not pick up student files
    os.chdir("/tmp")
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001  (an optional library; the kernel imports it itself if needed)
            print(f"zygote: not preloaded: {name}: {type(exc).__name__}: {exc}", flush=True)
    threads = len(os.listdir("/proc/self/task"))  # besides this one: OpenBLAS pools, which survive a fork
    print(
        f"zygote: {time.strftime('%H:%M:%S')} preloaded in {time.perf_counter() - start:.1f} s; {threads} thread(s)",
        flush=True,
    )
    kernel.load_checks(quiet=True)
    _set_dumpable(False)
    home = os.environ.get("HOME", "/tmp/home")
    guard = procs.Guard(limits()["procs"], log=lambda line: print(f"zygote: {line}", flush=True))
    while True:
        ready, _, _ = select.select([listener, control], [], [], procs.GUARD_INTERVAL)
        guard.watch()
        if control in ready:  # the worker (another student is next) or the grader (a cell has run)
            conn, _ = control.accept()
            with conn:
                _control(conn, guard, home)
            continue
        if listener not in ready:
            continue
        conn, _ = listener.accept()
        pid = os.fork()
        if pid == 0:
            listener.close()
            control.close()
            _set_dumpable(True)
            _child(conn, checks, real_exit)
        guard.kernels.add(pid)
        conn.close()
        print(f"zygote: {time.strftime('%H:%M:%S')} forked kernel {pid}", flush=True)


if __name__ == "__main__":
    main()
