"""Similarity between students, cell by cell, for TAs: python -m autograder similarity OUT [--scheduler ADDRESS].

Reads what a grading run left in OUT (the autograded notebooks under OUT/autograded/<student>/a3/ and the
release in OUT/.cache/template/release, else release/a3) and writes, for TAs only:
- OUT/similarity.csv: notebook,cell,student_a,student_b,similarity,flagged (student_a < student_b by code
  point; similarity in [0, 1]; flagged 1 or 0), then longest_fragment (longest shared run, in normalised
  tokens or words), shared_fingerprints, kind (code or text) and signals (shared cell ids that the release
  does not have, identical outputs). One row per pair worth a look; byte-identical on a rerun.
- OUT/similarity.html: per cell the top pairs and a histogram, clusters of students above the threshold, and
  each shown pair side by side with the shared fragments highlighted and the starter code greyed.
A high similarity says "look at these two", not "these two copied": a TA judges.

Compared per notebook: each graded code cell (by grade id), each written answer, and what a student added
(their own code cells, their own markdown cells, one pseudo-cell each). Code is tokenised and normalised
(names a cell binds become V, numbers N, strings S; comments, blank lines and layout dropped; library names
and keywords kept), then k-grams are hashed with blake2b and winnowed (Schleimer et al. 2003, as MOSS).
Every k-gram of the release notebook's code is removed from each student's fingerprints, so starter code
counts for nothing and an untouched notebook has none; a fingerprint that more than a class share of
students has (the natural shape of a short correct answer) is down-weighted (MOSS -m, Dolos -M). Candidate
pairs come from an inverted index (fingerprint -> students), so a class of 500 never costs 125,000 pair
comparisons per cell. Written answers: word 3-grams inside sentences after case and punctuation folding,
with the question's n-grams removed (reordering sentences changes nothing). A cell whose own part is too
short to tell copying from the natural answer is never flagged. A cell that is binary junk or too large is
skipped with a note; code that does not parse is compared with every name normalised, with a note.

Written by hand, not with copydetect (MIT, PyPI 0.5.0, checked for this): copydetect hashes k-grams with
Python's salted hash() (results change between runs unless PYTHONHASHSEED is fixed, so no byte-identical
CSV), compares every pair of files (no inverted index), works on files rather than notebook cells, has
boilerplate removal but no class-common down-weighting nor written-answer mode, and pulls in matplotlib
and jinja2 for its report. The tokeniser is a regular expression rather than the tokenize module: it scans
about five times faster (1.4 ms against 7.5 ms on the nmt reference) and never fails, which the 500-student
budget and "a bad cell never stops the report" both need; which names a cell binds comes from CPython's
symbol table (symtable), with lines that stop it parsing blanked one at a time.
"""

import dataclasses
import functools
import hashlib
import html
import io
import json
import keyword
import math
import re
import symtable
import sys
import time
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from autograder import contract, cores, csvsafe, paths
from autograder.files import atomic_write
from autograder.out import Out
from autograder.records import not_graded_yet

COLUMNS = ["notebook", "cell", "student_a", "student_b", "similarity", "flagged"]
EXTRA_COLUMNS = ["longest_fragment", "shared_fingerprints", "kind", "signals"]
ADDED_CODE, ADDED_TEXT = "(added code)", "(added text)"  # pseudo-cells: what a student added (never a grade id)

K_CODE, WINDOW_CODE = 9, 4  # token k-grams, winnowing window: any shared run of >= 12 tokens is seen
N_TEXT = 3  # word n-grams of written answers (no winnowing: answers are short)
THRESHOLD = 0.6  # flagged at or above
REPORT_MIN = 0.3  # rows below this are not worth a look (unless flagged, which needs more)
COMMON_SHARE, COMMON_MIN = 0.05, 10  # a fingerprint held by more than max(10, 5% of students) is class-common
MIN_OWN_TOKENS = {"code": 30, "text": 15}  # tokens (words) beyond the starter a cell needs to be flagged
MIN_DISTINCTIVE = {"code": 4, "text": 6}  # and fingerprints that are not class-common
MAX_CELL_CHARS = 200_000  # a longer cell is skipped with a note
SPREAD_FROM = 4_000  # student cells from which the comparison runs across the cores (about 64 students)
SHOWN_PER_CELL = 10  # pairs shown per cell in the HTML, side by side, beside every flagged one
MAX_SHOWN = 50  # at most this many per cell
MAX_HISTOGRAM_BINS = 10


# --- tokens -------------------------------------------------------------------------------------------


@dataclass
class Doc:
    """One student's cell as compared: normalised tokens, their character spans, fingerprints."""

    student: str
    source: str
    tokens: list[str] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    hashes: list[int] = field(default_factory=list)  # every k-gram's hash, by start position (-1: none)
    prints: set[int] = field(default_factory=set)  # winnowed fingerprints, starter removed
    own_tokens: int = 0  # tokens in no k-gram of the starter nor in one most of the class has (see own_tokens)
    note: str = ""


_CODE_TOKEN = re.compile(
    r"""
     (?P<ws>[ \t\f]+|\\\r?\n)
    |(?P<comment>\#[^\r\n]*)
    |(?P<nl>\r?\n|\r)
    |(?P<string>[rRbBuUfF]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^\\'\r\n])*'|"(?:\\.|[^\\"\r\n])*"))
    |(?P<number>(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)[jJ]?)
    |(?P<name>[^\W\d]\w*)
    |(?P<op>\*\*=?|//=?|>>=?|<<=?|->|:=|\.\.\.|[-+*/%&|^@<>=!]=|[-+*/%&|^~@<>=(){}\[\],:;.])
    |(?P<other>\S)
    """,
    re.X | re.S,
)
_MAGIC = re.compile(r"^[ \t]*[%!].*$", re.M)  # IPython magics and shell lines: not Python
_OPEN, _CLOSE = set("([{"), set(")]}")
_KEYWORDS = frozenset(keyword.kwlist) | frozenset(getattr(keyword, "softkwlist", []))


_STORED_ATTR = re.compile(r"\.\s*([^\W\d]\w*)\s*(?:[-+*/%&|^@]|//|\*\*|>>|<<)?=(?!=)")


def _bound_names(source: str, tries: int = 20) -> tuple[set[str], set[str], list[int]] | None:
    """(names, attributes) a cell binds (assigned, parameters, defined, `self.x = ...`) and the lines blanked so
    that the rest parses (one by one, from the first syntax error); None when it never parses.

    The symbol table (CPython's own pass) gives the names; a regular expression the assigned attributes.
    """
    lines, blanked = source.split("\n"), []
    for _ in range(tries):
        try:
            top = symtable.symtable("\n".join(lines), "<cell>", "exec")
            break
        except SyntaxError as exc:
            n = (exc.lineno or 0) - 1
            if not 0 <= n < len(lines) or n + 1 in blanked:
                return None
            lines[n], blanked = "", blanked + [n + 1]
        except (ValueError, RecursionError, MemoryError):
            return None
    else:
        return None
    names, stack = set(), [top]
    while stack:
        table = stack.pop()
        names.update(sym.get_name() for sym in table.get_symbols() if sym.is_assigned() or sym.is_parameter())
        stack.extend(table.get_children())
    return names, set(_STORED_ATTR.findall(source)), blanked


def code_tokens(source: str) -> tuple[list[str], list[tuple[int, int]], str]:
    """Normalised tokens of Python code with their character spans, and a note ('' when it parsed).

    Names the cell binds become V (read from the lines that parse; every name when none do), numbers N,
    strings S; keywords, operators, library names and attributes the cell does not assign stay; comments and
    layout are dropped, and logical lines are separated by a ';' token.
    """
    source = _MAGIC.sub(lambda m: " " * len(m.group()), source)
    bound = _bound_names(source)
    note = ""
    if bound is None:
        note = "does not parse: compared with every name normalised"
    elif bound[2]:
        note = f"does not parse (line {', '.join(map(str, bound[2]))}): names read from the other lines"
    names, attrs, _ = bound or (set(), set(), [])
    tokens, spans = [], []
    depth, after_dot = 0, False
    for m in _CODE_TOKEN.finditer(source):
        kind, text = m.lastgroup, m.group()
        if kind in ("ws", "comment"):
            continue
        if kind == "nl":
            if depth == 0 and tokens and tokens[-1] != ";":
                tokens.append(";")
                spans.append(m.span())
            continue
        if kind == "name":
            if text in _KEYWORDS:
                norm = text
            elif bound is None or (text in attrs if after_dot else text in names):
                norm = "V"
            else:
                norm = text
        elif kind == "number":
            norm = "N"
        elif kind == "string":
            norm = "S"
        else:
            norm = text
            if text in _OPEN:
                depth += 1
            elif text in _CLOSE:
                depth = max(0, depth - 1)
        after_dot = text == "."
        tokens.append(norm)
        spans.append(m.span())
    if tokens and tokens[-1] == ";":
        tokens.pop(), spans.pop()
    return tokens, spans, note


_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"[.!?;:]+(?=\s|$)|\n\s*\n|\n\s*[-*+]\s|\n\s*\d+[.)]\s")


def text_tokens(text: str) -> tuple[list[str], list[tuple[int, int]], list[int]]:
    """Casefolded words of a written answer with their spans and sentence numbers (punctuation dropped)."""
    text = unicodedata.normalize("NFKC", text)
    ends = [m.start() for m in _SENTENCE_END.finditer(text)]
    words, spans, sentences = [], [], []
    sentence, e = 0, 0
    for m in _WORD.finditer(text):
        while e < len(ends) and ends[e] < m.start():
            sentence, e = sentence + 1, e + 1
        words.append(m.group().casefold())
        spans.append(m.span())
        sentences.append(sentence)
    return words, spans, sentences


def kgram_hashes(tokens: list[str], k: int, sentences: list[int] | None = None) -> list[int]:
    """Stable 63-bit hash (blake2b, never Python's salted hash()) of each k-gram by start position; -1 where a
    k-gram would cross a sentence (written answers)."""
    joined = "\x1f".join(tokens) + "\x1f"
    starts, pos = [], 0
    for t in tokens:
        starts.append(pos)
        pos += len(t) + 1
    starts.append(pos)
    blake, from_bytes = hashlib.blake2b, int.from_bytes
    out = []
    for i in range(len(tokens) - k + 1):
        if sentences is not None and sentences[i] != sentences[i + k - 1]:
            out.append(-1)
        else:
            out.append(
                from_bytes(blake(joined[starts[i] : starts[i + k]].encode(), digest_size=8).digest(), "big") >> 1
            )
    return out


def winnow(hashes: list[int], window: int) -> set[int]:
    """Winnowing: the smallest hash of every window of `window` consecutive k-grams (-1 entries skipped)."""
    valid = [h for h in hashes if h >= 0]
    if window <= 1 or len(valid) <= window:
        return set(valid)
    return {min(valid[i : i + window]) for i in range(len(valid) - window + 1)}


_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\ufffd]")


def _is_junk(source: str) -> str:
    """Why a cell cannot be compared at all ('' when it can): too large, or binary."""
    if len(source) > MAX_CELL_CHARS:
        return f"{len(source.encode('utf-8', 'replace')) / 2**20:.1f} MB, over the {MAX_CELL_CHARS // 1000} kB limit"
    sample = source[:4096]
    bad = len(_CONTROL.findall(sample))
    if sample and ("\x00" in sample or bad > len(sample) // 20):
        return "binary data"
    return ""


def starter_hashes(kind: str, starters: list[str]) -> set[int]:
    """Every k-gram hash of the starter texts (the release's code, or a question and its stub answer)."""
    return set().union(*(_starter_hashes(kind, text) for text in starters)) - {-1}


@functools.lru_cache(maxsize=256)
def _starter_hashes(kind: str, text: str) -> frozenset[int]:
    """The k-gram hashes of one starter text (remembered: every cell of a notebook shares the release's code)."""
    if kind == "code":
        return frozenset(kgram_hashes(code_tokens(text)[0], K_CODE))
    words, _, sentences = text_tokens(text)
    return frozenset(kgram_hashes(words, N_TEXT, sentences))


def make_doc(kind: str, student: str, source: str, starter: set[int]) -> Doc:
    """One student's cell tokenised and fingerprinted, its starter k-grams removed."""
    doc = Doc(student, source)
    junk = _is_junk(source)
    if junk:
        doc.source, doc.note = "", f"skipped: {junk}"
        return doc
    if kind == "code":
        doc.tokens, doc.spans, doc.note = code_tokens(source)
        k, sentences, window = K_CODE, None, WINDOW_CODE
    else:
        doc.tokens, doc.spans, sentences = text_tokens(source)
        k, window = N_TEXT, 1
    doc.hashes = kgram_hashes(doc.tokens, k, sentences)
    doc.prints = winnow(doc.hashes, window) - starter
    return doc


# --- one cell -----------------------------------------------------------------------------------------


@dataclass
class CellTask:
    """One cell of one notebook to compare across the class (what a Dask worker receives)."""

    notebook: str
    cell: str
    kind: str  # "code" or "text"
    starters: list[str]  # release texts whose k-grams are starter code (or question text)
    sources: list[tuple[str, str]]  # (student, the cell's source), students sorted by code point


@dataclass
class CellReport:
    """What one cell's comparison found."""

    notebook: str
    cell: str
    kind: str
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    histogram: list[int] = field(default_factory=list)  # pairs compared, per similarity tenth
    uncompared: int = 0  # pairs sharing no distinctive fingerprint (similarity 0)
    shown: list[dict] = field(default_factory=list)  # pairs side by side: sources and highlight spans
    starter_lines: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _weights(docs: list[Doc]) -> tuple[dict[int, list[int]], dict[int, float], int]:
    """Inverted index fingerprint -> students holding it, each fingerprint's weight, and the common cap.

    A fingerprint held by more than `cap` students is class-common: its weight falls as (cap / holders)^2.
    """
    index = defaultdict(list)
    for i, d in enumerate(docs):
        for h in d.prints:
            index[h].append(i)
    cap = max(COMMON_MIN, math.ceil(COMMON_SHARE * len(docs)))
    weight = {h: (1.0 if len(s) <= cap else (cap / len(s)) ** 2) for h, s in index.items()}
    return index, weight, cap


def _covered(doc: Doc, keep: set[int], k: int) -> bytearray:
    """Tokens of `doc` inside a k-gram whose hash is in `keep`."""
    mark = bytearray(len(doc.tokens))
    for i, h in enumerate(doc.hashes):
        if h in keep:
            mark[i : i + k] = b"\x01" * k
    return mark


def _longest_run(mark: bytearray) -> int:
    """Longest run of 1s."""
    return max((len(r) for r in bytes(mark).split(b"\x00")), default=0)


def _spans_of(doc: Doc, mark: bytearray) -> list[tuple[int, int]]:
    """Character spans of the marked tokens, neighbours merged."""
    out = []
    for i, on in enumerate(mark):
        if on:
            s, e = doc.spans[i]
            if out and doc.source[out[-1][1] : s].strip() == "":
                out[-1] = (out[-1][0], e)
            else:
                out.append((s, e))
    return out


def own_tokens(docs: list[Doc], starter: set[int], cap: int, k: int) -> None:
    """Set each doc's own_tokens: tokens inside no k-gram of the starter nor any k-gram more than `cap` students
    have (a short line added to the class's natural answer counts its own tokens, not its neighbours')."""
    held = defaultdict(int)
    for d in docs:
        for h in set(d.hashes):
            held[h] += 1
    counted = {}  # {source: own tokens}: one text has the same tokens and k-grams whoever handed it in
    for d in docs:
        if d.source not in counted:
            covered = bytearray(len(d.tokens))
            for i, h in enumerate(d.hashes):
                if h in starter or held[h] > cap:
                    covered[i : i + k] = b"\x01" * k
            counted[d.source] = len(d.tokens) - sum(covered)
        d.own_tokens = counted[d.source]


def is_short(doc: Doc, kind: str, index: dict[int, list[int]], cap: int) -> bool:
    """True when a cell's own part is too short to tell copying from the natural answer: few tokens beyond
    the starter, or few fingerprints that are not class-common."""
    distinctive = sum(1 for h in doc.prints if len(index[h]) <= cap)
    return doc.own_tokens < MIN_OWN_TOKENS[kind] or distinctive < MIN_DISTINCTIVE[kind]


def compare_cell(task: CellTask) -> CellReport:
    """Compare one cell across the class: rows worth a look, notes, histogram and the pairs to show."""
    start = time.perf_counter()
    report = CellReport(task.notebook, task.cell, task.kind, histogram=[0] * MAX_HISTOGRAM_BINS)
    starter = starter_hashes(task.kind, task.starters)
    docs, made = [], {}  # made: {source: the Doc of the first student with it}, whose work a twin shares
    for student, source in task.sources:
        if source in made:  # the same text (an untouched cell, a shared answer) tokenises the same
            doc = dataclasses.replace(made[source], student=student)
        else:
            try:
                doc = make_doc(task.kind, student, source, starter)
            except (RecursionError, MemoryError, ValueError) as exc:
                doc = Doc(student, "", note=f"skipped: {type(exc).__name__}")
            made[source] = doc
        if doc.note:
            report.notes.append(f"{task.notebook} {task.cell}, {student}: {doc.note}")
        docs.append(doc)
    index, weight, cap = _weights(docs)
    own_tokens(docs, starter, cap, K_CODE if task.kind == "code" else N_TEXT)
    shared = defaultdict(int)
    for h, holders in index.items():
        if 2 <= len(holders) <= cap:
            for a in range(len(holders)):
                for b in range(a + 1, len(holders)):
                    shared[holders[a], holders[b]] += 1
    total = [sum(weight[h] for h in d.prints) for d in docs]
    short = [is_short(d, task.kind, index, cap) for d in docs]
    k = K_CODE if task.kind == "code" else N_TEXT
    n_pairs = len(docs) * (len(docs) - 1) // 2
    report.uncompared = n_pairs - len(shared)
    for (a, b), _ in sorted(shared.items()):
        da, db = docs[a], docs[b]
        common = da.prints & db.prints
        w = sum(weight[h] for h in common)
        sim = 2 * w / (total[a] + total[b]) if total[a] + total[b] else 0.0
        sim = min(1.0, sim)
        report.histogram[min(int(sim * MAX_HISTOGRAM_BINS), MAX_HISTOGRAM_BINS - 1)] += 1
        flagged = sim >= THRESHOLD and not short[a] and not short[b]
        if sim < REPORT_MIN and not flagged:
            continue
        both = (set(da.hashes) & set(db.hashes)) - starter - {-1}
        longest = max(_longest_run(_covered(da, both, k)), _longest_run(_covered(db, both, k)))
        report.rows.append(
            {
                "notebook": task.notebook,
                "cell": task.cell,
                "student_a": da.student,
                "student_b": db.student,
                "similarity": f"{sim:.3f}",
                "flagged": int(flagged),
                "longest_fragment": longest,
                "shared_fingerprints": len(common),
                "kind": task.kind,
                "signals": "",
                "_pair": (a, b, both),
            }
        )
    report.rows.sort(key=lambda r: (-float(r["similarity"]), r["student_a"], r["student_b"]))
    for row in shown_rows(report.rows):
        a, b, both = row["_pair"]
        report.shown.append(
            {
                "student_a": docs[a].student,
                "student_b": docs[b].student,
                "source_a": docs[a].source,
                "source_b": docs[b].source,
                "spans_a": _spans_of(docs[a], _covered(docs[a], both, k)),
                "spans_b": _spans_of(docs[b], _covered(docs[b], both, k)),
            }
        )
    for row in report.rows:
        del row["_pair"]
    report.starter_lines = sorted({line.strip() for text in task.starters[:1] for line in text.splitlines()} - {""})
    report.seconds = time.perf_counter() - start
    return report


def shown_rows(rows: list[dict]) -> list[dict]:
    """The rows of a cell the HTML shows: the top SHOWN_PER_CELL and every flagged one (at most MAX_SHOWN)."""
    return [row for i, row in enumerate(rows) if i < SHOWN_PER_CELL or row["flagged"]][:MAX_SHOWN]


def safe_compare(task: CellTask) -> CellReport:
    """compare_cell, with any failure turned into a note (one cell never stops the report)."""
    try:
        return compare_cell(task)
    except Exception as exc:  # the report goes on without this cell
        first = (str(exc).splitlines() or [""])[0][:200]
        report = CellReport(task.notebook, task.cell, task.kind)
        report.notes.append(f"{task.notebook} {task.cell}: not compared ({type(exc).__name__}: {first})")
        return report


# --- reading OUT --------------------------------------------------------------------------------------


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(map(str, src)) if isinstance(src, list) else str(src)


def _grade_id(cell: dict) -> str:
    return str(contract.nbgrader_meta(cell).get("grade_id") or "")


def release_dir(out: Path) -> Path:
    """The release the students started from: the grading template's, else release/a3."""
    cached = Out.at(out).template / "release"
    return cached if any(cached.glob("*.ipynb")) else paths.RELEASE


def release_cells(release_nb: dict) -> list[tuple[str, str, list[str]]]:
    """[(cell, kind, starters)] of a release notebook: graded code cells, written answers, added code and text.

    A code cell's starters are its own release source then every code cell of the release; a written
    answer's are its stub and the markdown above it back to the previous code cell (the question).
    """
    cells = release_nb.get("cells", [])
    all_code = [_source(c) for c in cells if c.get("cell_type") == "code"]
    all_text = [_source(c) for c in cells if c.get("cell_type") == "markdown"]
    out = []
    for i, cell in enumerate(cells):
        gid = _grade_id(cell)
        if not gid or not contract.is_solution_cell(cell):
            continue
        if cell.get("cell_type") == "code":
            out.append((gid, "code", [_source(cell)] + all_code))
        elif cell.get("cell_type") == "markdown":
            question = []
            for before in reversed(cells[:i]):
                if before.get("cell_type") != "markdown" or contract.is_solution_cell(before):
                    break
                question.append(_source(before))
            out.append((gid, "text", [_source(cell)] + question[::-1]))
    out.append((ADDED_CODE, "code", ["\n".join(all_code)]))
    out.append((ADDED_TEXT, "text", ["\n".join(all_text)]))
    return out


_OUTPUT_MIN_CHARS = 40
_REPAIR_ID = re.compile(r"^s\d+$")  # ids ingest gives cells that had none: equal by position, not by copying


def _coalesced(outputs: list) -> list[dict]:
    """The outputs with each run of stream outputs of one name joined: how a kernel cuts a stream into chunks
    depends on its timing, so two runs of one cell may differ there and nowhere else."""
    joined = []
    for o in outputs:
        last = joined[-1] if joined else {}
        if (
            o.get("output_type") == "stream"
            and last.get("output_type") == "stream"
            and last.get("name") == o.get("name")
        ):
            last["text"] = _source({"source": last.get("text", "")}) + _source({"source": o.get("text", "")})
        else:
            joined.append(dict(o))
    return joined


def _output_texts(cell: dict) -> list[str]:
    """The text of a code cell's outputs (streams, results, errors), each long enough to mean something."""
    texts = []
    for o in _coalesced(cell.get("outputs", []) or []):
        if o.get("output_type") == "stream":
            text = _source({"source": o.get("text", "")})
        elif o.get("output_type") == "error":
            text = f"{o.get('ename', '')}: {o.get('evalue', '')}"
        else:
            text = _source({"source": (o.get("data") or {}).get("text/plain", "")})
        if len(text.strip()) >= _OUTPUT_MIN_CHARS:
            texts.append(text)
    return texts


@dataclass
class Notebooks:
    """What the comparison needs from every student's autograded notebooks."""

    sources: dict = field(default_factory=lambda: defaultdict(list))  # (nb, cell) -> [(student, source)]
    cell_ids: dict = field(default_factory=lambda: defaultdict(dict))  # nb -> {student: {foreign ids}}
    outputs: dict = field(default_factory=lambda: defaultdict(dict))  # nb -> {student: {output hash: cell}}
    notes: list[str] = field(default_factory=list)
    students: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ReleaseKeys:
    """What tells a student's cells from the release's in one notebook: its cell ids, sources and output texts,
    and its grade ids."""

    ids: frozenset
    sources: frozenset
    outputs: frozenset
    known: frozenset

    @classmethod
    def of(cls, rel: dict) -> "ReleaseKeys":
        cells = rel.get("cells", [])
        return cls(
            frozenset(c.get("id") for c in cells),
            frozenset(_source(c) for c in cells),
            frozenset(t for c in cells for t in _output_texts(c)),
            frozenset(_grade_id(c) for c in cells if _grade_id(c)),
        )


@dataclass
class StudentCells:
    """What the comparison takes from one student's autograded notebook."""

    read: bool = True  # False when the notebook would not read: nothing of it is compared
    sources: list = field(default_factory=list)  # [(grade id, source)] of their solution cells, in order
    added: dict = field(default_factory=lambda: {"code": [], "markdown": []})  # cells the release does not have
    ids: set = field(default_factory=set)  # cell ids the release does not have (nor ingest gave)
    outputs: dict = field(default_factory=dict)  # {output hash: grade id or "an added cell"}
    notes: list = field(default_factory=list)


READ_SPREAD_FROM = 64  # students from which their notebooks are read across the cores


def read_student(root: Path, releases: dict[str, ReleaseKeys], student: str) -> dict[str, StudentCells]:
    """{notebook: StudentCells} of root/<student>/a3/<nb>.ipynb for each notebook of `releases` the student has."""
    found = {}
    for nb, rel in releases.items():
        path = root / student / contract.ASSIGNMENT / f"{nb}.ipynb"
        if not path.is_file():
            continue
        got = found[nb] = StudentCells()
        try:
            cells = json.loads(path.read_bytes()).get("cells", [])
            assert isinstance(cells, list)
        except (OSError, ValueError, AssertionError, AttributeError) as exc:
            got.notes.append(f"{nb}, {student}: notebook not read ({type(exc).__name__}): skipped")
            got.read = False
            continue
        for i, cell in enumerate(cells):
            try:
                gid = _grade_id(cell)
                if gid and gid in rel.known:
                    if contract.is_solution_cell(cell):
                        got.sources.append((gid, _source(cell)))
                elif cell.get("cell_type") in got.added and cell.get("id") not in rel.ids:
                    source = _source(cell)
                    if source not in rel.sources:
                        got.added[cell["cell_type"]].append(source)
                cid = cell.get("id")
                if isinstance(cid, str) and cid not in rel.ids and not _REPAIR_ID.match(cid):
                    got.ids.add(cid)
                for text in _output_texts(cell):
                    if text not in rel.outputs:
                        key = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
                        got.outputs.setdefault(key, gid or "an added cell")
            except (AttributeError, TypeError, ValueError) as exc:
                got.notes.append(f"{nb}, {student}: cell {i + 1} not read ({type(exc).__name__}): skipped")
    return found


def read_notebooks(out: Path, releases: dict[str, dict]) -> Notebooks:
    """Read OUT/autograded/<student>/a3/<nb>.ipynb for every student (by code point) and notebook: across the
    cores from READ_SPREAD_FROM students on."""
    found = Notebooks()
    root = Out.at(out).autograded
    folders = root.iterdir() if root.is_dir() else []  # none when no notebook was graded: an empty report
    students = sorted(p.name for p in folders if p.is_dir() and not p.name.startswith("."))
    found.students = students
    keys = {nb: ReleaseKeys.of(rel) for nb, rel in releases.items()}
    each = functools.partial(read_student, root, keys)
    read = cores.spread(each, students, at_least=READ_SPREAD_FROM, notes=found.notes)
    for nb in releases:  # notebook by notebook, students by code point within each, as the report lists them
        for student, got in zip(students, read):
            cells = got.get(nb)
            if cells is None:
                continue
            found.notes += cells.notes
            if not cells.read:
                continue
            for gid, source in cells.sources:
                found.sources[nb, gid].append((student, source))
            found.sources[nb, ADDED_CODE].append((student, "\n\n".join(cells.added["code"])))
            found.sources[nb, ADDED_TEXT].append((student, "\n\n".join(cells.added["markdown"])))
            found.cell_ids[nb][student] = cells.ids
            found.outputs[nb][student] = cells.outputs
    return found


def signals(found: Notebooks, nb: str, a: str, b: str) -> str:
    """Notebook-level signals beside a pair: shared cell ids the release lacks, identical uncommon outputs."""
    said = []
    ids = found.cell_ids[nb].get(a, set()) & found.cell_ids[nb].get(b, set())
    if ids:
        said.append(f"{len(ids)} shared cell id(s) not in the release")
    outs = found.outputs[nb]
    cap = max(2, math.ceil(0.02 * len(outs)))
    mine = outs.get(a, {})
    same = sorted(
        {mine[h] for h in mine.keys() & outs.get(b, {}).keys() if sum(1 for o in outs.values() if h in o) <= cap}
    )
    if same:
        said.append("identical outputs in " + ", ".join(same))
    return "; ".join(said)


# --- the report ---------------------------------------------------------------------------------------


def _map(tasks: list[CellTask], scheduler_address: str | None, notes: list[str]) -> list[CellReport]:
    """safe_compare over every task: on the Dask cluster at `scheduler_address`, else on this machine's cores
    (here alone for a class with fewer than SPREAD_FROM cells to compare)."""
    if scheduler_address:
        try:
            from distributed import Client

            with Client(scheduler_address, timeout="30s") as client:
                return client.gather(client.map(safe_compare, tasks, pure=False))
        except Exception as exc:  # the report is still written, here
            notes.append(f"Dask at {scheduler_address} not used ({type(exc).__name__}: {exc}); compared here")
    if sum(len(t.sources) for t in tasks) < SPREAD_FROM:
        return [safe_compare(t) for t in tasks]
    return cores.spread(safe_compare, tasks, at_least=2, notes=notes)


def _ordered(names) -> list[str]:
    """Notebooks in course order, any others after them by code point."""
    names = set(names)
    return [nb for nb in contract.NOTEBOOKS if nb in names] + sorted(names - set(contract.NOTEBOOKS))


def build(out: Path | str, scheduler_address: str | None = None) -> tuple[list[CellReport], Notebooks, list[str]]:
    """Compare every cell of every notebook in OUT; returns the cell reports, what was read, and notes."""
    out = Path(out)
    rel_dir = release_dir(out)
    releases, notes = {}, []
    for nb in _ordered(p.stem for p in rel_dir.glob("*.ipynb")):
        try:
            releases[nb] = json.loads((rel_dir / f"{nb}.ipynb").read_bytes())
        except (OSError, ValueError) as exc:
            notes.append(f"release {nb}.ipynb not read ({type(exc).__name__}): its cells are not compared")
    found = read_notebooks(out, releases)
    tasks = []
    for nb, rel in releases.items():
        for cell, kind, starters in release_cells(rel):
            sources = found.sources.get((nb, cell), [])
            if len(sources) >= 2:
                tasks.append(CellTask(nb, cell, kind, starters, sources))
    reports = _map(tasks, scheduler_address, notes)
    for r in reports:
        for row in r.rows:
            row["signals"] = signals(found, r.notebook, row["student_a"], row["student_b"])
    return reports, found, notes + found.notes + [n for r in reports for n in r.notes]


def csv_text(reports: list[CellReport]) -> str:
    """similarity.csv: the spec's columns, then ours; cells in course order, pairs by similarity."""
    buf = io.StringIO()
    w = csvsafe.DictWriter(buf, fieldnames=COLUMNS + EXTRA_COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in reports:
        w.writerows(r.rows)
    return buf.getvalue()


def clusters(reports: list[CellReport]) -> list[tuple[list[str], list[str]]]:
    """Groups of students joined by flagged pairs (any cell): [(students, 'nb cell' labels)], largest first."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    flagged = [
        (row["student_a"], row["student_b"], f"{r.notebook} {r.cell}")
        for r in reports
        for row in r.rows
        if row["flagged"]
    ]
    for a, b, _ in flagged:
        parent[find(a)] = find(b)
    groups, cells = defaultdict(set), defaultdict(set)
    for a, b, c in flagged:
        groups[find(a)].update((a, b))
        cells[find(a)].add(c)
    out = [(sorted(groups[g]), sorted(cells[g])) for g in groups]
    return sorted(out, key=lambda x: (-len(x[0]), x[0]))


_STYLE = """
body{font-family:sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
.bar{display:inline-block;background:#7a9cc6;height:10px}.flag{color:#b00;font-weight:bold}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(20em,1fr));gap:8px}pre{background:#fafafa;
border:1px solid #ddd;padding:6px;overflow-x:auto;font-size:12px;white-space:pre-wrap}mark{background:#ffd54f}
.starter{color:#666;font-style:italic}.note{color:#555;font-size:90%}
"""


def _marked_source(source: str, spans: list[tuple[int, int]], starter_lines: set[str]) -> str:
    """A cell's source as HTML: shared fragments marked, lines of the starter code greyed."""
    marks = bytearray(len(source))
    for s, e in spans:
        marks[s:e] = b"\x01" * (e - s)
    out, pos = [], 0
    for line in source.splitlines(keepends=True):
        end = pos + len(line)
        grey = line.strip() in starter_lines
        parts, i = [], pos
        while i < end:
            j = i
            while j < end and marks[j] == marks[i]:
                j += 1
            text = html.escape(source[i:j])
            parts.append(f"<mark>{text}</mark>" if marks[i] and not grey else text)
            i = j
        out.append(f"<span class='starter'>{''.join(parts)}</span>" if grey else "".join(parts))
        pos = end
    return "".join(out)


def html_text(reports: list[CellReport], notes: list[str], n_students: int) -> str:
    """similarity.html for TAs: clusters, then per cell the histogram, top pairs and pairs side by side."""
    e = html.escape
    n_flagged = sum(row["flagged"] for r in reports for row in r.rows)
    n_pairs = len({(row["student_a"], row["student_b"]) for r in reports for row in r.rows if row["flagged"]})
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'><title>A3 similarity (TAs only)</title>"
        f"<style>{_STYLE}</style></head><body><main><h1>Similarity between students (TAs only)</h1>",
        f"<p>{n_students} students; {len(reports)} cells compared; {n_flagged} cell(s) flagged for "
        f"{n_pairs} pair(s) of students: similarity at or above {THRESHOLD} in a cell long enough to tell. "
        "Similarity is the weighted share of fingerprints two cells have in common (Dice; starter code removed, fingerprints most of the class shares down-weighted). A "
        "high value says <em>look at these two</em>; whether it is copying is for a person to judge. Every pair "
        "is in <code>similarity.csv</code>.</p>",
    ]
    groups = clusters(reports)
    parts.append(f"<h2 id='clusters'>Clusters above the threshold ({len(groups)})</h2>")
    if groups:
        parts.append("<table><tr><th>students</th><th>cells</th></tr>")
        for students, cells in groups:
            parts.append(f"<tr><td>{e(', '.join(students))}</td><td>{e('; '.join(cells))}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>None.</p>")
    parts.append("<h2>Cells</h2><ul>")
    for i, r in enumerate(reports):
        flagged = sum(row["flagged"] for row in r.rows)
        mark = f" <span class='flag'>{flagged} flagged</span>" if flagged else ""
        parts.append(f"<li><a href='#cell{i}'>{e(r.notebook)}: {e(r.cell)}</a>{mark}</li>")
    parts.append("</ul>")
    for i, r in enumerate(reports):
        parts.append(f"<h2 id='cell{i}'>{e(r.notebook)}: {e(r.cell)} <small>({e(r.kind)})</small></h2>")
        top = max([r.uncompared, *r.histogram, 1])
        bars = [f"<tr><td>0 (nothing distinctive shared)</td><td>{r.uncompared}</td><td></td></tr>"]
        for b, count in enumerate(r.histogram):
            lo, hi = b / MAX_HISTOGRAM_BINS, (b + 1) / MAX_HISTOGRAM_BINS
            width = 0 if not count else max(1, round(300 * count / top))
            bars.append(
                f"<tr><td>{lo:.1f}–{hi:.1f}</td><td>{count}</td><td><span class='bar' style='width:{width}px'>"
                "</span></td></tr>"
            )
        parts.append(
            "<details><summary>histogram of pair similarities</summary><table><tr><th>similarity</th>"
            f"<th>pairs</th><th>bar</th></tr>{''.join(bars)}</table></details>"
        )
        if not r.rows:
            parts.append("<p>No pair worth a look.</p>")
            continue
        parts.append(
            "<table><tr><th>student a</th><th>student b</th><th>similarity</th><th>flagged</th>"
            "<th>longest shared fragment</th><th>signals</th></tr>"
        )
        for row in shown_rows(r.rows):
            flag = "<span class='flag'>yes</span>" if row["flagged"] else "no"
            parts.append(
                f"<tr><td>{e(row['student_a'])}</td><td>{e(row['student_b'])}</td><td>{row['similarity']}</td>"
                f"<td>{flag}</td><td>{row['longest_fragment']}</td><td>{e(row['signals'])}</td></tr>"
            )
        parts.append("</table>")
        starter_lines = set(r.starter_lines)
        for pair in r.shown:
            parts.append(
                f"<details><summary>{e(pair['student_a'])} ↔ {e(pair['student_b'])} side by side</summary>"
                f"<div class='pair'><div><b>{e(pair['student_a'])}</b><pre>"
                f"{_marked_source(pair['source_a'], pair['spans_a'], starter_lines)}</pre></div>"
                f"<div><b>{e(pair['student_b'])}</b><pre>"
                f"{_marked_source(pair['source_b'], pair['spans_b'], starter_lines)}</pre></div></div></details>"
            )
    parts.append(f"<h2 id='notes'>Notes ({len(notes)})</h2>")
    parts.append("<ul class='note'>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul></main></body></html>")
    return "".join(parts)


def write_report(out: Path | str, scheduler_address: str | None = None) -> dict:
    """Write OUT/similarity.csv and OUT/similarity.html; returns counts and where they are."""
    out = Path(out)
    reports, found, notes = build(out, scheduler_address)
    atomic_write(Out.at(out).similarity_csv, csv_text(reports))
    atomic_write(Out.at(out).similarity_html, html_text(reports, notes, len(found.students)))
    return {
        "students": len(found.students),
        "cells": len(reports),
        "rows": sum(len(r.rows) for r in reports),
        "flagged": sum(row["flagged"] for r in reports for row in r.rows),
        "notes": notes,
        "csv": Out.at(out).similarity_csv,
        "html": Out.at(out).similarity_html,
    }


def main(*, out: Path, scheduler_address: str | None = None) -> int:
    """`similarity`: write OUT/similarity.csv and OUT/similarity.html (for TAs). Returns the exit status."""
    missing = not_graded_yet(Out.at(out).autograded, "similarity")
    if missing:
        print(missing, file=sys.stderr)
        return 1
    start = time.perf_counter()
    done = write_report(out, scheduler_address)
    if Out.at(out).index.exists() and Out.at(out).grades.exists():
        from autograder.reports import feedback

        feedback.write_index(out)  # the TA index links the report
    print(
        f"similarity: {done['students']} students, {done['cells']} cells, {done['rows']} pairs worth a look, "
        f"{done['flagged']} flagged, {len(done['notes'])} note(s), in {time.perf_counter() - start:.1f} s"
    )
    print(f"  {done['csv']}\n  {done['html']}")
    return 0
