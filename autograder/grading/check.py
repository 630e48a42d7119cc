"""`python -m autograder check FILE.ipynb [FILE ...]`: what a grader would meet in a notebook, before it is submitted.

Offline, without OUT and without running anything: each file is read, identified and repaired on a copy by the very
functions ingest runs on a submission (`ingest.read_submitted`, `ingest.prepare`: repair, then the answers found in
added cells, `grading.answers`), against the released notebooks (`release/a3`). Every repair that costs the student
something, every answer cell left as released, every answer typed into an added cell, and what no grader can run
(`input()`, absolute paths), a notebook never run and a file an LMS would refuse are one line each, and the exit
status is 1; a notebook with none of these gets one line saying it is ready, and 0. So "ready" means grading will
find every answer where it looks. The rules and their words are `autograder.readiness`'s, which the last cell of each
released notebook runs on the live notebook too.
"""

import sys
import time
from pathlib import Path

from autograder import paths, readiness
from autograder.grading import discover, ingest, read
from autograder.readiness import LMS_LIMIT_MB, risky  # noqa: F401 - check's own names for them
from autograder.text import one_line


def problems(path: Path, releases: dict[str, dict], max_bytes: int) -> tuple[str | None, list[str]]:
    """What a grader would meet in one file: (the notebook it is, or None; one line per problem, [] when ready)."""
    found = readiness.size_problem(path.stat().st_size, max_bytes)
    name, nb, problem, repairs = ingest.read_submitted(path, releases)
    if nb is None:
        return name, found + [problem or "not a notebook"]
    rel = releases.get(name)
    if rel is None:
        return name, found + ["not an A3 notebook: none of its cells match A3's released notebooks"]
    says = discover.notebook_from_name(path.name)
    if says and says != name:
        found.append(
            f"this file is named for {says} but holds the {name} notebook: the grader would grade it as {name} "
            f"(and {says} as missing); save the {says} notebook under this name"
        )
    if readiness.never_run(nb):
        found.append(readiness.NEVER_RUN)
    known = readiness.Release.of(rel, name)
    in_cells = readiness.cell_problems(nb, known)  # before repair: cells numbered as the student sees them
    try:
        problem, added = ingest.prepare(nb, rel, repairs)
    except Exception as exc:  # damage no repair step knows (ingest records it the same way)
        return name, found + [f"could not be repaired: {one_line(exc, 150)}"]
    if problem:
        return name, found + [problem]
    found += readiness.repair_problems(repairs, known) + in_cells
    return name, found + readiness.answer_problems(nb, known, added)


def main(*, files: list[Path], max_mb: float = LMS_LIMIT_MB, release: Path = paths.RELEASE) -> int:
    """`check`: one line per problem of each file and exit 1, or one line per file saying it is ready and exit 0.

    Inputs:
    - files: the notebooks to check; max_mb: the largest file the LMS takes, in MB (2: a default Moodle);
      release: the released notebooks to compare with (release/a3).
    """
    releases = read.load_releases(release)
    if not releases:
        print(f"check: no released notebooks in {release}", file=sys.stderr)
        return 2
    bad = 0
    for path in map(Path, files):
        start = time.perf_counter()
        if not path.is_file():
            print(f"{path}: no such file")
            bad += 1
            continue
        name, found = problems(path, releases, int(max_mb * 2**20))
        for line in found:
            print(f"{path}: {line}")
        if found:
            bad += 1
        else:
            print(
                f"{path}: ready: the {name} notebook, every answer where the grader looks "
                f"({time.perf_counter() - start:.1f} s)"
            )
    if bad and len(files) > 1:
        print(f"{bad} of {len(files)} notebooks are not ready")
    return 1 if bad else 0
