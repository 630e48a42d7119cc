"""OUT/marks.jsonl, the marks log: one JSON record a line, each appended whole and flushed to disk before the write
is answered; read incrementally, so a page at a term's size (200,000 lines) reads only what was appended since.

A last line cut short (a killed write, a full disk) is moved aside to marks.jsonl.torn with one console line the
next time the log is opened or written, and never joined to the record written after it.
"""

import contextlib
import fcntl
import json
import math
import os
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.out import Out

TORN = ".torn"  # suffix of the file a cut-off last line is moved to

Key = tuple[str, str, str]  # (student, notebook, grade id)


@dataclass(frozen=True)
class Mark:
    """A line of the log: the items a grader applied to an answer (items None: the mark was cleared)."""

    student: str
    notebook: str
    grade_id: str
    items: tuple[str, ...] | None
    adjustment: float
    comment: str
    grader: str
    at: str
    answer: str  # sha256 of the answer's text when it was marked
    why: str = ""  # why a mark was cleared
    second: bool = False  # a second grader's mark of a double-marked answer: for agreement, not for the grade

    @property
    def key(self) -> Key:
        return (self.student, self.notebook, self.grade_id)


def _not_a_number(name: str):
    raise ValueError(f"{name} is not a number of points")


def parse(line: bytes | str) -> Mark:
    """One log line as a Mark (ValueError saying what is wrong: not JSON, a field missing or of the wrong kind, a
    non-finite number)."""
    d = json.loads(line, parse_constant=_not_a_number)
    if not isinstance(d, dict):
        raise ValueError("not a JSON object")
    texts = ("student", "notebook", "grade_id", "comment", "grader", "at", "answer")
    missing = [k for k in (*texts, "items", "adjustment") if k not in d]
    if missing:
        raise ValueError(f"no {', '.join(missing)}")
    if not all(isinstance(d[k], str) for k in texts) or not isinstance(d.get("why", ""), str):
        raise ValueError("a text field is not text")
    items = d["items"]
    if items is not None and not (isinstance(items, list) and all(isinstance(i, str) for i in items)):
        raise ValueError("items is not a list of item ids")
    adjustment = d["adjustment"]
    if isinstance(adjustment, bool) or not isinstance(adjustment, int | float) or not math.isfinite(adjustment):
        raise ValueError(f"adjustment {adjustment!r} is not a number of points")
    return Mark(
        d["student"], d["notebook"], d["grade_id"], None if items is None else tuple(items), float(adjustment),
        d["comment"], d["grader"], d["at"], d["answer"], d.get("why", ""), bool(d.get("second", False)),
    )  # fmt: skip


def record(mark: Mark) -> bytes:
    """A mark as one log line, newline included."""
    return (json.dumps(mark.__dict__, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n").encode()


_held = threading.local()  # {lock path: depth} of the locks this thread holds


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold OUT's marking lock: one writer at a time across processes (two TAs' pages or commands), from reading
    the log to writing the gradebook. A thread that holds it may take it again."""
    path = str(Out.at(out).marks_lock)
    depth = getattr(_held, "depth", None)
    if depth is None:
        depth = _held.depth = {}
    if depth.get(path):
        depth[path] += 1
        try:
            yield
        finally:
            depth[path] -= 1
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        depth[path] = 1
        try:
            yield
        finally:
            depth[path] = 0
            fcntl.flock(f, fcntl.LOCK_UN)


def repair(path: Path) -> str | None:
    """Move a last line without its newline aside (to PATH.torn, appended there) and cut it from `path`; the caller
    holds OUT's marking lock. Returns the console line saying so, or None when the file ends whole."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return None
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return None
            chunk, start = b"", size
            while start > 0 and b"\n" not in chunk:
                start = max(0, start - 65536)
                f.seek(start)
                chunk = f.read(size - start)
            keep = start + chunk.rfind(b"\n") + 1 if b"\n" in chunk else 0
            f.seek(keep)
            tail = f.read()
    except FileNotFoundError:
        return None
    aside = path.with_name(path.name + TORN)
    with open(aside, "ab") as f:
        f.write(tail + b"\n")
        f.flush()
        os.fsync(f.fileno())
    with open(path, "r+b") as f:
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    return f"mark: {path.name}: a last line cut short ({len(tail)} bytes, not a whole record) moved to {aside.name}"


def append(path: Path, lines: Iterable[bytes]) -> list[str]:
    """Append whole lines to an append-only log, one write a line, and flush them to disk before returning; a cut-off
    last line found first is moved aside (repair). The caller holds OUT's marking lock. Returns console lines."""
    lines = list(lines)
    if not lines:
        return []
    said = [line for line in [repair(path)] if line]
    new = not path.exists()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for line in lines:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    if new:  # the new file's name is on disk too
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return said


class Log:
    """The marks of one OUT's log, kept up to date by reading only what was appended since the last read (the file
    replaced or cut shorter is read again from its start)."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._reset(None)

    def _reset(self, ident) -> None:
        self.ident, self.offset, self.lines = ident, 0, 0
        self.first: dict[Key, Mark] = {}
        self.second: dict[Key, Mark] = {}
        self.bad: list[str] = []

    def read(self) -> "Log":
        """Catch up with the file: parse the whole lines appended since the last read. A last line without its
        newline is waited for under OUT's marking lock (a writer finishing it), then moved aside if still cut."""
        if self._catch_up():
            with locked(self.path.parent):
                said = repair(self.path)
            if said:
                print(said, flush=True)
            self._catch_up()
        return self

    def _catch_up(self) -> bool:
        """Read what was appended; True when bytes after the last newline are left over."""
        with self._lock:
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                self._reset(None)
                return False
            ident = (st.st_dev, st.st_ino)
            if ident != self.ident or st.st_size < self.offset:
                self._reset(ident)
            if st.st_size == self.offset:
                return False
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read(st.st_size - self.offset)
            end = data.rfind(b"\n") + 1
            for raw in data[:end].split(b"\n")[:-1]:
                self.lines += 1
                if not raw.strip():
                    continue
                try:
                    m = parse(raw)
                except (ValueError, UnicodeDecodeError) as exc:  # hand-edited
                    self.bad.append(f"{self.path}:{self.lines}: skipped, not a mark ({str(exc)[:120]})")
                    continue
                (self.second if m.second else self.first)[m.key] = m
            self.offset += end
            return end < len(data)

    def latest(self) -> tuple[dict[Key, Mark], list[str]]:
        """The latest mark of every answer (second marks aside), and one line per log line that cannot be read."""
        self.read()
        with self._lock:
            return dict(self.first), list(self.bad)

    def latest_second(self) -> dict[Key, Mark]:
        """The latest second mark of every double-marked answer."""
        self.read()
        with self._lock:
            return dict(self.second)


_logs: dict[str, Log] = {}
_logs_lock = threading.Lock()


def of(out: Path) -> Log:
    """The log of OUT, one reader a process."""
    path = Out.at(out).marks.resolve()
    with _logs_lock:
        return _logs.setdefault(str(path), Log(path))


def write(out: Path, marks: Iterable[Mark]) -> None:
    """Append marks to OUT's log, each a line of its own, on disk before this returns; the caller holds OUT's
    marking lock."""
    for line in append(Out.at(out).marks, (record(m) for m in marks)):
        print(line, flush=True)


def append_records(out: Path, path: Path, entries: Iterable[dict]) -> None:
    """Append JSON records to `path`, one of OUT's other append-only logs (regrades, item edits, suggestions shown), a
    line each, on disk before this returns, under OUT's marking lock."""
    lines = [json.dumps(e, ensure_ascii=False, sort_keys=True, allow_nan=False).encode() + b"\n" for e in entries]
    if lines:
        with locked(out):
            for said in append(path, lines):
                print(said, flush=True)


def read_records(path: Path) -> list[dict]:
    """The whole records of one of OUT's other logs, oldest first (a line that cannot be read is left out)."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            found.append(record)
    return found
