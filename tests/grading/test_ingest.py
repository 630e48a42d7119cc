"""Ingest: names, LMS layouts, nbformat and Colab repairs, nbgrader metadata restored, bad files reported."""

import copy
import json
import os
import zipfile

import nbformat
import pytest
from nbgrader.nbgraderformat import MetadataValidator

from autograder import contract, files, paths
from autograder.content import build
from autograder.grading import discover, ingest, read, repair
from tests.corpus import make_corpus as mc


@pytest.fixture(scope="session")
def release_dir(tmp_path_factory):
    """The release folder (built from source into a temporary course when release/a3 lacks nmt)."""
    if (paths.RELEASE / "nmt.ipynb").exists():
        return paths.RELEASE
    return build.template(tmp_path_factory.mktemp("template")) / "release"


@pytest.fixture(scope="session")
def rel(release_dir):
    return nbformat.read(release_dir / "nmt.ipynb", as_version=4)


@pytest.fixture(scope="session")
def src():
    return nbformat.read(paths.SOURCE / "nmt.ipynb", as_version=4)


def run(tmp_path, files, release_dir):
    """Write {relative path: notebook | bytes | str} under tmp/subs and ingest it."""
    subs = tmp_path / "subs"
    for rel_path, content in files.items():
        mc.write(content, subs / rel_path)
    return ingest.ingest(subs, tmp_path / "staging", release=release_dir)


def one(subs, student, notebook="nmt"):
    found = [s for s in subs if s.student == student and s.notebook == notebook]
    assert len(found) == 1, f"expected one submission for {student}/{notebook}, got {len(found)}"
    return found[0]


def by_id(nb):
    return {mc.gid(c): c for c in nb.cells if mc.gid(c)}


def graded_ids(nb):
    return [mc.gid(c) for c in nb.cells if mc.gid(c)]


@pytest.mark.parametrize(
    "name, expected",
    [
        ("nmt.ipynb", "nmt"),
        ("Copy of nmt.ipynb", "nmt"),
        ("Copy of Copy of nmt.ipynb", "nmt"),
        ("nmt (1).ipynb", "nmt"),
        ("NMT.ipynb", "nmt"),
        ("A3_bert_final.ipynb", "bert"),
        ("clip-2.ipynb", "clip"),
        ("nmt_and_bert.ipynb", None),
        ("notes.ipynb", None),
    ],
)
def test_notebook_from_name(name, expected):
    """Does a Colab/LMS file name map to the notebook it names (and to none when ambiguous)?"""
    assert discover.notebook_from_name(name) == expected, f"{name!r}: expected {expected}"


def test_one_submission_per_student_and_notebook(tmp_path, release_dir, rel, src):
    """Does every student get exactly one Submission per notebook, missing ones included?"""
    subs = run(tmp_path, {"alice/nmt.ipynb": mc.solved(rel, src), "bob/README.txt": "nothing"}, release_dir)
    got = sorted((s.student, s.notebook, s.status.split(" ")[0]) for s in subs)
    want = sorted(
        [("alice", nb, "ok" if nb == "nmt" else "missing") for nb in contract.NOTEBOOKS]
        + [("bob", nb, "missing") for nb in contract.NOTEBOOKS]
    )
    assert got == want, f"expected {want}, got {got}"


def test_repaired_notebook_is_written_to_staging(tmp_path, release_dir, rel, src):
    """Is an ok submission's repaired notebook at staging/<student>/<nb>.ipynb and valid nbformat 4.5?"""
    s = one(run(tmp_path, {"alice/Copy of nmt.ipynb": mc.solved(rel, src)}, release_dir), "alice")
    assert s.path == tmp_path / "staging" / "alice" / "nmt.ipynb", f"expected staging path, got {s.path}"
    nb = nbformat.read(s.path, as_version=4)
    nbformat.validate(nb)
    assert (nb.nbformat, nb.nbformat_minor) == (4, 5), f"expected nbformat 4.5, got {nb.nbformat}.{nb.nbformat_minor}"
    assert s.repairs == ["took 'Copy of nmt.ipynb' as nmt.ipynb"], f"expected one rename line, got {s.repairs}"


def test_canvas_names_at_top_level(tmp_path, release_dir, rel, src):
    """Are Canvas-named files (login_uid_sid_name, LATE, -1 resubmission) given to the right student?"""
    subs = run(
        tmp_path,
        {
            "smithj_12345_678_nmt-1.ipynb": mc.solved(rel, src),
            "doea_LATE_222_333_Copy of nmt.ipynb": mc.solved(rel, src),
        },
        release_dir,
    )
    assert one(subs, "smithj~canvas12345").status == "ok" and one(subs, "doea~canvas222").status == "ok", (
        f"expected smithj and doea ok, got {[(s.student, s.notebook, s.status) for s in subs]}"
    )


def test_moodle_folder_names(tmp_path, release_dir, rel, src):
    """Does a Moodle folder 'Jane Doe_123_assignsubmission_file_' become student 'Jane Doe~moodle123' (logged)?"""
    s = one(
        run(tmp_path, {"Jane Doe_123_assignsubmission_file_/nmt.ipynb": mc.solved(rel, src)}, release_dir),
        "Jane Doe~moodle123",
    )
    assert s.status == "ok", f"expected ok, got {s.status}"
    assert s.repairs[0] == "student 'Jane Doe' is graded as 'Jane Doe~moodle123'", (
        f"expected the id logged, got {s.repairs}"
    )
    assert s.submitted_as == "Jane Doe", f"expected the name as submitted kept, got {s.submitted_as!r}"


def test_two_moodle_students_of_one_name_keep_their_participant_ids(tmp_path, release_dir, rel, src):
    """Are two Moodle students called 'Jane Doe' told apart by their participant ids (not by batch order), each
    submission carrying the LMS's own id for the exports?"""
    subs = run(
        tmp_path,
        {
            "Jane Doe_123_assignsubmission_file_/nmt.ipynb": mc.solved(rel, src),
            "Jane Doe_456_assignsubmission_file_/nmt.ipynb": mc.solved(rel, src),
        },
        release_dir,
    )
    ids = {s.student: s.lms for s in subs if s.notebook == "nmt"}
    assert ids == {
        "Jane Doe~moodle123": {"lms": "moodle", "user_id": "123", "name": "Jane Doe"},
        "Jane Doe~moodle456": {"lms": "moodle", "user_id": "456", "name": "Jane Doe"},
    }, ids


def test_canvas_user_id_is_kept(tmp_path, release_dir, rel, src):
    """Does a Canvas-named file give its submission the Canvas user id (the number after the login)?"""
    s = one(run(tmp_path, {"smithj_12345_678_nmt.ipynb": mc.solved(rel, src)}, release_dir), "smithj~canvas12345")
    assert s.lms == {"lms": "canvas", "user_id": "12345", "name": "smithj", "file_id": "678"}, s.lms


def test_lms_zip_with_wrapper_folder_and_junk(tmp_path, release_dir, rel, src):
    """Is an LMS zip (wrapper folder, __MACOSX junk, a path-traversal entry) read like the folder?"""
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("A3 submissions/alice/nmt.ipynb", nbformat.writes(mc.solved(rel, src)))
        zf.writestr("A3 submissions/bob/Downloads/nmt (1).ipynb", nbformat.writes(mc.solved(rel, src)))
        zf.writestr("__MACOSX/A3 submissions/alice/._nmt.ipynb", b"\x00\x05\x16\x07")
        zf.writestr("../evil.ipynb", b"{}")
    subs = ingest.ingest(archive, tmp_path / "staging", release=release_dir)
    students = sorted({s.student for s in subs})
    assert students == ["alice", "bob"], f"expected alice and bob, got {students}"
    assert one(subs, "alice").status == "ok" and one(subs, "bob").status == "ok"
    assert not (tmp_path / "evil.ipynb").exists(), "a '../' entry escaped the staging folder"


def test_the_shallowest_timestamp_file_is_the_submission_time_evidence(tmp_path, release_dir, rel, src):
    """Does each notebook of a student carry the timestamp.txt nearest the top of their folder (nbgrader's record of
    when they submitted), and a student without one none?"""
    stamp = "2023-04-01 00:00:00.000000 UTC"
    files = {"Zoë Ñúñez/nmt.ipynb": mc.solved(rel, src), "Zoë Ñúñez/timestamp.txt": stamp}
    files |= {"Zoë Ñúñez/old/timestamp.txt": stamp, "李明/nmt.ipynb": mc.solved(rel, src)}
    subs = run(tmp_path, files, release_dir)
    zoe = {s.timestamp for s in subs if s.student == "Zoë Ñúñez"}
    assert zoe == {tmp_path / "subs" / "Zoë Ñúñez" / "timestamp.txt"}
    assert {s.timestamp for s in subs if s.student == "李明"} == {None}


def test_a_timestamp_file_inside_an_lms_zip_is_not_evidence(tmp_path, release_dir, rel, src):
    """Is a timestamp.txt in an LMS zip, which a student could have uploaded, left out of the submission time?"""
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("alice/nmt.ipynb", nbformat.writes(mc.solved(rel, src)))
        zf.writestr("alice/timestamp.txt", "2023-04-01 00:00:00.000000 UTC")
    subs = ingest.ingest(archive, tmp_path / "staging", release=release_dir)
    assert {s.timestamp for s in subs} == {None}


def test_several_candidates_take_most_complete_then_newest(tmp_path, release_dir, rel, src):
    """With several files for one notebook, is the most complete one taken, the newest on ties, and logged?"""
    subs_dir = tmp_path / "subs"
    mc.write(mc.unsolved(rel), subs_dir / "alice" / "nmt.ipynb")
    mc.write(mc.solved(rel, src), subs_dir / "alice" / "old" / "nmt.ipynb")
    mc.write(mc.solved(rel, src), subs_dir / "alice" / "nmt (1).ipynb")
    os.utime(subs_dir / "alice" / "old" / "nmt.ipynb", (1_000_000, 1_000_000))
    s = one(ingest.ingest(subs_dir, tmp_path / "staging", release=release_dir), "alice")
    assert s.repairs[0].startswith("3 files for nmt: took 'nmt (1).ipynb'"), f"expected nmt (1), got {s.repairs}"
    n_solutions = sum(1 for c in rel.cells if c.metadata.get("nbgrader", {}).get("solution"))
    assert repair.completeness(nbformat.read(s.path, as_version=4), rel) == n_solutions, (
        "expected the solved notebook, got a less complete one"
    )


def test_nbformat_40_upgraded_with_cell_ids(tmp_path, release_dir, rel, src):
    """Is an nbformat 4.0 notebook (no cell ids) upgraded to 4.5 with the release's ids on graded cells?"""
    s = one(run(tmp_path, {"alice/nmt.ipynb": mc.as_v40(mc.solved(rel, src))}, release_dir), "alice")
    raw = json.loads(s.path.read_text())
    assert raw["nbformat_minor"] == 5 and all("id" in c for c in raw["cells"]), "expected 4.5 with an id on every cell"
    ids = {c["metadata"]["nbgrader"]["grade_id"]: c["id"] for c in raw["cells"] if "nbgrader" in c["metadata"]}
    want = {mc.gid(c): c.id for c in rel.cells if mc.gid(c)}
    assert ids == want, "expected graded cells to carry the release's cell ids"
    assert "upgraded nbformat 4.0 to 4.5 (cell ids added)" in s.repairs, f"expected the upgrade logged, got {s.repairs}"


def test_nbformat_3_read_through_nbformat_and_upgraded(tmp_path, release_dir, rel, src):
    """Is an nbformat 3 notebook (worksheets; nbformat's own reader, not the plain-JSON one) read, upgraded to 4.5
    and graded with the release's grade ids and cell ids?"""
    old = nbformat.writes(nbformat.convert(mc.solved(rel, src), 3), version=3)
    s = one(run(tmp_path, {"alice/nmt.ipynb": old}, release_dir), "alice")
    assert s.status == "ok" and "upgraded nbformat 3.0 to 4.5 (cell ids added)" in s.repairs, (s.status, s.repairs)
    raw = json.loads(s.path.read_text())
    ids = {c["metadata"]["nbgrader"]["grade_id"]: c["id"] for c in raw["cells"] if "nbgrader" in c["metadata"]}
    assert ids == {mc.gid(c): c.id for c in rel.cells if mc.gid(c)}


def test_colab_metadata_removed(tmp_path, release_dir, rel, src):
    """Are Colab's notebook/cell metadata removed and the kernelspec set back to the release's?"""
    nb = mc.solved(rel, src)
    mc.colabify(nb)
    s = one(run(tmp_path, {"alice/nmt.ipynb": nb}, release_dir), "alice")
    out = nbformat.read(s.path, as_version=4)
    left = [k for k in ("colab", "accelerator", "gpuClass", "widgets") if k in out.metadata]
    assert not left, f"expected no Colab metadata, saw {left}"
    assert out.metadata.kernelspec == rel.metadata.kernelspec, f"expected python3, saw {out.metadata.kernelspec}"
    cell_junk = [k for c in out.cells for k in ("colab", "executionInfo", "outputId", "id") if k in c.metadata]
    assert not cell_junk, f"expected no Colab cell metadata, saw {sorted(set(cell_junk))}"
    assert any(r.startswith("removed editor metadata") for r in s.repairs), f"expected a repair line, got {s.repairs}"


def test_kernelspec_that_is_not_a_mapping_is_replaced(tmp_path, release_dir, rel, src):
    """A hand-edited notebook whose kernelspec is a number: is it given the release's kernelspec and graded,
    and do the other students of the batch still get theirs?"""
    nb = mc.solved(rel, src)
    nb.metadata["kernelspec"] = 5
    subs = run(tmp_path, {"alice/nmt.ipynb": nb, "bob/nmt.ipynb": mc.solved(rel, src)}, release_dir)
    alice, bob = one(subs, "alice"), one(subs, "bob")
    assert alice.status == "ok" and bob.status == "ok", (alice.status, bob.status)
    assert nbformat.read(alice.path, as_version=4).metadata.kernelspec == rel.metadata.kernelspec
    assert any("kernelspec 'none'" in r for r in alice.repairs), alice.repairs


def test_unrepairable_damage_is_recorded_and_the_batch_goes_on(tmp_path, release_dir, rel, src, monkeypatch):
    """When a repair step meets damage it does not know (here: it raises), is that notebook recorded with a
    one-line reason while the other students are still ingested?"""

    def broken(nb, rel_nb, repairs):
        if nb["metadata"].get("marker") == "odd":
            raise KeyError("cells")
        return repair.CellMap()

    monkeypatch.setattr(repair, "repair_cells", broken)
    odd = mc.solved(rel, src)
    odd.metadata["marker"] = "odd"
    subs = run(tmp_path, {"alice/nmt.ipynb": odd, "bob/nmt.ipynb": mc.solved(rel, src)}, release_dir)
    alice, bob = one(subs, "alice"), one(subs, "bob")
    assert alice.status == "could not be repaired: KeyError: 'cells'" and alice.path is None, alice.status
    assert bob.status == "ok"


def test_lost_metadata_restored(tmp_path, release_dir, rel, src):
    """With all nbgrader metadata gone, are the graded cells found again, in order, with the student's code?"""
    nb = mc.solved(rel, src)
    mc.strip_nbgrader(nb)
    s = one(run(tmp_path, {"alice/nmt.ipynb": nb}, release_dir), "alice")
    out = nbformat.read(s.path, as_version=4)
    assert graded_ids(out) == graded_ids(rel), f"expected the release's graded cells, got {graded_ids(out)}"
    cells = by_id(out)
    assert "torch.sin" in cells["positional_encodings"].source, "expected the student's solution in its cell"
    want = by_id(rel)["test_scaled_dot_attention"].metadata.nbgrader
    assert cells["test_scaled_dot_attention"].metadata.nbgrader == want, "expected the release's test metadata"
    MetadataValidator().validate_nb(out)


def test_lost_metadata_of_edited_solution_found_by_name(tmp_path, release_dir, rel, src):
    """Is an edited solution cell without metadata found by the object it defines, even with extra cells around?"""
    nb = mc.solved(rel, src)
    i = mc.index_of(nb, "scaled_dot_attention")
    del nb.cells[i].metadata["nbgrader"]
    nb.cells.insert(i, nbformat.v4.new_code_cell("x = 1  # scratch"))
    s = one(run(tmp_path, {"alice/nmt.ipynb": nb}, release_dir), "alice")
    cell = by_id(nbformat.read(s.path, as_version=4))["scaled_dot_attention"]
    assert cell.source.startswith("class ScaledDotAttention"), f"expected the class cell, got {cell.source[:40]!r}"
    assert "restored lost nbgrader metadata of 'scaled_dot_attention' (matched by position)" in s.repairs


def test_deleted_test_cells_restored_after_their_solution(tmp_path, release_dir, rel, src):
    """Are deleted test cells put back right after their solution cells?"""
    nb = mc.solved(rel, src)
    mc.drop_test_cells(nb)
    s = one(run(tmp_path, {"alice/nmt.ipynb": nb}, release_dir), "alice")
    order = graded_ids(nbformat.read(s.path, as_version=4))
    for grade_id in contract.GRADED["nmt"]:
        assert order.index(f"test_{grade_id}") == order.index(grade_id) + 1, f"test_{grade_id} misplaced: {order}"
    assert "restored deleted test cell 'test_fit_linear_log'" in s.repairs, f"got {s.repairs}"


def test_deleted_solution_cell_gets_an_inert_placeholder(tmp_path, release_dir, rel, src):
    """Is a deleted solution cell replaced by a cell that defines nothing (so it cannot undo a definition elsewhere)?"""
    nb = mc.solved(rel, src)
    del nb.cells[mc.index_of(nb, "fit_linear_log")]
    s = one(run(tmp_path, {"alice/nmt.ipynb": nb}, release_dir), "alice")
    cell = by_id(nbformat.read(s.path, as_version=4))["fit_linear_log"]
    assert not repair._defined_names(cell.source), f"placeholder defines {cell.source!r}"
    assert "restored deleted solution cell 'fit_linear_log' (empty: it scores 0)" in s.repairs, f"got {s.repairs}"


def test_duplicated_solution_keeps_the_last_copy(tmp_path, release_dir, rel, src):
    """When a solution cell was copied, does the last copy (the definition that runs last) keep the grade id?"""
    nb = mc.solved(rel, src)
    i = mc.index_of(nb, "scaled_dot_attention")
    first = copy.deepcopy(nb.cells[i])
    first.source, first["id"] = "class ScaledDotAttention:\n    pass", "first"
    nb.cells.insert(i, first)
    s = one(run(tmp_path, {"alice/nmt.ipynb": nb}, release_dir), "alice")
    out = nbformat.read(s.path, as_version=4)
    assert graded_ids(out).count("scaled_dot_attention") == 1, "expected the grade id on one cell"
    assert "pass" not in by_id(out)["scaled_dot_attention"].source, "expected the last (real) definition to keep the id"
    assert any(r.startswith("grade id 'scaled_dot_attention' was on 2 cells") for r in s.repairs), f"got {s.repairs}"


def test_split_written_answer_merged(tmp_path, release_dir, rel, src):
    """Is a written answer split over two cells (both with the grade id) merged into one cell?"""
    nb = mc.solved(rel, src)
    i = mc.index_of(nb, "written_scaling")
    nb.cells[i].source = "First half."
    second = copy.deepcopy(nb.cells[i])
    second.source, second["id"] = "Second half.", "second"
    nb.cells.insert(i + 1, second)
    s = one(run(tmp_path, {"alice/nmt.ipynb": nb}, release_dir), "alice")
    cell = by_id(nbformat.read(s.path, as_version=4))["written_scaling"]
    assert cell.source == "First half.\n\nSecond half.", f"expected the merged answer, got {cell.source!r}"


def test_test_cell_tags_and_edits_undone(tmp_path, release_dir, rel, src):
    """Are skip-execution/raises-exception tags stripped and an edited test cell restored to the release?"""
    nb = mc.solved(rel, src)
    cell = nb.cells[mc.index_of(nb, "test_positional_encodings")]
    cell.metadata["tags"] = ["skip-execution", "raises-exception"]
    cell.metadata["editable"] = True
    cell.source = "assert True"
    s = one(run(tmp_path, {"alice/nmt.ipynb": nb}, release_dir), "alice")
    out = by_id(nbformat.read(s.path, as_version=4))["test_positional_encodings"]
    want = by_id(rel)["test_positional_encodings"]
    assert out.source == want.source, "expected the release source back"
    assert "tags" not in out.metadata and out.metadata.get("editable") is False, f"got metadata {dict(out.metadata)}"
    assert "removed tag(s) skip-execution, raises-exception from 'test_positional_encodings'" in s.repairs, s.repairs
    assert "restored the edited locked cell 'test_positional_encodings'" in s.repairs, s.repairs


def test_unknown_grade_id_removed(tmp_path, release_dir, rel, src):
    """Is nbgrader metadata with a grade id the release does not have removed (nbgrader would reject it)?"""
    nb = mc.solved(rel, src)
    extra = nbformat.v4.new_code_cell("print(1)")
    extra.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "locked": True,
        "points": 5,
        "grade_id": "test_bonus",
        "schema_version": 3,
    }
    nb.cells.append(extra)
    s = one(run(tmp_path, {"alice/nmt.ipynb": nb}, release_dir), "alice")
    assert "test_bonus" not in graded_ids(nbformat.read(s.path, as_version=4))
    assert "removed nbgrader metadata with unknown grade id 'test_bonus'" in s.repairs, f"got {s.repairs}"


def test_wrong_notebook_under_a_notebook_name(tmp_path, release_dir, rel, src):
    """Is a file named nmt.ipynb that holds the clip notebook graded as clip (and logged)?"""
    clip = nbformat.read(release_dir / "clip.ipynb", as_version=4)
    subs = run(tmp_path, {"alice/nmt.ipynb": clip}, release_dir)
    assert one(subs, "alice", "clip").status == "ok", "expected the file graded as clip"
    assert one(subs, "alice", "nmt").status == "missing", "expected nmt missing"
    assert "'nmt.ipynb' holds the clip notebook: graded as clip" in one(subs, "alice", "clip").repairs


PDF = b"%PDF-1.4\n1 0 obj\n"


@pytest.mark.parametrize(
    "filename, content, status",
    [
        ("nmt.ipynb", b"", "empty file (0 bytes)"),
        ("nmt.ipynb", b"  \n", "empty file (only whitespace)"),
        (
            "nmt.ipynb",
            b'{"cells": [',
            "not a notebook: invalid JSON (line 1, column 12: Expecting value; truncated download?)",
        ),
        ("nmt.ipynb", PDF, "not a notebook: the file is a PDF file"),
        (
            "nmt.ipynb",
            b"<!DOCTYPE html><html>",
            "not a notebook: the file is HTML or XML (exported instead of downloaded as .ipynb?)",
        ),
        (
            "nmt.ipynb",
            b"import torch\nprint(1)\n",
            "not a notebook: the file is plain text or Python source, not notebook JSON",
        ),
        ("nmt.ipynb", b'{"name": "x"}', "not a notebook: JSON without notebook cells"),
        ("nmt.pdf", PDF, "not a notebook: 'nmt.pdf' is not an .ipynb file"),
        (
            "nmt.ipynb",
            nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import tensorflow", id="tf")])),
            "not this assignment's notebook (none of its cells match the A3 release)",
        ),
    ],
)
def test_ungradable_files_get_one_line_status(tmp_path, release_dir, filename, content, status):
    """Does each kind of broken file get its one-line status (and no staged notebook)?"""
    s = one(run(tmp_path, {f"alice/{filename}": content}, release_dir), "alice")
    assert (s.status, s.path) == (status, None), f"expected {status!r}, got {s.status!r}"


def test_canvas_zip_with_wrapper_folder(tmp_path, release_dir, rel, src):
    """Are Canvas-named files inside a zip's wrapper folder given to their students?"""
    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("submissions/smithj_12345_678_nmt.ipynb", nbformat.writes(mc.solved(rel, src)))
        zf.writestr("submissions/doea_222_333_nmt.ipynb", nbformat.writes(mc.solved(rel, src)))
    subs = ingest.ingest(archive, tmp_path / "staging", release=release_dir)
    assert {s.student for s in subs} == {"smithj~canvas12345", "doea~canvas222"}, (
        f"got {sorted({s.student for s in subs})}"
    )


def test_colliding_student_names_stay_apart(tmp_path, release_dir, rel, src):
    """Do two folders whose names look alike ('Jane Doe', 'Jane_Doe') stay two students, each under their own name?"""
    subs = run(
        tmp_path, {"Jane Doe/nmt.ipynb": mc.solved(rel, src), "Jane_Doe/nmt.ipynb": mc.solved(rel, src)}, release_dir
    )
    assert sorted({s.student for s in subs}) == ["Jane Doe", "Jane_Doe"], f"got {sorted({s.student for s in subs})}"


def test_batch_goes_on_after_a_broken_student(tmp_path, release_dir, rel, src):
    """Does a broken submission leave the next student's notebook untouched and ok?"""
    subs = run(tmp_path, {"aaa/nmt.ipynb": b"{", "bbb/nmt.ipynb": mc.solved(rel, src)}, release_dir)
    assert one(subs, "aaa").status.startswith("not a notebook") and one(subs, "bbb").status == "ok"


@pytest.mark.parametrize("source", [5, None, {"text": "x"}], ids=["a number", "null", "a mapping"])
def test_a_cell_without_source_text_is_recorded_and_the_batch_goes_on(tmp_path, release_dir, rel, src, source):
    """A hand-edited notebook with a cell whose source is no text (or is missing): is that notebook recorded as not
    a notebook, naming the cell, while the student's other notebook and the next student are still ingested?"""
    raw = json.loads(nbformat.writes(mc.solved(rel, src)))
    if source is None:
        del raw["cells"][3]["source"]
    else:
        raw["cells"][3]["source"] = source
    subs = run(
        tmp_path,
        {"alice/nmt.ipynb": json.dumps(raw).encode(), "bob/nmt.ipynb": mc.solved(rel, src)},
        release_dir,
    )
    alice, bob = one(subs, "alice"), one(subs, "bob")
    assert (alice.status, alice.path) == ("not a notebook: cell 4 has no source text", None), alice.status
    assert bob.status == "ok", bob.status


@pytest.mark.parametrize("kind", [5, None, "missing"], ids=["a number", "null", "missing"])
def test_a_cell_without_a_cell_type_is_recorded_and_the_batch_goes_on(tmp_path, release_dir, rel, src, kind):
    """A hand-edited notebook with a cell whose cell type is missing or no text: is that notebook recorded as not a
    notebook, naming the cell, while the next student is still ingested?"""
    raw = json.loads(nbformat.writes(mc.solved(rel, src)))
    if kind == "missing":
        del raw["cells"][3]["cell_type"]
    else:
        raw["cells"][3]["cell_type"] = kind
    subs = run(
        tmp_path, {"alice/nmt.ipynb": json.dumps(raw).encode(), "bob/nmt.ipynb": mc.solved(rel, src)}, release_dir
    )
    alice, bob = one(subs, "alice"), one(subs, "bob")
    assert (alice.status, alice.path) == ("not a notebook: cell 4 has no cell type", None), alice.status
    assert bob.status == "ok", bob.status


def _every_output_kind():
    """A notebook with each part nbformat saves as lists of lines (sources, stream text, text and image data,
    attachments), JSON data it leaves alone, and the transient metadata it drops on reading."""
    v4 = nbformat.v4
    md = v4.new_markdown_cell("![a](attachment:a.png)\nSecond line\n", id="md")
    md.attachments = {"a.png": {"image/png": "iVBORw0KGgo=\nAAAA\n"}}
    md.metadata["trusted"] = True
    code = v4.new_code_cell("x = 1\nprint(x)\nx\n", id="code", execution_count=3)
    code.metadata.update(trusted=False, tags=["t"])
    code.outputs = [
        v4.new_output("stream", name="stdout", text="1\n2\n"),
        v4.new_output(
            "execute_result",
            {"text/plain": "a\nb\n", "application/json": {"k": ["l1\n", "l2"]}, "application/x+json": ["p\n", "q"]},
            execution_count=3,
        ),
        v4.new_output("display_data", {"image/svg+xml": "<svg>\n</svg>\n", "text/html": "<b>\n</b>"}),
        v4.new_output("error", ename="E", evalue="v", traceback=["line 1", "line 2"]),
    ]
    nb = v4.new_notebook(cells=[md, code, v4.new_raw_cell("raw\ntext\n", id="raw")])
    nb.metadata.update(signature="sha256:0", orig_nbformat=3, orig_nbformat_minor=0, kernelspec={"name": "python3"})
    return nb


def test_a_notebook_is_read_as_nbformat_reads_it(tmp_path):
    """Does read_notebook give, as plain JSON, the notebook nbformat.reads gives for a file with every part nbformat
    splits into lines, the same keys in the same order, the transient metadata dropped?"""
    text = nbformat.writes(_every_output_kind())
    (tmp_path / "nb.ipynb").write_text(text)
    nb, problem, repairs = read.read_notebook(tmp_path / "nb.ipynb")
    expected = nbformat.reads(text, as_version=4)
    assert (problem, repairs) == (None, []), (problem, repairs)
    assert json.dumps(nb) == json.dumps(expected), json.dumps(nb)[:500]
    assert "signature" not in nb["metadata"] and "trusted" not in nb["cells"][0]["metadata"]


@pytest.mark.parametrize(
    "damage, status",
    [
        (lambda raw: raw.update(cells={"a": 1}), "ValidationError: The notebook is invalid and is missing an expected"),
        (lambda raw: raw["cells"].insert(1, "hello"), "ValidationError: The notebook is invalid and is missing an"),
        (lambda raw: raw["cells"][1].update(metadata=None), "ValidationError: The notebook is invalid and is missing"),
        (lambda raw: raw["cells"][1].update(metadata=[1]), "TypeError: pop expected at most 1 argument, got 2"),
        (lambda raw: raw.update(metadata=None), "ValidationError: The notebook is invalid and is missing an expected"),
        (lambda raw: raw["cells"][1].update(source=["a", 1]), "TypeError: sequence item 1: expected str instance"),
    ],
    ids=[
        "cells a mapping",
        "a cell a string",
        "cell metadata null",
        "cell metadata a list",
        "metadata null",
        "a number in the source",
    ],
)
def test_a_notebook_of_an_odd_shape_gets_nbformats_reason(tmp_path, damage, status):
    """Is a hand-edited notebook whose structure is not a notebook's (cells a mapping, a cell a string, metadata
    that is no mapping) refused with the reason nbformat's own reader gives?"""
    raw = json.loads(nbformat.writes(_every_output_kind()))
    damage(raw)
    (tmp_path / "nb.ipynb").write_text(json.dumps(raw))
    nb, problem, _ = read.read_notebook(tmp_path / "nb.ipynb")
    assert nb is None and problem.startswith("not a notebook: " + status), problem


def test_every_repair_is_one_line(tmp_path, release_dir, rel, src):
    """Is every repair of a heavily damaged submission one line?"""
    nb = mc.solved(rel, src)
    mc.colabify(nb)
    mc.strip_nbgrader(nb)
    mc.drop_test_cells(nb)
    s = one(run(tmp_path, {"Jane Doe/Downloads/Copy of NMT (2).ipynb": mc.as_v40(nb)}, release_dir), "Jane Doe")
    assert s.status == "ok" and len(s.repairs) > 5, f"expected ok with many repairs, got {s.status}, {s.repairs}"
    multi = [r for r in s.repairs if "\n" in r or not r.strip()]
    assert not multi, f"expected one-line repairs, got {multi}"
    MetadataValidator().validate_nb(nbformat.read(s.path, as_version=4))


def _ingested(subs, staging, release_dir):
    """Each submission as fields (its path relative to staging) and the staged files' bytes, of one ingest."""
    found = ingest.ingest(subs, staging, release=release_dir)
    rows = [
        {**vars(s), "path": s.path and s.path.relative_to(staging), "timestamp": s.timestamp and s.timestamp.name}
        for s in found
    ]
    files = {p.relative_to(staging): p.read_bytes() for p in sorted(staging.rglob("*")) if p.is_file()}
    return rows, files


def test_a_class_ingested_across_processes_is_ingested_as_here(tmp_path, release_dir, rel, src, monkeypatch):
    """Does a class ingested across processes give the same submissions, in the same order, and the same staged
    files as one ingested in this process? (the hostile corpus, and names students have: accented, the same name
    decomposed, CJK, a Cyrillic look-alike beside its Latin twin)"""
    subs = tmp_path / "subs"
    mc.build(subs, release_dir, paths.SOURCE)
    for name in ("Zoë Ñúñez", "Zoe\u0308 Ñúñez", "李明", "Jоhn Smith", "John Smith"):
        mc.write(mc.solved(rel, src), subs / name / "nmt.ipynb")
    monkeypatch.setattr(ingest, "SPREAD_FROM", 10**9)
    here = _ingested(subs, tmp_path / "here", release_dir)
    monkeypatch.setattr(ingest, "SPREAD_FROM", 1)
    spread = _ingested(subs, tmp_path / "spread", release_dir)
    assert len(here[0]) > 100 and {"李明", "Jоhn Smith", "John Smith"} <= {r["student"] for r in here[0]}
    assert spread[0] == here[0]
    assert spread[1].keys() == here[1].keys() and spread[1] == here[1]


def test_a_release_folder_is_read_once_a_process_until_it_changes(tmp_path, release_dir, rel, src, monkeypatch):
    """Do the hand-offs of a class to one process read its release folder once (not once a hand-off), and read it
    again once a notebook in it changed?"""
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "nmt.ipynb").write_bytes((release_dir / "nmt.ipynb").read_bytes())
    reads = []
    monkeypatch.setattr(read, "load_releases", lambda f: reads.append(f) or {"nmt": nbformat.read(f / "nmt.ipynb", 4)})
    ingest._releases_at.cache_clear()
    mc.write(mc.solved(rel, src), tmp_path / "subs" / "alice" / "nmt.ipynb")
    entry = next(iter(discover.discover(tmp_path / "subs").items()))
    staging = tmp_path / "staging"
    for _ in range(3):
        subs = ingest._ingest_entry((folder, files.stamp(folder)), staging, {}, True, entry)
        assert subs[0].status == "ok", subs[0].status
    assert reads == [folder], reads
    nb = nbformat.read(folder / "nmt.ipynb", 4)
    nb.metadata["changed"] = True
    nbformat.write(nb, folder / "nmt.ipynb")
    ingest._ingest_entry((folder, files.stamp(folder)), staging, {}, True, entry)
    assert reads == [folder, folder], reads
