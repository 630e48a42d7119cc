"""Suggestions on the grading page (issue 56 item 2): shown apart from marks, accepted with a key on an answer or a
group, refreshed as marks arrive, a grade-next order, and their agreement with the TA's marks in --status."""

import contextlib
import time

import pytest

from autograder.marking import mark
from autograder.marking import server as mark_server
from tests.marking.test_server import get, post, serving
from tests.marking.test_suggest import CELL, family_out, out  # noqa: F401

BODY = {"notebook": CELL[0], "grade_id": CELL[1]}


def page_for(out, grader="ta-ana", **options):  # noqa: F811
    return mark_server.Marking(out, out.parent / "source", grader, "tfidf", **options)


def suggested(base):
    import json

    return json.loads(get(base, f"/api/suggest/{CELL[0]}/{CELL[1]}")[0])


def test_the_page_suggests_for_answers_to_grade_least_certain_first(out):  # noqa: F811
    """Does the page's suggestion call give items for most answers still to grade, none for graded or blank ones,
    and a grade-next order that starts with the answers it abstains on, then the least confident?"""
    folder, made, marks = out
    marking = page_for(folder)
    with serving(marking) as base:
        got = suggested(base)
    marking.close()
    graded = {mark_server.pseudonym(s) for s in marks}
    blank = {mark_server.pseudonym(s) for s, (family, _, _) in made.items() if family == "blank"}
    assert set(got["answers"]).isdisjoint(graded | blank)
    assert set(got["next"]) == set(got["answers"])
    made_some = [g for g in got["answers"].values() if g["items"] is not None]
    assert len(made_some) >= len(got["answers"]) // 2
    keys = [(got["answers"][s]["items"] is not None, got["answers"][s]["confidence"] or 0.0) for s in got["next"]]
    assert keys == sorted(keys)


def test_suggestions_follow_the_marks_and_are_logged(out):  # noqa: F811
    """After a TA marks an answer, is it no longer suggested for, and are the suggestions shown logged in OUT once
    (a second call that shows the same logs nothing new)?"""
    folder, made, marks = out
    marking = page_for(folder)
    with serving(marking) as base:
        first = suggested(base)
        logged = len(mark.read_suggestions(folder))
        assert logged == len(first["answers"])
        assert len(mark.read_suggestions(folder)) == logged and suggested(base) == first
        who = first["next"][-1]
        status, _ = post(base, "/api/mark", dict(BODY, marks=[{"student": who, "items": ["counting"]}]))
        assert status == 200
        assert who not in suggested(base)["answers"]
    marking.close()


def test_status_reports_how_often_suggestions_were_accepted(out, capsys):  # noqa: F811
    """Once a TA accepted one suggestion as shown and changed another, does --status give the share accepted
    unchanged and each item's precision and recall on those answers?"""
    folder, made, marks = out
    marking = page_for(folder)
    with serving(marking) as base:
        got = suggested(base)["answers"]
        sure = [s for s, g in got.items() if g["items"] and "counting" in g["items"]][:2]
        changes = [{"student": sure[0], "items": got[sure[0]]["items"]},
                   {"student": sure[1], "items": [i for i in got[sure[1]]["items"] if i != "counting"]}]  # fmt: skip
        time.sleep(0.01)  # the marks come after the suggestions were shown
        assert post(base, "/api/mark", dict(BODY, marks=changes))[0] == 200
    marking.close()
    capsys.readouterr()
    assert mark.main(out=folder, source=folder.parent / "source", status=True) == 0
    said = capsys.readouterr().out
    assert "toy/written_toy: suggestions on 2 answer(s) marked after one was shown: 50% accepted unchanged" in said
    assert "counting precision 0.50 recall 1.00" in said


def test_a_second_grader_gets_no_suggestions(out):  # noqa: F811
    """Does the blind second grader's page suggest nothing (a suggestion learned from the first grader's marks would
    tell them)?"""
    folder, _, _ = out
    sample = mark.double_sample(mark.collect(folder), 1.0)
    marking = page_for(folder, "ta-ben", second=sample)
    with serving(marking) as base:
        assert suggested(base) == {"answers": {}, "next": [], "rubric": None}
    marking.close()


@contextlib.contextmanager
def suggesting_page(folder, tmp_path):
    """The question's page in Chromium, once it shows a suggestion: (browser, base URL)."""
    from tests.marking.test_keyboard import until
    from tests.reports.browser import Browser

    marking = page_for(folder)
    with serving(marking) as base:
        browser = Browser(tmp_path / "profile")
        try:
            browser.open(f"{base}/q/{CELL[0]}/{CELL[1]}?token=tok-en", "document.querySelector('.answer')")
            until(
                browser, "[...document.querySelectorAll('.suggest')].some(b => b.textContent.startsWith('suggested'))"
            )
            yield browser, base
        finally:
            browser.close()
    marking.close()


@pytest.mark.slow
def test_a_ta_accepts_a_suggestion_with_a_key_in_chromium(out, tmp_path):  # noqa: F811
    """In Chromium: is a suggestion shown on its answer apart from the mark, does `a` accept it (the mark saved
    with those items), and does `n` go to the answer the suggester is least sure of?"""
    from tests.marking.test_keyboard import card, press, until

    folder, made, marks = out
    with suggesting_page(folder, tmp_path) as (browser, base):
        who = browser.run(
            "[...document.querySelectorAll('.answer')].find(el => el.querySelector('.suggest').textContent"
            ".startsWith('suggested')).dataset.student"
        )
        items = suggested(base)["answers"][who]["items"]
        browser.run(f"{card(who)}.focus()")
        press(browser, "KeyA", "a")
        student = next(s for s in made if mark_server.pseudonym(s) == who)
        deadline = time.time() + 15
        while (student, *CELL) not in mark.read_log(folder)[0] and time.time() < deadline:
            time.sleep(0.1)
        assert list(mark.read_log(folder)[0][(student, *CELL)].items) == items
        until(browser, f"{card(who)}.querySelector('.score').textContent !== 'to grade / 1'")
        first = suggested(base)["next"][0]
        press(browser, "KeyN", "n")
        until(browser, f"document.activeElement.dataset.student === '{first}'")


def test_the_report_tabulates_suggestions_against_marks(out):  # noqa: F811
    """Does the report's table give, per item, the answers marked after a suggestion, the share accepted unchanged,
    precision and recall, and is the table in the report notebook?"""
    import json

    from autograder import paths
    from autograder.reports import report

    folder, made, marks = out
    marking = page_for(folder)
    with serving(marking) as base:
        got = suggested(base)["answers"]
        sure = [s for s, g in got.items() if g["items"] and "counting" in g["items"]][:2]
        time.sleep(0.01)
        assert (
            post(base, "/api/mark", dict(BODY, marks=[{"student": s, "items": got[s]["items"]} for s in sure]))[0]
            == 200
        )
    marking.close()
    table = report.suggestion_agreement(folder, folder.parent / "source")
    row = table[table["item"] == "counting"].iloc[0]
    got = (row["marked after a suggestion"], row["accepted unchanged"], row["precision"], row["recall"])
    assert got == (2, 1, 1, 1) and row["stale (older rubric)"] == 0
    cells = json.loads((paths.ROOT / "notebooks" / "grade_report.ipynb").read_text())["cells"]
    assert any("suggestion_agreement(OUT)" in "".join(c["source"]) for c in cells)


def _accept_two(base):
    """Two answers marked exactly as suggested, just after the suggestions were shown."""
    got = suggested(base)["answers"]
    sure = [s for s, g in got.items() if g["items"] and "counting" in g["items"]][:2]
    time.sleep(0.01)
    assert post(base, "/api/mark", dict(BODY, marks=[{"student": s, "items": got[s]["items"]} for s in sure]))[0] == 200


def _edit_rubric(folder, old, new):
    path = folder.parent / "source" / "rubrics.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _status_after_an_edit(folder, capsys, old, new):
    """What --status says once two answers were marked as suggested and then rubrics.toml had `old` made `new`."""
    marking = page_for(folder)
    with serving(marking) as base:
        _accept_two(base)
    marking.close()
    _edit_rubric(folder, old, new)
    capsys.readouterr()
    assert mark.main(out=folder, source=folder.parent / "source", status=True) == 0
    return capsys.readouterr().out


def test_suggestions_under_an_older_rubric_are_stale(out, capsys):  # noqa: F811
    """After an item's text changed in rubrics.toml, are the suggestions made under the old one told apart as stale
    in --status and the report, and left out of the share accepted and the items' precision and recall?"""
    from autograder.reports import report

    folder, _, _ = out
    said = _status_after_an_edit(
        folder, capsys, "Relates addition to counting.", "Relates addition to counting objects in a set."
    )
    assert "toy/written_toy: no suggestion under its rubric as it is now (2 more under an older rubric" in said
    assert "accepted unchanged" not in said
    table = report.suggestion_agreement(folder, folder.parent / "source")
    assert table[["marked after a suggestion", "stale (older rubric)"]].values.tolist() == [[0, 2]]


def test_a_change_to_a_ta_note_keeps_suggestions_current(out, capsys):  # noqa: F811
    """Does an edit to an item's TA-only note (what a student reads is unchanged) keep the suggestions counted?"""
    folder, _, _ = out
    said = _status_after_an_edit(folder, capsys, 'note = "Also accept:', 'note = "Also accept, and say so:')
    assert "suggestions on 2 answer(s) marked after one was shown: 100% accepted unchanged" in said
    assert "stale" not in said


def test_the_page_and_its_suggestions_name_the_rubric_they_were_made_under(out):  # noqa: F811
    """Do the question page and the suggestion call carry the same rubric stamp, and does the call's change once an
    item's points change on disk (so a page loaded before the edit can tell its suggestions are stale)?"""
    import json
    import re

    folder, _, _ = out
    marking = page_for(folder)
    with serving(marking) as base:
        page = get(base, f"/q/{CELL[0]}/{CELL[1]}")[0]
        shown = json.loads(re.search(r'<script type="application/json" id="cell">(.*?)</script>', page, re.S)[1])
        before = suggested(base)["rubric"]
        assert shown["rubric"] == before
        _edit_rubric(folder, 'points = 0.5\ntext = "Says', 'points = 0.25\ntext = "Says')
        _edit_rubric(folder, 'id = "counting"\npoints = 0.5', 'id = "counting"\npoints = 0.75')
        time.sleep(0.01)
        assert suggested(base)["rubric"] not in (None, before)
    marking.close()


@pytest.mark.slow
def test_a_page_older_than_the_rubric_shows_suggestions_as_stale_and_takes_none(out, tmp_path):  # noqa: F811
    """In Chromium: once the rubric changed on disk after the page loaded, are the suggestions shown as stale, and
    does `a` save nothing but say to reload?"""
    from tests.marking.test_keyboard import card, press, until

    folder, made, marks = out
    with suggesting_page(folder, tmp_path) as (browser, base):
        _edit_rubric(folder, "Relates addition to counting.", "Relates addition to counting objects.")
        browser.run("refreshSuggestions()")
        until(browser, "document.querySelector('.suggest.stale') !== null")
        who = browser.run(
            "[...document.querySelectorAll('.answer')].find(el => el.querySelector('.suggest').textContent"
            ".startsWith('suggested')).dataset.student"
        )
        assert "stale" in browser.run(f"{card(who)}.querySelector('.suggest').textContent")
        logged = len(mark.read_log(folder)[0])
        browser.run(f"{card(who)}.focus()")
        press(browser, "KeyA", "a")
        until(browser, "document.getElementById('message').textContent.includes('reload')")
        time.sleep(0.5)
        assert len(mark.read_log(folder)[0]) == logged
