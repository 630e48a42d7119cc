"""Item analysis of a graded OUT, for the instructor improving the assignment: per graded cell and written answer the
facility and the item-rest discrimination, Cronbach's α per notebook and for the assignment, the failure messages
real students got beside those the mutant catalogues produce, and how often each rubric item applied.

Only scores a check or a person gave count: a notebook that was not graded (missing, unreadable) and a cell still
waiting for a person are left out, and `left_out` says how many. `write(out)` writes OUT/item_analysis.csv.
"""

import json
import math
import re
from collections import Counter
from pathlib import Path

import pandas as pd

from autograder import contract, csvsafe
from autograder.out import Out
from autograder.reports.tables import attempted_checks, is_graded, reason

# The mutant catalogues' failure messages per notebook and grade id (the pytest plugin tests/reports/catalogue_messages.py
# writes it)
CATALOGUE = Path(__file__).with_name("catalogue_messages.json")
LOW_DISCRIMINATION = 0.2  # an item-rest correlation below this barely separates strong from weak students
TOO_EASY, TOO_HARD = 0.95, 0.1  # facility (mean share of the points) above or below: the item tells little apart
COLUMNS = [
    "notebook",
    "grade_id",
    "kind",
    "max_score",
    "scored",
    "facility",
    "discrimination",
    "alpha",
    "flags",
]


def score_matrix(by_cell, grades):
    """Points per student (rows) and item (columns: (notebook, grade_id)) of the graded submissions; NaN where a
    notebook was not graded or a cell waits for a person.

    Returns:
    - (points DataFrame, maxima Series per item, left_out {what: count}).
    """
    graded = grades.loc[grades["status"].map(is_graded), ["student", "notebook"]]
    rows = by_cell.merge(graded, on=["student", "notebook"])
    points = rows.pivot_table(index="student", columns=["notebook", "grade_id"], values="score", aggfunc="first")
    points = points.reindex(columns=pd.MultiIndex.from_frame(rows[["notebook", "grade_id"]].drop_duplicates()))
    points = points.reindex(sorted(set(grades["student"])))  # a student with nothing graded is a row of NaN
    maxima = rows.groupby(["notebook", "grade_id"], sort=False)["max_score"].max().reindex(points.columns)
    left_out = {
        "notebooks not graded (missing or unreadable)": int(len(grades) - len(graded)),
        "cells waiting for a person": int(rows["score"].isna().sum()),
    }
    return points, maxima, left_out


def facility(points, maxima):
    """Per item: the mean share of its points among the students it was scored for."""
    return (points / maxima).mean()


def discrimination(points, maxima):
    """Per item: the correlation of its score with the rest of the assignment (item-rest), over the students it was
    scored for. The rest is the share of the other items' points a student earned, over the items scored for them,
    which for complete scores is the rest's total up to a constant."""
    result = {}
    for item in points.columns:
        others = points.drop(columns=[item])
        rest = others.sum(axis=1, min_count=1) / others.notna().mul(maxima.drop(item)).sum(axis=1).replace(0, math.nan)
        pair = pd.DataFrame({"item": points[item], "rest": rest}).dropna()
        result[item] = _pearson(pair["item"], pair["rest"])
    return pd.Series(result, dtype=float).reindex(points.columns)


def _pearson(x, y):
    """Pearson's r, NaN with fewer than 3 pairs or when either side does not vary."""
    if len(x) < 3 or x.std() == 0 or y.std() == 0:
        return math.nan
    return float(x.corr(y))


def alpha(points):
    """Cronbach's α of the items (columns) over the students with every item scored; (α, students used). NaN with
    fewer than 2 items or 2 students, or when totals do not vary."""
    complete = points.dropna()
    k, n = complete.shape[1], len(complete)
    if k < 2 or n < 2:
        return math.nan, n
    total = complete.sum(axis=1).var()
    if total == 0:
        return math.nan, n
    return float(k / (k - 1) * (1 - complete.var().sum() / total)), n


def flags(fac, disc):
    """What an item's numbers say to look at: too easy, too hard, low discrimination ('' when nothing)."""
    found = []
    if fac > TOO_EASY:
        found.append("too easy")
    if fac < TOO_HARD:
        found.append("too hard")
    if disc < LOW_DISCRIMINATION:  # NaN compares False: an item nobody varies on is flagged by its facility
        found.append("low discrimination")
    return "; ".join(found)


def analysis(by_cell, grades):
    """The item analysis table (COLUMNS): a row per item, then a row per notebook and one for the assignment with
    Cronbach's α (grade_id empty, kind 'notebook' or 'assignment', scored: students with every item scored).
    Also returns left_out (score_matrix)."""
    points, maxima, left_out = score_matrix(by_cell, grades)
    fac, disc = facility(points, maxima), discrimination(points, maxima)
    written = {gid for answers in contract.WRITTEN.values() for gid in answers}
    rows = [
        {
            "notebook": nb,
            "grade_id": gid,
            "kind": "written" if gid in written else "autograded",
            "max_score": maxima[(nb, gid)],
            "scored": int(points[(nb, gid)].notna().sum()),
            "facility": fac[(nb, gid)],
            "discrimination": disc[(nb, gid)],
            "alpha": math.nan,
            "flags": flags(fac[(nb, gid)], disc[(nb, gid)]),
        }
        for nb, gid in points.columns
    ]
    scopes = [(nb, "notebook", points[nb]) for nb in dict.fromkeys(points.columns.get_level_values(0))]
    for nb, kind, scope in [*scopes, ("", "assignment", points)]:
        a, n = alpha(scope)
        rows.append({"notebook": nb, "grade_id": "", "kind": kind, "scored": n, "alpha": a, "flags": ""})
    return pd.DataFrame(rows, columns=COLUMNS), left_out


_EXCEPTION = re.compile(r"^(?:\w+Error|\w+Exception|CheckFailed): ")  # how grades_by_cell.csv names the raised type


def failure_reason(message, grade_id):
    """A failure message as a reason shared by many students (report.reason), without the exception's type: a
    check's CheckFailed reads "AssertionError: <grade id>: …" in grades_by_cell.csv."""
    return reason(_EXCEPTION.sub("", str(message)), grade_id)


def load_catalogue(path=CATALOGUE):
    """{(notebook, grade_id): set of reasons} the mutant catalogues' failure messages give (empty without the
    file)."""
    path = Path(path)
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        (nb, gid): {failure_reason(m, gid) for m in messages}
        for nb, cells in data.items()
        for gid, messages in cells.items()
    }


def messages(by_cell, grades, catalogue):
    """Per check: the reasons real students failed it, how often, which check said so, and whether a catalogue
    mutant fails the hidden check with that reason too.

    A message prefixed with its grade id comes from the hidden check; any other from the test cell's visible
    asserts, which fire first (the catalogues of tests/checks hold the hidden checks' messages only).
    in_catalogue: True or False (a mistake the catalogue does not know yet) for the hidden check's messages, empty
    for the visible asserts' and for a cell without a catalogue.

    catalogue: load_catalogue()."""
    columns = ["notebook", "grade_id", "reason", "count", "check", "in_catalogue"]
    rows = attempted_checks(by_cell, grades) if "message" in by_cell.columns else by_cell.iloc[0:0]
    rows = rows[rows["score"] < rows["max_score"]]
    counts = Counter()
    for nb, gid, message in zip(rows["notebook"], rows["grade_id"], rows["message"]):
        hidden = _EXCEPTION.sub("", str(message)).startswith(f"{gid}: ")
        counts[(nb, gid, failure_reason(message, gid), "hidden" if hidden else "visible")] += 1
    table = [
        (nb, gid, why, n, check, (why in catalogue[(nb, gid)]) if check == "hidden" and (nb, gid) in catalogue else "")
        for (nb, gid, why, check), n in counts.items()
    ]
    table.sort(key=lambda r: (r[0], r[1], -r[3], r[2]))
    return pd.DataFrame(table, columns=columns)


def rubric_items(out):
    """How often each rubric item applied among the marked answers of each written question (OUT/marks.jsonl, latest
    marks), over all graders ('all') and, when a question has more than one grader, per grader: notebook, grade_id,
    grader, item, applied, marked, share."""
    from autograder.marking import mark

    columns = ["notebook", "grade_id", "grader", "item", "applied", "marked", "share"]
    latest, _ = mark.read_log(out)
    marks = [m for m in latest.values() if m.items is not None]
    by_question = {}
    for m in marks:
        by_question.setdefault((m.notebook, m.grade_id), []).append(m)
    table = []
    for (nb, gid), group in sorted(by_question.items()):
        graders = sorted({m.grader for m in group})
        for grader in ["all", *graders] if len(graders) > 1 else ["all"]:
            chosen = [m for m in group if grader in ("all", m.grader)]
            applied = Counter(item for m in chosen for item in m.items)
            for item, n in sorted(applied.items()):
                table.append((nb, gid, grader, item, n, len(chosen), n / len(chosen)))
    return pd.DataFrame(table, columns=columns)


def write(out, by_cell, grades):
    """Write OUT/item_analysis.csv (analysis()); returns its path."""
    from autograder.files import atomic_write

    table, _ = analysis(by_cell, grades)
    path = Out.at(out).item_analysis
    atomic_write(path, csvsafe.frame(table).to_csv(index=False, float_format="%.4g"))
    return path
