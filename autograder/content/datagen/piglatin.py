"""English -> Pig Latin word pairs for nmt.ipynb: `pig_latin_small.txt` and `pig_latin_large.txt`.

Each file holds one pair per line, ``english piglatin``, lowercase a-z only.

Pig Latin rules (ours; applied by :func:`pig_latin`):

1. A word that starts with a vowel (a, e, i, o, u) gets ``way``: ``air -> airway``, ``is -> isway``.
2. Otherwise the leading consonant cluster (every letter before the first vowel) moves to the end as one
   block, followed by ``ay``: ``the -> ethay``, ``child -> ildchay``, ``string -> ingstray``.
3. ``y`` is a consonant as the first letter (``yes -> esyay``) and a vowel anywhere else
   (``rhythm -> ythmrhay``, ``my -> ymay``).
4. ``qu`` stays together: a ``u`` right after a ``q`` belongs to the cluster (``queen -> eenquay``,
   ``square -> aresquay``).
5. A word with no vowel at all moves nothing and gets ``ay``: ``hmm -> hmmay``.

These are not the original assignment handout's rules, which move only the first letter of a word that
starts with a consonant (``team -> eamtay``), except for some consonant pairs such as ``sh`` that move
together (``shopping -> oppingshay``), and do not mention ``y``, ``qu`` or words without vowels.
nmt.ipynb says so where it describes the data.

Word lists (all from the ``wordfreq`` package, pinned to 3.1.1 in requirements.txt, which ships its
frequency tables offline):

* candidates: ``wordfreq.top_n_list("en", 100_000)`` keeping words made of a-z only (first occurrence);
* small set: the 3,200 candidates with the smallest SHA-256 digest of ``"a3-pig-latin:" + word`` (a
  seeded, Python-version-independent sample of common and rarer words), in frequency order;
* large set: the small set, then every word of ``wordfreq.top_n_list("en", 20_000)`` made of a-z only
  that is not already in it, in frequency order (22,127 words with wordfreq 3.1.1).

Re-running reproduces both files byte for byte (``python -m autograder data --check`` verifies it).
"""

import hashlib
import re
from pathlib import Path

SMALL_SIZE = 3200
CANDIDATE_POOL = 100_000
LARGE_TOP_N = 20_000
SALT = "a3-pig-latin:"
VOWELS = set("aeiou")
_WORD = re.compile(r"[a-z]+")


def pig_latin(word):
    """Translate one lowercase a-z word into Pig Latin with the rules in this module's docstring."""
    if not _WORD.fullmatch(word):
        raise ValueError(f"expected a lowercase a-z word, got {word!r}")
    if word[0] in VOWELS:
        return word + "way"
    end = 1
    while end < len(word) and word[end] not in VOWELS and word[end] != "y":
        end += 1
    if word[end - 1] == "q" and end < len(word) and word[end] == "u":
        end += 1
    return word[end:] + word[:end] + "ay"


def english_words(n):
    """The n most frequent English words of wordfreq, keeping only a-z words, deduplicated, in rank order."""
    import wordfreq

    seen = set()
    words = []
    for w in wordfreq.top_n_list("en", n):
        if _WORD.fullmatch(w) and w not in seen:
            seen.add(w)
            words.append(w)
    return words


def small_words():
    """The small set: a hash-seeded sample of SMALL_SIZE candidate words, in frequency order."""
    pool = english_words(CANDIDATE_POOL)
    digest = {w: hashlib.sha256((SALT + w).encode()).hexdigest() for w in pool}
    chosen = set(sorted(pool, key=digest.__getitem__)[:SMALL_SIZE])
    return [w for w in pool if w in chosen]


def large_words(small):
    """The large set: the small set followed by the top-LARGE_TOP_N words it does not contain."""
    have = set(small)
    return list(small) + [w for w in english_words(LARGE_TOP_N) if w not in have]


def write_pairs(path, words):
    """Write `english piglatin` lines (Unix newlines) to path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(f"{w} {pig_latin(w)}\n" for w in words)
    path.write_bytes(text.encode("ascii"))
    return path


def generate(source_dir):
    """Write data/pig_latin_small.txt and data/pig_latin_large.txt under source_dir; return their paths."""
    data = Path(source_dir) / "data"
    small = small_words()
    return [
        write_pairs(data / "pig_latin_small.txt", small),
        write_pairs(data / "pig_latin_large.txt", large_words(small)),
    ]
