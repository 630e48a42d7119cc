"""`python -m autograder check FILE.ipynb [FILE ...]`: what a grader would meet in a notebook, before it is submitted.

Offline, without OUT and without running anything: each file is read, identified and repaired on a copy by the very
functions ingest runs on a submission (`ingest.read_submitted`, `ingest.prepare`: repair, then the answers found in
added cells, `grading.answers`), against the released notebooks (`release/a3`). Every repair that costs the student
something, every answer cell left as released, every answer typed into an added cell, and what no grader can run
(`input()`, absolute paths), a notebook never run and a file an LMS would refuse are one line each, and the exit
status is 1; a notebook with none of these gets one line saying it is ready, and 0. So "ready" means grading will
find every answer where it looks.
"""

import ast
import re
import sys
import time
from pathlib import Path

from autograder import contract, paths
from autograder.grading import answers, discover, ingest, read
from autograder.text import one_line

# The largest file an LMS takes by default: a default Moodle site uploads at most PHP's default
# upload_max_filesize, 2 MB (Moodle's "Maximum uploaded file size" is 0, "the server's limit", unless an
# administrator raises it). `check --max-mb` sets another limit.
LMS_LIMIT_MB = 2.0
# absolute paths: POSIX roots a notebook reads from (Colab's Drive included), Windows drives, a home folder
_ROOTS = "content|home|Users|mnt|media|root|data|drive|gdrive|Volumes|opt|srv|var"
_ABSOLUTE = re.compile(rf"^(?:/(?:{_ROOTS})(?:/|$)|[A-Za-z]:[\\/]|~[/\\])")
_MAGIC = re.compile(r"^\s*[%!]")


def _repair_problems(repairs: list[str], rel: dict) -> list[str]:
    """The repairs (ingest's lines) that cost the student something, in words a student acts on; editor metadata,
    cell ids and the like are left out. Lost metadata is one line for every cell it happened to."""
    names, questions = answers.labels(rel), answers.question_cells(rel)
    written = {contract.nbgrader_meta(c).get("grade_id") for c in rel["cells"] if contract.is_written_cell(c)}

    def what(gid):
        if gid in names:
            return names[gid] if gid in written else f"`{names[gid]}`"
        if gid.startswith("test_") and contract.check_id(gid) in names:
            return f"the test cell of `{names[contract.check_id(gid)]}` ({gid})"
        if gid in questions:
            return f"the question cell of {questions[gid]}"
        return f"the provided cell {gid!r}"

    found, lost = [], []
    for line in repairs:
        if m := re.match(r"restored lost nbgrader metadata of '([^']+)'", line):
            lost.append(m.group(1))
        elif m := re.match(r"restored deleted test cell '([^']+)'", line):
            found.append(f"{what(m.group(1))} was deleted: the grader puts the released one back (copy it back in)")
        elif m := re.match(r"restored deleted solution cell '([^']+)'", line):
            found.append(
                f"the answer cell of {what(m.group(1))} is missing (deleted, or not recognisable): the grader grades "
                "an empty one, which scores 0; put your answer back into the released cell"
            )
        elif m := re.match(r"restored deleted locked cell '([^']+)'", line):
            found.append(f"{what(m.group(1))} was deleted: the grader puts the released one back")
        elif m := re.match(r"restored the edited locked cell '([^']+)'", line):
            gid = m.group(1)
            if gid in questions:
                found.append(
                    f"{what(gid)} was edited: the grader restores the question, so an answer typed there is lost; "
                    f"write it in the answer cell below the question instead"
                )
            else:
                found.append(
                    f"{what(gid)} was edited: the grader runs the released one instead, so your edits do not count"
                )
        elif m := re.match(r"removed tag\(s\) (.+) from '([^']+)'", line):
            found.append(f"{what(m.group(2))} carries the tag(s) {m.group(1)}: the grader removes them")
        elif m := re.match(r"grade id '([^']+)' was on (\d+) cells", line):
            found.append(f"the answer cell of {what(m.group(1))} is in {m.group(2)} copies (copied or split): keep one")
        elif m := re.match(r"changed '([^']+)' back to a (\w+) cell", line):
            found.append(
                f"the answer cell of {what(m.group(1))} was made another kind of cell: make it a {m.group(2)} cell "
                "again"
            )
        elif m := re.match(r"removed nbgrader metadata with unknown grade id (.+)", line):
            found.append(
                f"a cell carries the grading metadata of another notebook (grade id {m.group(1)}): the grader "
                "ignores it"
            )
    if lost:
        lost.sort(key=lambda g: 0 if g in names else 1 if g.startswith("test_") else 2)  # answer cells first
        shown = ", ".join(what(g) for g in lost[:4]) + (f" and {len(lost) - 4} more" if len(lost) > 4 else "")
        found.insert(
            0,
            f"{len(lost)} cell(s) lost their grading metadata ({shown}): the grader matches them back by their text, "
            "but work in the downloaded notebook itself rather than copying cells into a new one",
        )
    return found


def _parsed(source: str) -> ast.AST | None:
    """A code cell's syntax tree, IPython's `%magic` and `!shell` lines left out (None when it does not parse)."""
    try:
        return ast.parse("\n".join("" if _MAGIC.match(line) else line for line in source.splitlines()))
    except (SyntaxError, ValueError):
        return None


def risky(source: str) -> list[str]:
    """What in a code cell a grader cannot run: `input()` calls (no keyboard: the cell waits until its time-out) and
    absolute paths (no such file on the grader's machine). One phrase each."""
    tree = _parsed(source)
    if tree is None:
        return []
    found, seen = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "input":
            if "input" not in seen:
                seen.add("input")
                found.append("calls input(), which waits for a keyboard the grader does not have: remove it")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _ABSOLUTE.match(node.value):
            if node.value not in seen:
                seen.add(node.value)
                found.append(
                    f"reads the absolute path {one_line(node.value, 60, more='…')!r}, which the grader's machine does "
                    "not have: use a path relative to the notebook"
                )
    return found


def _never_run(nb: dict) -> bool:
    """True when no code cell of the notebook was run (no execution count, no output)."""
    code = [c for c in nb["cells"] if c.get("cell_type") == "code"]
    return bool(code) and not any(c.get("outputs") or c.get("execution_count") for c in code)


def _cell_problems(nb: dict, rel: dict) -> list[str]:
    """input() and absolute paths in the cells the grader runs of the student's: answer cells and added cells."""
    names, texts = answers.labels(rel), answers.release_texts(rel)
    found = []
    for n, cell in enumerate(nb["cells"], 1):
        if cell.get("cell_type") != "code":
            continue
        gid = contract.nbgrader_meta(cell).get("grade_id") if contract.is_solution_cell(cell) else None
        if gid:
            where = f"the answer cell of `{names.get(gid, gid)}`"
        elif answers.is_added(cell, texts):
            where = f"cell {n} (one you added)"
        else:
            continue
        found += [f"{where} {phrase}" for phrase in risky(cell["source"] if isinstance(cell["source"], str) else "")]
    return found


def _answer_problems(nb: dict, rel: dict, added: list[answers.AddedAnswer]) -> list[str]:
    """Answer cells left as released, and answers typed into added cells (found by ingest.prepare), in notebook
    order. `nb` is the prepared copy, whose written answers found in added cells are already in their cells."""
    stubs = {
        contract.nbgrader_meta(c).get("grade_id"): c["source"] for c in rel["cells"] if contract.is_solution_cell(c)
    }
    names, moved = answers.labels(rel), {a.grade_id: a for a in added}
    found = []
    for cell in nb["cells"]:
        gid = contract.nbgrader_meta(cell).get("grade_id")
        if gid not in stubs or not contract.is_solution_cell(cell):
            continue
        label = names.get(gid, gid)
        if gid in moved and moved[gid].kind == "written":
            found.append(
                f"{label}: your answer is in a cell you added below the question, not in its answer cell: move it into "
                "the cell that says YOUR ANSWER HERE (and delete the added cell)"
            )
        elif gid in moved:
            found.append(
                f"`{label}`: your code is in a cell you added below its answer cell, which is left as released: move "
                "it into the answer cell, in place of `raise NotImplementedError(...)`"
            )
        elif answers.left_as_released(cell, stubs[gid]):
            if contract.is_written_cell(cell):
                found.append(f"{label} is not answered: its answer cell still says YOUR ANSWER HERE")
            else:
                found.append(f"`{label}` is left as released (it still raises NotImplementedError): fill in its cell")
    return found


def problems(path: Path, releases: dict[str, dict], max_bytes: int) -> tuple[str | None, list[str]]:
    """What a grader would meet in one file: (the notebook it is, or None; one line per problem, [] when ready)."""
    found = []
    size = path.stat().st_size
    if size > max_bytes:
        found.append(
            f"the file is {size / 2**20:.1f} MB, more than the {max_bytes / 2**20:g} MB an LMS takes by default: "
            "remove large outputs (long printouts, many figures) and save it again"
        )
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
    if _never_run(nb):
        found.append(
            "never run: no cell has an output; run every cell (Colab: Runtime → Run all; Jupyter: Run → Run All "
            "Cells), then save it"
        )
    in_cells = _cell_problems(nb, rel)  # before repair: cells numbered as the student sees them
    try:
        problem, added = ingest.prepare(nb, rel, repairs)
    except Exception as exc:  # damage no repair step knows (ingest records it the same way)
        return name, found + [f"could not be repaired: {one_line(exc, 150)}"]
    if problem:
        return name, found + [problem]
    return name, found + _repair_problems(repairs, rel) + in_cells + _answer_problems(nb, rel, added)


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
