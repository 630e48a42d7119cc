"""Model answers and rubrics of the written cells: source/a3/rubrics.toml (never released).

One table per written cell, `[<notebook>.<grade id>]`, with `answer` (the model answer) and `items`: each an
`id`, its `points` (negative for a deduction), the `text` a student reads when it applies and an optional
`note` only TAs see. A cell's score is the applied items' points plus a free adjustment, clamped to
[0, the cell's points]. `parse` checks the file's form, `problems` checks it against the written cells.
"""

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from autograder.text import one_line

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

FILENAME = "rubrics.toml"
ITEM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # no ';' or spaces: the CSV's items column joins ids with ';'
CELL_KEYS = {"answer", "items"}
ITEM_KEYS = {"id", "points", "text", "note"}


class RubricError(ValueError):
    """A rubrics file that cannot be used; the message is one line naming the file and the cell."""


@dataclass(frozen=True)
class Item:
    """One rubric item: what a TA applies to an answer."""

    id: str
    points: float
    text: str
    note: str = ""


@dataclass(frozen=True)
class Rubric:
    """The model answer and rubric items of one written cell."""

    notebook: str
    grade_id: str
    answer: str
    items: tuple[Item, ...]

    def item(self, item_id: str) -> Item | None:
        return next((i for i in self.items if i.id == item_id), None)

    @property
    def ids(self) -> list[str]:
        return [i.id for i in self.items]

    @property
    def stamp(self) -> str:
        """A short digest of the items as a student reads them (ids, points, texts): it changes when a TA could
        mark differently, so what was suggested or decided under another one is known to be stale."""
        shown = [[i.id, i.points, i.text] for i in self.items]
        return hashlib.sha256(json.dumps(shown, ensure_ascii=False).encode()).hexdigest()[:12]


Rubrics = dict[tuple[str, str], Rubric]  # (notebook, grade id) -> its rubric


def _points(value) -> float | None:
    """A number of points, or None for anything else (booleans included, which TOML keeps apart)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _item(where: str, n: int, raw) -> Item:
    if not isinstance(raw, Mapping):
        raise RubricError(f"{where}: item {n} is not a table")
    extra = sorted(set(raw) - ITEM_KEYS)
    if extra:
        raise RubricError(f"{where}: item {n} has unknown key(s) {', '.join(extra)} (allowed: id, points, text, note)")
    item_id = raw.get("id")
    if not isinstance(item_id, str) or not ITEM_ID.fullmatch(item_id):
        raise RubricError(f"{where}: item {n} needs an id of letters, digits, '-', '_' or '.', got {item_id!r}")
    points = _points(raw.get("points"))
    if points is None or points == 0:
        raise RubricError(f"{where}: item {item_id!r} needs points, a non-zero number, got {raw.get('points')!r}")
    text, note = raw.get("text"), raw.get("note", "")
    if not isinstance(text, str) or not text.strip():
        raise RubricError(f"{where}: item {item_id!r} needs a text (what the student reads)")
    if not isinstance(note, str):
        raise RubricError(f"{where}: item {item_id!r}: note should be a string")
    return Item(item_id, points, text.strip(), note.strip())


def parse(text: str, name: str = FILENAME) -> Rubrics:
    """The rubrics in the TOML `text`; RubricError (one line naming `name` and the cell) when its form is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RubricError(f"{name}: not valid TOML: {one_line(exc)}") from None
    rubrics = {}
    for notebook, cells in data.items():
        if not isinstance(cells, Mapping):
            raise RubricError(f"{name}: [{notebook}] should be a table of written cells, [{notebook}.<grade id>]")
        for grade_id, cell in cells.items():
            where = f"{name}: {notebook}/{grade_id}"
            if not isinstance(cell, Mapping):
                raise RubricError(f"{where}: should be a table with answer and items")
            extra = sorted(set(cell) - CELL_KEYS)
            if extra:
                raise RubricError(f"{where}: unknown key(s) {', '.join(extra)} (allowed: answer, items)")
            answer = cell.get("answer")
            if not isinstance(answer, str) or not answer.strip():
                raise RubricError(f'{where}: no model answer (answer = """...""")')
            raw_items = cell.get("items")
            if not isinstance(raw_items, list) or not raw_items:
                raise RubricError(f"{where}: no rubric items ([[{notebook}.{grade_id}.items]])")
            items = tuple(_item(where, n, raw) for n, raw in enumerate(raw_items, 1))
            seen = set()
            for item in items:
                if item.id in seen:
                    raise RubricError(f"{where}: item id {item.id!r} appears twice")
                seen.add(item.id)
            rubrics[(notebook, grade_id)] = Rubric(notebook, grade_id, answer.strip(), items)
    return rubrics


def load(path: Path | str) -> Rubrics:
    """The rubrics of the file at `path` (RubricError when it is missing or malformed)."""
    path = Path(path)
    if not path.is_file():
        raise RubricError(f"{path}: no rubrics file (model answers and rubric items of the written cells)")
    return parse(path.read_text(encoding="utf-8"), str(path))


def problems(
    rubrics: Rubrics,
    written: Mapping[str, Mapping[str, float]],
    checked: Mapping[str, Mapping[str, float]] | None = None,
) -> list[str]:
    """One line per way `rubrics` does not fit the written cells `written` ({notebook: {grade id: points}}), each of
    which needs one. `checked` holds the test cells ({notebook: {test cell id: points}}), which may have one for
    when their check cannot decide (the CLIP caption without its weights) and a person grades them."""
    found, checked = [], checked or {}
    cells = [(nb, gid, pts, True) for nb, by_id in written.items() for gid, pts in by_id.items()]
    cells += [(nb, gid, pts, False) for nb, by_id in checked.items() for gid, pts in by_id.items()]
    for notebook, grade_id, points, needed in cells:
        rubric = rubrics.get((notebook, grade_id))
        if rubric is None:
            if needed:
                found.append(f"{notebook}/{grade_id}: no rubric ({points:g} points)")
            continue
        for item in rubric.items:
            if abs(item.points) > points:
                found.append(
                    f"{notebook}/{grade_id}: item {item.id!r} is worth {item.points:+g}, "
                    f"more than the cell's {points:g} points"
                )
        reachable = sum(i.points for i in rubric.items if i.points > 0)
        if reachable < points:
            found.append(
                f"{notebook}/{grade_id}: the positive items add up to {reachable:g} of the cell's "
                f"{points:g} points (full marks out of reach)"
            )
    for notebook, grade_id in rubrics:
        if grade_id not in written.get(notebook, {}) and grade_id not in checked.get(notebook, {}):
            found.append(
                f"{notebook}/{grade_id}: a rubric for a cell that is not a written answer or a test cell of the notebooks"
            )
    return found


def unknown(rubric: Rubric, applied: Iterable[str]) -> list[str]:
    """The ids in `applied` that `rubric` does not have (an item removed since it was applied)."""
    return [i for i in applied if rubric.item(i) is None]


def score(rubric: Rubric, applied: Iterable[str], adjustment: float, points: float) -> float:
    """The score of an answer: its applied items' points plus `adjustment`, clamped to [0, points] (every id
    in `applied` must be one of the rubric's: see `unknown`)."""
    total = sum(rubric.item(i).points for i in applied) + adjustment
    return round(min(max(total, 0.0), points), 6)


def comment(rubric: Rubric, applied: Iterable[str], adjustment: float, remark: str) -> str:
    """What the student reads: each applied item with its points, the adjustment, then the TA's remark."""
    applied = set(applied)
    lines = [f"{item.points:+g} {item.text}" for item in rubric.items if item.id in applied]
    if adjustment:
        lines.append(f"{adjustment:+g} adjustment by the TA")
    if remark.strip():
        lines.append(remark.strip())
    return "\n".join(lines)


def edit_item(toml_text: str, notebook: str, grade_id: str, item_id: str, points: float, text: str) -> str:
    """`toml_text` with one item's points and text replaced, the rest of the file (comments, layout) kept.

    Raises RubricError when the item's table cannot be found in the usual layout ([[nb.gid.items]] with one
    `id`, `points` and `text` line each) or the result does not read back with the new values.
    """
    header = f"[[{notebook}.{grade_id}.items]]"
    lines = toml_text.split("\n")
    starts = [n for n, line in enumerate(lines) if line.strip().startswith("[")] + [len(lines)]
    for start, end in zip(starts, starts[1:]):
        block = lines[start:end]
        if block[0].strip() != header or f"id = {json.dumps(item_id)}" not in (line.strip() for line in block):
            continue
        for n in range(start + 1, end):
            key = lines[n].split("=", 1)[0].strip()
            if key == "points":
                lines[n] = f"points = {float(points)!r}".removesuffix(".0")  # every digit: it reads back the same
            elif key == "text":
                lines[n] = f"text = {json.dumps(text, ensure_ascii=False)}"
        edited = "\n".join(lines)
        item = parse(edited).get((notebook, grade_id))
        got = item and item.item(item_id)
        if got is None or (got.points, got.text) != (float(points), text.strip()):
            break
        return edited
    raise RubricError(f"{notebook}/{grade_id}: cannot edit item {item_id!r} here; edit {FILENAME} by hand")
