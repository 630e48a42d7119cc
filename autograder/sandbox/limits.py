"""Resource limits of a grading kernel, overridable through the grading process's environment, and the words
that say which one a cell ran into."""

import os


def limits() -> dict[str, int]:
    """Resource limits for grading, overridable through the environment of the grading process.

    Returns:
    - dict with mem_mb (data segment cap of the kernel), cpu_s (CPU seconds of the kernel),
      fsize_mb (largest file the kernel may write), output_chars (stream output kept per cell),
      procs (processes a student's sandbox may run besides the grader's own; more are killed).
    """
    env = os.environ
    return {
        "mem_mb": int(env.get("A3_MEM_LIMIT_MB", 6144)),
        "cpu_s": int(env.get("A3_CPU_LIMIT_S", 1200)),
        "fsize_mb": int(env.get("A3_FSIZE_LIMIT_MB", 512)),
        "output_chars": int(env.get("A3_OUTPUT_LIMIT_CHARS", 200_000)),
        "procs": int(env.get("A3_PROC_LIMIT", 256)),
    }


def timed_out(seconds) -> str:
    """What a cell that ran past its time limit is recorded with."""
    return f"timed out after {seconds:g} s"


def out_of_memory(mem_mb) -> str:
    """What a cell that ran out of memory is recorded with (the configured limit, in GB when whole)."""
    size = f"{mem_mb // 1024} GB" if mem_mb % 1024 == 0 else f"{mem_mb} MB"
    return f"ran out of memory ({size} limit)"


def too_many_processes(procs) -> str:
    """What a cell whose processes were killed for passing the process limit is recorded with."""
    return f"killed: more than {procs} processes"
