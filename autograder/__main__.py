"""Command line: python -m autograder <command> [...]. Each command lives in its own module."""
import importlib
import sys

COMMANDS = {
    "data": ("autograder.data", "regenerate source/a3/data and images (byte-for-byte reproducible)"),
    "build": ("autograder.build", "regenerate release/ from source/ (--check: fail when stale)"),
    "grade": ("autograder.grade", "grade SUBMISSIONS --out OUT [--workers N] [--scheduler ADDRESS] [--force]"),
    "feedback": ("autograder.feedback", "re-render feedback HTML (and grades.csv) with the hand grades of OUT"),
    "formgrader": ("autograder.formgrader", "open nbgrader's formgrader on OUT to grade the written answers"),
    "report": ("autograder.report", "render the grade report notebook for OUT into HTML"),
    "demo": ("autograder.demo", "build, grade sample submissions, write feedback and the report"),
    "bench": ("autograder.bench", "grading benchmark: 1 vs 2 workers"),
    "fetch-models": ("autograder.fetch_models", "cache the real pretrained models (needs internet)"),
}


def usage():
    lines = ["usage: python -m autograder <command> [options]", "", "commands:"]
    lines += [f"  {name:<13} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"autograder: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return module.main(rest) or 0


if __name__ == "__main__":
    sys.exit(main())
