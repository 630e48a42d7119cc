"""python -m autograder formgrader OUT [--port N] [--no-browser]: nbgrader's formgrader on a graded OUT.

TAs grade the written answers (`written_*` cells) there. The command makes OUT a course folder nbgrader
understands (an empty OUT/source/a3, the folder formgrader lists the assignment by, and an nbgrader_config.py
pointing at OUT/gradebook.db), then starts a Jupyter server with the formgrader extension only (no JupyterLab,
no terminals, no other extension), rooted at OUT, with no network access needed. No solution or hidden test is copied
into OUT: formgrader shows the reader-safe notebooks under OUT/autograded and reads the gradebook. Scores and
comments go into OUT/gradebook.db; `python -m autograder feedback OUT` then puts them into grades.csv, the
exports and the feedback pages.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from autograder import contract
from autograder.content.build import NBGRADER_SETTINGS, config_text
from autograder.out import Out
from autograder.records import not_graded_yet

EXTENSION = "nbgrader.server_extensions.formgrader"
SOURCE_NOTE = (
    "Empty on purpose: nbgrader's formgrader lists an assignment by its folder here. The solutions and hidden\n"
    "tests stay in the course repository (source/a3); formgrader needs only OUT/autograded and gradebook.db.\n"
)


def other_extensions():
    """Every Jupyter server extension the environment enables (JupyterLab, terminals, LSP, notebook, nbgrader's
    student-side ones, ...) but formgrader: the server is told to load none of them."""
    from jupyter_core.paths import jupyter_config_path
    from jupyter_server.extension.config import ExtensionConfigManager

    found = ExtensionConfigManager(read_config_path=jupyter_config_path()).get_jpserver_extensions()
    return sorted(name for name in found if name != EXTENSION)


def prepare(out):
    """Make OUT a course folder formgrader lists the assignment and submissions of.

    Returns:
    - (the environment to run formgrader with, lines for the console saying what was written into OUT)
    """
    out = Path(out).resolve()
    notes = []
    course_source = Out.at(out).source
    copied = sorted(course_source.glob("*.ipynb")) if course_source.is_dir() else []
    if copied:  # an earlier version of the kit copied the instructor notebooks here
        notes.append(
            f"formgrader: removed {len(copied)} instructor notebook(s) with solutions and hidden tests from "
            f"{course_source} (formgrader does not need them)"
        )
        shutil.rmtree(course_source)
    course_source.mkdir(parents=True, exist_ok=True)
    (course_source / "README.txt").write_text(SOURCE_NOTE)
    # formgrader counts a student's submission by its folder under submitted/; the grader keeps the graded,
    # reader-safe notebooks under autograded/, which is what formgrader shows: mirror those
    mirrored = 0
    for graded in sorted(Out.at(out).autograded.glob(f"*/{contract.ASSIGNMENT}")):
        submitted = Out.at(out).submitted / graded.parent.name / contract.ASSIGNMENT
        if submitted.exists():
            shutil.rmtree(submitted)
        shutil.copytree(graded, submitted)
        mirrored += 1
    notes.append(
        f"formgrader: wrote into {out}: nbgrader_config.py, .jupyter/ (server settings), an empty "
        f"source/{contract.ASSIGNMENT}/ and submitted/ ({mirrored} student(s), copies of the reader-safe "
        f"notebooks in autograded/); no solutions or hidden tests"
    )
    settings = dict(
        NBGRADER_SETTINGS,
        **{
            "CourseDirectory.root": str(out),
            "CourseDirectory.course_id": "",
            "CourseDirectory.db_url": f"sqlite:///{out / 'gradebook.db'}",
        },
    )
    Out.at(out).nbgrader_config.write_text(config_text(settings))
    config_dir = Out.at(out).jupyter
    config_dir.mkdir(exist_ok=True)
    server = {
        "ServerApp": {
            # formgrader alone: every other extension the environment enables is switched off by name (an
            # extension named here is not merged in from the environment's jupyter_server_config.d)
            "jpserver_extensions": {EXTENSION: True, **{name: False for name in other_extensions()}},
            "terminals_enabled": False,
            "root_dir": str(out),
            "default_url": "/formgrader",
            "extra_static_paths": [str(config_dir / "static")],
        },
    }
    (config_dir / "jupyter_server_config.json").write_text(json.dumps(server, indent=1))
    _offline_mathjax(config_dir)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config_dir), JUPYTER_PATH=str(config_dir / "data"))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env, notes


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
    error = not_graded_yet(Out.at(out).gradebook, "formgrader")
    if error:
        print(error, file=sys.stderr)
        return 1
    env, notes = prepare(out)
    for line in notes:
        print(line)
    print(
        f"formgrader on {out.resolve()}: open the printed URL, then Manual Grading -> a3; after grading "
        f"run `python -m autograder feedback {out}` to update grades.csv, the exports and feedback"
    )
    return subprocess.call(command(out, port, browser), cwd=out, env=env)
