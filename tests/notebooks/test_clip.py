"""clip.ipynb beyond the shared structure (test_structure.py): solutions are the reference,
open_clip install guarded, runs in quick mode."""

import inspect
import sys

import pytest

from autograder.content.reference import clip as ref
from autograder.contract import GRADED
from tests.notebooks import (
    assert_checks_passed,
    cells_by_grade_id,
    code,
    execute,
    load,
    nbgrader_meta,
    output_text,
    streams,
)


@pytest.mark.parametrize("grade_id", sorted(g for g in GRADED["clip"] if g != "scavenger_caption"))
def test_solution_cell_is_the_reference(grade_id):
    """Is the notebook's solution (markers removed) exactly the reference the checks compare against?"""
    source = cells_by_grade_id(load("clip"))[grade_id].source
    solution = "\n".join(line for line in source.splitlines() if "### " not in line)
    reference = inspect.getsource(getattr(ref, grade_id)).rstrip()
    assert solution == reference, f"expected the solution of {grade_id} to equal autograder/content/reference/clip.py"


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
    hunt, which must say UNGRADABLE (no real weights), show the target image and score nothing?"""
    nb, seconds = execute("clip", extra_env={"A3_MODEL_CACHE": str(tmp_path / "empty-cache")}, allow_errors=True)
    print(f"clip.ipynb quick mode: {seconds:.1f} s", file=sys.stderr)
    by_id = {nbgrader_meta(c).get("grade_id"): c for c in nb.cells if c.cell_type == "code"}
    errors = {gid: o for gid, c in by_id.items() for o in c.outputs if o.output_type == "error"}
    assert set(errors) == {"test_scavenger_caption"}, f"expected only the scavenger test cell to stop, saw {errors}"
    assert_checks_passed(nb, "clip", except_for={"scavenger_caption"})
    stdout, _ = streams(by_id["test_scavenger_caption"].outputs)
    assert "UNGRADABLE scavenger_caption: no cached ViT-B-32 OpenAI weights" in stdout, f"saw {stdout!r}"
    assert "PASSED" not in stdout, f"saw {stdout!r}"
    shown = [o for o in by_id["test_scavenger_caption"].outputs if "image/jpeg" in o.get("data", {})]
    assert len(shown) == 1, "expected the target image beside the caption for the person who grades it"
    assert "not graded automatically" in errors["test_scavenger_caption"].evalue
    text = output_text(nb)
    assert "NO PRETRAINED WEIGHTS: this CLIP" in text and "MEANINGLESS" in text, (
        "expected the loud random-weights banner"
    )
    assert "the OpenAI weights have 100, and the accuracy means nothing" in text, "expected the logit scale labelled"
    pictures = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert pictures >= 7, f"expected the grid, heat map, bar charts, template plot, searches and target, saw {pictures}"


def _load_clip_paths(monkeypatch):
    """Run the notebook's load_clip on each path (cached, download, offline) with create_model_and_transforms
    recorded instead of called; returns {path: the keyword arguments it was called with}."""
    import open_clip

    calls, current = {}, [None]

    def record(name, **kwargs):
        calls[current[0]] = dict(kwargs, name=name)
        return None, None, None

    monkeypatch.setattr(open_clip, "create_model_and_transforms", record)
    source = cells_by_grade_id(load("clip"))["load_model"].source.split("model, preprocess, PRETRAINED")[0]
    for path, cached, online in (
        ("cached", "/cache/open_clip_model.safetensors", False),
        ("download", None, True),
        ("offline full size", None, False),
    ):
        current[0] = path
        namespace = {"os": __import__("os"), "QUICK": False}
        exec(source.replace("from huggingface_hub import try_to_load_from_cache", ""), namespace)
        namespace["cached_openai_weights"] = lambda cached=cached: cached
        namespace["hub_reachable"] = lambda online=online: online
        namespace["open_clip"] = open_clip
        namespace["load_clip"]()
    return calls


def test_every_clip_loading_path_builds_the_quickgelu_model(monkeypatch):
    """Do the cached, downloading and offline paths of load_clip all build ViT-B-32 with QuickGELU, the
    activation the OpenAI weights were trained with?"""
    calls = _load_clip_paths(monkeypatch)
    assert set(calls) == {"cached", "download", "offline full size"}, f"saw {calls}"
    for path, kwargs in calls.items():
        assert kwargs["name"] == "ViT-B-32" and kwargs.get("force_quick_gelu") is True, f"{path}: saw {kwargs}"
    assert calls["download"]["pretrained"] == "openai"


def test_quickgelu_flag_sets_the_activation():
    """Does force_quick_gelu=True give ViT-B-32 QuickGELU in both towers, where the default gives nn.GELU?"""
    import open_clip

    quick = open_clip.create_model("ViT-B-32", pretrained=None, force_quick_gelu=True, device="meta")
    plain = open_clip.create_model("ViT-B-32", pretrained=None, device="meta")
    assert type(quick.visual.transformer.resblocks[0].mlp.gelu).__name__ == "QuickGELU"
    assert type(quick.transformer.resblocks[0].mlp.gelu).__name__ == "QuickGELU"
    assert type(plain.visual.transformer.resblocks[0].mlp.gelu).__name__ == "GELU"
