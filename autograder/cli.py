"""Command line: python -m autograder <command> [options]. Parses arguments only; each command's engine is
the keyword-only `main` of its module, which returns the exit status."""

import argparse
import importlib
import sys
from pathlib import Path

from autograder import lms, paths

DESCRIPTION = "The A3 course kit: build, grade, give feedback, release. `python -m autograder <command> --help` gives a command's options."
# command -> (module whose main(**options) runs it, one-line help)
COMMANDS = {
    "data": ("autograder.content.data", "regenerate source/a3/data and images (byte-for-byte reproducible)"),
    "build": ("autograder.content.build", "regenerate release/ from source/ (--check: fail when stale)"),
    "grade": (
        "autograder.grading.pipeline",
        "grade SUBMISSIONS --out OUT [--workers N] [--scheduler ADDRESS] [--force] [--course FILE] "
        "[--extensions FILE] [--submitted FILE] [--worksheet FILE]",
    ),
    "check": (
        "autograder.grading.check",
        "check FILE.ipynb [FILE ...] [--max-mb N]: before submitting, what a grader would meet in each notebook "
        "(offline; exit 1 with one line per problem, 0 when ready)",
    ),
    "feedback": ("autograder.reports.feedback", "re-render feedback HTML (and grades.csv) with the hand grades of OUT"),
    "formgrader": ("autograder.reports.formgrader", "open nbgrader's formgrader on OUT to grade the written answers"),
    "mark": (
        "autograder.marking.server",
        "mark OUT [--status | --export FILE | --import FILE | --groups NB/ID [-o FILE] | --suggest NB/ID [-o FILE] | "
        "--rubric NB/ID] [--grader NAME]: "
        "written answers graded by rubric (source/a3/rubrics.toml); alone, it serves the grading page",
    ),
    "report": ("autograder.reports.report", "render the grade report notebook for OUT into HTML"),
    "export": ("autograder.reports.export", "write the nbgrader and LMS grade exports of OUT"),
    "release": (
        "autograder.reports.release",
        f"release OUT --lms {'|'.join(lms.REGISTRY)} [--partial] [{' | '.join(f'{lms.option(s)} N' for s in lms.REGISTRY.values())}] "
        "[--roster FILE]: feedback and grades as the LMS imports them (OUT/release)",
    ),
    "similarity": (
        "autograder.reports.similarity",
        "similarity OUT [--scheduler ADDRESS]: students' cells compared pairwise, for TAs (similarity.csv, .html)",
    ),
    "demo": ("autograder.demo", "build, grade sample submissions, write feedback and the report"),
    "bench": (
        "autograder.bench",
        "grading benchmark: 1 vs 2 workers (--similarity, --term, --mark, --pipeline: those steps on a synthetic class)",
    ),
    "budget": (
        "autograder.budget",
        "budget [--notebooks NB ...] [--quick] [--out FILE.csv] [--timeout S]: run each released notebook as a student "
        "does (reference solutions, full mode unless --quick) and print each cell's time against a 15-minute budget",
    ),
    "fetch-models": ("autograder.content.fetch_models", "cache the real pretrained models (needs internet)"),
}


def _options(name, parser):
    """Add the options of command `name` to its parser."""
    add = parser.add_argument
    if name == "data":
        add("--check", action="store_true", help="fail when committed files differ")
    elif name == "build":
        add("--check", action="store_true", help="exit non-zero when release/ is stale")
        add("--source", type=Path, default=paths.SOURCE, help=argparse.SUPPRESS)
        add("--release", type=Path, default=paths.RELEASE, help=argparse.SUPPRESS)
    elif name == "grade":
        add("submissions", type=Path, help="folder of student folders, or an LMS zip")
        add("--out", type=Path, required=True, help="output folder (grades, feedback, log)")
        add("--workers", type=int, default=None, help="local Dask worker processes (default: all cores)")
        add("--scheduler", dest="scheduler_address", default=None, help="address of an existing Dask scheduler")
        add("--force", action="store_true", help="regrade students already graded in OUT")
        add("--source", type=Path, default=paths.SOURCE, help=argparse.SUPPRESS)
        add("--keep-work", action="store_true", help="keep every student's workspace in OUT/.work")
        _term_options(add)
        add("--submitted", type=Path, help="CSV student,submitted_at (ISO 8601 with offset): submission times")
        add("--worksheet", type=Path, help="Moodle grading worksheet: submission times (needs assignment.timezone)")
    elif name == "check":
        add("files", type=Path, nargs="+", metavar="FILE", help="a notebook to check (.ipynb)")
        add(
            "--max-mb", type=float, default=2.0, help="the largest file the LMS takes, MB (default 2: a default Moodle)"
        )
        add("--release", type=Path, default=paths.RELEASE, help=argparse.SUPPRESS)
    elif name == "feedback":
        add("out", type=Path, help="the OUT folder of a grading run")
        _term_options(add)
    elif name == "formgrader":
        add("out", type=Path, help="a graded OUT folder")
        add("--port", type=int, default=8890, help="port on 127.0.0.1 (default 8890)")
        add("--no-browser", dest="browser", action="store_false", help="do not open a browser")
    elif name == "mark":
        add("out", type=Path, help="a graded OUT folder")
        add("--export", type=Path, help="write student,notebook,grade_id,items,adjustment,comment for every answer")
        add("--import", dest="import_csv", type=Path, help="read marks in the --export columns (all checked first)")
        add("--groups", metavar="NB/GRADE_ID", help="write student,group,size: that question's answers grouped")
        add(
            "--suggest",
            metavar="NB/GRADE_ID",
            help="write student,items,confidence,like: rubric items suggested for that question's answers still to "
            "grade, learned from its marks (a suggestion is never a mark)",
        )
        add("-o", "--output", type=Path, help="file for --groups or --suggest (default: standard output)")
        add("--rubric", metavar="NB/GRADE_ID", help="print item,points,text of that question's rubric")
        add("--grader", help="who marks (default: the login name), kept in OUT/marks.jsonl")
        add("--encoder", choices=["minilm", "tfidf"], default="minilm", help="clusters by meaning (default minilm)")
        add(
            "--double",
            metavar="SHARE",
            help="with --export or --second: a sample (e.g. 10%%) of each question for a second grader",
        )
        add(
            "--second",
            action="store_true",
            help="second marks, for agreement only (not the grade): with --import, or the page with --double",
        )
        add("--regrades", type=Path, help="queue regrade requests: CSV student,notebook,grade_id,reason")
        add("--status", action="store_true", help="per question: graded, blank, to grade; agreement; open regrades")
        add("--serve", action="store_true", help="serve the page after --import, --export or --regrades too")
        add("--port", type=int, default=8891, help="port of the grading page (default 8891; taken: the next free one)")
        add(
            "--allow-host",
            action="append",
            default=[],
            metavar="NAME",
            help="a Host name the page answers besides 127.0.0.1, localhost and [::1] (e.g. behind an SSH tunnel)",
        )
        add("--no-browser", dest="browser", action="store_false", help="serve the page without opening a browser")
        add("--source", type=Path, default=paths.SOURCE, help=argparse.SUPPRESS)
    elif name == "report":
        add("out", type=Path, help="a graded OUT folder")
        add("--output", type=Path, help="HTML file to write (default OUT/report.html)")
        add("--show-code", action="store_true", help="include the notebook's code cells")
        _term_options(add)
    elif name == "export":
        add("out", type=Path, help="a graded OUT folder (holds grades.csv)")
        add("--lms-applies-late-policy", action="store_true", help="LMS exports carry raw scores (the LMS deducts)")
        _term_options(add)
    elif name == "release":
        add("out", type=Path, help="a graded OUT folder")
        add("--lms", required=True, choices=list(lms.REGISTRY), help="the LMS to upload to")
        add("--partial", action="store_true", help="release the final students new or changed since their last release")
        add("--lms-applies-late-policy", action="store_true", help="raw scores: the LMS deducts its own penalty")
        for system in lms.REGISTRY.values():
            add(lms.option(system), type=system.setting_type, help=system.setting_help)
        add("--roster", type=Path, help="CSV student,lms_id or the LMS's worksheet/gradebook export: LMS ids")
        _term_options(add)
    elif name == "similarity":
        add("out", type=Path, help="a graded OUT folder (holds autograded/)")
        add("--scheduler", dest="scheduler_address", default=None, help="compare cells on this Dask scheduler")
    elif name == "demo":
        add("--out", type=Path, default=paths.ROOT / "demo_out", help="demo folder (emptied)")
        add("--workers", type=int, default=None, help="grading workers (default: all cores)")
    elif name == "bench":
        add("--students", type=int, default=6, help="synthetic students to grade (default 6)")
        add("--workers", type=int, nargs="+", default=[1, 2], help="worker counts (default 1 2)")
        add("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
        add("--notebooks", nargs="+", help="notebooks the students submit (default: all the course's; also --pipeline)")
        add("--similarity", action="store_true", help="time the similarity report instead (try --students 500)")
        add("--term", action="store_true", help="time late penalties and release instead (try --students 500)")
        add("--mark", action="store_true", help="time grading written answers by question instead (try --students 500)")
        add("--pipeline", action="store_true", help="time the pipeline's own work, kernels replayed (--students 500)")
        add("--log-lines", type=int, default=0, help="with --mark: a log of this many marks first (a term's: 200000)")
    elif name == "budget":
        add("--notebooks", nargs="+", help="notebooks to run (default: every released one, in course order)")
        add("--quick", action="store_true", help="quick mode (A3_QUICK=1), for a fast check; default: full mode")
        add("--out", type=Path, help="CSV notebook,cell,label,seconds,device: every code cell's time")
        add("--timeout", type=int, default=None, help="a cell's time limit in seconds (default: none)")
        add("--release", type=Path, default=paths.RELEASE, help=argparse.SUPPRESS)
        add("--source", type=Path, default=paths.SOURCE, help=argparse.SUPPRESS)
    elif name == "fetch-models":
        add("--cache", default=None, help="hub cache folder (default: $A3_MODEL_CACHE, else the Hugging Face default)")
        add("--check", action="store_true", help="only report what is cached; exit 1 if incomplete")


def _term_options(add):
    """--course and --extensions: kept in OUT, so later commands on OUT agree without them."""
    add("--course", type=Path, help="course file (due date, late policy; default: OUT's, else course.toml)")
    add("--extensions", type=Path, help="CSV student,due (ISO 8601 with offset): extended due dates (private)")


def parser():
    """The whole command line: one sub-command per entry of COMMANDS."""
    top = argparse.ArgumentParser(prog="python -m autograder", description=DESCRIPTION)
    subs = top.add_subparsers(dest="command", metavar="<command>", title="commands")
    for name, (_, help_) in COMMANDS.items():
        _options(name, subs.add_parser(name, help=help_, description=help_))
    return top


def main(argv=None):
    """Parse argv and run the command; returns its exit status (2 for a usage error)."""
    argv = sys.argv[1:] if argv is None else argv
    top = parser()
    if not argv:
        top.print_help()
        return 0
    try:
        args = top.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage error (or the help)
        return exc.code
    options = vars(args)
    module = importlib.import_module(COMMANDS[options.pop("command")][0])
    return module.main(**options) or 0
