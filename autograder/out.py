"""OUT, the folder `grade` writes and every later command reads: the one place its layout is spelled out.

Each command takes OUT as `Out.at(out)` (a path or an `Out`) and names what it reads or writes by the attribute
below, never by joining names itself. An `Out` is also a path (`os.fspath`), so `open(out)`-style callers and
the subprocesses handed OUT keep working (uses `contract`).
"""

import os
from dataclasses import dataclass
from pathlib import Path

from autograder.contract import ASSIGNMENT


@dataclass(frozen=True)
class Out:
    """The OUT folder `root` and the paths of everything in it."""

    root: Path

    @classmethod
    def at(cls, out: "Out | Path | str") -> "Out":
        """`out` as an Out (given one, the same)."""
        return out if isinstance(out, Out) else cls(Path(out))

    def __fspath__(self) -> str:
        return os.fspath(self.root)

    def __str__(self) -> str:
        return str(self.root)

    # what `grade` writes for people and LMSs
    @property
    def grades(self) -> Path:
        return self.root / "grades.csv"

    @property
    def grades_by_cell(self) -> Path:
        return self.root / "grades_by_cell.csv"

    @property
    def timings(self) -> Path:
        return self.root / "timings.csv"

    @property
    def lms_ids(self) -> Path:
        """student,lms,lms_id (and the names the LMS knows): the one table of LMS ids grade, export and release read."""
        return self.root / "lms_ids.csv"

    @property
    def log(self) -> Path:
        """grading.log: every repair, failure, limit and kept or dropped hand grade."""
        return self.root / "grading.log"

    @property
    def gradebook(self) -> Path:
        return self.root / "gradebook.db"

    @property
    def feedback(self) -> Path:
        return self.root / "feedback"

    @property
    def index(self) -> Path:
        """The TAs' feedback index."""
        return self.feedback / "index.html"

    def page(self, student: str, notebook: str) -> Path:
        """A student's feedback page for one notebook."""
        return self.feedback / student / f"{notebook}.html"

    @property
    def autograded(self) -> Path:
        return self.root / "autograded"

    def autograded_notebook(self, student: str, notebook: str) -> Path:
        """The graded notebook in nbgrader's layout (what formgrader and the TAs' pages read)."""
        return self.autograded / student / ASSIGNMENT / f"{notebook}.ipynb"

    @property
    def submitted(self) -> Path:
        return self.root / "submitted"

    @property
    def source(self) -> Path:
        """The course source formgrader is pointed at."""
        return self.root / "source" / ASSIGNMENT

    @property
    def nbgrader_config(self) -> Path:
        return self.root / "nbgrader_config.py"

    @property
    def jupyter(self) -> Path:
        return self.root / ".jupyter"

    @property
    def similarity_csv(self) -> Path:
        return self.root / "similarity.csv"

    @property
    def similarity_html(self) -> Path:
        return self.root / "similarity.html"

    @property
    def report(self) -> Path:
        return self.root / "report.html"

    @property
    def item_analysis(self) -> Path:
        return self.root / "item_analysis.csv"

    @property
    def time_on_task(self) -> Path:
        return self.root / "time_on_task.csv"

    @property
    def export(self) -> Path:
        return self.root / "export"

    @property
    def release(self) -> Path:
        return self.root / "release"

    # the course term (term.py reads and writes it)
    @property
    def term(self) -> Path:
        return self.root / "term"

    @property
    def course(self) -> Path:
        return self.term / "course.toml"

    @property
    def extensions(self) -> Path:
        return self.term / "extensions.csv"

    @property
    def submission_times(self) -> Path:
        """student,submitted_at,evidence: when each student submitted and how we know."""
        return self.term / "submitted.csv"

    @property
    def lms_files(self) -> Path:
        return self.term / "lms_files.csv"

    @property
    def roster(self) -> Path:
        """The LMS's roster `release --roster` was given (its ids for students whose folders did not carry them)."""
        return self.term / "roster.csv"

    # what grading keeps for itself
    @property
    def state(self) -> Path:
        """.state/<student>.json: each student's result, what a resumed run reuses."""
        return self.root / ".state"

    @property
    def work(self) -> Path:
        return self.root / ".work"

    @property
    def cache(self) -> Path:
        return self.root / ".cache"

    @property
    def template(self) -> Path:
        """The course template the workers grade against, built once per source."""
        return self.cache / "template"

    @property
    def staging(self) -> Path:
        """Submissions as ingest read and repaired them."""
        return self.cache / "staging"

    @property
    def staged_pages(self) -> Path:
        """Pages a worker rendered, before they are recorded and moved into feedback/."""
        return self.cache / "pages"

    # grading written answers (marking/)
    @property
    def marks(self) -> Path:
        """marks.jsonl: every mark a TA made, append-only."""
        return self.root / "marks.jsonl"

    @property
    def marks_lock(self) -> Path:
        return self.root / ".marks.lock"

    @property
    def regrades(self) -> Path:
        return self.root / "regrades.jsonl"

    @property
    def suggestions(self) -> Path:
        return self.root / "suggestions.jsonl"

    @property
    def rubric_edits(self) -> Path:
        return self.root / "rubric_edits.jsonl"

    @property
    def rubric_seen(self) -> Path:
        """The rubric items as `mark` last saw them: what an edit of rubrics.toml outside the page is told from."""
        return self.root / ".rubric_seen.json"

    @property
    def moves(self) -> Path:
        """mark_groups.json: answers a TA moved to another group."""
        return self.root / "mark_groups.json"

    @property
    def embeddings(self) -> Path:
        """The MiniLM rows of answers already encoded."""
        return self.root / "mark_embeddings.npz"

    @property
    def mark_pages(self) -> Path:
        """The journal of pages a mark changed and that are not rendered yet."""
        return self.root / ".mark_pages.json"

    @property
    def mark_pages_turn(self) -> Path:
        return self.root / ".mark_pages.lock"
