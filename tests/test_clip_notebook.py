"""clip.ipynb beyond the shared structure (test_notebooks.py): solutions are the reference,
open_clip install guarded, runs in quick mode."""
import inspect
import sys

import pytest

from autograder.assignment import GRADED
from autograder.reference import clip as ref
from tests.notebooks import (assert_checks_passed, cells_by_grade_id, code, execute, load, nbgrader_meta,
                             output_text, streams)


@pytest.mark.parametrize("grade_id", sorted(g for g in GRADED["clip"] if g != "scavenger_caption"))
def test_solution_cell_is_the_reference(grade_id):
    """Is the notebook's solution (markers removed) exactly the reference the checks compare against?"""
    source = cells_by_grade_id(load("clip"))[grade_id].source
    solution = "\n".join(line for line in source.splitlines() if "### " not in line)
    reference = inspect.getsource(getattr(ref, grade_id)).rstrip()
    assert solution == reference, f"expected the solution of {grade_id} to equal autograder/reference/clip.py"


def test_scavenger_solution_is_the_reference_caption():
    """Does the notebook's scavenger solution set the reference caption?"""
    namespace = {}
    exec(cells_by_grade_id(load("clip"))["scavenger_caption"].source, namespace)
    assert namespace["scavenger_caption"] == ref.scavenger_caption, f"saw {namespace['scavenger_caption']!r}"


def test_open_clip_install_is_guarded():
    """Is open_clip_torch installed only when the import fails (and nbgrader never)?"""
    source = code(load("clip"))
    assert "try:\n    import open_clip\nexcept ImportError:\n    %pip install -q open_clip_torch" in source
    assert "install -q nbgrader" not in source and "install nbgrader" not in source


@pytest.mark.slow
def test_executes_in_quick_mode(tmp_path):
    """Offline in quick mode, does the notebook run in well under 60 s, every check PASSED but the scavenger
    hunt, which must say UNGRADABLE (no real weights) and score nothing?"""
    nb, seconds = execute("clip", extra_env={"A3_MODEL_CACHE": str(tmp_path / "empty-cache")}, allow_errors=True)
    print(f"clip.ipynb quick mode: {seconds:.1f} s", file=sys.stderr)
    by_id = {nbgrader_meta(c).get("grade_id"): c for c in nb.cells if c.cell_type == "code"}
    errors = {gid: o for gid, c in by_id.items() for o in c.outputs if o.output_type == "error"}
    assert set(errors) == {"test_scavenger_caption"}, f"expected only the scavenger test cell to stop, saw {errors}"
    assert_checks_passed(nb, "clip", except_for={"scavenger_caption"})
    stdout, _ = streams(by_id["test_scavenger_caption"].outputs)
    assert "UNGRADABLE scavenger_caption: no cached ViT-B-32 OpenAI weights" in stdout, f"saw {stdout!r}"
    assert "PASSED" not in stdout, f"saw {stdout!r}"
    assert "not graded automatically" in errors["test_scavenger_caption"].evalue
    text = output_text(nb)
    assert "NO PRETRAINED WEIGHTS: this CLIP" in text and "MEANINGLESS" in text, \
        "expected the loud random-weights banner"
    pictures = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert pictures >= 7, f"expected the grid, heat map, bar charts, template plot, searches and target, saw {pictures}"
