"""Grade report: `python -m autograder report OUT [--output HTML] [--show-code]`.

Executes notebooks/grade_report.ipynb against a graded OUT folder (passed to the kernel in the
environment variable A3_REPORT_OUT), exports it to OUT/report.html, and writes the grade exports
(OUT/export/*.csv). The tables the notebook plots are computed here so that they can be tested.

Files read from OUT: grades.csv and grades_by_cell.csv (required, written by `grade`), and when present
timings.csv (student,notebook,seconds[,overhead,setup,cells,tests]) and the repairs ingest made, from the
per-student results in .state/*.json.
"""

import os
import re
import sys
import tempfile
from pathlib import Path

import pandas as pd

from autograder import csvsafe, envvars
from autograder.contract import NOTEBOOKS
from autograder.out import Out
from autograder.paths import ROOT, SOURCE
from autograder.records import HAND_GRADED, WAITING, Results, Status, not_graded_yet
from autograder.reports import nbhtml
from autograder.reports.export import export, natural_key, use_term_files
from autograder.reports.tables import (
    attempted_checks,
    is_graded,
    reason,
)
from autograder.term import TermError
from autograder.text import one_line

NOTEBOOK = ROOT / "notebooks" / "grade_report.ipynb"
COLUMNS = {
    "grades.csv": ["student", "notebook", "score", "max_score", "status"],
    "grades_by_cell.csv": ["student", "notebook", "grade_id", "score", "max_score"],
    "timings.csv": ["student", "notebook", "seconds"],
}
REPAIR_COLUMNS = ["student", "notebook", "repair"]


def read_table(out, name):
    """OUT/<name> as a DataFrame with the expected columns (empty when the file is absent)."""
    path = Path(out) / name
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=COLUMNS[name])
    df = pd.read_csv(
        path,
        dtype={
            "student": str,
            "notebook": str,
            "grade_id": str,
            "status": str,
            "message": str,
            "ungraded": str,
        },
        keep_default_na=False,
        na_values={"score": [""], "max_score": [""], "seconds": [""]},
    )
    missing = set(COLUMNS[name]) - set(df.columns)
    if missing:
        raise ValueError(f"{path} lacks columns {sorted(missing)}; expected {COLUMNS[name]}")
    return csvsafe.unframe(df)


def read_repairs(out):
    """Every ingest repair as (student, notebook, repair), from the recorded results (OUT/.state; one of another
    version is left out of the plot)."""
    states = Results(out).states(strict=False) if Out.at(out).state.is_dir() else []
    states.sort(key=lambda st: natural_key(st.student))
    rows = [(st.student, nb, r) for st in states for nb, s in st.notebooks.items() for r in s.repairs]
    return pd.DataFrame(rows, columns=REPAIR_COLUMNS)


def repairs_recorded(out):
    """True when this run left a record of repairs (per-student results in OUT/.state)."""
    return any(Out.at(out).state.glob("*.json"))


def kind(text):
    """Group a one-line reason or repair by kind: drop quoted names, paths, numbers and details after ':'."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"|\S+\.ipynb|\S*/\S*", "…", str(text).split(":")[0])
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    return one_line(text, 60) or "(empty)"


def check_failure_rates(by_cell, grades=None):
    """Per test cell: submissions checked, how many lost points, failure rate; worst first.

    Inputs:
    - by_cell: grades_by_cell rows (student, notebook, grade_id, score, max_score[, message]); only
      attempted_checks() count.
    - grades: grades.csv rows; when given, only graded submissions count (a missing or unreadable
      notebook says nothing about a check).
    Returns:
    - DataFrame with columns notebook, grade_id, checked, failed, failure_rate.
    """
    scored = attempted_checks(by_cell, grades)
    if scored.empty:
        return pd.DataFrame(columns=["notebook", "grade_id", "checked", "failed", "failure_rate"])
    lost = scored["score"] < scored["max_score"]
    table = (
        scored.assign(failed=lost.astype(int))
        .groupby(["notebook", "grade_id"], as_index=False)
        .agg(checked=("failed", "size"), failed=("failed", "sum"))
    )
    table["failure_rate"] = table["failed"] / table["checked"]
    return table.sort_values(
        ["failure_rate", "failed", "notebook", "grade_id"], ascending=[False, False, True, True], ignore_index=True
    )


def top_reasons(by_cell, n=3, grades=None):
    """The n most common reasons each check failed among attempted cells: notebook, grade_id, reason, count.

    grades: grades.csv rows; when given, cells of submissions that were not graded (a missing notebook's
    "missing") are no reason a check failed.
    """
    columns = ["notebook", "grade_id", "reason", "count"]
    if "message" not in by_cell.columns:
        return pd.DataFrame(columns=columns)
    rows = attempted_checks(by_cell, grades)
    rows = rows[rows["score"] < rows["max_score"]]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    rows = rows.assign(reason=[reason(m, g) for m, g in zip(rows["message"], rows["grade_id"])])
    counts = rows.groupby(["notebook", "grade_id", "reason"], as_index=False).size().rename(columns={"size": "count"})
    counts = counts.sort_values(["notebook", "grade_id", "count", "reason"], ascending=[True, True, False, True])
    return counts.groupby(["notebook", "grade_id"]).head(n).reset_index(drop=True)[columns]


def question_scores(by_cell):
    """Per graded cell and written answer: scored submissions and the mean share of its points they earned."""
    columns = ["notebook", "grade_id", "scored", "mean_share"]
    scored = by_cell.dropna(subset=["score"])
    if scored.empty:
        return pd.DataFrame(columns=columns)
    table = (
        scored.assign(share=scored["score"] / scored["max_score"])
        .groupby(["notebook", "grade_id"], as_index=False, sort=False)
        .agg(scored=("share", "size"), mean_share=("share", "mean"))
    )
    return table[columns]


def totals(grades):
    """Per student: points so far (autograded and hand-graded) and the maximum, written answers included."""
    if grades.empty:
        return pd.DataFrame(columns=["student", "points", "max_points"])
    none = pd.Series(0.0, index=grades.index)  # grades.csv of a run before hand grading was counted
    written = pd.to_numeric(grades.get("written_score", none), errors="coerce").fillna(0)
    written_max = pd.to_numeric(grades.get("written_max_score", none), errors="coerce").fillna(0)
    frame = grades.assign(points=grades["score"].fillna(0) + written, max_points=grades["max_score"] + written_max)
    return frame.groupby("student", as_index=False)[["points", "max_points"]].sum()


def hand_grading_progress(by_cell):
    """Per written answer: how many are graded by hand and how many wait (notebook, grade_id, graded, waiting)."""
    columns = ["notebook", "grade_id", "graded", "waiting"]
    if "message" not in by_cell.columns:
        return pd.DataFrame(columns=columns)
    written = by_cell[by_cell["message"].isin([HAND_GRADED, WAITING])]
    if written.empty:
        return pd.DataFrame(columns=columns)
    table = (
        written.assign(
            graded=(written["message"] == HAND_GRADED).astype(int), waiting=(written["message"] == WAITING).astype(int)
        )
        .groupby(["notebook", "grade_id"], as_index=False)[["graded", "waiting"]]
        .sum()
    )
    return table[columns]


def grader_agreement(out, source=SOURCE):
    """Per written question marked by two graders (`mark --export --double`, then `--import --second`): the answers
    both marked, Cohen's kappa on the rubric items (None when both made one choice throughout) and the mean absolute
    score difference (marking.mark.agreement)."""
    from autograder import rubrics
    from autograder.marking import mark

    columns = ["notebook", "grade_id", "double-marked", "kappa", "mean |score difference|"]
    if not Out.at(out).marks.exists():
        return pd.DataFrame(columns=columns)
    found = rubrics.load(Path(source) / rubrics.FILENAME)
    agreed = mark.agreement(found, mark.collect(out), out)
    return pd.DataFrame([(*cell, *agreed[cell]) for cell in sorted(agreed)], columns=columns)


def suggestion_agreement(out, source=SOURCE):
    """Per written question and rubric item, how the TAs' marks compare with the suggestions the grading page showed
    before them under the rubric as it is now (marking.mark.suggestion_agreement): answers marked after a
    suggestion, the share accepted unchanged, each item's precision and recall against the marks, and the answers
    whose suggestion came under an older rubric (stale, left out of the rest; a question with only those has one
    row with no item)."""
    from autograder import rubrics
    from autograder.marking import mark

    columns = ["notebook", "grade_id", "item", "marked after a suggestion", "accepted unchanged", "precision",
               "recall", "stale (older rubric)"]  # fmt: skip
    if not Out.at(out).suggestions.exists():
        return pd.DataFrame(columns=columns)
    found = rubrics.load(Path(source) / rubrics.FILENAME)
    got = mark.suggestion_agreement(out, mark.read_log(out)[0], found)
    rows = []
    for cell, a in sorted(got.items()):
        made = a["items"] or {"": (None, None)}
        rows += [(*cell, item, a["n"], a["unchanged"], p, r, a["stale"]) for item, (p, r) in made.items()]
    return pd.DataFrame(rows, columns=columns)


def _count_kinds(texts, label, count):
    """Texts grouped by kind and counted: most common first, ties alphabetical."""
    counts = texts.map(kind).value_counts().rename_axis(label).reset_index(name=count)
    return counts.sort_values([count, label], ascending=[False, True], ignore_index=True)


def failures_by_kind(grades):
    """Submissions not graded, or graded with a cell left to a person, counted by kind of status."""
    return _count_kinds(grades.loc[grades["status"] != Status.GRADED, "status"], "reason", "submissions")


def repairs_by_kind(repairs):
    """Repairs counted by kind."""
    return _count_kinds(repairs["repair"], "repair", "count")


def course_notebooks(grades):
    """The notebooks grades.csv has rows for: the course's (contract.NOTEBOOKS) in course order, then others."""
    present = set(grades["notebook"])
    return [nb for nb in NOTEBOOKS if nb in present] + sorted(present - set(NOTEBOOKS))


def score_summary(grades):
    """Per notebook in course order: graded submissions, their mean autograded points and the maximum."""
    columns = ["notebook", "graded", "mean", "max_score"]
    graded = grades[grades["status"].map(is_graded)]
    rows = []
    for nb in course_notebooks(grades):
        scores = graded.loc[graded["notebook"] == nb, "score"].dropna()
        top = grades.loc[grades["notebook"] == nb, "max_score"].max()
        rows.append([nb, len(scores), scores.mean() if len(scores) else float("nan"), top])
    return pd.DataFrame(rows, columns=columns)


def student_table(grades):
    """One row per student: score per notebook, total, maximum, percent and non-graded statuses."""
    if grades.empty:
        return pd.DataFrame(columns=["student", "total", "max_total", "percent", "notes"])
    table = grades.pivot_table(index="student", columns="notebook", values="score", aggfunc="first", dropna=False)
    table = table[[nb for nb in course_notebooks(grades) if nb in table.columns]]
    table["total"] = grades.groupby("student")["score"].sum()
    table["max_total"] = grades.groupby("student")["max_score"].sum()
    table["percent"] = (100 * table["total"] / table["max_total"]).round(1)
    failed = grades[grades["status"] != Status.GRADED]
    notes = (failed["notebook"] + ": " + failed["status"]).groupby(failed["student"]).agg("; ".join)
    table["notes"] = notes.reindex(table.index).fillna("")
    order = sorted(table.index, key=natural_key)
    return table.loc[order].reset_index()


def render_report(out, dest=None, show_code=False, timeout=600):
    """Execute the report notebook against OUT and write HTML (default OUT/report.html); returns its path."""
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    out = Path(out).resolve()
    dest = Path(dest) if dest else Out.at(out).report
    nb = nbformat.read(NOTEBOOK, as_version=4)
    with tempfile.TemporaryDirectory() as sockets:  # unix sockets: no open TCP ports
        km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(sockets, "kernel"))
        try:
            NotebookClient(nb, km=km, timeout=timeout, resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute(
                env={**os.environ, envvars.REPORT_OUT: str(out)}
            )
        finally:
            if km.has_kernel:  # nbclient leaves a kernel manager it was given running
                km.shutdown_kernel(now=True)
    html, _ = HTMLExporter(  # the feedback pages' readable colours, underlined links and figures' text alternatives
        exclude_input=not show_code,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        **nbhtml.readable_template(),
    ).from_notebook_node(nb)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(html, encoding="utf-8")
    return dest


def main(
    *,
    out: Path,
    output: Path | None = None,
    show_code: bool = False,
    course: Path | None = None,
    extensions: Path | None = None,
) -> int:
    """`report`: write OUT's exports and render the grade report into HTML (with --course/--extensions in place of
    OUT's). Returns the exit status."""
    error = not_graded_yet(Out.at(out).grades, "report")
    if error:
        print(error, file=sys.stderr)
        return 1
    try:
        use_term_files(out, course, extensions)
    except TermError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 1
    from autograder.reports import items, timeontask

    for path in export(out):
        print(f"wrote {path}")
    print(f"wrote {items.write(out, read_table(out, 'grades_by_cell.csv'), read_table(out, 'grades.csv'))}")
    times = timeontask.write(out)
    if times:
        print(f"wrote {times}")
    print(f"wrote {render_report(out, output, show_code)}")
    return 0
