"""The zygote's sandbox side: import the heavy libraries once, then fork one kernel per launcher's request.

A fresh grading kernel spends seconds importing torch, transformers and open_clip before its first cell,
and ipykernel's own start-up imports (its debugger, debugpy) before it answers. The zygote does them once,
in the same bubblewrap sandbox a kernel gets (`autograder.sandbox.zygote.client.start`), and serves its two
sockets (`autograder.sandbox.zygote.protocol`) while it imports: in a thread, stage by stage
(`autograder.sandbox.zygote.preload`), so a kernel for a light notebook is forked as soon as that notebook's
libraries are in, between two imports. For each kernel it forks; the child takes the launcher's
stdin/stdout/stderr, its own per-notebook check key and the connection file, then runs ipykernel. The
launcher stays as the kernel's stand-in for nbgrader: it exits when the kernel does, and the kernel exits
when the launcher is killed.

What stays as it was without a zygote:
- every kernel starts from the same pristine state (the fork happens before any student code), under
  the sandbox, limits, sealed checks, output cap, exit guard and audit hook of `autograder.sandbox.kernel`;
- the zygote never holds a key: each child gets its own over the request, after the fork;
- the listening sockets are in a host folder the sandbox does not show, so notebook code can neither ask
  for kernels nor stand in for the zygote.
A zygote that is missing, dead, stuck or started with another environment costs nothing but time: the
launcher then starts the kernel in a sandbox of its own, as before.
"""

import importlib
import inspect
import json
import os
import select
import signal
import socket
import sys
import threading
import time

from autograder import envvars
from autograder.sandbox import linux, procs
from autograder.sandbox.limits import limits
from autograder.sandbox.zygote import preload, protocol

WAITING_POLL = 0.005  # seconds between two looks at the imports while a kernel waits for its notebook's libraries

_started_with = {}  # the kernel variables the zygote started with (A3_ZYGOTE_VARS)


def _say(line):
    """A line in the zygote's log (its stdout), which `client.Zygote.report` reads."""
    print(f"zygote: {time.strftime('%H:%M:%S')} {line}", flush=True)


def _same_folder(path, inode):
    """True when this sandbox shows the host's folder `path` (same inode), not a stale or missing one."""
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _declined_because(req):
    """Why this zygote cannot run the request's kernel ('' when it can)."""
    differs = sorted(n for n in set(req.env) | set(_started_with) if req.env.get(n) != _started_with.get(n))
    if differs:
        return f"the kernel's environment differs in {', '.join(differs)}"
    unseen = [p for p, inode in req.folders.items() if not _same_folder(p, inode)]
    if unseen:
        return f"its sandbox does not show {', '.join(unseen)} (made again since it started?)"
    return ""


def _watch(conn, real_exit):
    """Child thread: end the kernel when its launcher goes away (nbgrader killed or shut it down)."""
    protocol.wait_closed(conn)
    real_exit(0)


def _child(conn, checks, real_exit):
    """Forked child: take the launcher's streams, key and connection file, then become the kernel."""
    from autograder.sandbox import kernel

    try:
        os.setsid()  # the kernel leads a session of its own: what it starts is known by that (procs.Guard)
        kernel.mark_kernel()
        conn.sendall(protocol.READY + b"\n")  # only now does the launcher send the request, with the key
        req, fds = protocol.receive_request(conn)
        why = _declined_because(req)
        if why:  # the launcher starts its own kernel instead
            kernel.log_event(f"zygote not used: {why}")
            conn.sendall(protocol.DECLINED + b"\n")
            return
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(req.cwd)
        sys.path.insert(0, "")  # as `python -m` in the notebook's folder: check modules may live there
        kernel.arm(checks, req.key.encode())
        kernel.watch_access()  # here, not in the zygote: its own work between students is no student's doing
        connection_file = f"/tmp/kernel-{os.getpid()}.json"
        fd = os.open(connection_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(req.connection)
        argv = ["-f", connection_file] + [str(a) for a in req.argv]
        del req
        conn.sendall(protocol.OK + b"\n")
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
    mounts = linux.mount_points()  # the student's folders are mounted below /tmp when OUT is there
    for folder in ("/tmp", "/dev/shm"):
        linux.empty(folder, keep=mounts)
    os.makedirs(home, exist_ok=True)


def _control(conn, guard, home, before_reset):
    """Answer one command on the control socket: RESET (next student; `before_reset()` runs first) or CHECK (what
    the process guard stopped since the last check, as a JSON list)."""
    conn.settimeout(protocol.CHECK_TIMEOUT)
    try:
        command = protocol.read_line(conn)
    except (OSError, ValueError):
        return
    if command == protocol.CHECK:
        guard.watch()
        reply = json.dumps(guard.take()).encode()
    elif command == protocol.RESET:
        try:
            before_reset()
            _reset(home, guard)
            reply = protocol.CLEAN
        except Exception as exc:  # noqa: BLE001  (the worker then starts a fresh zygote)
            reply = f"failed: {exc}".encode()
        _say(f"reset: {reply.decode()}")
    else:
        reply = f"failed: unknown command {command[:40]!r}".encode()
    try:
        conn.sendall(reply + b"\n")
    except OSError:
        pass


class Preload(threading.Thread):
    """Imports `preload.stages`, one module at a time: the first stage in the caller's thread (`first_stage`), the others
    in the background; the main thread forks a kernel only between two imports (`pause`), so no kernel starts with a
    module half imported. A module that fails is skipped: a kernel imports it itself if it needs it."""

    def __init__(self, stages: list[tuple[str | None, tuple[str, ...]]]):
        super().__init__(name="preload", daemon=True)
        self.stages = stages
        self.done = 0  # stages imported
        self._turn = threading.Condition()
        self._importing = False
        self._paused = False
        self._start = time.perf_counter()

    def first_stage(self) -> None:
        """Import the first stage here, before the zygote serves. No kernel can be forked before it is in, and its
        libraries start processes while they are imported (matplotlib's fc-list, ipykernel's uname): nothing else of
        the zygote runs meanwhile, so its process guard neither reaps nor kills them."""
        self._stage(0)

    def run(self) -> None:
        try:
            for i in range(self.done, len(self.stages)):
                self._stage(i)
            self._step(_warm_tracebacks)
            threads = len(os.listdir("/proc/self/task"))
            self._step(_say, f"preloaded in {time.perf_counter() - self._start:.1f} s; {threads} thread(s)")
        finally:  # even a library that exits when imported leaves no kernel waiting: it imports what it lacks itself
            with self._turn:
                self.done = len(self.stages)

    def _stage(self, i: int) -> None:
        """Import stage i and count it as in."""
        for name in self.stages[i][1]:
            self._step(_import, name)
        if i == 0:  # every kernel's tracebacks: those forked before the end map only the modules in by then
            self._step(_warm_tracebacks)
        with self._turn:
            self.done = i + 1

    def _step(self, fn, *args) -> None:
        """Run fn(*args) once the main thread is not forking (what this thread prints is printed here too: a fork
        must not find it holding a stream's lock)."""
        with self._turn:
            self._turn.wait_for(lambda: not self._paused)
            self._importing = True
        try:
            fn(*args)
        finally:
            with self._turn:
                self._importing = False
                self._turn.notify_all()

    def pause(self) -> bool:
        """Hold the next import back; True when none is under way (a fork may happen now, until `resume`)."""
        with self._turn:
            self._paused = True
            return not self._importing

    def resume(self) -> None:
        """Let the imports go on."""
        with self._turn:
            self._paused = False
            self._turn.notify_all()

    def finish(self) -> None:
        """Wait until every stage is in."""
        self.resume()
        self.join()


def _import(name):
    """Import one module (a failure is logged: the kernel imports it itself if it needs it)."""
    try:
        importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001  (an optional library)
        print(f"zygote: not preloaded: {name}: {type(exc).__name__}: {exc}", flush=True)


def _warm_tracebacks():
    """Do once here (after the shared stage, and again after the last) what each kernel's first traceback did: import
    what IPython formats it with (stack_data, pygments' formatters) and fill `inspect`'s map from module files to
    modules. Filling it took a realpath of every loaded module's file, about 0.1 s a kernel; every kernel forked after
    this inherits the map. Only caches are filled: a traceback reads as it did.

    Python 3.11's `inspect.getmodule` stops its pass over `sys.modules` with a TypeError at each namespace package
    (no file) it has not seen: so it is asked until a pass completes.
    """
    from IPython.core import ultratb

    try:
        try:
            raise AssertionError("the zygote's warm-up")
        except AssertionError:
            ultratb.AutoFormattedTB(mode="Context").structured_traceback(*sys.exc_info())
        nowhere = compile("0", "<no module's file>", "eval")  # never found in the map: every call makes a full pass
        for _ in range(len(sys.modules)):
            try:
                inspect.getmodule(nowhere)
                return
            except TypeError:
                continue
    except Exception as exc:  # noqa: BLE001  (a head start only: each kernel's first traceback does it otherwise)
        print(f"zygote: tracebacks not warmed: {type(exc).__name__}: {exc}", flush=True)


def _notebook_asked(conn) -> str | None:
    """The notebook a launcher's request is for, from its first line ('' for any; None when there is no such line)."""
    conn.settimeout(1)  # the launcher sends it as soon as it connects
    try:
        return protocol.notebook_of(protocol.read_line(conn))
    except (OSError, ValueError):
        return None
    finally:
        conn.settimeout(None)  # the kernel's end of the connection waits as long as the kernel runs


def main() -> None:
    """Set up as a kernel would, start importing the libraries, then serve: fork a kernel for each launcher's request
    once its notebook's libraries are in, and answer each control command."""
    from autograder.sandbox import kernel

    global _started_with
    launch = socket.socket(fileno=int(os.environ.pop(envvars.ZYGOTE_FD)))
    control = socket.socket(fileno=int(os.environ.pop(envvars.ZYGOTE_CONTROL_FD)))
    _started_with = json.loads(os.environ.pop(envvars.ZYGOTE_VARS, "{}"))
    real_exit = os._exit
    checks = kernel.prepare()
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]  # imports must not pick up student files
    os.chdir("/tmp")
    linux.set_dumpable(False)
    imports = Preload(preload.stages(kernel.check_modules()))
    imports.first_stage()
    imports.start()
    home = os.environ.get("HOME", "/tmp/home")
    guard = procs.Guard(limits()["procs"], log=lambda line: print(f"zygote: {line}", flush=True))
    waiting = []  # [(connection, notebook)]: kernels asked for whose notebooks' libraries are not all in yet

    def before_reset():  # the next student's kernels find every library in; nobody waits on the last one's requests
        imports.finish()
        for conn, _ in waiting:
            conn.close()
        waiting.clear()

    while True:
        ready, _, _ = select.select([launch, control], [], [], WAITING_POLL if waiting else procs.GUARD_INTERVAL)
        guard.watch()
        if control in ready:  # the worker (another student is next) or the grader (a cell has run)
            conn, _ = control.accept()
            with conn:
                _control(conn, guard, home, before_reset)
        if launch in ready:
            conn, _ = launch.accept()
            notebook = _notebook_asked(conn)
            if notebook is None:
                conn.close()
            else:
                waiting.append((conn, notebook))
        due = [(conn, nb) for conn, nb in waiting if imports.done >= preload.needed(nb)]
        if not due or not imports.pause():  # an import under way: fork after it
            continue
        try:
            for conn, notebook in due:
                waiting.remove((conn, notebook))
                pid = os.fork()
                if pid == 0:
                    launch.close()
                    control.close()
                    linux.set_dumpable(True)
                    _child(conn, checks, real_exit)
                guard.kernels.add(pid)
                conn.close()
                _say(f"forked kernel {pid} for {notebook or 'any notebook'}")
        finally:
            imports.resume()
