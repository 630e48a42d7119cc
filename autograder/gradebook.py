"""OUT/gradebook.db, nbgrader's course gradebook: what formgrader shows and where TAs enter hand grades.

Each student's submission comes from the shard their worker graded into (a copy of the template's gradebook).
Merging puts it into the course gradebook as nbgrader's own `add_submission` would lay it out (one submitted
notebook per notebook, one grade per grade or task cell, one comment per solution or task cell) with the shard's
scores and comments. Three things outlive a re-grade: the row ids (formgrader's links carry them), the student
row, and each hand grade whose answer did not change.

Plain SQL on nbgrader's schema: the ORM took ~50 ms a student, most of a class's bookkeeping. Rows are matched by
name (notebook, cell name and cell type), never by id, so a shard of a template rebuilt since the course gradebook
was started still merges.
"""

import contextlib
import secrets
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from autograder import contract


@dataclass(frozen=True)
class HandGrades:
    """What recording a student did with the hand grades a TA had entered: the log lines, in cell order, and how
    many were kept (their answer unchanged) and dropped (to grade again)."""

    lines: tuple[str, ...] = ()
    kept: int = 0
    dropped: int = 0


# Indexes nbgrader's schema lacks: without them a student's rows are found by scanning every student's (the
# hand-grade and id queries, the deletes), so a class's bookkeeping grew with the square of its size. Extra indexes
# change nothing for nbgrader or formgrader.
INDEXES = {
    "a3_grade_notebook": "grade (notebook_id)",
    "a3_comment_notebook": "comment (notebook_id)",
    "a3_submitted_notebook_assignment": "submitted_notebook (assignment_id)",
    "a3_submitted_assignment_student": "submitted_assignment (student_id)",
}


def add_indexes(gradebook: Path) -> None:
    """Add INDEXES to a gradebook (once: they stay in the file)."""
    with contextlib.closing(sqlite3.connect(gradebook)) as con, con:
        for name, on in INDEXES.items():
            con.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {on}")


# Every student's grades of the cells a person grades: written answers, and autograded cells left to a person or
# scored by one (g: the grade, gc and bc: its cell, snb, nb, sa, a, st: its notebook, assignment and student)
PERSON_GRADED = """
FROM grade g
JOIN grade_cells gc ON g.cell_id = gc.id
JOIN base_cell bc ON bc.id = gc.id
JOIN submitted_notebook snb ON g.notebook_id = snb.id
JOIN notebook nb ON snb.notebook_id = nb.id
JOIN submitted_assignment sa ON snb.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id
JOIN student st ON sa.student_id = st.id
WHERE (gc.cell_type = 'markdown' OR g.needs_manual_grade OR g.manual_score IS NOT NULL)
"""
# a written answer's comment is on its own cell; a test cell's on the solution cell it checks (test_<grade id>)
SOLUTION = r"CASE WHEN bc.name LIKE 'test\_%' ESCAPE '\' THEN substr(bc.name, 6) END"
HAND_QUERY = (
    """SELECT st.id, nb.name, bc.name, g.manual_score,
       (SELECT c.manual_comment FROM comment c JOIN base_cell cb ON c.cell_id = cb.id
        WHERE c.notebook_id = snb.id AND cb.name IN (bc.name, {solution}) AND c.manual_comment IS NOT NULL
        LIMIT 1)""".format(solution=SOLUTION)
    + PERSON_GRADED
)


@dataclass(frozen=True)
class HandGrade:
    """What a person entered for one cell: its score (None until someone grades it) and comment."""

    score: float | None = None
    comment: str = ""


NOT_ENTERED = HandGrade()  # a cell nobody entered anything for


def read_hand_grades(gradebook: Path | str, student: str | None = None) -> dict[tuple[str, str], dict[str, HandGrade]]:
    """{(student, notebook): {grade_id: HandGrade}} for the cells a person grades in an nbgrader
    gradebook (written answers, and autograded cells left to a person or scored by one), of every student or of
    `student` only."""
    if not Path(gradebook).exists():
        return {}
    try:
        with contextlib.closing(sqlite3.connect(f"file:{gradebook}?mode=ro", uri=True)) as con:
            return _hand_grades(con, student)
    except sqlite3.Error:  # no gradebook tables yet
        return {}


def _hand_grades(con, student=None):
    """read_hand_grades on an open connection."""
    if student is None:
        rows = con.execute(HAND_QUERY).fetchall()
    else:  # its own clause: SQLite then starts from the student's rows (an index, not every student's)
        rows = con.execute(HAND_QUERY + "  AND st.id = :student", {"student": student}).fetchall()
    hand = {}
    for who, notebook, grade_id, score, comment in rows:
        hand.setdefault((who, notebook), {})[grade_id] = HandGrade(score, comment or "")
    return hand


# A student's submission rows in database {db}, each under the key it keeps across a re-grade.
_SUBMITTED = """FROM {db}.submitted_assignment sa JOIN {db}.assignment a ON sa.assignment_id = a.id
    WHERE a.name = :assignment AND sa.student_id = :student"""
_NOTEBOOKS = """FROM {db}.submitted_notebook snb JOIN {db}.notebook nb ON snb.notebook_id = nb.id
    JOIN {db}.submitted_assignment sa ON snb.assignment_id = sa.id JOIN {db}.assignment a ON sa.assignment_id = a.id
    WHERE a.name = :assignment AND sa.student_id = :student"""
_CELLS = """FROM {db}.%s t JOIN {db}.base_cell bc ON t.cell_id = bc.id
    JOIN {db}.submitted_notebook snb ON t.notebook_id = snb.id JOIN {db}.notebook nb ON snb.notebook_id = nb.id
    JOIN {db}.submitted_assignment sa ON snb.assignment_id = sa.id JOIN {db}.assignment a ON sa.assignment_id = a.id
    WHERE a.name = :assignment AND sa.student_id = :student"""
_SCORES = ("auto_score", "manual_score", "extra_credit", "needs_manual_grade")
_COMMENTS = ("auto_comment", "manual_comment")


def _rows(con, db, params):
    """A student's submission in database `db` (main or shard), or None when it has none.

    Returns:
    - {"assignment": (id, timestamp), "notebooks": {nb: (id, flagged, penalty)},
       "grades" / "comments": {(nb, cell, type): (id, *values)}}
    """
    found = con.execute(f"SELECT sa.id, sa.timestamp {_SUBMITTED.format(db=db)}", params).fetchone()
    if found is None:
        return None
    notebooks = con.execute(
        f"SELECT nb.name, snb.id, snb.flagged, snb.late_submission_penalty {_NOTEBOOKS.format(db=db)}", params
    )
    cells = {}
    for table, values in (("grade", _SCORES), ("comment", _COMMENTS)):
        query = f"SELECT nb.name, bc.name, bc.type, t.id, {', '.join('t.' + v for v in values)} "
        cells[table] = {row[:3]: row[3:] for row in con.execute(query + (_CELLS % table).format(db=db), params)}
    return {
        "assignment": found,
        "notebooks": {name: rest for name, *rest in notebooks},
        "grades": cells["grade"],
        "comments": cells["comment"],
    }


def _layout(con):
    """The assignment in the course gradebook as add_submission mirrors it: (assignment id, {notebook: id},
    [(notebook, cell, type, cell id)] of its grade, solution and task cells)."""
    (assignment,) = con.execute("SELECT id FROM assignment WHERE name = ?", (contract.ASSIGNMENT,)).fetchone()
    notebooks = dict(con.execute("SELECT name, id FROM notebook WHERE assignment_id = ?", (assignment,)))
    cells = con.execute(
        """SELECT nb.name, bc.name, bc.type, bc.id FROM base_cell bc JOIN notebook nb ON bc.notebook_id = nb.id
        WHERE nb.assignment_id = ? AND bc.type IN ('GradeCell', 'SolutionCell', 'TaskCell')""",
        (assignment,),
    ).fetchall()
    return assignment, notebooks, cells


@dataclass(frozen=True)
class Graded:
    """One student's graded submission, to merge into the course gradebook.

    shard: the bytes of the gradebook the student's worker graded into; before: {notebook: {grade_id: answer}} as
    recorded before this run (the answers a TA may have graded); answers: notebook -> {grade_id: answer} as recorded
    now."""

    student: str
    shard: bytes
    before: Mapping[str, Mapping[str, str]]
    answers: Callable[[str], Mapping[str, str]]


def merge(
    course: Path,
    student: str,
    shard: bytes,
    before: Mapping[str, Mapping[str, str]],
    answers: Callable[[str], Mapping[str, str]],
) -> HandGrades:
    """Put `student`'s submission from a shard into the course gradebook, replacing an older one (merge_all of one
    student)."""
    return merge_all(course, [Graded(student, shard, before, answers)])[0]


def merge_all(course: Path, graded: Sequence[Graded]) -> list[HandGrades]:
    """Put each student's submission from their shard into the course gradebook, replacing an older one, in one
    transaction: one commit, one wait for the disk, for all of them.

    Inputs:
    - course: OUT/gradebook.db; graded: the students, each at most once.
    Returns:
    - one HandGrades per student, in order: a hand grade is kept when its answer is unchanged, and dropped (with the
      reason) otherwise.
    """
    with contextlib.closing(sqlite3.connect(course)) as con:
        con.execute("ATTACH DATABASE ':memory:' AS shard")
        news = []
        for g in graded:  # read before the write lock: the shards are this process's own
            con.deserialize(g.shard, name="shard")  # the shard's bytes as a database, never written to a file
            news.append(_rows(con, "shard", {"assignment": contract.ASSIGNMENT, "student": g.student}))
        if all(new is None for new in news):
            return [HandGrades() for _ in graded]
        kept = []
        with con:  # one transaction: formgrader sees the old submissions or the new ones
            con.execute("BEGIN IMMEDIATE")  # the write lock before reading: no hand grade is saved unseen meanwhile
            layout = _layout(con)
            for g, new in zip(graded, news):
                kept.append(HandGrades() if new is None else _replace(con, layout, g, new))
        return kept


def _replace(con, layout, g, new) -> HandGrades:
    """Within merge_all's transaction: one student's old submission out, the shard's in, hand grades put back."""
    params = {"assignment": contract.ASSIGNMENT, "student": g.student}
    hand = {
        (nb, gid): {k: v for k, v in vars(entered).items() if v not in (None, "")}  # what was entered, only
        for (_, nb), written in _hand_grades(con, g.student).items()
        for gid, entered in written.items()
    }
    old = _rows(con, "main", params)
    if old is not None:
        _delete(con, old)
    _insert(con, layout, g.student, new, old)
    return _restore_hand_grades(con, g.student, {k: v for k, v in hand.items() if v}, g.before, g.answers)


def _delete(con, old):
    """Delete a submission's rows (nbgrader's remove_submission)."""
    notebooks = [(i,) for i, *_ in old["notebooks"].values()]
    con.executemany("DELETE FROM grade WHERE notebook_id = ?", notebooks)
    con.executemany("DELETE FROM comment WHERE notebook_id = ?", notebooks)
    con.execute("DELETE FROM submitted_notebook WHERE assignment_id = ?", (old["assignment"][0],))
    con.execute("DELETE FROM submitted_assignment WHERE id = ?", (old["assignment"][0],))


_last_tick = 0  # the last id's millisecond and counter (new_id)


def new_id() -> str:
    """A new row id: 32 hex digits, as nbgrader's uuid4 ids, but a time-ordered UUID (RFC 9562 version 7).

    A class's rows then land at the end of each id index instead of on a random page of it: a commit writes about a
    fifth fewer pages (measured: 3.6 MB a student at 1,000 students, 2.8 MB with these ids). The 12 bits after the
    millisecond count the ids made within it, so ids made here never repeat or go back; 62 random bits follow.
    """
    global _last_tick
    _last_tick = max(_last_tick + 1, time.time_ns() // 1_000_000 << 12)
    ms, count = _last_tick >> 12, _last_tick & 0xFFF
    return f"{ms:012x}7{count:03x}{0b10 << 62 | secrets.randbits(62):016x}"


def _insert(con, layout, student, new, old):
    """The rows nbgrader's add_submission makes, with the shard's values and the old rows' ids where there were
    old rows (nbgrader's defaults where the shard has no such cell). layout: _layout(con)."""
    old = old or {"assignment": (None,), "notebooks": {}, "grades": {}, "comments": {}}

    def kept_id(rows, key):
        """The id a row had before the re-grade, else a new one like nbgrader's."""
        return rows[key][0] if key in rows else new_id()

    assignment, notebooks, cells = layout
    con.execute("INSERT OR IGNORE INTO student (id) VALUES (?)", (student,))
    submitted = old["assignment"][0] or new_id()
    con.execute(
        "INSERT INTO submitted_assignment (id, assignment_id, student_id, timestamp) VALUES (?, ?, ?, ?)",
        (submitted, assignment, student, new["assignment"][1]),
    )
    by_notebook = {}
    for name, notebook in notebooks.items():
        by_notebook[name] = kept_id(old["notebooks"], name)
        flagged, penalty = new["notebooks"].get(name, (None, 0, None))[1:]
        con.execute(
            "INSERT INTO submitted_notebook (id, assignment_id, notebook_id, flagged, late_submission_penalty) "
            "VALUES (?, ?, ?, ?, ?)",
            (by_notebook[name], submitted, notebook, flagged, penalty),
        )
    rows = {"grade": [], "comment": []}
    for nb, cell, kind, cell_id in cells:
        key, where = (nb, cell, kind), (by_notebook[nb], cell_id)
        if kind in ("GradeCell", "TaskCell"):
            values = new["grades"].get(key, (None, None, None, None, 1))[1:]  # needs_manual_grade defaults to True
            rows["grade"].append((kept_id(old["grades"], key), *where, *values))
        if kind in ("SolutionCell", "TaskCell"):
            values = new["comments"].get(key, (None, None, None))[1:]
            rows["comment"].append((kept_id(old["comments"], key), *where, *values))
    for table, columns in (("grade", _SCORES), ("comment", _COMMENTS)):
        marks = ", ".join("?" * (3 + len(columns)))
        con.executemany(
            f"INSERT INTO {table} (id, notebook_id, cell_id, {', '.join(columns)}) VALUES ({marks})", rows[table]
        )


# A student's grade of a cell by its name: a grade cell's first, else a task cell's (nbgrader's find_grade), with
# the cell's type and whether the grade waits for a person; and the comment of a solution or task cell.
_GRADE = (
    """SELECT t.id, COALESCE((SELECT cell_type FROM grade_cells WHERE id = bc.id),
    (SELECT cell_type FROM task_cells WHERE id = bc.id)), t.needs_manual_grade """
    + (_CELLS % "grade").format(db="main")
    + " AND bc.name = :cell AND nb.name = :notebook AND bc.type IN ('GradeCell', 'TaskCell')"
    + " ORDER BY bc.type = 'TaskCell' LIMIT 1"
)
_COMMENT = (
    "SELECT t.id "
    + (_CELLS % "comment").format(db="main")
    + " AND bc.name = :cell AND nb.name = :notebook AND bc.type IN ('SolutionCell', 'TaskCell')"
    + " ORDER BY bc.type = 'TaskCell' LIMIT 1"
)


def _restore_hand_grades(con, student, hand, before, answers) -> HandGrades:
    """Put back each hand grade whose answer is unchanged; what was kept and what was dropped."""
    lines, kept, now = [], 0, {}
    for (notebook, grade_id), entered in sorted(hand.items()):
        what = " and ".join(f"{k} {v!r}" if k == "comment" else f"{k} {v:g}" for k, v in sorted(entered.items()))
        where = f"{student}/{notebook}/{grade_id}"
        if notebook not in now:
            now[notebook] = answers(notebook)
        old, new = before.get(notebook, {}).get(grade_id), now[notebook].get(grade_id)
        if old is None or new != old:
            why = "the notebook was not graded again" if new is None else "the answer changed"
            lines.append(f"HAND GRADE DROPPED {where}: {why}; grade it again ({what} was entered)")
            continue
        params = {"cell": grade_id, "notebook": notebook, "assignment": contract.ASSIGNMENT, "student": student}
        grade = con.execute(_GRADE, params).fetchone()
        comment = con.execute(_COMMENT, params).fetchone()
        if grade is None or ("comment" in entered and comment is None):
            lines.append(f"HAND GRADE DROPPED {where}: the cell is no longer in the gradebook ({what} was entered)")
            continue
        grade_row, cell_type, waits = grade
        if cell_type == "code" and not waits:
            lines.append(f"HAND GRADE DROPPED {where}: the cell is graded automatically now ({what} was entered)")
            continue
        if "score" in entered:
            con.execute(
                "UPDATE grade SET manual_score = ?, needs_manual_grade = 0 WHERE id = ?", (entered["score"], grade_row)
            )
        if "comment" in entered:
            con.execute("UPDATE comment SET manual_comment = ? WHERE id = ?", (entered["comment"], comment[0]))
        lines.append(f"HAND GRADE KEPT {where}: {what} (answer unchanged)")
        kept += 1
    return HandGrades(tuple(lines), kept, len(lines) - kept)


# A student's grades of one notebook in a worker's shard: (cell name, cell type, grade id, auto score, manual score)
_NOTEBOOK_GRADES = (
    "SELECT bc.name, bc.type, t.id, t.auto_score, t.manual_score "
    + (_CELLS % "grade").format(db="main")
    + " AND nb.name = :notebook AND bc.type IN ('GradeCell', 'TaskCell')"
)


@dataclass(frozen=True)
class ShardGrade:
    """One grade row of a shard as `nbgrader autograde` left it."""

    id: str
    auto_score: float | None
    manual_score: float | None


def _notebook_grades(shard, student, notebook):
    """Every grade row of `student`'s notebook in a shard, as (cell name, cell type, ShardGrade)."""
    params = {"assignment": contract.ASSIGNMENT, "student": student, "notebook": notebook}
    with contextlib.closing(sqlite3.connect(shard)) as con:
        return [(name, kind, ShardGrade(*grade)) for name, kind, *grade in con.execute(_NOTEBOOK_GRADES, params)]


def shard_grades(shard: Path | str, student: str, notebook: str) -> dict[str, ShardGrade]:
    """{cell name: ShardGrade} of `student`'s notebook in a worker's shard, each cell's grade as nbgrader's
    find_grade finds it: a grade cell's, else a task cell's. {} when the shard has no such submission."""
    found = {}
    for name, kind, grade in _notebook_grades(shard, student, notebook):
        if kind == "GradeCell" or name not in found:
            found[name] = grade
    return found


def set_shard_scores(shard: Path | str, scores: Mapping[str, float | None]) -> None:
    """Give grade rows of a worker's shard ({grade row id: score}) their automatic score: None leaves the cell to a
    person (needs_manual_grade), any other score is final, as nbgrader's autograde sets them.

    The shard is a scratch copy that the worker reads back at once: its commit need not wait for the disk."""
    with contextlib.closing(sqlite3.connect(shard)) as con:
        con.execute("PRAGMA synchronous=OFF")
        with con:
            con.executemany(
                "UPDATE grade SET auto_score = ?, needs_manual_grade = ? WHERE id = ?",
                [(score, score is None, row) for row, score in scores.items()],
            )


def zero_shard_notebook(shard: Path | str, student: str, notebook: str) -> None:
    """Give every grade of `student`'s notebook in a worker's shard 0 points, final (a notebook that could not be
    graded); nothing when the shard has no such submission."""
    set_shard_scores(shard, {grade.id: 0.0 for _, _, grade in _notebook_grades(shard, student, notebook)})
