"""Read: what a student submitted, as notebooks. Unpacks zips safely (no absolute paths, no '..', no links, bounded
size) and salvages what can be read of a damaged one; parses each file as a v4 notebook or says in one line why it
is not one (a PDF, HTML, a truncated download). Knows nothing of nbgrader metadata.
"""

import json
import os
import shutil
import struct
import time
import zipfile
import zlib
from pathlib import Path

import nbformat
from nbformat.v4 import rwbase

from autograder.grading.discover import NOTEBOOK_NAMES, Candidate, files_under, notebook_from_name
from autograder.text import one_line

MAX_ZIP_BYTES = 2 * 2**30  # refuse to unpack more than this from one LMS zip
MAX_NOTEBOOK_BYTES = 200 * 2**20


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


def safe_unzip(archive: Path, dest: Path, notes: list[str] | None = None) -> dict[Path, str]:
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


def _parse(data):
    """(the JSON, None) for bytes that parse as JSON, else (None, why bytes that should be a notebook are not one)."""
    if not data.strip():
        return None, "empty file (0 bytes)" if not data else "empty file (only whitespace)"
    head = data[:8]
    for magic, what in (
        (b"%PDF", "a PDF file"),
        (b"PK\x03\x04", "a zip archive"),
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
    ):
        if head.startswith(magic):
            return None, f"not a notebook: the file is {what}"
    text = data.decode("utf-8", errors="replace").lstrip()
    if text[:1] in "<":
        return None, "not a notebook: the file is HTML or XML (exported instead of downloaded as .ipynb?)"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as e:
        if not text.startswith(("{", "[")):
            return None, "not a notebook: the file is plain text or Python source, not notebook JSON"
        return None, f"not a notebook: invalid JSON (line {e.lineno}, column {e.colno}: {e.msg}; truncated download?)"


def _plain_v4(raw):
    """True for parsed v4 JSON of the shape every notebook an editor saved has: the notebook's metadata a mapping,
    its cells a list of mappings, each with its metadata a mapping."""
    cells = raw.get("cells")
    return (
        type(raw.get("metadata")) is dict
        and type(cells) is list
        and all(type(cell) is dict and type(cell.get("metadata")) is dict for cell in cells)
    )


def _rejoin_plain(nb):
    """nbformat's v4 rejoin_lines and strip_transient, on a _plain_v4 notebook of plain dicts (nbformat's own
    read them by attribute, which would need every mapping made a NotebookNode first)."""
    for key in ("orig_nbformat", "orig_nbformat_minor", "signature"):
        nb["metadata"].pop(key, None)
    for cell in nb["cells"]:
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
        for attachment in cell.get("attachments", {}).values():
            rwbase._rejoin_mimebundle(attachment)  # nbformat's own: it reads a bundle by key
        if cell.get("cell_type", None) == "code":
            for output in cell.get("outputs", []):
                kind = output.get("output_type", "")
                if kind in {"execute_result", "display_data"}:
                    rwbase._rejoin_mimebundle(output.get("data", {}))
                elif kind and isinstance(output.get("text", ""), list):
                    output["text"] = "".join(output["text"])
        cell["metadata"].pop("trusted", None)
    return nb


def _as_v4(raw):
    """Parsed notebook JSON (from _parse) as a v4 notebook, as nbformat.reads reads it (the same errors), without
    its validation: repair validates the notebook it made. Plain dicts for a v4 notebook of the usual shape
    (_plain_v4), else NotebookNodes (nbformat's own reader, its messages for odd shapes included)."""
    major, minor = nbformat.reader.get_version(raw)
    if major not in nbformat.versions:
        raise nbformat.NBFormatError(f"Unsupported nbformat version {major}")
    try:
        if major == 4:
            if _plain_v4(raw):
                return _rejoin_plain(raw)
            return rwbase.strip_transient(rwbase.rejoin_lines(nbformat.from_dict(raw)))
        nb = nbformat.versions[major].to_notebook_json(raw, minor=minor)
    except AttributeError as e:
        raise nbformat.ValidationError(f"The notebook is invalid and is missing an expected key: {e}") from None
    return nbformat.convert(nb, 4)


def read_notebook(path: Path) -> tuple[dict | None, str | None, list[str]]:
    """Parse a submitted file as a v4 notebook.

    Returns:
    - (notebook or None, one-line problem or None, repairs list); the notebook is JSON's plain dicts and lists
      (NotebookNodes for odd or old shapes, see _as_v4): read it by key, not by attribute.
    """
    size = path.stat().st_size
    if size > MAX_NOTEBOOK_BYTES:
        return None, f"not graded: the file is {size // 2**20} MB (limit {MAX_NOTEBOOK_BYTES // 2**20} MB)", []
    raw, problem = _parse(path.read_bytes())
    if problem:
        return None, problem, []
    if not isinstance(raw, dict) or not ("cells" in raw or "worksheets" in raw):
        return None, "not a notebook: JSON without notebook cells", []
    repairs = []
    major, minor = raw.get("nbformat"), raw.get("nbformat_minor")
    if major is None:
        raw["nbformat"], raw["nbformat_minor"] = 4, 0
        repairs.append("notebook had no nbformat version: read as nbformat 4")
    try:
        nb = _as_v4(raw)
    except Exception as e:  # nbformat raises several kinds for broken structure
        return None, f"not a notebook: {type(e).__name__}: {one_line(str(e), 150)}", []
    for n, cell in enumerate(nb["cells"], 1):  # every later step reads each cell's type and source
        if not isinstance(cell.get("cell_type"), str):
            return None, f"not a notebook: cell {n} has no cell type", []
        if not isinstance(cell.get("source"), str):
            return None, f"not a notebook: cell {n} has no source text", []
    if major is not None and (major, minor) != (4, 5):
        repairs.append(f"upgraded nbformat {major}.{minor} to 4.5 (cell ids added)")
    return nb, None, repairs


def load_releases(release: Path | str) -> dict[str, nbformat.NotebookNode]:
    """{name: release notebook} for the notebooks present in `release`."""
    found = {}
    for name in NOTEBOOK_NAMES:
        path = Path(release) / f"{name}.ipynb"
        if path.exists():
            found[name] = nbformat.read(path, as_version=4)
    return found


def expand_zips(student, candidates, staging, damaged):
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
        bad = safe_unzip(cand.path, into, notes)
        damaged.update(bad)
        inner = files_under(into) if into.exists() else []
        for f in inner:
            shown = f"{cand.shown}/{f.relative_to(into)}"
            out.append(Candidate(f, shown, f.stat().st_mtime, notebook_from_name(f.name), cand.lms))
        lines.append(f"unpacked {cand.shown!r}: {len(inner)} files" + (f", {len(bad)} damaged" if bad else ""))
        lines += [one_line(note) for note in notes]
    return out, lines


def unpack(archive, staging, notes):
    """Unpack an LMS zip into staging/.unpacked (emptied first): (that folder, {path: why} of damaged entries)."""
    unpacked = staging / ".unpacked"
    shutil.rmtree(unpacked, ignore_errors=True)
    unpacked.mkdir()
    return unpacked, safe_unzip(archive, unpacked, notes)
