"""The written cells' model answers and rubrics (source/a3/rubrics.toml): complete, checked by `build --check`,
scored and shown as the course says, and never released."""

import shutil

import pytest

from autograder import contract, paths, rubrics
from autograder.content import build
from tests.fixtures import toy

TOY_CELL = {"toy": {"written_toy": 1.0}}


def toy_rubric(items):
    """The toy course's written cell with a model answer and `items` (TOML lines of [[items]] tables)."""
    return '[toy.written_toy]\nanswer = "Counting does not depend on order."\n' + "".join(
        f"\n[[toy.written_toy.items]]\n{item}\n" for item in items
    )


def error(text):
    with pytest.raises(rubrics.RubricError) as caught:
        rubrics.parse(text, "rubrics.toml")
    return str(caught.value)


def test_every_written_cell_of_the_course_has_a_rubric_that_fits():
    """Does source/a3/rubrics.toml give each of the course's written cells (contract.WRITTEN) a model answer and
    rubric items that fit its points, as `build --check` checks them?"""
    found = rubrics.load(paths.SOURCE / rubrics.FILENAME)
    assert build.rubric_problems() == []
    assert build.written_cells() == {
        nb: {g: float(p) for g, p in cells.items()} for nb, cells in contract.WRITTEN.items()
    }
    assert {(nb, gid) for nb, gid in found if gid.startswith("written_")} == {
        (nb, gid) for nb, cells in contract.WRITTEN.items() for gid in cells
    }
    assert ("clip", contract.test_cell_id("scavenger_caption")) in found  # graded by hand without CLIP's weights
    assert all(len(r.answer) > 200 and len(r.items) >= 2 for r in found.values())


def test_the_rubrics_stay_out_of_the_release():
    """Is rubrics.toml absent from release/, and no model answer's text in a released notebook?"""
    assert not (paths.RELEASE / rubrics.FILENAME).exists()
    released = "".join(p.read_text() for p in paths.RELEASE.glob("*.ipynb"))
    for rubric in rubrics.load(paths.SOURCE / rubrics.FILENAME).values():
        assert rubric.answer.splitlines()[0] not in released


def test_build_leaves_the_rubrics_out_of_a_release_it_builds(tmp_path_factory):
    """Does `build` (through nbgrader, which copies a source folder's other files) leave rubrics.toml out?"""
    assert (toy.TOY_SOURCE / rubrics.FILENAME).exists()
    release = toy.release(tmp_path_factory.getbasetemp())
    assert (release / "toy.ipynb").exists() and not (release / rubrics.FILENAME).exists()


@pytest.mark.parametrize(
    "items, problem",
    [
        (['id = "all"\npoints = 1\ntext = "Right."'], None),
        (
            ['id = "big"\npoints = 2\ntext = "Too much."'],
            "toy/written_toy: item 'big' is worth +2, more than the cell's 1",
        ),
        (
            ['id = "half"\npoints = 0.5\ntext = "Half."'],
            "toy/written_toy: the positive items add up to 0.5 of the cell's 1",
        ),
        (
            ['id = "cut"\npoints = -1.5\ntext = "Off."', 'id = "all"\npoints = 1\ntext = "Right."'],
            "item 'cut' is worth -1.5",
        ),
    ],
)
def test_item_points_must_fit_the_cells_points(items, problem):
    """Is an item worth more than its cell, or a rubric whose positive items cannot reach full marks, reported
    in one line naming the cell (and a rubric that fits not reported)?"""
    found = rubrics.problems(rubrics.parse(toy_rubric(items)), TOY_CELL)
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1 and problem in found[0]


def test_a_written_cell_without_a_rubric_is_named():
    """Is a written cell that rubrics.toml lacks, and a rubric for no written cell, each named?"""
    found = rubrics.problems(
        rubrics.parse(toy_rubric(['id = "all"\npoints = 1\ntext = "Right."'])), {"toy": {"written_new": 1}}
    )
    assert found == [
        "toy/written_new: no rubric (1 points)",
        "toy/written_toy: a rubric for a cell that is not a written answer or a test cell of the notebooks",
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        (
            toy_rubric(['id = "a"\npoints = 1\ntext = "x"', 'id = "a"\npoints = 0.5\ntext = "y"']),
            "toy/written_toy: item id 'a' appears twice",
        ),
        (toy_rubric(['id = "a b"\npoints = 1\ntext = "x"']), "toy/written_toy: item 1 needs an id of letters"),
        (toy_rubric(['id = "a;b"\npoints = 1\ntext = "x"']), "toy/written_toy: item 1 needs an id"),
        (toy_rubric(['id = "a"\npoints = "one"\ntext = "x"']), "item 'a' needs points, a non-zero number, got 'one'"),
        (toy_rubric(['id = "a"\npoints = true\ntext = "x"']), "item 'a' needs points"),
        (toy_rubric(['id = "a"\npoints = 1\ntext = ""']), "item 'a' needs a text"),
        (toy_rubric(['id = "a"\npoints = 1\ntext = "x"\nweight = 2']), "item 1 has unknown key(s) weight"),
        ('[toy.written_toy]\nanswer = "x"\n', "toy/written_toy: no rubric items"),
        ('[[toy.written_toy.items]]\nid = "a"\npoints = 1\ntext = "x"\n', "toy/written_toy: no model answer"),
        ("[toy.written_toy\n", "rubrics.toml: not valid TOML"),
    ],
)
def test_a_malformed_rubric_is_one_line_naming_the_cell(text, message):
    """Does a duplicate or malformed item id, missing points or text, an unknown key, a cell without items or
    model answer, or broken TOML give one line naming the file and the cell?"""
    found = error(text)
    assert message in found and "\n" not in found and found.startswith("rubrics.toml")


def test_the_score_is_clamped_to_the_cells_points():
    """Is a score the applied items plus the adjustment, never below 0 nor above the cell's points?"""
    rubric = rubrics.parse((toy.TOY_SOURCE / rubrics.FILENAME).read_text())[("toy", "written_toy")]
    assert rubrics.score(rubric, ["counting"], 0.25, 1) == 0.75
    assert rubrics.score(rubric, ["counting", "order"], 0.5, 1) == 1
    assert rubrics.score(rubric, ["circular"], 0, 1) == 0
    assert rubrics.score(rubric, ["counting", "circular"], -0.25, 1) == 0
    assert rubrics.unknown(rubric, ["counting", "gone"]) == ["gone"]


def test_the_comment_a_student_reads():
    """Does a student read each applied item with its points, the adjustment and the TA's remark, but no
    TA-only note?"""
    rubric = rubrics.parse((toy.TOY_SOURCE / rubrics.FILENAME).read_text())[("toy", "written_toy")]
    text = rubrics.comment(rubric, ["order", "counting"], -0.25, "Say which sets. ")
    assert text == (
        "+0.5 Relates addition to counting.\n"
        "+0.5 Says the count does not depend on the order.\n"
        "-0.25 adjustment by the TA\n"
        "Say which sets."
    )
    assert "union" not in text


def test_build_check_names_the_cell_without_a_rubric(tmp_path):
    """Does build's rubric check fail on a source whose rubrics.toml lacks a written cell, naming it?"""
    source = tmp_path / "a3"
    shutil.copytree(toy.TOY_SOURCE, source)
    (source / rubrics.FILENAME).write_text("")
    assert build.rubric_problems(source) == ["toy/written_toy: no rubric (1 points)"]
    (source / rubrics.FILENAME).unlink()
    assert build.rubric_problems(source)[0].endswith(
        "no rubrics file (model answers and rubric items of the written cells)"
    )


@pytest.mark.slow
def test_build_check_cli_fails_on_a_rubric_problem(tmp_path, tmp_path_factory, capsys):
    """Does `build --check` exit non-zero on a fresh release when an item is worth more than its cell, and say
    which?"""
    source = tmp_path / "a3"
    shutil.copytree(toy.TOY_SOURCE, source)
    (source / rubrics.FILENAME).write_text(toy_rubric(['id = "all"\npoints = 3\ntext = "Right."']))
    release = toy.release(tmp_path_factory.getbasetemp())
    assert build.main(check=True, source=source, release=release) == 1
    err = capsys.readouterr().err
    assert "rubrics do not fit the written cells (1 problems)" in err
    assert "toy/written_toy: item 'all' is worth +3, more than the cell's 1 points" in err


def test_editing_the_rubrics_does_not_change_the_graded_source(tmp_path):
    """Does a rubric edit leave the course source's digest as it was (so `grade` reuses every recorded grade),
    while a notebook edit changes it?"""
    from autograder.grading.pipeline import source_digest

    source = tmp_path / "a3"
    shutil.copytree(toy.TOY_SOURCE, source)
    before = source_digest(source)
    (source / rubrics.FILENAME).write_text(toy_rubric(['id = "all"\npoints = 1\ntext = "Right."']))
    assert source_digest(source) == before
    (source / "toy.ipynb").write_text((source / "toy.ipynb").read_text().replace("commutative", "commutative, really"))
    assert source_digest(source) != before


def test_editing_an_item_keeps_the_rest_of_the_file():
    """Does editing one item's points and text change those two lines only, comments and other items kept?"""
    text = (toy.TOY_SOURCE / rubrics.FILENAME).read_text()
    edited = rubrics.edit_item(text, "toy", "written_toy", "order", 0.75, 'Says "order" does not matter.')
    changed = [(a, b) for a, b in zip(text.splitlines(), edited.splitlines()) if a != b]
    assert changed == [
        ("points = 0.5", "points = 0.75"),
        ('text = "Says the count does not depend on the order."', 'text = "Says \\"order\\" does not matter."'),
    ]
    with pytest.raises(rubrics.RubricError, match="cannot edit item 'sets' here"):
        rubrics.edit_item(text, "toy", "written_toy", "sets", 1, "x")


@pytest.mark.parametrize("points", [0.5000001, 0.30000000000000004, -1.0000001, 0.5625, 1.0, 1e-05])
def test_an_item_edit_keeps_every_digit_of_its_points(points):
    """Is an item's new points written so that they read back the same, however many digits they have?"""
    text = (toy.TOY_SOURCE / rubrics.FILENAME).read_text()
    edited = rubrics.edit_item(text, "toy", "written_toy", "counting", points, "New text.")
    assert rubrics.parse(edited)[("toy", "written_toy")].item("counting").points == points
