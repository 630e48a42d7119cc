"""Repair: a submitted notebook made gradable against its release notebook, one step at a time.

Each step is a function `(nb, rel, cells) -> list[str]`: it changes the student's notebook `nb` in place against
the release notebook `rel`, reads and extends `cells` (which student cell stands for which release cell) and
returns one line per repair. `repair()` runs `clean_editor_metadata`, then `repair_cells` runs `STEPS` in order:
unknown and duplicated grade ids, lost nbgrader metadata (same source first, then position), deleted cells, tags
and flags that would switch a test cell off, cell ids. `identify` and `completeness` compare a notebook with the
releases before it is repaired (which notebook it is, how much of it is done). A cell's nbgrader metadata is read
through `autograder.contract` only; here it is only copied from the release, put back or deleted (and looked for,
to delete what contract cannot read). Notebooks are read and changed by key, never by attribute: a submitted one is
JSON's plain dicts and lists (read.read_notebook), which parse and copy faster than NotebookNodes.
"""

import ast
import functools
import json
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import fastjsonschema
import nbformat
from nbformat.validator import isvalid

from autograder import contract
from autograder.readiness import SKIP_TAGS  # noqa: F401 - the tags that switch a cell off (one home)
from autograder.text import one_line

COLAB_NB_KEYS = ("colab", "accelerator", "widgets", "gpuClass", "varInspector", "toc", "vscode")
COLAB_CELL_KEYS = ("colab", "executionInfo", "outputId", "id", "cellView", "pycharm")
_COLAB_CELL_KEYS = frozenset(COLAB_CELL_KEYS)
ID_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # a valid nbformat cell id


@dataclass
class CellMap:
    """Which student cell stands for which release cell, built up by the repair steps that find them."""

    pos: dict[int, int] = field(default_factory=dict)  # release cell index -> student cell index, in order found
    claimed: set[int] = field(default_factory=set)  # student cell indices already taken by a release cell
    copies: list = field(default_factory=list)  # the release cells copied into the notebook, as placed there


def _gid(cell):
    """A cell's grade id, or None (also when a student's edit left nbgrader metadata that is not a mapping)."""
    meta = contract.nbgrader_meta(cell)
    return meta.get("grade_id") if isinstance(meta, dict) else None  # JSON's mappings are dicts (NotebookNodes too)


def _norm(source):
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _edited(source, release_source):
    """True when a cell's source differs from the release's by more than trailing whitespace."""
    return source != release_source and _norm(source) != _norm(release_source)


def _defined_names(source):
    """Top-level def/class names in a code cell (empty when it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(re.findall(r"^(?:def|class)\s+([A-Za-z_]\w*)", source, re.M))
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


@dataclass(frozen=True)
class _Release:
    """What the repair steps look up in a release notebook, made once per release read: a class's notebooks are
    repaired against the same few releases, which repair never changes."""

    gids: list  # each cell's grade id (None for none), in order
    by_id: dict  # {grade id: (index, cell)}
    long_sources: set  # the normalised sources longer than 40 characters
    shortest_long: int  # the length of the shortest of them (no shorter source normalises to one)
    normed: list  # each cell's normalised source, in order
    norm_of: dict  # {source: its normalised source} of the cells' sources
    valid: bool  # a valid nbformat 4.5 notebook whose cell ids are all there and unique: a copy of a cell validates


_RELEASES: dict[int, tuple[dict, _Release]] = {}  # id(release) -> (release, what it holds)


def _release(rel: dict) -> _Release:
    """rel's _Release (kept with rel itself, so that its id is never reused)."""
    kept = _RELEASES.get(id(rel))
    if kept is None or kept[0] is not rel:
        if len(_RELEASES) > 1000:  # releases read again and again (tests): forget the old ones
            _RELEASES.clear()
        gids = [_gid(c) for c in rel["cells"]]
        by_id = {gid: (i, c) for i, (gid, c) in enumerate(zip(gids, rel["cells"])) if gid}
        normed = [_norm(c["source"]) for c in rel["cells"]]
        long_sources = {n for c, n in zip(rel["cells"], normed) if len(c["source"].strip()) > 40}
        shortest = min(map(len, long_sources), default=0)
        norm_of = {c["source"]: n for c, n in zip(rel["cells"], normed)}
        valid = (rel.get("nbformat"), rel.get("nbformat_minor")) == (4, 5) and _unique_ids(rel) and isvalid(rel)
        kept = _RELEASES[id(rel)] = (rel, _Release(gids, by_id, long_sources, shortest, normed, norm_of, valid))
    return kept[1]


def _unique_ids(nb):
    """True when every cell has a cell id (a string) and no two share one."""
    ids = [c.get("id") for c in nb["cells"]]
    return all(isinstance(i, str) for i in ids) and len(set(ids)) == len(ids)


def identify(nb: dict, releases: dict[str, dict]) -> tuple[str | None, int]:
    """Which release notebook `nb` is, by content: (name, matches) with the most matches, or (None, 0)."""
    best, best_score = None, 0
    known_all = {name: _release(rel) for name, rel in releases.items()}
    shortest = min((k.shortest_long for k in known_all.values() if k.long_sources), default=0)
    norm_of = {}  # a source a release has: its norm is known
    for known in known_all.values():
        norm_of.update(known.norm_of)
    ids = [_gid(c) for c in nb["cells"]]
    sources = [  # the normalised sources that may be a long one of a release (a norm is never longer)
        norm_of[c["source"]] if c["source"] in norm_of else _norm(c["source"])
        for c in nb["cells"]
        if len(c["source"]) >= shortest
    ]
    for name, rel in releases.items():
        known = known_all[name]
        score = sum(1 for g in ids if g in known.by_id) + sum(1 for s in sources if s in known.long_sources)
        if (nb["metadata"].get("a3") or {}).get("notebook") == name:
            score += 5
        if score > best_score:
            best, best_score = name, score
    return best, best_score


def completeness(nb: dict, rel: dict) -> int:
    """How many solution cells of rel the student filled in (source differs from the release stub)."""
    stubs = {_gid(c): _norm(c["source"]) for c in rel["cells"] if contract.is_solution_cell(c)}
    done = 0
    for c in nb["cells"]:
        gid = _gid(c)
        if gid in stubs and _norm(c["source"]) != stubs[gid] and "NotImplementedError" not in c["source"]:
            done += 1
    return done


def _tag_list(tags):
    """A cell's tags as nbformat takes them: distinct strings without commas, in order (a hand-edited single tag
    becomes a list of it, names joined by commas are split, anything but strings is dropped)."""
    found = []
    for tag in [tags] if isinstance(tags, str) else tags if isinstance(tags, list) else []:
        for name in tag.split(",") if isinstance(tag, str) else []:
            if name and name not in found:
                found.append(name)
    return found


def clean_editor_metadata(nb: dict, rel: dict, cells: CellMap) -> list[str]:
    """Colab/editor metadata out, the release kernelspec in, each cell's tags a list of names.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - cells: not used (editor metadata belongs to no release cell).
    Returns:
    - one repair line naming what was removed or replaced, one counting the cells whose tags were made a list of
      names (none when nothing was).
    """
    removed = [k for k in COLAB_NB_KEYS if k in nb["metadata"]]
    for k in removed:
        del nb["metadata"][k]
    spec = nb["metadata"].get("kernelspec", {})
    spec = spec if isinstance(spec, dict) else {}  # a hand-edited kernelspec that is not even a mapping
    want = rel["metadata"].get("kernelspec") or {"display_name": "Python 3", "language": "python", "name": "python3"}
    if spec != want:
        nb["metadata"]["kernelspec"] = dict(want)
        if spec.get("name") != want.get("name") or removed:
            removed.append(f"kernelspec {spec.get('name', 'none')!r} -> {want['name']!r}")
    n_cells = n_tagged = 0
    for cell in nb["cells"]:
        meta = cell["metadata"]
        junk = meta.keys() & _COLAB_CELL_KEYS
        for k in junk:
            del meta[k]
        n_cells += bool(junk)
        tags = _tag_list(meta["tags"]) if "tags" in meta else None
        if tags is not None and tags != meta["tags"]:
            meta["tags"] = tags
            n_tagged += 1
    lines = []
    if removed or n_cells:
        what = ", ".join(removed) + (f"; Colab metadata of {n_cells} cells" if n_cells else "")
        lines.append(f"removed editor metadata: {what.strip('; ')}")
    if n_tagged:
        lines.append(f"made the tags of {n_tagged} cell(s) a list of names (hand-edited metadata)")
    return lines


_ATOMS = (str, int, float, bool, type(None))


def _copy(value):
    """A fresh copy of a release cell or a part of one, in JSON's plain types."""
    if isinstance(value, dict):
        return {k: v if type(v) in _ATOMS else _copy(v) for k, v in value.items()}
    if type(value) is list:
        return [v if type(v) in _ATOMS else _copy(v) for v in value]
    return value


def _release_meta(rel_cell):
    """A fresh copy of a release cell's graded metadata (nbgrader, deletable, editable)."""
    return {k: _copy(v) for k, v in rel_cell["metadata"].items() if k in ("nbgrader", "deletable", "editable")}


def _placeholder(rel_cell):
    """Stand-in for a deleted solution cell: defines nothing, so it never overwrites a definition elsewhere."""
    if rel_cell["cell_type"] == "markdown":
        cell = nbformat.v4.new_markdown_cell("*(This answer cell was missing from the submission.)*")
    else:
        cell = nbformat.v4.new_code_cell("# This solution cell was missing from the submission (restored empty).")
    cell["metadata"] = _release_meta(rel_cell)
    return cell


def _locked(rel_cell):
    return contract.nbgrader_meta(rel_cell).get("locked")


def _release_copy(rel_cell, cells):
    """A fresh copy of a release cell, noted in `cells` (whose copies need no validation of their own)."""
    copy = _copy(rel_cell)
    cells.copies.append(copy)
    return copy


def remove_unknown_nbgrader_metadata(nb: dict, rel: dict, cells: CellMap) -> list[str]:
    """Remove nbgrader metadata whose grade id the release does not have (nbgrader would reject it).

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - cells: not used (runs before any cell is matched).
    Returns:
    - one repair line per removed grade id (none for empty metadata).
    """
    rel_by_id = _release(rel).by_id
    repairs = []
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader") is None:  # no nbgrader metadata (damaged metadata is removed below)
            continue
        meta = contract.nbgrader_meta(cell)
        if not isinstance(meta, Mapping) or meta.get("grade_id") not in rel_by_id:
            shown = meta.get("grade_id") if isinstance(meta, Mapping) else None
            del cell["metadata"]["nbgrader"]
            if shown or isinstance(meta, Mapping) and meta:
                repairs.append(f"removed nbgrader metadata with unknown grade id {shown!r}")
    return repairs


def _resolve_duplicate(nb, js, rel_cell):
    """Which of the cells js sharing rel_cell's grade id keeps it: (index kept, how, indices to drop)."""
    if _locked(rel_cell):
        same = [j for j in js if not _edited(nb["cells"][j]["source"], rel_cell["source"])]
        return (same or js)[0], "kept the unedited copy", []
    if rel_cell["cell_type"] == "markdown":
        nb["cells"][js[0]]["source"] = "\n\n".join(nb["cells"][j]["source"] for j in js)
        return js[0], "merged the answer into the first", js[1:]
    return js[-1], "kept the last one (it is the definition that runs last)", []


def resolve_duplicate_grade_ids(nb: dict, rel: dict, cells: CellMap) -> list[str]:
    """Leave each grade id on one cell when a student copied or split a graded cell.

    A locked cell keeps its unedited copy, a written answer is merged into its first cell (the others
    are dropped), a code cell keeps its last copy (the definition that runs last); the other copies
    become ordinary cells.

    Inputs:
    - nb: the student's notebook (v4), changed in place; every grade id in it is the release's.
    - rel: the release notebook.
    - cells: not used (runs before any cell is matched: it drops cells).
    Returns:
    - one repair line per duplicated grade id.
    """
    rel_by_id = _release(rel).by_id
    seen = defaultdict(list)
    for j, cell in enumerate(nb["cells"]):
        if gid := _gid(cell):
            seen[gid].append(j)
    drop, repairs = set(), []
    for gid, js in seen.items():
        if len(js) < 2:
            continue
        keep, how, dropped = _resolve_duplicate(nb, js, rel_by_id[gid][1])
        drop.update(dropped)
        for j in js:
            if j != keep:
                del nb["cells"][j]["metadata"]["nbgrader"]
        repairs.append(f"grade id {gid!r} was on {len(js)} cells (copied or split cell): {how}")
    nb["cells"] = [c for j, c in enumerate(nb["cells"]) if j not in drop]
    return repairs


def _unchanged_copy(nb, rel_cell, start, claimed):
    """Index of the first unclaimed student cell from `start` on that is rel_cell unchanged, or None."""
    for j in range(start, len(nb["cells"])):
        if (
            j not in claimed
            and nb["cells"][j]["cell_type"] == rel_cell["cell_type"]
            and not _edited(nb["cells"][j]["source"], rel_cell["source"])
        ):
            return j
    return None


def restore_metadata_by_source(nb: dict, rel: dict, cells: CellMap) -> list[str]:
    """Anchor the release cells the student kept: by grade id, else by unchanged source (metadata put back).

    Release cells are matched in release order, each unchanged source only after the previous anchor.

    Inputs:
    - nb: the student's notebook (v4), changed in place; no grade id is on two cells.
    - rel: the release notebook.
    - cells: an empty CellMap; receives the anchors.
    Returns:
    - one repair line per graded cell whose metadata was restored.
    """
    where = {gid: j for j, gid in enumerate(map(_gid, nb["cells"])) if gid}
    cells.claimed.update(where.values())
    repairs, start, known = [], 0, _release(rel)
    for i, (gid, rc) in enumerate(zip(known.gids, rel["cells"])):
        if gid in where:
            cells.pos[i] = where[gid]
            start = max(start, where[gid] + 1)
            continue
        if not known.normed[i]:
            continue
        j = _unchanged_copy(nb, rc, start, cells.claimed)
        if j is None:
            continue
        cells.pos[i], start = j, j + 1
        cells.claimed.add(j)
        if gid:
            nb["cells"][j]["metadata"]["nbgrader"] = _release_meta(rc)["nbgrader"]
            repairs.append(f"restored lost nbgrader metadata of {gid!r} (matched by source)")
    return repairs


def _cells_between_anchors(nb, i, rel_cell, cells):
    """Unclaimed student cells without a grade id that may be release cell i: between its anchors, same type;
    for a code cell, those that define the release cell's names (none when it defines names none of them do)."""
    before = max((cells.pos[k] for k in cells.pos if k < i), default=-1)
    after = min((cells.pos[k] for k in cells.pos if k > i), default=len(nb["cells"]))
    gap = [
        j
        for j in range(before + 1, after)
        if j not in cells.claimed and not _gid(nb["cells"][j]) and nb["cells"][j]["cell_type"] == rel_cell["cell_type"]
    ]
    if rel_cell["cell_type"] == "code":
        names = _defined_names(rel_cell["source"])
        by_name = [j for j in gap if names and names <= _defined_names(nb["cells"][j]["source"])]
        gap = by_name or ([] if names else gap)
    return gap


def restore_metadata_by_position(nb: dict, rel: dict, cells: CellMap) -> list[str]:
    """Give edited solution cells that lost their metadata their grade id back, by position and defined names.

    Locked cells are only ever matched by source (restore_metadata_by_source): an edited copy stays an
    ordinary cell.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - cells: the anchors found so far; receives the cells matched here.
    Returns:
    - one repair line per graded cell whose metadata was restored.
    """
    repairs = []
    for i, (gid, rc) in enumerate(zip(_release(rel).gids, rel["cells"])):
        if not gid or i in cells.pos or _locked(rc):
            continue
        gap = _cells_between_anchors(nb, i, rc, cells)
        if gap:
            j = gap[0]
            nb["cells"][j]["metadata"]["nbgrader"] = _release_meta(rc)["nbgrader"]
            cells.pos[i] = j
            cells.claimed.add(j)
            repairs.append(f"restored lost nbgrader metadata of {gid!r} (matched by position)")
    return repairs


def restore_deleted_cells(nb: dict, rel: dict, cells: CellMap) -> list[str]:
    """Put deleted graded and locked cells back where they were: locked ones as released, solutions empty.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - cells: every release cell found so far; receives the restored ones (and shifted indices).
    Returns:
    - one repair line per restored cell.
    """
    repairs = []
    for i, (gid, rc) in enumerate(zip(_release(rel).gids, rel["cells"])):
        if not gid or i in cells.pos:
            continue
        at = max((cells.pos[k] + 1 for k in cells.pos if k < i), default=0)
        locked = _locked(rc)
        nb["cells"].insert(at, _release_copy(rc, cells) if locked else _placeholder(rc))
        cells.pos = {k: (v + 1 if v >= at else v) for k, v in cells.pos.items()}
        cells.pos[i] = at
        kind = "test cell" if gid.startswith("test_") else ("locked cell" if locked else "solution cell")
        repairs.append(f"restored deleted {kind} {gid!r}" + ("" if locked else " (empty: it scores 0)"))
    return repairs


def _reset_graded_cell(nb, j, rel_cell, cells):
    """Make student cell j rel_cell's graded cell again (a copy of it when it is locked, noted in `cells`); returns
    its repair lines."""
    cell, gid = nb["cells"][j], _gid(rel_cell)
    tags = [t for t in cell["metadata"].get("tags", []) if t in SKIP_TAGS]
    repairs = [f"removed tag(s) {', '.join(tags)} from {gid!r}"] if tags else []
    if _locked(rel_cell):
        if cell["cell_type"] != rel_cell["cell_type"] or _edited(cell["source"], rel_cell["source"]):
            repairs.append(f"restored the edited locked cell {gid!r}")
        nb["cells"][j] = _release_copy(rel_cell, cells)
        return repairs
    kind = rel_cell["cell_type"]
    if cell["cell_type"] != kind:
        repairs.append(f"changed {gid!r} back to a {kind} cell")
        new = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
        nb["cells"][j] = cell = new(cell["source"])
    keep = {k: v for k, v in cell["metadata"].items() if k not in ("nbgrader", "deletable", "editable", "tags")}
    rest = [t for t in cell["metadata"].get("tags", []) if t not in SKIP_TAGS]
    cell["metadata"] = dict(keep, **_release_meta(rel_cell), **({"tags": rest} if rest else {}))
    cell["id"] = rel_cell.get("id", cell.get("id"))
    return repairs


def reset_graded_cells(nb: dict, rel: dict, cells: CellMap) -> list[str]:
    """Give every graded cell the release's metadata and type, and locked cells the release's source,
    so that no tag or flag switches one off.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - cells: where each release cell is in nb.
    Returns:
    - repair lines: skip tags removed, edited locked cells restored, cell types changed back.
    """
    repairs, gids = [], _release(rel).gids
    for i, j in cells.pos.items():
        if gids[i]:
            repairs += _reset_graded_cell(nb, j, rel["cells"][i], cells)
    return repairs


def fix_cell_ids(nb: dict, rel: dict, cells: CellMap) -> list[str]:
    """Cell ids: the release's on graded cells, unique valid ids ('s<index>') on the others.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - cells: where each release cell is in nb.
    Returns:
    - one repair line counting the duplicate or invalid ids replaced (none when there were none).
    """
    gids = _release(rel).gids
    graded = [(i, j) for i, j in cells.pos.items() if gids[i]]
    used = {nb["cells"][j].get("id") for i, j in graded}
    for i, j in graded:
        if rel["cells"][i].get("id"):
            nb["cells"][j]["id"] = rel["cells"][i]["id"]
    fixed = 0
    for j, cell in enumerate(nb["cells"]):
        cid = cell.get("id")
        if _gid(cell) and cid:
            continue
        if not cid or not ID_OK.match(str(cid)) or cid in used:
            fixed += bool(cid)
            n = j
            while f"s{n}" in used:
                n += 1000
            cell["id"] = f"s{n}"
        used.add(cell["id"])
    return [f"replaced {fixed} duplicate or invalid cell ids"] if fixed else []


# The steps on the graded cells, in the order repair_cells runs them: grade ids first (unknown ones removed, each on
# one cell), then the release cells found again (by grade id or unchanged source, then by position), deleted ones
# put back, graded cells reset to the release's metadata, and cell ids.
STEPS = (
    remove_unknown_nbgrader_metadata,
    resolve_duplicate_grade_ids,
    restore_metadata_by_source,
    restore_metadata_by_position,
    restore_deleted_cells,
    reset_graded_cells,
    fix_cell_ids,
)


def repair_cells(nb: dict, rel: dict, repairs: list[str]) -> CellMap:
    """Make nb's graded cells match rel's: ids, lost metadata, duplicates, deleted cells, test-cell tags.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - repairs: list that receives one line per repair.
    Returns:
    - the CellMap the steps filled in.
    """
    cells = CellMap()
    for step in STEPS:
        repairs.extend(step(nb, rel, cells))
    return cells


@functools.cache
def _cell_checks() -> dict:
    """{cell type: nbformat 4.5's schema for a cell of that type, compiled}. nbformat checks each cell against
    all three (its schema's `oneOf`); a cell of a type can only be that type's (the schemas fix cell_type), so
    passing its own type's is passing nbformat's."""
    schema = json.loads((Path(nbformat.v4.__file__).parent / nbformat.v4.nbformat_schema[(4, 5)]).read_text())
    return {
        kind: fastjsonschema.compile({"definitions": schema["definitions"], "$ref": f"#/definitions/{kind}_cell"})
        for kind in ("raw", "markdown", "code")
    }


def _validate(nb, copies):
    """nbformat.validate(nb) for a 4.5 notebook, done faster when every cell has a unique id (nbformat's one check
    across cells): the notebook without its cells by nbformat, then each cell against its own type's schema, the
    cells in `copies` (copies of a valid release's cells) left out, as a cell's validity depends on it alone.
    Raises nbformat.ValidationError as nbformat.validate does, with its message for the whole notebook."""
    if _unique_ids(nb):
        skip = {id(c) for c in copies}
        shell = dict(nb)  # the same notebook but for its cells
        shell["cells"] = []
        checks = _cell_checks()
        try:
            nbformat.validate(shell)
            for cell in nb["cells"]:
                if id(cell) not in skip:
                    checks[cell["cell_type"]](cell)
            return
        except (nbformat.ValidationError, fastjsonschema.JsonSchemaException, KeyError, TypeError):
            pass  # validated whole below, for nbformat's own message
    nbformat.validate(nb)


def _clear_outputs(nb):
    """Outputs, execution counts and attachments off every code cell."""
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
            cell.pop("attachments", None)


def repair(nb: dict, rel: dict | None, repairs: list[str]) -> str | None:
    """Repair nb against rel (when there is one) into a valid nbformat 4.5 notebook: None, or why it is not one.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook, or None (no release to compare with: only the nbformat version is set).
    - repairs: list that receives one line per repair.
    """
    copies = []
    if rel is not None:
        repairs.extend(clean_editor_metadata(nb, rel, CellMap()))
        copies = repair_cells(nb, rel, repairs).copies if _release(rel).valid else []
    nb["nbformat"], nb["nbformat_minor"] = 4, 5
    try:
        _validate(nb, copies)
        return None
    except nbformat.ValidationError:
        pass
    _clear_outputs(nb)
    repairs.append("cleared outputs that did not validate")
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as e:
        return f"not a valid notebook: {one_line(str(e), 150)}"
    return None
