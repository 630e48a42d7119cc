"""Kernel zygote: one sandboxed process per grading slot imports the heavy libraries once and forks each kernel.

Three modules, one per side: `protocol` (where the sockets are, the lines that cross them), `client` (the host:
start a zygote, ask it for a kernel, reset it, ask what it stopped) and `server` (the sandbox: preload, fork,
reset); `python -m autograder.sandbox.zygote` runs the server. The worker sees none of them directly: it holds
an `autograder.sandbox.slot.Slot`.
"""
