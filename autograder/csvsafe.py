"""CSV cells a spreadsheet opens safely (OWASP's CSV injection advice), in one place.

A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to Excel, LibreOffice and Google
Sheets, unless the whole cell is a finite decimal number (`-0.25`, `+1`, `-1e-3` stay as they are). Every CSV the
kit writes goes through `writer`/`DictWriter` (or `neutral`, `frame`), which put a single quote `'` before such a
cell; the kit reads its own CSVs back through `reader`/`DictReader` (or `undo`), which take that quote off again.
A cell that already starts with quotes before one of those characters gets one more, so that `undo(neutral(x))`
is `x` for every string. `spreadsheet_error` tells the error values a spreadsheet writes in place of a formula that
failed (`#NAME?`, ...), which an import must refuse. Standard library only.
"""

import csv
import re

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
ERRORS = frozenset(("#NAME?", "#VALUE!", "#REF!", "#DIV/0!", "#N/A", "#NUM!", "#NULL!", "#SPILL!", "#CALC!"))
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def is_number(text: str) -> bool:
    """True when the whole of `text` is a finite decimal number (`-0.25`, `+1`, `-1e-3`; not `-inf`, not `-nan`)."""
    return _NUMBER.fullmatch(text) is not None


def _needs(text: str) -> bool:
    """True when `text` must be written with a quote before it: a formula start, or quotes already before one."""
    bare = text.lstrip(QUOTE)
    return bare[:1] in TRIGGERS and (bare != text or not is_number(bare))


def neutral(value) -> str:
    """One cell as written: `'` put before a cell a spreadsheet would read as a formula (None is '')."""
    text = "" if value is None else str(value)
    return QUOTE + text if _needs(text) else text


def undo(value: str) -> str:
    """One cell as read back: the `'` that `neutral` put before it taken off (any other cell as it is)."""
    if isinstance(value, str) and value[:1] == QUOTE and value.lstrip(QUOTE)[:1] in TRIGGERS:
        return value[1:]
    return value


def spreadsheet_error(value) -> bool:
    """True when a cell is an error value a spreadsheet wrote (`#NAME?`, `#VALUE!`, `#REF!`, `#N/A`, ...)."""
    return isinstance(value, str) and value.strip().upper() in ERRORS


class _Writer:
    """csv.writer with every cell through `neutral`."""

    def __init__(self, f, **kw):
        self._writer = csv.writer(f, **kw)
        self.dialect = self._writer.dialect
        minimal = self.dialect.quoting == csv.QUOTE_MINIMAL and "\r" not in self.dialect.lineterminator
        self._quoted = csv.writer(f, **dict(kw, quoting=csv.QUOTE_ALL)) if minimal else self._writer

    def writerow(self, row):
        """Write one row, each cell neutralised (a row with a CR in a cell quoted whole: csv leaves it bare)."""
        cells = [neutral(c) for c in row]
        return (self._quoted if any("\r" in c for c in cells) else self._writer).writerow(cells)

    def writerows(self, rows):
        """Write rows, each cell neutralised."""
        for row in rows:
            self.writerow(row)


def writer(f, **kw) -> _Writer:
    """csv.writer(f, **kw) whose cells a spreadsheet opens safely."""
    return _Writer(f, **kw)


class DictWriter(csv.DictWriter):
    """csv.DictWriter whose cells (header included) a spreadsheet opens safely."""

    def __init__(self, f, fieldnames, restval="", extrasaction="raise", **kw):
        super().__init__(f, fieldnames, restval, extrasaction, **kw)
        self.writer = _Writer(f, **kw)


class _Reader:
    """csv.reader with every cell through `undo`."""

    def __init__(self, f, **kw):
        self._reader = csv.reader(f, **kw)
        self.dialect = self._reader.dialect

    @property
    def line_num(self) -> int:
        """The line the underlying reader is at."""
        return self._reader.line_num

    def __iter__(self):
        return self

    def __next__(self) -> list[str]:
        return [undo(c) for c in next(self._reader)]


def reader(f, **kw) -> _Reader:
    """csv.reader(f, **kw) that takes off the quotes `writer` put on."""
    return _Reader(f, **kw)


class DictReader(csv.DictReader):
    """csv.DictReader that takes off the quotes `writer` put on (the kit's headers never need one)."""

    def __next__(self) -> dict:
        row = super().__next__()
        return {k: [undo(v) for v in x] if isinstance(x, list) else undo(x) for k, x in row.items()}


def frame(df):
    """A pandas DataFrame whose text cells are neutralised (numbers, missing values and the header as they are)."""
    return df.map(lambda v: neutral(v) if isinstance(v, str) else v)


def unframe(df):
    """A pandas DataFrame read from the kit's CSV with the quotes `frame` put on its text cells taken off."""
    return df.map(undo)
