"""How much longer the tests wait on a busy or slow machine: their time limits were set on the idle 2-core machine,
and `scaled` stretches them by how much slower this one runs now. Only the limits grow (a test still ends as soon as
what it waits for happens); what a test asserts does not change. Not a test module.

The factor (1 to CAP) is the larger of
- the calibration: the wall time of a fixed CPU-bound loop (about 0.05 s on the idle machine; measured once per
  process, median of three), against that reference: a slower CPU and a smaller share of one both lengthen it;
- the load now: the 1-minute load average a usable core (os.getloadavg, read at each call, so a test that starts
  when the machine has become busier waits longer).
The environment variable OVERRIDE, when set, is the factor instead (e.g. 1 to keep the idle limits, 10 for a
shared runner).
"""

import math
import os
import statistics
import time
from functools import cache

OVERRIDE = "TEST_SLOWDOWN"  # the factor to use instead of the measured one
CAP = 10.0  # at most: a limit of 60 s waits 10 minutes at most
REFERENCE_S = 0.05  # the calibration loop's wall time on the idle 2-core machine
LOOPS = 1_000_000


def _loop_seconds() -> float:
    start = time.perf_counter()
    total = 0
    for i in range(LOOPS):
        total += i * i % 7
    return time.perf_counter() - start


@cache
def calibration() -> float:
    """The calibration loop's wall time against the idle machine's (1.0 there; measured once per process)."""
    return statistics.median(_loop_seconds() for _ in range(3)) / REFERENCE_S


def load() -> float:
    """The 1-minute load average a core this process may run on."""
    try:
        return os.getloadavg()[0] / max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return 0.0


def factor() -> float:
    """How many times the idle machine's time limits to allow now: OVERRIDE when set, else the larger of the
    calibration and the load, between 1 and CAP."""
    given = os.environ.get(OVERRIDE, "").strip()
    if given:
        return max(1.0, float(given))
    return min(CAP, max(1.0, calibration(), load()))


def scaled(seconds: float) -> float:
    """A time limit of `seconds` on the idle machine, stretched for this one (see `factor`)."""
    return seconds * factor()


def describe() -> str:
    """One line for the test run's header: the factor and what it came from."""
    given = os.environ.get(OVERRIDE, "").strip()
    if given:
        return f"time limits x{factor():.1f} ({OVERRIDE}={given})"
    return (
        f"time limits x{factor():.1f} (calibration x{calibration():.1f}, load a core {load():.1f}; {OVERRIDE} sets it)"
    )


def kernel_waits(cell: float | None = 60, startup: float = 120, iopub: float = 10) -> dict:
    """nbclient's waits for a notebook run in a test, stretched, in whole seconds (its traits are integers): a cell's
    time limit (`cell`; None leaves out a limit a test means to hit, such as a cell that never ends: pass it as
    timeout yourself), the kernel's start (install_kernel's Execute.startup_timeout) and the outputs after a cell's
    reply (its Execute.iopub_timeout)."""
    waits = {"startup_timeout": math.ceil(scaled(startup)), "iopub_timeout": math.ceil(scaled(iopub))}
    if cell is not None:
        waits["timeout"] = math.ceil(scaled(cell))
    return waits
