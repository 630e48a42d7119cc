"""How many processes a student's sandbox may run, and ending them: a hard bound set by the host, a guard inside.

A graded cell that forks (a fork bomb, or a thousand sleeping children) must not stop the batch. Two layers:
- the hard bound, set before any student code runs: a pids cgroup per sandbox (`pids.max`) where the grading
  process may make one (root, or a delegated cgroup; v1 or v2), else RLIMIT_NPROC inside the user namespace
  that bubblewrap makes for a user other than root (Linux >= 5.14 counts it per user namespace, so one
  sandbox's processes only). Root without a writable pids cgroup gets neither: RLIMIT_NPROC does not apply
  to root, and a setuid bubblewrap makes no user namespace. `bound()` says which one this machine has;
- the guard (`Guard`, run by the zygote inside the sandbox): it counts the sandbox's processes every
  GUARD_INTERVAL seconds and when a cell is asked about; past the limit it kills every process the kernels
  started and interrupts the cell, which is then recorded "killed: more than N processes". Processes that
  keep coming are killed as they come; when the kernel's children fork too (a fork bomb), the kernel is
  killed as well. When a kernel ends, everything it left behind is killed too. Where there is no hard bound,
  the guard alone stops forks.

The hard bound lets the grader's own tasks (bubblewrap's init, the zygote, the kernel's threads: every thread
counts for pids.max and RLIMIT_NPROC) come on top of the students' limit: ALLOWANCE. Python cannot interrupt a
cell that does nothing but fork (the interrupt lands in the fork's own handlers, which drop it): such a cell
ends when its forks fail at the hard bound (its killed children, not yet collected, hold their pids), or at its
time limit.
"""

import functools
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path

from autograder.sandbox.limits import too_many_processes

# tasks (threads included) of the grader's own processes on top of the students' limit: bubblewrap's init,
# the zygote, the kernel with its threads (ipykernel's, and a thread pool of up to one per core)
ALLOWANCE = 48 + 2 * (os.cpu_count() or 1)
GUARD_INTERVAL = 0.05  # seconds between two counts of the sandbox's processes
CGROUP_FS = Path("/sys/fs/cgroup")


def hard_bound(procs) -> int:
    """pids.max / RLIMIT_NPROC of a sandbox whose students may run `procs` processes."""
    return procs + ALLOWANCE


def _own_cgroups():
    """{controller or "" (cgroup v2): this process's cgroup path} from /proc/self/cgroup."""
    found = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                found[controller] = parts[2]
    return found


def _candidates():
    """Folders in which a pids cgroup per sandbox might be made, most specific first."""
    own = _own_cgroups()
    found = []
    if "pids" in own:  # cgroup v1: any folder of the pids hierarchy takes children
        found.append(CGROUP_FS / "pids" / own["pids"].lstrip("/"))
    if "" in own and "pids" in _read(CGROUP_FS / "cgroup.controllers").split():
        found.append(CGROUP_FS / own[""].lstrip("/"))  # delegated to us, with pids in its subtree_control
        found.append(CGROUP_FS)  # the root cgroup (root only)
    return found


def _read(path):
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _try_folder(base):
    """A fresh pids cgroup below base (pids.max set to 1 for the trial) that a process can join, or None."""
    child = base / f"a3-probe-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        child.mkdir()
    except OSError:
        return False
    try:
        if not (child / "pids.max").exists() and "pids" not in _read(base / "cgroup.subtree_control").split():
            (base / "cgroup.subtree_control").write_text("+pids")  # fails where the folder holds processes
        (child / "pids.max").write_text("8")
        joined = subprocess.run(
            ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs"', str(child)], capture_output=True, timeout=10
        )
        return joined.returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        remove_cgroup(child)


@functools.lru_cache(maxsize=None)
def cgroup_base() -> Path | None:
    """The folder in which each sandbox gets its own pids cgroup, or None where this process can make none."""
    for base in _candidates():
        if base.is_dir() and _try_folder(base):
            return base
    return None


def bound() -> str:
    """One line on how this machine bounds a sandbox's processes (for the log: where it cannot, it says so)."""
    if cgroup_base() is not None:
        return f"processes bounded by a pids cgroup per student below {cgroup_base()}"
    if os.geteuid() != 0:
        return (
            "no writable pids cgroup here: processes bounded by RLIMIT_NPROC in each sandbox's user namespace "
            "(Linux >= 5.14 with a bubblewrap that is not setuid), and counted by the grader"
        )
    return (
        "no writable pids cgroup here, and RLIMIT_NPROC does not bound root: a student's processes are only "
        "counted and killed by the grader (a fast fork bomb may pass the limit for a moment); "
        "grade as a user other than root, or where /sys/fs/cgroup is writable"
    )


def new_cgroup(procs) -> Path | None:
    """A pids cgroup for one sandbox, pids.max = hard_bound(procs); None where none can be made."""
    base = cgroup_base()
    if base is None:
        return None
    path = base / f"a3-sandbox-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        path.mkdir()
        (path / "pids.max").write_text(str(hard_bound(procs)))
    except OSError:
        remove_cgroup(path)
        return None
    return path


def in_cgroup(cmd, cgroup) -> list[str]:
    """cmd run inside `cgroup` from its first instruction (a shell joins it, then execs cmd); cmd without one."""
    if cgroup is None:
        return list(cmd)
    return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(cgroup), *cmd]


def remove_cgroup(path, timeout=10) -> None:
    """Kill every process left in a cgroup and remove it (quietly, when it is gone already)."""
    path = Path(path)
    deadline = time.monotonic() + timeout
    while path.is_dir():
        if (path / "cgroup.kill").exists():
            try:
                (path / "cgroup.kill").write_text("1")
            except OSError:
                pass
        for pid in _read(path / "cgroup.procs").split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            path.rmdir()
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)


def rlimit_applies() -> bool:
    """True inside a user namespace made for a user other than root, where RLIMIT_NPROC counts only the
    processes of that namespace (elsewhere it would count every process of the user on the machine)."""
    try:
        maps = [line.split() for line in Path("/proc/self/uid_map").read_text().splitlines() if line.strip()]
    except OSError:
        return False
    return bool(maps) and all(m[2] != "4294967295" and m[1] != "0" for m in maps)


def _processes(zombies=False):
    """{pid: session id} of every live process this pid namespace shows, but the caller and init (with
    zombies=True, only the ended ones that their parent has not collected: they still hold a pid)."""
    found = {}
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (1, me):
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()  # after the command name, which may hold spaces
        if fields and (fields[0] in ("Z", "X")) == zombies:
            found[int(name)] = int(fields[3])
    return found


def _parent(pid):
    """The parent pid of a process (0 when it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def kill_all_but(spare, timeout=5) -> int:
    """SIGKILL every process of this pid namespace but init, the caller and `spare` (a pid -> bool test),
    until none is left. Returns how many were killed."""
    killed = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        targets = [pid for pid, sid in _processes().items() if not spare(pid, sid)]
        if not targets:
            break
        for pid in targets:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        time.sleep(0.005)
    return len(killed)


class Guard:
    """Inside a sandbox (the zygote): the kernels it started, the process limit, and what went past it."""

    def __init__(self, procs, log=print):
        self.procs, self.log = procs, log
        self.kernels = set()  # live kernels (children of the caller), each the leader of its own session
        self.incidents = []  # what happened since the grader last asked (`take`)
        self.spent = set()  # processes killed for the limit: until their parent collects them, not counted again
        self.stopping = False  # the limit was passed since the grader last asked: stop what the kernels start

    def watch(self) -> None:
        """Reap ended kernels (everything they left is killed) and enforce the limit; call it often."""
        ended = False
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            ended = ended or pid in self.kernels
            self.kernels.discard(pid)
        if ended:  # a notebook ended (or was killed): nothing it started outlives it
            kernels = set(self.kernels)
            kill_all_but(lambda pid, sid: pid in kernels or sid in kernels)
        if self.procs > 0:
            self.spent &= set(_processes(zombies=True))  # collected ones are gone; their pids may come back
            holding = set(_processes()) | (set(_processes(zombies=True)) - self.spent)  # a zombie holds its pid
            if len(holding) > self.procs:
                self.over_limit(len(holding))
            elif self.stopping and set(_processes()) - self.kernels:  # the cell goes on forking
                if any(_parent(pid) not in self.kernels for pid in set(_processes()) - self.kernels):
                    self.stop_kernels()  # its children fork too: a fork bomb, which no interrupt stops
                else:
                    self.stop_cells()

    def over_limit(self, count) -> None:
        """Kill every process the kernels started, interrupt the kernels' cells and note why."""
        killed = self.stop_cells()
        self.stopping = True
        why = too_many_processes(self.procs)
        if why not in self.incidents:
            self.incidents.append(why)
        self.log(f"{time.strftime('%H:%M:%S')} process limit: {count} processes, {killed} killed, cell interrupted")

    def stop_cells(self) -> int:
        """Kill every process the kernels started and interrupt the kernels' cells (again: an interrupt that
        lands in a fork's own handlers is lost). Returns how many processes were killed."""
        kernels = set(self.kernels)
        killed = kill_all_but(lambda pid, sid: pid in kernels)
        self.spent |= set(_processes(zombies=True))
        for pid in kernels:
            try:
                os.kill(pid, signal.SIGINT)  # the running cell gets a KeyboardInterrupt
            except ProcessLookupError:
                pass
        return killed

    def stop_kernels(self) -> None:
        """Kill the kernels and everything they started (their cells are recorded as killed)."""
        killed = kill_all_but(lambda pid, sid: False)
        self.log(f"{time.strftime('%H:%M:%S')} process limit: forks went on, kernel killed with {killed - 1} processes")

    def take(self) -> list[str]:
        """The incidents since the last call (cleared); the grader asks after each cell."""
        found, self.incidents, self.stopping = self.incidents, [], False
        return found
