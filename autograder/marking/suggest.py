"""Rubric items suggested for the answers of one written question still to grade, learned from the TA's marks.

Offline: each answer is a unit row of features, the all-MiniLM-L6-v2 sentence embedding that a package ships
(`encoder="minilm"`, kept in OUT by groups.EmbeddingCache so that an answer is encoded once) beside TF-IDF of its
words and character n-grams, or TF-IDF alone (`encoder="tfidf"`); their cosine similarities are computed once per
question, so that suggesting again after a new mark only reads them. The examples are the question's answers with a
live mark (the latest mark of each, still valid under the rubric and for the answer's text) and the model answer,
taken as an answer that earns every positive item and no deduction.

An answer's suggestion is the item set of the example closest to it (cosine of the rows), made only when:
- every example within MARGIN of the closest has that same item set (the closest graded answers never disagree on
  an item it suggests);
- the closest is at least as close as a threshold calibrated on the marks it has: each example is suggested for
  from the others (leave one out), and the threshold is the lowest similarity at or above which those suggestions
  were exactly right at least TARGET of the time, on at least SUPPORT of them. Before the marks hold two item sets,
  or with too few of them to reach SUPPORT, there is no threshold and it abstains everywhere;
- for items worth full marks, the answer is about as close to the model answer (less MARGIN) as a graded answer
  that has full marks. An off-topic answer, far from every graded answer and from the model answer, gets nothing.
`confidence` is how often those leave-one-out suggestions were right at the threshold, one miss counted in advance
((right + 1) / (n + 2)), rising linearly to 1 for an answer identical to an example. Blank answers get no
suggestion; `like` names the graded student whose answer is closest.

A suggestion is never a mark: nothing here writes to OUT but the embeddings' cache (marking.mark's `--suggest`
reads the log); a TA accepts it or not.
"""

import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from autograder import rubrics
from autograder.marking import groups
from autograder.records import is_blank_answer

COLUMNS = ["student", "items", "confidence", "like"]
ENCODERS = ("minilm", "tfidf")
TARGET = 0.95  # share of leave-one-out suggestions that must be exactly right at or above the threshold
SUPPORT = 3  # leave-one-out suggestions at or above a threshold needed to trust it
MARGIN = 0.05  # examples within this cosine of the closest must all agree on the items, or it abstains


@dataclass(frozen=True)
class Suggestion:
    """What the suggester would mark an answer: `items` (None: it abstains), `confidence` in [0, 1] (None where it
    abstains), `like` the graded student whose answer is closest ('' before any mark)."""

    items: tuple[str, ...] | None
    confidence: float | None
    like: str


def _tfidf_similarities(texts: list[str]) -> np.ndarray:
    """Cosine similarities (n, n) of TF-IDF of words and word pairs, and of character 2- to 5-grams, averaged (sparse
    rows: a long answer's thousands of n-grams cost nothing where they are absent)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    words = TfidfVectorizer(preprocessor=groups.normalise, token_pattern=r"\S+", ngram_range=(1, 2), sublinear_tf=True)
    chars = TfidfVectorizer(preprocessor=groups.normalise, analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True)
    parts = [v.fit_transform(texts) for v in (words, chars)]  # rows of length 1 (or 0 for a text without any)
    return sum((p @ p.T).toarray() for p in parts) / len(parts)


def similarities(texts: list[str], encoder: str = "minilm", cache=None) -> np.ndarray:
    """Cosine similarities (n, n) of `texts`: of their MiniLM rows (from `cache` where given) and of TF-IDF, averaged
    (the cosine of the two unit rows side by side), or of TF-IDF alone."""
    if encoder not in ENCODERS:
        raise ValueError(f"unknown encoder {encoder!r}: use one of {', '.join(ENCODERS)}")
    texts = [t[: groups.LIMIT] for t in texts]
    words = _tfidf_similarities(texts)
    if encoder == "tfidf":
        return words
    meaning = np.asarray((cache or groups._minilm_rows)(texts), dtype=float)  # (n, 384)
    return (meaning @ meaning.T + words) / 2


class Suggester:
    """The suggestions for one question's answers ({student: text}); `suggest(marks)` is cheap to call again after
    each new mark (the similarities are computed once, in the constructor)."""

    def __init__(
        self,
        answers: Mapping[str, str],
        rubric: rubrics.Rubric,
        points: float | None = None,
        encoder: str = "minilm",
        cache=None,
        stub: str = groups.STUB,
    ):
        self.rubric = rubric
        self.points = sum(i.points for i in rubric.items if i.points > 0) if points is None else points
        self.model_items = tuple(i.id for i in rubric.items if i.points > 0)
        self.blank = {s for s, t in answers.items() if is_blank_answer(t[: groups.LIMIT], stub)}
        self.students = sorted(s for s in answers if s not in self.blank)
        texts = [answers[s] for s in self.students] + [rubric.answer]
        self.sims = similarities(texts, encoder, cache)  # (n + 1, n + 1); the model answer last
        self.texts = texts
        self.index = {s: n for n, s in enumerate(self.students)}
        self.model = len(self.students)

    def suggest(self, marks: Mapping[str, Iterable[str]]) -> dict[str, Suggestion]:
        """{student: Suggestion} for every answer that is not blank and not in `marks` ({student: the items of its
        live mark}: the examples, with the model answer)."""
        graded = sorted(s for s in marks if s in self.index)
        labels = [tuple(sorted(marks[s])) for s in graded] + [tuple(sorted(self.model_items))]
        examples = [self.index[s] for s in graded] + [self.model]
        threshold, trust = calibrate(self.sims[np.ix_(examples, examples)], labels)
        todo = [s for s in self.students if s not in marks]
        if not todo:
            return {}
        sims = self.sims[np.ix_([self.index[s] for s in todo], examples)]  # (N, G + 1)
        full = [n for n, label in zip(examples, labels[:-1]) if self._full(label)]
        # full marks only for an answer about as close to the model answer as a graded answer with full marks
        near_model = min((float(self.sims[n, self.model]) for n in full), default=1.0) - MARGIN
        found = {}
        for n, student in enumerate(todo):
            like = graded[int(np.argmax(sims[n, :-1]))] if graded else ""
            guess = None if threshold is None else nearest(sims[n], labels)
            # an answer that reads as its closest example with a negation added or taken away says the opposite
            opposite = groups.flipped(self.texts[self.index[student]], self.texts[examples[int(np.argmax(sims[n]))]])
            if guess is None or guess[1] < threshold or opposite or (self._full(guess[0]) and sims[n, -1] < near_model):
                found[student] = Suggestion(None, None, like)
                continue
            items, score = guess
            confidence = trust + (1 - trust) * max(0.0, score - threshold) / max(1 - threshold, 1e-9)
            ordered = tuple(i for i in self.rubric.ids if i in items)
            found[student] = Suggestion(ordered, round(min(confidence, 1.0), 2), like)
        return found

    def _full(self, items: tuple[str, ...]) -> bool:
        return rubrics.score(self.rubric, items, 0.0, self.points) >= self.points


def nearest(sims: np.ndarray, labels: list[tuple[str, ...]]) -> tuple[tuple[str, ...], float] | None:
    """(the closest example's items, its similarity), or None when an example within MARGIN of it has other items
    (the closest graded answers disagree)."""
    best = int(np.argmax(sims))
    if not np.isfinite(sims[best]):
        return None
    close = np.flatnonzero(sims >= sims[best] - MARGIN)
    if any(labels[i] != labels[best] for i in close):
        return None
    return labels[best], float(sims[best])


def calibrate(sims: np.ndarray, labels: list[tuple[str, ...]]) -> tuple[float | None, float]:
    """(threshold, trust) from leave-one-out suggestions on the examples (their similarities (G, G), their item
    sets): each example suggested for from the others; the threshold is the lowest similarity at which those at or above it were
    exactly right at least TARGET of the time, on at least SUPPORT of them (None: no such similarity, or the
    examples hold a single item set); trust is how often they were right there, one miss counted in advance
    ((right + 1) / (n + 2))."""
    if len(set(labels)) < 2:
        return None, 0.0
    sims = np.array(sims, dtype=float)  # a copy: its diagonal is not a neighbour
    np.fill_diagonal(sims, -np.inf)
    made = sorted(
        (
            (g[1], g[0] == label)
            for g, label in ((nearest(row, labels), label) for row, label in zip(sims, labels))
            if g
        ),
        key=lambda m: -m[0],
    )
    threshold, trust, right = None, 0.0, 0
    for k, (score, ok) in enumerate(made, 1):
        right += ok
        if k < len(made) and made[k][0] == score:  # ties go in together
            continue
        if k >= SUPPORT and ok and right / k >= TARGET:
            threshold, trust = score, (right + 1) / (k + 2)
    return threshold, trust


def to_csv(suggestions: Mapping[str, Suggestion]) -> str:
    """student,items,confidence,like: one row per suggestion, in student order."""
    from autograder import csvsafe

    buf = io.StringIO()
    writer = csvsafe.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for student in sorted(suggestions):
        s = suggestions[student]
        if s.items is None:
            writer.writerow([student, "", "", s.like])
        else:
            writer.writerow([student, ";".join(s.items), f"{s.confidence:.2f}", s.like])
    return buf.getvalue()
