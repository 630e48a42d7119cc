"""The grading-by-question page of `mark OUT` (autograder.marking.server.py): behind a token,
anonymised, answers shown inert, marks applied to a group or an answer reaching the gradebook, grades.csv and the
student's page, item edits re-scoring every answer, a stale write refused."""

import contextlib
import json
import threading
import time
import urllib.error
import urllib.request

import pytest

from autograder import rubrics
from autograder.gradebook import HandGrade
from autograder.marking import mark, web
from autograder.marking import server as mark_server
from autograder.out import Out
from autograder.records import Results
from tests.marking.test_mark import RIGHT as RIGHT_TEXT
from tests.marking.test_mark import STUDENTS, graded, hand, out, read_csv, source  # noqa: F401

HOSTILE = 'See <script>alert("x")</script> <img src=x onerror=alert(1)> [link](javascript:alert(2))'


@contextlib.contextmanager
def serving(marking, token="tok-en"):
    """A page served for `marking` from a thread, as `mark OUT` serves it; its base address."""
    served = web.Served(marking, 0, token=token)
    try:
        yield served.base
    finally:
        served.stop()


@pytest.fixture
def served(out):  # noqa: F811
    """The page serving a copy of the graded OUT (one answer made hostile), as `mark OUT` starts it."""
    path = Results(out).autograded_path("Anna Lee~moodle11", "toy")
    path.write_text(path.read_text().replace("Because a + b = b + a.", json.dumps(HOSTILE)[1:-1]))
    marking = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
    with serving(marking) as base:
        yield base, out, marking
    marking.close()
    marking.settle()


def get(base, path, token="tok-en"):
    """A page, asked for by a script that sends the token in its Authorization header."""
    request = urllib.request.Request(base + path, headers={"Authorization": f"token {token}"} if token else {})
    with urllib.request.urlopen(request, timeout=30) as r:
        return r.read().decode(), r.headers


def post(base, path, body, token="tok-en"):
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"token {token}"} if token else {})
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def change(student, items, version="", adjustment=0, comment=""):
    return {
        "student": mark_server.pseudonym(student),
        "items": items,
        "version": version,
        "adjustment": adjustment,
        "comment": comment,
    }


def test_the_page_needs_the_token(served):
    """Is every page and call refused without the token (a page once opened with it keeps it as a cookie)?"""
    base, _, _ = served
    for path in ("/", "/q/toy/written_toy"):
        with pytest.raises(urllib.error.HTTPError) as caught:
            get(base, path, token="wrong")
        assert caught.value.code == 403
    assert post(base, "/api/mark", {}, token="")[0] == 403


def test_the_index_counts_each_question(served):
    """Does the index link each written question with how many of its answers are graded (blank ones count)?"""
    base, _, _ = served
    page, _ = get(base, "/")
    assert 'href="/q/toy/written_toy"' in page and "graded 1 of 4" in page
    assert "regrade request" not in page and "agreement on" not in page


def test_the_index_shows_open_regrades_and_agreement(served, tmp_path):
    """Once answers are double-marked and a regrade is requested, does the index say so for the question?"""
    base, folder, _ = served
    rows = "student,notebook,grade_id,items,adjustment,comment\n李明,toy,written_toy,order,,\n"
    (tmp_path / "a.csv").write_text(rows)
    (tmp_path / "b.csv").write_text(rows)
    (tmp_path / "r.csv").write_text("student,notebook,grade_id,reason\n李明,toy,written_toy,Please look again.\n")
    options = dict(out=folder, source=source(folder))
    assert mark.main(import_csv=tmp_path / "a.csv", grader="ta-ana", **options) == 0
    assert mark.main(import_csv=tmp_path / "b.csv", grader="ta-ben", second=True, **options) == 0
    assert mark.main(regrades=tmp_path / "r.csv", **options) == 0
    page, _ = get(base, "/")
    assert "1 regrade request(s) open" in page
    assert "agreement on 1 double-marked: kappa 1.00, mean |score difference| 0.00" in page


def test_students_are_anonymous_unless_asked(served):
    """Does the question page show stable pseudonyms and no name, and the names only with names=1?"""
    base, _, _ = served
    page, _ = get(base, "/q/toy/written_toy")
    assert all(name not in page for name in STUDENTS)
    assert mark_server.pseudonym("Zoë Ñúñez") in page and mark_server.pseudonym("Zoë Ñúñez") == mark_server.pseudonym(
        "Zoë Ñúñez"
    )
    named, _ = get(base, "/q/toy/written_toy?names=1")
    assert all(name in named for name in STUDENTS)


def test_a_hostile_answer_is_shown_as_text_under_a_strict_policy(served):
    """Is an answer with <script>, an <img onerror> and a javascript: link shown escaped, on a page whose policy
    runs only the page's own script?"""
    base, _, _ = served
    page, headers = get(base, "/q/toy/written_toy")
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    policy = headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "unsafe-inline" not in policy


def test_a_group_action_reaches_gradebook_grades_csv_and_the_students_page(served):
    """Does applying items to the two identical answers at once score both in the gradebook, grades.csv and
    their feedback pages, and count them as graded?"""
    base, folder, marking = served
    status, state = post(
        base,
        "/api/mark",
        {
            "notebook": "toy",
            "grade_id": "written_toy",
            "marks": [change(s, ["counting", "order"]) for s in ("Zoë Ñúñez", "李明")],
        },
    )
    assert status == 200 and state["graded"] == 3
    assert state["answers"][mark_server.pseudonym("李明")]["score"] == 1.0
    assert hand(folder, "Zoë Ñúñez").score == hand(folder, "李明").score == 1.0
    assert marking.settle()  # grades.csv and the pages follow in the page's own thread
    rows = {r["student"]: r for r in read_csv(folder / "grades.csv")}
    assert rows["李明"]["written_score"] == "1" and rows["李明"]["ungraded"] == ""
    page = (folder / "feedback" / "李明" / "toy.html").read_text()
    assert "Relates addition to counting." in page and "1 / 1" in page
    log = [json.loads(line) for line in Out(folder).marks.read_text().splitlines()]
    assert {(m["student"], m["grader"]) for m in log} == {("Zoë Ñúñez", "ta-ana"), ("李明", "ta-ana")}


def test_a_write_that_did_not_see_the_last_mark_is_refused(served):
    """When two TAs mark one answer from pages loaded before either wrote, is the later write refused with the
    other's grade shown, and written once it names the mark it replaces?"""
    base, folder, marking = served
    body = {"notebook": "toy", "grade_id": "written_toy"}
    assert post(base, "/api/mark", dict(body, marks=[change("李明", ["order"])]))[0] == 200
    status, reply = post(base, "/api/mark", dict(body, marks=[change("李明", ["counting"])]))
    assert status == 409 and reply["now"][mark_server.pseudonym("李明")]["items"] == ["order"]
    assert hand(folder, "李明").score == 0.5
    version = reply["now"][mark_server.pseudonym("李明")]["version"]
    assert post(base, "/api/mark", dict(body, marks=[change("李明", ["counting"], version)]))[0] == 200
    assert hand(folder, "李明").comment == "+0.5 Relates addition to counting."


def test_editing_an_item_rescores_every_answer_that_has_it(served):
    """Does saving an item's new points and text rewrite rubrics.toml and re-score every answer with it?"""
    base, folder, marking = served
    body = {"notebook": "toy", "grade_id": "written_toy"}
    post(base, "/api/mark", dict(body, marks=[change(s, ["counting"]) for s in ("Zoë Ñúñez", "李明")]))
    status, state = post(base, "/api/item", dict(body, item="counting", points=0.75, text="Links adding to counting."))
    assert status == 200
    assert {state["answers"][mark_server.pseudonym(s)]["score"] for s in ("Zoë Ñúñez", "李明")} == {0.75}
    assert hand(folder, "Zoë Ñúñez") == HandGrade(0.75, "+0.75 Links adding to counting.")
    rubric = rubrics.load(source(folder) / rubrics.FILENAME)[("toy", "written_toy")]
    assert (rubric.item("counting").points, rubric.item("counting").text) == (0.75, "Links adding to counting.")
    (edit,) = mark.read_rubric_edits(folder)  # logged in OUT: who, when, the item before and after
    assert (edit["by"], edit["item"], edit["before"], edit["after"]) == (
        "ta-ana",
        "counting",
        {"points": 0.5, "text": "Relates addition to counting."},
        {"points": 0.75, "text": "Links adding to counting."},
    )


def test_an_item_worth_more_than_the_cell_is_refused(served):
    """Is an item edit that would break the rubric (worth more than the cell) refused in one line, the file kept?"""
    base, folder, marking = served
    before = (source(folder) / rubrics.FILENAME).read_text()
    status, reply = post(
        base, "/api/item", {"notebook": "toy", "grade_id": "written_toy", "item": "order", "points": 3, "text": "x"}
    )
    assert status == 400 and "item 'order' is worth +3, more than the cell's 1 points" in reply["error"]
    assert (source(folder) / rubrics.FILENAME).read_text() == before


@pytest.mark.parametrize(
    "marks, error",
    [
        ([change("Zoë Ñúñez", ["sets"])], "unknown item(s)"),
        ([{"student": "Zoë Ñúñez", "items": []}], "no answer of 'Zoë Ñúñez'"),
        ([change("Zoë Ñúñez", [], adjustment="1")], "adjustment should be a number"),
        ([change("Zoë Ñúñez", [], adjustment=float("inf"))], "adjustment should be a number"),
        ([change("Zoë Ñúñez", [], adjustment=10**400)], "adjustment should be a number"),
        ([change("Zoë Ñúñez", [], adjustment=1.5)], "an adjustment is at most the cell's 1 points either way"),
        ([change("Zoë Ñúñez", ["order", "order"])], "an item appears twice"),
        ([change("Zoë Ñúñez", "order")], "items should be a list of item ids"),
        ([change("Anna Lee~moodle12", ["order"])], "answer is blank and scores 0 by itself"),
        ([change("Anna Lee~moodle12", [], adjustment=0.5)], "answer is blank and scores 0 by itself"),
        ([change("Zoë Ñúñez", [], comment="x" * 10_001)], "a comment should be text of at most 10,000 characters"),
        ([change("Zoë Ñúñez", [], comment="a\x00b")], "a comment should be text"),
        ([change("Zoë Ñúñez", ["order"]), change("Zoë Ñúñez", [])], "each answer may be changed once a request"),
    ],
)
def test_a_bad_mark_is_refused_and_nothing_written(served, marks, error):
    """Is a mark with an unknown item, a real name instead of the page's pseudonym or a non-numeric adjustment
    refused, with nothing written?"""
    base, folder, marking = served
    status, reply = post(base, "/api/mark", {"notebook": "toy", "grade_id": "written_toy", "marks": marks})
    assert status == 400 and error in reply["error"]
    assert not Out(folder).marks.exists()


@pytest.mark.slow
def test_a_ta_grades_a_group_in_chromium(served, tmp_path):
    """In the real Chromium: does shift+1 on an answer apply item 1 to its whole group, does saving a new points
    value for that item re-score the group, and after a reload do the gradebook, grades.csv and the students'
    pages show the new scores?"""
    from tests.reports.test_formgrader import Browser

    base, folder, marking = served
    browser = Browser(tmp_path / "profile")
    try:
        browser.open(f"{base}/q/toy/written_toy?token=tok-en", "document.querySelector('.answer .score').textContent")
        pair = [mark_server.pseudonym(s) for s in ("Zoë Ñúñez", "李明")]
        browser.run(f"document.querySelector('.answer[data-student=\"{pair[0]}\"]').focus()")
        for kind in ("keyDown", "keyUp"):
            browser.send("Input.dispatchKeyEvent", type=kind, code="Digit1", key="!", modifiers=8)
        score = f"document.querySelector('.answer[data-student=\"{pair[1]}\"] .score').textContent"
        for _ in range(40):
            if browser.run(score) == "0.5 / 1":
                break
            time.sleep(0.25)
        assert browser.run(score) == "0.5 / 1"
        assert browser.run("document.getElementById('graded').textContent") == "graded 3 of 4"
        browser.run("document.querySelector('tr input.points').value = '0.75'")
        browser.run("document.querySelector('button.edit-item').click()")
        time.sleep(2)
        browser.open(f"{base}/q/toy/written_toy", "document.querySelector('.answer .score').textContent")
        assert browser.run(score) == "0.75 / 1"
        assert browser.run("document.querySelector('tr input.points').value") == "0.75"
    finally:
        browser.close()
    assert hand(folder, "Zoë Ñúñez").score == hand(folder, "李明").score == 0.75
    assert marking.settle()
    rows = {r["student"]: r["written_score"] for r in read_csv(folder / "grades.csv")}
    assert rows["Zoë Ñúñez"] == rows["李明"] == "0.75"
    assert "0.75 / 1" in (folder / "feedback" / "Zoë Ñúñez" / "toy.html").read_text()


def test_the_outputs_of_the_students_own_run_are_shown_inert(served):
    """Does an answer's card fetch the outputs of the student's own run above the question (a plot as an image,
    text escaped) and nothing a student's HTML output would run?"""
    import nbformat

    from autograder.reports.feedback import OWN_RUN

    base, folder, marking = served
    path = Results(folder).autograded_path("李明", "toy")
    nb = nbformat.read(path, as_version=4)
    setup = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    setup.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="[1, 2] (quick mode)\n"),
        nbformat.v4.new_output("stream", name="stdout", text=OWN_RUN),
        nbformat.v4.new_output("stream", name="stdout", text="loss 0.068 <b>best</b>\n"),
        nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"}),
        nbformat.v4.new_output("display_data", data={"text/html": "<script>alert(1)</script>", "text/plain": "table"}),
    ]
    nbformat.write(nb, path)
    fragment, headers = get(base, f"/outputs/toy/written_toy/{urllib.request.quote(mark_server.pseudonym('李明'))}")
    assert "loss 0.068 &lt;b&gt;best&lt;/b&gt;" in fragment and f'src="data:image/png;base64,{png}"' in fragment
    assert "quick mode" not in fragment and "<script>" not in fragment and "table" in fragment
    assert "img-src data:" in headers["Content-Security-Policy"]
    other, _ = get(base, f"/outputs/toy/written_toy/{urllib.request.quote(mark_server.pseudonym('Zoë Ñúñez'))}")
    assert "no outputs of their own run" in other


def test_a_ta_splits_a_group_and_the_move_is_kept(served, tmp_path):
    """Does moving one of two identical answers to a group of its own show on the page, survive in OUT for
    `mark --groups`, and refuse a group that does not exist?"""
    base, folder, marking = served
    body = {"notebook": "toy", "grade_id": "written_toy", "student": mark_server.pseudonym("李明")}
    assert post(base, "/api/move", dict(body, group="")) == (200, {"group": "split-1"})
    page, _ = get(base, "/q/toy/written_toy")
    assert "<h2>split-1: 1 answer(s) <span" in page and "<h2>g1-identical: 1 answer(s) <span" in page
    status, reply = post(base, "/api/move", dict(body, group="g9"))
    assert status == 400 and reply["error"] == "no group 'g9'"
    assert (
        mark.main(
            out=folder, source=source(folder), groups="toy/written_toy", output=tmp_path / "g.csv", encoder="tfidf"
        )
        == 0
    )
    rows = {r["student"]: r["group"] for r in read_csv(tmp_path / "g.csv")}
    assert (rows["李明"], rows["Zoë Ñúñez"]) == ("split-1", "g1-identical")


def test_two_pages_on_one_out_never_both_win(served):
    """When two TAs' servers on the same OUT write the same answer at the same moment, each having seen it
    unmarked, is exactly one write taken and the other refused with it shown?"""
    from concurrent.futures import ThreadPoolExecutor

    base, folder, _ = served
    other = mark_server.Marking(folder, source(folder), "ta-ben", "tfidf")
    try:
        with serving(other) as other_base:
            bodies = [
                (b, {"notebook": "toy", "grade_id": "written_toy", "marks": [change("李明", items)]})
                for b, items in ((base, ["order"]), (other_base, ["counting"]))
            ]
            with ThreadPoolExecutor(2) as pool:
                replies = list(pool.map(lambda args: post(args[0], "/api/mark", args[1]), bodies))
    finally:
        other.close()
        other.settle()
    assert sorted(status for status, _ in replies) == [200, 409]
    won = next(body for status, body in replies if status == 200)["answers"][mark_server.pseudonym("李明")]
    lost = next(body for status, body in replies if status == 409)["now"][mark_server.pseudonym("李明")]
    assert won["items"] == lost["items"] and len(mark.read_log(folder)[0]) == 1


def test_a_regrade_request_is_queued_on_the_page_and_resolved(served, tmp_path):
    """Is a requested answer listed at the top of its question and marked, and does resolving it record who
    resolved it, why, and whether the score changed, closing the request?"""
    base, folder, _ = served
    body = {"notebook": "toy", "grade_id": "written_toy"}
    post(base, "/api/mark", dict(body, marks=[change("李明", ["order"])]))
    (tmp_path / "r.csv").write_text(
        "student,notebook,grade_id,reason\n李明,toy,written_toy,I <b>did</b> relate it to counting.\n"
    )
    assert mark.main(out=folder, source=source(folder), regrades=tmp_path / "r.csv") == 0
    page, _ = get(base, "/q/toy/written_toy")
    who = mark_server.pseudonym("李明")
    assert "regrade requests (1 open)" in page and f'href="#{who}"' in page
    assert "I &lt;b&gt;did&lt;/b&gt; relate it to counting." in page and "<b>did</b>" not in page
    assert post(base, "/api/regrade", dict(body, student=who, why=""))[0] == 400
    version = get(base, "/q/toy/written_toy")[0].split(f'"{who}": ')[1].split('"version": "')[1].split('"')[0]
    post(base, "/api/mark", dict(body, marks=[change("李明", ["order", "counting"], version)]))
    status, state = post(base, "/api/regrade", dict(body, student=who, why="It does: counting is named."))
    assert status == 200 and state["regrades"] == {}
    entry = mark.read_regrades(folder)[("李明", "toy", "written_toy")]
    assert (entry["status"], entry["score_before"], entry["score_after"], entry["by"]) == (
        "changed",
        0.5,
        1.0,
        "ta-ana",
    )
    assert post(base, "/api/regrade", dict(body, student=who, why="again"))[0] == 409


def test_a_huge_paste_is_cut_on_the_page(served):
    """Is a 5 MB pasted answer shown cut, saying how long it was, without holding up the page?"""
    base, folder, marking = served
    path = Results(folder).autograded_path("Zoë Ñúñez", "toy")
    path.write_text(path.read_text().replace(RIGHT_TEXT, "loss 0.123 " * 500_000))
    marking.answers = mark.collect(folder)
    marking.groups.clear()
    start = time.perf_counter()
    page, _ = get(base, "/q/toy/written_toy")
    assert time.perf_counter() - start < 10
    assert "[cut: 5,500,000 characters in all]" in page and len(page) < 200_000


@pytest.mark.slow
def test_the_pages_pass_wcag_21_aa(served, tmp_path):
    """Does axe-core find no WCAG 2.1 A or AA violation on the question list and on a question's page (labels on
    every control, lang, a main landmark, headings in order, contrast)?"""
    from tests.reports import axe
    from tests.reports.browser import Browser

    base, _, _ = served
    browser = Browser(tmp_path / "profile")
    try:
        results = {page: axe.check(browser, f"{base}{page}?token=tok-en") for page in ("/", "/q/toy/written_toy")}
    finally:
        browser.close()
    assert not any(results.values()), "\n".join(axe.report({p: v for p, v in results.items() if v}))


def test_a_page_opens_before_its_groups_by_meaning_are_ready(out, monkeypatch):  # noqa: F811
    """Does a question's page open at once with groups by words (saying so, moves held back) while MiniLM still
    groups its answers, and show the groups by meaning once /api/ready says they are there?"""
    release, real = threading.Event(), mark_server.group_answers

    def slow_minilm(texts, stub, encoder="tfidf", cache=None):
        if encoder == "minilm":
            release.wait(60)
        return real(texts, stub, "tfidf")

    monkeypatch.setattr(mark_server, "group_answers", slow_minilm)
    marking = mark_server.Marking(out, source(out), "ta-ana", "minilm")
    with serving(marking) as base:
        started = time.perf_counter()
        page, _ = get(base, "/q/toy/written_toy")
        assert time.perf_counter() - started < 10
        assert "still being grouped by meaning" in page and 'class="move"' not in page
        assert json.loads(get(base, "/api/ready/toy/written_toy")[0]) == {"ready": False}
        release.set()
        deadline = time.time() + 30
        while not json.loads(get(base, "/api/ready/toy/written_toy")[0])["ready"] and time.time() < deadline:
            time.sleep(0.05)
        page, _ = get(base, "/q/toy/written_toy")
        assert "still being grouped by meaning" not in page and 'class="move"' in page
    release.set()
    marking.close()


def test_a_second_grader_marks_the_sample_blind_on_the_page(out, tmp_path):  # noqa: F811
    """On `mark OUT --second --double SHARE`, does the page show only the sample, without the first grader's marks,
    record the second grader's marks for agreement only (the gradebook keeps the grade), and refuse moves and item
    edits?"""
    from tests.marking.test_mark import run, write_csv

    first = [[s, "toy", "written_toy", "counting", "", ""] for s in ("Zoë Ñúñez", "李明", "Anna Lee~moodle11")]
    assert run(out, import_csv=write_csv(tmp_path / "a.csv", first), grader="ta-ana") == 0
    graded_before = mark.manual_scores(out, ("toy", "written_toy"))
    sample = mark.double_sample(mark.collect(out), mark.share("100%"))
    marking = mark_server.Marking(out, source(out), "ta-ben", "tfidf", second=sample)
    with serving(marking) as base:
        page, _ = get(base, "/q/toy/written_toy")
        assert "Second marking, blind" in page and 'class="edit-item"' not in page and 'class="move"' not in page
        state = marking.state(("toy", "written_toy"))
        assert state["graded"] == 0 and all(a["items"] == [] for a in state["answers"].values())  # blind
        assert set(state["answers"]) == {mark_server.pseudonym(s) for s, _, _ in sample}
        status, body = post(
            base,
            "/api/mark",
            {"notebook": "toy", "grade_id": "written_toy", "marks": [change("李明", ["counting", "order"])]},
        )
        assert status == 200 and body["answers"][mark_server.pseudonym("李明")]["score"] == 1
        assert mark.read_second(out)[("李明", "toy", "written_toy")].grader == "ta-ben"
        assert mark.manual_scores(out, ("toy", "written_toy")) == graded_before
        n, _, gap = mark.agreement(marking.rubrics(), mark.collect(out), out)[("toy", "written_toy")]
        assert n == 1 and gap == 0.5
        for path, body in (("/api/move", {"student": "x", "group": ""}), ("/api/item", {"item": "counting"})):
            status, reply = post(base, path, {"notebook": "toy", "grade_id": "written_toy", **body})
            assert status == 403 and "second grader" in reply["error"]
    marking.close()


def test_a_question_without_answers_to_grade_is_not_found(out):  # noqa: F811
    """Does a second grader whose sample holds no answer to a question get 404 for its page (not a dropped
    connection)?"""
    marking = mark_server.Marking(out, source(out), "ta-ben", "tfidf", second=set())
    with serving(marking) as base:
        with pytest.raises(urllib.error.HTTPError) as caught:
            get(base, "/q/toy/written_toy")
        assert caught.value.code == 404 and caught.value.read().decode() == "no answers to grade for this question\n"
    marking.close()


def test_the_second_graders_page_needs_its_sample(out, capsys):  # noqa: F811
    """Does `mark OUT --second` without --double refuse in one line instead of serving the whole class?"""
    assert mark_server.main(out=out, source=source(out), second=True, browser=False) == 1
    assert capsys.readouterr().err.strip() == (
        "mark: --second on the page needs --double SHARE, the sample to mark (e.g. 10%)"
    )
