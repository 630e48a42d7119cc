"""The repair steps (autograder/grading/repair.py), one at a time, on a tiny release notebook built here
(tests/grading/test_repair.py runs them together on the real notebooks)."""

import copy
import json

import nbformat
from nbgrader.nbgraderformat import MetadataValidator

from autograder import paths
from autograder.grading import repair
from autograder.text import one_line

ANSWER = "def add(a, b):\n    return a + b"


def _cell(kind, grade_id, source, **nbgrader):
    """A release cell whose id is its grade id; nbgrader metadata (schema 3) when flags are given."""
    new = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    cell = new(source)
    cell["id"] = grade_id
    if nbgrader:
        cell.metadata["nbgrader"] = dict(
            {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3, "solution": False}, **nbgrader
        )
        cell.metadata["deletable"] = False
        if nbgrader.get("locked"):
            cell.metadata["editable"] = False
    return cell


def release():
    """intro (plain), setup (locked), add (solution), test_add (test), q_why (locked), written_why (answer)."""
    return nbformat.v4.new_notebook(
        cells=[
            _cell("markdown", "intro", "# Toy assignment\n\nWrite `add`, then say why it works."),
            _cell("code", "setup", "import math", locked=True),
            _cell(
                "code", "add", "def add(a, b):\n    # YOUR CODE HERE\n    raise NotImplementedError()", solution=True
            ),
            _cell("code", "test_add", "assert add(1, 2) == 3", grade=True, locked=True, points=1),
            _cell("markdown", "q_why", "**Question.** Why does `add` work?", locked=True),
            _cell("markdown", "written_why", "YOUR ANSWER HERE", grade=True, solution=True, points=1),
        ]
    )


def solved(rel):
    """The release with both answers written."""
    nb = copy.deepcopy(rel)
    nb.cells[at(nb, "add")].source = ANSWER
    nb.cells[at(nb, "written_why")].source = "Because + adds numbers."
    return nb


def at(nb, grade_id):
    """Index of the cell carrying grade_id."""
    return next(j for j, c in enumerate(nb.cells) if repair._gid(c) == grade_id)


def grade_ids(nb):
    return [repair._gid(c) for c in nb.cells]


def everything_in_place(nb):
    """The CellMap of a notebook whose cells are exactly the release's, in release order."""
    return repair.CellMap(pos={i: i for i in range(len(nb.cells))}, claimed=set(range(len(nb.cells))))


def anchored(nb, rel):
    """The CellMap of the first repair steps (grade ids and unchanged sources), their lines dropped."""
    cells = repair.CellMap()
    repair.restore_metadata_by_source(nb, rel, cells)
    return cells


# ---------------------------------------------------------------------------------------------
# 1. nbgrader metadata that does not belong to this release


def test_unknown_grade_id_is_removed():
    """Is nbgrader metadata with a grade id the release does not have removed, and logged?"""
    rel = release()
    nb = solved(rel)
    nb.cells.append(_cell("code", "bonus", "print(1)", grade=True, locked=True, points=5))
    nb.cells[-1].metadata["nbgrader"]["grade_id"] = "test_bonus"
    repairs = repair.remove_unknown_nbgrader_metadata(nb, rel, repair.CellMap())
    assert "nbgrader" not in nb.cells[-1].metadata, f"expected the metadata gone, got {nb.cells[-1].metadata}"
    assert repairs == ["removed nbgrader metadata with unknown grade id 'test_bonus'"], repairs


def test_empty_or_broken_nbgrader_metadata_is_removed_silently():
    """Is empty (or non-dict) nbgrader metadata removed without a repair line, since it hid no grade id?"""
    rel = release()
    nb = solved(rel)
    nb.cells[0].metadata["nbgrader"] = {}
    nb.cells[-1].metadata["nbgrader"] = "junk"
    repairs = repair.remove_unknown_nbgrader_metadata(nb, rel, repair.CellMap())
    assert "nbgrader" not in nb.cells[0].metadata and "nbgrader" not in nb.cells[-1].metadata
    assert repairs == [], f"expected no repair line, got {repairs}"


def test_known_grade_ids_are_kept():
    """Does a notebook whose grade ids are all the release's keep its metadata untouched?"""
    rel = release()
    nb = solved(rel)
    assert repair.remove_unknown_nbgrader_metadata(nb, rel, repair.CellMap()) == []
    assert nb == solved(rel), "expected the notebook unchanged"


# ---------------------------------------------------------------------------------------------
# 2. duplicated grade ids


def test_copied_solution_keeps_the_last_copy():
    """When a solution cell was copied, does the last copy (the definition that runs last) keep the grade id?"""
    rel = release()
    nb = solved(rel)
    early = copy.deepcopy(nb.cells[at(nb, "add")])
    early.source = "def add(a, b):\n    pass"
    nb.cells.insert(at(nb, "add"), early)
    repairs = repair.resolve_duplicate_grade_ids(nb, rel, repair.CellMap())
    assert grade_ids(nb).count("add") == 1 and nb.cells[at(nb, "add")].source == ANSWER, grade_ids(nb)
    assert "nbgrader" not in early.metadata, "expected the earlier copy to become an ordinary cell"
    assert repairs == [
        "grade id 'add' was on 2 cells (copied or split cell): kept the last one (it is the definition that runs last)"
    ], repairs


def test_copied_locked_cell_keeps_the_unedited_copy():
    """When a locked cell was copied and one copy edited, does the unedited copy keep the grade id?"""
    rel = release()
    nb = solved(rel)
    edited = copy.deepcopy(nb.cells[at(nb, "test_add")])
    edited.source = "assert True"
    nb.cells.insert(at(nb, "test_add") + 1, edited)
    nb.cells.insert(at(nb, "test_add"), copy.deepcopy(edited))
    repairs = repair.resolve_duplicate_grade_ids(nb, rel, repair.CellMap())
    assert nb.cells[at(nb, "test_add")].source == "assert add(1, 2) == 3", "expected the unedited copy to keep it"
    assert repairs == ["grade id 'test_add' was on 3 cells (copied or split cell): kept the unedited copy"], repairs


def test_split_written_answer_is_merged():
    """Is a written answer split over two cells merged into the first, the second one dropped?"""
    rel = release()
    nb = solved(rel)
    i = at(nb, "written_why")
    nb.cells[i].source = "First half."
    nb.cells.insert(i + 1, copy.deepcopy(nb.cells[i]))
    nb.cells[i + 1].source = "Second half."
    repairs = repair.resolve_duplicate_grade_ids(nb, rel, repair.CellMap())
    assert len(nb.cells) == len(rel.cells), f"expected the second half dropped, got {len(nb.cells)} cells"
    assert nb.cells[i].source == "First half.\n\nSecond half.", f"got {nb.cells[i].source!r}"
    assert repairs == [
        "grade id 'written_why' was on 2 cells (copied or split cell): merged the answer into the first"
    ], repairs


# ---------------------------------------------------------------------------------------------
# 3. anchors: grade ids, then unchanged release cells


def test_cells_with_grade_ids_are_anchors_without_repair():
    """Is every release cell of an undamaged notebook anchored to its own cell, with no repair line?"""
    rel = release()
    nb = solved(rel)
    cells = repair.CellMap()
    assert repair.restore_metadata_by_source(nb, rel, cells) == []
    assert cells.pos == {i: i for i in range(len(rel.cells))}, f"got {cells.pos}"
    assert cells.claimed == set(range(len(nb.cells))), f"got {cells.claimed}"


def test_unchanged_locked_cell_gets_its_metadata_back_by_source():
    """Does a locked cell that lost its nbgrader metadata but kept its source get the release's metadata back?"""
    rel = release()
    nb = solved(rel)
    del nb.cells[at(nb, "test_add")].metadata["nbgrader"]
    cells = repair.CellMap()
    repairs = repair.restore_metadata_by_source(nb, rel, cells)
    assert nb.cells[3].metadata["nbgrader"] == rel.cells[3].metadata["nbgrader"], "expected the release metadata"
    assert cells.pos[3] == 3, f"expected test_add anchored at 3, got {cells.pos}"
    assert repairs == ["restored lost nbgrader metadata of 'test_add' (matched by source)"], repairs


def test_unchanged_source_is_matched_only_after_the_previous_anchor():
    """Is an unchanged cell moved above an earlier anchor left unmatched (release order is kept)?"""
    rel = release()
    nb = solved(rel)
    moved = nb.cells.pop(at(nb, "test_add"))
    del moved.metadata["nbgrader"]
    nb.cells.insert(at(nb, "setup"), moved)
    cells = repair.CellMap()
    assert repair.restore_metadata_by_source(nb, rel, cells) == []
    assert 3 not in cells.pos and "nbgrader" not in moved.metadata, f"expected test_add unmatched, got {cells.pos}"


# ---------------------------------------------------------------------------------------------
# 4. lost metadata of edited solution cells


def test_edited_solution_is_found_by_the_name_it_defines():
    """Is an edited solution cell without metadata found by the function it defines, scratch cells around it?"""
    rel = release()
    nb = solved(rel)
    i = at(nb, "add")
    del nb.cells[i].metadata["nbgrader"]
    nb.cells.insert(i, nbformat.v4.new_code_cell("x = 1  # scratch"))
    cells = anchored(nb, rel)
    repairs = repair.restore_metadata_by_position(nb, rel, cells)
    assert grade_ids(nb)[i + 1] == "add" and nb.cells[i + 1].source == ANSWER, grade_ids(nb)
    assert cells.pos[2] == i + 1 and i + 1 in cells.claimed, f"got {cells.pos}"
    assert repairs == ["restored lost nbgrader metadata of 'add' (matched by position)"], repairs


def test_cell_defining_other_names_is_not_taken_for_a_solution():
    """Is a code cell between the anchors left alone when it does not define what the solution cell defines?"""
    rel = release()
    nb = solved(rel)
    nb.cells[at(nb, "add")] = nbformat.v4.new_code_cell("def plus(a, b):\n    return a + b")
    cells = anchored(nb, rel)
    assert repair.restore_metadata_by_position(nb, rel, cells) == []
    assert "add" not in grade_ids(nb) and 2 not in cells.pos, grade_ids(nb)


def test_edited_written_answer_is_found_by_position():
    """Is an edited written answer without metadata found as the markdown cell after its question?"""
    rel = release()
    nb = solved(rel)
    del nb.cells[at(nb, "written_why")].metadata["nbgrader"]
    cells = anchored(nb, rel)
    repairs = repair.restore_metadata_by_position(nb, rel, cells)
    assert grade_ids(nb)[5] == "written_why", grade_ids(nb)
    assert repairs == ["restored lost nbgrader metadata of 'written_why' (matched by position)"], repairs


def test_edited_locked_cell_is_not_matched_by_position():
    """Does an edited locked cell without metadata stay an ordinary cell (locked cells only match by source)?"""
    rel = release()
    nb = solved(rel)
    i = at(nb, "setup")
    nb.cells[i].source = "import math, os"
    del nb.cells[i].metadata["nbgrader"]
    cells = anchored(nb, rel)
    assert repair.restore_metadata_by_position(nb, rel, cells) == []
    assert "setup" not in grade_ids(nb) and 1 not in cells.pos, grade_ids(nb)


# ---------------------------------------------------------------------------------------------
# 5. deleted graded and locked cells


def test_deleted_test_cell_comes_back_after_its_solution():
    """Is a deleted test cell put back, as released, right after its solution cell?"""
    rel = release()
    nb = solved(rel)
    del nb.cells[at(nb, "test_add")]
    cells = anchored(nb, rel)
    repairs = repair.restore_deleted_cells(nb, rel, cells)
    assert grade_ids(nb) == grade_ids(rel), f"expected the release order, got {grade_ids(nb)}"
    assert nb.cells[3] == rel.cells[3], "expected the release's test cell"
    assert repairs == ["restored deleted test cell 'test_add'"], repairs


def test_deleted_solution_cell_comes_back_empty():
    """Is a deleted solution cell replaced by a placeholder that defines nothing and scores 0?"""
    rel = release()
    nb = solved(rel)
    del nb.cells[at(nb, "add")]
    cells = anchored(nb, rel)
    repairs = repair.restore_deleted_cells(nb, rel, cells)
    placeholder = nb.cells[at(nb, "add")]
    assert at(nb, "add") == 2 and not repair._defined_names(placeholder.source), placeholder.source
    assert placeholder.metadata["nbgrader"] == rel.cells[2].metadata["nbgrader"], "expected the release metadata"
    assert repairs == ["restored deleted solution cell 'add' (empty: it scores 0)"], repairs


def test_deleted_locked_cell_comes_back():
    """Is a deleted locked cell that is no test put back as released, and called a locked cell?"""
    rel = release()
    nb = solved(rel)
    del nb.cells[at(nb, "setup")]
    cells = anchored(nb, rel)
    repairs = repair.restore_deleted_cells(nb, rel, cells)
    assert nb.cells[1] == rel.cells[1], f"expected setup back at 1, got {grade_ids(nb)}"
    assert repairs == ["restored deleted locked cell 'setup'"], repairs


def test_cells_after_a_restored_cell_keep_their_match():
    """After a cell is put back, does every release cell still map to its own student cell?"""
    rel = release()
    nb = solved(rel)
    del nb.cells[at(nb, "setup")]
    cells = anchored(nb, rel)
    repair.restore_deleted_cells(nb, rel, cells)
    moved = {i: grade_ids(nb)[j] for i, j in cells.pos.items() if grade_ids(rel)[i] != grade_ids(nb)[j]}
    assert not moved, f"release cells mapped to the wrong student cells: {moved}"


# ---------------------------------------------------------------------------------------------
# 6. graded cells: release metadata, type and (locked) source


def test_skip_tags_are_removed_from_graded_cells():
    """Are tags that would skip a graded cell removed (and the student's other tags kept)?"""
    rel = release()
    nb = solved(rel)
    nb.cells[at(nb, "add")].metadata["tags"] = ["skip-execution", "raises-exception", "mine"]
    repairs = repair.reset_graded_cells(nb, rel, everything_in_place(nb))
    assert nb.cells[2].metadata["tags"] == ["mine"], f"got {nb.cells[2].metadata}"
    assert repairs == ["removed tag(s) skip-execution, raises-exception from 'add'"], repairs


def test_edited_locked_cell_gets_the_release_source():
    """Is an edited test cell (made editable, its assert weakened) restored to the release's cell?"""
    rel = release()
    nb = solved(rel)
    cell = nb.cells[at(nb, "test_add")]
    cell.source, cell.metadata["editable"] = "assert True", True
    repairs = repair.reset_graded_cells(nb, rel, everything_in_place(nb))
    assert nb.cells[3] == rel.cells[3], f"expected the release's test cell, got {nb.cells[3]}"
    assert repairs == ["restored the edited locked cell 'test_add'"], repairs


def test_solution_cell_of_the_wrong_type_is_changed_back():
    """Is a code solution cell turned into markdown changed back to code, keeping the student's source?"""
    rel = release()
    nb = solved(rel)
    i = at(nb, "add")
    markdown = nbformat.v4.new_markdown_cell(ANSWER)
    markdown.metadata = copy.deepcopy(nb.cells[i].metadata)
    nb.cells[i] = markdown
    repairs = repair.reset_graded_cells(nb, rel, everything_in_place(nb))
    assert nb.cells[i].cell_type == "code" and nb.cells[i].source == ANSWER, nb.cells[i]
    assert repairs == ["changed 'add' back to a code cell"], repairs


def test_solution_cell_gets_the_release_metadata_and_id():
    """Does a solution cell get the release's nbgrader flags and cell id back, keeping its other metadata?"""
    rel = release()
    nb = solved(rel)
    cell = nb.cells[at(nb, "add")]
    cell["id"] = "mine"
    cell.metadata.update(deletable=True, collapsed=True)
    cell.metadata["nbgrader"]["points"] = 99
    assert repair.reset_graded_cells(nb, rel, everything_in_place(nb)) == []
    cell = nb.cells[2]
    assert cell.metadata == dict(rel.cells[2].metadata, collapsed=True), f"got {cell.metadata}"
    assert cell["id"] == "add" and cell.source == ANSWER, f"got id {cell['id']!r}"


# ---------------------------------------------------------------------------------------------
# 7. cell ids


def test_graded_cells_get_the_release_ids():
    """Do graded cells get their release cell ids back, without a repair line?"""
    rel = release()
    nb = solved(rel)
    for cell in nb.cells:
        cell["id"] = f"student-{cell['id']}"
    assert repair.fix_cell_ids(nb, rel, everything_in_place(nb)) == []
    graded = [c["id"] for c in nb.cells if repair._gid(c)]
    assert graded == [c["id"] for c in rel.cells if repair._gid(c)], f"got {graded}"
    assert nb.cells[0]["id"] == "student-intro", "expected a valid id on an ordinary cell kept"


def test_duplicate_and_invalid_cell_ids_are_replaced():
    """Are duplicate and invalid ids of ordinary cells replaced by unique 's<index>' ids, and counted?"""
    rel = release()
    nb = solved(rel)
    nb.cells[0]["id"] = "same"
    nb.cells.insert(1, nbformat.v4.new_code_cell("x = 1"))
    nb.cells[1]["id"] = "same"
    nb.cells.insert(2, nbformat.v4.new_code_cell("y = 2"))
    nb.cells[2]["id"] = "bad id!"
    cells = repair.CellMap()
    repair.restore_metadata_by_source(nb, rel, cells)
    repairs = repair.fix_cell_ids(nb, rel, cells)
    assert [c["id"] for c in nb.cells[:3]] == ["same", "s1", "s2"], [c["id"] for c in nb.cells]
    assert repairs == ["replaced 2 duplicate or invalid cell ids"], repairs


def test_new_cell_id_steps_past_ids_in_use():
    """When 's<index>' is already taken, does the new id step on by 1000 ('s1001') instead?"""
    rel = release()
    nb = solved(rel)
    nb.cells[0]["id"] = "s1"
    nb.cells.insert(1, nbformat.v4.new_code_cell("x = 1"))
    nb.cells[1]["id"] = "bad id!"
    cells = repair.CellMap()
    repair.restore_metadata_by_source(nb, rel, cells)
    repair.fix_cell_ids(nb, rel, cells)
    assert nb.cells[1]["id"] == "s1001", f"got {nb.cells[1]['id']!r}"


def test_missing_cell_ids_are_added_silently():
    """Does an ordinary cell without an id (nbformat 4.0) get one without a repair line?"""
    rel = release()
    nb = solved(rel)
    del nb.cells[0]["id"]
    assert repair.fix_cell_ids(nb, rel, everything_in_place(nb)) == []
    assert nb.cells[0]["id"] == "s0", f"got {nb.cells[0].get('id')!r}"


def test_ordinary_cell_gives_up_a_graded_cells_id():
    """Does an ordinary cell that took a graded cell's id get another one?"""
    rel = release()
    nb = solved(rel)
    nb.cells[0]["id"] = "add"
    repairs = repair.fix_cell_ids(nb, rel, everything_in_place(nb))
    assert nb.cells[0]["id"] == "s0" and nb.cells[2]["id"] == "add", [c["id"] for c in nb.cells]
    assert repairs == ["replaced 1 duplicate or invalid cell ids"], repairs


# ---------------------------------------------------------------------------------------------
# the driver


def damaged(rel):
    """A solved notebook with one of each kind of damage."""
    nb = solved(rel)
    nb.cells.append(_cell("code", "test_bonus", "print(1)", grade=True, locked=True, points=5))
    nb.cells.insert(at(nb, "add"), copy.deepcopy(nb.cells[at(nb, "add")]))
    del nb.cells[at(nb, "written_why")].metadata["nbgrader"]
    del nb.cells[at(nb, "setup")]
    nb.cells[at(nb, "test_add")].metadata["tags"] = ["skip"]
    nb.cells[0]["id"] = "bad id!"
    return nb


def test_repair_cells_runs_every_step_in_order():
    """Does repair_cells give the notebook and the repair lines of its steps, each called as (nb, rel, cells) on
    one CellMap, run one after the other?"""
    rel = release()
    by_steps, lines, cells = damaged(rel), [], repair.CellMap()
    for step in (
        repair.remove_unknown_nbgrader_metadata,
        repair.resolve_duplicate_grade_ids,
        repair.restore_metadata_by_source,
        repair.restore_metadata_by_position,
        repair.restore_deleted_cells,
        repair.reset_graded_cells,
        repair.fix_cell_ids,
    ):
        lines += step(by_steps, rel, cells)
    nb, repairs = damaged(rel), ["earlier line"]
    repair.repair_cells(nb, rel, repairs)
    assert repairs == ["earlier line"] + lines, repairs
    assert nb == by_steps, "expected the notebook the steps make"
    assert len(lines) > 5, f"expected the damage repaired, got {lines}"


def test_plain_json_is_repaired_as_notebook_nodes_are():
    """Does repair make the same notebook, with the same lines, from a notebook of JSON's plain dicts (as
    read.read_notebook gives it) as from one of NotebookNodes, and does it leave the plain one plain?"""
    rel = release()
    nodes, plain = damaged(rel), json.loads(json.dumps(damaged(rel)))
    by_nodes, by_plain = [], []
    assert repair.repair(nodes, rel, by_nodes) is None and repair.repair(plain, rel, by_plain) is None
    assert by_plain == by_nodes and len(by_plain) > 5, by_plain
    assert json.dumps(plain) == json.dumps(nodes)
    kinds = {type(c) for c in plain["cells"]} | {type(c["metadata"]) for c in plain["cells"]}
    assert kinds == {dict}, kinds  # the release cells put back are plain copies too


def test_repaired_notebook_passes_nbgraders_checks():
    """Is the repaired damaged notebook valid nbformat with nbgrader metadata nbgrader accepts?"""
    rel = release()
    nb = damaged(rel)
    repair.repair_cells(nb, rel, [])
    nbformat.validate(nb)
    MetadataValidator().validate_nb(nbformat.from_dict(nb))  # as nbgrader reads the staged file: NotebookNodes
    assert [g for g in grade_ids(nb) if g] == grade_ids(rel)[1:], (
        f"expected the release's graded cells, got {grade_ids(nb)}"
    )


def test_undamaged_notebook_needs_no_repair():
    """Is a solved notebook straight from the release left exactly as it is, with no repair line?"""
    rel = release()
    nb, repairs = solved(rel), []
    repair.repair_cells(nb, rel, repairs)
    assert repairs == [] and nb == solved(rel), repairs


# ---------------------------------------------------------------------------------------------
# 8. the repaired notebook's validity


def test_a_students_invalid_cell_is_reported_as_nbformat_reports_it():
    """With copies of locked cells in it, is a notebook whose own cell stays invalid (a markdown cell with an
    execution count) refused with nbformat's message for the whole notebook?"""
    rel = release()
    nb = solved(rel)
    nb.cells[at(nb, "written_why")]["execution_count"] = 3
    nb.cells[at(nb, "setup")].source = "import math  # edited: a copy of the release cell goes in"
    problem = repair.repair(nb, rel, [])
    try:
        nbformat.validate(nb)
        raise AssertionError("expected the repaired notebook to stay invalid")
    except nbformat.ValidationError as e:
        whole = f"not a valid notebook: {one_line(str(e), 150)}"
    assert problem == whole, problem


def test_a_release_that_does_not_validate_is_not_trusted():
    """When a locked cell of the release itself is invalid, does the notebook that copies it fail validation (its
    copies are not taken as valid)?"""
    rel = release()
    rel.cells[at(rel, "q_why")]["outputs"] = []  # no markdown cell has outputs
    nb = solved(rel)
    problem = repair.repair(nb, rel, [])
    assert problem and problem.startswith("not a valid notebook"), problem


def test_copies_of_a_valid_releases_cells_are_not_validated_again(monkeypatch):
    """Is each cell of a repaired notebook checked against its type's schema but for the locked cells copied from a
    valid release, and does the notebook pass?"""
    rel = release()
    nb = solved(rel)
    checks, seen = repair._cell_checks(), []

    def spy(kind):
        return lambda cell: (seen.append(repair._gid(cell) or cell.source), checks[kind](cell))

    monkeypatch.setattr(repair, "_cell_checks", lambda: {kind: spy(kind) for kind in checks})
    assert repair.repair(nb, rel, []) is None
    locked = {"setup", "test_add", "q_why"}
    assert seen == [repair._gid(c) or c.source for c in nb.cells if repair._gid(c) not in locked], seen


def _invalid_cells():
    """Cells nbformat 4.5 refuses, one mistake each, and the cell type each claims."""
    code, md, raw = (
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_markdown_cell("# A"),
        nbformat.v4.new_raw_cell("r"),
    )
    out = []
    for base, key, value in [
        (md, "execution_count", 1),
        (md, "outputs", []),
        (code, "execution_count", "one"),
        (code, "outputs", [{"output_type": "stream", "name": "stdout"}]),  # no text
        (code, "outputs", [{"output_type": "nonsense"}]),
        (code, "source", 5),
        (raw, "metadata", {"format": 3}),
        (md, "attachments", {"a.png": "not a bundle"}),
        (code, "id", "has spaces"),
        (md, "cell_type", "heading"),
        (code, "metadata", {"tags": "skip"}),
        (raw, "outputs", []),
    ]:
        cell = copy.deepcopy(base)
        cell[key] = value
        out.append(cell)
    return out


def test_cells_nbformat_refuses_are_refused_with_nbformats_message():
    """For each kind of invalid cell (a catalogue), does validation refuse the notebook with the message
    nbformat.validate gives for it?"""
    for bad in _invalid_cells():
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_markdown_cell("ok", id="c0"), bad]
        try:
            nbformat.validate(copy.deepcopy(nb))
            raise AssertionError(f"nbformat accepts {bad}")
        except nbformat.ValidationError as e:
            expected = str(e)
        try:
            repair._validate(nb, [])
            raise AssertionError(f"expected {bad} refused")
        except nbformat.ValidationError as e:
            assert str(e) == expected, (bad, str(e))


def test_cells_nbformat_accepts_are_accepted():
    """Are the cells of the real release notebooks, a code cell with every kind of output, and cells with
    attachments accepted, as nbformat accepts them?"""
    v4 = nbformat.v4
    code = v4.new_code_cell("print(1)", execution_count=2)
    code.outputs = [
        v4.new_output("stream", name="stdout", text="1\n"),
        v4.new_output("execute_result", data={"text/plain": "3"}, execution_count=2),
        v4.new_output("display_data", data={"image/png": "iVBOR"}, metadata={"image/png": {"width": 3}}),
        v4.new_output("error", ename="E", evalue="no", traceback=["t"]),
    ]
    md = v4.new_markdown_cell("![a](attachment:a.png)")
    md["attachments"] = {"a.png": {"image/png": "iVBOR"}}
    cells = [code, md, v4.new_raw_cell("raw", metadata={"format": "text/plain"})]
    for name in ("nmt", "bert", "clip", "theory"):
        cells += copy.deepcopy(nbformat.read(paths.RELEASE / f"{name}.ipynb", as_version=4).cells)
    nb = v4.new_notebook(cells=cells)
    for j, cell in enumerate(nb.cells):
        cell["id"] = f"c{j}"
    nbformat.validate(copy.deepcopy(nb))
    repair._validate(nb, [])


def test_hand_edited_tags_become_a_list_of_names():
    """A notebook whose cells' tags were typed by hand (one name as a string, names joined by a comma, a repeated
    name, a number): is it still graded, each cell's tags a list of distinct names, a skip tag still gone from
    its graded cell, with one line saying so?"""
    rel = release()
    nb = solved(rel)
    nb.cells[0].metadata["tags"] = "remove-cell"
    nb.cells[at(nb, "add")].metadata["tags"] = "raises-exception,mine"
    nb.cells[at(nb, "q_why")].metadata["tags"] = ["note", "note"]
    nb.cells[at(nb, "written_why")].metadata["tags"] = 5
    repairs = []
    assert repair.repair(nb, rel, repairs) is None, repairs
    assert nb.cells[0].metadata["tags"] == ["remove-cell"]
    assert nb.cells[at(nb, "add")].metadata["tags"] == ["mine"]
    assert "tags" not in nb.cells[at(nb, "written_why")].metadata, nb.cells[at(nb, "written_why")].metadata
    assert "made the tags of 4 cell(s) a list of names (hand-edited metadata)" in repairs, repairs


def test_tags_that_are_a_list_of_names_are_left_alone():
    """Are tags already a list of distinct names kept as they are, with no repair line?"""
    rel = release()
    nb = solved(rel)
    nb.cells[0].metadata["tags"] = ["a", "b"]
    repairs = []
    assert repair.repair(nb, rel, repairs) is None
    assert nb.cells[0].metadata["tags"] == ["a", "b"]
    assert not any("tags" in r for r in repairs), repairs
