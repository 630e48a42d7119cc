"""grades.csv and the students' pages follow the marks, and survive a kill on the way.

Which pages a mark changes is written down in OUT/.mark_pages.json before the mark is answered, and crossed off
only once those pages and grades.csv were rendered again: a refresh a kill interrupted is redone at the next start
(or by `feedback`). Refreshes of every page on one OUT take turns (OUT/.mark_pages.lock) and read the gradebook
inside their turn, so an older refresh never overwrites a newer one.
"""

import contextlib
import fcntl
import itertools
import json
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from autograder.files import atomic_write
from autograder.marking.log import locked
from autograder.out import Out

_seq = itertools.count()


def _read(out: Path) -> dict[str, int]:
    try:
        found = json.loads(Out.at(out).mark_pages.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError:  # never half-written (atomic_write); a hand edit: render every page it could name
        return {"\t": 0}
    return found if isinstance(found, dict) else {"\t": 0}


def note(out: Path, pages: Iterable[tuple[str, str]]) -> None:
    """Write down that these (student, notebook) pages are to be rendered again (before the change is answered)."""
    pages = set(pages)
    if not pages:
        return
    with locked(out):
        journal = _read(out)
        stamp = time.time_ns() * 1000 + next(_seq) % 1000
        journal.update({f"{s}\t{nb}": stamp for s, nb in pages})
        atomic_write(Out.at(out).mark_pages, json.dumps(journal, ensure_ascii=False, sort_keys=True))


def pending(out: Path) -> set[tuple[str, str]]:
    """The (student, notebook) pages noted and not yet rendered again (('', '') stands for every page)."""
    return {tuple(key.split("\t", 1)) for key in _read(out)}


@contextlib.contextmanager
def turn(out: Path) -> Iterator[None]:
    """This process's turn to render pages of OUT (one at a time across processes)."""
    with open(Out.at(out).mark_pages_turn, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def taken(out: Path) -> dict[str, int]:
    """The journal as it is now: what a render about to start will have done once it ends (cross_off)."""
    return _read(out)


def cross_off(out: Path, done: dict[str, int]) -> None:
    """Cross off the pages of `done` (a journal taken before they were rendered) not noted again since."""
    with locked(out):
        journal = _read(out)
        for key, stamp in done.items():
            if journal.get(key) == stamp:
                del journal[key]
        if journal:
            atomic_write(Out.at(out).mark_pages, json.dumps(journal, ensure_ascii=False, sort_keys=True))
        else:
            Out.at(out).mark_pages.unlink(missing_ok=True)


def refresh(out: Path, render) -> int:
    """Render again the pages noted in the journal, and grades.csv, with `render(students, notebooks)` (None: all),
    then cross them off. Returns how many pages were noted."""
    with turn(out):
        done = taken(out)
        if not done:
            return 0
        pages = [tuple(key.split("\t", 1)) for key in done]
        if ("", "") in pages:
            render(None, None)
        else:
            render({s for s, _ in pages}, {nb for _, nb in pages})
        cross_off(out, done)
    return len(done)
