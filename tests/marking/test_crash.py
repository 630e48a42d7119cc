"""No acknowledged mark is ever lost (autograder/marking/log.py, pages.py): the page killed with SIGKILL while a TA
marks, started again; two pages on one OUT refreshing the same student's page."""

import html
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from autograder import rubrics
from autograder.marking import mark, pages
from autograder.marking import server as mark_server
from autograder.out import Out
from autograder.records import Results
from tests.marking.test_mark import graded, hand, out, read_csv, source  # noqa: F401
from tests.marking.test_server import post, serving

CELL = {"notebook": "toy", "grade_id": "written_toy"}
MARKED = ("Zoë Ñúñez", "李明", "Anna Lee~moodle11")  # the answers that are not blank
CHOICES = [["counting"], ["order"], ["counting", "order"], [], ["circular"], ["order", "circular"]]


def start(out):  # noqa: F811
    """`mark OUT` as a TA starts it, in a process of its own; (process, base address, token)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "autograder", "mark", str(out), "--source", str(source(out)), "--port", "0",
         "--encoder", "tfidf", "--no-browser", "--grader", "ta-ana"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("grading by question at "):
            url = line.split()[4]
            threading.Thread(target=proc.stdout.read, daemon=True).start()  # never let its pipe fill
            return proc, url.split("/?")[0], url.split("token=")[1]
    raise AssertionError(f"the page did not start: {''.join(lines)[-500:]}")


def marking_until_killed(base, token, seconds, acked, in_flight):
    """Mark answers one after another (as fast as the page answers) until the process is gone; `acked` gets the
    items of every answered mark, `in_flight` those of a mark sent and not answered."""
    versions = {}
    deadline = time.time() + seconds + 30
    while time.time() < deadline:
        student = random.choice(MARKED)
        items = random.choice(CHOICES)
        who = mark_server.pseudonym(student)
        in_flight[student] = items
        try:
            status, reply = post(base, "/api/mark", dict(CELL, marks=[{"student": who, "items": items,
                                                                          "version": versions.get(who, "")}]), token)  # fmt: skip
        except (urllib.error.URLError, ConnectionError, OSError):
            return
        if status == 409:
            versions[who] = reply["now"][who]["version"]
            del in_flight[student]
            continue
        assert status == 200, reply
        versions[who] = reply["answers"][who]["version"]
        acked[student] = items
        del in_flight[student]


@pytest.mark.slow
def test_no_acknowledged_mark_is_lost_to_kill_9(out):  # noqa: F811
    """Killed with SIGKILL six times at random moments while a TA marks as fast as it answers, then started again:
    does every answer end with its last acknowledged mark (or the one in flight at the kill) in the log, the
    gradebook, grades.csv and the student's page, with the log whole?"""
    random.seed(7)
    acked, maybe = {}, {}
    for _ in range(6):
        proc, base, token = start(out)
        in_flight = {}
        client = threading.Thread(target=marking_until_killed, args=(base, token, 5, acked, in_flight))
        client.start()
        time.sleep(random.uniform(0.3, 2.0))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        client.join(60)
        for student, items in in_flight.items():  # sent, never answered: it may or may not have landed
            maybe[student] = items
        for student in acked:
            if student not in in_flight:
                maybe.pop(student, None)
    assert acked, "no mark was acknowledged before the kills"
    proc, base, token = start(out)  # the last start: it redoes what the kills interrupted
    try:
        deadline = time.time() + 120
        while pages.pending(out) and time.time() < deadline:
            time.sleep(0.2)
        assert not pages.pending(out), "the pages noted before the kills were not rendered again"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    assert all(line.endswith("}") for line in Out(out).marks.read_text().splitlines())
    latest = mark.read_log(out)[0]
    rubric = rubrics.load(source(out) / rubrics.FILENAME)[("toy", "written_toy")]
    rows = {r["student"]: r for r in read_csv(out / "grades.csv")}
    for student in MARKED:
        if student not in acked:
            continue
        got = list(latest[(student, "toy", "written_toy")].items)
        assert got in (acked[student], maybe.get(student)), f"{student}: {got}, acknowledged {acked[student]}"
        score = rubrics.score(rubric, got, 0.0, 1.0)
        assert hand(out, student).score == score
        assert float(rows[student]["written_score"]) == score
        page = (out / "feedback" / student / "toy.html").read_text()
        assert all(html.escape(line, quote=False) in page for line in hand(out, student).comment.splitlines())


def test_an_interrupted_refresh_is_redone_at_the_next_start(out):  # noqa: F811
    """When the pages a mark changed were noted but never rendered (killed in between), does the next start render
    them and cross them off?"""
    marking = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
    with serving(marking) as base:
        who = mark_server.pseudonym("李明")
        assert post(base, "/api/mark", dict(CELL, marks=[{"student": who, "items": ["order"]}]))[0] == 200
    marking.close()
    assert marking.settle()
    page = out / "feedback" / "李明" / "toy.html"
    page.write_text("stale")
    pages.note(out, {("李明", "toy")})  # as a kill between the gradebook and the refresh leaves it
    again = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
    assert again.settle(120)
    again.close()
    assert "Says the count does not depend on the order." in page.read_text() and not pages.pending(out)


def test_two_refreshes_on_one_out_never_overwrite_a_newer_one(out):  # noqa: F811
    """When one page's refresh has read the gradebook and is slow to write a student's page, and another page marks
    the same student meanwhile, does the student's page end with the newer mark, not the older refresh?"""
    from autograder.reports import feedback

    entered, go = threading.Event(), threading.Event()

    def slow(students, notebooks):  # reads the gradebook, then waits before writing the page
        hand_grades = Results(out).hand_grades()
        entered.set()
        go.wait(60)
        feedback.rerender(out, students=students, notebooks=notebooks, source=source(out), hand=hand_grades)

    def fast(students, notebooks):
        feedback.rerender(out, students=students, notebooks=notebooks, source=source(out))

    def marked(items, grader, version=""):
        marking = mark_server.Marking(out, source(out), grader, "tfidf")
        marking._refresh = lambda: None  # no refresh of its own: this test runs them
        status, reply = marking.apply(("toy", "written_toy"), [{"student": mark_server.pseudonym("李明"),
                                                                "items": items, "version": version}])  # fmt: skip
        marking.close()
        assert status == 200
        return reply["answers"][mark_server.pseudonym("李明")]["version"]

    version = marked(["order"], "ta-ana")
    first = threading.Thread(target=pages.refresh, args=(out, slow))
    first.start()
    assert entered.wait(60)
    marked(["counting"], "ta-ben", version)
    second = threading.Thread(target=pages.refresh, args=(out, fast))
    second.start()
    time.sleep(0.5)
    go.set()
    first.join(60)
    second.join(60)
    page = (out / "feedback" / "李明" / "toy.html").read_text()
    assert "Relates addition to counting." in page and "Says the count does not depend on the order." not in page
    assert not pages.pending(out)
