"""The grading page's refresh of the pages a mark changed (marking.pages) and grades.csv, run in a process of its own
(multiprocessing spawn) at a lower priority, so a class's worth of pages never slows the TA's clicks."""

import os
from pathlib import Path

from autograder.marking import pages
from autograder.reports.feedback import rerender


def refresh(out: str, source: str) -> None:
    """Render what the journal holds (the target of the page's refresh process)."""
    try:
        os.nice(10)
    except OSError:
        pass

    def render(students, notebooks):
        rerender(Path(out), students=students, source=Path(source), notebooks=notebooks)

    pages.refresh(Path(out), render)
