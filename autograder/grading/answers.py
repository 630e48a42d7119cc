"""Answers: where a student's answer to each graded cell is, as ingest and `check` find it (the rules: readiness).

A notebook's answer cells are its solution cells: graded code (a function, class or value) and written answers
(`written_*` markdown cells after a question cell). Students in Colab often leave the answer cell as released and
type the answer into a cell they add below it. The rules:

- a written answer is *left as released* when it is empty or still the stub (`YOUR ANSWER HERE`,
  `readiness.is_blank_answer`, the rule that scores a blank answer 0); a graded code cell is when it is the release
  stub unchanged or still holds one of the stub's `raise NotImplementedError(...)` lines;
- a cell is *added* when it carries no grade id, is not the generated check cell and its text is no release cell's
  (an empty one is passed over);
- an *added-cell answer* is an answer cell left as released followed by added cells that hold text (for graded code:
  code, with the answer's own test cell allowed in between), up to the next release cell.

The rules themselves (`left_as_released`, `is_added`, `added_answers`, `labels`, ...) live in `autograder.readiness`,
standard library only, whose source `build` embeds in the last cell of each released notebook; they are re-exported
here. `added_answers` finds them in a repaired notebook (repair.repair: every graded cell carries its release grade
id); `take_added_answers` is ingest's step: a written answer's text is put into its answer cell (the added cells stay),
and each one found is named in one repair line for the student and one flag for the TA. Graded code is only flagged:
its score stays its test's. Notebooks are read by key (JSON's plain dicts or NotebookNodes alike).
"""

import re
from collections.abc import Mapping

from autograder import contract
from autograder.readiness import (  # noqa: F401 - the rules live in readiness (shipped in each release's last cell)
    ADDED_FLAG,
    CODE_FLAG,
    AddedAnswer,
    Release,
    added_answers,
    graded_name,
    is_added,
    labels,
    left_as_released,
    question_cells,
    release_texts,
)
from autograder.text import one_line


def _gid(cell: Mapping) -> str | None:
    meta = contract.nbgrader_meta(cell)
    return meta.get("grade_id") if isinstance(meta, Mapping) else None


def student_line(found: AddedAnswer) -> str:
    """The line a student reads on their page (a repair): neutral, naming the question."""
    return f"your answer to {found.label} was taken from the cell you added below the question"


def take_added_answers(nb: Mapping, rel: Mapping, repairs: list[str]) -> list[AddedAnswer]:
    """Ingest's step: each written answer found in added cells becomes the answer cell's text (the added cells stay
    where they are), one repair line for it; graded code found so is only returned (its flag), its cell unchanged.

    Inputs:
    - nb: a repaired notebook, changed in place; rel: its release notebook.
    - repairs: receives one line per written answer taken from added cells.
    Returns:
    - every AddedAnswer found (added_answers), for the TA's flags.
    """
    found = added_answers(nb, rel)
    where = {_gid(c): j for j, c in enumerate(nb["cells"]) if _gid(c)}
    for answer in found:
        if answer.kind == "written":
            nb["cells"][where[answer.grade_id]]["source"] = answer.text
            repairs.append(student_line(answer))
    return found


OWN_PASSED, OWN_FAILED = "passed", "failed"


def own_run(nb: Mapping) -> dict[str, str]:
    """{test cell grade id: "passed" or "failed"} of the test cells the student's own run executed, read from the
    outputs the submitted notebook kept (before repair): failed when a cell's outputs hold an error, passed when it
    ran without one. Cells never run are left out."""
    found = {}
    for cell in nb.get("cells", []):
        gid = _gid(cell)
        if not gid or not contract.is_test_cell(cell) or cell.get("execution_count") is None:
            continue
        errors = any(o.get("output_type") == "error" for o in cell.get("outputs", []) if isinstance(o, Mapping))
        found[gid] = OWN_FAILED if errors else OWN_PASSED
    return found


def hidden_failure(message: str, grade_id: str) -> bool:
    """True when a failed cell's message comes from its hidden check (prefixed with the grade id, after the raised
    type), not from the test cell's visible asserts or the kernel."""
    return re.sub(r"^(?:\w+Error|\w+Exception|CheckFailed): ", "", str(message)).startswith(f"{grade_id}: ")


def runs_disagree(own: Mapping[str, str], cells) -> list[str]:
    """TA-only flags for the test cells whose verdict on the student's own run (own_run) differs from the
    grader's on the same visible checks: passed there and failed here (not by the hidden check, which the student
    never ran), or failed there and passed here. `cells`: the notebook's CellResults."""
    flags = []
    for c in cells:
        test = contract.test_cell_id(c.grade_id)
        theirs = own.get(test)
        if theirs is None or c.score is None:
            continue
        passed = c.score >= c.max_score
        if theirs == OWN_PASSED and not passed and not hidden_failure(c.note, c.grade_id):
            flags.append(f"{test}: passed on the student's own run, failed on the grader's ({one_line(c.note, 120)})")
        elif theirs == OWN_FAILED and passed:
            flags.append(f"{test}: failed on the student's own run, passed on the grader's")
    return flags
