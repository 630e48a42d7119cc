"""python -m autograder formgrader OUT [--port N] [--no-browser]: nbgrader's formgrader on a graded OUT.

TAs grade the written answers (`written_*` cells) there. The command makes OUT a course folder nbgrader
understands (the source notebooks under OUT/source/a3 and an nbgrader_config.py pointing at
OUT/gradebook.db), then starts a Jupyter server with only the formgrader extension, rooted at OUT, with
no network access needed. Scores and comments go into OUT/gradebook.db; `python -m autograder feedback
OUT` then puts them into grades.csv, the exports and the feedback pages.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from autograder import contract, paths
from autograder.content.build import NBGRADER_SETTINGS, config_text
from autograder.records import not_graded_yet

EXTENSION = "nbgrader.server_extensions.formgrader"


def prepare(out, source=paths.SOURCE):
    """Make OUT a course folder formgrader lists the assignment and submissions of; returns the environment to
    run formgrader with."""
    out = Path(out).resolve()
    course_source = out / "source" / contract.ASSIGNMENT
    if course_source.exists():
        shutil.rmtree(course_source)
    course_source.mkdir(parents=True)
    for notebook in sorted(Path(source).glob("*.ipynb")):
        shutil.copy2(notebook, course_source / notebook.name)
    # formgrader counts a student's submission by its folder under submitted/; the grader keeps the graded,
    # reader-safe notebooks under autograded/, which is what formgrader shows: mirror those
    for graded in sorted((out / "autograded").glob(f"*/{contract.ASSIGNMENT}")):
        submitted = out / "submitted" / graded.parent.name / contract.ASSIGNMENT
        if submitted.exists():
            shutil.rmtree(submitted)
        shutil.copytree(graded, submitted)
    settings = dict(
        NBGRADER_SETTINGS,
        **{
            "CourseDirectory.root": str(out),
            "CourseDirectory.course_id": "",
            "CourseDirectory.db_url": f"sqlite:///{out / 'gradebook.db'}",
        },
    )
    (out / "nbgrader_config.py").write_text(config_text(settings))
    config_dir = out / ".jupyter"
    config_dir.mkdir(exist_ok=True)
    server = {
        "ServerApp": {
            "jpserver_extensions": {EXTENSION: True},
            "root_dir": str(out),
            "default_url": "/formgrader",
            "extra_static_paths": [str(config_dir / "static")],
        }
    }
    (config_dir / "jupyter_server_config.json").write_text(json.dumps(server, indent=1))
    _offline_mathjax(config_dir)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config_dir), JUPYTER_PATH=str(config_dir / "data"))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


# formgrader's grading page loads MathJax 2 from a CDN and its own script calls MathJax.Hub unguarded, so
# offline the page stops with "MathJax is not defined". The kit serves this stand-in instead: the grading
# page works, and formulas show as their TeX source.
MATHJAX_STANDIN = """window.MathJax = {loaded: true, Hub: {Config: function () {}, Queue: function () {},
    Typeset: function () {}, Startup: {signal: {Interest: function (f) { setTimeout(function () { f("End"); }, 0); }}}}};
"""
MATHJAX_MACRO = """{%- macro mathjax(url="") -%}
<script src="/static/a3-mathjax-offline.js"></script>
{%- endmacro %}
"""


def _offline_mathjax(config_dir):
    """The MathJax stand-in and an nbconvert macro that loads it (found first on JUPYTER_PATH)."""
    (config_dir / "static").mkdir(exist_ok=True)
    (config_dir / "static" / "a3-mathjax-offline.js").write_text(MATHJAX_STANDIN)
    macro = config_dir / "data" / "nbconvert" / "templates" / "base" / "mathjax.html.j2"
    macro.parent.mkdir(parents=True, exist_ok=True)
    macro.write_text(MATHJAX_MACRO)


def command(out, port=8890, browser=True, token=None):
    """The jupyter server command line that serves formgrader on OUT (run it with prepare()'s environment)."""
    argv = [
        sys.executable,
        "-m",
        "jupyter_server",
        f"--port={port}",
        "--ip=127.0.0.1",
        f"--ServerApp.open_browser={browser}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers and CI often run as root
        argv.append("--ServerApp.allow_root=True")
    if token is not None:
        argv.append(f"--IdentityProvider.token={token}")
    return argv


def main(*, out: Path, port: int = 8890, browser: bool = True) -> int:
    """`formgrader`: serve nbgrader's formgrader on OUT until interrupted. Returns its exit status."""
    out = Path(out)
    error = not_graded_yet(out, "gradebook.db", "formgrader")
    if error:
        print(error, file=sys.stderr)
        return 1
    env = prepare(out)
    print(
        f"formgrader on {out.resolve()}: open the printed URL, then Manual Grading -> a3; after grading "
        f"run `python -m autograder feedback {out}` to update grades.csv, the exports and feedback"
    )
    return subprocess.call(command(out, port, browser), cwd=out, env=env)


if __name__ == "__main__":
    sys.exit(main())
