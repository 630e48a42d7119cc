"""Tests of autograder/text.py: the one-line helper behind every error line."""

from autograder.text import one_line


def test_string_whitespace_folds_to_single_spaces():
    """Does one_line fold newlines, tabs and runs of spaces into single spaces and drop them at the ends?"""
    assert one_line("  Zoë wrote\n\tline two   and\r\nthree  ") == "Zoë wrote line two and three"


def test_exception_is_written_with_its_type_name():
    """Is an exception written as 'TypeName: message' on one line?"""
    assert one_line(ValueError("bad\nshape  (3, 4)")) == "ValueError: bad shape (3, 4)"


def test_exception_without_message_keeps_its_type_name():
    """Does an exception with an empty message give just its type name (no trailing colon or space)?"""
    assert one_line(KeyError()) == "KeyError:"


def test_limit_cuts_the_folded_line():
    """Does the limit cut the line after folding, keeping exactly `limit` characters?"""
    assert one_line("李明 " * 10, 5) == "李明 李明"
    assert one_line("a\n\nb", 3) == "a b"


def test_short_text_is_not_cut_or_marked():
    """Is a line within the limit returned whole, without the `more` mark?"""
    assert one_line("short", 300, more="...") == "short"


def test_more_marks_a_cut_line_within_the_limit():
    """Does a cut line end with `more` and stay within the limit?"""
    line = one_line(RuntimeError("x" * 400), 300, more="...")
    assert len(line) == 300 and line.startswith("RuntimeError: xxx") and line.endswith("x...")


def test_no_limit_keeps_everything():
    """Does limit=None keep the whole folded text?"""
    assert one_line("word " * 1000) == " ".join(["word"] * 1000)


def test_empty_text_gives_an_empty_line():
    """Does empty or blank text give '' (so callers can write `one_line(x, 60) or "(empty)"`)?"""
    assert one_line("", 60) == "" and one_line(" \n\t ", 60) == ""
