"""The Pig Latin data: rules on hand-written examples, file format, sizes and byte-for-byte reproducibility."""

import re

import pytest

from autograder.content.datagen import piglatin
from autograder.paths import DATA

SMALL = DATA / "pig_latin_small.txt"
LARGE = DATA / "pig_latin_large.txt"


def read_pairs(path):
    return [tuple(line.split(" ")) for line in path.read_text().splitlines()]


@pytest.mark.parametrize(
    "english, expected",
    [
        ("air", "airway"),  # vowel-initial words take "way"
        ("is", "isway"),
        ("a", "away"),
        ("the", "ethay"),  # "th" moves as a block
        ("child", "ildchay"),  # "ch" moves as a block
        ("shop", "opshay"),  # "sh" moves as a block
        ("string", "ingstray"),  # the whole leading cluster moves
        ("conditioning", "onditioningcay"),
        ("working", "orkingway"),
        ("queen", "eenquay"),  # "qu" stays together
        ("square", "aresquay"),  # "squ": the u after q joins the cluster
        ("yes", "esyay"),  # y is a consonant at the start
        ("rhythm", "ythmrhay"),  # y is a vowel elsewhere
        ("my", "ymay"),
        ("hmm", "hmmay"),  # no vowel: nothing moves
    ],
)
def test_rule_examples(english, expected):
    """Does pig_latin follow the documented rules on this hand-written example?"""
    assert piglatin.pig_latin(english) == expected, f"expected {expected!r}, got {piglatin.pig_latin(english)!r}"


@pytest.mark.parametrize("bad", ["Apple", "don't", "e-mail", "", "caf\u00e9"])
def test_rejects_non_az_words(bad):
    """Does pig_latin refuse anything that is not a lowercase a-z word?"""
    with pytest.raises(ValueError):
        piglatin.pig_latin(bad)


@pytest.mark.parametrize("path", [SMALL, LARGE], ids=["small", "large"])
def test_file_format(path):
    """Is every committed line `english piglatin` in lowercase a-z, consistent with the rules, without duplicates?"""
    text = path.read_bytes().decode("ascii")
    assert text.endswith("\n") and "\r" not in text, "expected Unix newlines and a final newline"
    pairs = read_pairs(path)
    bad = [p for p in pairs if len(p) != 2 or not all(re.fullmatch("[a-z]+", w) for w in p)]
    assert not bad, f"expected two a-z words per line, saw {bad[:3]}"
    wrong = [(e, t) for e, t in pairs if piglatin.pig_latin(e) != t]
    assert not wrong, f"expected translations that follow the rules, saw {wrong[:3]}"
    words = [e for e, _ in pairs]
    assert len(words) == len(set(words)), f"expected unique words, saw {len(words) - len(set(words))} duplicates"


def test_sizes_and_superset():
    """Is the small set about 3,200 words and the large set the small set plus the top-20,000 words?"""
    small = [e for e, _ in read_pairs(SMALL)]
    large = [e for e, _ in read_pairs(LARGE)]
    assert len(small) == 3200, f"expected 3200 small-set words, saw {len(small)}"
    assert large[: len(small)] == small, "expected the large set to start with the small set"
    assert 21_000 <= len(large) <= 23_000, f"expected about 22,000 large-set words, saw {len(large)}"
    top = piglatin.english_words(20_000)
    assert set(top) <= set(large), (
        f"expected every top-20,000 a-z word in the large set, {len(set(top) - set(large))} missing"
    )
    assert {"the", "air", "conditioning", "is", "working"} <= set(large), "expected the demo sentence's words"


def test_regeneration_is_byte_for_byte(tmp_path):
    """Does re-running the generator reproduce the committed files byte for byte?"""
    written = piglatin.generate(tmp_path)
    assert sorted(p.name for p in written) == ["pig_latin_large.txt", "pig_latin_small.txt"]
    for p in written:
        committed = DATA / p.name
        assert p.read_bytes() == committed.read_bytes(), f"expected {p.name} to match the committed file"
