"""The bubblewrap sandbox of a grading kernel or zygote: what it shows, what it hides, its environment.

A sandboxed process sees, read-only, the system (`/usr`, a few `/etc` files), the Python environment and a
sourceless (bytecode-only) copy of the `autograder` package at /opt/a3 (so the checks run but their source,
and the reference implementations' source, cannot be printed into feedback); writable, only the folder
the notebook executes in and the kernel's runtime folder (ipc sockets). It never sees the repository
(`source/`, `release/`), the gradebook and the rest of the workspace, other students' workspaces or the
instructor's home. It has no network (`--unshare-net`), its own pid/ipc/uts namespaces, no capabilities
and a new session.
"""

import functools
import hashlib
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder import envvars, paths

PACKAGE_MOUNT = "/opt/a3"  # where the bytecode copy of `autograder` appears inside the sandbox
SANDBOX_HOME = "/tmp/home"
STATE = ".sandbox"  # the workspace's sandbox state: the bytecode package, kernelspecs, event and zygote logs
EVENTS_FILE = "sandbox-events.log"
FORWARDED_ENV = (
    "NBGRADER_EXECUTION",
    "TOKENIZERS_PARALLELISM",
    "MPLBACKEND",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "CUDA_VISIBLE_DEVICES",
    "LANG",
    "LC_ALL",
    "TZ",
    "PYTHONHASHSEED",
    envvars.MEM_LIMIT_MB,
    envvars.CPU_LIMIT_S,
    envvars.FSIZE_LIMIT_MB,
    envvars.OUTPUT_LIMIT_CHARS,
    envvars.PROC_LIMIT,
    envvars.CHECK_MODULES,
)
NEVER_ENV = (envvars.CHECK_KEY, envvars.ALLOW_NON_NOTEBOOK, envvars.RUN_ID)  # the key goes by pipe; the others never
FORCED_ENV = {envvars.QUICK: "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
SYSTEM_RO = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/sys")
ETC_RO = (
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/alternatives",
    "/etc/fonts",
    "/etc/mime.types",
)


@functools.lru_cache(maxsize=None)
def available() -> bool:
    """True when bubblewrap is installed and can build the namespaces the sandbox uses here."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return False
    cmd = [
        bwrap,
        "--die-with-parent",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "true",
    ]
    try:
        return subprocess.run(cmd, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def build_package_copy(dest) -> Path:
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
            py_compile.compile(
                str(src),
                cfile=str(out.with_suffix(".pyc")),
                dfile=shown,
                doraise=True,
                invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
            )
        else:
            shutil.copy2(src, out)
    return target


def prepare_workspace(workspace) -> tuple[Path, Path]:
    """Create the workspace's sandbox state once: the bytecode package copy and the kernels' runtime folder.

    Both stay in place for the student's whole run: a running zygote (autograder.sandbox.zygote) has them mounted,
    and a mount of a folder that is deleted and made again would show the old, empty one.

    Returns:
    - (state folder Path, runtime folder Path)
    """
    workspace = Path(workspace).resolve()
    state = workspace / STATE
    state.mkdir(parents=True, exist_ok=True)
    if not (state / "lib" / "autograder" / "sandbox" / "kernel.pyc").exists():
        build_package_copy(state / "lib")
    runtime = runtime_dir(workspace)
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    runtime.chmod(0o700)
    return state, runtime


def runtime_dir(workspace) -> Path:
    """Short folder in the temp dir for the kernel's ipc sockets (unix socket paths must stay under 108 bytes)."""
    digest = hashlib.sha256(str(Path(workspace).resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"a3k-{digest}"


def read_events(workspace, clear=True) -> list[str]:
    """Lines the sandboxed kernels of this workspace logged (blocked reads, network, limits), oldest first.

    With clear=True the log is emptied, so calling this after each notebook attributes lines to it.
    """
    path = Path(workspace) / STATE / EVENTS_FILE
    if not path.exists():
        return []
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    if clear:
        path.write_text("")
    return lines


def _ro(path):
    """bwrap arguments that show `path` read-only at the same place (symlinks kept as symlinks)."""
    if os.path.islink(path):
        return ["--symlink", os.readlink(path), path]
    return ["--ro-bind-try", path, path]


def kernel_variables(source, pass_names) -> dict[str, str]:
    """The variables a grading kernel gets from the environment `source` (the nbgrader process's, with its
    kernelspec's merged in): the FORWARDED_ENV ones and `pass_names`, never the NEVER_ENV ones."""
    names = (set(FORWARDED_ENV) | set(pass_names)) - set(NEVER_ENV)
    return {n: source[n] for n in names if n in source}


def sandboxed_environment(workspace, visible, kernel_env, fds_env) -> dict[str, str]:
    """The whole environment of a sandboxed kernel (or zygote) whose writable folders are `visible`."""
    python_roots = sorted(
        {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    )
    env = dict(kernel_env)
    env.update(FORCED_ENV)
    env.update(fds_env)
    env.update(
        {
            "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
            "HOME": SANDBOX_HOME,
            "MPLCONFIGDIR": f"{SANDBOX_HOME}/.matplotlib",
            "PYTHONPATH": PACKAGE_MOUNT,
            envvars.SANDBOX: "1",
            envvars.SANDBOX_PROTECT: os.pathsep.join(
                [str(paths.ROOT), str(Path(workspace).parent), os.path.expanduser("~")]
            ),
            envvars.SANDBOX_VISIBLE: os.pathsep.join(python_roots + [sys.prefix] + [str(v) for v in visible]),
            "JPY_PARENT_PID": "1",  # our parent is the namespace's init: no parent poller (it would exit at once)
        }
    )
    for name, (_, inside) in _model_caches():
        env[name] = inside
    return env


def _model_caches():
    """[(variable, (host folder, path inside the sandbox))] for the model caches shown read-only."""
    found = []
    for name, host in (
        ("HF_HOME", os.environ.get("HF_HOME") or os.path.expanduser("~/.cache/huggingface")),
        ("TORCH_HOME", os.environ.get("TORCH_HOME") or os.path.expanduser("~/.cache/torch")),
    ):
        if os.path.isdir(host):  # cached pretrained weights, read-only (online model source)
            found.append((name, (host, f"/opt/a3-cache/{name.lower()}")))
    for name in (envvars.MODEL_CACHE, "HF_HUB_CACHE"):  # a model cache elsewhere: same path inside, read-only
        host = os.environ.get(name)
        if host and os.path.isdir(host):
            host = os.path.realpath(host)
            found.append((name, (host, host)))
    return found


def python_module(module: str) -> list[str]:
    """The command that runs `module` with this Python. `-P` keeps the working folder off sys.path: the launcher
    and a kernel start in a notebook's folder, where an earlier notebook may have left a json.py or an
    autograder package, which `python -m` would import before the kit's own."""
    return [sys.executable, "-P", "-m", module]


def bwrap_command(workspace, cwd, connection_file, sockets, env, module="autograder.sandbox.kernel") -> list[str]:
    """The bwrap command line that runs `python -m module` with environment `env` in cwd (writable, with
    the sockets folder); connection_file (None for a zygote) is shown read-only."""
    python_roots = sorted(
        {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    )
    cmd = [
        "bwrap",
        "--die-with-parent",
        "--new-session",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "a3-sandbox",
        "--cap-drop",
        "ALL",
        "--clearenv",
    ]
    for p in SYSTEM_RO + ETC_RO:
        if os.path.lexists(p):
            cmd += _ro(p)
    cmd += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
    for dev in sorted(Path("/dev").glob("nvidia*")):
        cmd += ["--dev-bind-try", str(dev), str(dev)]
    for p in python_roots + [sys.prefix]:
        cmd += ["--ro-bind", p, p]
    cmd += ["--ro-bind", str(Path(workspace) / STATE / "lib"), PACKAGE_MOUNT]
    for _, (host, inside) in _model_caches():
        cmd += ["--ro-bind", host, inside]
    cmd += ["--bind", str(cwd), str(cwd), "--chdir", str(cwd), "--bind", str(sockets), str(sockets)]
    if connection_file is not None:
        cmd += ["--ro-bind", str(connection_file), str(connection_file)]
    for k, v in sorted(env.items()):
        cmd += ["--setenv", k, v]
    cmd += ["--", *python_module(module)]
    return cmd
