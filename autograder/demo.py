"""The whole loop on the embedded defaults: python -m autograder demo [--out demo_out] [--workers N]

build the release -> write sample submissions (the reference solution, the untouched release, and one
student per realistic wrong answer in autograder/content/samples) -> grade them -> grade report -> print where
everything is and a score table.
"""

import csv
import importlib
import shutil
import time
from pathlib import Path

import nbformat

from autograder import contract, paths
from autograder.content import build
from autograder.grading import pipeline
from autograder.out import Out
from autograder.records import Status
from autograder.reports import report as report_mod

SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def _grade_id(cell):
    return contract.nbgrader_meta(cell).get("grade_id")


def strip_markers(source):
    """Solution cell source without the `### BEGIN/END SOLUTION` marker lines (content kept)."""
    return "\n".join(l for l in source.splitlines() if l.strip() not in SOLUTION_MARKERS)


def reference_submission(release_nb, source_nb):
    """What a student who wrote the reference solution submits: the release with solution cells filled in.

    Inputs:
    - release_nb, source_nb: the release and source notebooks (NotebookNode) of one part.
    Returns:
    - a copy of release_nb whose solution cells carry the source's solutions (markers removed).
    """
    answers = {_grade_id(c): strip_markers(c.source) for c in source_nb.cells if contract.is_solution_cell(c)}
    nb = nbformat.from_dict(release_nb)
    nb = nbformat.reads(nbformat.writes(nb), as_version=4)
    for cell in nb.cells:
        if contract.is_solution_cell(cell) and _grade_id(cell) in answers:
            cell.source = answers[_grade_id(cell)]
    return nb


def with_cell(nb, grade_id, source):
    """Copy of nb with the solution cell `grade_id` replaced by `source`."""
    nb = nbformat.reads(nbformat.writes(nb), as_version=4)
    hits = [c for c in nb.cells if _grade_id(c) == grade_id]
    if len(hits) != 1:
        raise KeyError(f"no single cell with grade id {grade_id!r}")
    hits[0].source = source
    return nb


def wrong_samples(notebook):
    """{grade_id: wrong solution cell source} from autograder/content/samples/<notebook>.py ({} when absent)."""
    try:
        return dict(importlib.import_module(f"autograder.content.samples.{notebook}").WRONG)
    except ModuleNotFoundError:
        return {}


def write_submissions(dest, release=paths.RELEASE, source=paths.SOURCE):
    """Write the demo's student folders into `dest`; returns {student: {notebook: description}}."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    names = build.notebooks_in(release)
    made = {}

    def put(student, notebook, nb, what):
        (dest / student).mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, dest / student / f"{notebook}.ipynb")
        made.setdefault(student, {})[notebook] = what

    for name in names:
        rel = nbformat.read(Path(release) / f"{name}.ipynb", as_version=4)
        ref = reference_submission(rel, nbformat.read(Path(source) / f"{name}.ipynb", as_version=4))
        put("reference", name, ref, "reference solution")
        put("untouched", name, rel, "release as handed out")
        for grade_id, wrong in sorted(wrong_samples(name).items()):
            put(f"wrong_{grade_id}", name, with_cell(ref, grade_id, wrong), f"reference with a wrong {grade_id}")
    return made


def score_table(out):
    """Rows of 'student' and one column per notebook (score/max, or the status when not graded) from OUT/grades.csv."""
    rows = list(csv.DictReader(open(Out.at(out).grades)))
    notebooks = list(dict.fromkeys(r["notebook"] for r in rows))
    table = {}
    for r in rows:
        cell = f"{r['score']}/{r['max_score']}"
        if r["status"] != Status.GRADED:
            cell = r["status"] if r["status"] == Status.MISSING else f"{cell} ({r['status'][:40]})"
        table.setdefault(r["student"], {})[r["notebook"]] = cell
    width = max([len(s) for s in table] + [7])
    lines = [f"{'student':<{width}}  " + "  ".join(f"{n:<12}" for n in notebooks)]
    for student, cells in table.items():
        lines.append(f"{student:<{width}}  " + "  ".join(f"{cells.get(n, ''):<12}" for n in notebooks))
    return lines


def main(*, out: Path = paths.ROOT / "demo_out", workers: int | None = None) -> int:
    """`demo`: build, write the sample submissions into OUT, grade them, report, print where it all is."""
    demo_dir = Path(out)
    start = time.perf_counter()
    print("1/4 building release/a3 from source/a3 ...", flush=True)
    names = build.build()
    print(f"    built {', '.join(names)}")
    if demo_dir.exists():
        shutil.rmtree(demo_dir)
    subs, out = demo_dir / "submissions", demo_dir / "out"
    made = write_submissions(subs)
    print(f"2/4 wrote {sum(len(v) for v in made.values())} notebooks for {len(made)} sample students into {subs}")
    print(f"3/4 grading into {out} ...", flush=True)
    summary = pipeline.grade(subs, out, workers=workers)
    pipeline.print_summary(summary, out)
    print("4/4 grade report ...", flush=True)
    report = out / "report.html" if report_mod.main(out=out) == 0 else None
    print()
    print("\n".join(score_table(out)))
    print()
    print(f"release:     {paths.RELEASE}")
    print(f"submissions: {subs}")
    print(f"grades:      {out / 'grades.csv'} and {out / 'grades_by_cell.csv'}")
    print(f"feedback:    {out / 'feedback'}/<student>/<notebook>.html")
    print(f"gradebook:   {out / 'gradebook.db'} (nbgrader; TAs grade written answers with formgrader)")
    print(f"log:         {out / 'grading.log'}")
    if report:
        print(f"report:      {report}")
    print(f"demo finished in {time.perf_counter() - start:.0f} s")
    return 0
