"""Grade the corpus once per test session through `python -m autograder grade`, and read back OUT."""

import csv
import os
import subprocess
import sys
import time

from autograder import paths
from autograder.grading import pipeline
from tests.corpus import make_corpus

WORKERS = 2
MEM_LIMIT_MB = 2560  # the kernel's data cap for this batch: the memory bomb stops there, the notebooks fit
_cache = {}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def graded_corpus(tmp_path_factory):
    """Build the corpus and grade it in one batch (memoised for the session).

    Returns:
    - dict with cases, out (OUT folder), seconds (wall time of the grade command), returncode, output,
      grades {(student, notebook): row}, cells {(student, notebook, grade_id): row}, log (text).
    """
    if "result" in _cache:
        return _cache["result"]
    root = tmp_path_factory.mktemp("corpus")
    subs, out = root / "submissions", root / "out"
    subs.mkdir()
    template = pipeline.ensure_template(out)  # the same template the grade command then reuses
    cases = make_corpus.build(subs, template / "release", paths.SOURCE)
    env = dict(
        os.environ,
        A3_MEM_LIMIT_MB=str(MEM_LIMIT_MB),
        HF_HUB_OFFLINE="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(paths.ROOT), os.environ.get("PYTHONPATH")])),
    )
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(subs), "--out", str(out), "--workers", str(WORKERS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    seconds = time.perf_counter() - start
    result = {
        "cases": cases,
        "out": out,
        "seconds": seconds,
        "returncode": proc.returncode,
        "output": proc.stdout + proc.stderr,
    }
    if (out / "grades.csv").exists():
        result["grades"] = {(r["student"], r["notebook"]): r for r in read_csv(out / "grades.csv")}
        rows = read_csv(out / "grades_by_cell.csv")
        result["cells"] = {(r["student"], r["notebook"], r["grade_id"]): r for r in rows}
        result["log"] = (out / "grading.log").read_text()
    else:
        result.update(grades={}, cells={}, log="")
    _cache["result"] = result
    return result


def table(result):
    """The corpus table: case, what it does, expected and got (status and score) for its nmt notebook."""
    lines = [f"{'case':<24} {'expected':<34} {'got':<34} what", "-" * 130]
    for c in result["cases"]:
        pattern, score = c.expect["nmt"]
        row = result["grades"].get((c.student, "nmt"), {})
        got = f"{row.get('status', 'LOST')[:26]} {row.get('score', '-')}"
        lines.append(f"{c.student:<24} {pattern.strip('^$')[:26] + ' ' + str(score):<34} {got:<34} {c.what}")
    lines.append(f"batch: {len(result['cases'])} students graded in {result['seconds']:.0f} s with {WORKERS} workers")
    return "\n".join(lines)
