"""The grading engine: ingest (discover, read and repair), the per-student worker and its nbgrader runs, pass-token
verification, the scheduler that fans students out, and the pipeline that writes OUT."""
