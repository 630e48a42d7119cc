"""Discover: who submitted what. Finds each student's files in a folder of student folders (Moodle names accepted)
or of Canvas-named files, gives every student an id from their own submission (`student_id`), keeps the LMS's own
ids, and says which notebook a file name refers to. Reads no file's content (the digest hashes bytes only).
"""

import functools
import hashlib
import logging
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from autograder import contract, readiness
from autograder.lms import REGISTRY

log = logging.getLogger(__name__)

NOTEBOOK_NAMES = contract.NOTEBOOKS
JUNK_DIRS = {"__MACOSX", ".ipynb_checkpoints", "__pycache__", ".git"}
TIMESTAMP_FILE = "timestamp.txt"  # nbgrader's record of when the student submitted: evidence, not a submitted file
ID_CHARS = 64  # longest student id kept as it is (a file name holds 255 bytes: 64 CJK characters are 192)


@dataclass
class Candidate:
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


@functools.cache
def _drawn_as_ascii() -> dict[int, str]:
    """A str.translate table: each non-ASCII character that Unicode's confusables list (UTS #39, as the
    confusable_homoglyphs package ships them) gives exactly one ASCII letter or digit as a twin, mapped to that
    twin: Cyrillic 'о' -> 'o', Greek 'ν' -> 'v', dotless 'ı' -> 'i'. Characters with no twin, or several ('ǀ' looks
    like 'l', 'I' and '1'), are left as they are."""
    from confusable_homoglyphs.confusables import confusables_data

    table = {}
    for char, twins in confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        ascii_twins = {t["c"].casefold() for t in twins if len(t["c"]) == 1 and t["c"].isascii() and t["c"].isalnum()}
        if len(ascii_twins) == 1:
            table[ord(char)] = ascii_twins.pop()
    return table


def look_alike_key(name: str) -> str:
    """What two names that a reader cannot tell apart share: 'Anna Lee' and 'anna_lee', 'Zoë' in NFC or NFD,
    'John' in Latin letters or with a Cyrillic 'о'. Accents a reader sees stay ('Zoë' is not 'Zoe')."""
    folded = unicodedata.normalize("NFKC", name).casefold().translate(_drawn_as_ascii())  # the twins are casefolded
    return re.sub(r"[\s_.\-']+", " ", folded).strip()


def notebook_from_name(filename: str) -> str | None:
    """The notebook a file name refers to ('Copy of NMT (2).ipynb' -> 'nmt'), or None (readiness's rule, which the
    released notebooks' last cell uses to find its own file).

    Inputs:
    - filename: str, the base name (LMS prefix already removed).
    Returns:
    - one of NOTEBOOK_NAMES, or None when the name names none or several.
    """
    return readiness.notebook_from_name(filename, NOTEBOOK_NAMES)


def files_under(folder):
    """Every regular file below folder, skipping hidden and junk folders."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in JUNK_DIRS and not d.startswith("."))
        for f in sorted(files):
            p = Path(root) / f
            if not f.startswith(".") and p.is_file() and not p.is_symlink():
                found.append(p)
    return found


def discover(root: Path | str, unwrap: bool = False) -> dict[str, tuple[str, list[Candidate]]]:
    """Map each student to their candidate files.

    Inputs:
    - root: folder of student folders (possibly Moodle-named), or of Canvas-named files, or both.
    - unwrap: descend through single wrapping folders first (what an LMS zip often has).
    Returns:
    - {student_id: (raw folder or file name, [Candidate])}
    """
    root = Path(root)
    while True:
        entries = [p for p in root.iterdir() if not p.name.startswith(".") and p.name not in JUNK_DIRS]
        only = entries[0] if len(entries) == 1 and entries[0].is_dir() else None
        holds_notebooks = only and any(
            f.is_file() and not _lms_file(f.name)[1] and notebook_from_name(f.name) for f in only.iterdir()
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
            raw, lms = _lms_folder(entry.name)
            add(raw, lms=lms)
            for f in files_under(entry):
                shown = str(f.relative_to(entry))
                add(raw, Candidate(f, shown, f.stat().st_mtime, notebook_from_name(f.name), lms), lms)
        elif entry.is_file():
            system, m = _lms_file(entry.name)
            if not m:
                named = ", ".join(lms.name for lms in REGISTRY.values() if lms.per_student == "file")
                log.warning("ignored %s: not in a student folder and not an LMS (%s) file name", entry.name, named)
                continue
            raw, lms = system.ids(m)
            add(
                raw,
                Candidate(entry, entry.name, entry.stat().st_mtime, notebook_from_name(system.file_name(m)), lms),
                lms,
            )
    return students


def _lms_folder(name: str) -> tuple[str, dict]:
    """(the student's name, their LMS ids or {}) of a student's folder, named by an LMS or by hand."""
    for lms in REGISTRY.values():
        if lms.per_student == "folder" and (m := lms.download.match(name)):
            return lms.ids(m)
    return name, {}


def _lms_file(name: str):
    """(the LMS, the match) of a file an LMS named for its student, or (None, None)."""
    for lms in REGISTRY.values():
        if lms.per_student == "file" and (m := lms.download.match(name)):
            return lms, m
    return None, None


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
