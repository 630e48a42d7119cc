"""autograder.reports.report: the tables behind the grade report, and the report notebook rendered to HTML."""

import csv
import json
import re

import nbformat
import pandas as pd
import pytest

from autograder.contract import GRADED, max_score
from autograder.records import NotebookResult, StudentResult
from autograder.reports import report, tables
from tests.marking import test_mark
from tests.marking.test_mark import graded  # noqa: F401


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)


def make_out(out, timings=True, repairs=True):
    """A synthetic graded OUT: 6 students, one missing notebook, one invalid JSON, a check most fail."""
    grades = [["student", "notebook", "score", "max_score", "status"]]
    cells = [["student", "notebook", "grade_id", "score", "max_score", "message"]]
    times = [["student", "notebook", "seconds", "overhead", "setup", "cells", "tests"]]
    fixes = {}  # student: their recorded repairs per notebook
    for s in range(1, 7):
        student = f"student{s}"
        for nb, points in GRADED.items():
            if (s, nb) == (2, "bert"):
                grades.append([student, nb, 0, max_score(nb), "missing"])
                continue
            if (s, nb) == (3, "clip"):
                grades.append([student, nb, 0, max_score(nb), "invalid JSON: Expecting value: line 1 column 1"])
                continue
            total = 0
            for gid, pts in points.items():
                # every student but one fails the causal mask; student 4 also fails freeze_encoder
                score = (
                    0
                    if (gid == "causal_scaled_dot_attention" and s != 1) or (gid == "freeze_encoder" and s == 4)
                    else pts
                )
                total += score
                message = "passed" if score else f"CheckFailed: {gid}: expected [1, 0] for student {s}, got [0, {s}]"
                cells.append([student, nb, gid, score, pts, message])
            if nb == "nmt":  # a TA has graded student1's written answer; the others wait
                cells.append(
                    [
                        student,
                        nb,
                        "written_scaling",
                        2 if s == 1 else "",
                        2,
                        "graded by hand" if s == 1 else "waiting for a person",
                    ]
                )
            grades.append([student, nb, total, max_score(nb), "graded"])
            times.append([student, nb, 5.0 + s, 3.0, 1.0 + s, 0.5, 0.5])
        if s % 2:
            fixes[student] = {"nmt": [f"renamed 'Copy of nmt ({s}).ipynb' to nmt.ipynb"]}
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "grades.csv", grades)
    write_csv(out / "grades_by_cell.csv", cells)
    if timings:
        write_csv(out / "timings.csv", times)
    if repairs:  # as the grade command records them: notebooks.<nb>.repairs in OUT/.state/<student>.json
        for student, notebooks in fixes.items():
            record_repairs(out, student, notebooks)
    return out


def record_repairs(out, student, repairs):
    """Record a graded student in OUT/.state whose notebooks had `repairs` ({notebook: [repair]})."""
    notebooks = {nb: NotebookResult(nb, "graded", 0.0, 0.0, [], repairs=made) for nb, made in repairs.items()}
    state = StudentResult(student, notebooks=notebooks)
    (out / ".state").mkdir(exist_ok=True)
    (out / ".state" / f"{student}.json").write_text(json.dumps(state.to_state()))


def test_check_failure_rates_put_the_most_failed_check_first(tmp_path):
    """Does the failure-rate table list the check most students fail first, with its counts?"""
    rates = report.check_failure_rates(report.read_table(make_out(tmp_path), "grades_by_cell.csv"))
    top = rates.iloc[0]
    assert (top["grade_id"], top["failed"], top["checked"]) == ("causal_scaled_dot_attention", 5, 6)
    assert rates.iloc[1]["grade_id"] == "freeze_encoder"
    assert list(rates["failure_rate"]) == sorted(rates["failure_rate"], reverse=True)
    assert len(rates) == sum(len(cells) for cells in GRADED.values())


def test_check_failure_rates_leave_out_pending_scores():
    """Is a test cell awaiting manual grading (empty score) neither a pass nor a failure?"""
    by_cell = pd.DataFrame(
        {
            "student": ["a", "b", "c"],
            "notebook": ["clip"] * 3,
            "grade_id": ["scavenger_caption"] * 3,
            "score": [1.0, None, 0.0],
            "max_score": [1.0] * 3,
        }
    )
    (row,) = report.check_failure_rates(by_cell).to_dict("records")
    assert (row["checked"], row["failed"]) == (2, 1)


def test_check_failure_rates_count_only_attempted_cells():
    """Is a cell left as released (NotImplementedError) left out of its check's failure rate, and a written
    answer never counted as a check?"""
    by_cell = pd.DataFrame(
        {
            "student": ["a", "b", "c", "a"],
            "notebook": ["nmt"] * 4,
            "grade_id": ["fit_linear_log"] * 3 + ["written_scaling"],
            "score": [1.0, 0.0, 0.0, 1.0],
            "max_score": [1.0, 1.0, 1.0, 2.0],
            "message": ["passed", "CheckFailed: fit_linear_log: wrong", "NotImplementedError: ", "graded by hand"],
        }
    )
    (row,) = report.check_failure_rates(by_cell).to_dict("records")
    assert (row["grade_id"], row["checked"], row["failed"]) == ("fit_linear_log", 2, 1)


def test_a_value_left_as_released_is_no_failed_check():
    """Is a value cell left as released (its visible check says "regimes is not set yet") counted as left as released
    rather than as a failed check, while a message naming another cell, or saying something else, still counts?"""
    by_cell = pd.DataFrame(
        {
            "student": ["a", "b", "c", "d"],
            "notebook": ["theory"] * 4,
            "grade_id": ["regimes"] * 4,
            "score": [0.0, 0.0, 1.0, 0.0],
            "max_score": [1.0] * 4,
            "message": [
                "AssertionError: regimes is not set yet: define it in the cell above",
                "AssertionError: scaling_choice is not set yet: define it in the cell above",
                "passed",
                "CheckFailed: regimes: A's regime is wrong",
            ],
        }
    )
    (row,) = report.check_failure_rates(by_cell).to_dict("records")
    assert (row["checked"], row["failed"]) == (3, 2)
    assert tables.left_out_counts(by_cell)["cells left as released"] == 1


def test_top_reasons_group_the_same_mistake_with_other_numbers():
    """Are messages that differ only in numbers counted as one reason, most common first?"""
    by_cell = pd.DataFrame(
        {
            "student": list("abcd"),
            "notebook": ["nmt"] * 4,
            "grade_id": ["fit_linear_log"] * 4,
            "score": [0.0] * 4,
            "max_score": [1.0] * 4,
            "message": [
                "CheckFailed: fit_linear_log: (m, c) should be (0.5, 0.47), got (1, 2)",
                "CheckFailed: fit_linear_log: (m, c) should be (0.5, 0.47), got (3, 4)",
                "CheckFailed: fit_linear_log: x and y were swapped",
                "NotImplementedError: ",
            ],
        }
    )
    rows = report.top_reasons(by_cell).to_dict("records")
    assert [(r["reason"], r["count"]) for r in rows] == [("(m, c) should be N, got N", 2), ("x and y were swapped", 1)]


def test_hand_grading_progress_counts_graded_and_waiting_answers(tmp_path):
    """Does the hand-grading table count each written answer as graded or waiting?"""
    progress = report.hand_grading_progress(report.read_table(make_out(tmp_path), "grades_by_cell.csv"))
    assert progress.to_dict("records") == [
        {"notebook": "nmt", "grade_id": "written_scaling", "graded": 1, "waiting": 5}
    ]


def test_check_failure_rates_count_only_graded_submissions():
    """Are the zero scores of a missing or unreadable notebook left out of a check's failure rate?"""
    by_cell = pd.DataFrame(
        {
            "student": ["a", "b", "c"],
            "notebook": ["nmt"] * 3,
            "grade_id": ["fit_linear_log"] * 3,
            "score": [1.0, 0.0, 0.0],
            "max_score": [1.0] * 3,
        }
    )
    grades = pd.DataFrame(
        {"student": ["a", "b", "c"], "notebook": ["nmt"] * 3, "status": ["graded", "graded", "missing"]}
    )
    (row,) = report.check_failure_rates(by_cell, grades).to_dict("records")
    assert (row["checked"], row["failed"]) == (2, 1)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("invalid JSON: Expecting value: line 1 column 1", "invalid JSON"),
        ("renamed 'Copy of nmt (3).ipynb' to nmt.ipynb", "renamed … to …"),
        ("restored 2 deleted test cells", "restored N deleted test cells"),
        ("timed out after 600 s in cell 14", "timed out after N s in cell N"),
    ],
)
def test_kind_groups_reasons_that_differ_only_in_details(text, expected):
    """Do reasons that differ only in file names, numbers or details after ':' share one kind?"""
    assert report.kind(text) == expected


def test_failures_and_repairs_are_counted_by_kind(tmp_path):
    """Are not-graded submissions and repairs counted per kind, most common first (ties by name)?"""
    out = make_out(tmp_path)
    fails = report.failures_by_kind(report.read_table(out, "grades.csv"))
    assert fails.values.tolist() == [["invalid JSON", 1], ["missing", 1]]
    fixes = report.repairs_by_kind(report.read_repairs(out))
    assert fixes.values.tolist() == [["renamed … to …", 3]]


def test_student_table_has_every_student_with_notes(tmp_path):
    """Does the student table keep every student in natural order, with totals and not-graded notes?"""
    table = report.student_table(report.read_table(make_out(tmp_path), "grades.csv"))
    assert list(table["student"]) == [f"student{s}" for s in range(1, 7)]
    assert list(table.columns[:5]) == ["student", "nmt", "bert", "clip", "theory"]
    row = table.set_index("student").loc["student2"]
    assert (row["bert"], row["notes"]) == (0, "bert: missing")
    assert table.set_index("student").loc["student1", "total"] == sum(max_score(nb) for nb in GRADED)


def test_repairs_come_from_recorded_results(tmp_path):
    """Are the repairs read from the per-student results in OUT/.state, students in natural order?"""
    repairs = {"nmt": ["renamed 'Copy of nmt.ipynb' to nmt.ipynb"], "bert": [], "clip": ["added missing cell ids"]}
    for student in ("student10", "student2"):
        record_repairs(tmp_path, student, repairs)
    table = report.read_repairs(tmp_path)
    assert table.values.tolist() == [
        ["student2", "nmt", "renamed 'Copy of nmt.ipynb' to nmt.ipynb"],
        ["student2", "clip", "added missing cell ids"],
        ["student10", "nmt", "renamed 'Copy of nmt.ipynb' to nmt.ipynb"],
        ["student10", "clip", "added missing cell ids"],
    ]
    assert report.repairs_recorded(tmp_path)


def test_missing_optional_files_read_as_empty_tables(tmp_path):
    """Does reading an absent timings.csv give an empty table with the expected columns?"""
    table = report.read_table(tmp_path, "timings.csv")
    assert table.empty and list(table.columns) == ["student", "notebook", "seconds"]


def test_table_with_wrong_columns_is_a_clear_error(tmp_path):
    """Does a grades.csv without a status column raise an error naming the missing column?"""
    write_csv(tmp_path / "grades.csv", [["student", "notebook", "score", "max_score"], ["a", "nmt", 1, 11]])
    with pytest.raises(ValueError, match="status"):
        report.read_table(tmp_path, "grades.csv")


def test_report_notebook_is_committed_without_outputs():
    """Is notebooks/grade_report.ipynb stored without outputs and execution counts?"""
    nb = nbformat.read(report.NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def write_execution_records(out):
    """What ingest keeps of the notebooks' own execution times: student1 and student2 ran nmt for 10 and 30
    minutes, student2 from two Colab accounts; student3's nmt recorded none."""
    from autograder.reports import timeontask

    for student, spans in {
        "student1": [(0, 600, 0)],
        "student2": [(0, 900, 0), (900, 1800, 1)],
        "student3": [],
    }.items():
        folder = out / ".cache" / "staging" / student
        folder.mkdir(parents=True)
        runs = [[1.7e9 + a, 1.7e9 + b, "1. Attention", account] for a, b, account in spans]
        timeontask.save({"executions": runs}, folder / f"nmt{timeontask.RECORD}")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """make_out's OUT after `report OUT`: (OUT, exit status, report.html)."""
    out = make_out(tmp_path_factory.mktemp("rendered") / "out")
    write_execution_records(out)
    code = report.main(out=out)
    return out, code, (out / "report.html").read_text()


def test_report_renders_plots_and_tables_to_html(rendered):
    """Does `report OUT` write report.html with its six plots, the worst check first and no code?"""
    out, code, html = rendered
    assert code == 0
    # scores, check failure rates, grading times, where the time goes, hand grading, repairs and failures
    assert len(re.findall(r"<img [^>]*src=\"data:image/png", html)) == 7
    assert "1 of 6" in html and "written answers graded by hand" in html
    assert "expected N for student N, got N" in html, "expected the most common reason of the failing check"
    assert str(out.resolve()) in html, "the report did not read the OUT it was given"
    assert html.index("causal_scaled_dot_attention") < html.index("freeze_encoder")
    assert "Traceback" not in html and "read_table(" not in html
    assert (out / "export" / "lms_grades.csv").exists() and (out / "export" / "nbgrader_grades.csv").exists()


def test_report_says_what_its_check_sections_leave_out(rendered):
    """Does report.html say under "Which checks fail most" that the 6 written answers are not counted?"""
    _, _, html = rendered
    assert "Not counted here or below: 6 written answers, 0 cells graded by a person, 0 cells left as released." in html


def test_report_shows_the_item_analysis(rendered):
    """Does `report OUT` write item_analysis.csv and show the item analysis with what it left out: the missing and
    the unreadable notebook, the five written answers still waiting?"""
    out, _, html = rendered
    table = pd.read_csv(out / "item_analysis.csv", keep_default_na=False)
    assert set(table["kind"]) == {"autograded", "written", "notebook", "assignment"}
    causal = table.set_index("grade_id").loc["causal_scaled_dot_attention"]
    assert float(causal["facility"]) == pytest.approx(1 / 6, abs=1e-4)  # the CSV keeps 4 significant digits
    assert "Left out: 2 notebooks not graded (missing or unreadable), 5 cells waiting for a person." in html
    assert "Cronbach" in html and "reason(s) of the hidden checks no catalogue mutant produces" in html


def test_report_shows_time_on_task_to_staff(rendered):
    """Does the report give the median minutes per notebook and part, count the notebook without times, name the
    notebook two accounts ran in the agreed words, and write time_on_task.csv?"""
    out, _, html = rendered
    assert "Time on task" in html and "20 min" in html  # the median of 10 and 30 minutes
    assert "Notebooks without execution times (not counted above): nmt 1." in html
    assert "several accounts ran this notebook:</strong> student2 (nmt)" in html
    assert (out / "time_on_task.csv").read_text().count("student2") == 2  # the whole notebook and its one part


def test_report_figures_describe_what_they_show(rendered):
    """Does every figure of the report carry a text alternative with its numbers (never nbconvert's 'No
    description')?"""
    _, _, html = rendered
    alts = re.findall(r'<img alt="([^"]*)"', html)
    assert len(alts) == 7 and not any("No description" in a for a in alts)
    assert any("causal_scaled_dot_attention 5 of 6" in a for a in alts)


def test_report_survives_a_run_without_timings_or_repairs(tmp_path):
    """Does the report render from grades.csv and grades_by_cell.csv alone, saying timings were not recorded?"""
    out = make_out(tmp_path / "out", timings=False, repairs=False)
    dest = report.render_report(out, tmp_path / "r.html", show_code=True)
    html = dest.read_text()
    assert "grading times were not recorded" in html
    assert "read_table" in html, "--show-code should keep the code cells"
    assert len(re.findall(r"<img [^>]*src=\"data:image/png", html)) == 5


def test_report_without_grades_fails_clearly(tmp_path, capsys):
    """Does `report` on an ungraded folder exit 1 with one line, without starting a kernel?"""
    assert report.main(out=tmp_path) == 1
    err = capsys.readouterr().err.strip()
    assert "grades.csv not found" in err and len(err.splitlines()) == 1


def test_submission_waiting_for_a_person_is_graded_but_listed():
    """Is 'needs manual grading: …' counted as graded, yet listed among the statuses that need attention?"""
    grades = pd.DataFrame(
        {
            "student": ["a", "b", "c"],
            "notebook": ["clip"] * 3,
            "score": [4.0, 5.0, 0.0],
            "max_score": [5.0] * 3,
            "status": ["needs manual grading: scavenger_caption", "graded", "missing"],
        }
    )
    assert [tables.is_graded(s) for s in grades["status"]] == [True, True, False]
    assert report.failures_by_kind(grades).values.tolist() == [["missing", 1], ["needs manual grading", 1]]


def test_totals_count_hand_grades_and_written_points():
    """Does a student's total add the hand grades so far, and the maximum the written answers' points?"""
    grades = pd.DataFrame(
        {
            "student": ["a", "a"],
            "notebook": ["nmt", "bert"],
            "score": [10.0, 4.0],
            "max_score": [11.0, 4.0],
            "status": ["graded"] * 2,
            "written_score": [3.0, None],
            "written_max_score": [6.0, 3.0],
        }
    )
    assert report.totals(grades).to_dict("records") == [{"student": "a", "points": 17.0, "max_points": 24.0}]


def test_question_scores_give_the_mean_share_per_question(tmp_path):
    """Does the per-question table give each cell's mean share of its points over scored submissions?"""
    table = report.question_scores(report.read_table(make_out(tmp_path), "grades_by_cell.csv"))
    row = table[table["grade_id"] == "causal_scaled_dot_attention"].iloc[0]
    assert (row["scored"], round(row["mean_share"], 3)) == (6, round(1 / 6, 3))


# Students with the names students really have: nothing below relies on ASCII ids.
LI, ZOE = "李明", "Zoë Ñúñez"


def unicode_out(out):
    """A graded OUT of two students with Unicode names and all of the course's notebooks: 李明 solved
    everything, Zoë Ñúñez left bert out and failed fit_linear_log; her CLIP caption waits for a person."""
    grades = [["student", "notebook", "score", "max_score", "status"]]
    cells = [["student", "notebook", "grade_id", "score", "max_score", "message"]]
    for student in (LI, ZOE):
        for nb, points in GRADED.items():
            if (student, nb) == (ZOE, "bert"):
                grades.append([student, nb, 0, max_score(nb), "missing"])
                cells += [[student, nb, gid, 0, pts, "missing"] for gid, pts in points.items()]
                continue
            total, status = 0, "graded"
            for gid, pts in points.items():
                score, message = pts, "passed"
                if (student, gid) == (ZOE, "fit_linear_log"):
                    score, message = 0, "CheckFailed: fit_linear_log: (m, c) should be (0.5, 0.4771), got (0, 0)"
                if (student, gid) == (ZOE, "scavenger_caption"):
                    score, message = "", "needs manual grading: the check could not decide"
                    status = "needs manual grading: scavenger_caption"
                total += score or 0
                cells.append([student, nb, gid, score, pts, message])
            grades.append([student, nb, total, max_score(nb), status])
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "grades.csv", grades)
    write_csv(out / "grades_by_cell.csv", cells)
    return out


def test_report_lists_every_course_notebook_theory_included(tmp_path):
    """Does report.html show the score of every notebook of the course (contract.NOTEBOOKS), theory included?"""
    out = unicode_out(tmp_path / "out")
    html = report.render_report(out, tmp_path / "r.html").read_text()
    summary = report.score_summary(report.read_table(out, "grades.csv"))
    assert list(summary["notebook"]) == ["nmt", "bert", "clip", "theory"]
    assert re.search(r"<td[^>]*>theory</td>\s*<td[^>]*>2</td>", html), "expected theory's row in the score table"


def test_course_notebooks_follow_the_contract():
    """Are the report's notebooks the course's own, in course order, with theory, and unknown ones last?"""
    grades = pd.DataFrame({"student": [LI] * 5, "notebook": ["theory", "extra", "clip", "nmt", "bert"]})
    assert report.course_notebooks(grades) == ["nmt", "bert", "clip", "theory", "extra"]


def test_failure_reasons_leave_out_missing_notebooks(tmp_path):
    """Is a missing notebook's 'missing' never given as a reason a check failed, while a real failure is?"""
    out = unicode_out(tmp_path)
    by_cell, grades = report.read_table(out, "grades_by_cell.csv"), report.read_table(out, "grades.csv")
    reasons = report.top_reasons(by_cell, grades=grades)
    assert reasons[["grade_id", "reason", "count"]].values.tolist() == [
        ["fit_linear_log", "(m, c) should be N, got N", 1]
    ]


def test_a_cell_waiting_for_a_person_is_no_failed_check():
    """Is a cell that needs manual grading left out of its check's failure rate and reasons, even with a 0?"""
    by_cell = pd.DataFrame(
        {
            "student": [LI, ZOE],
            "notebook": ["clip"] * 2,
            "grade_id": ["scavenger_caption"] * 2,
            "score": [1.0, 0.0],
            "max_score": [1.0] * 2,
            "message": ["passed", "needs manual grading: the check could not decide"],
        }
    )
    (row,) = report.check_failure_rates(by_cell).to_dict("records")
    assert (row["checked"], row["failed"], row["failure_rate"]) == (1, 0, 0.0)
    assert report.top_reasons(by_cell).empty


def clip_cells():
    """clip rows of grades_by_cell.csv as grading and hand grading leave them: 李明 with full marks (caption and
    written answer graded by hand), Zoë Ñúñez with a blank written answer, both Anna Lees' captions waiting."""
    rows = [
        (LI, "rank_images", 4, 4, "passed"),
        (LI, "scavenger_caption", 1, 1, "graded by hand"),
        (LI, "written_caption_search", 1, 1, "graded by hand"),
        (ZOE, "rank_images", 0, 4, "CheckFailed: rank_images: the best image should be 3, got 0"),
        (ZOE, "scavenger_caption", 0, 1, "graded by hand"),
        (ZOE, "written_caption_search", 0, 1, "blank answer: 0 (no response)"),
    ]
    for anna in ("Anna Lee~moodle1001", "Anna Lee~moodle1017"):
        rows += [
            (anna, "rank_images", 4, 4, "passed"),
            (anna, "scavenger_caption", None, 1, "needs manual grading: run fetch-models"),
            (anna, "written_caption_search", 0, 1, "blank answer: 0 (no response)"),
        ]
    students = [r[0] for r in rows]
    grades = pd.DataFrame({"student": sorted(set(students)), "notebook": "clip", "status": "graded"})
    by_cell = pd.DataFrame(rows, columns=["student", "grade_id", "score", "max_score", "message"])
    return by_cell.assign(notebook="clip"), grades


def test_blank_written_answers_are_no_failed_checks():
    """Are written answers (blank ones scoring 0, and 李明's full marks, alike) and cells graded by a person left out
    of the failure rates, so that only rank_images, a real check, is listed, with every graded student counted?"""
    by_cell, grades = clip_cells()
    rates = report.check_failure_rates(by_cell, grades)
    assert rates[["grade_id", "checked", "failed"]].values.tolist() == [["rank_images", 4, 1]]


def test_why_checks_fail_gives_no_blank_answer():
    """Does "Why checks fail" give only the failed check's reason, never "blank answer"?"""
    by_cell, grades = clip_cells()
    reasons = report.top_reasons(by_cell, grades=grades)
    assert reasons[["grade_id", "reason", "count"]].values.tolist() == [
        ["rank_images", "the best image should be N, got N", 1]
    ]


def test_left_out_counts_say_what_the_check_sections_skip():
    """Does the report count what its check sections leave out: 4 written answers, 4 captions graded by a person?"""
    by_cell, grades = clip_cells()
    assert tables.left_out_counts(by_cell, grades) == {
        "written answers": 4,
        "cells graded by a person": 4,
        "cells left as released": 0,
    }


def test_grader_agreement_gives_kappa_and_score_gap_per_question(graded, tmp_path):  # noqa: F811
    """When a second grader marked answers blind, does the report's agreement table give, per question, the answers
    both marked, Cohen's kappa on the items and the mean |score difference| (none without second marks)?"""
    import shutil

    from autograder import rubrics
    from autograder.marking import mark
    from tests.fixtures import toy

    out, source = tmp_path / "out", tmp_path / "source"
    shutil.copytree(graded, out)
    source.mkdir()
    shutil.copy2(toy.TOY_SOURCE / rubrics.FILENAME, source)
    assert report.grader_agreement(out, source).empty
    items = {"Zoë Ñúñez": ("counting;order", "counting;order"), "李明": ("counting", "counting;order")}
    for grader, which, second in (("ta-ana", 0, False), ("ta-ben", 1, True)):
        rows = [[s, "toy", "written_toy", pair[which], "", ""] for s, pair in items.items()]
        csv_path = test_mark.write_csv(tmp_path / f"{grader}.csv", rows)
        assert mark.main(out=out, source=source, import_csv=csv_path, grader=grader, second=second) == 0
    # 6 decisions (2 answers x 3 items), 5 agree; ana says yes 3 times, ben 4: chance 3/6 * 4/6 + 3/6 * 2/6
    kappa = (5 / 6 - 1 / 2) / (1 - 1 / 2)
    assert report.grader_agreement(out, source).to_dict("records") == [
        {
            "notebook": "toy",
            "grade_id": "written_toy",
            "double-marked": 2,
            "kappa": pytest.approx(kappa),
            "mean |score difference|": 0.25,
        }
    ]


def test_every_released_cell_says_it_is_left_as_released_in_a_way_the_report_reads():
    """Does every graded cell of the release, left as it is, either raise NotImplementedError or have a visible check
    saying "<grade id> is not set yet", the two ways tables.left_out tells a cell left as released?"""
    import json

    from autograder import contract, paths

    unread = []
    for notebook in contract.NOTEBOOKS:
        cells = json.loads((paths.RELEASE / f"{notebook}.ipynb").read_text(encoding="utf-8"))["cells"]
        tests = {contract.nbgrader_meta(c).get("grade_id"): "".join(c["source"]) for c in cells}
        for cell in cells:
            gid = contract.nbgrader_meta(cell).get("grade_id")
            if gid not in contract.GRADED[notebook] or "NotImplementedError" in "".join(cell["source"]):
                continue
            if f"{gid} is not set yet" not in tests.get(contract.test_cell_id(gid), ""):
                unread.append(f"{notebook}/{gid}")
    assert not unread, f"cells left as released that the report would count as failed checks: {unread}"
