"""nbgrader configuration for instructors running nbgrader directly in this repository.

The course commands (`python -m autograder build|grade|feedback`) do not read this file: they run
nbgrader in throw-away course folders with the same settings (autograder/content/build.py NBGRADER_SETTINGS)
plus a sandboxed kernel. Use this file for e.g. `nbgrader generate_assignment a3` or formgrader.
"""

from pathlib import Path

c = get_config()  # noqa: F821

c.CourseDirectory.root = str(Path(__file__).resolve().parent)
c.CourseDirectory.course_id = ""
c.CourseDirectory.db_url = f"sqlite:///{Path(__file__).resolve().parent / 'gradebook.db'}"  # git-ignored

# same as autograder.content.build.NBGRADER_SETTINGS
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*"]

# grading: training cells need more than nbgrader's 30 s default; quick mode is on under nbgrader
c.Execute.timeout = 60
