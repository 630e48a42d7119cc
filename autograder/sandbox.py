"""The grading sandbox: a Jupyter kernelspec that runs student code inside bubblewrap.

`install_kernel(workspace, env)` writes a private kernelspec for one student's workspace and returns
what the nbgrader subprocess needs (kernel name, extra environment, traitlets config). The kernelspec's
argv runs this module's launcher (`python -m autograder.sandbox launch ...`) on the host, which wraps
`python -m autograder.kernel -f {connection_file}` in `bwrap`:

- no network (`--unshare-net`), own pid/ipc/uts namespaces, no capabilities, a new session;
- read-only: the system (`/usr`, a few `/etc` files), the Python environment, and a sourceless
  (bytecode-only) copy of the `autograder` package at /opt/a3 (so the checks run but their source,
  and the reference implementations' source, cannot be printed into feedback);
- writable: only the folder the notebook executes in and the kernel's runtime folder (ipc sockets);
- never visible: the repository (`source/`, `release/`), the gradebook and the rest of the workspace,
  other students' workspaces and the instructor's home.

The pass-token key travels from the kernelspec to the kernel through a pipe, never through the
sandbox's environment or command line, so `/proc/self/environ` does not show it. Resource limits,
the output cap and the event log (attempts to reach hidden files or the network) live in
`autograder.kernel`. Per-cell and per-notebook wall-clock limits are the caller's (Execute.timeout, and
killing the nbgrader subprocess).
"""
import argparse
import functools
import hashlib
import json
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder import paths

KERNEL_NAME = "python3"  # shadows the stock kernel in this workspace, so no kernel escapes the sandbox
PACKAGE_MOUNT = "/opt/a3"  # where the bytecode copy of `autograder` appears inside the sandbox
SANDBOX_HOME = "/tmp/home"
EVENTS_FILE = "sandbox-events.log"
FORWARDED_ENV = (
    "NBGRADER_EXECUTION", "TOKENIZERS_PARALLELISM", "MPLBACKEND", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS", "CUDA_VISIBLE_DEVICES", "LANG", "LC_ALL", "TZ", "PYTHONHASHSEED",
    "A3_MEM_LIMIT_MB", "A3_CPU_LIMIT_S", "A3_FSIZE_LIMIT_MB", "A3_OUTPUT_LIMIT_CHARS", "A3_CHECK_MODULES",
)
NEVER_ENV = ("A3_CHECK_KEY", "A3_ALLOW_NON_NOTEBOOK", "A3_RUN_ID")  # the key goes by pipe; the others never
FORCED_ENV = {"A3_QUICK": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
SYSTEM_RO = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/sys")
ETC_RO = (
    "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/ld.so.cache", "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/etc/localtime", "/etc/ssl", "/etc/ca-certificates", "/etc/alternatives",
    "/etc/fonts", "/etc/mime.types",
)


def limits():
    """Resource limits for grading, overridable through the environment of the grading process.

    Returns:
    - dict with mem_mb (data segment cap of the kernel), cpu_s (CPU seconds of the kernel),
      fsize_mb (largest file the kernel may write), output_chars (stream output kept per cell).
    """
    env = os.environ
    return {
        "mem_mb": int(env.get("A3_MEM_LIMIT_MB", 6144)),
        "cpu_s": int(env.get("A3_CPU_LIMIT_S", 1200)),
        "fsize_mb": int(env.get("A3_FSIZE_LIMIT_MB", 512)),
        "output_chars": int(env.get("A3_OUTPUT_LIMIT_CHARS", 200_000)),
    }


@functools.lru_cache(maxsize=None)
def available():
    """True when bubblewrap is installed and can build the namespaces the sandbox uses here."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return False
    cmd = [bwrap, "--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL",
           "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "true"]
    try:
        return subprocess.run(cmd, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def build_package_copy(dest):
    """Write a bytecode-only copy of the `autograder` package to dest/autograder (data files copied as is)."""
    src_root = paths.ROOT / "autograder"
    target = Path(dest) / "autograder"
    if target.exists():
        shutil.rmtree(target)
    for src in sorted(src_root.rglob("*")):
        rel = src.relative_to(src_root)
        if "__pycache__" in rel.parts or not src.is_file() or src.suffix == ".pyc":
            continue
        out = target / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix == ".py":
            shown = f"{PACKAGE_MOUNT}/autograder/{rel.as_posix()}"
            py_compile.compile(str(src), cfile=str(out.with_suffix(".pyc")), dfile=shown, doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        else:
            shutil.copy2(src, out)
    return target


def install_kernel(workspace, env, sandbox=None):
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
    kernel_dir = state / "kernels" / KERNEL_NAME
    kernel_dir.mkdir(parents=True, exist_ok=True)
    passed = sorted(k for k in env if k not in NEVER_ENV)
    argv = [sys.executable, "-m", "autograder.sandbox", "launch", "--workspace", str(workspace),
            "--pass-env", ",".join(passed), "--bwrap" if sandboxed else "--no-bwrap", "-f", "{connection_file}"]
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
        "Autograde": {"autograde_preprocessors": list(AUTOGRADE_PREPROCESSORS)},
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


def prepare_workspace(workspace):
    """Create the workspace's sandbox state once: the bytecode package copy and the kernels' runtime folder.

    Both stay in place for the student's whole run: a running zygote (autograder.zygote) has them mounted,
    and a mount of a folder that is deleted and made again would show the old, empty one.

    Returns:
    - (state folder Path, runtime folder Path)
    """
    workspace = Path(workspace).resolve()
    state = workspace / ".sandbox"
    state.mkdir(parents=True, exist_ok=True)
    if not (state / "lib" / "autograder" / "kernel.pyc").exists():
        build_package_copy(state / "lib")
    runtime = runtime_dir(workspace)
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    runtime.chmod(0o700)
    return state, runtime


def runtime_dir(workspace):
    """Short folder in the temp dir for the kernel's ipc sockets (unix socket paths must stay under 108 bytes)."""
    digest = hashlib.sha256(str(Path(workspace).resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"a3k-{digest}"


AUTOGRADE_PREPROCESSORS = [  # nbgrader 0.9.6's list, with Execute replaced by the resilient one below
    "autograder.sandbox.ResilientExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]


@functools.lru_cache(maxsize=None)
def _resilient_execute():
    """Build ResilientExecute (nbgrader is imported only here: the kernel launcher never needs it)."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbformat.notebooknode import NotebookNode
    from nbgrader.preprocessors import Execute

    def error(ename, evalue):
        return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])

    class ResilientExecute(Execute):
        """nbgrader's Execute that survives a dying kernel and caps each cell's stream output.

        When the kernel dies (os._exit, a segfault, the memory or CPU limit), the cell gets an error
        output, later cells are not run and get one too, and grading goes on with what ran: the
        notebook is graded as far as it got instead of not at all. A cell whose output never stops
        arriving (iopub timeout) gets an error output too instead of ending the whole run.
        """

        def preprocess(self, nb, resources=None, km=None):
            self._a3_dead = None
            self._a3_chars = {}
            nb, resources = super().preprocess(nb, resources, km)
            nb.metadata["a3_run"] = os.environ.get("A3_RUN_ID", "")  # the worker's proof that this run finished it
            return nb, resources

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type != "code":
                return cell, self.resources
            if self._a3_dead is not None:
                cell.outputs = [error("KernelDied", f"not run: the kernel died in an earlier cell ({self._a3_dead})")]
                return cell, self.resources
            try:
                return super().preprocess_cell(cell, resources, index)
            except CellTimeoutError:
                cell.outputs.append(error("CellTimeoutError", "the cell's output did not stop arriving in time"))
                return cell, self.resources
            except DeadKernelError as e:
                self._a3_dead = f"cell {index}"
                why = "os._exit, a crash such as a segfault, or the memory/CPU limit"
                cell.outputs.append(error("KernelDied", f"the kernel died while running this cell ({why})"))
                self.log.error("kernel died in cell %s: %s", index, e)
                return cell, self.resources

        def output(self, outs, msg, display_id, cell_index):
            if msg["msg_type"] == "stream":
                cap = limits()["output_chars"]
                used = self._a3_chars.get(cell_index, 0)
                self._a3_chars[cell_index] = used + len(msg["content"].get("text", ""))
                if used > cap:
                    return None
                if self._a3_chars[cell_index] > cap:
                    msg = dict(msg, content=dict(msg["content"], text=msg["content"].get("text", "")[: cap - used]
                                                 + f"\n[output truncated by the grader at {cap} characters]\n"))
            return super().output(outs, msg, display_id, cell_index)

    return ResilientExecute


def __getattr__(name):
    if name == "ResilientExecute":  # nbgrader imports it by name from the config
        return _resilient_execute()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def uninstall_kernel(workspace):
    """Remove the runtime folder of this workspace (the kernelspec goes with the workspace)."""
    shutil.rmtree(runtime_dir(workspace), ignore_errors=True)


def read_events(workspace, clear=True):
    """Lines the sandboxed kernels of this workspace logged (blocked reads, network, limits), oldest first.

    With clear=True the log is emptied, so calling this after each notebook attributes lines to it.
    """
    path = Path(workspace) / ".sandbox" / EVENTS_FILE
    if not path.exists():
        return []
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    if clear:
        path.write_text("")
    return lines


def _inside(path, root):
    """True when path is root or lies below it (both resolved)."""
    path, root = Path(path).resolve(), Path(root).resolve()
    return path == root or root in path.parents


def _ro(path):
    """bwrap arguments that show `path` read-only at the same place (symlinks kept as symlinks)."""
    if os.path.islink(path):
        return ["--symlink", os.readlink(path), path]
    return ["--ro-bind-try", path, path]


def kernel_variables(source, pass_names):
    """The variables a grading kernel gets from the environment `source` (the nbgrader process's, with its
    kernelspec's merged in): the FORWARDED_ENV ones and `pass_names`, never the NEVER_ENV ones."""
    names = (set(FORWARDED_ENV) | set(pass_names)) - set(NEVER_ENV)
    return {n: source[n] for n in names if n in source}


def kernel_environment(workspace, visible, kernel_env, fds_env):
    """The whole environment of a sandboxed kernel (or zygote) whose writable folders are `visible`."""
    python_roots = sorted({os.path.realpath(p) for p in
                           (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)})
    env = dict(kernel_env)
    env.update(FORCED_ENV)
    env.update(fds_env)
    env.update({
        "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": SANDBOX_HOME,
        "MPLCONFIGDIR": f"{SANDBOX_HOME}/.matplotlib",
        "PYTHONPATH": PACKAGE_MOUNT,
        "A3_SANDBOX": "1",
        "A3_SANDBOX_PROTECT": os.pathsep.join([str(paths.ROOT), str(Path(workspace).parent), os.path.expanduser("~")]),
        "A3_SANDBOX_VISIBLE": os.pathsep.join(python_roots + [sys.prefix] + [str(v) for v in visible]),
        "JPY_PARENT_PID": "1",  # our parent is the namespace's init: no parent poller (it would exit at once)
    })
    for name, (_, inside) in _model_caches():
        env[name] = inside
    return env


def _model_caches():
    """[(variable, (host folder, path inside the sandbox))] for the model caches shown read-only."""
    found = []
    for name, host in (("HF_HOME", os.environ.get("HF_HOME") or os.path.expanduser("~/.cache/huggingface")),
                       ("TORCH_HOME", os.environ.get("TORCH_HOME") or os.path.expanduser("~/.cache/torch"))):
        if os.path.isdir(host):  # cached pretrained weights, read-only (online model source)
            found.append((name, (host, f"/opt/a3-cache/{name.lower()}")))
    for name in ("A3_MODEL_CACHE", "HF_HUB_CACHE"):  # a model cache elsewhere: same path inside, read-only
        host = os.environ.get(name)
        if host and os.path.isdir(host):
            host = os.path.realpath(host)
            found.append((name, (host, host)))
    return found


def bwrap_command(workspace, cwd, connection_file, sockets, env, module="autograder.kernel"):
    """The bwrap command line that runs `python -m module` with environment `env` in cwd (writable, with
    the sockets folder); connection_file (None for a zygote) is shown read-only."""
    python_roots = sorted({os.path.realpath(p) for p in
                           (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)})
    cmd = ["bwrap", "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid", "--unshare-ipc",
           "--unshare-uts", "--unshare-cgroup-try", "--hostname", "a3-sandbox", "--cap-drop", "ALL", "--clearenv"]
    for p in SYSTEM_RO + ETC_RO:
        if os.path.lexists(p):
            cmd += _ro(p)
    cmd += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
    for dev in sorted(Path("/dev").glob("nvidia*")):
        cmd += ["--dev-bind-try", str(dev), str(dev)]
    for p in python_roots + [sys.prefix]:
        cmd += ["--ro-bind", p, p]
    cmd += ["--ro-bind", str(Path(workspace) / ".sandbox" / "lib"), PACKAGE_MOUNT]
    for _, (host, inside) in _model_caches():
        cmd += ["--ro-bind", host, inside]
    cmd += ["--bind", str(cwd), str(cwd), "--chdir", str(cwd), "--bind", str(sockets), str(sockets)]
    if connection_file is not None:
        cmd += ["--ro-bind", str(connection_file), str(connection_file)]
    for k, v in sorted(env.items()):
        cmd += ["--setenv", k, v]
    cmd += ["--", sys.executable, "-m", module]
    return cmd


def launch(argv=None):
    """Kernelspec entry point (runs on the host): hand the key over by pipe and exec the kernel."""
    parser = argparse.ArgumentParser(prog="python -m autograder.sandbox launch")
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--pass-env", default="")
    parser.add_argument("--bwrap", dest="bwrap", action="store_true", default=True)
    parser.add_argument("--no-bwrap", dest="bwrap", action="store_false")
    parser.add_argument("-f", dest="connection_file", required=True)
    args, extra = parser.parse_known_args(argv)  # extra: kernel options such as --HistoryManager.hist_file
    workspace = args.workspace.resolve()
    cwd = Path.cwd().resolve()
    if not _inside(cwd, workspace) or cwd == workspace:
        sys.exit(f"autograder.sandbox: refusing to run a kernel in {cwd}: it is not below {workspace}")
    connection_file = Path(args.connection_file).resolve()
    ip = json.loads(connection_file.read_text()).get("ip", "")
    if not os.path.isabs(ip):
        sys.exit("autograder.sandbox: set KernelManager.transport='ipc' and an absolute KernelManager.ip "
                 f"(install_kernel's config does), got ip={ip!r}")
    sockets = Path(ip).parent
    key = os.environ.pop("A3_CHECK_KEY", "")
    kernel_env = kernel_variables(os.environ, [n for n in args.pass_env.split(",") if n])
    kernel_args = ["-f", str(connection_file)] + extra
    if args.bwrap:
        from autograder import zygote

        code = zygote.request(workspace, cwd, connection_file, extra, key, kernel_env)
        if code is not None:  # the student's zygote ran this kernel
            sys.exit(code)
    r, w = os.pipe()
    os.write(w, key.encode())
    os.close(w)
    os.set_inheritable(r, True)
    events_path = workspace / ".sandbox" / EVENTS_FILE
    events = os.open(events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.set_inheritable(events, True)
    fds = {"A3_KEY_FD": str(r), "A3_EVENTS_FD": str(events)}
    if args.bwrap:
        env = kernel_environment(workspace, [cwd, sockets], kernel_env, fds)
        os.execvp("bwrap", bwrap_command(workspace, cwd, connection_file, sockets, env) + kernel_args)
    env = {k: v for k, v in os.environ.items() if k not in NEVER_ENV}
    env.update(FORCED_ENV)
    env.update(fds)
    env["PYTHONPATH"] = str(workspace / ".sandbox" / "lib")
    os.execve(sys.executable, [sys.executable, "-m", "autograder.kernel"] + kernel_args, env)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "launch":
        launch(sys.argv[2:])
    else:
        sys.exit("usage: python -m autograder.sandbox launch --workspace W -f CONNECTION_FILE")
