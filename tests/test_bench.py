"""autograder.bench: synthetic students, the benchmark table and the time breakdown."""

import csv
import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder import bench, contract
from autograder.grading import pipeline, scheduler
from autograder.records import NotebookResult, StudentResult


def nbg(grade_id, solution=False, grade=False):
    return {
        "nbgrader": {
            "grade_id": grade_id,
            "solution": solution,
            "grade": grade,
            "locked": not solution,
            "schema_version": 3,
        }
    }


def toy_course(tmp_path):
    """A one-notebook course: source with a solution region, release with nbgrader's stub."""
    source, release = tmp_path / "source", tmp_path / "release"
    source.mkdir()
    release.mkdir()
    solved = "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION"
    test = "assert f(2) == 4"
    src = new_notebook(
        cells=[
            new_code_cell(solved, metadata=nbg("f", solution=True)),
            new_code_cell(test, metadata=nbg("test_f", grade=True)),
        ]
    )
    rel = new_notebook(
        cells=[
            new_code_cell(
                "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()", metadata=nbg("f", solution=True)
            ),
            new_code_cell(test, metadata=nbg("test_f", grade=True)),
        ]
    )
    nbformat.write(src, source / "nmt.ipynb")
    nbformat.write(rel, release / "nmt.ipynb")
    return release, source


WRONG = {"nmt": {"f": "def f(x):\n    return x + 2  # adds instead of doubling"}}


def cell_f(path):
    return nbformat.read(path, as_version=4).cells[0].source


def test_reference_student_gets_the_solution_without_markers(tmp_path):
    """Does a reference student submit the source solution with the BEGIN/END SOLUTION lines removed?"""
    release, source = toy_course(tmp_path)
    bench.build_students(tmp_path / "subs", 1, release, source, wrong=WRONG)
    assert cell_f(tmp_path / "subs" / "student001" / "nmt.ipynb") == "def f(x):\n    return 2 * x"


def test_wrong_student_gets_one_sample_mistake(tmp_path):
    """Does a wrong student submit the sample's wrong cell in place of the solution?"""
    release, source = toy_course(tmp_path)
    students = bench.build_students(tmp_path / "subs", 2, release, source, wrong=WRONG)
    assert students == [("student001", "reference"), ("student002", "wrong")]
    assert cell_f(tmp_path / "subs" / "student002" / "nmt.ipynb") == WRONG["nmt"]["f"]


def test_damaged_student_looks_like_a_colab_download(tmp_path):
    """Does a damaged student submit 'Copy of nmt.ipynb' in nbformat 4.4 with Colab metadata and no cell ids?"""
    release, source = toy_course(tmp_path)
    bench.build_students(tmp_path / "subs", 3, release, source, wrong=WRONG)
    files = sorted(p.name for p in (tmp_path / "subs" / "student003").iterdir())
    assert files == ["Copy of nmt.ipynb"]
    raw = json.loads((tmp_path / "subs" / "student003" / "Copy of nmt.ipynb").read_text())
    assert raw["nbformat_minor"] == 4 and "colab" in raw["metadata"]
    assert all("id" not in cell for cell in raw["cells"])


def test_build_students_without_notebooks_is_a_clear_error(tmp_path):
    """Does an empty release folder raise an error naming the folders?"""
    with pytest.raises(FileNotFoundError, match="no notebook"):
        bench.build_students(tmp_path / "subs", 1, tmp_path, tmp_path)


def test_students_submit_only_the_notebooks_asked_for(tmp_path):
    """With notebooks=[...], does every student submit just those (the others then count as missing), and is an
    unknown name a clear error?"""
    release, source = toy_course(tmp_path)
    for name in ("bert", "clip"):
        nbformat.write(nbformat.read(release / "nmt.ipynb", as_version=4), release / f"{name}.ipynb")
        nbformat.write(nbformat.read(source / "nmt.ipynb", as_version=4), source / f"{name}.ipynb")
    bench.build_students(tmp_path / "subs", 2, release, source, wrong={}, notebooks=["clip", "nmt"])
    assert sorted(p.relative_to(tmp_path / "subs").as_posix() for p in (tmp_path / "subs").glob("*/*")) == [
        "student001/clip.ipynb",
        "student001/nmt.ipynb",
        "student002/clip.ipynb",
        "student002/nmt.ipynb",
    ]
    with pytest.raises(ValueError, match="no notebook theory"):
        bench.build_students(tmp_path / "subs2", 1, release, source, wrong={}, notebooks=["nmt", "theory"])


def sleep_task(seconds):
    import time

    time.sleep(seconds)
    return {"slept": seconds}


@pytest.mark.slow
def test_table_reports_speed_up_and_memory_of_real_runs():
    """On a trivial fn run with 1 and 2 workers, does the table show per-student time, speed-up and RSS per worker?"""
    import time

    rows = []
    for workers in (1, 2):
        start = time.perf_counter()
        scheduler.run([0.2] * 4, sleep_task, workers=workers)
        rows.append(bench.row_from(workers, 4, time.perf_counter() - start, scheduler.last_stats.as_dict()))
    assert [len(r["rss"]) for r in rows] == [1, 2]
    assert all(p > 10 for r in rows for p, _ in r["rss"])
    lines = bench.format_table(rows).splitlines()
    assert "speed-up" in lines[0] and "peak RSS per worker" in lines[0]
    one, two = (line.split() for line in lines[2:])
    assert one[4] == "1.00x"
    assert two[4] == f"{rows[0]['wall'] / rows[1]['wall']:.2f}x"
    assert float(two[3]) == pytest.approx(rows[1]["wall"] / 4, abs=0.06)


def test_time_breakdown_averages_each_phase_per_notebook(tmp_path):
    """Does the breakdown give the mean seconds of each grading phase per notebook?"""
    rows = [
        ["student", "notebook", "seconds", "overhead", "setup", "cells", "tests"],
        ["a", "nmt", 10, 4, 3, 2, 1],
        ["b", "nmt", 20, 6, 5, 6, 3],
        ["a", "bert", 8, 4, 2, 1, 1],
    ]
    with open(tmp_path / "timings.csv", "w", newline="") as f:
        csv.writer(f).writerows(rows)
    lines = bench.time_breakdown(tmp_path).splitlines()
    assert lines[0].split() == ["notebook", "n", "seconds", "overhead", "setup", "cells", "tests"]
    assert lines[1].split() == ["nmt", "2", "15.0", "5.0", "4.0", "4.0", "2.0"]
    assert lines[2].split() == ["bert", "1", "8.0", "4.0", "2.0", "1.0", "1.0"]
    assert bench.time_breakdown(tmp_path / "nowhere") == ""


def test_fixed_costs_split_the_overhead_and_count_each_zygote_once(tmp_path):
    """Do the fixed costs give each notebook's kernel start and nbgrader's share of its overhead, and the
    zygotes' import time counted once per zygote (its first student)?"""

    def state(student, resets, kernel_start):
        nmt = NotebookResult("nmt", "graded", 1.0, 1.0, [], timing={"overhead": 1.5, "kernel_start": kernel_start})
        bert = NotebookResult("bert", "graded", 1.0, 1.0, [])
        zygote = {"preload_seconds": 4.0, "resets": resets, "kernels": 1}
        return StudentResult(student, notebooks={"nmt": nmt, "bert": bert}, zygote=zygote).to_state()

    (tmp_path / ".state").mkdir()
    for student, resets, ks in (("a", 0, 0.4), ("b", 1, 0.6)):
        (tmp_path / ".state" / f"{student}.json").write_text(json.dumps(state(student, resets, ks)))
    lines = bench.fixed_costs(tmp_path).splitlines()
    assert lines[0].split() == ["notebook", "n", "kernel", "start"]
    assert lines[1].split() == ["nmt", "2", "0.50"]
    assert lines[2] == "all notebooks: overhead 1.50 s = kernel start 0.50 s + nbgrader 1.00 s"
    assert lines[3].startswith("zygote imports: 4.0 s each, 1 zygote(s) (2.00 s per student here")
    assert bench.fixed_costs(tmp_path / "nowhere") == ""


def test_wall_account_adds_up_to_the_wall_and_splits_a_students_time(tmp_path):
    """Does the wall account list the run's phases, put the rest of the wall on the process's start and exit, split
    a student's time in the worker into nbgrader, pages and the worker's own work, and give each worker's first
    student (the one that waits for the zygote's imports) apart from the others?"""

    def state(student, seconds, nbgrader, resets):
        nbs = {nb: NotebookResult(nb, "graded", 1.0, 1.0, [], timing={"seconds": s}) for nb, s in nbgrader.items()}
        zygote = {"preload_seconds": 4.0, "resets": resets, "kernels": 2}
        return StudentResult(student, notebooks=nbs, seconds=seconds, zygote=zygote).to_state()

    (tmp_path / ".state").mkdir()
    for student, seconds, nbgrader, resets in (
        ("a", 8.0, {"nmt": 3.0, "bert": 4.0}, 0),
        ("b", 6.0, {"nmt": 2.5, "bert": 3.0}, 1),
    ):
        (tmp_path / ".state" / f"{student}.json").write_text(json.dumps(state(student, seconds, nbgrader, resets)))
    phases = {"set-up": 1.0, "take in": 0.5, "students": 14.0, "finish": 1.5}
    lines = bench.wall_account(20.0, {"phases": phases}, tmp_path, pages=0.5).splitlines()
    assert [line.split()[:2] for line in lines[1:5]] == [
        ["set-up", "1.0"],
        ["take", "in"],
        ["students", "14.0"],
        ["finish", "1.5"],
    ]
    assert lines[5].split()[:3] == ["the", "rest", "3.0"] and lines[6].split() == ["wall", "20.0"]
    assert lines[7].startswith("a student, mean of 2: 7.00 s in the worker = 6.25 s of nbgrader"), lines[7]
    assert "+ 0.50 s of pages (in the page process) + 0.25 s of the worker's own work" in lines[7]
    assert lines[8].startswith("each worker's first student: 8.00 s in the worker"), lines[8]
    assert lines[8].endswith("the others: 6.00 s each (mean of 1)"), lines[8]
    assert bench.wall_account(20.0, {}, tmp_path) == ""


def test_seeded_template_is_reused_by_grade(tmp_path, monkeypatch):
    """Does `grade` reuse the template bench seeds into OUT instead of building its own?"""
    from autograder.content import build

    _, source = toy_course(tmp_path)
    template = tmp_path / "template"
    (template / "release").mkdir(parents=True)
    (template / "gradebook.db").write_text("a gradebook")
    bench.seed_template(tmp_path / "out", template, source)
    monkeypatch.setattr(build, "template", lambda *a, **k: pytest.fail("grade rebuilt the seeded template"))
    cache = pipeline.ensure_template(tmp_path / "out", source)
    assert (cache / "gradebook.db").read_text() == "a gradebook"


def test_busy_cores_from_two_readings():
    """Does busy_cores turn two (busy, total) tick readings into the mean number of busy cores?"""
    assert bench.busy_cores((100, 1000), (150, 1100), cores=2) == pytest.approx(1.0)
    assert bench.busy_cores((100, 1000), (100, 1100), cores=2) == 0.0
    assert bench.busy_cores(None, (150, 1100)) is None


def test_cpu_times_reads_the_machine():
    """Does cpu_times read this Linux machine's busy and total ticks, busy never above total, both growing?"""
    import time

    first = bench.cpu_times()
    deadline = time.perf_counter() + 0.3
    while time.perf_counter() < deadline:
        pass
    second = bench.cpu_times()
    assert first is not None and 0 <= first[0] <= first[1]
    assert second[0] > first[0] and second[1] > first[1]


def test_table_shows_core_seconds_per_student_and_the_cores_the_run_used():
    """Given a run's CPU seconds, does the table show them per student and over the wall time (cores used)?"""
    stats = {"seconds": 10.0, "startup_seconds": 1.0, "mode": "local", "failures": 0, "workers": []}
    row = bench.row_from(2, 4, 10.0, stats, cores=1.5, cpu=18.0)
    line = bench.format_table([row]).splitlines()[2].split()
    assert line[5:8] == ["4.5", "1.80", "1.50"]
    assert bench.format_table([bench.row_from(1, 4, 10.0, stats)]).splitlines()[2].split()[5:7] == ["-", "-"]


def test_projection_divides_the_course_cpu_by_the_cores():
    """Does the projection turn core-seconds per student into core-hours and minutes on N busy cores?"""
    lines = bench.projection(12.0, students=500, cores=(2, 16))
    assert "1.67 core-hours" in lines[0]
    assert lines[1].split()[-2:] == ["50.0", "min"]
    assert lines[2].split()[-2:] == ["6.2", "min"]


def test_tree_cpu_counts_the_grandchildren_too():
    """Does TreeCPU count the CPU time of the processes under the one it watches (a kernel under nbgrader)?"""
    import subprocess
    import sys
    import time

    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass"
    wrapper = (
        f"import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', {burn!r}]); "
        "time.sleep(0.3); p.wait()"
    )
    proc = subprocess.Popen([sys.executable, "-c", wrapper])
    tree = bench.TreeCPU(proc.pid, interval=0.05).start()
    proc.wait()
    time.sleep(0.1)
    used = tree.stop()
    assert len(tree.seen) >= 2
    assert 0.8 <= used <= 3.0


def test_term_bench_class_is_released_whole(tmp_path):
    """Does `bench --term`'s synthetic class release every student (so the bench times a full release), with a
    late penalty for some of them?"""
    from autograder.reports import release

    bench.term_class(tmp_path, 30)
    got = release.release(tmp_path, "moodle", setting=100)
    with open(tmp_path / "grades.csv", newline="") as f:
        penalised = {r["student"] for r in csv.DictReader(f) if float(r["late_penalty"] or 0) > 0}
    assert (len(got["released"]), got["held"], bool(penalised)) == (30, {}, True)


def test_written_answers_vary_as_a_class_writes_them():
    """Does `bench --mark`'s class write blank answers, copies of a few circulating answers (identical once case
    and spacing are aside), copies with a typo, and answers of the students' own?"""
    import random

    from autograder.marking.groups import normalise

    model = (
        "The large set lowers the loss because each rule is seen more often. A larger model helps more on it. "
        "On the small set the model memorises words, so the gap grows. The loss decreases about ten times."
    )
    made = bench.written_answers(model, ["Attention is blind to order without positions."], 300, random.Random(0))
    kinds = {kind for kind, _ in made}
    copied = {normalise(text) for kind, text in made if kind == "copied"}
    own = [text for kind, text in made if kind in ("paraphrase", "other")]
    assert kinds == {"blank", "copied", "typo", "paraphrase", "other"}
    assert len(copied) <= 3 < sum(kind == "copied" for kind, _ in made)
    assert len(set(own)) > 0.8 * len(own)


def test_mark_class_is_a_graded_out_to_mark(tmp_path, capsys):
    """Is `bench --mark`'s synthetic OUT one `mark` reads: every student's answer to each written cell, the blank
    ones already 0 and the others to grade?"""
    from autograder.content import build
    from autograder.marking import mark
    from tests.fixtures import toy

    template = build.template(tmp_path / "template", toy.TOY_SOURCE)
    kinds = bench.mark_class(tmp_path / "out", 40, toy.TOY_SOURCE, template)
    blank = kinds["toy", "written_toy"]["blank"]
    assert len(mark.collect(tmp_path / "out")) == 40
    assert mark.main(out=tmp_path / "out", source=toy.TOY_SOURCE, status=True) == 0
    assert f"toy/written_toy: 0 of 40 graded, {blank} blank (0), {40 - blank} to grade" in capsys.readouterr().out


@pytest.mark.slow
def test_bench_mark_prints_each_figure(tmp_path, capsys):
    """Does `bench --mark` on a small class print the time of grouping (fresh, warm, from kept rows), of the page
    and its groups by meaning, of a group action and of the refresh after it, of one answer, of an item edit, and
    of a restarted page's groups?"""
    import re

    assert bench.main(students=12, mark=True, keep=tmp_path) == 0
    said = capsys.readouterr().out
    for figure in (
        r"grouping nmt/written_study_analysis \(12 answers, target: <= 10 s\): [\d.]+ s with minilm",
        r"grouping .*, [\d.]+ s from rows kept in OUT \(a restarted page\), [\d.]+ s with tfidf",
        r"page for 12 answers \(target: <= 2 s\), on a server just started: [\d.]+ s the first time \(with groups by "
        r"(words|meaning).*\); groups by meaning ready [\d.]+ s after the start; .* [\d.]+ s loaded again",
        r"a restarted server had the question's groups [\d.]+ s after its start",
        r"group action \(.*; target: <= 200 ms\): \d+ ms; grades.csv, .* followed [\d.]+ s later",
        r"one answer: \d+ ms; its pages followed [\d.]+ s later",
        r"item text edited, .*: \d+ ms; their pages followed [\d.]+ s later",
    ):
        assert re.search(figure, said), f"expected a line matching {figure!r} in:\n{said}"


@pytest.mark.slow
def test_bench_pipeline_replays_one_student_for_the_class(tmp_path, capsys):
    """Does `bench --pipeline` grade one real student, then the whole synthetic class from that recorded result,
    every student graded, and print the pipeline's own cost a student with its parts and the peak memory?"""
    import csv
    import re

    assert bench.main(students=4, pipeline=True, keep=tmp_path) == 0
    said = capsys.readouterr().out
    assert re.search(r"one real student graded in [\d.]+ s \(kernels\)", said), said
    assert re.search(r"4 students x 4 notebooks: the pipeline's own [\d.]+ s, [\d.]+ ms a student", said), said
    assert re.search(r"peak memory \d+ MiB in this process, \d+ MiB with the processes it started", said), said
    parts = ("ingest", "record (notebooks, state, gradebook merge)", "pages moved into OUT", "CSVs", "similarity")
    for part in parts + (
        "exports (Canvas, Moodle)",
        "not in a step (the hand-off to the page process and back, scheduling, logs)",
    ):
        assert re.search(rf"  {re.escape(part)}: [\d.]+ s, [\d.]+ ms a student", said), (part, said)
    with open(tmp_path / "out" / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len({r["student"] for r in rows}) == 4
    for notebook in {r["notebook"] for r in rows}:  # every student's score and status are the recorded ones
        assert len({(r["score"], r["status"]) for r in rows if r["notebook"] == notebook}) == 1, notebook
    recorded = (tmp_path / "out-one" / "feedback" / "reference" / "nmt.html").read_bytes()
    for student in {r["student"] for r in rows}:  # and their pages, read back by the page stage, the recorded ones
        assert (tmp_path / "out" / "feedback" / student / "nmt.html").read_bytes() == recorded, student


@pytest.mark.slow
def test_bench_pipeline_submits_only_the_notebooks_asked_for(tmp_path, capsys):
    """With --notebooks, does `bench --pipeline` have its real student and the class submit just those notebooks
    (the others recorded as missing), as the grading bench does?"""
    assert bench.main(students=2, pipeline=True, keep=tmp_path, notebooks=["theory"]) == 0
    assert sorted(p.name for p in (tmp_path / "one" / "reference").iterdir()) == ["theory.ipynb"]
    with open(tmp_path / "out" / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len({r["student"] for r in rows}) == 2
    missing = {r["notebook"] for r in rows if r["status"].startswith("missing")}
    assert missing == set(contract.NOTEBOOKS) - {"theory"}, rows


@pytest.mark.parametrize(
    "options, said",
    [
        ({"notebooks": ["nmt", "nmtt"]}, "bench: no notebook nmtt in this course (nmt, bert, clip, theory)"),
        ({"notebooks": ["nmt"], "similarity": True}, "bench: --notebooks is for grading"),
        ({"notebooks": ["nmt"], "term": True}, "bench: --notebooks is for grading"),
    ],
    ids=["an unknown notebook", "with --similarity", "with --term"],
)
def test_bench_refuses_notebooks_it_cannot_use_in_one_line(tmp_path, capsys, options, said):
    """Is `bench --notebooks` with a notebook the course lacks, or with a bench that submits no notebooks, refused
    with one line and exit status 2, before anything is built?"""
    assert bench.main(students=1, keep=tmp_path / "work", **options) == 2
    err = capsys.readouterr().err
    assert err.startswith(said) and err.count("\n") == 1, err
    assert not (tmp_path / "work").exists()


def test_resident_memory_grows_with_what_the_process_holds():
    """Does resident_mib, which bench --pipeline reports at the end of each step, see 64 MiB the process fills?"""
    before = bench.resident_mib()
    block = b"x" * (64 * 2**20)
    assert bench.resident_mib() - before > 48 and len(block)
