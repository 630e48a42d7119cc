"""Grading kernel: limits, the check runtime imported first, then ipykernel.

Run as `python -m autograder.sandbox.kernel -f CONNECTION_FILE` (the sandbox launcher does this). Before any
student code exists in the process it
- applies resource limits (data segment, CPU time, file size, processes where RLIMIT_NPROC can bound them, no
  core dumps);
- imports `autograder.checks` (which snapshots the pristine torch/numpy/builtins functions) and the
  course's check modules (A3_CHECK_MODULES), then seals the runtime (checks defined later print no pass
  token), and only then gives it the pass-token key read from the pipe named by A3_KEY_FD;
- caps the output each cell may send (a runaway print cannot flood the grader);
- turns os._exit/os.abort from notebook code into SystemExit, so an accidental exit does not end grading;
- installs an audit hook that logs attempts to open hidden paths or the network to A3_EVENTS_FD and
  refuses os.environ writes of A3_ALLOW_NON_NOTEBOOK / A3_CHECK_KEY.
"""

import ipaddress
import os
import resource
import signal
import sys
import types

from autograder import contract, envvars
from autograder.sandbox import procs
from autograder.sandbox.limits import limits


class ResourceLimitExceeded(BaseException):
    """Raised in student code when the kernel's CPU budget runs out (BaseException: `except Exception` misses it)."""


_events_fd = None
_logged = set()
_kernel_pid = None  # the kernel's own pid, for guard_exit


def log_event(message) -> None:
    """Write one line to the grader's event log (once per distinct message)."""
    if _events_fd is None or message in _logged:
        return
    _logged.add(message)
    try:
        os.write(_events_fd, f"{message}\n".encode(errors="replace"))
    except OSError:
        pass


def apply_limits(lim) -> None:
    """Set rlimits for this process and its children from a `sandbox.limits()` dict."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if lim["mem_mb"] > 0:
        cap = lim["mem_mb"] * 2**20
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
    if lim["fsize_mb"] > 0:
        cap = lim["fsize_mb"] * 2**20
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))
    if lim["cpu_s"] > 0:
        cpu = lim["cpu_s"]

        def out_of_cpu(signum, frame):
            log_event(f"CPU time limit of {cpu} s reached")
            raise ResourceLimitExceeded(f"the notebook used up its CPU time limit of {cpu} s")

        signal.signal(signal.SIGXCPU, out_of_cpu)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 30))
    if lim["procs"] > 0 and procs.rlimit_applies():  # a backstop to the zygote's guard (autograder.sandbox.procs)
        cap = procs.hard_bound(lim["procs"])
        resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))


def cap_output(max_chars) -> None:
    """Truncate stream output beyond max_chars per cell and drop oversized rich outputs (kernel side)."""
    from jupyter_client.session import Session

    original = Session.serialize
    spent = {}

    def notice(what):
        return f"\n[output truncated by the grader: {what} over the limit of {max_chars} characters]\n"

    def serialize(self, msg, ident=None):
        kind = msg.get("header", {}).get("msg_type")
        content = msg.get("content")
        if kind in ("stream", "display_data", "execute_result", "update_display_data", "error") and content:
            parent = msg.get("parent_header", {}).get("msg_id", "")
            used = spent.get(parent, 0)
            if kind == "stream":
                text = content.get("text", "")
                if used + len(text) > max_chars:
                    keep = max(0, max_chars - used)
                    tail = notice("this cell's printed output is") if used <= max_chars else ""
                    content = dict(content, text=text[:keep] + tail)
                    log_event(f"output of a cell truncated at {max_chars} characters")
                spent[parent] = used + len(text)
            elif kind == "error":
                tb = content.get("traceback", [])
                if sum(len(line) for line in tb) > max_chars:
                    content = dict(content, traceback=[line[:2000] for line in tb[:20]] + [notice("traceback")])
            else:
                data = content.get("data", {})
                size = sum(len(v) if isinstance(v, str) else len(str(v)) for v in data.values())
                if size > 25 * max_chars:
                    content = dict(
                        content, data={"text/plain": notice(f"a {size // 1000} kB display output")}, metadata={}
                    )
                    log_event(f"display output of {size} characters removed")
            msg = dict(msg, content=content)
        return original(self, msg, ident)

    Session.serialize = serialize


def guard_exit() -> None:
    """os._exit / os.abort called from notebook code raise SystemExit instead of killing the kernel; a process
    the notebook forked exits as asked (else it would live on as a second, broken copy of the kernel)."""
    real_exit, real_abort = os._exit, os.abort

    def from_notebook():
        if os.getpid() != _kernel_pid:
            return False
        name = sys._getframe(2).f_code.co_filename
        return name.startswith("<") or "ipykernel_" in name

    def _exit(status=0):
        if from_notebook():
            log_event("notebook code called os._exit: refused")
            raise SystemExit(f"os._exit({status}) is not allowed while grading")
        real_exit(status)

    def abort():
        if from_notebook():
            log_event("notebook code called os.abort: refused")
            raise SystemExit("os.abort() is not allowed while grading")
        real_abort()

    os._exit, os.abort = _exit, abort
    mark_kernel()


def mark_kernel() -> None:
    """This process is the kernel (a zygote's child says so after the fork): its forks are not."""
    global _kernel_pid
    _kernel_pid = os.getpid()


def _is_address(host):
    """True for 'localhost' and numeric IP addresses (looking those up needs no network)."""
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return host == "localhost"


def watch_access() -> None:
    """Audit hook: log attempts to reach paths hidden by the sandbox or the network; refuse to set the
    check runtime's escape hatch (A3_ALLOW_NON_NOTEBOOK) or key from notebook code."""
    protect = [p for p in envvars.get(envvars.SANDBOX_PROTECT).split(os.pathsep) if p]
    visible = [p for p in envvars.get(envvars.SANDBOX_VISIBLE).split(os.pathsep) if p]

    def under(path, roots):
        return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)

    def hook(event, args):  # the names are literals: notebook code could rebind envvars' attributes
        if event == "os.putenv" and os.fsdecode(args[0]) in ("A3_ALLOW_NON_NOTEBOOK", "A3_CHECK_KEY"):
            log_event(f"blocked: notebook code tried to set {os.fsdecode(args[0])}")
            raise PermissionError(f"{os.fsdecode(args[0])} cannot be set while grading")
        if event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
            try:
                path = os.path.abspath(os.fsdecode(args[0]))
            except (TypeError, ValueError):
                return
            if under(path, protect) and not under(path, visible):
                log_event(f"blocked: tried to read {path} (outside the sandbox)")
        elif event in ("socket.connect", "socket.sendto") and len(args) > 1:
            log_event(f"blocked: tried to open a network connection to {args[1]!r} (no network in the sandbox)")
        elif event == "socket.getaddrinfo" and args and isinstance(args[0], str) and not _is_address(args[0]):
            log_event(f"blocked: tried to look up host {args[0]!r} (no network in the sandbox)")

    sys.addaudithook(hook)


def read_key() -> bytes:
    """The pass-token key (bytes) from the inherited pipe named by A3_KEY_FD (b"" without one)."""
    fd = os.environ.pop(envvars.KEY_FD, None)
    if fd is None:
        return b""
    chunks = []
    while chunk := os.read(int(fd), 4096):
        chunks.append(chunk)
    os.close(int(fd))
    return b"".join(chunks)


def check_modules() -> list[str]:
    """Modules holding the course's checks (A3_CHECK_MODULES, comma-separated; default: autograder.checks.<nb>)."""

    names = os.environ.get(envvars.CHECK_MODULES) or ",".join(f"autograder.checks.{nb}" for nb in contract.NOTEBOOKS)
    return [n.strip() for n in names.split(",") if n.strip()]


def load_checks(quiet=False) -> None:
    """Import every check module (see check_modules); a failure is logged unless quiet (the zygote tries
    them early; its kernels try again in their own folder)."""
    import importlib

    for name in check_modules():
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001  (its hidden tests will then fail visibly)
            if not quiet:
                log_event(f"check module {name} could not be imported before the notebook: {type(exc).__name__}: {exc}")


def prepare() -> types.ModuleType:
    """What a grading process sets up before any student code exists in it, except the check modules, the
    key and the audit hook: event log, limits, the check runtime, tqdm's text progress bar, output cap, exit guard.

    Returns:
    - the `autograder.checks` module
    """
    global _events_fd
    fd = os.environ.pop(envvars.EVENTS_FD, None)
    if fd is not None:
        _events_fd = int(fd)
        os.set_inheritable(_events_fd, False)
    lim = limits()
    apply_limits(lim)
    import autograder.checks as checks  # snapshots the pristine functions

    # tqdm.auto picks its progress bar when first imported: a widget once ipykernel is imported (a feedback page shows
    # it as nothing), else text. Imported here, before ipykernel, it gives every grading kernel text bars.
    try:
        import tqdm.auto  # noqa: F401
    except ImportError:  # the notebooks do without tqdm
        pass

    os.environ.pop(envvars.CHECK_KEY, None)
    cap_output(lim["output_chars"])
    guard_exit()
    return checks


def arm(checks, key) -> None:
    """Import the check modules, seal the runtime (checks defined later print no token), then give it the key."""
    load_checks()
    checks.seal()
    if key:
        checks.set_key(key)


def main(argv=None) -> None:
    """Limits, sealed checks, key, output cap, exit guard and audit hook; then run ipykernel with argv."""
    argv = sys.argv[1:] if argv is None else argv
    checks = prepare()
    arm(checks, read_key())
    watch_access()
    from ipykernel import kernelapp

    kernelapp.launch_new_instance(argv=argv)


if __name__ == "__main__":
    main()
