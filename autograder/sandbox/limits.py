"""Resource limits of a grading kernel, overridable through the grading process's environment."""

import os


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
