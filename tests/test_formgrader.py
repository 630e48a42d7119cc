"""The TA's loop end to end: formgrader opened on a graded OUT by one command, a hand grade entered through
formgrader's own API, then seen in grades.csv and the feedback page after `feedback`."""
import csv
import json
import socket
import subprocess
import time
import urllib.request

import nbformat
import pytest

from autograder import feedback, formgrader, grade
from tests.fixtures import toy

TOKEN = "a3-test-token"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, path, method="GET", body=None):
    request = urllib.request.Request(f"{base}{path}", method=method, data=None if body is None else
                                     json.dumps(body).encode(), headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    return json.loads(text) if path.startswith("/formgrader/api") else text


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A graded toy OUT with formgrader serving it, as `python -m autograder formgrader OUT` starts it."""
    root = tmp_path_factory.mktemp("formgrader")
    rel = toy.release(tmp_path_factory.getbasetemp())
    nb = nbformat.read(rel / "toy.ipynb", as_version=4)
    subs = toy.write_students(root / "subs", rel, {"ann": toy.fill(nb, dict(toy.RIGHT, written_toy="By counting."))})
    out = root / "out"
    grade.grade(subs, out, workers=1, source=toy.TOY_SOURCE, ingest_fn=grade.plain_ingest)
    env = formgrader.prepare(out, source=toy.TOY_SOURCE)
    port = free_port()
    proc = subprocess.Popen(formgrader.command(out, port, browser=False, token=TOKEN), cwd=out, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
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


def test_formgrader_lists_the_assignment(server):
    """Does formgrader, started by the kit on OUT, list the assignment with its one submission?"""
    base, _ = server
    assignments = call(base, "/formgrader/api/assignments")
    assert [(a["name"], a["num_submissions"]) for a in assignments] == [("a3", 1)]


def test_manual_grading_view_shows_the_written_answer(server):
    """Does formgrader's manual grading page of the student's notebook open and show the written answer?"""
    base, _ = server
    (notebook,) = call(base, "/formgrader/api/submitted_notebooks/a3/toy")
    page = call(base, f"/formgrader/submissions/{notebook['id']}/")
    assert "By counting." in page and "written_toy" in page


def test_a_hand_grade_entered_in_formgrader_reaches_grades_csv(server):
    """After a TA enters a score and a comment in formgrader and runs `feedback OUT`, are they in grades.csv
    and on the student's feedback page?"""
    base, out = server
    (notebook,) = call(base, "/formgrader/api/submitted_notebooks/a3/toy")
    grades = call(base, f"/formgrader/api/grades?submission_id={notebook['id']}")
    written = next(g for g in grades if g["name"] == "written_toy")
    call(base, f"/formgrader/api/grade/{written['id']}", "PUT", {"manual_score": 1})
    comments = call(base, f"/formgrader/api/comments?submission_id={notebook['id']}")
    comment = next(c for c in comments if c["name"] == "written_toy")
    call(base, f"/formgrader/api/comment/{comment['id']}", "PUT", {"manual_comment": "Nicely put."})
    assert feedback.main([str(out)]) == 0
    with open(out / "grades.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert (row["written_score"], row["written_max_score"], row["ungraded"]) == ("1", "1", "")
    assert "Nicely put." in (out / "feedback" / "ann" / "toy.html").read_text()
