"""Look-alike names: the grading log names students whose names a reader could take for one another, and only
those. Each student is still graded under their own id (tests/grading/test_identity.py)."""

import pytest

from autograder.grading import discover, pipeline

SAME_TO_A_READER = [
    ("Anna Lee", "anna_lee"),  # case, an underscore for the space
    ("Zoë Ñúñez", "Zoe\u0308 Ñúñez"),  # NFC and NFD
    ("John Smith", "J\u043ehn Smith"),  # Cyrillic о
    ("Aleksandr Petrov", "\u0410leksandr Petrov"),  # Cyrillic capital А
    ("Ahmed", "Ahm\u0435d"),  # Cyrillic е
    ("Ivan", "\u0399van"),  # Greek capital Iota
    ("Sara", "Ｓａｒａ"),  # full-width letters
    ("Li Wei", "Li  Wei."),  # doubled space, a trailing dot
]

DIFFERENT_TO_A_READER = [
    ("Zoë", "Zoe"),  # the accent shows
    ("Søren", "Soren"),
    ("Łukasz", "Lukasz"),
    ("李明", "李朋"),
    ("Jon", "John"),
    ("Anna Lee", "Ana Lee"),
]


@pytest.mark.parametrize("a, b", SAME_TO_A_READER)
def test_names_a_reader_cannot_tell_apart_share_a_key(a, b):
    """Do two names that differ only in what a reader cannot see (case, spacing, Unicode form, a Cyrillic or
    Greek letter drawn like a Latin one) get the same look-alike key?"""
    assert discover.look_alike_key(a) == discover.look_alike_key(b)


@pytest.mark.parametrize("a, b", DIFFERENT_TO_A_READER)
def test_names_a_reader_tells_apart_keep_their_own_keys(a, b):
    """Do two names a reader can tell apart (an accent, another character, another spelling) get different keys?"""
    assert discover.look_alike_key(a) != discover.look_alike_key(b)


def test_log_names_a_cyrillic_look_alike_pair_and_no_one_else():
    """With 'John Smith', 'Jоhn Smith' (Cyrillic о), 'Jon Smith' and '李明' in a batch, does the log name exactly the
    two John Smiths?"""
    students = {name: [] for name in ("John Smith", "J\u043ehn Smith", "Jon Smith", "李明")}
    lines = pipeline.look_alikes(students)
    cyrillic = "'J\u043ehn Smith' (as 'J\\u043ehn Smith')"
    assert lines == [f"LOOK-ALIKE names, graded as different students: 'John Smith', {cyrillic}"], lines
