"""The TA's loop end to end: formgrader opened on a graded OUT by one command, a hand grade entered in its
manual grading view in headless Chromium, then seen in grades.csv and the feedback page after `feedback`;
a hostile written answer runs nothing there."""

import csv
import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request

import nbformat
import pytest

from autograder.grading import pipeline
from autograder.reports import feedback, formgrader
from tests.fixtures import toy
from tests.reports.browser import Browser, free_port
from tests.reports.payloads import MARK, MARKDOWN_PAYLOADS, OUTPUT_PAYLOADS

TOKEN = "a3-test-token"
HOSTILE = "By counting.\n\n" + "\n\n".join(p.format(js=MARK.format(n=i)) for i, p in enumerate(MARKDOWN_PAYLOADS))


def hostile_submission(release_nb):
    """The toy solved, a written answer carrying every markdown payload, the provided setup cell's saved
    outputs carrying every output payload (they reach formgrader as the student's own run)."""
    nb = toy.fill(release_nb, dict(toy.RIGHT, written_toy=HOSTILE))
    setup = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    setup.outputs = [
        nbformat.v4.new_output(
            "display_data", data={**{k: v.format(js=MARK.format(n=50 + i)) for k, v in p.items()}, "text/plain": "x"}
        )
        for i, p in enumerate(OUTPUT_PAYLOADS)
    ]
    return nb


def status_of(base, path, method="GET", body=None):
    """The HTTP status formgrader's server answers a request with (4xx and 5xx included)."""
    try:
        call(base, path, method, body)
        return 200
    except urllib.error.HTTPError as e:
        return e.code


def call(base, path, method="GET", body=None):
    request = urllib.request.Request(
        f"{base}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {TOKEN}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    return json.loads(text) if path.startswith("/formgrader/api") else text


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A graded toy OUT with formgrader serving it, as `python -m autograder formgrader OUT` starts it."""
    root = tmp_path_factory.mktemp("formgrader")
    rel = toy.release(tmp_path_factory.getbasetemp())
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    subs = toy.write_students(root / "subs", rel, {"ann": hostile_submission(nb)})
    out = root / "out"
    pipeline.grade(subs, out, workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    env, _ = formgrader.prepare(out)
    port = free_port()
    proc = subprocess.Popen(
        formgrader.command(out, port, browser=False, token=TOKEN),
        cwd=out,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                call(base, "/formgrader/api/status")
                break
            except OSError:
                time.sleep(0.5)
        else:
            proc.kill()
            pytest.fail(f"formgrader did not start: {proc.stderr.read()[-500:]}")
        yield base, out
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.slow
def test_formgrader_lists_the_assignment(server):
    """Does formgrader, started by the kit on OUT, list the assignment with its one submission?"""
    base, _ = server
    assignments = call(base, "/formgrader/api/assignments")
    assert [(a["name"], a["num_submissions"]) for a in assignments] == [("a3", 1)]


@pytest.mark.slow
def test_manual_grading_view_shows_the_written_answer(server):
    """Does formgrader's manual grading page of the student's notebook open and show the written answer?"""
    base, _ = server
    (notebook,) = call(base, "/formgrader/api/submitted_notebooks/a3/toy")
    page = call(base, f"/formgrader/submissions/{notebook['id']}/")
    assert "By counting." in page and "written_toy" in page and "<script>document" not in page


@pytest.fixture(scope="module")
def grading_view(server, tmp_path_factory):
    """Chromium on formgrader's manual grading view of ann's notebook (console errors collected)."""
    base, _ = server
    (notebook,) = call(base, "/formgrader/api/submitted_notebooks/a3/toy")
    browser = Browser(tmp_path_factory.mktemp("chromium"))
    browser.send("Runtime.enable")
    browser.open(f"{base}/?token={TOKEN}", "document.title")  # the URL the server prints: logs the TA in
    browser.open(
        f"{base}/formgrader/submissions/{notebook['id']}/",
        "window.formgrader && formgrader.grades.findWhere({name: 'written_toy'})",
    )
    yield browser
    browser.close()


@pytest.mark.slow
def test_grading_view_runs_nothing_a_student_wrote(grading_view):
    """In formgrader's grading view of a submission with scripts, event handlers, javascript: links, SVG and
    iframes in its written answer and outputs, did none run, and did the page's own script start (no
    'MathJax is not defined' offline)?"""
    time.sleep(1)
    assert grading_view.run('document.body.innerText.includes("the student\'s own run")'), "outputs not shown"
    assert grading_view.run("document.body.getAttribute('data-pwned')") is None
    assert grading_view.run("document.querySelectorAll('iframe, svg script, [onerror], [onload]').length") == 0
    assert grading_view.run("document.body.innerText.includes('By counting.')")
    assert grading_view.run("typeof MathJax !== 'undefined' && MathJax.loaded === true")


@pytest.mark.slow
def test_a_hand_grade_entered_in_formgrader_reaches_grades_csv(server, grading_view):
    """After a TA types a score and a comment into formgrader's grading view and runs `feedback OUT`, are they
    in grades.csv and on the student's feedback page?"""
    base, out = server
    grading_view.run(
        "$('#written_toy').val('1').trigger('change'); "
        "$('#written_toy-comment').val('Nicely put.').trigger('change'); true"
    )
    (notebook,) = call(base, "/formgrader/api/submitted_notebooks/a3/toy")
    for _ in range(40):  # the page saves through formgrader's API in the background
        grades = call(base, f"/formgrader/api/grades?submission_id={notebook['id']}")
        comments = call(base, f"/formgrader/api/comments?submission_id={notebook['id']}")
        saved = (
            next(g for g in grades if g["name"] == "written_toy")["manual_score"],
            next(c for c in comments if c["name"] == "written_toy")["manual_comment"],
        )
        if saved == (1, "Nicely put."):
            break
        time.sleep(0.25)
    assert saved == (1, "Nicely put."), f"formgrader saved {saved}"
    assert feedback.main(out=out) == 0
    with open(out / "grades.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert (row["written_score"], row["written_max_score"], row["ungraded"]) == ("1", "1", "")
    assert "Nicely put." in (out / "feedback" / "ann" / "toy.html").read_text()


def test_formgrader_on_an_ungraded_folder_fails_clearly(tmp_path, capsys):
    """Does `python -m autograder formgrader` on a folder without a gradebook exit 1 with one clear line?"""
    assert formgrader.main(out=tmp_path) == 1
    err = capsys.readouterr().err.strip()
    assert "gradebook.db not found: grade first" in err and len(err.splitlines()) == 1


@pytest.mark.slow
def test_formgrader_serves_no_lab_or_terminals(server):
    """Does the server the kit starts serve formgrader only: no JupyterLab, no notebook UI, no terminal?"""
    base, _ = server
    assert status_of(base, "/formgrader/api/status") == 200
    assert status_of(base, "/lab") == 404
    assert status_of(base, "/api/terminals") == 404
    assert status_of(base, "/api/terminals", method="POST", body={}) == 404
    assert status_of(base, "/tree") == 404


@pytest.mark.slow
def test_formgrader_course_folder_holds_no_solutions(server):
    """Is the course folder formgrader reads free of the instructor notebooks (solutions, hidden tests)?"""
    _, out = server
    assert not list((out / "source").rglob("*.ipynb")), "instructor notebooks copied into OUT"
    assert (out / "source" / "a3").is_dir(), "formgrader lists the assignment by this folder"


def test_formgrader_removes_solutions_an_older_kit_copied_and_says_so(tmp_path):
    """When OUT holds the instructor notebooks an older version copied, does prepare remove them and say so?"""
    old = tmp_path / "source" / "a3"
    old.mkdir(parents=True)
    shutil.copy2(toy.TOY_SOURCE / "toy.ipynb", old / "toy.ipynb")
    (tmp_path / "autograded" / "李明" / "a3").mkdir(parents=True)
    _, notes = formgrader.prepare(tmp_path)
    assert not list(old.glob("*.ipynb"))
    assert any("removed 1 instructor notebook(s) with solutions and hidden tests" in line for line in notes)
    assert any("no solutions or hidden tests" in line and "submitted/ (1 student(s)" in line for line in notes)


@pytest.mark.slow
def test_formgrader_links_survive_grade_force(tmp_path_factory):
    """After `grade --force`, does formgrader's link to a student's notebook (/formgrader/submissions/<id>/) still
    open that student's notebook, for students named 李明 and Zoë Ñúñez?"""
    from nbgrader.api import Gradebook

    root = tmp_path_factory.mktemp("links")
    rel = toy.release(tmp_path_factory.getbasetemp())
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    subs = toy.write_students(root / "subs", rel, {"李明": toy.fill(nb, toy.RIGHT), "Zoë Ñúñez": nb})
    out = root / "out"
    kwargs = dict(workers=1, source=toy.TOY_SOURCE, ingest_fn=pipeline.plain_ingest)
    pipeline.grade(subs, out, **kwargs)
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        before = {(s.student.id, s.name): (s.id, sorted(g.id for g in s.grades)) for s in _notebooks(gb)}
    assert len(before) == 2
    pipeline.grade(subs, out, force=True, **kwargs)
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        after = {(s.student.id, s.name): (s.id, sorted(g.id for g in s.grades)) for s in _notebooks(gb)}
        for (student, name), (link, _) in before.items():
            again = gb.find_submission_notebook_by_id(link)
            assert (again.student.id, again.name) == (student, name)
    assert after == before


def _notebooks(gb):
    """Every submitted notebook of the assignment in a gradebook."""
    return [nb for sub in gb.assignment_submissions("a3") for nb in sub.notebooks]
