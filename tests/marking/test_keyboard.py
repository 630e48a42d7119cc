"""A TA's keyboard on the grading page, in the real Chromium (autograder/marking/static/mark.js): keys act on answers
only when no text box has the cursor, Escape and Enter leave a box, 0 gives "no items", two quick keys both land,
another grader's mark is told in a sentence, shift acts on a whole group."""

import time

import pytest

from autograder.marking import mark
from autograder.marking import server as mark_server
from tests.marking.test_mark import graded, hand, out, run, source, write_csv  # noqa: F401
from tests.marking.test_server import serving

pytestmark = pytest.mark.slow

ZOE, LI, ANNA = (mark_server.pseudonym(s) for s in ("Zoë Ñúñez", "李明", "Anna Lee~moodle11"))


def until(browser, expression, seconds=15):
    """Wait until a JavaScript expression is true in the page; its last value."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = browser.run(expression)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"never true: {expression} (last {browser.run(expression)!r})")


def press(browser, code, key, shift=False):
    """A key pressed and released as a keyboard sends it (text for printable keys)."""
    params = {"code": code, "key": key, "modifiers": 8 if shift else 0}
    if code == "Tab":
        params["windowsVirtualKeyCode"] = 9
    elif code == "Escape":
        params["windowsVirtualKeyCode"] = 27
    elif code == "Enter":
        params["windowsVirtualKeyCode"] = 13
    printable = len(key) == 1
    browser.send("Input.dispatchKeyEvent", type="keyDown" if printable else "rawKeyDown",
                 **({"text": key} if printable else {}), **params)  # fmt: skip
    browser.send("Input.dispatchKeyEvent", type="keyUp", **params)


def card(who):
    return f"document.querySelector('.answer[data-student=\"{who}\"]')"


@pytest.fixture
def page(out, tmp_path):  # noqa: F811
    from tests.reports.browser import Browser

    marking = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
    with serving(marking) as base:
        browser = Browser(tmp_path / "profile")
        try:
            browser.open(f"{base}/q/toy/written_toy?token=tok-en", f"{card(ZOE)}.dataset.version !== undefined")
            until(browser, "document.getElementById('graded').textContent.startsWith('graded')")
            yield browser, out
        finally:
            browser.close()
    marking.close()
    marking.settle()


def test_two_quick_keys_on_one_answer_both_land(page):
    """Pressing 1 then 2 on an answer without waiting: are both items saved (full marks), not the second refused?"""
    browser, folder = page
    browser.run(f"{card(ZOE)}.focus()")
    press(browser, "Digit1", "1")
    press(browser, "Digit2", "2")
    until(browser, f"{card(ZOE)}.querySelector('.score').textContent === '1 / 1'")
    assert browser.run("document.getElementById('message').textContent") == ""
    assert set(mark.read_log(folder)[0][("Zoë Ñúñez", "toy", "written_toy")].items) == {"counting", "order"}


def test_keys_typed_in_a_box_stay_there_and_escape_goes_back(page):
    """After typing an adjustment and pressing Tab (the adjustment saved, the cursor now in the comment box), do
    letters go into the comment (not to the answers), does Escape drop them, and does j then move to the next
    answer?"""
    browser, folder = page
    browser.run(f"{card(ZOE)}.querySelector('input.adj').focus()")
    browser.send("Input.insertText", text="-0.25")
    press(browser, "Tab", "Tab")
    assert browser.run("document.activeElement.className") == "comment"
    browser.send("Input.insertText", text="Close")
    press(browser, "Digit1", "1")  # typed into the comment, not item 1
    press(browser, "Escape", "Escape")
    assert browser.run("document.activeElement.dataset.student") == ZOE
    press(browser, "KeyJ", "j")
    assert browser.run("document.activeElement.dataset.student") != ZOE
    until(browser, f"{card(ZOE)}.querySelector('.score').textContent === '0 / 1'")
    time.sleep(1)  # nothing more is on its way: Escape dropped what was typed in the comment
    got = mark.read_log(folder)[0][("Zoë Ñúñez", "toy", "written_toy")]
    assert (got.items, got.adjustment, got.comment) == ((), -0.25, "")
    assert browser.run(f"{card(ZOE)}.querySelector('input.comment').value") == ""


def test_enter_in_the_comment_saves_and_goes_back_to_the_answer(page):
    """Does Enter in the comment box save the comment and give the keys back to the answer?"""
    browser, folder = page
    browser.run(f"{card(LI)}.querySelector('input.comment').focus()")
    browser.send("Input.insertText", text="See the model answer.")
    press(browser, "Enter", "Enter")
    assert browser.run("document.activeElement.dataset.student") == LI
    press(browser, "Digit2", "2")
    until(browser, f"{card(LI)}.querySelector('.score').textContent === '0.5 / 1'")
    got = mark.read_log(folder)[0][("李明", "toy", "written_toy")]
    assert (got.items, got.comment) == (("order",), "See the model answer.")


def test_zero_gives_no_items_and_zero_points(page):
    """Does 0 on an answer that had an item mark it graded with no items and 0 points?"""
    browser, folder = page
    browser.run(f"{card(ANNA)}.focus()")
    press(browser, "Digit1", "1")
    until(browser, f"{card(ANNA)}.querySelector('.score').textContent === '0.5 / 1'")
    press(browser, "Digit0", "0")
    until(browser, f"{card(ANNA)}.querySelector('.score').textContent === '0 / 1'")
    assert mark.read_log(folder)[0][("Anna Lee~moodle11", "toy", "written_toy")].items == ()
    assert hand(folder, "Anna Lee~moodle11").score == 0


def test_another_graders_mark_is_told_in_a_sentence(page, tmp_path):
    """When another TA marked an answer after this page was loaded, does a key on it save nothing and say who gave
    which grade, in words, then show that grade?"""
    browser, folder = page
    assert run(folder, import_csv=write_csv(tmp_path / "b.csv", [["李明", "toy", "written_toy", "counting", "", ""]]),
               grader="ta-ben") == 0  # fmt: skip
    browser.run(f"{card(LI)}.focus()")
    press(browser, "Digit2", "2")
    said = until(browser, "document.getElementById('message').textContent")
    assert said.startswith(f"{LI}: ta-ben marked this answer at ") and "(counting: 0.5 of 1 points)" in said
    assert "{" not in said and "not saved" in said
    until(browser, f"{card(LI)}.querySelector('input.item[value=counting]').checked")
    assert mark.read_log(folder)[0][("李明", "toy", "written_toy")].grader == "ta-ben"


def test_shift_and_a_digit_marks_the_whole_group(page):
    """Does shift+1 on one of two identical answers apply item 1 to both?"""
    browser, folder = page
    browser.run(f"{card(ZOE)}.focus()")
    press(browser, "Digit1", "!", shift=True)
    until(browser, f"{card(LI)}.querySelector('.score').textContent === '0.5 / 1'")
    assert hand(folder, "Zoë Ñúñez").score == hand(folder, "李明").score == 0.5


def test_the_move_menu_is_built_when_opened(page):
    """Does the page carry no group menu until a TA opens one, and then list the other groups?"""
    browser, _ = page
    assert browser.run("document.querySelectorAll('select.move option').length") == 0
    browser.run(f"{card(LI)}.querySelector('button.move').click()")
    options = browser.run("[...document.querySelectorAll('select.move option')].map(o => o.textContent)")
    assert options[0] == "move to group…" and options[-1] == "a new group of its own" and len(options) >= 3


def test_an_adjustment_that_is_not_a_number_is_refused_in_words(page):
    """Is an adjustment typed as words refused on the page in a sentence, with nothing saved?"""
    browser, folder = page
    browser.run(f"{card(ANNA)}.querySelector('input.adj').focus()")
    browser.send("Input.insertText", text="minus a quarter")
    press(browser, "Enter", "Enter")
    said = until(browser, "document.getElementById('message').textContent")
    assert said == "not saved: the adjustment should be a number of points, such as -0.25"
    assert ("Anna Lee~moodle11", "toy", "written_toy") not in mark.read_log(folder)[0]


def test_a_long_question_is_drawn_in_pages_and_a_group_action_reaches_every_member(out, tmp_path, monkeypatch):  # noqa: F811
    """With a page that ends inside a group: does the page draw only that many answers, the next ones on j or "show
    the next answers", and does shift+1 on the last drawn reach its group's member not drawn yet?"""
    from tests.reports.browser import Browser

    marking = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
    order = [s for g in marking.grouped(("toy", "written_toy")) for s in g.students]
    drawn = min(order.index("Zoë Ñúñez"), order.index("李明")) + 1  # the pair's first member is the last drawn
    monkeypatch.setattr(mark_server, "PAGE", drawn)
    with serving(marking) as base:
        browser = Browser(tmp_path / "profile")
        try:
            browser.open(f"{base}/q/toy/written_toy?token=tok-en", "document.querySelector('.answer')")
            assert browser.run("document.querySelectorAll('.answer').length") == drawn
            first = browser.run("[...document.querySelectorAll('.answer')].pop().dataset.student")
            assert first in (ZOE, LI)
            browser.run("[...document.querySelectorAll('.answer')].pop().focus()")
            press(browser, "Digit1", "!", shift=True)
            other = LI if first == ZOE else ZOE
            deadline = time.time() + 15
            while hand(out, "李明").score != 0.5 and time.time() < deadline:
                time.sleep(0.1)
            assert hand(out, "Zoë Ñúñez").score == hand(out, "李明").score == 0.5
            press(browser, "KeyJ", "j")
            until(browser, f"document.querySelectorAll('.answer').length === {2 * drawn}")
            assert browser.run("document.activeElement.dataset.student") == other
            assert browser.run(f"{card(other)}.querySelector('.score').textContent") == "0.5 / 1"
            if drawn * 2 < len(order):
                browser.run("document.querySelector('button.more').click()")
                until(browser, f"document.querySelectorAll('.answer').length === {min(len(order), 3 * drawn)}")
        finally:
            browser.close()
    marking.close()
    marking.settle()
