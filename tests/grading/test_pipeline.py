"""The grading command: scores, statuses, resume/idempotence, --force, pass tokens (toy course + real notebooks)."""

import csv
import dataclasses
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from autograder import contract, envvars, gradebook, paths
from autograder.checks import pass_token
from autograder.grading import pipeline, worker
from autograder.out import Out
from autograder.records import Results, StudentResult
from autograder.sandbox import slot
from tests.fixtures import toy


def rows(path):
    return list(csv.DictReader(open(path)))


def scores(out):
    return {(r["student"], r["notebook"]): r for r in rows(Path(out) / "grades.csv")}


def cell_scores(out, student):
    return {r["grade_id"]: r["score"] for r in rows(Path(out) / "grades_by_cell.csv") if r["student"] == student}


@pytest.fixture(scope="module")
def toy_graded(tmp_path_factory):
    return toy.graded(tmp_path_factory.getbasetemp())


def test_reference_gets_full_points(toy_graded):
    """Does the reference solution get every autograded point?"""
    out, _ = toy_graded
    row = scores(out)[("ref", "toy")]
    assert (row["score"], row["max_score"], row["status"]) == ("3", "3", "graded")


def test_grade_ends_with_the_similarity_report_for_tas(toy_graded):
    """Does `grade` write similarity.csv (the contract's columns first) and similarity.html, linked from the TA's
    index and from no student's page?"""
    out, _ = toy_graded
    header = (out / "similarity.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[:6] == ["notebook", "cell", "student_a", "student_b", "similarity", "flagged"], header
    assert (out / "similarity.html").exists() and "similarity.html" in (out / "feedback" / "index.html").read_text()
    assert "similarity" not in (out / "feedback" / "ref" / "toy.html").read_text().lower()


def test_each_students_pages_are_moved_into_place_and_none_are_left_staged(toy_graded):
    """Does every graded student's page and reader-safe notebook end up in feedback/ and autograded/, with nothing
    left in OUT/.cache/pages, where the page stage wrote them?"""
    out, _ = toy_graded
    assert (out / "feedback" / "ref" / "toy.html").is_file() and (
        out / "autograded" / "ref" / "a3" / "toy.ipynb"
    ).is_file()
    assert not (out / ".cache" / "pages").exists()


def test_untouched_release_gets_zero_and_is_graded(toy_graded):
    """Does the untouched release score 0 with status `graded` (not an error)?"""
    out, _ = toy_graded
    row = scores(out)[("untouched", "toy")]
    assert (row["score"], row["status"]) == ("0", "graded")


def test_one_wrong_cell_loses_exactly_its_points(toy_graded):
    """Does a submission with one wrong cell lose that cell's points and only those?"""
    out, _ = toy_graded
    assert cell_scores(out, "wrongmul") == {"add": "1", "mul": "0", "written_toy": "0"}  # the answer is blank
    assert scores(out)[("wrongmul", "toy")]["score"] == "1"


def test_missing_notebook_is_recorded_as_missing(toy_graded):
    """Is a student without the notebook recorded as `missing` with score 0?"""
    out, _ = toy_graded
    row = scores(out)[("nothing", "toy")]
    assert (row["score"], row["max_score"], row["status"]) == ("0", "3", "missing")


def test_unreadable_notebook_gets_a_reason_and_the_batch_goes_on(toy_graded):
    """Does a notebook nbgrader cannot read get a one-line reason, while the other students are graded?"""
    out, summary = toy_graded
    row = scores(out)[("broken", "toy")]
    assert row["score"] == "0" and row["status"].startswith("nbgrader could not grade it"), row
    assert "\n" not in row["status"]
    assert len(scores(out)) == 5


def test_every_student_and_cell_appears_once(toy_graded):
    """Does grades_by_cell.csv hold one row per student x autograded cell (ids without `test_`) and one per
    written answer, a missing notebook's included (it scores 0)?"""
    out, _ = toy_graded
    keys = [(r["student"], r["grade_id"]) for r in rows(out / "grades_by_cell.csv")]
    students = ("ref", "untouched", "wrongmul", "nothing", "broken")
    assert sorted(keys) == sorted([(s, g) for s in students for g in ("add", "mul", "written_toy")])


def test_log_records_failures(toy_graded):
    """Does grading.log name the failed check and the unreadable notebook?"""
    out, _ = toy_graded
    log = (out / "grading.log").read_text()
    assert "CHECK wrongmul/toy/mul: 0/2: CheckFailed: mul: mul(4, -3) should be -12, got 12" in log
    assert "FAILED broken/toy" in log


def test_course_gradebook_holds_merged_scores(toy_graded):
    """Does OUT/gradebook.db (merged from the shards) hold each student's verified score?"""
    from nbgrader.api import Gradebook

    out, _ = toy_graded
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        got = {s: gb.find_submission(contract.ASSIGNMENT, s).score for s in ("ref", "untouched", "wrongmul")}
    assert got == {"ref": 3.0, "untouched": 0.0, "wrongmul": 1.0}


def test_rerun_skips_graded_students_without_duplicates(toy_graded, tmp_path):
    """Does a second run on the same OUT skip graded students and keep one row per student x notebook?"""
    out, _ = toy_graded
    subs = tmp_path / "subs"
    shutil.copytree(out.parent / "toy_subs", subs)
    before = (out / "grades.csv").read_text()
    summary = pipeline.grade(subs, out, workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    assert set(summary.skipped) == {"ref", "untouched", "wrongmul", "nothing", "broken"}
    assert summary.graded == []
    assert (out / "grades.csv").read_text() == before


@pytest.mark.slow
def test_force_regrades(tmp_path):
    """Does --force regrade a student already graded in OUT from the same files (and still keep one row)?"""
    rel = toy.release(tmp_path.parent)
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    subs = toy.write_students(tmp_path / "subs", rel, {"alice": toy.fill(nb, toy.RIGHT)})
    out = tmp_path / "out"
    pipeline.grade(subs, out, workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    kept = pipeline.grade(subs, out, workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    assert kept.skipped == ["alice"] and scores(out)[("alice", "toy")]["score"] == "3"
    redone = pipeline.grade(subs, out, workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest, force=True)
    assert redone.graded == ["alice"]
    assert len(rows(out / "grades.csv")) == 1 and scores(out)[("alice", "toy")]["score"] == "3"


@pytest.mark.slow
def test_students_with_most_notebooks_are_started_first(tmp_path, monkeypatch):
    """Are the heaviest students handed out first, so no worker is left alone with a full one at the end?"""
    rel = toy.release(tmp_path.parent)
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    subs = toy.write_students(tmp_path / "subs", rel, {"anna": None, "bob": None, "zoe": toy.fill(nb, toy.RIGHT)})
    started = []
    real_run = pipeline.scheduler.run

    def spy(tasks, fn, **kwargs):
        started.extend(t.student for t in tasks)
        return real_run(tasks, fn, **kwargs)

    monkeypatch.setattr(pipeline.scheduler, "run", spy)
    summary = pipeline.grade(subs, tmp_path / "out", workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    assert started == ["zoe", "anna", "bob"], f"expected zoe (one notebook) before the empty ones, saw {started}"
    assert summary.graded == ["anna", "bob", "zoe"]


@pytest.mark.slow
def test_run_past_the_notebook_time_limit_is_stopped_with_a_reason(tmp_path):
    """Is an nbgrader run that outlasts the notebook time limit killed, and recorded with a reason?"""
    rel = toy.release(tmp_path.parent)
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    slow = dict(toy.RIGHT, add="import time\ntime.sleep(120)\n" + toy.RIGHT["add"])
    subs = toy.write_students(tmp_path / "subs", rel, {"slow": toy.fill(nb, slow)})
    out = tmp_path / "out"
    pipeline.grade(subs, out, workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest, notebook_timeout=8)
    row = scores(out)[("slow", "toy")]
    assert row["status"] == "notebook ran past 8 s and was stopped" and row["score"] == "0", f"saw {row}"


@pytest.mark.slow
def test_cli_grades_into_out(tmp_path):
    """Does `python -m autograder grade SUBMISSIONS --out OUT` exit 0 and write both CSVs?"""
    from autograder.cli import main

    rel = toy.release(tmp_path.parent)
    subs = toy.write_students(tmp_path / "subs", rel, {"bob": None})
    out = tmp_path / "out"
    assert main(["grade", str(subs), "--out", str(out), "--workers", "1", "--source", str(toy.TOY_SOURCE)]) == 0
    assert rows(out / "grades.csv") == [
        {
            "student": "bob",
            "notebook": "toy",
            "score": "0",
            "max_score": "3",
            "status": "missing",
            "written_score": "0",
            "written_max_score": "1",
            "ungraded": "",
            "flags": "",
            "submitted_as": "bob",
            **dict.fromkeys(["submitted_at", "due", "late_units", "late_penalty"], ""),  # no course file: no term
        }
    ]
    assert (out / "grades_by_cell.csv").exists()


# --- pass-token verification (unit level) -----------------------------------------------------------

KEY = b"k" * 32


def test_cell(text, error=None):
    cell = nbformat.v4.new_code_cell("check(x)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    if error:
        cell.outputs.append(nbformat.v4.new_output("error", ename=error[0], evalue=error[1], traceback=[]))
    return cell


test_cell.__test__ = False  # a helper, not a test


def test_valid_token_earns_the_points():
    """Is a cell with nbgrader's points and a valid pass token awarded its points?"""
    cell = test_cell(f"PASSED add [a3:{pass_token('add', KEY)}]\n")
    assert worker.verify_cell(cell, "add", KEY, 2.0, 2.0) == (2.0, "passed")


@pytest.mark.parametrize(
    "text",
    [
        "PASSED add\n",  # fake autograder module printing a pass line without a token
        "PASSED add [a3:0123456789abcdef0123]\n",  # a made-up token
        f"PASSED mul [a3:{pass_token('mul', KEY)}]\n",  # a real token for another cell
        f"PASSED add [a3:{pass_token('add', b'other key')}]\n",  # a token from another grading run
        f"print('PASSED add [a3:{pass_token('add', KEY)}]')  # quoted\n",  # token not on its own PASSED line
        "",  # hidden check deleted (nbgrader would still give full points)
    ],
)
def test_missing_or_forged_token_earns_nothing(text):
    """Does a cell that nbgrader scored earn 0 without a valid pass token for its own grade id?"""
    score, note = worker.verify_cell(test_cell(text), "add", KEY, 2.0, 2.0)
    assert score == 0.0 and "pass token" in note


def test_error_output_earns_nothing_even_with_token():
    """Does an error after the check passed (e.g. a later visible assert) still score 0?"""
    cell = test_cell(f"PASSED add [a3:{pass_token('add', KEY)}]\n", error=("AssertionError", "shape"))
    assert worker.verify_cell(cell, "add", KEY, 0.0, 2.0) == (0.0, "AssertionError: shape")


def test_valid_ungradable_token_means_manual_grading():
    """Is a cell whose check says UNGRADABLE (valid token) left to manual grading: score None, not 0?"""
    token = pass_token("ungradable:cap", KEY)
    cell = test_cell(
        f"UNGRADABLE cap [a3:{token}]: real weights unavailable\n",
        error=("CheckFailed", "cap: not graded automatically"),
    )
    score, note = worker.verify_cell(cell, "cap", KEY, 0.0, 1.0)
    assert score is None and note == "needs manual grading: real weights unavailable"


def test_forged_ungradable_token_scores_zero():
    """Does a forged UNGRADABLE line (wrong token) score 0 instead of escaping to manual grading?"""
    cell = test_cell("UNGRADABLE cap [a3:0000]: trust me\n", error=("CheckFailed", "cap: wrong"))
    assert worker.verify_cell(cell, "cap", KEY, 0.0, 1.0)[0] == 0.0


def test_missing_test_cell_scores_zero():
    """Does a notebook without the test cell score 0 for it?"""
    assert worker.verify_cell(None, "add", KEY, None, 1.0)[0] == 0.0


# --- the real notebooks ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nmt_graded(tmp_path_factory):
    """reference, untouched release and one wrong cell of the real nmt.ipynb, graded in one batch."""
    from autograder import demo
    from autograder.content import build

    if not (paths.SOURCE / "nmt.ipynb").exists():
        pytest.fail("source/a3/nmt.ipynb is missing")
    root = tmp_path_factory.mktemp("nmt")
    build.build(paths.SOURCE, root / "release")
    rel = nbformat.read(root / "release" / "nmt.ipynb", as_version=4)
    ref = demo.reference_submission(rel, nbformat.read(paths.SOURCE / "nmt.ipynb", as_version=4))
    wrong_id = "causal_scaled_dot_attention"
    wrong = demo.with_cell(ref, wrong_id, demo.wrong_samples("nmt")[wrong_id])
    subs = root / "subs"
    for student, nb in (("reference", ref), ("untouched", rel), ("wrong", wrong)):
        (subs / student).mkdir(parents=True)
        nbformat.write(nb, subs / student / "nmt.ipynb")
    out = root / "out"
    pipeline.grade(subs, out, workers=2)
    return out, wrong_id


@pytest.mark.slow
def test_nmt_reference_gets_full_points(nmt_graded):
    """Does the reference nmt.ipynb get all its autograded points?"""
    out, _ = nmt_graded
    row = scores(out)[("reference", "nmt")]
    full = str(contract.max_score("nmt"))
    assert (row["score"], row["max_score"], row["status"]) == (full, full, "graded"), row


@pytest.mark.slow
def test_nmt_untouched_release_gets_zero(nmt_graded):
    """Does the untouched nmt release score 0 with status `graded`?"""
    out, _ = nmt_graded
    row = scores(out)[("untouched", "nmt")]
    assert (row["score"], row["status"]) == ("0", "graded"), row


@pytest.mark.slow
def test_nmt_one_mutant_loses_exactly_that_cell(nmt_graded):
    """Does a wrong CausalScaledDotAttention lose its 2 points and nothing else?"""
    out, wrong_id = nmt_graded
    ref, got = cell_scores(out, "reference"), cell_scores(out, "wrong")
    assert {g for g in ref if ref[g] != got[g]} == {wrong_id}
    assert got[wrong_id] == "0"


@pytest.mark.slow
def test_one_process_grades_several_notebooks_each_under_its_own_key(tmp_path):
    """Do two notebooks graded by one nbgrader process both earn their points (each verified with its own key)?"""
    source = tmp_path / "source"
    shutil.copytree(toy.TOY_SOURCE, source)
    shutil.copy(source / "toy.ipynb", source / "toy2.ipynb")
    out = tmp_path / "out"
    from autograder.content import build

    build.build(source, tmp_path / "release")
    rel = nbformat.read(tmp_path / "release" / "toy.ipynb", as_version=4)
    subs = tmp_path / "subs" / "dana"
    subs.mkdir(parents=True)
    for name in ("toy", "toy2"):
        nbformat.write(toy.fill(rel, toy.RIGHT), subs / f"{name}.ipynb")
    pipeline.grade(subs.parent, out, workers=1, source=source, ingest_fn=pipeline.plain_ingest)
    got = scores(out)
    assert [(got[("dana", n)]["score"], got[("dana", n)]["status"]) for n in ("toy", "toy2")] == [("3", "graded")] * 2
    assert "RETRY" not in (out / "grading.log").read_text()  # both came from the shared run


def test_kernels_come_from_the_students_zygote(toy_graded):
    """Did the reference student's zygote preload and fork the kernel of its one notebook?"""
    import json

    out, _ = toy_graded
    state = json.loads((Path(out) / ".state" / "ref.json").read_text())
    assert state.get("zygote", {}).get("kernels") == 1, state.get("zygote")
    assert state["zygote"]["preload_seconds"] is not None
    assert "zygote not used" not in (Path(out) / "grading.log").read_text()


def test_students_share_the_workers_zygote(toy_graded):
    """Did the students graded in one process share one zygote, reset before each student after the first?"""
    import json

    out, _ = toy_graded
    states = [json.loads(p.read_text()) for p in sorted((Path(out) / ".state").glob("*.json"))]
    resets = sorted(s["zygote"]["resets"] for s in states if "zygote" in s)
    assert resets == list(range(len(resets))) and len(resets) >= 3, resets
    assert not list((Path(out) / ".work").glob(slot.PREFIX + "*")), "expected the slot removed at the end"


def test_each_notebook_records_its_kernel_start_within_its_overhead(toy_graded):
    """Does each graded notebook's timing say how long its kernel took to start, as part of its overhead?"""
    import json

    out, _ = toy_graded
    state = json.loads((Path(out) / ".state" / "ref.json").read_text())
    timing = state["notebooks"]["toy"]["timing"]
    assert 0 < timing["kernel_start"] <= timing["overhead"], timing


def test_check_modules_come_from_the_test_cells(toy_graded):
    """Are the modules the course's test cells import checks from (toycheck here) found in the template?"""
    out, _ = toy_graded
    assert worker.course_check_modules(Path(out) / ".cache" / "template") == ["toycheck"]


def test_a_copy_of_the_course_source_gets_the_repairing_ingest(tmp_path, monkeypatch):
    """Does `grade --source` with a copy of source/a3 (as the bench grades) repair submissions as the course source
    does, while another course's source (the toy) is taken as it is?"""
    copy = tmp_path / "source"
    shutil.copytree(paths.SOURCE, copy, ignore=shutil.ignore_patterns("data", "images"))
    seen = {}

    def fake_grade(submissions, out, options):
        seen[options.source] = options.ingest_fn
        return pipeline.Summary(students=1)

    monkeypatch.setattr(pipeline, "grade", fake_grade)
    monkeypatch.setattr(pipeline, "print_summary", lambda *a: None)
    for source in (paths.SOURCE, copy, toy.TOY_SOURCE):
        assert pipeline.main(submissions=tmp_path, out=tmp_path / "out", source=source) == 0
    assert seen == {paths.SOURCE: None, copy: None, toy.TOY_SOURCE: pipeline.plain_ingest}
    assert not pipeline.is_course_source(tmp_path / "empty")


def test_stages_stand_in_for_the_workers_own(toy_graded, tmp_path):
    """Does a run given Stages (as bench --pipeline replays results) call them instead of the worker's grade,
    render_pages and warm_up, and record what they return?"""
    out, _ = toy_graded
    recorded = Results(out).state("ref")
    calls = []

    def grade(task):
        calls.append(("grade", task.student))
        return worker.Graded(task, dataclasses.replace(recorded, student=task.student, shard=None, pages=""))

    def render_pages(done):
        calls.append(("render_pages", done.task.student))
        return done.result

    subs = tmp_path / "subs" / "erin"
    subs.mkdir(parents=True)
    shutil.copy(out.parent / "toy_subs" / "ref" / "toy.ipynb", subs / "toy.ipynb")
    stages = pipeline.Stages(grade=grade, render_pages=render_pages, warm_up=lambda task: calls.append(("warm", "")))
    summary = pipeline.grade(
        subs.parent, tmp_path / "out", workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest, stages=stages
    )
    assert summary.graded == ["erin"]
    assert calls == [("warm", ""), ("grade", "erin"), ("render_pages", "erin")]
    assert Results(tmp_path / "out").state("erin").notebooks == recorded.notebooks


def test_grading_keeps_the_rubric_it_graded_with(toy_graded):
    """Does `grade` keep the rubric in OUT, so that an edit of rubrics.toml before the first `mark` is logged?"""
    out, _ = toy_graded
    seen = json.loads(Out(out).rubric_seen.read_text(encoding="utf-8"))
    assert set(seen) == {"toy/written_toy"} and "counting" in seen["toy/written_toy"]


def test_grade_writes_its_stats_and_phases_where_bench_asks(tmp_path, monkeypatch):
    """With A3_RUN_STATS set (as bench sets it), does `grade` write the scheduler's stats and the run's phases there,
    and nothing without it?"""
    phases = {"set-up": 0.5, "take in": 0.25, "students": 3.0, "finish": 0.75}
    monkeypatch.setattr(pipeline, "grade", lambda *a, **kw: pipeline.Summary(students=1, phases=phases))
    monkeypatch.setattr(pipeline, "print_summary", lambda *a: None)
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    monkeypatch.delenv(envvars.RUN_STATS, raising=False)
    assert pipeline.main(submissions=tmp_path / "subs", out=tmp_path / "out", source=toy.TOY_SOURCE) == 0
    assert not list(tmp_path.glob("*.json"))
    monkeypatch.setenv(envvars.RUN_STATS, str(tmp_path / "stats.json"))
    assert pipeline.main(submissions=tmp_path / "subs", out=tmp_path / "out", source=toy.TOY_SOURCE) == 0
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["phases"] == phases and {"mode", "n_workers", "seconds", "workers"} <= set(stats)


@pytest.mark.slow
def test_one_worker_warms_up_before_ingest_and_grades_the_same(tmp_path, monkeypatch):
    """With one worker (grading in this process), does grade start the zygote and fork server before the
    ingest, for the students' template and threads, and still give the reference full points?"""
    calls = []
    real_warm_up, real_collect = worker.warm_up, pipeline.collect
    monkeypatch.setattr(worker, "warm_up", lambda task: calls.append(("warm_up", task)) or real_warm_up(task))
    monkeypatch.setattr(pipeline, "collect", lambda *a, **kw: calls.append(("collect", None)) or real_collect(*a, **kw))
    rel = toy.release(tmp_path.parent)
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    subs = toy.write_students(tmp_path / "subs", rel, {"alice": toy.fill(nb, toy.RIGHT)})
    out = tmp_path / "out"
    pipeline.grade(subs, out, workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    assert [name for name, _ in calls] == ["warm_up", "collect"]
    warm = calls[0][1]
    assert Path(warm.template) == out / ".cache" / "template" and warm.threads >= 1
    assert scores(out)[("alice", "toy")]["score"] == "3"


class Clock:
    """time.monotonic for the Recorder, moved by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class RecordedGroups:
    """A Results that keeps the groups it is asked to record (one list of students a gradebook commit)."""

    def __init__(self):
        self.groups = []

    def record_all(self, results):
        self.groups.append([r.student for r in results])
        return [gradebook.HandGrades(kept=r.student == "Zoë") for r in results]


@pytest.fixture
def recorder(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(pipeline.time, "monotonic", clock)
    return pipeline.Recorder(RecordedGroups()), clock


def test_results_that_come_slowly_are_recorded_each_at_once(recorder):
    """When results come further apart than GROUP_SECONDS (one kernel grading), is each recorded as it comes?"""
    rec, clock = recorder
    for student in ["ann", "Zoë", "李明"]:
        rec.add(StudentResult(student=student))
        assert rec.results.groups[-1] == [student] and rec.held == []
        clock.now += pipeline.GROUP_SECONDS * 4
    assert list(rec.hand) == ["Zoë"]


def test_results_that_come_fast_share_a_commit(recorder):
    """When results come faster than GROUP_SECONDS, are they held to be recorded together, the rest at flush?"""
    rec, clock = recorder
    rec.add(StudentResult(student="first"))
    for student in ["ann", "Zoë", "李明"]:
        clock.now += pipeline.GROUP_SECONDS / 4
        rec.add(StudentResult(student=student))
    clock.now += pipeline.GROUP_SECONDS / 2
    rec.add(StudentResult(student="bob"))
    rec.add(StudentResult(student="eve"))
    assert rec.results.groups == [["first"], ["ann", "Zoë", "李明", "bob"]] and [r.student for r in rec.held] == ["eve"]
    rec.flush()
    assert rec.results.groups[-1] == ["eve"] and rec.held == [] and list(rec.hand) == ["Zoë"]


def test_a_group_holds_a_student_once_and_at_most_group_most(recorder):
    """Is a student who comes again while held recorded first on their own commit, and a group never larger than
    GROUP_MOST?"""
    rec, clock = recorder
    rec.add(StudentResult(student="first"))
    rec.add(StudentResult(student="ann"))
    rec.add(StudentResult(student="ann"))
    assert rec.results.groups == [["first"], ["ann"]]
    for i in range(pipeline.GROUP_MOST * 2):
        rec.add(StudentResult(student=f"s{i}"))
    assert max(len(g) for g in rec.results.groups) == pipeline.GROUP_MOST


def test_an_interrupted_run_records_the_students_it_held(tmp_path, monkeypatch):
    """When grading stops (Ctrl-C) while results are held for a shared commit, are they recorded and in the CSVs?"""
    results = Results(tmp_path)
    layout = {"toy": {"tests": {"test_add": 1.0}, "manual": {}}}
    students = ["ann", "Zoë", "李明"]

    def interrupted(tasks, fn, on_result, **kwargs):
        for student in students:
            on_result(StudentResult.failed(student, layout, "stopped"))
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.scheduler, "run", interrupted)
    batch = SimpleNamespace(identity={s: {"submitted_as": s, "digest": "", "source": ""} for s in students})
    with pytest.raises(KeyboardInterrupt):
        pipeline.run_tasks([], batch, results, layout, pipeline.Options(workers=1))
    assert [s.student for s in results.states()] == sorted(students)
    assert {r["student"] for r in rows(tmp_path / "grades.csv")} == set(students)
