"""Verbal arithmetic for bert.ipynb: every "a plus b" and "a minus b" with a, b in zero ... nineteen.

Each sentence is labelled by the sign of its value: 0 negative, 1 zero, 2 positive. That gives
20 * 20 * 2 = 800 sentences (190 negative, 21 zero, 589 positive). The split into 640 train and
160 test sentences is stratified by label: each label gives 20 % of its sentences to the test set
(largest-remainder rounding, so the counts add up to exactly 160: 38 negative, 4 zero, 118 positive).

Which sentences go to the test set, and the row order of both files, come from sorting by a SHA-256
hash of the seed and the sentence. That depends on nothing but this file, so every machine and Python
version writes the same bytes.

Files: data/arithmetic_train.csv and data/arithmetic_test.csv, columns `sentence,label`, "\\n" line ends.
"""

import csv
import hashlib
import io
from pathlib import Path

NUMBERS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
OPERATORS = {"plus": 1, "minus": -1}
LABELS = {0: "negative", 1: "zero", 2: "positive"}
SEED = "a3-arithmetic-2024"
TEST_SIZE = 160
FILES = {"train": "data/arithmetic_train.csv", "test": "data/arithmetic_test.csv"}


def label_of(value):
    """0 for a negative value, 1 for zero, 2 for a positive value."""
    return 0 if value < 0 else (1 if value == 0 else 2)


def all_examples():
    """Every (sentence, label) pair, in a fixed order: 800 of them."""
    examples = []
    for op, sign in OPERATORS.items():
        for a, word_a in enumerate(NUMBERS):
            for b, word_b in enumerate(NUMBERS):
                examples.append((f"{word_a} {op} {word_b}", label_of(a + sign * b)))
    return examples


def _key(sentence):
    return hashlib.sha256(f"{SEED}:{sentence}".encode()).hexdigest()


def split(examples, test_size=TEST_SIZE):
    """Stratified split: (train, test) lists of (sentence, label), each ordered by hash."""
    by_label = {}
    for sentence, label in examples:
        by_label.setdefault(label, []).append((sentence, label))
    fraction = test_size / len(examples)
    quota = {label: int(len(rows) * fraction) for label, rows in by_label.items()}
    # Largest remainder: the labels with the biggest fractional parts get the leftover test slots.
    leftover = test_size - sum(quota.values())
    by_remainder = sorted(by_label, key=lambda lab: (-(len(by_label[lab]) * fraction % 1), lab))
    for label in by_remainder[:leftover]:
        quota[label] += 1
    train, test = [], []
    for label in sorted(by_label):
        rows = sorted(by_label[label], key=lambda row: _key(row[0]))
        test += rows[: quota[label]]
        train += rows[quota[label] :]
    return sorted(train, key=lambda row: _key(row[0])), sorted(test, key=lambda row: _key(row[0]))


def to_csv(rows):
    """CSV text with a header line and "\\n" line ends."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["sentence", "label"])
    writer.writerows(rows)
    return buffer.getvalue()


def generate(source_dir: Path) -> list[Path]:
    """Write the train and test CSV files under source_dir/data/; return their paths."""
    train, test = split(all_examples())
    written = []
    for name, rows in (("train", train), ("test", test)):
        path = Path(source_dir) / FILES[name]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(to_csv(rows).encode("utf-8"))
        written.append(path)
    return written
