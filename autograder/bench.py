"""Grading benchmark: `python -m autograder bench [--students N] [--workers 1 2] [--keep DIR] [--notebooks nmt bert clip]`.

Builds N synthetic students (a mix of reference, wrong and damaged submissions) from the release
and source notebooks, grades them with `python -m autograder grade` once per worker count, and
prints seconds per student, speed-up, core-seconds per student (the CPU time of the grading process and
every process under it), busy cores and peak memory per worker, then a projection for a whole course
and where grading time goes. Each grading run is a fresh process, so its memory and start-up are
measured as a user sees them.

`bench --term --students 500` times what the course term adds: the late computation when grades.csv is
written, and `release --lms moodle`, on a synthetic graded OUT (no grading).

`bench --mark --students 500` times grading written answers by question (marking.server) on a synthetic
graded OUT whose answers vary as a class's do (blank, copied, with a typo, paraphrased, other): grouping one
question, its page, a group action, the refresh of grades.csv and the pages after it, and an item edit.

`bench --pipeline --students 500` times the pipeline's own work per student with the notebooks' execution replaced
by one recorded result (a real grading of the reference submission, under each student's name): ingest, records,
the gradebook merge, the term, pages, CSVs, exports and similarity, with peak memory.

`bench --similarity --students 500` times the similarity report instead (reports.similarity) on a synthetic
class written straight into OUT/autograded (no grading): seconds, peak memory, planted copies found, and whether
a rerun writes the same CSV bytes.

Core-seconds are what scales: a course of S students needs about S x core-seconds per student of CPU,
whatever the number of workers, so on N fully used cores it takes at least that divided by N.
"""

import csv
import dataclasses
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from autograder import contract, envvars, lms, paths
from autograder.content import build
from autograder.demo import reference_submission, with_cell, wrong_samples
from autograder.files import write_staged
from autograder.grading import worker
from autograder.out import Out

KINDS = ("reference", "wrong", "damaged")


# --- synthetic students -------------------------------------------------------------------------


def in_course_order(names):
    """Notebook names in course order (nmt, bert, clip), any others after them alphabetically."""
    names = set(names)
    return [nb for nb in contract.NOTEBOOKS if nb in names] + sorted(names - set(contract.NOTEBOOKS))


def damage(nb):
    """What a Colab download does to a notebook: Colab metadata, nbformat 4.4 without cell ids."""
    nb.metadata["colab"] = {"provenance": [], "name": "copy of the notebook"}
    nb.metadata["accelerator"] = "GPU"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.nbformat_minor = 4
    for i, cell in enumerate(nb.cells):
        cell.pop("id", None)
        cell.metadata["id"] = f"colab{i:04d}"
    return nb


def build_students(dest, n, release, source, wrong=None, notebooks=None):
    """Write n students into dest/<student>/ and return [(student, kind)].

    Inputs:
    - dest: folder to create (a SUBMISSIONS folder for `grade`).
    - n: number of students; kinds cycle reference, wrong, damaged.
    - release, source: folders holding the release and source notebooks.
    - wrong: {notebook: {grade_id: cell source}} (default: autograder.content.samples, via autograder.demo).
    - notebooks: the notebooks students submit (default: every one in both folders); the others count as missing.
    Returns:
    - list of (student, kind). A wrong student has one wrong cell per notebook (rotating through the
      samples); a damaged one has Colab names and metadata for its first notebook, the release copy
      of its second (nothing solved) and no third notebook.
    """
    dest = Path(dest)
    names = in_course_order(p.stem for p in Path(release).glob("*.ipynb") if (Path(source) / p.name).exists())
    if notebooks is not None:
        unknown = sorted(set(notebooks) - set(names))
        if unknown:
            raise ValueError(f"no notebook {', '.join(unknown)} in both {release} and {source}")
        names = [nb for nb in names if nb in notebooks]
    if not names:
        raise FileNotFoundError(f"no notebook in both {release} and {source}")
    wrong = {nb: wrong_samples(nb) for nb in names} if wrong is None else wrong
    release_nbs = {nb: nbformat.read(Path(release) / f"{nb}.ipynb", as_version=4) for nb in names}
    reference = {
        nb: reference_submission(release_nbs[nb], nbformat.read(Path(source) / f"{nb}.ipynb", as_version=4))
        for nb in names
    }
    students = []
    for i in range(n):
        student, kind = f"student{i + 1:03d}", KINDS[i % len(KINDS)]
        folder = dest / student
        folder.mkdir(parents=True, exist_ok=True)
        for j, nb_name in enumerate(names):
            nb, filename = nbformat.from_dict(json.loads(json.dumps(reference[nb_name]))), f"{nb_name}.ipynb"
            samples = sorted(wrong.get(nb_name, {}).items())
            if kind == "wrong" and samples:
                nb = with_cell(nb, *samples[(i // len(KINDS)) % len(samples)])
            if kind == "damaged":
                if j == 2:
                    continue  # never submitted
                if j == 1:
                    nb = release_nbs[nb_name]  # downloaded and submitted untouched
                else:
                    nb, filename = damage(nb), f"Copy of {nb_name}.ipynb"
            (folder / filename).write_text(nbformat.writes(nb))
        students.append((student, kind))
    return students


# --- term benchmark -------------------------------------------------------------------
def term_class(out, n, seed=0):
    """A synthetic graded OUT of n students (no grading): recorded states, feedback pages, LMS ids, and a course file
    with submission times for everyone (a third late) and extensions for a tenth. Written answers are blank (0 by
    themselves), so no cell waits for a person and every student can be released."""
    from autograder.records import CellResult, NotebookResult, StudentResult

    rng = random.Random(seed)
    term_dir = Out.at(out).term
    term_dir.mkdir(parents=True, exist_ok=True)
    (term_dir / "course.toml").write_text(
        '[assignment]\ndue = 2023-03-31T23:59:00-04:00\ngrace_minutes = 10\n[late]\npolicy = "per_day"\n'
        "percent = 10\nmax_days = 5\n"
    )
    submitted, ext, lms_files = (
        ["student,submitted_at,evidence"],
        ["student,due"],
        ["student,lms,lms_user_id,lms_file_id,lms_name"],
    )
    for i in range(n):
        student = f"Student {i:04d}"
        notebooks = {}
        for nb in contract.NOTEBOOKS:
            cells = [
                CellResult(g, float(rng.choice([0, p])), float(p), "passed") for g, p in contract.GRADED[nb].items()
            ]
            result = NotebookResult.graded(nb, cells, sum(contract.GRADED[nb].values()))
            result.manual, result.blank = dict(contract.WRITTEN[nb]), list(contract.WRITTEN[nb])
            notebooks[nb] = result
            page = Out.at(out).page(student, nb)
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(f"<html><body>{nb} feedback for {student}</body></html>" + "x" * 20_000)
        state = StudentResult(student, notebooks=notebooks, submission={"submitted_as": student})
        Out.at(out).state.mkdir(exist_ok=True)
        (Out.at(out).state / f"{student}.json").write_text(json.dumps(state.to_state()))
        late = rng.random() < 1 / 3
        submitted.append(f"{student},2023-04-0{rng.randint(1, 6) if late else 1}T0{rng.randint(0, 3)}:00:00Z,bench")
        if i % 10 == 0:
            ext.append(f"{student},2023-04-03T23:59:00-04:00")
        lms_files.append(f"{student},moodle,{1000 + i},,{student}")
    (term_dir / "submitted.csv").write_text("\n".join(submitted) + "\n")
    (term_dir / "extensions.csv").write_text("\n".join(ext) + "\n")
    (term_dir / "lms_files.csv").write_text("\n".join(lms_files) + "\n")


def term_bench(students):
    """`bench --term`: what the late computation and `release` add for `students` students (seconds)."""
    from autograder.records import Results
    from autograder.reports import release

    with tempfile.TemporaryDirectory(prefix="a3-bench-term-") as tmp:
        out = Path(tmp) / "out"
        t0 = time.perf_counter()
        term_class(out, students)
        print(f"bench --term: {students} synthetic students written in {time.perf_counter() - t0:.1f} s")
        results = Results(out)
        times = {}
        for label in ("without it", "with the course file"):
            course = Out.at(out).course
            off = out / "course.toml.off"
            shutil.move(*((course, off) if label == "without it" else (off, course)))
            t0 = time.perf_counter()
            results.write_csvs()
            times[label] = time.perf_counter() - t0
        t0 = time.perf_counter()
        got = release.release(out, "moodle", setting=100)
        release_seconds = time.perf_counter() - t0
        size = (Out.at(out).release / "moodle_feedback.zip").stat().st_size / 2**20
    late = times["with the course file"] - times["without it"]
    print(
        f"grades.csv: {times['with the course file']:.2f} s with lateness, {times['without it']:.2f} s without "
        f"(late computation adds {late:.2f} s)\nrelease --lms moodle: {release_seconds:.2f} s for "
        f"{len(got['released'])} students ({size:.1f} MiB zip)\ntotal added: {late + release_seconds:.2f} s "
        "(target: <= 5 s)"
    )
    return 0


# --- similarity benchmark ------------------------------------------------------------------------


def _random_expr(rng, depth=0):
    """A random Python expression (its token shape differs from student to student)."""
    if depth >= 2 or rng.random() < 0.3:
        return rng.choice(["x", "y", "z", "1.5", "2", "n", "h.shape[0]", "v.T", "w[0]", "len(xs)"])
    kind = rng.randrange(4)
    if kind == 0:
        return f"({_random_expr(rng, depth + 1)} {rng.choice('+-*/')} {_random_expr(rng, depth + 1)})"
    if kind == 1:
        return f"{rng.choice(['abs', 'max', 'min', 'float', 'np.sum', 'torch.mean'])}({_random_expr(rng, depth + 1)})"
    if kind == 2:
        return f"[{_random_expr(rng, depth + 1)} for _i in range({_random_expr(rng, depth + 1)})]"
    return f"{_random_expr(rng, depth + 1)}[{rng.choice(['0', '-1', ':, 0', '1:'])}]"


_STATEMENT = re.compile(r"^([ \t]+)(return\b|[A-Za-z_]\w* = )")


def vary_code(source, rng):
    """A student's own version of a solution: random statements of their own inserted before some statements
    (at least one where the cell has an indented statement)."""
    lines, out = source.split("\n"), []
    spots = [i for i, line in enumerate(lines) if _STATEMENT.match(line)]
    chosen = {i for i in spots if rng.random() < 0.5} | ({rng.choice(spots)} if spots else set())
    for i, line in enumerate(lines):
        if i in chosen:
            out.append(f"{_STATEMENT.match(line).group(1)}tmp{rng.randrange(99)} = {_random_expr(rng)}")
        out.append(line)
    return "\n".join(out)


def vary_text(rng, words=60):
    """A written answer of random pseudo-words in sentences (each student's own)."""
    syllables = ["ka", "lo", "mi", "ten", "sor", "va", "pre", "dun", "el", "qui", "ra", "bo"]
    sentence, out = [], []
    for _ in range(words):
        sentence.append("".join(rng.choice(syllables) for _ in range(rng.randrange(1, 4))))
        if len(sentence) > rng.randrange(6, 14):
            out.append(" ".join(sentence).capitalize() + ".")
            sentence = []
    return " ".join(out + [" ".join(sentence)])


def similarity_class(out, n, release, source, copy_share=0.03, wrong_share=0.1, seed=0):
    """OUT/autograded for `n` synthetic students; returns the pairs that share a copied notebook {(a, b)}, a < b.

    Every student writes each graded cell as the reference (or, `wrong_share` of the time, the sample wrong
    answer) with random statements of their own inserted (10% leave a cell as released), written answers of
    their own, and a stream output of their own per provided cell; `copy_share` of the students copy another
    student's notebooks whole, with a renamed variable.
    """
    rng = random.Random(seed)
    names = in_course_order(p.stem for p in Path(release).glob("*.ipynb") if (Path(source) / p.name).exists())
    rel_dir = Out.at(out).template / "release"
    rel_dir.mkdir(parents=True, exist_ok=True)
    base = {}
    for nb in names:
        shutil.copy(Path(release) / f"{nb}.ipynb", rel_dir / f"{nb}.ipynb")
        rel = nbformat.read(Path(release) / f"{nb}.ipynb", as_version=4)
        base[nb] = (rel, reference_submission(rel, nbformat.read(Path(source) / f"{nb}.ipynb", as_version=4)))
    students = [f"student{i:04d}" for i in range(n)]
    copies = {}
    for i, student in enumerate(students):
        if i and rng.random() < copy_share:
            copies[student] = rng.choice(students[:i])
    made = {}
    for student in students:
        for nb in names:
            if student in copies:
                text = made[copies[student], nb].replace("tmp", "scratch")
            else:
                rel, ref = base[nb]
                wrong = wrong_samples(nb)
                cells = []
                for r_cell, s_cell in zip(rel.cells, ref.cells):
                    cell = dict(s_cell, outputs=[]) if s_cell.cell_type == "code" else dict(s_cell)
                    gid = contract.nbgrader_meta(s_cell).get("grade_id")
                    if contract.is_solution_cell(s_cell):
                        roll = rng.random()
                        if roll < 0.1:
                            cell["source"] = r_cell.source
                        elif s_cell.cell_type == "markdown":
                            cell["source"] = vary_text(rng)
                        elif roll < 0.1 + wrong_share and gid in wrong:
                            cell["source"] = vary_code(wrong[gid], rng)
                        else:
                            cell["source"] = vary_code(s_cell.source, rng)
                    elif s_cell.cell_type == "code":
                        lines = [f"step {k}: loss {rng.random():.6f}\n" for k in range(20)]
                        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "".join(lines)}]
                    cells.append(cell)
                text = json.dumps(dict(ref, cells=cells))
            made[student, nb] = text
            path = Out.at(out).autograded_notebook(student, nb)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    group = {s: copies.get(s, s) for s in students}  # copies of copies: every student copies an original
    for s in students:
        while group[s] != group[group[s]]:
            group[s] = group[group[s]]
    return {(a, b) for a in students for b in students if a < b and group[a] == group[b]}


def similarity_bench(students, keep=None):
    """`bench --similarity`: the similarity report on a synthetic class; prints time, peak memory, what it found."""
    work = keep or Path(tempfile.mkdtemp(prefix="a3-simbench-"))
    try:
        out = work / "out"
        if out.exists():
            shutil.rmtree(out)
        print(f"bench: building {students} synthetic students in {out}", flush=True)
        planted = similarity_class(out, students, paths.RELEASE, paths.SOURCE)
        csvs, runs = [], []
        for run in (1, 2):
            cmd = [sys.executable, "-c", _MEASURED, str(out)]
            t0 = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONHASHSEED=str(run)))
            wall = time.perf_counter() - t0
            if done.returncode:
                print(done.stdout + done.stderr, file=sys.stderr)
                return 1
            runs.append((wall, json.loads(done.stdout.splitlines()[-1])))
            csvs.append(Out.at(out).similarity_csv.read_bytes())
        rows = list(csv.DictReader(io.StringIO(csvs[0].decode("utf-8"))))
        flagged = {(r["student_a"], r["student_b"]) for r in rows if r["flagged"] == "1"}
        cells = {(r["notebook"], r["cell"]) for r in rows}
        for i, (wall, measured) in enumerate(runs, 1):
            print(
                f"run {i}: {measured['seconds']:.1f} s for the report ({wall:.1f} s with the interpreter's start), "
                f"peak memory {measured['peak_mb']:.0f} MB"
            )
        print(
            f"{students} students x {len(cells)} cells with rows; {len(rows)} rows, {len(flagged)} flagged pairs; "
            f"planted copies found {len(planted & flagged)} of {len(planted)}; flagged pairs not planted "
            f"{len(flagged - planted)}; rerun byte-identical: {'yes' if csvs[0] == csvs[1] else 'NO'}"
        )
        print(f"(machine: {os.cpu_count()} cores; goal: <= 60 s and < 1 GB for 500 students)")
        return 0 if csvs[0] == csvs[1] else 1
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


_MEASURED = """
import json, resource, sys, time
from autograder.reports import similarity
t0 = time.perf_counter()
similarity.write_report(sys.argv[1])
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


# --- written answers benchmark (grading by question) ---------------------------------------------

SYNONYMS = {
    "because": "since", "large": "big", "small": "little", "increases": "grows", "decreases": "falls",
    "model": "network", "more": "additional", "shows": "gives", "about": "roughly", "so": "therefore",
    "fixed": "constant", "each": "every", "cannot": "can't", "does not": "doesn't", "larger": "bigger",
    "smaller": "lower", "the same": "identical", "uses": "relies on", "makes": "renders", "helps": "aids",
}  # fmt: skip


def _sentences(text):
    return [s for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s]


def paraphrase(model, rng):
    """A student's own wording of (part of) a model answer: some sentences, reordered, words swapped."""
    sentences = _sentences(model) or [model]
    keep = sorted(rng.sample(range(len(sentences)), rng.randint(1, len(sentences))))
    if rng.random() < 0.3:
        rng.shuffle(keep)
    text = " ".join(sentences[i] for i in keep)
    for word, other in SYNONYMS.items():
        if rng.random() < 0.5:
            text = re.sub(rf"\b{word}\b", other, text)
    opening = rng.choice(["", "", "I think that ", "In short, ", "From my run, ", "Basically, "])
    return opening + text[:1].lower() + text[1:] if opening else text


def typo(text, rng):
    """One slip of the keyboard: two neighbouring letters swapped in one word."""
    spots = [m.start() for m in re.finditer(r"[a-z]{4,}", text)]
    if not spots:
        return text + " ."
    i = rng.choice(spots) + 1
    return text[:i] + text[i + 1] + text[i] + text[i + 2 :]


def written_answers(model, others, n, rng):
    """n answers to one question, as a class writes them: [(kind, text)] with kind blank (8%: the stub or
    nothing), copied (15%: one of three circulating answers, case and spacing aside), typo (7%: a circulating
    answer with a typo), paraphrase (40%: the student's own wording of the model answer) or other (30%:
    sentences of other questions' model answers, or made-up words, in the student's own mix)."""
    circulating = [paraphrase(model, rng) for _ in range(3)]
    made = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.08:
            made.append(("blank", rng.choice(["YOUR ANSWER HERE", "", "  \n"])))
        elif roll < 0.23:
            text = rng.choice(circulating)
            made.append(("copied", rng.choice([text, text.upper(), text.replace(" ", "  "), text.rstrip(".")])))
        elif roll < 0.30:
            made.append(("typo", typo(rng.choice(circulating), rng)))
        elif roll < 0.70:
            made.append(("paraphrase", paraphrase(model, rng)))
        else:
            pool = [s for o in others for s in _sentences(o)]
            picked = rng.sample(pool, min(len(pool), rng.randint(1, 3))) if pool else []
            made.append(("other", " ".join(picked + [vary_text(rng, rng.randint(8, 30))])))
    return made


def mark_class(out, n, source, template, seed=0):
    """A synthetic graded OUT of n students (no grading) whose written answers vary as a class's do (see
    written_answers): recorded states, autograded notebooks (the reference solution, a line of output per code
    cell, the student's written answers) and the gradebook, the written answers to grade and the blank ones 0.
    Returns {(notebook, grade_id): {kind: count}}."""
    import contextlib
    import sqlite3
    import warnings

    from nbgrader.api import Gradebook

    from autograder import rubrics
    from autograder.records import CellResult, NotebookResult, StudentResult

    rng = random.Random(seed)
    out, template = Path(out), Path(template)
    found = rubrics.load(Path(source) / rubrics.FILENAME)
    written = build.written_cells(source)
    tests = build.written_cells(source, kind=contract.is_test_cell)
    names = in_course_order(written)
    answers, kinds = {}, {}
    for nb in names:
        for gid in written[nb]:
            model = found[(nb, gid)].answer if (nb, gid) in found else ""
            others = [r.answer for cell, r in found.items() if cell != (nb, gid)]
            made = written_answers(model, others, n, rng)
            answers[nb, gid] = made
            kinds[nb, gid] = {k: sum(1 for kind, _ in made if kind == k) for k in dict.fromkeys(k for k, _ in made)}
    students = [f"student{i:04d}" for i in range(n)]
    base = {}
    for nb in names:
        rel = nbformat.read(template / "release" / f"{nb}.ipynb", as_version=4)
        base[nb] = reference_submission(rel, nbformat.read(Path(source) / f"{nb}.ipynb", as_version=4))
    for i, student in enumerate(students):
        notebooks = {}
        for nb in names:
            cells = []
            for cell in base[nb].cells:
                gid = contract.nbgrader_meta(cell).get("grade_id")
                if (nb, gid) in answers:
                    cell = dict(cell, source=answers[nb, gid][i][1])
                elif cell.cell_type == "code" and not contract.is_test_cell(cell):
                    line = f"loss {rng.random():.4f}\n"
                    cell = dict(cell, outputs=[{"output_type": "stream", "name": "stdout", "text": line}])
                cells.append(cell)
            path = Out.at(out).autograded_notebook(student, nb)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(dict(base[nb], cells=cells)))
            checked = [CellResult(contract.check_id(t), float(p), float(p), "passed") for t, p in tests[nb].items()]
            summary = NotebookResult.graded(nb, checked, sum(tests[nb].values()))
            summary.manual = dict(written[nb])
            summary.blank = [g for g in written[nb] if answers[nb, g][i][0] == "blank"]
            notebooks[nb] = summary
        state = StudentResult(student, notebooks=notebooks, submission={"submitted_as": student})
        Out.at(out).state.mkdir(parents=True, exist_ok=True)
        (Out.at(out).state / f"{student}.json").write_text(json.dumps(state.to_state()))
    db = Out.at(out).gradebook
    shutil.copy2(template / "gradebook.db", db)
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{db}") as gb:
        warnings.simplefilter("ignore")  # nbgrader's own SQLAlchemy warnings on add_submission
        for student in students:
            gb.update_or_create_student(student)
            gb.add_submission(contract.ASSIGNMENT, student)
        gb.db.commit()
    blank = {(s, nb, g) for (nb, g), made in answers.items() for s, (kind, _) in zip(students, made) if kind == "blank"}
    with (
        contextlib.closing(sqlite3.connect(db)) as con,
        con,
    ):  # what the worker leaves: tests passed, written answers to grade, blank ones 0
        rows = con.execute(
            "SELECT g.id, sa.student_id, nb.name, bc.name, gc.cell_type, gc.max_score FROM grade g "
            "JOIN grade_cells gc ON g.cell_id = gc.id JOIN base_cell bc ON bc.id = gc.id "
            "JOIN submitted_notebook snb ON g.notebook_id = snb.id "
            "JOIN notebook nb ON snb.notebook_id = nb.id JOIN submitted_assignment sa ON snb.assignment_id = sa.id"
        ).fetchall()
        con.executemany(
            "UPDATE grade SET auto_score = ?, needs_manual_grade = ? WHERE id = ?",
            [
                (p, 0, g) if kind == "code" else ((0.0, 0, g) if (s, nb, cell) in blank else (None, 1, g))
                for g, s, nb, cell, kind, p in rows
            ],
        )
    return kinds


def _http(url, body=None, token=""):
    """(seconds, status, bytes) of one request to the grading page's server."""
    import urllib.error
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"token {token}"} if token else {})
    request = urllib.request.Request(url, data, headers)
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=600) as reply:
            status, text = reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read()
    return time.perf_counter() - t0, status, text


def logged_marks(out, lines, seed=0):
    """Append `lines` marks to OUT's log, as a term of TAs leaves it: every answer to grade marked again and again
    (items of its rubric, in turn), so the latest mark of each is one of them."""
    from autograder import rubrics
    from autograder.marking import log, mark

    rng = random.Random(seed)
    answers = [a for a in mark.collect(out).values() if not a.blank]
    found = rubrics.load(paths.SOURCE / rubrics.FILENAME)
    digests = {a.key: mark.digest(a.text) for a in answers}
    records = []
    for n in range(lines):
        a = answers[n % len(answers)]
        ids = found[(a.notebook, a.grade_id)].ids if (a.notebook, a.grade_id) in found else []
        items = tuple(i for i in ids if rng.random() < 0.5)
        m = log.Mark(*a.key, items, 0.0, "", f"ta{n % 3}", mark.now(), digests[a.key])
        records.append(log.record(m))
    with open(Out.at(out).marks, "ab") as f:
        f.write(b"".join(records))


def _browser_load(url):
    """Seconds headless Chromium takes to load and lay out a page (its time for an empty page taken off), or None
    without Chromium."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        return None
    times = []
    with tempfile.TemporaryDirectory(prefix="a3-chromium-") as profile:
        for target in ("about:blank", url):
            t0 = time.perf_counter()
            subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                            "--disable-background-networking", f"--user-data-dir={profile}", "--dump-dom", target],
                           capture_output=True, timeout=300)  # fmt: skip
            times.append(time.perf_counter() - t0)
    return max(0.0, times[1] - times[0])


def suggest_bench(out, source, cell):
    """One line: the time `mark --suggest` takes for one question of OUT (its answers, live marks and the MiniLM rows
    the page kept in OUT read, then suggested), and the time to suggest again after one new mark (the page's case)."""
    from autograder import rubrics
    from autograder.marking import groups as grouping
    from autograder.marking import mark
    from autograder.marking import suggest as suggesting

    t0 = time.perf_counter()
    mine = {k: a for k, a in mark.collect(out, [cell[0]]).items() if k[1:] == cell}
    rubric = rubrics.load(Path(source) / rubrics.FILENAME)[cell]
    live = mark.live_marks(out, cell, mine, rubric)
    texts = {k[0]: a.text for k, a in mine.items() if not a.blank}
    cache = grouping.EmbeddingCache(Out.at(out).embeddings)
    suggester = suggesting.Suggester(texts, rubric, max(a.points for a in mine.values()), "minilm", cache)
    before = suggester.suggest(live)
    first = time.perf_counter() - t0
    new = next(s for s in sorted(before) if before[s].items is None) if before else None
    t0 = time.perf_counter()
    after = suggester.suggest(dict(live, **({new: ()} if new else {})))
    again = time.perf_counter() - t0
    made = [sum(s.items is not None for s in found.values()) for found in (before, after)]
    print(
        f"suggesting {cell[0]}/{cell[1]} ({len(live)} marks, {len(before)} answers to grade): {first:.2f} s from "
        f"OUT (answers, log and the rows kept there read; {made[0]} suggested), {again * 1000:.0f} ms again after "
        f"one new mark ({made[1]} suggested)",
        flush=True,
    )


def mark_bench(students, keep=None, question=("nmt", "written_study_analysis"), log_lines=0):
    """`bench --mark`: grading one written question for a synthetic class: grouping, the page, a group action, the
    refresh of grades.csv and the pages after it, one answer, an item's text edited, suggestions before and after a
    new mark (seconds); with `log_lines`, a log of that many marks first (a term's), and the index, a click and peak
    memory beside it."""
    import resource
    import statistics

    from autograder import rubrics
    from autograder.marking import groups as grouping
    from autograder.marking import mark, web
    from autograder.marking import server as mark_server

    work = keep or Path(tempfile.mkdtemp(prefix="a3-markbench-"))
    try:
        out, source = work / "out", work / "source"
        for folder in (out, source):
            shutil.rmtree(folder, ignore_errors=True)
        source.mkdir(parents=True)
        shutil.copy2(paths.SOURCE / rubrics.FILENAME, source)  # a copy: the bench edits an item's text
        t0 = time.perf_counter()
        template = build.template(work / "template", paths.SOURCE)
        kinds = mark_class(out, students, paths.SOURCE, template)
        print(
            f"bench --mark: {students} synthetic students x {len(kinds)} written answers written in "
            f"{time.perf_counter() - t0:.1f} s (the nbgrader template and the gradebook included)",
            flush=True,
        )
        cell = question
        print(f"{cell[0]}/{cell[1]}: " + ", ".join(f"{k} {v}" for k, v in kinds[cell].items()), flush=True)
        texts = {a.student: a.text for a in mark.collect(out).values() if (a.notebook, a.grade_id) == cell}
        timed = {}
        cached = work / "embeddings.npz"
        cached.unlink(missing_ok=True)
        for run, cache in [  # the first call imports torch and loads the model
            ("minilm", None),
            ("minilm again", grouping.EmbeddingCache(cached)),
            ("minilm cached", grouping.EmbeddingCache(cached)),
            ("tfidf", None),
        ]:
            t0 = time.perf_counter()
            grouped = grouping.group_answers(texts, mark.STUB, run.split()[0], cache)
            timed[run] = time.perf_counter() - t0, grouped
        if timed["minilm cached"][1] != timed["minilm"][1]:
            raise RuntimeError("the groups from cached rows differ from those computed afresh")
        shape = {}
        for g in timed["minilm"][1]:
            shape[g.kind] = shape.get(g.kind, 0) + 1
        print(
            f"grouping {cell[0]}/{cell[1]} ({len(texts)} answers, target: <= 10 s): {timed['minilm'][0]:.2f} s with "
            f"minilm in a fresh process (torch imported, the model loaded), {timed['minilm again'][0]:.2f} s again "
            f"(the model in memory), {timed['minilm cached'][0]:.2f} s from rows kept in OUT (a restarted page), "
            f"{timed['tfidf'][0]:.2f} s with tfidf; minilm groups: " + ", ".join(f"{v} {k}" for k, v in shape.items()),
            flush=True,
        )
        if log_lines:
            t0 = time.perf_counter()
            logged_marks(out, log_lines)
            print(f"a log of {log_lines:,} marks written in {time.perf_counter() - t0:.1f} s", flush=True)
        t0 = time.perf_counter()
        marking = mark_server.Marking(out, source, "bench", "minilm")  # nothing kept in OUT yet; the model loaded
        served = web.Served(marking, 0, token="bench")
        base = served.base

        def post(path, body):
            """(ms, status) of a call of the page's script, then the seconds until grades.csv and pages follow."""
            seconds, status, _ = _http(f"{base}{path}", dict(body, notebook=cell[0], grade_id=cell[1]), "bench")
            if status != 200:
                raise RuntimeError(f"{path} answered {status}")
            t0 = time.perf_counter()
            settled = marking.settle(timeout=3600)
            if status != 200 or not settled:
                raise RuntimeError(f"{path} answered {status}; grades.csv and pages followed: {settled}")
            return seconds * 1000, time.perf_counter() - t0

        try:
            page = f"{base}/q/{cell[0]}/{cell[1]}"
            first, status, body = _http(page, token="bench")
            words = b"still being grouped by meaning" in body
            marking.grouped(cell)
            ready = time.perf_counter() - t0
            (again, status2, body), (third, status3, _) = _http(page, token="bench"), _http(page, token="bench")
            if (status, status2, status3) != (200, 200, 200):
                raise RuntimeError(f"the page answered {status}, {status2}, {status3}")
            print(
                f"page for {len(texts)} answers (target: <= 2 s), on a server just started: {first:.2f} s the first "
                f"time ({'with groups by words while minilm groups' if words else 'with groups by meaning'}); groups "
                f"by meaning ready {ready:.2f} s after the start; then {again:.2f} s, and {third:.2f} s loaded "
                f"again; {len(body) / 1024:.0f} KiB",
                flush=True,
            )
            versions = {s: a["version"] for s, a in marking.state(cell)["answers"].items()}
            group = max((g for g in marking.grouped(cell) if g.kind != "blank"), key=lambda g: len(g.students))
            item = marking.rubrics()[cell].items[0]
            shown = [mark_server.pseudonym(s) for s in group.students]
            ms, refresh = post("/api/mark", {"marks": [{"student": p, "items": [item.id], "version": versions[p]}
                                                       for p in shown]})  # fmt: skip
            print(
                f"group action ({group.name}, {len(shown)} answers, item {item.id!r}; target: <= 200 ms): {ms:.0f} ms; "
                f"grades.csv, the TA index and the pages of its {len(shown)} students followed {refresh:.2f} s later",
                flush=True,
            )
            one = mark_server.pseudonym(next(s for s in sorted(texts) if s not in group.students))
            ms, refresh = post("/api/mark", {"marks": [{"student": one, "items": [item.id], "version": versions[one]}]})
            print(f"one answer: {ms:.0f} ms; its pages followed {refresh:.2f} s later", flush=True)
            clicks = []
            for _ in range(7):  # a TA's clicks on one answer, each after the last was answered
                version = marking.state(cell)["answers"][one]["version"]
                seconds, status, _ = _http(f"{base}/api/mark", {"notebook": cell[0], "grade_id": cell[1], "marks": [
                    {"student": one, "items": [] if len(clicks) % 2 else [item.id], "version": version}]}, "bench")  # fmt: skip
                if status != 200:
                    raise RuntimeError(f"a click answered {status}")
                clicks.append(seconds * 1000)
            marking.settle(timeout=3600)
            index = [_http(f"{base}/", token="bench") for _ in range(3)]
            if any(status != 200 for _, status, _ in index):
                raise RuntimeError("the index did not answer 200")
            load = _browser_load(f"{base}/q/{cell[0]}/{cell[1]}?token=bench")
            lines = sum(1 for _ in open(Out.at(out).marks, "rb")) if Out.at(out).marks.exists() else 0
            print(
                f"with {lines:,} log lines: a click (target <= 100 ms) {statistics.median(clicks):.0f} ms median of "
                f"{len(clicks)} ({min(clicks):.0f}-{max(clicks):.0f}); the index (target <= 1 s) "
                f"{statistics.median(t for t, _, _ in index):.2f} s median of 3; the question page (target <= 3 MB) "
                f"{len(body) / 1e6:.2f} MB"
                + ("" if load is None else f", loaded by Chromium (target <= 2 s) in {load:.2f} s"),
                flush=True,
            )
            ms, refresh = post("/api/item", {"item": item.id, "points": item.points, "text": item.text + " (reworded)"})
            print(
                f"item text edited, the {len(shown) + 1} answers that have it re-derived: {ms:.0f} ms; their pages "
                f"followed {refresh:.2f} s later",
                flush=True,
            )
        except RuntimeError as exc:
            print(f"bench --mark: {exc}", file=sys.stderr)
            return 1
        finally:
            served.stop()
            marking.close()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak memory of the bench process (the page's server inside it): {peak:.0f} MiB", flush=True)
        t0 = time.perf_counter()
        restarted = mark_server.Marking(out, source, "bench", "minilm")  # with the rows its first run kept in OUT
        restarted.grouped(cell)
        print(f"a restarted server had the question's groups {time.perf_counter() - t0:.2f} s after its start")
        restarted.close()
        suggest_bench(out, source, cell)
        print(f"(machine: {os.cpu_count()} cores)")
        return 0
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


# --- measurement --------------------------------------------------------------------------------


# --- the pipeline without kernels ------------------------------------------------------------------------------


def _renamed_shard(shard: bytes, old: str, new: str) -> bytes:
    """A gradebook shard of student `old` as if `new` had submitted it (nbgrader keys a student by their id)."""
    import sqlite3

    with tempfile.TemporaryDirectory(prefix="a3-shard-") as tmp:
        path = Path(tmp) / "shard.db"
        path.write_bytes(shard)
        con = sqlite3.connect(path)
        with con:
            con.execute("UPDATE student SET id = ? WHERE id = ?", (new, old))
            con.execute("UPDATE submitted_assignment SET student_id = ? WHERE student_id = ?", (new, old))
        con.close()
        return path.read_bytes()


@dataclasses.dataclass
class ReplayedGraded(worker.Graded):
    """A replayed student handed to the page stage: their pages are the recorded student's, copied from the
    folder `pages` (rendering them is the worker's cost, not the pipeline's; writing them is the page stage's)."""

    pages: str = ""


def replayed_pages(graded):
    """bench --pipeline's page stage: the recorded student's autograded notebooks and pages, written as
    worker.render_pages writes them."""
    result, folder = graded.result, Path(graded.task.pages)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for path in sorted(Path(graded.pages).iterdir()):
        write_staged(folder / path.name, path.read_bytes())
    result.pages = str(folder)
    return result


def pipeline_bench(students, keep=None, notebooks=None):
    """`bench --pipeline`: the pipeline's own cost per student, kernels aside. One real student (the reference
    submission of each notebook, or of `notebooks` alone: the others are missing) is graded; then `students`
    students submit the same files and each one's grading is that recorded result under their name (its gradebook
    shard renamed): ingest, records, the term, pages, CSVs, exports and similarity run as they do."""
    import resource

    from autograder.grading import pipeline, scheduler
    from autograder.records import Results
    from autograder.reports import export, feedback, similarity

    work = keep or Path(tempfile.mkdtemp(prefix="a3-pipebench-"))
    try:
        one, subs = work / "one", work / "submissions"
        for folder in (one, subs, work / "out", work / "out-one"):
            shutil.rmtree(folder, ignore_errors=True)
        template = build.template(work / "template", paths.SOURCE)
        for notebook in build.notebooks_in(template / "release"):
            if notebooks is not None and notebook not in notebooks:
                continue
            nb = reference_submission(
                nbformat.read(template / "release" / f"{notebook}.ipynb", as_version=4),
                nbformat.read(paths.SOURCE / f"{notebook}.ipynb", as_version=4),
            )
            (one / "reference").mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, one / "reference" / f"{notebook}.ipynb")
        recorded = []
        pages = work / "pages"  # the recorded pages, which every replayed student's page stage copies

        def keep_pages(graded):
            result = worker.render_pages(graded)
            shutil.copytree(result.pages, pages)
            recorded.append((graded.notebooks, result))
            return result

        t0 = time.perf_counter()
        pipeline.grade(one, work / "out-one", workers=1, stages=pipeline.Stages(render_pages=keep_pages))
        print(f"bench --pipeline: one real student graded in {time.perf_counter() - t0:.1f} s (kernels)", flush=True)
        graded_notebooks, model = recorded[0]
        names = [f"Zoë Ñúñez {i:05d}" if i % 3 else f"student{i:05d}" for i in range(students)]
        for name in names:  # the same files under every name, hard-linked: what is measured is the pipeline
            (subs / name).mkdir(parents=True)
            for nb in (one / "reference").iterdir():
                os.link(nb, subs / name / nb.name)

        def replay(task):
            """The recorded student's grading under this student's name, pages not yet rendered, as grade hands
            it to the page stage."""
            shard = _renamed_shard(model.shard, model.student, task.student) if model.shard else None
            result = dataclasses.replace(model, student=task.student, shard=shard, pages="")
            return ReplayedGraded(task, result, graded_notebooks, str(pages))

        spent: dict[str, float] = {}
        held: dict[str, float] = {}  # the most memory the process held at the end of each step (MiB)

        def timed(owner, name, label):
            inner = getattr(owner, name)

            def wrapper(*args, **kwargs):
                t = time.perf_counter()
                try:
                    return inner(*args, **kwargs)
                finally:
                    spent[label] = spent.get(label, 0.0) + time.perf_counter() - t
                    held[label] = max(held.get(label, 0.0), resident_mib())

            setattr(owner, name, wrapper)
            return owner, name, inner

        def replayed(task):
            t = time.perf_counter()
            try:
                return replay(task)
            finally:
                label = "replayed results (not the pipeline's)"
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t

        replaying = pipeline.Stages(grade=replayed, render_pages=replayed_pages, warm_up=lambda task: None)
        patched = [  # the pipeline's steps timed where they are (measurement only: each runs as it is)
            timed(pipeline, "collect", "ingest"),
            timed(Results, "record_all", "record (notebooks, state, gradebook merge)"),
            timed(Results, "place_pages", "pages moved into OUT"),
            timed(Results, "write_csvs", "CSVs"),
            timed(feedback, "rerender", "pages re-rendered (kept hand grades)"),
            timed(feedback, "write_index", "TA index"),
            timed(similarity, "write_report", "similarity"),
        ]
        seed_template(work / "out", template, paths.SOURCE)  # built once a term, not a cost of the students
        start_mib = resident_mib()
        tree = TreeCPU(os.getpid(), interval=0.5, skip=children_now()).start()
        try:
            t0 = time.perf_counter()
            course = paths.ROOT / "course.toml"  # the term: due date and late policy (no one is late: no times)
            summary = pipeline.grade(
                subs, work / "out", workers=1, course=course if course.exists() else None, stages=replaying
            )
            wall = time.perf_counter() - t0
            spent[WAITED] = scheduler.last_stats.then_wait_seconds  # the page stage writing pages, waited for
            t1 = time.perf_counter()
            export.write_gradebook(work / "out", work / "canvas.csv", lms.CANVAS)
            export.write_gradebook(work / "out", work / "moodle.csv", lms.MOODLE)
            spent["exports (Canvas, Moodle)"] = time.perf_counter() - t1
        finally:
            tree.stop()
            for owner, name, inner in patched:
                setattr(owner, name, inner)
        if len(summary.graded) != students:
            raise RuntimeError(f"{len(summary.graded)} of {students} students graded: {summary.failed}")
        replayed = spent.pop("replayed results (not the pipeline's)", 0.0)
        spent["record (notebooks, state, gradebook merge)"] -= spent.get("pages moved into OUT", 0.0)  # timed inside it
        own = wall - replayed + spent["exports (Canvas, Moodle)"]
        pages = sum(
            spent.get(k, 0.0)
            for k in ("pages moved into OUT", "pages re-rendered (kept hand grades)", "TA index", WAITED)
        )
        spent["not in a step (the hand-off to the page process and back, scheduling, logs)"] = own - sum(spent.values())
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"bench --pipeline: {students} students x {len(model.notebooks)} notebooks: the pipeline's own "
            f"{own:.1f} s, {own / students * 1000:.1f} ms a student ({(own - pages) / students * 1000:.1f} ms without "
            f"pages; {(own - pages + spent[WAITED]) / students * 1000:.1f} ms with the wait for the page stage); "
            f"replaying the recorded results {replayed:.1f} s; peak memory {peak:.0f} MiB in this process, "
            f"{tree.peak_mib:.0f} MiB with the processes it started (read every 0.5 s)",
            flush=True,
        )
        for label, seconds in sorted(spent.items(), key=lambda kv: -kv[1]):
            print(f"  {label}: {seconds:.2f} s, {seconds / students * 1000:.2f} ms a student")
        print(f"memory held before the class: {start_mib:.0f} MiB; at the end of each step, at most:")
        for label, mib in held.items():
            print(f"  {label}: {mib:.0f} MiB")
        print(f"(machine: {os.cpu_count()} cores)")
        return 0
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


# This process idle while the page stage (another process, one worker) writes pages it has not finished: in a real
# run a student's kernels take seconds and a page stage a quarter of one, so grading never waits there.
WAITED = "waiting for the page stage to finish (pages)"


def children_now() -> set[int]:
    """The pids of every process under this one now."""
    import psutil  # a dependency of distributed

    return {p.pid for p in psutil.Process().children(recursive=True)}


def resident_mib() -> float:
    """The memory this process holds now (resident set, MiB; 0 where /proc/self/status is missing)."""
    try:
        line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0.0
    return int(line.split()[1]) / 1024


def cpu_times():
    """(busy, total) CPU time of the whole machine so far, in clock ticks summed over cores (/proc/stat),
    or None where there is no /proc/stat."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_cores(before, after, cores=None):
    """Mean number of cores busy between two cpu_times() readings (None if either is missing)."""
    if before is None or after is None or after[1] == before[1]:
        return None
    cores = cores or os.cpu_count() or 1
    return cores * (after[0] - before[0]) / (after[1] - before[1])


class TreeCPU:
    """CPU seconds (user + system) of a process and every process under it, sampled while they run.

    The grading tree's processes do not all end up in this process's RUSAGE_CHILDREN: kernels and sandboxes
    in a pid namespace of their own are reaped inside it, and a killed namespace takes its processes' times
    with it. So each process of the tree (found through parent links, namespaces included) is read every
    `interval` seconds and its last reading counts; a process can be missed by at most one interval of CPU,
    and one that lives less than an interval not at all. The most memory the tree held in one reading (resident,
    summed over its processes) is kept too. `skip`: pids of processes under `pid` that are not to be counted
    (those that were there before).
    """

    def __init__(self, pid, interval=0.1, skip=()):
        import threading

        self.pid, self.interval, self.seen, self.skip, self.peak_mib = pid, interval, {}, set(skip), 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self):
        """Read every process of the tree once."""
        import psutil  # a dependency of distributed

        try:
            root = psutil.Process(self.pid)
            procs = [root] + root.children(recursive=True)
        except psutil.Error:
            return
        held = 0
        for proc in procs:
            if proc.pid in self.skip:
                continue
            try:
                with proc.oneshot():
                    times = proc.cpu_times()
                    self.seen[(proc.pid, proc.create_time())] = times.user + times.system
                    held += proc.memory_info().rss
            except psutil.Error:
                continue
        self.peak_mib = max(self.peak_mib, held / 2**20)

    def _run(self):
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        """Stop sampling; returns the CPU seconds of every process seen."""
        self._stop.set()
        self._thread.join()
        return sum(self.seen.values())


def row_from(workers, n_students, wall, stats, cores=None, cpu=None):
    """One table row from a batch's wall time, its scheduler statistics (RunStats.as_dict()), the mean
    number of busy cores of the whole machine while it ran and the CPU seconds of the grading process tree
    (None when not measured)."""
    return {
        "workers": workers,
        "students": n_students,
        "wall": wall,
        "grading": stats["seconds"],
        "cores": cores,
        "cpu": cpu,
        "startup": stats["startup_seconds"],
        "mode": stats["mode"],
        "failures": stats["failures"],
        "rss": [(w["peak_rss_mb"], w["children_peak_rss_mb"]) for w in stats["workers"]],
    }


def format_table(rows):
    """The benchmark table: seconds per student and speed-up against the first row, core-seconds per student
    and the cores the grading processes kept busy (their CPU seconds over the wall time), the whole machine's
    busy cores, memory per worker."""
    base = rows[0]
    head = (
        f"{'workers':>7} {'students':>8} {'wall s':>8} {'s/student':>9} {'speed-up':>8} "
        f"{'core-s/student':>14} {'grading cores':>13} {'busy cores':>10} "
        f"{'grading s':>9} {'cluster start s':>15}  "
        "peak RSS per worker, MiB (process / largest child)"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        rss = ", ".join(f"{p:.0f} / {c:.0f}" for p, c in r["rss"]) or "-"
        cores = "-" if r.get("cores") is None else f"{r['cores']:.2f}"
        cpu = r.get("cpu")
        per_student = "-" if cpu is None else f"{cpu / r['students']:.1f}"
        own = "-" if cpu is None else f"{cpu / r['wall']:.2f}"
        lines.append(
            f"{r['workers']:>7} {r['students']:>8} {r['wall']:>8.1f} {r['wall'] / r['students']:>9.1f} "
            f"{base['wall'] / r['wall']:>7.2f}x {per_student:>14} {own:>13} {cores:>10} "
            f"{r['grading']:>9.1f} {r['startup']:>15.1f}  {rss}"
        )
    return "\n".join(lines)


def projection(core_seconds_per_student, students=500, cores=(2, 16, 64)):
    """Lines projecting a course of `students` from the measured core-seconds per student: the CPU it needs
    and the least wall time on each number of cores (every core busy grading; fixed start-up not counted)."""
    total = core_seconds_per_student * students
    lines = [
        f"projection for {students} students at {core_seconds_per_student:.1f} core-s each: "
        f"{total / 3600:.2f} core-hours of CPU"
    ]
    for n in cores:
        lines.append(f"  on {n:>3} cores: at least {total / n / 60:.1f} min")
    return lines


def time_breakdown(out):
    """Mean seconds per submission by notebook and phase from OUT/timings.csv ('' if absent)."""
    path = Out.at(out).timings
    if not path.exists():
        return ""
    rows = list(csv.DictReader(open(path)))
    phases = [p for p in ("seconds", "overhead", "setup", "cells", "tests") if rows and p in rows[0]]
    lines = [f"{'notebook':<8} {'n':>3} " + " ".join(f"{p:>9}" for p in phases)]
    for nb in in_course_order({r["notebook"] for r in rows}):
        sel = [r for r in rows if r["notebook"] == nb]
        lines.append(
            f"{nb:<8} {len(sel):>3} " + " ".join(f"{sum(float(r[p]) for r in sel) / len(sel):>9.1f}" for p in phases)
        )
    return "\n".join(lines)


def wall_account(wall, stats, out, pages=0.0):
    """Where a `grade` run's wall time went ('' without its phases): the grade process's phases
    (pipeline.PHASES, from its stats) and the rest of the wall (the process's start, imports and exit); then a
    student's time in the worker (OUT/.state, mean): its nbgrader run(s), its pages (`pages`: seconds a student,
    as feedback_seconds measures them; the page process renders them while the next student is graded) and the
    worker's own work around them (the workspace, the slot's reset, token checks, the shard). The students' phase
    also holds what is no student's: with one worker, the first student's wait for the zygote's imports and the
    wait for the last student's pages; so each worker's first student and the others are given apart (OUT/.state:
    the zygote's resets before the student)."""
    from autograder.grading.pipeline import PHASES
    from autograder.records import Results

    phases = stats.get("phases") or {}
    if not phases:
        return ""
    lines = [f"{'phase':<9} {'seconds':>8}"]
    for name, seconds in phases.items():
        lines.append(f"{name:<9} {seconds:>8.1f}  {PHASES.get(name, '')}")
    lines.append(f"{'the rest':<9} {wall - sum(phases.values()):>8.1f}  the process's start, imports and exit")
    lines.append(f"{'wall':<9} {wall:>8.1f}")
    states = [s for s in Results(out).states() if s.notebooks] if Out.at(out).state.is_dir() else []
    if states:
        worker = sum(s.seconds for s in states) / len(states)
        nbgrader = sum(n.timing.get("seconds", 0.0) for s in states for n in s.notebooks.values()) / len(states)
        lines.append(
            f"a student, mean of {len(states)}: {worker:.2f} s in the worker = {nbgrader:.2f} s of nbgrader (kernels, "
            f"cells, checks) + {pages:.2f} s of pages (in the page process) + {worker - nbgrader - pages:.2f} s of the "
            "worker's own work around them"
        )
        first = [s for s in states if (s.zygote or {}).get("resets") == 0]  # each worker's first student
        later = [s for s in states if (s.zygote or {}).get("resets", 0) > 0]
        if first and later:
            lines.append(
                f"each worker's first student: {sum(s.seconds for s in first) / len(first):.2f} s in the worker (its "
                f"kernels wait for the zygote's imports); the others: {sum(s.seconds for s in later) / len(later):.2f} "
                f"s each (mean of {len(later)})"
            )
    return "\n".join(lines)


def fixed_costs(out):
    """Fixed costs of a graded OUT from its per-student results (OUT/.state): lines giving the mean kernel start
    per notebook (KeyedKernel asking for the kernel to its first cell; a worker's first kernel also waits for
    its zygote's imports), then over all notebooks the overhead split into kernel start and nbgrader's own
    work (its process, reading and writing the notebooks, the gradebook: overhead is shared out evenly
    between a student's notebooks, so only the mean over all of them splits), and the zygotes' import time
    ('' if absent)."""
    from autograder.records import Results

    states = Results(out).states() if Out.at(out).state.is_dir() else []
    timings = {}
    for state in states:
        for nb, summary in state.notebooks.items():
            t = summary.timing
            if "kernel_start" in t:
                timings.setdefault(nb, []).append((t["kernel_start"], t["overhead"]))
    lines = []
    if timings:
        lines.append(f"{'notebook':<8} {'n':>3} {'kernel start':>12}")
        for nb in in_course_order(timings):
            sel = timings[nb]
            lines.append(f"{nb:<8} {len(sel):>3} {sum(k for k, _ in sel) / len(sel):>12.2f}")
        every = [t for sel in timings.values() for t in sel]
        kernel, overhead = (sum(x[i] for x in every) / len(every) for i in (0, 1))
        lines.append(
            f"all notebooks: overhead {overhead:.2f} s = kernel start {kernel:.2f} s + nbgrader "
            f"{overhead - kernel:.2f} s"
        )
    zygotes = [
        s.zygote["preload_seconds"]
        for s in states
        if (s.zygote or {}).get("resets") == 0 and s.zygote.get("preload_seconds") is not None
    ]
    if zygotes:
        lines.append(
            f"zygote imports: {sum(zygotes) / len(zygotes):.1f} s each, {len(zygotes)} zygote(s) "
            f"({sum(zygotes) / max(1, len(states)):.2f} s per student here; once per worker, in parallel "
            "with nbgrader's start, and with one worker with the ingest too)"
        )
    return "\n".join(lines)


def feedback_seconds(out):
    """(pages, seconds) to render every feedback page of a graded OUT again (feedback.rerender)."""
    from autograder.reports import feedback

    start = time.perf_counter()
    pages = feedback.rerender(out)
    return pages, time.perf_counter() - start


def seed_template(out, template, source):
    """Put an already built grading template into OUT's cache, stamped for `source` (see grade.ensure_template)."""
    from autograder.grading.pipeline import source_digest

    cache = Out.at(out).template
    if cache.exists():
        shutil.rmtree(cache)
    shutil.copytree(template, cache)
    (cache / "source.sha256").write_text(source_digest(source))


def grade_batch(submissions, out, workers, log, source=paths.SOURCE):
    """Run `python -m autograder grade` as a fresh process; returns (wall seconds, RunStats dict, mean busy
    cores of the whole machine meanwhile or None, CPU seconds of the grading process and all its
    descendants)."""
    stats_file = Path(out).with_suffix(".stats.json")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **{envvars.RUN_STATS: str(stats_file)})
    cmd = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        str(submissions),
        "--out",
        str(out),
        "--workers",
        str(workers),
        "--force",
        "--source",
        str(source),
    ]
    start, cpu = time.perf_counter(), cpu_times()
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=paths.ROOT)
        tree = TreeCPU(proc.pid).start()
        proc.wait()
    wall, cores, used = time.perf_counter() - start, busy_cores(cpu, cpu_times()), tree.stop()
    if proc.returncode != 0 or not stats_file.exists():
        tail = Path(log).read_text()[-2000:]
        raise RuntimeError(f"grading with {workers} worker(s) failed (exit {proc.returncode}); log {log}:\n{tail}")
    return wall, json.loads(stats_file.read_text()), cores, used


def score_table(out):
    """{(student, notebook): (score, status)} from OUT/grades.csv."""
    return {(r["student"], r["notebook"]): (r["score"], r["status"]) for r in csv.DictReader(open(Out.at(out).grades))}


def main(
    *,
    students: int = 6,
    workers: list[int] = (1, 2),
    keep: Path | None = None,
    notebooks: list[str] | None = None,
    similarity: bool = False,
    term: bool = False,
    mark: bool = False,
    log_lines: int = 0,
    pipeline: bool = False,
) -> int:
    """`bench`: grade `students` synthetic students with each worker count and print the tables (or, with
    `similarity`, time the similarity report on them)."""
    unknown = sorted(set(notebooks or ()) - set(contract.NOTEBOOKS))
    if unknown:
        print(
            f"bench: no notebook {', '.join(unknown)} in this course ({', '.join(contract.NOTEBOOKS)})", file=sys.stderr
        )
        return 2
    if notebooks is not None and (similarity or term or mark):
        print("bench: --notebooks is for grading (the default bench and --pipeline) only", file=sys.stderr)
        return 2
    if pipeline:
        return pipeline_bench(students, keep, notebooks)
    if similarity:
        return similarity_bench(students, keep)
    if term:
        return term_bench(students)
    if mark:
        return mark_bench(students, keep, log_lines=log_lines)
    workers = list(workers)
    work = keep or Path(tempfile.mkdtemp(prefix="a3-bench-"))
    try:
        work.mkdir(parents=True, exist_ok=True)
        print(f"bench: building {students} synthetic students in {work}", flush=True)
        source = work / "source"  # a snapshot, so every run grades against the same notebooks
        if source.exists():
            shutil.rmtree(source)
        shutil.copytree(paths.SOURCE, source, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        t0 = time.perf_counter()
        template = build.template(work / "template", source)
        template_seconds = time.perf_counter() - t0
        release = template / "release"
        made = build_students(work / "submissions", students, release, source, notebooks=notebooks)
        kinds = {k: sum(1 for _, kind in made if kind == k) for k in KINDS}
        submitted = in_course_order(
            {p.name.removeprefix("Copy of ").removesuffix(".ipynb") for p in (work / "submissions").glob("*/*.ipynb")}
        )
        print(f"bench: {kinds}; notebooks submitted: {', '.join(submitted)}", flush=True)
        rows, scores, walls = [], {}, {}
        for w in workers:
            out = work / f"out-{w}"
            seed_template(out, template, source)
            print(f"bench: grading with {w} worker(s)…", flush=True)
            wall, stats, cores, cpu = grade_batch(work / "submissions", out, w, work / f"grade-{w}.log", source)
            rows.append(row_from(w, len(made), wall, stats, cores, cpu))
            scores[w] = score_table(out)
            walls[w] = (wall, stats)
        print(
            f"\nThe grading template (nbgrader generate_assignment) took {template_seconds:.1f} s once; every run "
            "below reuses it, as `grade` does on an OUT it has graded into before."
        )
        print(format_table(rows))
        print(
            "core-s/student: CPU seconds (user + system) of the grading process and every process under it "
            "(workers, nbgrader, kernels, sandboxes), per student; grading cores: those CPU seconds over the wall "
            "time, the cores the run itself kept busy."
        )
        print(
            f"busy cores: the whole machine's mean over the run, of {os.cpu_count()} (other programs included); the "
            "speed-up can reach at most the cores a run can use divided by the busy cores of the 1-worker run."
        )
        print()
        widest = max(rows, key=lambda r: r["workers"])  # the run closest to a course on a full machine
        print("\n".join(projection(widest["cpu"] / widest["students"], cores=(2, 16, 64))))
        print(f"(from the {widest['workers']}-worker run: more workers per core cost more core-seconds each)")
        same = all(s == scores[workers[0]] for s in scores.values())
        print(f"\ngrades identical across worker counts: {'yes' if same else 'NO'}")
        statuses = {}
        for score, status in scores[workers[0]].values():
            statuses[status] = statuses.get(status, 0) + 1
        print("statuses: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())))
        breakdown = time_breakdown(work / f"out-{workers[0]}")
        if breakdown:
            print(f"\nwhere the time goes with {workers[0]} worker(s) (mean seconds per submission):\n{breakdown}")
            print(
                "overhead: nbgrader and the kernel's start and stop per notebook (one nbgrader process per "
                "student, a kernel forked from the worker's zygote per notebook); setup: the setup cell; cells: "
                "every other cell but the test cells"
            )
        fixed = fixed_costs(work / f"out-{workers[0]}")
        if fixed:
            print(
                f"\nfixed costs with {workers[0]} worker(s) (mean seconds per submission; both are part of "
                f"the overhead above):\n{fixed}"
            )
        pages, seconds = feedback_seconds(work / f"out-{workers[0]}")
        account = wall_account(*walls[workers[0]], work / f"out-{workers[0]}", seconds / len(made))
        if account:
            print(f"\nwhere the wall time goes with {workers[0]} worker(s):\n{account}")
        print(
            f"feedback pages: {seconds / len(made):.2f} s per student ({pages} pages rendered again by "
            "feedback.rerender, in one process)"
        )
        return 0 if same else 1
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
