"""Resource limits of a grading kernel, overridable through the grading process's environment, and the words
that say which one a cell ran into."""

from autograder import envvars


def limits() -> dict[str, int]:
    """Resource limits for grading, overridable through the environment of the grading process.

    Returns:
    - dict with mem_mb (data segment cap of the kernel), cpu_s (CPU seconds of the kernel),
      fsize_mb (largest file the kernel may write), output_chars (stream output kept per cell),
      procs (processes a student's sandbox may run besides the grader's own; more are killed).
    """
    return {  # defaults: 6144, 1200, 512, 200000 and 256 (autograder.envvars)
        "mem_mb": envvars.get_int(envvars.MEM_LIMIT_MB),
        "cpu_s": envvars.get_int(envvars.CPU_LIMIT_S),
        "fsize_mb": envvars.get_int(envvars.FSIZE_LIMIT_MB),
        "output_chars": envvars.get_int(envvars.OUTPUT_LIMIT_CHARS),
        "procs": envvars.get_int(envvars.PROC_LIMIT),
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
