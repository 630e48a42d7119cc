"""Answers: where a student's answer to each graded cell is, the one home of the rules ingest and `check` share.

A notebook's answer cells are its solution cells: graded code (a function, class or value) and written answers
(`written_*` markdown cells after a question cell). Students in Colab often leave the answer cell as released and
type the answer into a cell they add below it. The rules:

- a written answer is *left as released* when it is empty or still the stub (`YOUR ANSWER HERE`,
  `records.is_blank_answer`, the rule that scores a blank answer 0); a graded code cell is when it is the release
  stub unchanged or still holds one of the stub's `raise NotImplementedError(...)` lines;
- a cell is *added* when it carries no grade id and its text is no release cell's (an empty one is passed over);
- an *added-cell answer* is an answer cell left as released followed by added cells that hold text (for graded code:
  code, with the answer's own test cell allowed in between), up to the next release cell.

`added_answers` finds them in a repaired notebook (repair.repair: every graded cell carries its release grade id);
`take_added_answers` is ingest's step: a written answer's text is put into its answer cell (the added cells stay),
and each one found is named in one repair line for the student and one flag for the TA. Graded code is only flagged:
its score stays its test's. Notebooks are read by key (JSON's plain dicts or NotebookNodes alike).
"""

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass

from autograder import contract
from autograder.records import is_blank_answer
from autograder.text import one_line

ADDED_FLAG = "answer found in an added cell"  # the words a TA reads in grades.csv, grading.log and the index
CODE_FLAG = "code in an added cell below its answer cell, which is left as released (scored by its test as usual)"
_LABEL = re.compile(r"\bQuestion\s+([A-Z]\d+)\b")  # "**Question T1 (FGSM bound).**", "### Question B1: ..."
_RAISE = "raise NotImplementedError"
_NAMED = re.compile(r"NotImplementedError\(\s*[\"']([A-Za-z_][\w.]*) is not")


@dataclass(frozen=True)
class AddedAnswer:
    """An answer cell left as released with the student's answer in cells they added below it.

    grade_id: the answer cell's; kind: "written" or "code"; label: the question's label as the notebook shows it
    (T1, N2, ...) for a written answer, the graded name (a function, class or value) for code; cells: the added
    cells' indices in the notebook it was found in; text: their text, joined (code fenced in a written answer)."""

    grade_id: str
    kind: str
    label: str
    cells: tuple[int, ...]
    text: str

    @property
    def flag(self) -> str:
        """The TA's one-line flag: `<grade id> (<label>): <what was found>` (the label left out when it is the id)."""
        shown = self.grade_id if self.label == self.grade_id else f"{self.grade_id} ({self.label})"
        return f"{shown}: {ADDED_FLAG if self.kind == 'written' else CODE_FLAG}"


def _gid(cell: Mapping) -> str | None:
    meta = contract.nbgrader_meta(cell)
    return meta.get("grade_id") if isinstance(meta, Mapping) else None


def _source(cell: Mapping) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def release_texts(rel: Mapping) -> frozenset[str]:
    """The normalised texts of every release cell (what no added cell is)."""
    return frozenset(_norm(_source(c)) for c in rel["cells"])


def is_added(cell: Mapping, texts: frozenset[str]) -> bool:
    """True for a cell the student added: no grade id, and text that is no release cell's (`release_texts`)."""
    return not _gid(cell) and _norm(_source(cell)) not in texts


def _stub_raises(stub: str) -> set[str]:
    return {line.strip() for line in stub.splitlines() if line.strip().startswith(_RAISE)}


def left_as_released(cell: Mapping, stub: str) -> bool:
    """True when an answer cell still is what the release handed out: a written answer empty or the stub, graded
    code the stub or still raising one of its `NotImplementedError` lines.

    Inputs:
    - cell: the student's answer cell; stub: the release's source of the same cell."""
    source = _source(cell)
    if cell.get("cell_type") == "markdown":
        return is_blank_answer(source, stub)
    raises = _stub_raises(stub)
    return _norm(source) == _norm(stub) or any(line.strip() in raises for line in source.splitlines())


def graded_name(stub: str, grade_id: str) -> str:
    """The name a graded code cell defines, as the notebook names it: its class or function, else the value its
    stub's `NotImplementedError` names (`counterexample_w`), else the grade id."""
    try:
        tree = ast.parse(stub)
        names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    except SyntaxError:
        names = re.findall(r"^(?:def|class)\s+([A-Za-z_]\w*)", stub, re.M)
    if names:
        return names[0]
    named = _NAMED.search(stub)
    return named.group(1).split(".")[0] if named else grade_id


def labels(rel: Mapping) -> dict[str, str]:
    """{grade id: label} of a release notebook's answer cells: a written answer's question label (T1, N2, B1, ...,
    from the question cell above it; its grade id when none says), a graded code cell's name (`graded_name`)."""
    found, label = {}, None
    for cell in rel["cells"]:
        gid, source = _gid(cell), _source(cell)
        if contract.is_written_cell(cell):
            found[gid] = label or gid
            label = None
        elif contract.is_solution_cell(cell):
            found[gid] = graded_name(source, gid)
        elif cell.get("cell_type") == "markdown" and (hit := _LABEL.search(source)):
            label = hit.group(1)
    return found


def question_cells(rel: Mapping) -> dict[str, str]:
    """{grade id: label} of a release notebook's question cells (the cell above a written answer that says
    "Question T1")."""
    found = {}
    for cell in rel["cells"]:
        gid = _gid(cell)
        if gid and cell.get("cell_type") == "markdown" and not contract.is_graded_cell(cell):
            if hit := _LABEL.search(_source(cell)):
                found[gid] = hit.group(1)
    return found


def _holds_code(source: str) -> bool:
    """True when a code cell holds more than comments and blank lines."""
    return any(line.strip() and not line.strip().startswith("#") for line in source.splitlines())


def _text(cells: list[Mapping]) -> str:
    """The added cells' text as one written answer: markdown as it is, code fenced."""
    parts = []
    for cell in cells:
        source = _source(cell).strip()
        parts.append(f"```\n{source}\n```" if cell.get("cell_type") == "code" else source)
    return "\n\n".join(parts)


def _below(nb: Mapping, j: int, texts: frozenset[str], test_id: str | None) -> list[int]:
    """Indices of the added cells below cell j, up to the next release cell (its test cell `test_id` passed over)."""
    found = []
    for k in range(j + 1, len(nb["cells"])):
        cell = nb["cells"][k]
        if test_id and _gid(cell) == test_id:
            continue
        if not _source(cell).strip():
            continue
        if not is_added(cell, texts):
            break
        found.append(k)
    return found


_KNOWN: dict[int, tuple[Mapping, tuple]] = {}  # id(release) -> (release, (stubs, labels, texts))


def _known(rel: Mapping) -> tuple[dict, dict, frozenset]:
    """(the stubs {grade id: source} of rel's answer cells, labels(rel), release_texts(rel)), made once per release
    read (kept with rel itself, so that its id is never reused): a class's notebooks share a few releases."""
    kept = _KNOWN.get(id(rel))
    if kept is None or kept[0] is not rel:
        if len(_KNOWN) > 100:  # releases read again and again (tests): forget the old ones
            _KNOWN.clear()
        stubs = {_gid(c): _source(c) for c in rel["cells"] if contract.is_solution_cell(c)}
        kept = _KNOWN[id(rel)] = (rel, (stubs, labels(rel), release_texts(rel)))
    return kept[1]


def added_answers(nb: Mapping, rel: Mapping) -> list[AddedAnswer]:
    """The answer cells of `nb` left as released whose answer is in cells the student added below them.

    Inputs:
    - nb: a repaired notebook (repair.repair against rel: every graded cell carries its grade id).
    - rel: its release notebook.
    Returns:
    - one AddedAnswer per such answer cell, in notebook order.
    """
    stubs, names, texts = _known(rel)
    found = []
    for j, cell in enumerate(nb["cells"]):
        gid = _gid(cell)
        if gid not in stubs or not contract.is_solution_cell(cell) or not left_as_released(cell, stubs[gid]):
            continue
        written = contract.is_written_cell(cell)
        below = _below(nb, j, texts, None if written else contract.test_cell_id(gid))
        if not written:  # graded code: only added code cells that hold code
            below = [
                k for k in below if nb["cells"][k].get("cell_type") == "code" and _holds_code(_source(nb["cells"][k]))
            ]
        if below:
            held = [nb["cells"][k] for k in below]
            kind = "written" if written else "code"
            found.append(AddedAnswer(gid, kind, names.get(gid, gid), tuple(below), _text(held)))
    return found


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
