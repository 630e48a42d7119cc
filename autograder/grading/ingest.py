"""Ingest: turn a folder (or LMS zip) of raw submissions into one repaired notebook per student x notebook.

Real submissions come back from Colab and LMS downloads damaged. `ingest()` finds each student's
notebooks under Colab/LMS names, picks one file when there are several, and repairs what it can
against the release notebook: nbformat version and cell ids, Colab metadata and kernelspec, lost
nbgrader metadata (same source first, then position), deleted locked and test cells, duplicated grade
ids, tags and flags that would switch a test cell off. Every repair is one line; every student x
notebook gets a Submission, with status "ok", "missing" or a one-line reason, so nothing is lost.
"""

import ast
import hashlib
import json
import logging
import os
import re
import shutil
import struct
import time
import unicodedata
import zipfile
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder import contract, paths
from autograder.text import one_line

log = logging.getLogger(__name__)

NOTEBOOK_NAMES = contract.NOTEBOOKS
SKIP_TAGS = {"skip-execution", "raises-exception", "skip", "remove-cell", "remove_cell"}
COLAB_NB_KEYS = ("colab", "accelerator", "widgets", "gpuClass", "varInspector", "toc", "vscode")
COLAB_CELL_KEYS = ("colab", "executionInfo", "outputId", "id", "cellView", "pycharm")
MAX_ZIP_BYTES = 2 * 2**30  # refuse to unpack more than this from one LMS zip
MAX_NOTEBOOK_BYTES = 200 * 2**20
JUNK_DIRS = {"__MACOSX", ".ipynb_checkpoints", "__pycache__", ".git"}
CANVAS = re.compile(r"^(?P<login>[^_\s/]+)(?P<late>_LATE)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<file>.+)$")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<uid>\d+)_assignsubmission_[a-z]+_?$")
ID_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # a valid nbformat cell id
ID_CHARS = 64  # longest student id kept as it is (a file name holds 255 bytes: 64 CJK characters are 192)


@dataclass
class Submission:
    """One student x notebook: the repaired notebook (or None) and how it got there."""

    student: str
    notebook: str
    path: Path | None
    status: str  # "ok", "missing", or a one-line reason it cannot be graded
    repairs: list[str] = field(default_factory=list)
    lms: dict = field(default_factory=dict)  # {"lms": "canvas" or "moodle", "user_id", "name"} when an LMS named it
    submitted_as: str = ""  # the folder or LMS name exactly as submitted
    digest: str = ""  # hash of the student's submitted files (names and bytes): same bytes, same digest


@dataclass
class _Candidate:
    """A file that may be a student's notebook."""

    path: Path
    shown: str  # the name as the student (or LMS) gave it
    mtime: float
    name_says: str | None  # notebook named by the file name, if any
    lms: dict = field(default_factory=dict)  # the LMS's own ids for the student, from the file or folder name


def _safe_char(c: str) -> bool:
    """Whether c may stand as it is in a student id: a letter, mark or digit of any script, or one of ` _.-'`."""
    return unicodedata.category(c)[0] in "LMN" or c in " _.-'"


def _escaped(text: str) -> str:
    """text with every character unsafe in an id replaced by '_', trimmed of what may not start or end one."""
    return re.sub(r"_+", "_", "".join(c if _safe_char(c) else "_" for c in text)).strip(" _.-'")[:ID_CHARS]


def student_id(raw: str, lms: Mapping[str, str] | None = None) -> str:
    """The student's id: a function of their own submission only (folder name, or LMS name and user id).

    A folder name that is already safe (NFC Unicode letters, marks, digits, spaces and `_.-'`, not starting or
    ending with a space or punctuation, at most ID_CHARS characters) is the id as it is: '李明', 'Anna Lee',
    'Anna_Lee'. Any other name is escaped and given a stable hash of its exact text ('a/b*c' -> 'a_b_c~9f0c3e2a1b');
    an LMS user is named '<name>~<lms><user id>' ('Jane Doe~moodle123'). '~' is never safe, so ids of the
    three kinds can never coincide: two different submissions never share an id, whatever else is in the batch.
    """
    if lms and lms.get("user_id"):
        return f"{_escaped(unicodedata.normalize('NFC', raw)) or 'student'}~{lms['lms']}{lms['user_id']}"
    if raw == unicodedata.normalize("NFC", raw) and raw == _escaped(raw) and raw:
        return raw
    digest = hashlib.blake2b(raw.encode("utf-8", "surrogateescape"), digest_size=5).hexdigest()
    return f"{_escaped(unicodedata.normalize('NFC', raw)) or 'student'}~{digest}"


def look_alike_key(name: str) -> str:
    """What two names that a reader cannot tell apart share ('Anna Lee', 'anna_lee', 'Zoë' in NFC or NFD)."""
    return re.sub(r"[\s_.\-']+", " ", unicodedata.normalize("NFKC", name).casefold()).strip()


def notebook_from_name(filename: str) -> str | None:
    """The notebook a file name refers to ('Copy of NMT (2).ipynb' -> 'nmt'), or None.

    Inputs:
    - filename: str, the base name (LMS prefix already removed).
    Returns:
    - one of NOTEBOOK_NAMES, or None when the name names none or several.
    """
    stem = filename
    for ext in (".ipynb", ".json", ".txt", ".py", ".html", ".pdf"):
        if stem.lower().endswith(ext):
            stem = stem[: -len(ext)]
    tokens = set(re.split(r"[^a-z0-9]+", stem.lower()))
    hits = [n for n in NOTEBOOK_NAMES if n in tokens]
    return hits[0] if len(hits) == 1 else None


def _entry_target(dest: Path, name: str) -> Path | None:
    """Where a zip entry called `name` unpacks under dest, or None for what is never unpacked (absolute, '..')."""
    name = name.replace("\\", "/")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts or name.startswith("/") or name.endswith("/"):
        return None
    return dest.joinpath(*parts)


def _damaged(target: Path, why: str, damaged: dict[Path, str]) -> None:
    """Record a zip entry that could not be read: an empty file stands in for it, so it is graded as damaged."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"")
    damaged[target] = why


def _safe_unzip(archive: Path, dest: Path, notes: list[str] | None = None) -> dict[Path, str]:
    """Unpack a zip into dest: no absolute paths, no '..', no links, bounded size; keeps file times.

    A damaged zip is salvaged: every entry that reads is unpacked, every one that does not is recorded (an empty
    file stands in for it), and a zip whose index is lost (truncated) is read entry by entry from its start.
    Returns:
    - {unpacked path: one-line reason} for the entries that could not be read.
    """
    notes = [] if notes is None else notes
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        notes.append(f"{archive.name}: {exc}; salvaging the entries that can be read")
        return _salvage(archive, dest, notes)
    damaged, total = {}, 0
    with zf:
        for info in zf.infolist():
            target = _entry_target(dest, info.filename)
            if target is None or info.is_dir() or (info.external_attr >> 16) & 0o170000 == 0o120000:  # links too
                continue
            total += info.file_size
            if total > MAX_ZIP_BYTES:
                notes.append(f"{archive.name} unpacks to more than {MAX_ZIP_BYTES // 2**30} GB: the rest is not read")
                break
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with zf.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError) as exc:
                _damaged(target, f"damaged in the zip ({type(exc).__name__}: {one_line(str(exc), 80)})", damaged)
                continue
            stamp = time.mktime(info.date_time + (0, 0, -1))
            os.utime(target, (stamp, stamp))
    return damaged


LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")  # a zip entry's local header (signature PK\3\4 ... name, extra)


def _salvage(archive: Path, dest: Path, notes: list[str]) -> dict[Path, str]:
    """Unpack what can be read of a zip whose index is lost: its entries one by one from their local headers."""
    data = archive.read_bytes()[: MAX_ZIP_BYTES + 2**20]
    damaged, pos, found = {}, data.find(b"PK\x03\x04"), 0
    while pos >= 0 and pos + LOCAL_HEADER.size <= len(data):
        _, _, flags, method, mtime, mdate, crc, csize, _, nlen, xlen = LOCAL_HEADER.unpack_from(data, pos)
        raw_name = data[pos + LOCAL_HEADER.size : pos + LOCAL_HEADER.size + nlen]
        name = raw_name.decode("utf-8" if flags & 0x800 else "cp437", errors="replace")
        start = pos + LOCAL_HEADER.size + nlen + xlen
        target = _entry_target(dest, name)
        content, why, end = _read_entry(data, start, flags, method, crc, csize)
        if target is not None:
            found += 1
            if content is None:
                _damaged(target, f"damaged in the zip ({why})", damaged)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
                stamp = time.mktime(
                    (
                        (mdate >> 9) + 1980,
                        (mdate >> 5) & 15,
                        mdate & 31,
                        mtime >> 11,
                        (mtime >> 5) & 63,
                        (mtime & 31) * 2,
                        0,
                        0,
                        -1,
                    )
                )
                os.utime(target, (stamp, stamp))
        pos = data.find(b"PK\x03\x04", max(end, pos + 4))
    notes.append(
        f"{archive.name}: salvaged {found - len(damaged)} entries, {len(damaged)} damaged; entries past the damage may be lost"
    )
    return damaged


def _read_entry(
    data: bytes, start: int, flags: int, method: int, crc: int, csize: int
) -> tuple[bytes | None, str, int]:
    """(content or None, why not, where the entry ends) for the entry whose data begins at `start`."""
    known_size = not flags & 0x08  # else the sizes and CRC follow the data (a data descriptor)
    if method == 0 and known_size:
        content = data[start : start + csize]
        if len(content) < csize:
            return None, "truncated", len(data)
    elif method == 8:
        inflate = zlib.decompressobj(-15)
        try:
            content = inflate.decompress(
                data[start : start + csize] if known_size else data[start:], MAX_NOTEBOOK_BYTES
            )
        except zlib.error as exc:
            return None, f"corrupt data: {exc}", start + 1
        if not inflate.eof:
            return None, "truncated", len(data)
        end = start + (csize if known_size else len(data) - start - len(inflate.unused_data))
        if not known_size:
            return content, "", end
    else:
        return None, f"compression method {method} cannot be read here", start + (csize if known_size else 1)
    if zlib.crc32(content) != crc:
        return None, "CRC check failed", start + csize
    return content, "", start + csize


def _files_under(folder):
    """Every regular file below folder, skipping hidden and junk folders."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in JUNK_DIRS and not d.startswith("."))
        for f in sorted(files):
            p = Path(root) / f
            if not f.startswith(".") and p.is_file() and not p.is_symlink():
                found.append(p)
    return found


def discover(root: Path | str, unwrap: bool = False) -> dict[str, tuple[str, list[_Candidate]]]:
    """Map each student to their candidate files.

    Inputs:
    - root: folder of student folders (possibly Moodle-named), or of Canvas-named files, or both.
    - unwrap: descend through single wrapping folders first (what an LMS zip often has).
    Returns:
    - {student_id: (raw folder or file name, [_Candidate])}
    """
    root = Path(root)
    while True:
        entries = [p for p in root.iterdir() if not p.name.startswith(".") and p.name not in JUNK_DIRS]
        only = entries[0] if len(entries) == 1 and entries[0].is_dir() else None
        holds_notebooks = only and any(
            f.is_file() and not CANVAS.match(f.name) and notebook_from_name(f.name) for f in only.iterdir()
        )
        if unwrap and only and not holds_notebooks:  # a wrapper folder, not a student's folder
            root = entries[0]
        else:
            break
    students = {}

    def add(raw, candidate=None, lms=None):
        sid = student_id(raw, lms)
        students.setdefault(sid, (raw, []))
        if candidate is not None:
            students[sid][1].append(candidate)

    for entry in sorted(entries):
        if entry.is_dir():
            m = MOODLE.match(entry.name)
            raw = m.group("name") if m else entry.name
            lms = {"lms": "moodle", "user_id": m.group("uid"), "name": raw} if m else {}
            add(raw, lms=lms)
            for f in _files_under(entry):
                shown = str(f.relative_to(entry))
                add(raw, _Candidate(f, shown, f.stat().st_mtime, notebook_from_name(f.name), lms), lms)
        elif entry.is_file():
            m = CANVAS.match(entry.name)
            if not m:
                log.warning("ignored %s: not in a student folder and not an LMS (Canvas) file name", entry.name)
                continue
            filename = re.sub(r"-\d+(?=\.[A-Za-z]+$)", "", m.group("file"))  # Canvas resubmission suffix
            lms = {"lms": "canvas", "user_id": m.group("uid"), "name": m.group("login"), "file_id": m.group("sid")}
            if m.group("late"):  # issue 24: Canvas says late (no time): the late policy's one unit
                lms["late"] = True
            add(
                m.group("login"),
                _Candidate(entry, entry.name, entry.stat().st_mtime, notebook_from_name(filename), lms),
                lms,
            )
    return students


def _sniff(data):
    """Why bytes that should be a notebook are not one (one line), or None when they parse as JSON."""
    if not data.strip():
        return "empty file (0 bytes)" if not data else "empty file (only whitespace)"
    head = data[:8]
    for magic, what in (
        (b"%PDF", "a PDF file"),
        (b"PK\x03\x04", "a zip archive"),
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
    ):
        if head.startswith(magic):
            return f"not a notebook: the file is {what}"
    text = data.decode("utf-8", errors="replace").lstrip()
    if text[:1] in "<":
        return "not a notebook: the file is HTML or XML (exported instead of downloaded as .ipynb?)"
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        if not text.startswith(("{", "[")):
            return "not a notebook: the file is plain text or Python source, not notebook JSON"
        return f"not a notebook: invalid JSON (line {e.lineno}, column {e.colno}: {e.msg}; truncated download?)"
    return None


def read_notebook(path: Path) -> tuple[NotebookNode | None, str | None, list[str]]:
    """Parse a submitted file as a v4 notebook.

    Returns:
    - (notebook or None, one-line problem or None, repairs list)
    """
    size = path.stat().st_size
    if size > MAX_NOTEBOOK_BYTES:
        return None, f"not graded: the file is {size // 2**20} MB (limit {MAX_NOTEBOOK_BYTES // 2**20} MB)", []
    data = path.read_bytes()
    problem = _sniff(data)
    if problem:
        return None, problem, []
    raw = json.loads(data.decode("utf-8", errors="replace"))
    if not isinstance(raw, dict) or not ("cells" in raw or "worksheets" in raw):
        return None, "not a notebook: JSON without notebook cells", []
    repairs = []
    major, minor = raw.get("nbformat"), raw.get("nbformat_minor")
    if major is None:
        raw["nbformat"], raw["nbformat_minor"] = 4, 0
        repairs.append("notebook had no nbformat version: read as nbformat 4")
    try:
        nb = nbformat.reads(json.dumps(raw), as_version=4)
    except Exception as e:  # nbformat raises several kinds for broken structure
        return None, f"not a notebook: {type(e).__name__}: {one_line(str(e), 150)}", []
    if major is not None and (major, minor) != (4, 5):
        repairs.append(f"upgraded nbformat {major}.{minor} to 4.5 (cell ids added)")
    return nb, None, repairs


def _gid(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta.get("grade_id") if isinstance(meta, dict) else None


def _norm(source):
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _defined_names(source):
    """Top-level def/class names in a code cell (empty when it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(re.findall(r"^(?:def|class)\s+([A-Za-z_]\w*)", source, re.M))
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def identify(nb: NotebookNode, releases: dict[str, NotebookNode]) -> tuple[str | None, int]:
    """Which release notebook `nb` is, by content: (name, matches) with the most matches, or (None, 0)."""
    best, best_score = None, 0
    for name, rel in releases.items():
        rel_ids = {_gid(c) for c in rel.cells} - {None}
        rel_src = {_norm(c.source) for c in rel.cells if len(c.source.strip()) > 40}
        score = sum(1 for c in nb.cells if _gid(c) in rel_ids) + sum(1 for c in nb.cells if _norm(c.source) in rel_src)
        if (nb.metadata.get("a3") or {}).get("notebook") == name:
            score += 5
        if score > best_score:
            best, best_score = name, score
    return best, best_score


def completeness(nb: NotebookNode, rel: NotebookNode) -> int:
    """How many solution cells of rel the student filled in (source differs from the release stub)."""
    stubs = {_gid(c): _norm(c.source) for c in rel.cells if (c.metadata.get("nbgrader") or {}).get("solution")}
    done = 0
    for c in nb.cells:
        gid = _gid(c)
        if gid in stubs and _norm(c.source) != stubs[gid] and "NotImplementedError" not in c.source:
            done += 1
    return done


def _clean_metadata(nb, rel, repairs):
    """Colab/editor metadata out, the release kernelspec in."""
    removed = [k for k in COLAB_NB_KEYS if k in nb.metadata]
    for k in removed:
        del nb.metadata[k]
    spec = nb.metadata.get("kernelspec", {})
    spec = spec if isinstance(spec, dict) else {}  # a hand-edited kernelspec that is not even a mapping
    want = rel.metadata.get("kernelspec") or {"display_name": "Python 3", "language": "python", "name": "python3"}
    if spec != want:
        nb.metadata["kernelspec"] = dict(want)
        if spec.get("name") != want.get("name") or removed:
            removed.append(f"kernelspec {spec.get('name', 'none')!r} -> {want['name']!r}")
    n_cells = 0
    for cell in nb.cells:
        junk = [k for k in COLAB_CELL_KEYS if k in cell.metadata]
        for k in junk:
            del cell.metadata[k]
        n_cells += bool(junk)
    if removed or n_cells:
        what = ", ".join(removed) + (f"; Colab metadata of {n_cells} cells" if n_cells else "")
        repairs.append(f"removed editor metadata: {what.strip('; ')}")


def _release_meta(cell):
    meta = {k: v for k, v in cell.metadata.items() if k in ("nbgrader", "deletable", "editable")}
    return json.loads(json.dumps(meta))


def _placeholder(rel_cell):
    """Stand-in for a deleted solution cell: defines nothing, so it never overwrites a definition elsewhere."""
    if rel_cell.cell_type == "markdown":
        cell = nbformat.v4.new_markdown_cell("*(This answer cell was missing from the submission.)*")
    else:
        cell = nbformat.v4.new_code_cell("# This solution cell was missing from the submission (restored empty).")
    cell.metadata = _release_meta(rel_cell)
    return cell


@dataclass
class CellMap:
    """Which student cell stands for which release cell, built up by the repair steps that find them."""

    pos: dict[int, int] = field(default_factory=dict)  # release cell index -> student cell index, in order found
    claimed: set[int] = field(default_factory=set)  # student cell indices already taken by a release cell


def _release_by_id(rel):
    return {_gid(c): (i, c) for i, c in enumerate(rel.cells) if _gid(c)}


def _locked(rel_cell):
    return rel_cell.metadata["nbgrader"].get("locked")


def _release_copy(rel_cell):
    return nbformat.from_dict(json.loads(json.dumps(rel_cell)))


def remove_unknown_nbgrader_metadata(nb: NotebookNode, rel: NotebookNode) -> list[str]:
    """Remove nbgrader metadata whose grade id the release does not have (nbgrader would reject it).

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    Returns:
    - one repair line per removed grade id (none for empty metadata).
    """
    rel_by_id = _release_by_id(rel)
    repairs = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if meta is not None and (not isinstance(meta, dict) or meta.get("grade_id") not in rel_by_id):
            shown = meta.get("grade_id") if isinstance(meta, dict) else None
            del cell.metadata["nbgrader"]
            if shown or isinstance(meta, dict) and meta:
                repairs.append(f"removed nbgrader metadata with unknown grade id {shown!r}")
    return repairs


def _resolve_duplicate(nb, js, rel_cell):
    """Which of the cells js sharing rel_cell's grade id keeps it: (index kept, how, indices to drop)."""
    if _locked(rel_cell):
        same = [j for j in js if _norm(nb.cells[j].source) == _norm(rel_cell.source)]
        return (same or js)[0], "kept the unedited copy", []
    if rel_cell.cell_type == "markdown":
        nb.cells[js[0]].source = "\n\n".join(nb.cells[j].source for j in js)
        return js[0], "merged the answer into the first", js[1:]
    return js[-1], "kept the last one (it is the definition that runs last)", []


def resolve_duplicate_grade_ids(nb: NotebookNode, rel: NotebookNode) -> list[str]:
    """Leave each grade id on one cell when a student copied or split a graded cell.

    A locked cell keeps its unedited copy, a written answer is merged into its first cell (the others
    are dropped), a code cell keeps its last copy (the definition that runs last); the other copies
    become ordinary cells.

    Inputs:
    - nb: the student's notebook (v4), changed in place; every grade id in it is the release's.
    - rel: the release notebook.
    Returns:
    - one repair line per duplicated grade id.
    """
    rel_by_id = _release_by_id(rel)
    seen = defaultdict(list)
    for j, cell in enumerate(nb.cells):
        if _gid(cell):
            seen[_gid(cell)].append(j)
    drop, repairs = set(), []
    for gid, js in seen.items():
        if len(js) < 2:
            continue
        keep, how, dropped = _resolve_duplicate(nb, js, rel_by_id[gid][1])
        drop.update(dropped)
        for j in js:
            if j != keep:
                del nb.cells[j].metadata["nbgrader"]
        repairs.append(f"grade id {gid!r} was on {len(js)} cells (copied or split cell): {how}")
    nb.cells = [c for j, c in enumerate(nb.cells) if j not in drop]
    return repairs


def _unchanged_copy(nb, rel_cell, start, claimed):
    """Index of the first unclaimed student cell from `start` on that is rel_cell unchanged, or None."""
    src = _norm(rel_cell.source)
    for j in range(start, len(nb.cells)):
        if j not in claimed and nb.cells[j].cell_type == rel_cell.cell_type and _norm(nb.cells[j].source) == src:
            return j
    return None


def restore_metadata_by_source(nb: NotebookNode, rel: NotebookNode, cells: CellMap) -> list[str]:
    """Anchor the release cells the student kept: by grade id, else by unchanged source (metadata put back).

    Release cells are matched in release order, each unchanged source only after the previous anchor.

    Inputs:
    - nb: the student's notebook (v4), changed in place; no grade id is on two cells.
    - rel: the release notebook.
    - cells: an empty CellMap; receives the anchors.
    Returns:
    - one repair line per graded cell whose metadata was restored.
    """
    where = {_gid(c): j for j, c in enumerate(nb.cells) if _gid(c)}
    cells.claimed.update(where.values())
    repairs, start = [], 0
    for i, rc in enumerate(rel.cells):
        gid = _gid(rc)
        if gid in where:
            cells.pos[i] = where[gid]
            start = max(start, where[gid] + 1)
            continue
        if not _norm(rc.source):
            continue
        j = _unchanged_copy(nb, rc, start, cells.claimed)
        if j is None:
            continue
        cells.pos[i], start = j, j + 1
        cells.claimed.add(j)
        if gid:
            nb.cells[j].metadata["nbgrader"] = _release_meta(rc)["nbgrader"]
            repairs.append(f"restored lost nbgrader metadata of {gid!r} (matched by source)")
    return repairs


def _cells_between_anchors(nb, i, rel_cell, cells):
    """Unclaimed student cells without a grade id that may be release cell i: between its anchors, same type;
    for a code cell, those that define the release cell's names (none when it defines names none of them do)."""
    before = max((cells.pos[k] for k in cells.pos if k < i), default=-1)
    after = min((cells.pos[k] for k in cells.pos if k > i), default=len(nb.cells))
    gap = [
        j
        for j in range(before + 1, after)
        if j not in cells.claimed and not _gid(nb.cells[j]) and nb.cells[j].cell_type == rel_cell.cell_type
    ]
    if rel_cell.cell_type == "code":
        names = _defined_names(rel_cell.source)
        by_name = [j for j in gap if names and names <= _defined_names(nb.cells[j].source)]
        gap = by_name or ([] if names else gap)
    return gap


def restore_metadata_by_position(nb: NotebookNode, rel: NotebookNode, cells: CellMap) -> list[str]:
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
    for i, rc in enumerate(rel.cells):
        gid = _gid(rc)
        if not gid or i in cells.pos or _locked(rc):
            continue
        gap = _cells_between_anchors(nb, i, rc, cells)
        if gap:
            j = gap[0]
            nb.cells[j].metadata["nbgrader"] = _release_meta(rc)["nbgrader"]
            cells.pos[i] = j
            cells.claimed.add(j)
            repairs.append(f"restored lost nbgrader metadata of {gid!r} (matched by position)")
    return repairs


def restore_deleted_cells(nb: NotebookNode, rel: NotebookNode, cells: CellMap) -> list[str]:
    """Put deleted graded and locked cells back where they were: locked ones as released, solutions empty.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - cells: every release cell found so far; receives the restored ones (and shifted indices).
    Returns:
    - one repair line per restored cell.
    """
    repairs = []
    for i, rc in enumerate(rel.cells):
        gid = _gid(rc)
        if not gid or i in cells.pos:
            continue
        at = max((cells.pos[k] + 1 for k in cells.pos if k < i), default=0)
        locked = _locked(rc)
        nb.cells.insert(at, _release_copy(rc) if locked else _placeholder(rc))
        cells.pos = {k: (v + 1 if v >= at else v) for k, v in cells.pos.items()}
        cells.pos[i] = at
        kind = "test cell" if gid.startswith("test_") else ("locked cell" if locked else "solution cell")
        repairs.append(f"restored deleted {kind} {gid!r}" + ("" if locked else " (empty: it scores 0)"))
    return repairs


def _reset_graded_cell(nb, j, rel_cell):
    """Make student cell j rel_cell's graded cell again; returns its repair lines."""
    cell, gid = nb.cells[j], _gid(rel_cell)
    tags = [t for t in cell.metadata.get("tags", []) if t in SKIP_TAGS]
    repairs = [f"removed tag(s) {', '.join(tags)} from {gid!r}"] if tags else []
    if _locked(rel_cell):
        if _norm(cell.source) != _norm(rel_cell.source) or cell.cell_type != rel_cell.cell_type:
            repairs.append(f"restored the edited locked cell {gid!r}")
        nb.cells[j] = _release_copy(rel_cell)
        return repairs
    if cell.cell_type != rel_cell.cell_type:
        repairs.append(f"changed {gid!r} back to a {rel_cell.cell_type} cell")
        new = nbformat.v4.new_code_cell if rel_cell.cell_type == "code" else nbformat.v4.new_markdown_cell
        nb.cells[j] = cell = new(cell.source)
    keep = {k: v for k, v in cell.metadata.items() if k not in ("nbgrader", "deletable", "editable", "tags")}
    rest = [t for t in cell.metadata.get("tags", []) if t not in SKIP_TAGS]
    cell.metadata = dict(keep, **_release_meta(rel_cell), **({"tags": rest} if rest else {}))
    cell["id"] = rel_cell.get("id", cell.get("id"))
    return repairs


def reset_graded_cells(nb: NotebookNode, rel: NotebookNode, cells: CellMap) -> list[str]:
    """Give every graded cell the release's metadata and type, and locked cells the release's source,
    so that no tag or flag switches one off.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - cells: where each release cell is in nb.
    Returns:
    - repair lines: skip tags removed, edited locked cells restored, cell types changed back.
    """
    repairs = []
    for i, j in cells.pos.items():
        if _gid(rel.cells[i]):
            repairs += _reset_graded_cell(nb, j, rel.cells[i])
    return repairs


def fix_cell_ids(nb: NotebookNode, rel: NotebookNode, cells: CellMap) -> list[str]:
    """Cell ids: the release's on graded cells, unique valid ids ('s<index>') on the others.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - cells: where each release cell is in nb.
    Returns:
    - one repair line counting the duplicate or invalid ids replaced (none when there were none).
    """
    graded = [(i, j) for i, j in cells.pos.items() if _gid(rel.cells[i])]
    used = {nb.cells[j].get("id") for i, j in graded}
    for i, j in graded:
        if rel.cells[i].get("id"):
            nb.cells[j]["id"] = rel.cells[i]["id"]
    fixed = 0
    for j, cell in enumerate(nb.cells):
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


def repair_cells(nb: NotebookNode, rel: NotebookNode, repairs: list[str]) -> None:
    """Make nb's graded cells match rel's: ids, lost metadata, duplicates, deleted cells, test-cell tags.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - repairs: list that receives one line per repair.
    """
    repairs.extend(remove_unknown_nbgrader_metadata(nb, rel))
    repairs.extend(resolve_duplicate_grade_ids(nb, rel))
    cells = CellMap()
    for step in (
        restore_metadata_by_source,
        restore_metadata_by_position,
        restore_deleted_cells,
        reset_graded_cells,
        fix_cell_ids,
    ):
        repairs.extend(step(nb, rel, cells))


def load_releases(release: Path | str) -> dict[str, NotebookNode]:
    """{name: release notebook} for the notebooks present in `release`."""
    found = {}
    for name in NOTEBOOK_NAMES:
        path = Path(release) / f"{name}.ipynb"
        if path.exists():
            found[name] = nbformat.read(path, as_version=4)
    return found


def _prepare(candidate, releases, damaged):
    """Read and identify one candidate: (notebook name or None, nb or None, problem or None, repairs)."""
    if candidate.path in damaged:
        return candidate.name_says, None, f"{candidate.shown!r} could not be read: {damaged[candidate.path]}", []
    nb, problem, repairs = read_notebook(candidate.path)
    if nb is None:
        return candidate.name_says, None, problem, repairs
    name, score = identify(nb, releases)
    if score < 3:
        if candidate.name_says and candidate.name_says not in releases:
            return candidate.name_says, nb, None, repairs  # no release to compare with: taken as is
        problem = "not this assignment's notebook (none of its cells match the A3 release)"
        return candidate.name_says, None, problem, repairs
    if candidate.name_says and name != candidate.name_says:
        repairs.append(f"{candidate.shown!r} holds the {name} notebook: graded as {name}")
    return name, nb, None, repairs


def _sort_candidates(candidates, releases, damaged):
    """Read and identify each of a student's files.

    Returns:
    - by_nb: {notebook name: [(candidate, nb or None, problem or None, repairs)]}
    - problems: {notebook name: one-line status} for files named after a notebook that are no .ipynb
    - others: the names (as shown) of files that are none of the notebooks
    """
    by_nb, problems, others = defaultdict(list), {}, []
    for cand in candidates:
        is_ipynb = cand.path.suffix.lower() == ".ipynb"
        if not is_ipynb and not cand.name_says:
            others.append(cand.shown)
            continue
        name, nb, problem, repairs = _prepare(cand, releases, damaged)
        if not is_ipynb and nb is None:  # e.g. nmt.pdf or nmt.py instead of the notebook
            problems.setdefault(cand.name_says, f"not a notebook: {cand.shown!r} is not an .ipynb file")
            continue
        if name is None:
            others.append(cand.shown)
            continue
        by_nb[name].append((cand, nb, problem, repairs))
    return by_nb, problems, others


def _missing_status(name, problems, others):
    """The status of a notebook the student has no file for: its problem, or 'missing' and what was found."""
    status = problems.get(name)
    if status is None:
        status = "missing" + (f" (found only: {', '.join(others[:5])})" if others else "")
    return status


def _pick(name, options, rel):
    """The option to grade (most complete, then newest) and the line that says which file was taken, or None."""

    def rank(o):
        cand, nb, problem, _ = o
        return (nb is not None, completeness(nb, rel) if nb is not None and rel else 0, cand.mtime)

    options.sort(key=rank, reverse=True)
    cand = options[0][0]
    if len(options) > 1:
        rest = ", ".join(repr(o[0].shown) for o in options[1:])
        return options[0], (
            f"{len(options)} files for {name}: took {cand.shown!r} (most complete, then newest); ignored {rest}"
        )
    if cand.shown != f"{name}.ipynb":
        return options[0], f"took {cand.shown!r} as {name}.ipynb"
    return options[0], None


def _clear_outputs(nb):
    """Outputs, execution counts and attachments off every code cell."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.pop("attachments", None)


def _repair(nb, rel, repairs):
    """Repair nb against rel (when there is one) into a valid nbformat 4.5 notebook: None, or why it is not one."""
    if rel is not None:
        _clean_metadata(nb, rel, repairs)
        repair_cells(nb, rel, repairs)
    nb.nbformat, nb.nbformat_minor = 4, 5
    try:
        nbformat.validate(nb)
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


def submission_digest(raw: str, files: Iterable[tuple[str, Path]]) -> str:
    """Hash of what one student submitted: their name as submitted, then each file's name (as shown) and bytes."""
    h = hashlib.sha256(raw.encode("utf-8", "surrogateescape") + b"\0")
    for shown, path in sorted(files):
        h.update(shown.encode("utf-8", "surrogateescape") + b"\0")
        with open(path, "rb") as f:
            while chunk := f.read(2**20):
                h.update(chunk)
        h.update(b"\0")
    return h.hexdigest()


def _expand_zips(student, candidates, staging, damaged):
    """A student's candidates with each zip they submitted replaced by its files (unpacked with the LMS zip's
    safety rules, one level deep), and a line per zip saying what it held."""
    out, lines = [], []
    for n, cand in enumerate(candidates):
        if cand.path.suffix.lower() != ".zip":
            out.append(cand)
            continue
        into = staging / ".zips" / student / str(n)
        shutil.rmtree(into, ignore_errors=True)
        notes = []
        bad = _safe_unzip(cand.path, into, notes)
        damaged.update(bad)
        inner = _files_under(into) if into.exists() else []
        for f in inner:
            shown = f"{cand.shown}/{f.relative_to(into)}"
            out.append(_Candidate(f, shown, f.stat().st_mtime, notebook_from_name(f.name), cand.lms))
        lines.append(f"unpacked {cand.shown!r}: {len(inner)} files" + (f", {len(bad)} damaged" if bad else ""))
        lines += [one_line(note) for note in notes]
    return out, lines


def ingest_student(
    student: str,
    raw: str,
    candidates: list[_Candidate],
    releases: dict[str, NotebookNode],
    staging: Path,
    damaged: dict[Path, str] | None = None,
) -> list[Submission]:
    """Pick and repair one student's notebooks.

    Inputs:
    - student: the student's id; raw: the name the student (or LMS) gave, logged when it differs.
    - candidates: the student's files (from discover).
    - releases: {name: release notebook} (from load_releases).
    - staging: repaired notebooks are written to staging/<student>/<notebook>.ipynb.
    - damaged: {path: why} of the files that could not be read from a zip (receives those of the student's zips).
    Returns:
    - one Submission per notebook of contract.NOTEBOOKS, in that order.
    """
    damaged = {} if damaged is None else damaged
    header = [] if raw == student else [f"student {raw!r} is graded as {student!r}"]
    lms = next((c.lms for c in candidates if c.lms), {})
    if any(c.lms.get("late") for c in candidates):  # issue 24: a file Canvas marked late makes the submission late
        lms = dict(lms, late=True)
    digest = submission_digest(raw, [(c.shown, c.path) for c in candidates])
    candidates, unpacked = _expand_zips(student, candidates, staging, damaged)
    header += unpacked
    by_nb, problems, others = _sort_candidates(candidates, releases, damaged)
    out = []

    def submission(name, path, status, repairs):
        return Submission(student, name, path, status, list(repairs), dict(lms), raw, digest)

    for name in NOTEBOOK_NAMES:
        if not by_nb.get(name):
            out.append(submission(name, None, _missing_status(name, problems, others), header))
            continue
        rel = releases.get(name)
        (cand, nb, problem, repairs), took = _pick(name, by_nb[name], rel)
        repairs = header + ([took] if took else []) + repairs
        if nb is None:
            out.append(submission(name, None, problem, repairs))
            continue
        try:
            problem = _repair(nb, rel, repairs)
        except Exception as exc:  # damage no repair step knows: this notebook is recorded, the batch goes on
            problem = f"could not be repaired: {type(exc).__name__}: {one_line(str(exc), 150)}"
        if problem:
            out.append(submission(name, None, problem, repairs))
            continue
        dest = staging / student / f"{name}.ipynb"
        dest.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, dest)
        out.append(submission(name, dest, "ok", repairs))
    return out


def _default_release(staging):
    """The grading template's release next to staging (what `grade` compiles from source), else release/a3."""
    template = staging.parent / "template" / "release"
    return template if any(template.glob("*.ipynb")) else paths.RELEASE


def _unpack(archive, staging, notes):
    """Unpack an LMS zip into staging/.unpacked (emptied first): (that folder, {path: why} of damaged entries)."""
    unpacked = staging / ".unpacked"
    shutil.rmtree(unpacked, ignore_errors=True)
    unpacked.mkdir()
    return unpacked, _safe_unzip(archive, unpacked, notes)


def ingest(
    submissions: Path | str,
    staging: Path | str,
    release: Path | str | None = None,
    notes: list[str] | None = None,
) -> list[Submission]:
    """Find, pick and repair every student's notebooks.

    Inputs:
    - submissions: Path of a folder (one sub-folder per student, Moodle names accepted; or Canvas-named
      files) or of an LMS zip of the same.
    - staging: Path; repaired notebooks are written to staging/<student>/<notebook>.ipynb.
    - release: folder of release notebooks to repair against. Default: the grading template's release
      next to staging (OUT/.cache/template/release, what `grade` compiles from source) when it exists,
      else release/a3.
    - notes: list that receives one line per problem of the batch as a whole (a damaged LMS zip).
    Returns:
    - list of Submission, one per student x notebook (contract.NOTEBOOKS), sorted by student.
    """
    submissions, staging = Path(submissions), Path(staging)
    releases = load_releases(_default_release(staging) if release is None else release)
    staging.mkdir(parents=True, exist_ok=True)
    damaged = {}
    if submissions.is_file():
        submissions, damaged = _unpack(submissions, staging, [] if notes is None else notes)
    out = []
    for student, (raw, candidates) in sorted(discover(submissions, unwrap=submissions.name == ".unpacked").items()):
        out += ingest_student(student, raw, candidates, releases, staging, damaged)
    return out
