"""Where the late penalty shows after grading: nbgrader's export columns, the LMS exports, feedback."""

import csv
import shutil

import pytest

from autograder import contract
from autograder.reports import export, feedback
from tests.fixtures import term as term_fixture

GRADES = ["student", "notebook", "score", "max_score", "status", "written_score", "written_max_score", "ungraded"]
LATE = ["submitted_as", "submitted_at", "due", "late_units", "late_penalty"]
DUE = "2023-03-31T23:59:00-04:00"
TOTAL = sum(contract.max_score(nb) for nb in contract.NOTEBOOKS)  # every autograded point of the course
PENALTY, PENALISED = round(TOTAL * 0.2, 2), round(TOTAL * 0.8, 2)  # 李明: 2 days late, 20 %


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """grades.csv of two students with every autograded point (TOTAL) and no written answers: 李明 2 days late (20 %
    of each notebook's raw score in late_penalty), Zoë Ñúñez on time; exported penalised and with
    lms_applies_late_policy."""
    out = tmp_path_factory.mktemp("term_exports")
    rows = [GRADES + LATE]
    for student, when, units, share in (("李明", "2023-04-02T06:59:00+00:00", 2, 0.2), ("Zoë Ñúñez", "", 0, 0.0)):
        for nb in contract.NOTEBOOKS:
            pts = contract.max_score(nb)
            rows.append([student, nb, pts, pts, "graded", 0, 0, "", student, when, DUE, units, f"{pts * share:g}"])
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    export.export(out, lms_applies_late_policy=True)
    (out / "export").rename(out / "lms_applies")
    export.export(out)
    return out


@pytest.fixture(scope="module")
def fed_back(tmp_path_factory):
    """The toy course graded under the per_day course (tests/fixtures/term.py), copied, feedback re-rendered."""
    _, _, graded, _ = term_fixture.graded(tmp_path_factory.getbasetemp())
    out = tmp_path_factory.mktemp("term_feedback") / "out"
    shutil.copytree(graded, out)
    feedback.rerender(out)
    return out


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_nbgrader_csv_fills_nbgrader_late_columns(exported):
    """Does nbgrader_grades.csv give 李明's due date and time in nbgrader's UTC form, the raw total, a 20 % penalty
    and the penalised score?"""
    row = next(r for r in read(exported / "export" / "nbgrader_grades.csv") if r["student_id"] == "李明")
    got = [row[k] for k in ("duedate", "timestamp", "raw_score", "late_submission_penalty", "score")]
    assert got == ["2023-04-01 03:59:00", "2023-04-02 06:59:00", str(float(TOTAL)), str(PENALTY), str(PENALISED)]


def test_nbgrader_csv_on_time_has_no_penalty(exported):
    """Is an on-time student's late_submission_penalty 0 and score the raw score?"""
    row = next(r for r in read(exported / "export" / "nbgrader_grades.csv") if r["student_id"] == "Zoë Ñúñez")
    assert (row["late_submission_penalty"], row["score"]) == ("0.0", str(float(TOTAL)))


def test_moodle_worksheet_carries_penalised_grade(exported):
    """Does the Moodle worksheet give 李明 (2 days late, 20 %) the penalised total instead of the raw one?"""
    row = next(r for r in read(exported / "export" / "moodle_grades.csv") if r["Full name"] == "李明")
    assert row["Grade"] == str(PENALISED)


def test_canvas_carries_penalised_score(exported):
    """Does the Canvas import carry 李明's penalised score?"""
    row = next(r for r in read(exported / "export" / "canvas_grades.csv") if r["Student"] == "李明")
    assert row["a3 (autograder)"] == str(PENALISED)


def test_lms_applies_late_policy_keeps_raw(exported):
    """With --lms-applies-late-policy, does the Canvas import carry 李明's raw score (Canvas deducts itself)?"""
    row = next(r for r in read(exported / "lms_applies" / "canvas_grades.csv") if r["Student"] == "李明")
    assert row["a3 (autograder)"] == str(TOTAL)


def test_feedback_page_says_late_and_cost(fed_back):
    """After `feedback`, does 李明's page say how late he was, the due date and the points it cost?"""
    page = (fed_back / "feedback" / "李明" / "toy.html").read_text(encoding="utf-8")
    assert "Submitted 1 d 3 h late (due 2023-03-31 23:59 -0400) → −20 % (−0.6 points)" in page


def test_feedback_page_on_time_has_no_late_note(fed_back):
    """Does an on-time student's page carry no late note?"""
    assert "late (due" not in (fed_back / "feedback" / "Zoë Ñúñez" / "toy.html").read_text(encoding="utf-8")


def test_report_shows_late_counts_and_histogram(tmp_path):
    """Does the report count on-time and late students and draw one more plot (the histogram) when grades.csv has
    lateness columns?"""
    import re

    from autograder.reports import report
    from tests.reports.test_report import make_out

    out = make_out(tmp_path / "out")
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    first = min(r["student"] for r in rows)
    for r in rows:
        late = r["student"] == first
        r.update(
            submitted_at="2023-04-02T23:00:00-04:00" if late else "2023-03-30T12:00:00-04:00",
            due=DUE,
            late_units="2" if late else "0",
            late_penalty="0",
        )
    with open(out / "grades.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    html = report.render_report(out, tmp_path / "r.html").read_text()
    students = len({r["student"] for r in rows})
    assert f"<strong>on time:</strong> {students - 1}" in html and "<strong>late:</strong> 1" in html
    assert len(re.findall(r"<img [^>]*src=\"data:image/png", html)) == 8


@pytest.fixture
def graded_copy(tmp_path_factory, tmp_path):
    """A copy of the toy course graded under the per_day course (李明 1 d 3 h late), and an extension for him."""
    _, _, graded, _ = term_fixture.graded(tmp_path_factory.getbasetemp())
    out = tmp_path / "out"
    shutil.copytree(graded, out)
    (tmp_path / "ext.csv").write_text("student,due\n李明,2023-04-05T23:59:00-04:00\n", encoding="utf-8")
    return out, tmp_path / "ext.csv"


def test_export_with_extensions_recomputes(graded_copy):
    """Does `export OUT --extensions FILE` replace OUT's extensions and export 李明 without his late penalty?"""
    out, ext = graded_copy
    code = export.main(out=out, extensions=ext)
    row = next(r for r in read(out / "export" / "nbgrader_grades.csv") if r["student_id"] == "李明")
    late = next(r for r in read(out / "grades.csv") if r["student"] == "李明")
    assert (code, late["late_penalty"], float(row["late_submission_penalty"])) == (0, "0", 0.0)


def test_export_with_bad_course_says_why(graded_copy, tmp_path, capsys):
    """Does `export OUT --course FILE` with an unknown key exit 1 with a one-line error naming the key?"""
    out, _ = graded_copy
    (tmp_path / "bad.toml").write_text(term_fixture.COURSE.replace("grace_minutes", "grace_mins"))
    code = export.main(out=out, course=tmp_path / "bad.toml")
    err = capsys.readouterr().err
    assert (code, "grace_mins" in err, err.count("\n")) == (1, True, 1)


def test_report_with_course_recomputes(graded_copy, tmp_path):
    """Does `report OUT --course FILE` (late policy 'zero') replace OUT's course file and take late 李明's whole raw
    score (3 points, not per_day's 0.6) in grades.csv and nbgrader_grades.csv?"""
    from autograder.reports import report

    out, _ = graded_copy
    (tmp_path / "zero.toml").write_text(
        term_fixture.COURSE.split("[late]")[0] + '[late]\npolicy = "zero"\n', encoding="utf-8"
    )
    code = report.main(out=out, course=tmp_path / "zero.toml")
    row = next(r for r in read(out / "export" / "nbgrader_grades.csv") if r["student_id"] == "李明")
    late = next(r for r in read(out / "grades.csv") if r["student"] == "李明")
    assert (code, late["late_penalty"], float(row["late_submission_penalty"])) == (0, "3", 3.0)
