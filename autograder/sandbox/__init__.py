"""The grading sandbox, in import order: `limits` (resource limits), `bwrap` (what a sandboxed process sees),
`kernel` (a grading kernel's set-up), `zygote` (kernels forked from one preloaded process), `launcher` (the
kernelspec entry point that asks a zygote or starts a sandbox itself); `nofigures` is the kernels' backend."""
