"""The verbal-arithmetic data: reproducible byte for byte, complete, correctly labelled, stratified split."""

import csv
import filecmp

import pytest

from autograder.content.datagen import arithmetic
from autograder.paths import SOURCE

WORD_VALUE = {word: i for i, word in enumerate(arithmetic.NUMBERS)}


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("arith")
    paths = arithmetic.generate(out)
    return {p.name: p for p in paths}


def test_regeneration_is_byte_identical(tmp_path, generated):
    """Does generating twice give byte-identical files?"""
    again = {p.name: p for p in arithmetic.generate(tmp_path)}
    assert sorted(again) == sorted(generated)
    different = [n for n in again if not filecmp.cmp(again[n], generated[n], shallow=False)]
    assert not different, f"expected identical files, saw differences in {different}"


def test_committed_files_are_up_to_date(generated):
    """Are the committed CSV files exactly what the generator writes?"""
    for rel in arithmetic.FILES.values():
        committed = SOURCE / rel
        assert committed.exists(), f"expected {committed} to be committed"
        assert filecmp.cmp(committed, generated[committed.name], shallow=False), (
            f"{rel} is stale: run python -m autograder data"
        )


def test_counts(generated):
    """Are there 640 training and 160 test rows with the expected label counts?"""
    train = read(generated["arithmetic_train.csv"])
    test = read(generated["arithmetic_test.csv"])
    count = lambda rows: {lab: sum(r["label"] == str(lab) for r in rows) for lab in range(3)}  # noqa: E731
    assert (len(train), len(test)) == (640, 160), f"expected 640/160 rows, got {len(train)}/{len(test)}"
    assert count(train) == {0: 152, 1: 17, 2: 471}, f"train label counts: got {count(train)}"
    assert count(test) == {0: 38, 1: 4, 2: 118}, f"test label counts: got {count(test)}"


def test_every_expression_once_and_correctly_labelled(generated):
    """Does the union of both files hold every 'a plus b' and 'a minus b' exactly once, labelled by sign?"""
    rows = read(generated["arithmetic_train.csv"]) + read(generated["arithmetic_test.csv"])
    sentences = [r["sentence"] for r in rows]
    assert len(set(sentences)) == 800, f"expected 800 distinct sentences, got {len(set(sentences))}"
    for row in rows:
        a, op, b = row["sentence"].split()
        value = WORD_VALUE[a] + (WORD_VALUE[b] if op == "plus" else -WORD_VALUE[b])
        want = 0 if value < 0 else (1 if value == 0 else 2)
        assert row["label"] == str(want), f"{row['sentence']!r}: expected label {want}, got {row['label']}"


def test_split_is_stratified(generated):
    """Does each label give the test set 20 % of its sentences (rounded)?"""
    train = read(generated["arithmetic_train.csv"])
    test = read(generated["arithmetic_test.csv"])
    for lab in ("0", "1", "2"):
        n_test = sum(r["label"] == lab for r in test)
        n_all = n_test + sum(r["label"] == lab for r in train)
        assert abs(n_test - 0.2 * n_all) < 1, (
            f"label {lab}: {n_test} of {n_all} in test, expected about {0.2 * n_all:.1f}"
        )


def test_file_format(generated):
    """Do the files start with the header 'sentence,label' and use '\\n' line ends only?"""
    for path in generated.values():
        data = path.read_bytes()
        assert data.startswith(b"sentence,label\n"), f"{path.name}: header is {data[:20]!r}"
        assert b"\r" not in data, f"{path.name}: expected \\n line ends"


def test_data_command_knows_the_generator():
    """Is the arithmetic generator one of those `python -m autograder data` runs?"""
    from autograder.content import data

    assert "arithmetic" in data.GENERATORS
