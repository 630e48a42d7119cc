"""autograder.reports.similarity: copied cells found, starter code and independent solutions left alone."""

import csv
import json
import os
import subprocess
import sys

import pytest

from autograder.paths import ROOT
from autograder.reports import feedback, similarity
from tests.reports import similarity_corpus as corpus


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The corpus class written as a grading run leaves OUT, with the report written once."""
    out = corpus.write_class(tmp_path_factory.mktemp("similarity") / "out")
    done = similarity.write_report(out)
    return out, done


def rows(out):
    with open(out / "similarity.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def row(out, notebook, cell, a, b):
    hits = [
        r for r in rows(out) if (r["notebook"], r["cell"], r["student_a"], r["student_b"]) == (notebook, cell, a, b)
    ]
    assert len(hits) == 1, f"{notebook} {cell} {a} / {b}: {len(hits)} rows"
    return hits[0]


def test_renamed_copy_is_flagged(graded):
    """Is a copy of an 8-line cell with its names changed and comments and blank lines added flagged at >= 0.8?"""
    out, _ = graded
    r = row(out, "nmt", "scaled_dot_attention", "Zoë Ñúñez", "李明")
    assert float(r["similarity"]) >= 0.8 and r["flagged"] == "1"


def test_reordered_copy_is_flagged(graded):
    """Is a renamed copy whose independent statements were reordered flagged?"""
    out, _ = graded
    assert row(out, "nmt", "positional_encodings", "Anna Lee (2)", "Ömer Çelik")["flagged"] == "1"


def test_written_copy_with_reordered_sentences_is_flagged(graded):
    """Is a written answer copied with its sentences reordered and a few words swapped flagged?"""
    out, _ = graded
    r = row(out, "nmt", "written_positional_encodings", "Zoë Ñúñez", "李明")
    assert r["flagged"] == "1" and r["kind"] == "text"


def test_only_the_copies_are_flagged(graded):
    """Are the corpus's copies the only flagged pairs (independent correct solutions: zero flagged)?"""
    out, _ = graded
    flagged = {(r["notebook"], r["cell"], r["student_a"], r["student_b"]) for r in rows(out) if r["flagged"] == "1"}
    assert flagged == corpus.EXPECTED_FLAGGED


def test_independent_solutions_score_low(graded):
    """Does no pair of independently written solutions reach the similarity worth a look?"""
    out, _ = graded
    copied = {frozenset(p[2:]) for p in corpus.EXPECTED_FLAGGED}
    independent = [r for r in rows(out) if r["cell"] != "ridge_closed_form"]
    independent = [r for r in independent if frozenset((r["student_a"], r["student_b"])) not in copied]
    assert independent == []


def test_untouched_and_starter_only_are_never_in_the_report(graded):
    """Do untouched releases and a student who only kept the starter code appear in no row at all?"""
    out, _ = graded
    quiet = set(corpus.UNTOUCHED) | {corpus.STARTER_ONLY}
    assert [r for r in rows(out) if {r["student_a"], r["student_b"]} & quiet] == []


def test_short_natural_answer_is_never_flagged(graded):
    """Is the one natural two-line answer, written identically by two students, listed but never flagged?"""
    out, _ = graded
    r = row(out, "theory", "ridge_closed_form", "Anna Lee", "李明")
    assert float(r["similarity"]) == 1.0 and r["flagged"] == "0"


def test_shared_cell_ids_and_outputs_are_shown_beside_a_pair(graded):
    """Does a pair with a cell id the release lacks and an identical output in common say so in `signals`?"""
    out, _ = graded
    signals = row(out, "nmt", "scaled_dot_attention", "Zoë Ñúñez", "李明")["signals"]
    assert signals == "1 shared cell id(s) not in the release; identical outputs in an added cell"
    assert row(out, "nmt", "positional_encodings", "Anna Lee (2)", "Ömer Çelik")["signals"] == ""


def test_an_output_cut_into_chunks_is_the_same_output():
    """Is a cell's printout the same evidence whether the kernel sent it as one stream output or as several (the
    cut depends on timing), while stdout and stderr stay apart?"""
    text = "visible checks passed\nPASSED scaled_dot_attention with all the shapes right\n"
    whole = {"outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}
    cut = {
        "outputs": [
            {"output_type": "stream", "name": "stdout", "text": text[:22]},
            {"output_type": "stream", "name": "stdout", "text": [text[22:40], text[40:]]},
        ]
    }
    apart = {"outputs": [dict(o, name=n) for o, n in zip(cut["outputs"], ("stdout", "stderr"))]}
    assert similarity._output_texts(cut) == similarity._output_texts(whole) == [text]
    assert similarity._output_texts(apart) != [text]


def test_the_class_natural_answer_is_not_flagged_but_copies_are(tmp_path):
    """In a class of 40 where every student hands in the reference answer with a line or two of their own, are
    exactly the students who copied a notebook flagged (the shared reference is class-common)?"""
    from autograder import bench, paths

    planted = bench.similarity_class(tmp_path, 40, paths.RELEASE, paths.SOURCE, copy_share=0.1, wrong_share=0, seed=1)
    similarity.write_report(tmp_path)
    flagged = {(r["student_a"], r["student_b"]) for r in rows(tmp_path) if r["flagged"] == "1"}
    assert planted and flagged == planted


def test_csv_columns_order_and_encoding(graded):
    """Does the CSV start with the issue's columns, read as UTF-8, with student_a < student_b by code point?"""
    out, _ = graded
    text = (out / "similarity.csv").read_bytes().decode("utf-8")
    assert text.splitlines()[0].startswith("notebook,cell,student_a,student_b,similarity,flagged,")
    got = rows(out)
    assert got and all(r["student_a"] < r["student_b"] for r in got)
    assert all(0.0 <= float(r["similarity"]) <= 1.0 and r["flagged"] in ("0", "1") for r in got)


def test_bad_cells_are_noted_and_the_report_goes_on(graded):
    """Are binary junk and a 10 MB answer skipped with a note, and code that does not parse still compared?"""
    out, done = graded
    notes = "\n".join(done["notes"])
    assert "Bad Input: skipped: binary data" in notes
    assert "Bad Input: skipped: 10.3 MB" in notes
    assert "scaled_dot_attention, Bad Input: does not parse" in notes
    assert row(out, "nmt", "scaled_dot_attention", "Bad Input", "李明")["flagged"] == "1"


def test_rerun_gives_a_byte_identical_csv(graded, tmp_path):
    """Does a rerun in a fresh interpreter with another hash seed write the same CSV bytes?"""
    out, _ = graded
    first = (out / "similarity.csv").read_bytes()
    env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=str(ROOT))
    subprocess.run(
        [sys.executable, "-m", "autograder", "similarity", str(out)], env=env, check=True, capture_output=True
    )
    assert (out / "similarity.csv").read_bytes() == first


def test_html_shows_clusters_histograms_and_pairs(graded):
    """Does the HTML show the clusters, a histogram per cell and each pair side by side, shared code marked and
    starter code greyed?"""
    out, _ = graded
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "Clusters above the threshold (2)" in page
    assert "Bad Input, Zoë Ñúñez, 李明" in page and "Anna Lee (2), Ömer Çelik" in page
    assert page.count("histogram of pair similarities") == len(similarity.build(out)[0])
    assert "<mark>" in page and "class='starter'" in page
    assert "side by side" in page


def test_html_escapes_student_names(tmp_path):
    """Is a student name with markup escaped in the HTML (never a live tag)?"""
    name = "<img src=x onerror=alert(1)>"
    corpus.CLASS[name] = corpus.CLASS["李明"]
    try:
        out = corpus.write_class(tmp_path / "out", students=[name, "李明"])
    finally:
        del corpus.CLASS[name]
    similarity.write_report(out)
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and name not in page


def test_without_autograded_notebooks_it_says_grade_first(tmp_path, capsys):
    """Does `similarity` on a folder with no graded notebooks exit 1 with a one-line error?"""
    assert similarity.main(out=tmp_path) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "grade first" in err


def _release_cell(notebook, cell_id):
    return next("".join(c["source"]) for c in corpus._nb(notebook)["cells"] if c.get("id") == cell_id)


def _pair_similarity(task):
    """The one pair's similarity in a two-student cell (0 when it is not worth a row)."""
    rows = similarity.compare_cell(task).rows
    return float(rows[0]["similarity"]) if rows else 0.0


def test_question_text_pasted_into_answers_is_removed():
    """Do two different short answers that both paste the question stay apart once the question's n-grams are
    removed (and look alike when they are not)?"""
    question = _release_cell("nmt", "q_positional_encodings")
    answers = [
        ("a", question + "\n\nThe encoder sees an unordered bag of letters, so all three words look the same to it."),
        ("b", question + "\n\nBounded waves keep values small and let nearby positions resemble each other closely."),
    ]
    removed = similarity.CellTask("nmt", "w", "text", ["YOUR ANSWER HERE", question], answers)
    kept = similarity.CellTask("nmt", "w", "text", ["YOUR ANSWER HERE"], answers)
    assert _pair_similarity(removed) == 0.0 and _pair_similarity(kept) >= 0.6


def test_students_with_the_same_text_share_its_tokens_and_keep_their_own_rows(monkeypatch):
    """When students hand in the very same cell (a copy, a cell left as released), is the text tokenised once, and
    does each of them still get their own rows and notes: the twins a flagged pair at 1.000, each twin the same row
    against a third student, each skipped cell its own note?"""
    stub = _release_cell("nmt", "scaled_dot_attention")
    body, other = corpus.fill(stub, corpus.SDA["B"]), corpus.fill(stub, corpus.SDA["B"] + "\n    # checked")
    sources = [("Zoë Ñúñez", body), ("ann", other), ("bob", "\x00" * 300), ("cid", "\x00" * 300), ("李明", body)]
    real, made = similarity.make_doc, []
    monkeypatch.setattr(similarity, "make_doc", lambda *a: made.append(a[1]) or real(*a))
    report = similarity.compare_cell(similarity.CellTask("nmt", "x", "code", [stub], sources))
    assert made == ["Zoë Ñúñez", "ann", "bob"]
    rows = {(r["student_a"], r["student_b"]): r for r in report.rows}
    assert (rows["Zoë Ñúñez", "李明"]["similarity"], rows["Zoë Ñúñez", "李明"]["flagged"]) == ("1.000", 1)
    against = [
        {k: v for k, v in rows[pair].items() if k != "student_a"} for pair in (("Zoë Ñúñez", "ann"), ("ann", "李明"))
    ]
    assert against[0]["similarity"] == against[1]["similarity"] and against[0]["shared_fingerprints"] > 0
    assert [n.split(": ")[0] for n in report.notes] == ["nmt x, bob", "nmt x, cid"]


def test_starter_code_is_removed():
    """Do two different bodies under the same long released stub stay apart once the stub's fingerprints are
    removed (and look alike when they are not)?"""
    stub = _release_cell("nmt", "scaled_dot_attention")
    sources = [("a", corpus.fill(stub, corpus.SDA["B"])), ("b", corpus.fill(stub, corpus.SDA["C"]))]
    removed = similarity.CellTask("nmt", "x", "code", [stub], sources)
    kept = similarity.CellTask("nmt", "x", "code", [], sources)
    assert _pair_similarity(removed) == 0.0 and _pair_similarity(kept) >= 0.5


def test_a_malformed_notebook_cell_is_skipped_with_a_note(tmp_path):
    """Is a cell that is not a cell (a string, metadata that is a list) skipped with a note, and the rest compared?"""
    out = corpus.write_class(tmp_path / "out", students=["李明", "Zoë Ñúñez"])
    path = out / "autograded" / "李明" / "a3" / "nmt.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][1:1] = [
        "not a cell",
        {"cell_type": "code", "metadata": ["x"], "source": "y = 1"},
        {"cell_type": "code", "metadata": {}, "source": [1, None]},  # read as text "1None"
    ]
    path.write_text(json.dumps(nb))
    done = similarity.write_report(out)
    assert [n for n in done["notes"] if "李明: cell" in n] == [
        "nmt, 李明: cell 2 not read (AttributeError): skipped",
        "nmt, 李明: cell 3 not read (AttributeError): skipped",
    ]
    assert row(out, "nmt", "scaled_dot_attention", "Zoë Ñúñez", "李明")["flagged"] == "1"


def test_a_failing_cell_becomes_a_note():
    """Does a cell whose comparison raises become one note instead of stopping the report?"""
    task = similarity.CellTask("nmt", "x", "code", starters=[None], sources=[("a", "x = 1"), ("b", "x = 2")])
    report = similarity.safe_compare(task)
    assert report.rows == [] and len(report.notes) == 1 and "nmt x: not compared (TypeError" in report.notes[0]


def test_renaming_does_not_change_the_tokens():
    """Are names a cell binds normalised while library names and attributes it does not assign stay?"""
    a = similarity.code_tokens("def f(x):\n    y = torch.softmax(x, dim=-1)  # note\n\n    return y\n")[0]
    b = similarity.code_tokens("def g(inp):\n    out = torch.softmax(inp, dim=-1)\n    return out")[0]
    assert a == b and "softmax" in a and "torch" in a


def test_index_links_the_report(tmp_path):
    """Does the TA's feedback index link similarity.html once it exists?"""
    (tmp_path / "grades.csv").write_text(
        "student,notebook,score,max_score,status,written_score,written_max_score,ungraded\n"
    )
    (tmp_path / ".state").mkdir()
    assert "similarity.html" not in feedback.index_html(tmp_path)
    (tmp_path / "similarity.html").write_text("<html></html>")
    assert "href='../similarity.html'" in feedback.index_html(tmp_path)


def test_dask_fan_out_gives_the_same_csv(graded, tmp_path):
    """Does comparing the cells on a Dask scheduler write the same CSV as comparing them here?"""
    from distributed import LocalCluster

    out, _ = graded
    here = similarity.csv_text(similarity.build(out)[0])
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        reports, _, notes = similarity.build(out, scheduler_address=cluster.scheduler_address)
    assert not [n for n in notes if "Dask" in n]
    assert similarity.csv_text(reports) == here


def test_comparing_across_processes_gives_the_same_report(graded, monkeypatch):
    """Does a class large enough to be compared across the cores give the same rows, page and notes as one
    compared here?"""
    out, _ = graded
    monkeypatch.setattr(similarity, "SPREAD_FROM", 10**9)
    here, found, here_notes = similarity.build(out)
    monkeypatch.setattr(similarity, "SPREAD_FROM", 1)
    real, calls = similarity.cores.spread, []
    monkeypatch.setattr(similarity.cores, "spread", lambda *a, **k: calls.append(a) or real(*a, **k))
    reports, _, notes = similarity.build(out)
    assert calls, "the comparison did not go across the cores"
    assert similarity.csv_text(reports) == similarity.csv_text(here) and notes == here_notes
    n = len(found.students)
    assert similarity.html_text(reports, notes, n) == similarity.html_text(here, here_notes, n)


def test_reading_across_processes_gives_the_same_notebooks(tmp_path, monkeypatch):
    """Does a class whose notebooks are read across the cores give the same sources, ids, outputs and notes, in the
    same order, as one read here, a notebook that does not read and a cell that is not a cell included?"""
    out = corpus.write_class(tmp_path / "out")  # the whole corpus class, Unicode names among them
    first, second = sorted(p.name for p in (out / "autograded").iterdir())[:2]
    (out / "autograded" / first / "a3" / "nmt.ipynb").write_text("{not json")
    path = out / "autograded" / second / "a3" / "nmt.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][1:1] = ["not a cell"]
    path.write_text(json.dumps(nb))
    rel_dir = similarity.release_dir(out)
    releases = {p.stem: json.loads(p.read_bytes()) for p in sorted(rel_dir.glob("*.ipynb"))}
    monkeypatch.setattr(similarity, "READ_SPREAD_FROM", 10**9)
    here = similarity.read_notebooks(out, releases)
    monkeypatch.setattr(similarity, "READ_SPREAD_FROM", 1)
    real, calls = similarity.cores.spread, []
    monkeypatch.setattr(similarity.cores, "spread", lambda *a, **k: calls.append(a) or real(*a, **k))
    spread = similarity.read_notebooks(out, releases)
    assert calls and spread.notes == here.notes and len(here.notes) == 2
    assert (spread.students, spread.sources, spread.cell_ids, spread.outputs) == (
        here.students,
        here.sources,
        here.cell_ids,
        here.outputs,
    )
