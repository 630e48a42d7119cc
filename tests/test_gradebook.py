"""OUT/gradebook.db: a student's submission merged from their shard as nbgrader lays it out, ids and hand grades
kept across a re-grade (autograder/gradebook.py)."""

import contextlib
import os
import shutil
import sqlite3
import sys
import uuid

import pytest

from autograder import contract, gradebook
from autograder.gradebook import HandGrade
from autograder.records import Results

STUDENTS = ["wrongmul", "ref", "Zoë Ñúñez", "Zoe\u0308 Ñúñez", "李明"]  # the last-but-one: the same name, decomposed


@pytest.fixture(autouse=True)
def _alembic_on_path(monkeypatch):
    """nbgrader's Gradebook runs alembic from the interpreter's folder."""
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))


def toy_template(folder):
    """A course template gradebook (the toy notebook's cells, no submission), built with nbgrader's Gradebook API as
    `nbgrader generate_assignment` would."""
    from nbgrader.api import Gradebook

    folder.mkdir(parents=True)
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        gb.add_assignment(contract.ASSIGNMENT)
        gb.add_notebook("toy", contract.ASSIGNMENT)
        for name, points in [("test_add", 1.0), ("test_mul", 2.0)]:
            gb.add_grade_cell(name, "toy", contract.ASSIGNMENT, max_score=points, cell_type="code")
        gb.add_grade_cell("written_toy", "toy", contract.ASSIGNMENT, max_score=1.0, cell_type="markdown")
        for name in ["add", "mul", "written_toy"]:
            gb.add_solution_cell(name, "toy", contract.ASSIGNMENT)
    return folder


def graded(path, scores, timestamp=None):
    """Add to the gradebook at `path` a submission of each student in `scores` ({student: {grade cell: auto score}})
    as `nbgrader autograde` would: add_submission, then scores, a comment, a flag and a late penalty."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{path}") as gb:
        for student, grades in scores.items():
            gb.update_or_create_student(student)
            gb.add_submission(contract.ASSIGNMENT, student, **({"timestamp": timestamp} if timestamp else {}))
            for name, score in grades.items():
                grade = gb.find_grade(name, "toy", contract.ASSIGNMENT, student)
                grade.auto_score, grade.needs_manual_grade = score, score is None
            gb.find_comment("add", "toy", contract.ASSIGNMENT, student).auto_comment = f"well done {student}"
            notebook = gb.find_submission_notebook("toy", contract.ASSIGNMENT, student)
            notebook.flagged, notebook.late_submission_penalty = True, 0.5
        gb.db.commit()


def shard_of(template, tmp_path, scores, timestamp=None):
    """The bytes of a shard (a copy of the template's gradebook) holding `scores`' submissions."""
    shard = tmp_path / "shard.db"
    shutil.copy(template / "gradebook.db", shard)
    graded(shard, scores, timestamp)
    data = shard.read_bytes()
    shard.unlink()
    return data


def rows(path, ids=False):
    """Every submission row of a gradebook, keyed by what it stands for (ids left out unless `ids`)."""
    queries = {
        "submitted_assignment": "SELECT sa.student_id, '', '', sa.id, sa.timestamp, sa.extension FROM "
        "submitted_assignment sa",
        "submitted_notebook": "SELECT sa.student_id, nb.name, '', snb.id, snb.flagged, snb.late_submission_penalty "
        "FROM submitted_notebook snb JOIN notebook nb ON snb.notebook_id = nb.id "
        "JOIN submitted_assignment sa ON snb.assignment_id = sa.id",
        "grade": "SELECT sa.student_id, nb.name, bc.name || '/' || bc.type, g.id, g.auto_score, g.manual_score, "
        "g.extra_credit, g.needs_manual_grade FROM grade g JOIN base_cell bc ON g.cell_id = bc.id "
        "JOIN submitted_notebook snb ON g.notebook_id = snb.id JOIN notebook nb ON snb.notebook_id = nb.id "
        "JOIN submitted_assignment sa ON snb.assignment_id = sa.id",
        "comment": "SELECT sa.student_id, nb.name, bc.name || '/' || bc.type, c.id, c.auto_comment, "
        "c.manual_comment FROM comment c JOIN base_cell bc ON c.cell_id = bc.id "
        "JOIN submitted_notebook snb ON c.notebook_id = snb.id JOIN notebook nb ON snb.notebook_id = nb.id "
        "JOIN submitted_assignment sa ON snb.assignment_id = sa.id",
    }
    with contextlib.closing(sqlite3.connect(path)) as con:
        return {
            (table, *row[:3]): row[3:] if ids else row[4:]
            for table, query in queries.items()
            for row in con.execute(query)
        }


def test_a_merged_submission_has_the_rows_nbgrader_would_make(tmp_path):
    """Is a submission merged from a shard row for row what nbgrader's own add_submission and autograde make in the
    course gradebook (scores, comments, flags, penalty, timestamp), for names of every script?"""
    template = toy_template(tmp_path / "template")
    scores = {s: {"test_add": 1.0, "test_mul": None if s == "ref" else 0.0} for s in STUDENTS}
    shard = shard_of(template, tmp_path, scores, timestamp="2026-11-20 10:00:00.000000")
    res = Results(tmp_path / "out", template)
    for student in STUDENTS:
        res.merge_shard(student, shard)
    expected = tmp_path / "expected.db"
    shutil.copy(template / "gradebook.db", expected)
    graded(expected, scores, timestamp="2026-11-20 10:00:00.000000")
    assert rows(res.gradebook_path()) == rows(expected)
    assert len({k[1] for k in rows(res.gradebook_path())}) == len(STUDENTS)  # the decomposed name is its own student


def test_merging_a_shard_twice_keeps_one_submission(tmp_path):
    """Does merging the same student's shard twice leave one submission with the shard's scores (and nothing of
    the shard's other students), as nbgrader's API reads it?"""
    from nbgrader.api import Gradebook

    template = toy_template(tmp_path / "template")
    shard = shard_of(template, tmp_path, {"wrongmul": {"test_add": 1.0, "test_mul": 0.0}, "ref": {"test_mul": 2.0}})
    res = Results(tmp_path / "out", template)
    res.merge_shard("wrongmul", shard)
    res.merge_shard("wrongmul", shard)
    with Gradebook(f"sqlite:///{res.gradebook_path()}") as gb:
        subs = gb.assignment_submissions(contract.ASSIGNMENT)
        assert [(s.student.id, s.score) for s in subs] == [("wrongmul", 1.0)]


def test_a_regrade_keeps_the_id_of_every_row(tmp_path):
    """Does a re-grade give every row of the new submission the id its predecessor had (formgrader's links carry
    them), while the new scores replace the old?"""
    template = toy_template(tmp_path / "template")
    res = Results(tmp_path / "out", template)
    res.merge_shard("李明", shard_of(template, tmp_path, {"李明": {"test_add": 0.0}}))
    first = rows(res.gradebook_path(), ids=True)
    res.merge_shard("李明", shard_of(template, tmp_path, {"李明": {"test_add": 1.0}}))
    second = rows(res.gradebook_path(), ids=True)
    assert {k: v[0] for k, v in first.items()} == {k: v[0] for k, v in second.items()}
    assert second[("grade", "李明", "toy", "test_add/GradeCell")][1] == 1.0


def test_new_row_ids_are_uuids_that_never_repeat_or_go_back(monkeypatch):
    """Is every new row id 32 hex digits of a version-7 UUID, each one after the last, even when many are made
    within one millisecond or the clock steps back?"""
    clock = iter([5_000_000_000] * 5000 + [4_000_000_000] * 10)  # 5000 ids in one ms (more than its 4096), then back
    monkeypatch.setattr(gradebook.time, "time_ns", lambda: next(clock))
    ids = [gradebook.new_id() for _ in range(5010)]
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    assert {uuid.UUID(i).version for i in ids} == {7} and {uuid.UUID(i).variant for i in ids} == {uuid.RFC_4122}
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_the_rows_of_a_later_submission_sort_after_the_earlier_ones(tmp_path):
    """Do the rows merged for a second student get ids after the first student's (so a class's rows are appended
    to the id indexes, not scattered), in every table nbgrader keys by a new id?"""
    template = toy_template(tmp_path / "template")
    res = Results(tmp_path / "out", template)
    res.merge_shard("Ana", shard_of(template, tmp_path, {"Ana": {"test_add": 1.0}}))
    first = rows(res.gradebook_path(), ids=True)
    res.merge_shard("Zoë", shard_of(template, tmp_path, {"Zoë": {"test_add": 1.0}}))
    second = {k: v for k, v in rows(res.gradebook_path(), ids=True).items() if k not in first}
    assert {k[0] for k in second} == {"submitted_assignment", "submitted_notebook", "grade", "comment"}
    assert min(v[0] for v in second.values()) > max(v[0] for v in first.values())


def test_a_shard_without_the_student_changes_nothing(tmp_path):
    """Does a shard that holds no submission of the student leave the course gradebook as it was?"""
    template = toy_template(tmp_path / "template")
    res = Results(tmp_path / "out", template)
    res.merge_shard("ref", shard_of(template, tmp_path, {"ref": {"test_add": 1.0}}))
    before = rows(res.gradebook_path(), ids=True)
    kept = res.merge_shard("ref", shard_of(template, tmp_path, {"someone else": {"test_add": 0.0}}))
    assert kept == gradebook.HandGrades() and rows(res.gradebook_path(), ids=True) == before


def test_students_merged_together_get_the_rows_they_get_one_at_a_time(tmp_path):
    """Does merging several students in one transaction (one a re-grade whose TA-graded answer is unchanged, one
    whose shard does not hold them) leave the same rows and hand grades, and say the same of each, as merging them
    one at a time?"""
    template = toy_template(tmp_path / "template")
    scores = {s: {"test_add": 1.0, "test_mul": None if s == "ref" else 0.0} for s in STUDENTS}
    shard = shard_of(template, tmp_path, scores)
    nobody = shard_of(template, tmp_path, {"someone else": {"test_add": 0.0}})
    answer = {"written_toy": "my answer"}
    outcomes = {}
    for way in ("one at a time", "together"):
        res = Results(tmp_path / way, template)
        res.merge_shard("李明", shard)
        enter(res.gradebook_path(), "李明", "written_toy", 0.5, "clear")
        graded = [gradebook.Graded(s, shard, {"toy": answer}, lambda nb: answer) for s in STUDENTS]
        graded.insert(1, gradebook.Graded("ghost", nobody, {}, lambda nb: {}))
        if way == "together":
            kept = gradebook.merge_all(res.gradebook_path(), graded)
        else:
            kept = [gradebook.merge_all(res.gradebook_path(), [g])[0] for g in graded]
        outcomes[way] = (rows(res.gradebook_path()), gradebook.read_hand_grades(res.gradebook_path()), kept)
    assert outcomes["together"] == outcomes["one at a time"]
    kept = outcomes["together"][2]
    assert [k.kept for k in kept] == [0, 0, 0, 0, 0, 1] and kept[1] == gradebook.HandGrades()


def test_students_merged_together_share_one_commit(tmp_path, monkeypatch):
    """Are several students merged in one write transaction, so that the wait for the disk is paid once?"""
    template = toy_template(tmp_path / "template")
    shard = shard_of(template, tmp_path, {s: {"test_add": 1.0} for s in STUDENTS})
    res = Results(tmp_path / "out", template)
    res.merge_shard("ref", shard)  # the course gradebook exists, with its indexes
    statements = []
    connect = sqlite3.connect

    def traced(*args, **kwargs):
        con = connect(*args, **kwargs)
        con.set_trace_callback(statements.append)
        return con

    monkeypatch.setattr(gradebook.sqlite3, "connect", traced)
    gradebook.merge_all(res.gradebook_path(), [gradebook.Graded(s, shard, {}, lambda nb: {}) for s in STUDENTS])
    assert [s for s in statements if s.split()[0] in ("BEGIN", "COMMIT")] == ["BEGIN IMMEDIATE", "COMMIT"]
    assert {k[1] for k in rows(res.gradebook_path())} == set(STUDENTS)


def enter(path, student, cell, score=None, comment=None):
    """What a TA does in formgrader: a manual score and/or comment on a student's cell."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{path}") as gb:
        if score is not None:
            gb.find_grade(cell, "toy", contract.ASSIGNMENT, student).manual_score = score
        if comment is not None:
            gb.find_comment(cell, "toy", contract.ASSIGNMENT, student).manual_comment = comment
        gb.db.commit()


@pytest.fixture
def regraded(tmp_path):
    """A student whose written answer a TA graded (score and comment), and the merge of their re-grade."""
    template = toy_template(tmp_path / "template")
    res = Results(tmp_path / "out", template)
    shard = shard_of(template, tmp_path, {"Zoë Ñúñez": {"test_add": 1.0}})
    res.merge_shard("Zoë Ñúñez", shard)
    enter(res.gradebook_path(), "Zoë Ñúñez", "written_toy", 0.5, "clear")

    def merge(before, now):
        return gradebook.merge(res.gradebook_path(), "Zoë Ñúñez", shard, {"toy": before}, lambda nb: now)

    return res, merge


def test_an_unchanged_answer_keeps_its_hand_grade_and_comment(regraded):
    """Does the re-grade of an unchanged written answer keep the TA's score and comment?"""
    res, merge = regraded
    kept = merge({"written_toy": "my answer"}, {"written_toy": "my answer"})
    assert (kept.kept, kept.dropped) == (1, 0)
    assert "HAND GRADE KEPT Zoë Ñúñez/toy/written_toy: comment 'clear' and score 0.5" in kept.lines[0]
    entered = gradebook.read_hand_grades(res.gradebook_path())[("Zoë Ñúñez", "toy")]["written_toy"]
    assert entered == HandGrade(0.5, "clear")


@pytest.mark.parametrize(
    "before, now, why",
    [
        ({"written_toy": "my answer"}, {"written_toy": "a new answer"}, "the answer changed"),
        ({}, {"written_toy": "my answer"}, "the answer changed"),
        ({"written_toy": "my answer"}, {}, "the notebook was not graded again"),
    ],
)
def test_a_changed_answer_drops_its_hand_grade(regraded, before, now, why):
    """Does the re-grade of a changed (or no longer recorded) answer drop the TA's score and comment, saying why?"""
    res, merge = regraded
    kept = merge(before, now)
    assert (kept.kept, kept.dropped) == (0, 1) and why in kept.lines[0]
    entered = gradebook.read_hand_grades(res.gradebook_path())[("Zoë Ñúñez", "toy")]["written_toy"]
    assert entered == HandGrade(None, "")


def test_a_hand_score_on_a_cell_graded_automatically_now_is_dropped(tmp_path):
    """Is a TA's score on a code check that waited for a person dropped once the re-grade scores it automatically?"""
    template = toy_template(tmp_path / "template")
    res = Results(tmp_path / "out", template)
    res.merge_shard("ref", shard_of(template, tmp_path, {"ref": {"test_mul": None}}))  # the check could not decide
    enter(res.gradebook_path(), "ref", "test_mul", 2.0)
    shard = shard_of(template, tmp_path, {"ref": {"test_mul": 2.0}})
    kept = gradebook.merge(res.gradebook_path(), "ref", shard, {"toy": {"test_mul": "x"}}, lambda nb: {"test_mul": "x"})
    assert (kept.kept, kept.dropped) == (0, 1) and "graded automatically now" in kept.lines[0]
    assert rows(res.gradebook_path())[("grade", "ref", "toy", "test_mul/GradeCell")] == (2.0, None, None, 0)


def test_a_hand_grade_saved_while_a_regrade_waits_is_kept(tmp_path):
    """When a TA's save holds the gradebook as a re-grade begins, does the re-grade wait for it and keep the hand
    grade it saved (rather than reading the gradebook before the save and writing over it)?"""
    import threading
    import time

    template = toy_template(tmp_path / "template")
    res = Results(tmp_path / "out", template)
    shard = shard_of(template, tmp_path, {"李明": {"test_add": 1.0}})
    res.merge_shard("李明", shard)
    ta = sqlite3.connect(res.gradebook_path(), isolation_level=None)
    ta.execute("BEGIN IMMEDIATE")  # formgrader's save, under way
    ta.execute(
        "UPDATE grade SET manual_score = 0.75 WHERE cell_id IN (SELECT id FROM base_cell WHERE name = 'written_toy')"
    )
    done = {}
    answer = {"written_toy": "my answer"}
    regrade = threading.Thread(
        target=lambda: done.update(
            kept=gradebook.merge(res.gradebook_path(), "李明", shard, {"toy": answer}, lambda nb: answer)
        )
    )
    regrade.start()
    time.sleep(0.5)  # the re-grade has begun and waits for the lock
    ta.execute("COMMIT")
    ta.close()
    regrade.join(30)
    assert done["kept"].kept == 1
    entered = gradebook.read_hand_grades(res.gradebook_path())[("李明", "toy")]["written_toy"]
    assert entered.score == 0.75


def task_template(folder):
    """The toy template with a task cell beside its grade cells, one of them under a grade cell's name."""
    from nbgrader.api import Gradebook

    toy_template(folder)
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        gb.add_task_cell("task_toy", "toy", contract.ASSIGNMENT, max_score=2.0, cell_type="markdown")
        gb.add_task_cell("test_add", "toy", contract.ASSIGNMENT, max_score=3.0, cell_type="markdown")
    return folder


def test_a_shards_grades_are_the_ones_nbgrader_finds(tmp_path):
    """Does shard_grades give, for every cell of every student's notebook, the row nbgrader's find_grade finds (a
    grade cell's before a task cell's of the same name), with its scores?"""
    from nbgrader.api import Gradebook

    template = task_template(tmp_path / "template")
    shard = tmp_path / "shard.db"
    shutil.copy(template / "gradebook.db", shard)
    graded(shard, {s: {"test_add": 1.0, "test_mul": None if s == "ref" else 0.0} for s in STUDENTS})
    for student in STUDENTS:
        found = gradebook.shard_grades(shard, student, "toy")
        with Gradebook(f"sqlite:///{shard}") as gb:
            for cell in ["test_add", "test_mul", "written_toy", "task_toy"]:
                grade = gb.find_grade(cell, "toy", contract.ASSIGNMENT, student)
                assert found[cell] == gradebook.ShardGrade(grade.id, grade.auto_score, grade.manual_score)
        assert set(found) == {"test_add", "test_mul", "written_toy", "task_toy"}
    assert gradebook.shard_grades(shard, "nobody", "toy") == {}
    assert gradebook.shard_grades(shard, "ref", "no such notebook") == {}


def test_scores_set_in_a_shard_are_what_nbgraders_api_would_leave(tmp_path):
    """Does set_shard_scores leave a shard row for row as setting the same scores through nbgrader's API does (a
    score final, None waiting for a person), touching no other row?"""
    from nbgrader.api import Gradebook

    template = task_template(tmp_path / "template")
    ours, theirs = tmp_path / "ours.db", tmp_path / "theirs.db"
    shutil.copy(template / "gradebook.db", ours)
    graded(ours, {s: {"test_add": 1.0, "test_mul": 2.0} for s in STUDENTS})
    shutil.copy(ours, theirs)
    wanted = {("Zoë Ñúñez", "test_mul"): None, ("Zoë Ñúñez", "test_add"): 0.0, ("李明", "task_toy"): 2.0}
    found = {student: gradebook.shard_grades(ours, student, "toy") for student in STUDENTS}
    gradebook.set_shard_scores(ours, {found[s][cell].id: score for (s, cell), score in wanted.items()})
    with Gradebook(f"sqlite:///{theirs}") as gb:
        for (student, cell), score in wanted.items():
            grade = gb.find_grade(cell, "toy", contract.ASSIGNMENT, student)
            grade.auto_score, grade.needs_manual_grade = score, score is None
        gb.db.commit()
    assert rows(ours) == rows(theirs)
    assert rows(ours) != rows(template / "gradebook.db")


def test_zeroing_a_shards_notebook_gives_every_grade_of_that_student_0(tmp_path):
    """Does zero_shard_notebook give every grade of one student's notebook 0 points, final (task cells included),
    and leave the other students' grades, even one whose name differs only in its Unicode form, as they were?"""
    template = task_template(tmp_path / "template")
    shard = tmp_path / "shard.db"
    shutil.copy(template / "gradebook.db", shard)
    graded(shard, {s: {"test_add": 1.0, "test_mul": None} for s in STUDENTS})
    before = rows(shard)
    gradebook.zero_shard_notebook(shard, "Zoë Ñúñez", "toy")
    after = rows(shard)
    changed = {key for key in after if after[key] != before[key]}
    assert changed == {key for key in after if key[0] == "grade" and key[1] == "Zoë Ñúñez"}
    assert all(after[key] == (0.0, None, None, 0) for key in changed)
    assert len(changed) == 5  # test_add (its grade and its task cell), test_mul, written_toy, task_toy
    gradebook.zero_shard_notebook(shard, "nobody", "toy")  # no such submission: nothing happens
    assert rows(shard) == after
