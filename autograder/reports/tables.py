"""The grade tables' shared reading: which grades_by_cell rows say something about a check, and a check's message
as a reason many students share. `report` and `items` both read the tables through these."""

import re

import pandas as pd

from autograder.contract import WRITTEN
from autograder.records import BLANK, HAND_GRADED, WAITING, Status, was_graded
from autograder.text import one_line

MANUAL = Status.NEEDS_MANUAL.value  # status prefix of a graded submission with a cell a person must grade
NOT_ATTEMPTED = "NotImplementedError"  # what a function left as released raises
# what the visible check of a value left as released says (theory's and clip's value cells: "regimes is not set yet")
NOT_SET = re.compile(r"\b(\w+) is not set yet\b")


WRITTEN_IDS = frozenset(gid for answers in WRITTEN.values() for gid in answers)
NOT_GRADED_WRITTEN = "not graded: "  # a written answer of a notebook that was not graded (records.final_scores)


def left_out(by_cell):
    """Which grades_by_cell rows say nothing about a check, by kind (a boolean Series each): written answers (graded
    by hand, waiting, blank: a blank answer is no failed check), cells a person grades or graded (the check could
    not decide) and cells left as released (a function raising NotImplementedError, a value whose visible check says
    it "is not set yet": not attempted)."""
    message = by_cell["message"].fillna("") if "message" in by_cell.columns else pd.Series("", index=by_cell.index)
    written = (
        by_cell["grade_id"].isin(WRITTEN_IDS)
        | message.isin([WAITING, BLANK])
        | message.str.startswith(NOT_GRADED_WRITTEN)
    )
    person = ~written & (by_cell["score"].isna() | (message == HAND_GRADED) | message.str.startswith(MANUAL))
    unset = pd.Series(
        [bool((m := NOT_SET.search(text)) and m[1] == gid) for text, gid in zip(message, by_cell["grade_id"])],
        index=by_cell.index,
        dtype=bool,
    )
    not_attempted = ~written & ~person & (message.str.contains(NOT_ATTEMPTED) | unset)
    return {"written answers": written, "cells graded by a person": person, "cells left as released": not_attempted}


def left_out_counts(by_cell, grades=None):
    """How many cells of graded submissions each kind of left_out() leaves out of the check statistics."""
    rows = _of_graded(by_cell, grades)
    return {what: int(mask.sum()) for what, mask in left_out(rows).items()}


def _of_graded(by_cell, grades):
    """The rows of submissions that were graded (all of them when grades.csv rows are not given)."""
    if grades is None:
        return by_cell.reset_index(drop=True)
    graded = grades.loc[grades["status"].map(is_graded), ["student", "notebook"]]
    return by_cell.merge(graded, on=["student", "notebook"])


def attempted_checks(by_cell, grades=None):
    """The grades_by_cell rows that say something about a check: test cells a check scored in graded submissions.

    Left out (left_out()): written answers, cells a person must grade or graded (whatever score they carry),
    cells left as released (NotImplementedError: not attempted) and, when grades.csv rows are given, every cell
    of a submission that was not graded (missing, unreadable).
    """
    rows = _of_graded(by_cell, grades)
    if rows.empty:
        return rows
    kept = ~pd.concat(list(left_out(rows).values()), axis=1).any(axis=1)
    return rows[kept]


def reason(message, grade_id):
    """A check's one-line message as a reason shared by many students: no prefix, numbers and lists as N."""
    text = re.sub(rf"^(CheckFailed: )?{re.escape(grade_id)}: ", "", str(message))
    text = re.sub(r"\[[^\]]*\]|\([-\d., ]+\)|-?\d+(\.\d+)?(e-?\d+)?", "N", text)
    return one_line(text, 90) or "(empty)"


def is_graded(status):
    """True for a submission that was graded, including one with a cell left to a person."""
    return was_graded(status)
