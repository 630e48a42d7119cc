"""python -m autograder.marking.refresh OUT SOURCE: render the pages a grading page noted (marking.pages), and
grades.csv, in a process of the page's own; prints nothing unless something failed."""

import sys
from pathlib import Path

from autograder.marking import pages
from autograder.reports.feedback import rerender


def main(out: Path, source: Path) -> int:
    def render(students, notebooks):
        rerender(out, students=students, source=source, notebooks=notebooks)

    pages.refresh(out, render)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
