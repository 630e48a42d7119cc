"""autograder.reports.export: nbgrader-compatible CSV and one-row-per-student LMS CSV from OUT/grades.csv."""

import csv
import datetime
import json
import os
import sys
import warnings
from pathlib import Path

import pytest

from autograder import lms
from autograder.contract import GRADED, WRITTEN, max_score, written_max_score
from autograder.reports import export

# (student, notebook) -> points per grade id; a notebook left out is "missing" for that student.
POINTS = {
    ("alice", "nmt"): dict(GRADED["nmt"]),
    ("alice", "bert"): dict(GRADED["bert"], freeze_encoder=0),
    ("alice", "clip"): dict(GRADED["clip"]),
    ("bob", "nmt"): {gid: 0 for gid in GRADED["nmt"]},
    ("bob", "clip"): dict(GRADED["clip"], rank_images=0, scavenger_caption=0),
}
STUDENTS = ["alice", "bob", "carol"]  # carol submitted nothing
# Hand grades a TA entered so far: alice's nmt answers are half graded, the rest waits.
HAND = {("alice", "nmt"): {"written_scaling": 2.0, "written_decoder_only": 1.0}}
# The course's points, autograded and written: every total below is out of this.
TOTAL = sum(max_score(nb) + written_max_score(nb) for nb in GRADED)
# alice's points: her nmt (autograded and hand-graded so far) and her total over the notebooks she submitted
ALICE_NMT = sum(POINTS[("alice", "nmt")].values()) + sum(HAND[("alice", "nmt")].values())
ALICE = ALICE_NMT + sum(sum(POINTS[("alice", nb)].values()) for nb in GRADED if nb != "nmt" and ("alice", nb) in POINTS)


def still_to_grade(student):
    """The note on a student's written answers not yet graded by hand (those of the notebooks they submitted)."""
    cells = [
        f"{nb}/{gid}"
        for nb in GRADED
        if (student, nb) in POINTS
        for gid in WRITTEN[nb]
        if gid not in HAND.get((student, nb), {})
    ]
    return f"provisional: {len(cells)} cell(s) still to grade by hand ({', '.join(cells)})"


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)


def write_grades(out, extra=(), pending=True):
    """grades.csv as the grade command writes it for POINTS (missing notebooks scored 0); with pending=False
    every written answer counts as graded (nothing in `ungraded`: every total final)."""
    rows = [["student", "notebook", "score", "max_score", "status", "written_score", "written_max_score", "ungraded"]]
    for student in STUDENTS:
        for nb in GRADED:
            points, hand = POINTS.get((student, nb)), HAND.get((student, nb), {})
            waiting = " ".join(g for g in WRITTEN[nb] if g not in hand) if points else ""
            rows.append(
                [
                    student,
                    nb,
                    sum(points.values()) if points else 0,
                    max_score(nb),
                    "graded" if points else "missing",
                    sum(hand.values()) if hand else "",
                    written_max_score(nb) or "" if points else "",
                    waiting if pending else "",
                ]
            )
    write_csv(out / "grades.csv", rows + list(extra))


def write_gradebook(out, monkeypatch):
    """A real nbgrader gradebook holding the same scores, as nbgrader autograde would leave it."""
    from nbgrader.api import Gradebook

    # nbgrader creates the database by running the `alembic` command of the environment
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        gb.add_assignment("a3")
        for nb, cells in GRADED.items():
            gb.update_or_create_notebook(nb, "a3")
            for gid, pts in cells.items():
                gb.update_or_create_grade_cell(f"test_{gid}", nb, "a3", max_score=pts, cell_type="code")
            for gid, pts in WRITTEN[nb].items():
                gb.update_or_create_grade_cell(gid, nb, "a3", max_score=pts, cell_type="markdown")
        for student in STUDENTS:
            gb.add_student(student)
        for student in ("alice", "bob"):
            with warnings.catch_warnings():  # SQLAlchemy autoflush chatter inside nbgrader
                warnings.simplefilter("ignore")
                gb.add_submission("a3", student, timestamp=datetime.datetime(2026, 3, 1, 12, 0))
            for nb, cells in GRADED.items():
                for gid in cells:
                    grade = gb.find_grade(f"test_{gid}", nb, "a3", student)
                    grade.auto_score = POINTS.get((student, nb), {}).get(gid, 0)
                for gid, score in HAND.get((student, nb), {}).items():
                    gb.find_grade(gid, nb, "a3", student).manual_score = score
        gb.db.commit()


def test_nbgrader_csv_matches_nbgrader_export_byte_for_byte(tmp_path, monkeypatch):
    """Is our nbgrader CSV, hand grades and written points included, identical to what nbgrader's own
    CsvExportPlugin writes for the same gradebook?"""
    from nbgrader.api import Gradebook
    from nbgrader.plugins.export import CsvExportPlugin

    write_grades(tmp_path)
    write_gradebook(tmp_path, monkeypatch)
    theirs = tmp_path / "nbgrader_export.csv"
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        CsvExportPlugin(to=str(theirs)).export(gb)
    ours = tmp_path / "ours.csv"
    assert export.write_nbgrader_csv(tmp_path, ours) == 3
    assert f"a3,,2026-03-01 12:00:00,alice,,,,{ALICE:.1f},0.0,{ALICE:.1f},{TOTAL:.1f}" in theirs.read_text()
    assert ours.read_text() == theirs.read_text()


def test_nbgrader_csv_without_gradebook_leaves_timestamp_empty(tmp_path):
    """Without OUT/gradebook.db, are the scores still right and the timestamp empty?"""
    write_grades(tmp_path)
    dest = tmp_path / "n.csv"
    export.write_nbgrader_csv(tmp_path, dest)
    rows = list(csv.DictReader(open(dest)))
    assert [(r["student_id"], r["timestamp"], r["raw_score"], r["score"], r["max_score"]) for r in rows] == [
        ("alice", "", f"{ALICE:.1f}", f"{ALICE:.1f}", f"{TOTAL:.1f}"),
        ("bob", "", "3.0", "3.0", f"{TOTAL:.1f}"),
        ("carol", "", "0.0", "0.0", f"{TOTAL:.1f}"),
    ]


def test_lms_csv_has_one_row_per_student_with_totals_and_notes(tmp_path):
    """Does the LMS CSV give each student one row: points per notebook (hand grades included), total, percent,
    what still waits for a TA and why something is missing?"""
    write_grades(tmp_path)
    dest = tmp_path / "lms.csv"
    assert export.write_lms_csv(tmp_path, dest) == 3
    rows = list(csv.reader(open(dest)))
    assert rows == [
        [
            "student_id",
            "submitted_as",
            "nmt",
            "bert",
            "clip",
            "theory",
            "total",
            "max_total",
            "percent",
            "provisional",
            "notes",
        ],
        [
            "alice",
            "alice",
            f"{ALICE_NMT:g}",
            f"{sum(POINTS[('alice', 'bert')].values()):g}",
            f"{sum(POINTS[('alice', 'clip')].values()):g}",
            "0",
            f"{ALICE:g}",
            str(TOTAL),
            f"{100 * ALICE / TOTAL:.1f}",
            "yes",
            still_to_grade("alice") + "; theory: missing",
        ],
        [
            "bob",
            "bob",
            "0",
            "0",
            "3",
            "0",
            "3",
            str(TOTAL),
            f"{100 * 3 / TOTAL:.1f}",
            "yes",
            still_to_grade("bob") + "; bert: missing; theory: missing",
        ],
        [
            "carol",
            "carol",
            "0",
            "0",
            "0",
            "0",
            "0",
            str(TOTAL),
            "0.0",
            "",
            "nmt: missing; bert: missing; clip: missing; theory: missing",
        ],
    ]


def test_lms_csv_flags_a_pending_score_instead_of_inventing_one(tmp_path):
    """Does an empty score (awaiting manual grading) stay empty and get a note, not a silent zero?"""
    rows = [
        ["student", "notebook", "score", "max_score", "status"],
        ["dan", "nmt", "11", "11", "graded"],
        ["dan", "bert", "4", "4", "graded"],
        ["dan", "clip", "", "5", "graded"],
        ["dan", "theory", "11", "11", "graded"],
    ]
    write_csv(tmp_path / "grades.csv", rows)
    dest = tmp_path / "lms.csv"
    export.write_lms_csv(tmp_path, dest)
    (row,) = list(csv.DictReader(open(dest)))
    assert (row["clip"], row["total"], row["notes"]) == ("", "26", "clip: score pending (graded)")


def test_students_sort_naturally(tmp_path):
    """Does student2 come before student10 in the exports?"""
    rows = [["student", "notebook", "score", "max_score", "status"]]
    rows += [[f"student{i}", nb, 0, max_score(nb), "graded"] for i in (10, 2, 1) for nb in GRADED]
    write_csv(tmp_path / "grades.csv", rows)
    paths = export.export(tmp_path)
    for path in paths:
        rows = list(csv.reader(open(path)))[1:]
        rows = rows[1:] if path.name.startswith("canvas") else rows  # after Canvas's Points Possible row
        ids = [r[3] if path.name.startswith("nbgrader") else r[0] for r in rows]
        assert ids == ["student1", "student2", "student10"], (path.name, ids)


def test_status_with_commas_survives_the_round_trip(tmp_path):
    """Does a status containing commas and quotes land in the notes column intact?"""
    reason = 'invalid JSON: Expecting "," delimiter: line 3, column 5'
    rows = [
        ["student", "notebook", "score", "max_score", "status"],
        ["eve", "nmt", 0, 11, reason],
        ["eve", "bert", 4, 4, "graded"],
        ["eve", "clip", 5, 5, "graded"],
        ["eve", "theory", 11, 11, "graded"],
    ]
    write_csv(tmp_path / "grades.csv", rows)
    dest = tmp_path / "lms.csv"
    export.write_lms_csv(tmp_path, dest)
    (row,) = list(csv.DictReader(open(dest)))
    assert row["notes"] == f"nmt: {reason}"


def test_cli_without_grades_csv_fails_clearly(tmp_path, capsys):
    """Does `python -m autograder export` on an ungraded folder exit 1 with one line saying what is missing?"""
    assert export.main(out=tmp_path) == 1
    err = capsys.readouterr().err.strip()
    assert "grades.csv not found" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("name", ["nbgrader_grades.csv", "lms_grades.csv", "canvas_grades.csv", "moodle_grades.csv"])
def test_export_writes_both_files_under_out_export(tmp_path, name):
    """Does export(OUT) write OUT/export/<name> with a row per student (every total final)?"""
    write_grades(tmp_path, pending=False)
    export.export(tmp_path)
    rows = list(csv.reader(open(tmp_path / "export" / name)))
    assert len(rows) == 1 + len(STUDENTS) + (name == "canvas_grades.csv")  # Canvas: a Points Possible row


def test_canvas_import_matches_students_by_canvas_user_id(tmp_path):
    """Is canvas_grades.csv a Canvas gradebook import: its header, a Points Possible row, and each student's
    total under their Canvas user id (students without one by login)?"""
    write_grades(tmp_path, pending=False)
    write_csv(
        tmp_path / "lms_ids.csv",
        [["student", "lms", "lms_user_id", "lms_name"], ["alice", "canvas", "12345", "alicew"]],
    )
    dest = tmp_path / "canvas.csv"
    assert export.write_gradebook(tmp_path, dest, lms.CANVAS) == 3
    rows = list(csv.reader(open(dest)))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "a3 (autograder)"]
    assert rows[1] == ["Points Possible", "", "", "", "", str(TOTAL)]
    assert rows[2] == ["alicew", "12345", "", "", "", f"{ALICE:g}"]
    assert rows[3] == ["bob", "", "", "bob", "", "3"]


def test_moodle_worksheet_uses_participant_ids(tmp_path):
    """Is moodle_grades.csv Moodle's grading worksheet: Identifier 'Participant <id>', grade, maximum?"""
    write_grades(tmp_path, pending=False)
    write_csv(
        tmp_path / "lms_ids.csv", [["student", "lms", "lms_user_id", "lms_name"], ["bob", "moodle", "456", "Bob Jones"]]
    )
    dest = tmp_path / "moodle.csv"
    export.write_gradebook(tmp_path, dest, lms.MOODLE)
    rows = {r["Full name"]: r for r in csv.DictReader(open(dest))}
    assert list(rows["Bob Jones"].values())[:4] == ["Participant 456", "Bob Jones", "3", str(TOTAL)]
    assert rows["carol"]["Identifier"] == "carol"


# --- what the LMS imports and the students read; students with the names they really have ------
LI, ZOE, OLGA = "李明", "Zoë Ñúñez", "Ольга"


def write_course(out, waiting=(), lms=None, states=None):
    """grades.csv for 李明, Zoë Ñúñez and Ольга with every notebook graded full marks, except that Zoë did not
    submit bert; `waiting` students still have a written answer to grade by hand. lms: {student: (lms, id,
    name)} for lms_ids.csv; states: {student: submitted_as} recorded in OUT/.state."""
    rows = [["student", "notebook", "score", "max_score", "status", "written_score", "written_max_score", "ungraded"]]
    for student in (LI, ZOE, OLGA):
        for nb in GRADED:
            missing = (student, nb) == (ZOE, "bert")
            hand = "" if missing or not written_max_score(nb) else written_max_score(nb)
            ungraded = next(iter(WRITTEN[nb]), "") if student in waiting and WRITTEN[nb] and not missing else ""
            rows.append(
                [
                    student,
                    nb,
                    0 if missing else max_score(nb),
                    max_score(nb),
                    "missing" if missing else "graded",
                    "" if ungraded else hand,
                    "" if missing else written_max_score(nb) or "",
                    ungraded,
                ]
            )
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "grades.csv", rows)
    if lms:
        write_csv(
            out / "lms_ids.csv", [["student", "lms", "lms_user_id", "lms_name"]] + [[s, *v] for s, v in lms.items()]
        )
    for student, shown in (states or {}).items():
        (out / ".state").mkdir(exist_ok=True)
        state = {"student": student, "submission": {"submitted_as": shown}, "notebooks": {}}
        (out / ".state" / f"{student}.json").write_text(json.dumps(state, ensure_ascii=False))
    return out


def test_export_warns_about_students_canvas_will_not_match(tmp_path, capsys):
    """When some students came from Canvas, does export say how many have no Canvas user id, naming them?"""
    out = write_course(tmp_path, lms={LI: ("canvas", "1001", "Li Ming"), OLGA: ("canvas", "1002", "Olga K")})
    export.export(out)
    lines = [l for l in capsys.readouterr().out.splitlines() if "Canvas will not match" in l]
    assert lines == [
        f"export: 1 student(s) in canvas_grades.csv have no Canvas user id (Canvas will not match them): {ZOE}"
    ]


def test_export_warns_when_no_student_has_an_lms_id(tmp_path, capsys):
    """For plain student folders, does export say that no LMS will match the import rows, naming the first few?"""
    export.export(write_course(tmp_path))
    (line,) = [l for l in capsys.readouterr().out.splitlines() if "no LMS id" in l]
    assert line.startswith("export: 3 student(s) have no LMS id") and all(n in line for n in (LI, ZOE, OLGA))


def test_provisional_totals_stay_out_of_the_lms_imports(tmp_path, capsys):
    """Is a total with a written answer still to grade left out of the Canvas and Moodle imports, said so on the
    console, and marked provisional in lms_grades.csv?"""
    out = write_course(tmp_path, waiting=(ZOE,), lms={s: ("moodle", str(i), s) for i, s in enumerate((LI, ZOE, OLGA))})
    export.export(out)
    canvas = [r[0] for r in csv.reader(open(out / "export" / "canvas_grades.csv", encoding="utf-8"))][2:]
    moodle = [r["Full name"] for r in csv.DictReader(open(out / "export" / "moodle_grades.csv", encoding="utf-8"))]
    assert sorted(canvas) == sorted(moodle) == sorted([LI, OLGA])
    summary = {r["student_id"]: r["provisional"] for r in csv.DictReader(open(out / "export" / "lms_grades.csv"))}
    assert summary == {LI: "", ZOE: "yes", OLGA: ""}
    assert (
        "export: 1 provisional total(s) left out of canvas_grades.csv and moodle_grades.csv" in capsys.readouterr().out
    )


def test_moodle_feedback_comments_are_for_students(tmp_path):
    """Does Moodle's Feedback comments column (students read it) give points per notebook in the student's terms,
    with no internal status, note or instruction?"""
    out = write_course(tmp_path, lms={ZOE: ("moodle", "77", ZOE)})
    export.export(out)
    rows = {r["Full name"]: r for r in csv.DictReader(open(out / "export" / "moodle_grades.csv", encoding="utf-8"))}
    comment = rows[ZOE]["Feedback comments"]
    bert, nmt = (max_score(nb) + written_max_score(nb) for nb in ("bert", "nmt"))
    assert f"bert: 0 / {bert} (not submitted)" in comment and f"nmt: {nmt} / {nmt}" in comment
    internal = [
        w for w in ("missing", "provisional", "grades.csv", "status", "ungraded", "needs manual") if w in comment
    ]
    assert not internal, f"internal words in a student's comment: {internal}"


def test_moodle_worksheet_has_the_columns_moodles_importer_requires(tmp_path):
    """Does moodle_grades.csv carry the three columns Moodle's worksheet importer requires (Identifier, Grade,
    Last modified (grade)), with a time it can parse, and Participant identifiers?"""
    out = write_course(tmp_path, lms={LI: ("moodle", "31", LI)})
    now = datetime.datetime(2026, 11, 24, 7, 5, tzinfo=datetime.timezone.utc)
    export.write_gradebook(out, tmp_path / "m.csv", lms.MOODLE, now=now)
    rows = list(csv.DictReader(open(tmp_path / "m.csv", encoding="utf-8")))
    assert {"Identifier", "Grade", "Last modified (grade)", "Feedback comments"} <= set(rows[0])
    row = next(r for r in rows if r["Full name"] == LI)
    assert (row["Identifier"], row["Grade"], row["Last modified (grade)"]) == (
        "Participant 31",
        str(TOTAL),
        "2026-11-24 07:05:00 UTC",
    )


def test_exports_name_students_as_submitted(tmp_path):
    """Do lms_grades.csv and the Canvas import name a student as they submitted (the recorded submitted_as), not
    by the grader's id?"""
    out = write_course(tmp_path, states={ZOE: "Zoë Ñúñez (late)"})
    export.export(out)
    summary = {r["student_id"]: r for r in csv.DictReader(open(out / "export" / "lms_grades.csv", encoding="utf-8"))}
    assert summary[ZOE]["submitted_as"] == "Zoë Ñúñez (late)" and summary[LI]["submitted_as"] == LI
    canvas = [r[0] for r in csv.reader(open(out / "export" / "canvas_grades.csv", encoding="utf-8"))]
    assert "Zoë Ñúñez (late)" in canvas


def test_a_damaged_download_stays_out_of_the_lms_imports(tmp_path):
    """Is a student whose notebook the TA's LMS download damaged (no score yet) left out of the Canvas and Moodle
    imports, and marked provisional in lms_grades.csv with the reason, rather than exported at 0?"""
    out = write_course(tmp_path, lms={s: ("moodle", str(i), s) for i, s in enumerate((LI, ZOE, OLGA))})
    text = (out / "grades.csv").read_text(encoding="utf-8").splitlines()
    damaged = "damaged download: 'theory.ipynb' could not be read from the LMS download"
    text = [
        f'{ZOE},theory,,{max_score("theory")},"{damaged}",,,' if ln.startswith(f"{ZOE},theory,") else ln for ln in text
    ]
    (out / "grades.csv").write_text("\n".join(text) + "\n", encoding="utf-8")
    export.export(out)
    moodle = [r["Full name"] for r in csv.DictReader(open(out / "export" / "moodle_grades.csv", encoding="utf-8"))]
    summary = {r["student_id"]: r for r in csv.DictReader(open(out / "export" / "lms_grades.csv", encoding="utf-8"))}
    assert sorted(moodle) == sorted([LI, OLGA])
    assert summary[ZOE]["provisional"] == "yes" and "theory damaged in the LMS download" in summary[ZOE]["notes"]


def test_moodle_comment_of_a_late_student_adds_up_to_the_grade(tmp_path):
    """Does a late student's Moodle comment say the late penalty and the grade it leaves, so the points per notebook
    (which add up to the raw score) and the Grade column agree?"""
    out = write_course(tmp_path, lms={LI: ("moodle", "31", LI)})
    rows = list(csv.reader(open(out / "grades.csv", encoding="utf-8")))
    rows[0] += ["late_penalty"]
    for row in rows[1:]:
        row.append("2" if row[0] == LI else "0")
    write_csv(out / "grades.csv", rows)
    export.write_gradebook(out, tmp_path / "m.csv", lms.MOODLE)
    row = next(r for r in csv.DictReader(open(tmp_path / "m.csv", encoding="utf-8")) if r["Full name"] == LI)
    grade = TOTAL - 2 * len(GRADED)
    assert (
        row["Grade"],
        f"Late penalty: -{2 * len(GRADED)} points, so {grade} / {TOTAL}." in row["Feedback comments"],
    ) == (
        str(grade),
        True,
    )


def test_lms_settings_of_the_course_file_reach_the_imports(tmp_path):
    """With [lms] canvas_assignment_id and moodle_max in OUT's course file, is the Canvas column 'a3 (48213)' and
    every Moodle grade scaled to the Moodle maximum?"""
    from tests.fixtures import term as term_fixture

    out = write_course(tmp_path, lms={LI: ("moodle", "31", LI)})
    (out / "term").mkdir()
    (out / "term" / "course.toml").write_text(
        term_fixture.COURSE + "\n[lms]\ncanvas_assignment_id = 48213\nmoodle_max = 100\n"
    )
    export.export(out)
    header = next(csv.reader(open(out / "export" / "canvas_grades.csv", encoding="utf-8")))
    row = next(
        r for r in csv.DictReader(open(out / "export" / "moodle_grades.csv", encoding="utf-8")) if r["Full name"] == LI
    )
    assert (header[-1], row["Grade"], row["Maximum Grade"]) == ("a3 (48213)", "100", "100")


def test_export_says_what_the_lms_imports_lack(tmp_path, capsys):
    """Without a course file's [lms] settings, does export say that Canvas would create a new assignment and that
    Moodle would read the points as out of its own maximum?"""
    export.export(write_course(tmp_path))
    printed = capsys.readouterr().out
    assert "Canvas would create a new assignment" in printed and "Moodle reads as out of" in printed


HOSTILE = "=cmd|' -C calc'!A0"  # a student folder a spreadsheet would run as a command


@pytest.mark.parametrize(
    "name, column",
    [
        ("lms_grades.csv", "student_id"),
        ("lms_grades.csv", "submitted_as"),
        ("moodle_grades.csv", "Full name"),
        ("canvas_grades.csv", "Student"),
        ("nbgrader_grades.csv", "student_id"),
    ],
)
def test_a_formula_like_student_is_quoted_once_in_the_exports(tmp_path, name, column):
    """Read from a grades.csv and lms_ids.csv that quote a formula-like student as grade writes them, is the student
    written '=cmd… in each export (quoted once, not twice, and not bare)?"""
    from autograder import csvsafe

    out = write_course(tmp_path)
    rows = list(csv.reader(open(out / "grades.csv", encoding="utf-8")))
    rows += [[HOSTILE, *row[1:]] for row in rows if row[0] == LI]
    for path, data in (
        (out / "grades.csv", rows),
        (out / "lms_ids.csv", [["student", "lms", "lms_user_id", "lms_name"], [HOSTILE, "moodle", "9", HOSTILE]]),
    ):
        with open(path, "w", newline="", encoding="utf-8") as f:
            csvsafe.writer(f).writerows(data)
    export.export(out)
    found = [r[column] for r in csv.DictReader(open(out / "export" / name, encoding="utf-8"))]
    assert "'" + HOSTILE in found and HOSTILE not in found and "''" + HOSTILE not in found
