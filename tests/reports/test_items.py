"""autograder.reports.items: facility, item-rest discrimination and Cronbach's α on hand-made score matrices (against
a slow reference implementation), cells left out, failure messages against the mutant catalogues, rubric items."""

import json
import math
import random

import pandas as pd
import pytest

from autograder import contract
from autograder.reports import items, report, tables

# Four students, three one-point items: totals 3, 2, 1, 0. Item variances 1/4, 1/3, 1/4, total variance 5/3,
# so α = 3/2 · (1 − (5/6)/(5/3)) = 0.75.
GUTTMAN = {"s1": [1, 1, 1], "s2": [1, 1, 0], "s3": [1, 0, 0], "s4": [0, 0, 0]}


def frames(scores, maxima=None, notebook="nb", status=None, messages=None):
    """grades.csv and grades_by_cell.csv rows for {student: [points per item, None: waiting]} on items i0, i1, …;
    status: {student: status} for notebooks that were not graded."""
    k = len(next(iter(scores.values())))
    maxima = maxima or [1.0] * k
    status = status or {}
    cells, grades = [], []
    for student, points in scores.items():
        grades.append({"student": student, "notebook": notebook, "status": status.get(student, "graded")})
        for i, p in enumerate(points):
            message = (messages or {}).get((student, i), "passed" if p == maxima[i] else f"i{i}: wrong")
            cells.append(
                {
                    "student": student,
                    "notebook": notebook,
                    "grade_id": f"i{i}",
                    "score": math.nan if p is None else float(p),
                    "max_score": maxima[i],
                    "message": "waiting for a person" if p is None else message,
                }
            )
    return pd.DataFrame(cells), pd.DataFrame(grades)


def slow_alpha(rows):
    """Cronbach's α by its textbook formula, in plain Python (rows: lists of points, every item scored)."""
    k = len(rows[0])

    def var(xs):
        m = sum(xs) / len(xs)
        return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)

    return k / (k - 1) * (1 - sum(var([r[i] for r in rows]) for i in range(k)) / var([sum(r) for r in rows]))


def slow_item_rest(rows, i):
    """Pearson's r of item i with the total of the other items, in plain Python."""
    x = [r[i] for r in rows]
    y = [sum(r) - r[i] for r in rows]
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    return sxy / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))


def test_alpha_of_a_guttman_matrix_is_three_quarters():
    """Is α of the hand-made matrix with totals 3, 2, 1, 0 exactly 0.75, from all four students?"""
    points, _, _ = items.score_matrix(*frames(GUTTMAN))
    assert items.alpha(points) == (pytest.approx(0.75), 4)


def test_alpha_of_identical_items_is_one():
    """Do items every student scores alike (parallel items) give α = 1?"""
    points, _, _ = items.score_matrix(*frames({"a": [2, 2], "b": [1, 1], "c": [0, 0], "d": [2, 2]}, [2.0, 2.0]))
    assert items.alpha(points)[0] == pytest.approx(1.0)


def test_item_rest_of_the_guttman_matrix():
    """Is the first item's item-rest correlation that of (1, 1, 1, 0) with the rest's totals (2, 1, 0, 0)?"""
    points, maxima, _ = items.score_matrix(*frames(GUTTMAN))
    expected = slow_item_rest(list(GUTTMAN.values()), 0)
    assert expected == pytest.approx(0.5222, abs=1e-4)
    assert items.discrimination(points, maxima)[("nb", "i0")] == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(5))
def test_random_matrices_match_the_slow_reference(seed):
    """On random complete matrices of unequal item maxima, do α and every item-rest correlation equal the plain
    Python reference to 1e-9?"""
    rng = random.Random(seed)
    maxima = [float(rng.choice([1, 2, 3])) for _ in range(6)]
    ability = {f"s{n}": rng.random() for n in range(30)}
    scores = {s: [min(m, round(m * (a + rng.gauss(0, 0.3)))) for m in maxima] for s, a in ability.items()}
    scores = {s: [max(0.0, p) for p in row] for s, row in scores.items()}
    points, mx, _ = items.score_matrix(*frames(scores, maxima))
    rows = list(scores.values())
    assert items.alpha(points)[0] == pytest.approx(slow_alpha(rows), abs=1e-9)
    disc = items.discrimination(points, mx)
    for i in range(len(maxima)):
        assert disc[("nb", f"i{i}")] == pytest.approx(slow_item_rest(rows, i), abs=1e-9)


def test_facility_is_the_mean_share_of_the_points():
    """Is facility the mean share of an item's points (two of four students earn 1 of 2 points, two all 2: 0.75)?"""
    points, maxima, _ = items.score_matrix(*frames({"a": [1], "b": [1], "c": [2], "d": [2]}, [2.0]))
    assert items.facility(points, maxima)[("nb", "i0")] == pytest.approx(0.75)


def test_missing_notebooks_and_waiting_cells_are_left_out_and_counted():
    """Are a notebook that was not graded and a cell waiting for a person left out of facility, discrimination and α
    (computed on the others as if they were not there), and counted?"""
    scores = dict(GUTTMAN, s5=[0, 0, 0], s6=[1, None, 1])
    by_cell, grades = frames(scores, status={"s5": "missing"})
    table, left_out = items.analysis(by_cell, grades)
    assert left_out == {"notebooks not graded (missing or unreadable)": 1, "cells waiting for a person": 1}
    alone, _ = items.analysis(*frames(GUTTMAN))
    row = table.set_index(["kind", "grade_id"])
    assert row.loc[("notebook", ""), "alpha"] == pytest.approx(0.75)  # s6 lacks an item: not in α
    assert row.loc[("notebook", ""), "scored"] == 4
    assert row.loc[("autograded", "i1"), "scored"] == 4 and row.loc[("autograded", "i0"), "scored"] == 5
    assert row.loc[("autograded", "i1"), "facility"] == pytest.approx(0.5)
    assert row.loc[("autograded", "i1"), "discrimination"] == pytest.approx(
        alone.set_index("grade_id").loc["i1", "discrimination"]
    )


def test_flags_name_easy_hard_and_undiscriminating_items():
    """Are items flagged too easy above 0.95 facility, too hard below 0.1, and low discrimination below 0.2, and
    an item with nothing to say not flagged?"""
    assert items.flags(0.97, 0.5) == "too easy"
    assert items.flags(0.05, math.nan) == "too hard"
    assert items.flags(0.5, 0.1) == "low discrimination"
    assert items.flags(0.5, 0.5) == ""


def test_assignment_alpha_spans_notebooks():
    """Is there one α row per notebook and one for the assignment, over the items of both notebooks?"""
    a_cells, a_grades = frames(GUTTMAN, notebook="a")
    b_cells, b_grades = frames(GUTTMAN, notebook="b")
    table, _ = items.analysis(pd.concat([a_cells, b_cells]), pd.concat([a_grades, b_grades]))
    scopes = table[table["grade_id"] == ""].set_index("kind")
    rows = [GUTTMAN[s] + GUTTMAN[s] for s in GUTTMAN]
    assert list(table["kind"]) == ["autograded"] * 6 + ["notebook", "notebook", "assignment"]
    assert scopes.loc["assignment", "alpha"] == pytest.approx(slow_alpha(rows))


def test_a_real_message_no_mutant_produces_is_listed():
    """Is each failure reason counted over the students, and one the hidden check gives that no catalogue mutant
    produces marked False (numbers, or the exception's type grades_by_cell.csv puts first, do not make a message
    new)?"""
    messages = {
        ("s2", 2): "i2: expected shape (2, 3), got (3, 2)",
        ("s3", 2): "AssertionError: i2: expected shape (4, 5), got (5, 4)",
        ("s4", 2): "CheckFailed: i2: returned None",
    }
    by_cell, grades = frames(GUTTMAN, messages=messages)
    catalogue = {("nb", "i2"): {tables.reason("i2: expected shape (9, 9), got (1, 1)", "i2")}}
    table = items.messages(by_cell, grades, catalogue).set_index(["grade_id", "reason"])
    assert table.loc[("i2", "expected shape N, got N")].tolist() == ["nb", 2, "hidden", True]
    assert table.loc[("i2", "returned None")].tolist() == ["nb", 1, "hidden", False]
    assert (table.loc["i0", "in_catalogue"] == "").all()  # no catalogue for i0: neither known nor new


def test_a_visible_asserts_message_is_not_compared_with_the_catalogue():
    """Is a message of the test cell's visible asserts (no grade id first) counted as the visible check's, and
    neither known nor new to the hidden check's catalogue?"""
    messages = {("s4", 2): "AssertionError: weights should sum to 1 over the keys, got 2"}
    by_cell, grades = frames(GUTTMAN, messages=messages)
    table = items.messages(by_cell, grades, {("nb", "i2"): {"x"}}).set_index(["grade_id", "reason"])
    row = table.loc[("i2", "weights should sum to N over the keys, got N")]
    assert (row["check"], row["in_catalogue"]) == ("visible", "")


def test_catalogue_file_is_read_as_reasons(tmp_path):
    """Are the catalogue file's messages read as the reasons students' messages are compared by?"""
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"nb": {"i0": ["i0: expected 3, got 4"]}}))
    assert items.load_catalogue(path) == {("nb", "i0"): {"expected N, got N"}}
    assert items.load_catalogue(tmp_path / "absent.json") == {}


def test_the_course_catalogue_covers_every_autograded_cell():
    """Does the committed catalogue file hold messages for every autograded cell (the CLIP caption's from its
    catalogue on the stand-in model), each message prefixed with its own grade id?"""
    catalogue = items.load_catalogue()
    expected = {(nb, gid) for nb, cells in contract.GRADED.items() for gid in cells}
    assert set(catalogue) == expected
    raw = json.loads(items.CATALOGUE.read_text(encoding="utf-8"))
    assert all(m.startswith(f"{gid}: ") for cells in raw.values() for gid, found in cells.items() for m in found)


def _mark(student, grade_id, chosen, grader, second=False):
    return {
        "student": student,
        "notebook": "nb",
        "grade_id": grade_id,
        "items": chosen,
        "adjustment": 0,
        "comment": "",
        "grader": grader,
        "at": "2026-01-01T00:00:00+00:00",
        "answer": "0" * 64,
        "second": second,
    }


def test_rubric_item_frequencies_per_grader(tmp_path):
    """From OUT/marks.jsonl: how often each item applied over a question's latest marks, per grader when two
    graded it, a re-mark replacing the first and a second (double) mark not counted?"""
    marks = [
        _mark("a", "written_x", ["idea"], "ta1"),
        _mark("a", "written_x", ["idea", "proof"], "ta1"),  # a re-mark: the latest counts
        _mark("b", "written_x", ["idea"], "ta2"),
        _mark("c", "written_x", ["proof"], "ta2"),
        _mark("c", "written_x", ["idea"], "ta1", second=True),
    ]
    (tmp_path / "marks.jsonl").write_text("".join(json.dumps(m) + "\n" for m in marks))
    table = items.rubric_items(tmp_path).set_index(["grader", "item"])
    assert table.loc[("all", "idea"), ["applied", "marked"]].tolist() == [2, 3]
    assert table.loc[("all", "proof"), ["applied", "marked"]].tolist() == [2, 3]
    assert table.loc[("ta1", "proof"), "share"] == 1.0 and table.loc[("ta2", "idea"), "share"] == 0.5


def test_item_analysis_csv_has_a_row_per_item_and_scope(tmp_path):
    """Does OUT/item_analysis.csv hold a row per item and per α scope with the documented columns?"""
    by_cell, grades = frames(GUTTMAN)
    path = items.write(tmp_path, by_cell, grades)
    written = pd.read_csv(path, keep_default_na=False)
    assert list(written.columns) == items.COLUMNS
    assert list(written["kind"]) == ["autograded"] * 3 + ["notebook", "assignment"]
    assert float(written.loc[3, "alpha"]) == pytest.approx(0.75)


@pytest.fixture(scope="module")
def toy_out(tmp_path_factory):
    """The toy class graded: a full answer, an untouched release, a wrong mul, no notebook, an unreadable file."""
    from tests.fixtures import toy

    out, _ = toy.graded(tmp_path_factory.getbasetemp())
    return report.read_table(out, "grades_by_cell.csv"), report.read_table(out, "grades.csv")


def test_a_graded_class_leaves_out_what_was_not_graded(toy_out):
    """On the toy class as grading wrote it: are the missing and the unreadable notebook left out and counted, and
    is each check's facility the share of the three graded students who earned its points?"""
    by_cell, grades = toy_out
    table, left_out = items.analysis(by_cell, grades)
    assert left_out["notebooks not graded (missing or unreadable)"] == 2
    rows = table.set_index("grade_id")
    assert rows.loc["add", "facility"] == pytest.approx(2 / 3) and rows.loc["add", "scored"] == 3
    assert rows.loc["mul", "facility"] == pytest.approx(1 / 3)


def test_a_graded_class_lists_the_wrong_answers_reason(toy_out):
    """Is the wrong mul's failure listed once, as the hidden check's reason, with no catalogue to compare it to?"""
    by_cell, grades = toy_out
    table = items.messages(by_cell, grades, items.load_catalogue())
    mul = table[table["grade_id"] == "mul"]
    assert list(mul["count"]) == [1] and list(mul["check"]) == ["hidden"] and list(mul["in_catalogue"]) == [""]
