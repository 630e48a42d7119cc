"""The Linux calls the sandbox makes by hand: prctl options by name, mount points, emptying a mounted folder."""

import ctypes
import re
import shutil
import signal
from pathlib import Path

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>: the signal a process gets when its parent dies
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4  # 0: no ptrace and no /proc/PID/mem for processes of the same user


def prctl(option: int, value: int) -> int:
    """prctl(option, value) on this process; its result, or -1 where there is no prctl (not Linux)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        return -1


def die_with_parent() -> None:
    """Get SIGKILL when the parent process dies (a no-op where there is no prctl)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def set_dumpable(flag: bool) -> None:
    """Make this process dumpable or not: one that is not cannot be ptraced or have its memory read through
    /proc/PID/mem by processes of the same user without capabilities (the kernels)."""
    prctl(PR_SET_DUMPABLE, int(flag))


def mount_points() -> set[str]:
    """Every mount point this process sees (/proc/self/mountinfo, octal escapes such as \\040 decoded)."""
    points = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4]
        points.add(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), point))
    return points


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
