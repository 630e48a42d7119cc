"""An answer grading found in a cell the student added (issue 56 item 4) on the TA's side of `mark`: flagged on
the page, counted on the index and by --status, and carried by --export with every answer's text."""

import json

from autograder.marking import mark
from autograder.marking import server as mark_server
from tests.marking.test_mark import RIGHT, graded, out, read_csv, run, source  # noqa: F401
from tests.marking.test_server import get, serving

FLAG = "written_toy (T1): answer found in an added cell"


def flagged(out, student="李明"):  # noqa: F811
    """OUT as grading leaves it when the student's answer was typed below the untouched stub."""
    path = out / ".state" / f"{student}.json"
    state = json.loads(path.read_text())
    state["notebooks"]["toy"]["flags"] = [FLAG]
    path.write_text(json.dumps(state))
    return out


def test_the_page_flags_an_answer_found_in_an_added_cell(out):  # noqa: F811
    """Does the answer's card say where its text was found, and the index count it, for the TA?"""
    marking = mark_server.Marking(flagged(out), source(out), "ta-ana", "tfidf")
    with serving(marking) as base:
        page, _ = get(base, "/q/toy/written_toy")
        index, _ = get(base, "/")
    marking.close()
    assert page.count('class="flag"') == 1 and "answer found in an added cell" in page
    assert "1 found in an added cell" in index


def test_status_counts_answers_found_in_added_cells(out, capsys):  # noqa: F811
    """Does `mark OUT --status` count, per question, the answers found in an added cell?"""
    assert run(flagged(out), status=True) == 0
    assert (
        "toy/written_toy: 0 of 4 graded, 1 blank (0), 3 to grade; 1 found in an added cell" in capsys.readouterr().out
    )


def test_export_carries_each_answers_text_and_flag(out, tmp_path):  # noqa: F811
    """Does --export give every answer's text and flag, so a TA grading in a spreadsheet need not open pages, and
    does --import of that file take the marks back, ignoring those columns?"""
    assert run(flagged(out), export=tmp_path / "m.csv") == 0
    rows = {r["student"]: r for r in read_csv(tmp_path / "m.csv")}
    assert list(rows["李明"])[-2:] == ["answer", "flag"]
    assert rows["李明"]["answer"] == RIGHT and rows["李明"]["flag"] == "answer found in an added cell"
    assert rows["Zoë Ñúñez"]["flag"] == ""
    text = (tmp_path / "m.csv").read_text().replace("李明,toy,written_toy,,,", "李明,toy,written_toy,order,,")
    (tmp_path / "m.csv").write_text(text)
    assert run(out, import_csv=tmp_path / "m.csv") == 0
    assert mark.read_log(out)[0][("李明", "toy", "written_toy")].items == ("order",)
