"""Feedback HTML: scores and one-line messages shown; hidden test source, tracebacks and tokens never."""

import html
import json
import re
import shutil

import nbformat
import pytest

from autograder.gradebook import HandGrade
from autograder.reports import feedback, nbhtml, sanitize
from tests.fixtures import toy
from tests.fixtures.pages import page_of

HIDDEN = ["from toycheck import check_add", "check_add(add)", "from toycheck import check_mul", "check_mul(mul)"]


def visible_text(page):
    """The text a reader sees in an HTML page (styles and scripts dropped, tags removed)."""
    page = re.sub(r"<(style|script)\b.*?</\1>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.fixture(scope="module")
def toy_graded(tmp_path_factory):
    return toy.graded(tmp_path_factory.getbasetemp())


def test_feedback_has_no_hidden_test_source(toy_graded):
    """Does every toy feedback page leave out the hidden test lines (in any form)?"""
    out, _ = toy_graded
    pages = sorted((out / "feedback").glob("*/*.html"))
    assert len(pages) == 5
    for page in pages:
        text = page.read_text()
        leaked = [h for h in HIDDEN + ["BEGIN HIDDEN TESTS", "toycheck"] if h in text or html.escape(h) in text]
        assert not leaked, f"{page}: {leaked}"


def test_feedback_shows_score_and_check_message(toy_graded):
    """Does the wrong student's page show their score and the failing check's one-line message?"""
    out, _ = toy_graded
    text = visible_text((out / "feedback" / "wrongmul" / "toy.html").read_text())
    assert "Autograded score: 1 / 3" in text
    assert "mul: mul(4, -3) should be -12, got 12" in text


def test_feedback_hides_pass_tokens(toy_graded):
    """Are pass tokens removed from the reference's page (a passed check shows as `PASSED add`)?"""
    out, _ = toy_graded
    text = (out / "feedback" / "ref" / "toy.html").read_text()
    assert "PASSED add" in visible_text(text) and "[a3:" not in text


def test_missing_notebook_gets_a_page_saying_so(toy_graded):
    """Does a student without the notebook get a page with status `missing` and score 0?"""
    out, _ = toy_graded
    text = visible_text((out / "feedback" / "nothing" / "toy.html").read_text())
    assert "Autograded score: 0 / 3" in text and "missing" in text


def test_feedback_command_rerenders_every_page(toy_graded, tmp_path):
    """Does `python -m autograder feedback OUT` rewrite every feedback page from OUT?"""
    out, _ = toy_graded
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    shutil.rmtree(copy / "feedback")
    assert feedback.main(out=copy) == 0
    pages = sorted(p.relative_to(copy / "feedback") for p in (copy / "feedback").glob("*/*.html"))
    assert [str(p) for p in pages] == [f"{s}/toy.html" for s in ("broken", "nothing", "ref", "untouched", "wrongmul")]


# --- sanitize (unit level) --------------------------------------------------------------------------


def graded_test_cell():
    source = "assert f(1) == 1\n### BEGIN HIDDEN TESTS\nfrom autograder.checks.nmt import check_f\ncheck_f(f)\n### END HIDDEN TESTS"
    cell = nbformat.v4.new_code_cell(
        source, metadata={"nbgrader": {"grade": True, "solution": False, "grade_id": "test_f", "points": 1}}
    )
    tb = [
        "\x1b[0;31mCheckFailed\x1b[0m Traceback (most recent call last)",
        "Cell In[5], line 4\n----> 4 check_f(f)",
        "File /opt/a3/autograder/checks/nmt.py:88, in check_f(f)",
        "\x1b[0;31mCheckFailed\x1b[0m: f: f(2) should be 4, got 3",
    ]
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="debug: inside check_f(f) now\nok\n"),
        nbformat.v4.new_output("error", ename="CheckFailed", evalue="f: f(2) should be 4, got 3", traceback=tb),
    ]
    return cell


def test_sanitize_removes_hidden_region_and_traceback():
    """Does sanitize drop the hidden region, reduce a test cell's traceback to one line, and drop lines quoting hidden code?"""
    nb = nbformat.v4.new_notebook(cells=[graded_test_cell()])
    cell = sanitize.sanitize(nb).cells[0]
    assert cell.source == "assert f(1) == 1"
    assert cell.outputs[0].text == "ok\n"
    assert cell.outputs[1].traceback == ["CheckFailed: f: f(2) should be 4, got 3"]


def test_sanitize_keeps_student_cell_tracebacks():
    """Does sanitize keep the traceback of an error in the student's own (non-test) cell?"""
    cell = nbformat.v4.new_code_cell("1/0")
    cell.outputs = [
        nbformat.v4.new_output(
            "error",
            ename="ZeroDivisionError",
            evalue="division by zero",
            traceback=["Cell In[1], line 1\n----> 1 1/0", "ZeroDivisionError: division by zero"],
        )
    ]
    out = sanitize.sanitize(nbformat.v4.new_notebook(cells=[cell])).cells[0]
    assert len(out.outputs[0].traceback) == 2


def test_render_escapes_student_controlled_text():
    """Is a repair line with HTML in it shown as text rather than injected into the page?"""
    summary = {
        "notebook": "nmt",
        "score": 0.0,
        "max_score": 11.0,
        "status": "missing",
        "cells": [],
        "repairs": ["renamed <script>alert(1)</script>.ipynb to nmt.ipynb"],
        "notes": [],
        "manual": {},
    }
    page = feedback.render(None, page_of(summary, "eve"))
    assert "<script>alert(1)</script>" not in page


# A graded notebook with no check results: the page then shows just the student's cells
EMPTY_SUMMARY = {
    "notebook": "nmt",
    "score": 0.0,
    "max_score": 11.0,
    "status": "graded",
    "cells": [],
    "repairs": [],
    "notes": [],
    "manual": {},
}


def test_render_never_lets_student_html_run():
    """Is HTML a student puts in code, markdown or an HTML output made inert (no script, handler or js link)?"""
    code = nbformat.v4.new_code_cell("s = '</pre><script>alert(1)</script>'")
    code.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"text/html": "<img src=x onerror=alert(2)><script>alert(3)</script>", "text/plain": "x"},
        )
    ]
    markdown = nbformat.v4.new_markdown_cell(
        "Answer <script>alert(4)</script><img src=x onerror=alert(5)> <a href='javascript:alert(6)'>link</a>"
    )
    page = feedback.render(nbformat.v4.new_notebook(cells=[code, markdown]), page_of(EMPTY_SUMMARY, "eve"))
    for bad in ("<script>alert", "onerror", "javascript:"):
        assert bad not in page, f"{bad!r} from the student's notebook reached the feedback page"


def test_render_keeps_harmless_student_html():
    """Are a pandas table and markdown formatting still shown after sanitising?"""
    cell = nbformat.v4.new_code_cell("display(df)")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={
                "text/html": "<table class='dataframe'><thead><tr><th>sentence</th></tr></thead>"
                "<tbody><tr><td>one plus two</td></tr></tbody></table>",
                "text/plain": "x",
            },
        )
    ]
    markdown = nbformat.v4.new_markdown_cell("The loss is **lower** on the large set.")
    page = feedback.render(nbformat.v4.new_notebook(cells=[cell, markdown]), page_of(EMPTY_SUMMARY, "eve"))
    assert "<td>one plus two</td>" in page and "<thead>" in page
    assert "<strong>lower</strong>" in page


def test_render_shows_highlighted_code_text():
    """Does a code cell's text still appear in the page, highlighted, after the faster rendering path?"""
    cell = nbformat.v4.new_code_cell("def add(a, b):\n    return a < b")
    page = feedback.render(nbformat.v4.new_notebook(cells=[cell]), page_of(EMPTY_SUMMARY, "eve"))
    assert '<span class="k">def</span>' in page and "&lt;" in page


def _page_through_beautifulsoup(nb, summary, student):
    """The page as nbconvert makes it when every highlighted input goes through its BeautifulSoup pass."""
    body, _ = nbhtml._exporter().from_notebook_node(feedback.annotate(nb, page_of(summary, student)))
    return nbhtml.typeset_math(body)


TRICKY_CODE = [
    "x = '&amp; &lt; &#39; &nbsp; &#x41; &foo' # <b>bold</b> \"quoted\"",
    "s = '</pre></div><script>alert(1)</script>'\n\n\n    \t",
    "café = 'ü € \u00a0 \u2028'  # non-ASCII\r\nprint(café)",
    "",
    "   ",
    "%%time\n!ls <x>",
]


def test_fast_render_writes_the_page_beautifulsoup_writes():
    """Is a page rendered with highlighted inputs kept out of nbconvert's BeautifulSoup pass the same, byte for
    byte, as the page that pass writes, for code with entities, markup, odd whitespace and non-ASCII text?"""
    cells = [nbformat.v4.new_code_cell(src) for src in TRICKY_CODE]
    cells.append(nbformat.v4.new_markdown_cell("Text with `code` and <b>bold</b>"))
    nb = nbformat.v4.new_notebook(cells=cells)
    assert feedback.render(nb, page_of(EMPTY_SUMMARY, "eve")) == _page_through_beautifulsoup(nb, EMPTY_SUMMARY, "eve")


def test_a_page_does_not_depend_on_the_pages_rendered_before_it():
    """The filters remember the cells they have rendered: is a page the same, byte for byte, rendered by a fresh
    exporter as after other pages that share its cells, including a magics cell, markup and a long output?"""
    shared = [nbformat.v4.new_code_cell(src) for src in TRICKY_CODE]
    magics = "select x from t where y = 1"  # highlighted as SQL only with magics_language
    long_html = nbformat.v4.new_code_cell("show()")
    long_html.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"text/html": "<table>" + "<tr><td>cell</td></tr>" * 2000 + "</table>", "text/plain": "t"},
        )
    ]
    own = nbformat.v4.new_markdown_cell("My answer: <b>bold</b> and `x < y`")
    first = nbformat.v4.new_notebook(
        cells=shared + [nbformat.v4.new_markdown_cell("Other <i>answer</i>"), nbformat.v4.new_code_cell(magics)]
    )
    second = nbformat.v4.new_notebook(
        cells=[own] + shared + [long_html, nbformat.v4.new_code_cell(magics, metadata={"magics_language": "sql"})]
    )
    nbhtml._exporter.cache_clear()
    fresh = feedback.render(second, page_of(EMPTY_SUMMARY, "eve"))
    nbhtml._exporter.cache_clear()
    feedback.render(first, page_of(EMPTY_SUMMARY, "eve"))
    after = feedback.render(second, page_of(EMPTY_SUMMARY, "eve"))
    assert after == fresh
    assert feedback.render(second, page_of(EMPTY_SUMMARY, "eve")) == fresh  # every cell remembered now
    assert "<td>cell</td>" in fresh and '<span class="k">select</span>' in fresh  # the long output; SQL


def test_fast_render_leaves_a_fragment_it_does_not_know_to_beautifulsoup():
    """Does a highlighted input with markup outside Pygments' usual output go through BeautifulSoup unchanged?"""
    assert nbhtml._soup_form('<div class="highlight"><pre><b>x</b></pre></div>') is None
    assert nbhtml._soup_form('<div class="highlight"><pre>a &nbsp; b</pre></div>') is None
    assert nbhtml._soup_form('<div class="highlight"><pre><span>x</pre></span></div>') is None


def test_a_page_validates_its_notebook_once(monkeypatch):
    """Does the page's exporter validate the notebook once, after its last preprocessor, instead of after each of
    its 12 (each validation only checks)?"""
    exporter = nbhtml._exporter()
    calls = []
    validate = type(exporter)._validate_preprocessor
    monkeypatch.setattr(type(exporter), "_validate_preprocessor", lambda *a: calls.append(validate(*a)))
    feedback.render(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), page_of(EMPTY_SUMMARY, "eve"))
    assert len(calls) == 1


def test_page_has_a_title_and_contents_linking_each_graded_cell():
    """Does a feedback page carry a real title and a contents line linking to each graded cell's verdict?"""
    test = nbformat.v4.new_code_cell("assert True")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "test_fit_linear_log", "points": 1}
    summary = dict(
        EMPTY_SUMMARY, cells=[{"grade_id": "fit_linear_log", "score": 1.0, "max_score": 1.0, "note": "passed"}]
    )
    page = feedback.render(nbformat.v4.new_notebook(cells=[test]), page_of(summary, "eve"))
    assert "<title>nmt.ipynb feedback: eve</title>" in page
    assert 'href="#a3-fit_linear_log"' in page and 'id="a3-fit_linear_log"' in page


def test_progress_bars_are_one_line_and_unimplemented_cells_say_so():
    """Is a tqdm bar shown as its final line (not as an error stream), and a stub's traceback as one sentence?"""
    bar = nbformat.v4.new_code_cell("train()")
    bar.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text="ep:   0%|  | 0/5\rep:  40%|# | 2/5\rep: 100%|##| 5/5\n")
    ]
    stub = nbformat.v4.new_code_cell("f()")
    stub.outputs = [
        nbformat.v4.new_output(
            "error",
            ename="NotImplementedError",
            evalue="",
            traceback=["Traceback (most recent call last)", "  File x, line 3"],
        )
    ]
    clean = sanitize.sanitize(nbformat.v4.new_notebook(cells=[bar, stub]))
    assert (clean.cells[0].outputs[0].name, clean.cells[0].outputs[0].text) == ("stdout", "ep: 100%|##| 5/5\n")
    assert clean.cells[1].outputs[0].traceback == [
        "NotImplementedError: not implemented yet (this cell still raises NotImplementedError)"
    ]


def test_provided_cells_also_show_the_students_own_outputs():
    """Does a provided cell of the graded notebook also carry the plot and text of the student's own run (not
    their errors, and nothing on solution or test cells), after a marker line?"""

    def provided(gid, outputs, **meta):
        cell = nbformat.v4.new_code_cell("plot()")
        cell.metadata["nbgrader"] = {"grade_id": gid, "grade": False, "solution": False, **meta}
        cell.outputs = outputs
        return cell

    png = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})
    text = nbformat.v4.new_output("stream", name="stdout", text="best val loss 0.48\n")
    error = nbformat.v4.new_output("error", ename="KeyError", evalue="'x'", traceback=["KeyError: 'x'"])
    note = nbformat.v4.new_output("stream", name="stdout", text="[1 figure not drawn: the autograder skips figures]\n")
    graded = nbformat.v4.new_notebook(cells=[provided("study_plots", [note]), provided("sol", [], solution=True)])
    submitted = nbformat.v4.new_notebook(
        cells=[provided("study_plots", [text, png, error]), provided("sol", [png], solution=True)]
    )
    out = feedback.with_submitted_outputs(graded, submitted)
    assert [o.get("text", "") or sorted(o.get("data", {})) for o in out.cells[0].outputs] == [
        note.text,
        feedback.OWN_RUN,
        text.text,
        ["image/png", "text/plain"],
    ]
    assert out.cells[1].outputs == [] and graded.cells[0].outputs == [note]


def test_cells_a_student_added_are_left_alone():
    """Do cells without nbgrader metadata (added by the student) neither break nor borrow submitted outputs?"""
    added = nbformat.v4.new_code_cell("print('mine')")
    added.outputs = [nbformat.v4.new_output("stream", name="stdout", text="mine\n")]
    graded = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('mine')")])
    out = feedback.with_submitted_outputs(graded, nbformat.v4.new_notebook(cells=[added]))
    assert out.cells[0].outputs == []


# --- what a reader sees: student-facing text, the index, short pages ------------------------
LI, ZOE = "李明", "Zoë Ñúñez"
CAPTION_REASON = (
    "needs manual grading: ViT-B-32 weights not in /srv/models/hub; run `python -m autograder fetch-models` on a "
    "machine with internet and set A3_MODEL_CACHE"
)
CAPTION_SUMMARY = {
    "notebook": "clip",
    "score": 4.0,
    "max_score": 5.0,
    "status": "needs manual grading: scavenger_caption",
    "cells": [{"grade_id": "scavenger_caption", "score": None, "max_score": 1.0, "note": CAPTION_REASON}],
    "repairs": [],
    "notes": [],
    "manual": {},
}


def caption_notebook():
    """A graded clip notebook whose caption check could not decide: its test cell printed the UNGRADABLE line."""
    meta = {"nbgrader": {"grade": True, "solution": False, "grade_id": "test_scavenger_caption", "points": 1}}
    cell = nbformat.v4.new_code_cell("check(caption)", metadata=meta)
    line = (
        f"UNGRADABLE scavenger_caption [a3:0123456789abcdef0123]: {CAPTION_REASON[len('needs manual grading: ') :]}\n"
    )
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=line)]
    return nbformat.v4.new_notebook(cells=[cell])


def test_student_page_leaves_instructor_instructions_out():
    """Does a student's page say only that a TA grades the caption, without `fetch-models`, A3_MODEL_CACHE or the
    grader's model cache path?"""
    page = feedback.render(caption_notebook(), page_of(CAPTION_SUMMARY, ZOE))
    text = visible_text(page)
    assert "a TA grades this cell by hand" in text
    leaks = [w for w in ("fetch-models", "A3_MODEL_CACHE", "/srv/models") if w in page]
    assert not leaks, f"instructor-only words on the student's page: {leaks}"


def test_student_page_shows_no_grader_paths():
    """Does a traceback through the grader's Python environment name `torch/nn/functional.py`, never the
    grading machine's .venv or site-packages folders?"""
    import site
    import sys

    packages = site.getsitepackages()[0]
    cell = nbformat.v4.new_code_cell("model(x)")
    tb = [
        "\x1b[0;31mRuntimeError\x1b[0m Traceback (most recent call last)",
        f"File \x1b[0;32m{packages}/torch/nn/functional.py:2380\x1b[0m, in \x1b[0;36mlinear\x1b[0m",
        f"File {sys.prefix}/bin/python:1",
        "File /home/ta/a3/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py:1751, in _call_impl",
        "\x1b[0;31mRuntimeError\x1b[0m: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
    ]
    cell.outputs = [nbformat.v4.new_output("error", ename="RuntimeError", evalue="mat1 and mat2", traceback=tb)]
    page = feedback.render(nbformat.v4.new_notebook(cells=[cell]), page_of(dict(EMPTY_SUMMARY), LI))
    text = visible_text(page)
    assert "torch/nn/functional.py" in text and "torch/nn/modules/module.py" in text
    leaks = [w for w in (packages, sys.prefix, ".venv", "site-packages") if w in page]
    assert not leaks, f"grader paths on the student's page: {leaks}"


def test_feedback_page_drops_the_colab_badge():
    """Is the release's "Open in Colab" badge (an image from the web) left off a feedback page, the rest of its
    cell kept?"""
    badge = "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.example/x)"
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell(badge), nbformat.v4.new_markdown_cell(f"{badge}\n\n# Ridge regression")]
    )
    page = feedback.render(nb, page_of(dict(EMPTY_SUMMARY, notebook="theory"), ZOE))
    assert "colab-badge" not in page and "colab.research.google.com" not in page
    assert "Ridge regression" in visible_text(page)


def test_long_output_is_folded():
    """Is a 200-line output folded into a <details> block (all of it inside), and a short one left open?"""
    long_text = "".join(f"epoch {i}: loss {1 / (i + 1):.4f}\n" for i in range(200))
    cells = [
        nbformat.v4.new_code_cell("train()", outputs=[nbformat.v4.new_output("stream", name="stdout", text=long_text)]),
        nbformat.v4.new_code_cell(
            "print('short')", outputs=[nbformat.v4.new_output("stream", name="stdout", text="short\n")]
        ),
    ]
    page = feedback.render(nbformat.v4.new_notebook(cells=cells), page_of(dict(EMPTY_SUMMARY), LI))
    (details,) = re.findall(r"<details>.*?</details>", page, flags=re.S)
    assert "200 lines of output" in details and "epoch 199: loss 0.0050" in details
    assert "short" in page and "short" not in details


@pytest.fixture
def unicode_out(tmp_path):
    """An OUT with recorded results of 李明 (graded) and Zoë Ñúñez (caption waiting for a person, submitted as
    a folder name that differs from her id), its CSVs and feedback index."""
    from autograder.records import Results

    out = tmp_path / "out"
    results = Results(out)
    states = {
        LI: {"student": LI, "complete": True, "notebooks": {"clip": dict(CAPTION_SUMMARY, status="graded", cells=[])}},
        "zoe": {
            "student": "zoe",
            "submission": {"submitted_as": ZOE},
            "complete": True,
            "notebooks": {"clip": CAPTION_SUMMARY},
        },
    }
    for student, state in states.items():
        (results.state_dir / f"{student}.json").write_text(json.dumps(state))
        results.write_feedback(
            student, "clip", feedback.render(caption_notebook(), page_of(state["notebooks"]["clip"], student))
        )
    results.write_csvs()
    feedback.write_index(out)
    return out


def test_no_page_links_to_the_ta_index(unicode_out):
    """Does every student's page keep its links within itself (no link to the TA's index, dead once released)?"""
    pages = sorted((unicode_out / "feedback").glob("*/*.html"))
    assert len(pages) == 2
    for page in pages:
        hrefs = re.findall(r'href="([^"]*)"', page.read_text())
        assert [h for h in hrefs if not h.startswith("#")] == [], page


def test_index_names_the_student_as_submitted_with_working_links(unicode_out):
    """Does the index name each student as they submitted (李明, Zoë Ñúñez), with links that reach their pages?"""
    import urllib.parse

    index = (unicode_out / "feedback" / "index.html").read_text()
    assert f"<td>{LI}</td>" in index and f"<td>{ZOE}</td>" in index
    hrefs = set(re.findall(r'<a href="([^"#]+\.html)"', index))
    assert hrefs == {f"{urllib.parse.quote(LI)}/clip.html", "zoe/clip.html"}
    assert all((unicode_out / "feedback" / urllib.parse.unquote(h)).exists() for h in hrefs)


def test_index_keeps_the_reason_a_cell_waits_for_a_person(unicode_out):
    """Does the TA's index give the caption's full reason (what to fetch and set), which the student's page leaves out?"""
    index = visible_text((unicode_out / "feedback" / "index.html").read_text())
    assert "fetch-models" in index and "A3_MODEL_CACHE" in index
    assert "fetch-models" not in (unicode_out / "feedback" / "zoe" / "clip.html").read_text()


def _clip_summary(caption=None, blank=()):
    from autograder.records import CellResult, NotebookResult

    cells = [CellResult("rank_images", 1.0, 1.0, "passed"), CellResult("scavenger_caption", caption, 1.0, "passed")]
    result = NotebookResult.graded("clip", cells, 2.0)
    result.manual, result.blank = {"written_caption": 1.0, "written_prompts": 1.0}, list(blank)
    return result.to_dict()


def test_page_shows_a_blank_answer_as_zero_and_final():
    """Does a page show a blank written answer as 0 (no answer), not as waiting for a TA?"""
    text = feedback.summary_markdown(page_of(_clip_summary(caption=1.0, blank=["written_caption"]), "Zoë Ñúñez"))
    assert "| `written_caption` | 0 / 1 (no answer) |" in text
    assert "| `written_prompts` | not graded yet |" in text and "provisional: 1 written answer(s)" in text


def test_page_shows_the_hand_score_of_a_cell_left_to_a_ta():
    """After a TA scored the caption in formgrader, does the page count it in the autograded score?"""
    summary = dict(_clip_summary(caption=None), hand={"test_scavenger_caption": HandGrade(1.0, "")})
    text = feedback.summary_markdown(page_of(summary, "李明"))
    assert "**Autograded score: 2 / 2**" in text and "| `scavenger_caption` | 1 / 1 |" in text


def test_written_answers_are_listed_in_the_notebooks_order_however_recorded():
    """Is a page the same, written answers in the notebook's order, whether the result lists them in that order (as
    the worker has it) or sorted by id (as OUT/.state keeps them and `feedback OUT` reads them)?"""

    def written(gid):
        meta = {"nbgrader": {"grade_id": gid, "grade": True, "solution": True, "points": 1}}
        return nbformat.v4.new_markdown_cell(f"answer {gid}", metadata=meta)

    nb = nbformat.v4.new_notebook(cells=[written("written_scaling"), written("written_attention")])
    ordered = dict(EMPTY_SUMMARY, manual={"written_scaling": 1.0, "written_attention": 1.0})
    by_id = dict(EMPTY_SUMMARY, manual={"written_attention": 1.0, "written_scaling": 1.0})
    page = feedback.render(nb, page_of(ordered, "李明"))
    assert page == feedback.render(nb, page_of(by_id, "李明"))
    assert page.index("<code>written_scaling</code>") < page.index("<code>written_attention</code>")
