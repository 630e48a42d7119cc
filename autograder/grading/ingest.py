"""Ingest: turn a folder (or LMS zip) of raw submissions into one repaired notebook per student x notebook.

Real submissions come back from Colab and LMS downloads damaged. `ingest()` finds each student's
notebooks under Colab/LMS names, picks one file when there are several, and repairs what it can
against the release notebook: nbformat version and cell ids, Colab metadata and kernelspec, lost
nbgrader metadata (same source first, then position), deleted locked and test cells, duplicated grade
ids, tags and flags that would switch a test cell off. Every repair is one line; every student x
notebook gets a Submission, with status "ok", "missing" or a one-line reason, so nothing is lost.
"""
import ast
import json
import logging
import os
import re
import shutil
import time
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder import paths
from autograder import contract

log = logging.getLogger(__name__)

NOTEBOOK_NAMES = contract.NOTEBOOKS
SKIP_TAGS = {"skip-execution", "raises-exception", "skip", "remove-cell", "remove_cell"}
COLAB_NB_KEYS = ("colab", "accelerator", "widgets", "gpuClass", "varInspector", "toc", "vscode")
COLAB_CELL_KEYS = ("colab", "executionInfo", "outputId", "id", "cellView", "pycharm")
MAX_ZIP_BYTES = 2 * 2**30  # refuse to unpack more than this from one LMS zip
MAX_NOTEBOOK_BYTES = 200 * 2**20
JUNK_DIRS = {"__MACOSX", ".ipynb_checkpoints", "__pycache__", ".git"}
CANVAS = re.compile(r"^(?P<login>[A-Za-z0-9.\-]+)(?:_LATE)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<file>.+)$")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<uid>\d+)_assignsubmission_[a-z]+_?$")
ID_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass
class Submission:
    """One student x notebook: the repaired notebook (or None) and how it got there."""

    student: str
    notebook: str
    path: Path | None
    status: str  # "ok", "missing", or a one-line reason it cannot be graded
    repairs: list[str] = field(default_factory=list)
    lms: dict = field(default_factory=dict)  # {"lms": "canvas" or "moodle", "user_id", "name"} when an LMS named it


@dataclass
class _Candidate:
    """A file that may be a student's notebook."""

    path: Path
    shown: str  # the name as the student (or LMS) gave it
    mtime: float
    name_says: str | None  # notebook named by the file name, if any
    lms: dict = field(default_factory=dict)  # the LMS's own ids for the student, from the file or folder name


def slug(text):
    """A student id safe for paths and the gradebook: runs of other characters become '_'."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_.") or "student"


def notebook_from_name(filename):
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


def _safe_unzip(archive, dest):
    """Unpack an LMS zip into dest: no absolute paths, no '..', no links, bounded size; keeps file times."""
    total = 0
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            name = info.filename.replace("\\", "/")
            parts = [p for p in name.split("/") if p not in ("", ".")]
            if not parts or ".." in parts or name.startswith("/") or info.is_dir():
                continue
            if (info.external_attr >> 16) & 0o170000 == 0o120000:  # symlink entry
                continue
            total += info.file_size
            if total > MAX_ZIP_BYTES:
                raise ValueError(f"{archive.name} unpacks to more than {MAX_ZIP_BYTES // 2**30} GB")
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
            stamp = time.mktime(info.date_time + (0, 0, -1))
            os.utime(target, (stamp, stamp))


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


def discover(root, unwrap=False):
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
        holds_notebooks = only and any(f.is_file() and not CANVAS.match(f.name) and notebook_from_name(f.name)
                                       for f in only.iterdir())
        if unwrap and only and not holds_notebooks:  # a wrapper folder, not a student's folder
            root = entries[0]
        else:
            break
    students, ids = {}, {}

    def student_id(raw, lms=None):
        """slug(raw), made unique: two different students never share an id. Two LMS users of the same name
        are told apart by their LMS user id, anyone else by a number."""
        key = (raw, (lms or {}).get("user_id"))
        if key not in ids:
            sid, n = slug(raw), 2
            if sid in students and key[1]:
                sid = f"{slug(raw)}_{key[1]}"
            while sid in students:
                sid, n = f"{slug(raw)}_{n}", n + 1
            ids[key] = sid
            students[sid] = (raw, [])
        return ids[key]

    def add(raw, candidate):
        students[student_id(raw, candidate.lms)][1].append(candidate)

    for entry in sorted(entries):
        if entry.is_dir():
            m = MOODLE.match(entry.name)
            raw = m.group("name") if m else entry.name
            lms = {"lms": "moodle", "user_id": m.group("uid"), "name": raw} if m else {}
            files = _files_under(entry)
            student_id(raw, lms)
            for f in files:
                shown = str(f.relative_to(entry))
                add(raw, _Candidate(f, shown, f.stat().st_mtime, notebook_from_name(f.name), lms))
        elif entry.is_file():
            m = CANVAS.match(entry.name)
            if not m:
                log.warning("ignored %s: not in a student folder and not an LMS (Canvas) file name", entry.name)
                continue
            filename = re.sub(r"-\d+(?=\.[A-Za-z]+$)", "", m.group("file"))  # Canvas resubmission suffix
            lms = {"lms": "canvas", "user_id": m.group("uid"), "name": m.group("login")}
            add(m.group("login"), _Candidate(entry, entry.name, entry.stat().st_mtime, notebook_from_name(filename),
                                             lms))
    return students


def _sniff(data):
    """Why bytes that should be a notebook are not one (one line), or None when they parse as JSON."""
    if not data.strip():
        return "empty file (0 bytes)" if not data else "empty file (only whitespace)"
    head = data[:8]
    for magic, what in ((b"%PDF", "a PDF file"), (b"PK\x03\x04", "a zip archive"), (b"\x89PNG", "a PNG image"),
                        (b"\xff\xd8\xff", "a JPEG image")):
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


def read_notebook(path):
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
        return None, f"not a notebook: {type(e).__name__}: {' '.join(str(e).split())[:150]}", []
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


def identify(nb, releases):
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


def completeness(nb, rel):
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


def repair_cells(nb, rel, repairs):
    """Make nb's graded cells match rel's: ids, lost metadata, duplicates, deleted cells, test-cell tags.

    Inputs:
    - nb: the student's notebook (v4), changed in place.
    - rel: the release notebook.
    - repairs: list that receives one line per repair.
    """
    rel_cells = rel.cells
    rel_by_id = {_gid(c): (i, c) for i, c in enumerate(rel_cells) if _gid(c)}
    # 1. nbgrader metadata that does not belong to this release
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if meta is not None and (not isinstance(meta, dict) or meta.get("grade_id") not in rel_by_id):
            shown = meta.get("grade_id") if isinstance(meta, dict) else None
            del cell.metadata["nbgrader"]
            if shown or isinstance(meta, dict) and meta:
                repairs.append(f"removed nbgrader metadata with unknown grade id {shown!r}")
    # 2. duplicated grade ids: a copied or split cell
    seen = defaultdict(list)
    for j, cell in enumerate(nb.cells):
        if _gid(cell):
            seen[_gid(cell)].append(j)
    drop = set()
    for gid, js in seen.items():
        if len(js) < 2:
            continue
        rel_cell = rel_by_id[gid][1]
        meta = rel_cell.metadata["nbgrader"]
        if meta.get("locked"):
            same = [j for j in js if _norm(nb.cells[j].source) == _norm(rel_cell.source)]
            keep, how = (same or js)[0], "kept the unedited copy"
        elif rel_cell.cell_type == "markdown":
            keep, how = js[0], "merged the answer into the first"
            nb.cells[keep].source = "\n\n".join(nb.cells[j].source for j in js)
            drop.update(js[1:])
        else:
            keep, how = js[-1], "kept the last one (it is the definition that runs last)"
        for j in js:
            if j != keep:
                del nb.cells[j].metadata["nbgrader"]
        repairs.append(f"grade id {gid!r} was on {len(js)} cells (copied or split cell): {how}")
    nb.cells = [c for j, c in enumerate(nb.cells) if j not in drop]
    # 3. anchors: cells that keep their grade id, or unchanged release cells, in release order
    pos = {}  # release index -> nb index
    where = {_gid(c): j for j, c in enumerate(nb.cells) if _gid(c)}
    claimed = set(where.values())
    p = 0
    for i, rc in enumerate(rel_cells):
        gid = _gid(rc)
        if gid in where:
            pos[i] = where[gid]
            p = max(p, where[gid] + 1)
            continue
        src = _norm(rc.source)
        if not src:
            continue
        for j in range(p, len(nb.cells)):
            if j not in claimed and nb.cells[j].cell_type == rc.cell_type and _norm(nb.cells[j].source) == src:
                pos[i], p = j, j + 1
                claimed.add(j)
                if gid:
                    nb.cells[j].metadata["nbgrader"] = _release_meta(rc)["nbgrader"]
                    repairs.append(f"restored lost nbgrader metadata of {gid!r} (matched by source)")
                break
    # 4. lost metadata of edited solution cells: by position between anchors, then by defined names
    #    (locked cells are only ever matched by source: an edited copy stays an ordinary cell)
    for i, rc in enumerate(rel_cells):
        gid = _gid(rc)
        if not gid or i in pos or rc.metadata["nbgrader"].get("locked"):
            continue
        before = max((pos[k] for k in pos if k < i), default=-1)
        after = min((pos[k] for k in pos if k > i), default=len(nb.cells))
        gap = [j for j in range(before + 1, after) if j not in claimed and not _gid(nb.cells[j])
               and nb.cells[j].cell_type == rc.cell_type]
        if rc.cell_type == "code":
            names = _defined_names(rc.source)
            by_name = [j for j in gap if names and names <= _defined_names(nb.cells[j].source)]
            gap = by_name or ([] if names else gap)
        if gap:
            j = gap[0]
            nb.cells[j].metadata["nbgrader"] = _release_meta(rc)["nbgrader"]
            pos[i] = j
            claimed.add(j)
            repairs.append(f"restored lost nbgrader metadata of {gid!r} (matched by position)")
    # 5. deleted graded/locked cells come back where they were
    for i, rc in enumerate(rel_cells):
        gid = _gid(rc)
        if not gid or i in pos:
            continue
        at = max((pos[k] + 1 for k in pos if k < i), default=0)
        locked = rc.metadata["nbgrader"].get("locked")
        cell = nbformat.from_dict(json.loads(json.dumps(rc))) if locked else _placeholder(rc)
        nb.cells.insert(at, cell)
        pos = {k: (v + 1 if v >= at else v) for k, v in pos.items()}
        pos[i] = at
        kind = "test cell" if gid.startswith("test_") else ("locked cell" if locked else "solution cell")
        repairs.append(f"restored deleted {kind} {gid!r}" + ("" if locked else " (empty: it scores 0)"))
    # 6. graded cells get the release's metadata, type and (locked) source; nothing can switch them off
    for i, j in pos.items():
        rc, cell = rel_cells[i], nb.cells[j]
        gid = _gid(rc)
        if not gid:
            continue
        tags = [t for t in cell.metadata.get("tags", []) if t in SKIP_TAGS]
        if tags:
            repairs.append(f"removed tag(s) {', '.join(tags)} from {gid!r}")
        if rc.metadata["nbgrader"].get("locked"):
            if _norm(cell.source) != _norm(rc.source) or cell.cell_type != rc.cell_type:
                repairs.append(f"restored the edited locked cell {gid!r}")
            fresh = nbformat.from_dict(json.loads(json.dumps(rc)))
            nb.cells[j] = fresh
            continue
        if cell.cell_type != rc.cell_type:
            repairs.append(f"changed {gid!r} back to a {rc.cell_type} cell")
            new = (nbformat.v4.new_code_cell if rc.cell_type == "code" else nbformat.v4.new_markdown_cell)(cell.source)
            nb.cells[j] = cell = new
        keep = {k: v for k, v in cell.metadata.items() if k not in ("nbgrader", "deletable", "editable", "tags")}
        rest = [t for t in cell.metadata.get("tags", []) if t not in SKIP_TAGS]
        cell.metadata = dict(keep, **_release_meta(rc), **({"tags": rest} if rest else {}))
        cell["id"] = rc.get("id", cell.get("id"))
    # cell ids: the release's for graded cells, unique valid ids elsewhere
    used = {nb.cells[j].get("id") for i, j in pos.items() if _gid(rel_cells[i])}
    for i, j in pos.items():
        if _gid(rel_cells[i]) and rel_cells[i].get("id"):
            nb.cells[j]["id"] = rel_cells[i]["id"]
    fixed = 0
    for j, cell in enumerate(nb.cells):
        is_graded = bool(_gid(cell))
        cid = cell.get("id")
        if is_graded and cid:
            continue
        if not cid or not ID_OK.match(str(cid)) or cid in used:
            fixed += bool(cid)
            n = j
            while f"s{n}" in used:
                n += 1000
            cell["id"] = f"s{n}"
        used.add(cell["id"])
    if fixed:
        repairs.append(f"replaced {fixed} duplicate or invalid cell ids")


def load_releases(release):
    """{name: release notebook} for the notebooks present in `release`."""
    found = {}
    for name in NOTEBOOK_NAMES:
        path = Path(release) / f"{name}.ipynb"
        if path.exists():
            found[name] = nbformat.read(path, as_version=4)
    return found


def _prepare(candidate, releases):
    """Read and identify one candidate: (notebook name or None, nb or None, problem or None, repairs)."""
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


def ingest(submissions, staging, release=None):
    """Find, pick and repair every student's notebooks.

    Inputs:
    - submissions: Path of a folder (one sub-folder per student, Moodle names accepted; or Canvas-named
      files) or of an LMS zip of the same.
    - staging: Path; repaired notebooks are written to staging/<student>/<notebook>.ipynb.
    - release: folder of release notebooks to repair against. Default: the grading template's release
      next to staging (OUT/.cache/template/release, what `grade` compiles from source) when it exists,
      else release/a3.
    Returns:
    - list of Submission, one per student x notebook (contract.NOTEBOOKS), sorted by student.
    """
    submissions, staging = Path(submissions), Path(staging)
    if release is None:
        template = staging.parent / "template" / "release"
        release = template if any(template.glob("*.ipynb")) else paths.RELEASE
    releases = load_releases(release)
    staging.mkdir(parents=True, exist_ok=True)
    if submissions.is_file():
        unpacked = staging / ".unpacked"
        shutil.rmtree(unpacked, ignore_errors=True)
        unpacked.mkdir()
        _safe_unzip(submissions, unpacked)
        submissions = unpacked
    out = []
    for student, (raw, candidates) in sorted(discover(submissions, unwrap=submissions.name == ".unpacked").items()):
        header = [] if raw == student else [f"student {raw!r} is graded as {student!r}"]
        lms = next((c.lms for c in candidates if c.lms), {})
        by_nb, problems, others = defaultdict(list), {}, []
        for cand in candidates:
            is_ipynb = cand.path.suffix.lower() == ".ipynb"
            if not is_ipynb and not cand.name_says:
                others.append(cand.shown)
                continue
            name, nb, problem, repairs = _prepare(cand, releases)
            if not is_ipynb and nb is None:  # e.g. nmt.pdf or nmt.py instead of the notebook
                problems.setdefault(cand.name_says, f"not a notebook: {cand.shown!r} is not an .ipynb file")
                continue
            if name is None:
                others.append(cand.shown)
                continue
            by_nb[name].append((cand, nb, problem, repairs))
        for name in NOTEBOOK_NAMES:
            options = by_nb.get(name, [])
            if not options:
                status = problems.get(name)
                if status is None:
                    status = "missing" + (f" (found only: {', '.join(others[:5])})" if others else "")
                out.append(Submission(student, name, None, status, list(header), dict(lms)))
                continue
            rel = releases.get(name)

            def rank(o):
                cand, nb, problem, _ = o
                return (nb is not None, completeness(nb, rel) if nb is not None and rel else 0, cand.mtime)

            options.sort(key=rank, reverse=True)
            cand, nb, problem, repairs = options[0]
            repairs = header + repairs
            if len(options) > 1:
                rest = ", ".join(repr(o[0].shown) for o in options[1:])
                repairs.insert(len(header), f"{len(options)} files for {name}: took {cand.shown!r} "
                                            f"(most complete, then newest); ignored {rest}")
            elif cand.shown != f"{name}.ipynb":
                repairs.insert(len(header), f"took {cand.shown!r} as {name}.ipynb")
            if nb is None:
                out.append(Submission(student, name, None, problem, repairs, dict(lms)))
                continue
            if rel is not None:
                _clean_metadata(nb, rel, repairs)
                repair_cells(nb, rel, repairs)
            nb.nbformat, nb.nbformat_minor = 4, 5
            try:
                nbformat.validate(nb)
            except nbformat.ValidationError:
                for cell in nb.cells:
                    if cell.cell_type == "code":
                        cell.outputs, cell.execution_count = [], None
                    cell.pop("attachments", None) if cell.cell_type == "code" else None
                repairs.append("cleared outputs that did not validate")
                try:
                    nbformat.validate(nb)
                except nbformat.ValidationError as e:
                    out.append(Submission(student, name, None,
                                          f"not a valid notebook: {' '.join(str(e).split())[:150]}", repairs,
                                          dict(lms)))
                    continue
            dest = staging / student / f"{name}.ipynb"
            dest.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, dest)
            out.append(Submission(student, name, dest, "ok", repairs, dict(lms)))
    return out
