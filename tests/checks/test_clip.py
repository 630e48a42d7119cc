"""Hidden checks of clip.ipynb, proved both ways: they pass correct solutions and fail realistic mistakes."""

import contextlib

import pytest
import torch

from autograder.checks import CheckFailed, CheckUngradable
from autograder.checks import clip as checks
from autograder.content.datagen.images import IMAGES, TARGET, candidate_pool
from autograder.content.reference import clip as ref
from autograder.content.samples.clip import WRONG
from autograder.contract import GRADED
from tests.checks import failure, notebook_cell, run
from tests.checks import mutants_clip as M
from tests.checks.harness import CatalogueTests, device_mutants

CATALOGUE = M.CATALOGUE
CHECKS = {grade_id: CATALOGUE.check(grade_id) for grade_id in CATALOGUE}
needs_cuda = pytest.mark.gpu


def cell(source, name):
    """Run `source` as a notebook cell (module __main__) and return the object it defines."""
    return notebook_cell(M.PRELUDE, source, name)


# ---------------------------------------------------------------- a stand-in CLIP for the scavenger hunt

# A deterministic stand-in for CLIP whose text encoder we control: an image's features are its 8 x 8
# thumbnail (centred), and a caption's features are the sum of the features of the images its keywords
# point to. "navy" therefore makes the target the best match, "spacesuit" the astronaut.
KEYWORDS = {
    "navy": TARGET,
    "hopper": TARGET,
    "uniform": TARGET,
    "spacesuit": "astronaut.jpg",
    "astronaut": "astronaut.jpg",
    "man": "camera.jpg",
    "tripod": "camera.jpg",
    "cat": "cat.jpg",
    "coffee": "coffee.jpg",
}


class KeywordTokenizer:
    """list of captions -> (B, len(KEYWORDS)) 0/1 tensor of the keywords each caption contains."""

    def __call__(self, texts):
        texts = [texts] if isinstance(texts, str) else texts
        rows = [[float(k in t.lower().replace(",", " ").split()) for k in KEYWORDS] for t in texts]
        return torch.tensor(rows)


class KeywordCLIP(torch.nn.Module):
    """encode_image: centred 8 x 8 thumbnail; encode_text: sum of the keywords' image features."""

    def __init__(self):
        super().__init__()
        files, images, _ = candidate_pool()
        pool = self.encode_image(torch.stack([self.preprocess(im) for im in images]))  # (N, 192)
        self.register_buffer("table", torch.stack([pool[files.index(KEYWORDS[k])] for k in KEYWORDS]))

    @staticmethod
    def preprocess(image):
        """PIL image -> (3, 8, 8) tensor in [0, 1]."""
        small = image.convert("RGB").resize((8, 8))
        return torch.tensor(list(small.getdata()), dtype=torch.float32).T.reshape(3, 8, 8) / 255

    def encode_image(self, pixels):
        x = pixels.flatten(1)  # (N, 192)
        return x - x.mean(dim=1, keepdim=True)

    def encode_text(self, tokens):
        return tokens.to(self.table.dtype) @ self.table  # (B, 192)


def keyword_loader(device):
    return KeywordCLIP().to(device), KeywordCLIP.preprocess, KeywordTokenizer()


# ---------------------------------------------------------------- every check, both ways


class TestCatalogue(CatalogueTests):
    """Every check against the reference and every answer of tests/checks/mutants_clip.py (harness.py); the caption
    is judged by the keyword stand-in for CLIP."""

    catalogue = CATALOGUE
    check_kwargs = {"scavenger_caption": {"loader": keyword_loader}}


@needs_cuda
@pytest.mark.parametrize("grade_id, source", device_mutants(CATALOGUE))
def test_device_mutant_is_wrong_on_a_real_gpu(grade_id, source):
    """Is each device mistake really wrong on CUDA (so the stand-in GPU judges it as a real GPU would)?"""
    fn = cell(source, grade_id)
    img, txt = torch.randn(4, 8, device="cuda"), torch.randn(3, 8, device="cuda")
    try:
        if grade_id == "rank_images":
            from autograder.content.tinyclip import tiny_clip

            model, _, tokenizer = tiny_clip(device="cuda")
            fn("a cat", model, tokenizer, torch.randn(4, model.text_projection.shape[1], device="cuda"))
            pytest.fail("expected the device mistake to raise on CUDA")
        got = fn(img, txt)
    except (RuntimeError, TypeError) as e:
        assert "device" in str(e) or "cuda" in str(e), e
        return
    assert got.device.type != "cuda", "expected the result off the GPU"


def test_crash_in_student_code_is_one_line():
    """Does a crash inside the student's function become a one-line failure naming the exception?"""
    broken = cell(
        "def similarity_matrix(image_features, text_features):\n    raise NotImplementedError()\n", "similarity_matrix"
    )
    message = failure(checks.check_similarity_matrix, broken)
    assert message == "similarity_matrix: your code raised NotImplementedError:"


# ---------------------------------------------------------------- scavenger hunt


def test_scavenger_failure_names_the_winner():
    """Does a failing caption learn which image it retrieved and where the target ended up?"""
    message = failure(checks.check_scavenger_caption, "a woman in a spacesuit", loader=keyword_loader)
    assert "ranks astronaut.jpg first" in message and f"target {TARGET}" in message


def test_scavenger_without_real_weights_is_ungradable(tmp_path, monkeypatch, capsys):
    """With no cached real weights, does the check say UNGRADABLE (quoting the caption) instead of scoring?"""
    monkeypatch.setenv("A3_MODEL_CACHE", str(tmp_path))
    with pytest.raises(CheckFailed) as info:
        checks.check_scavenger_caption(ref.scavenger_caption)
    message, printed = str(info.value), capsys.readouterr()
    assert message.startswith("scavenger_caption: not graded automatically: no cached ViT-B-32 OpenAI weights")
    assert printed.out.startswith("UNGRADABLE scavenger_caption: ")
    assert ref.scavenger_caption in printed.out
    assert "PASSED" not in printed.out and printed.err == ""


def test_scavenger_unloadable_weights_are_ungradable(capsys):
    """When the cached weights fail to load, is the caption left to a person rather than failed?"""

    def broken_loader(device):
        raise CheckUngradable("the cached ViT-B-32 weights could not be loaded (OSError: truncated file)")

    with pytest.raises(CheckFailed, match="not graded automatically"):
        checks.check_scavenger_caption(ref.scavenger_caption, loader=broken_loader)
    assert "UNGRADABLE scavenger_caption: the cached ViT-B-32 weights could not be loaded" in capsys.readouterr().out


def test_scavenger_rule_breaks_fail_even_offline(tmp_path, monkeypatch):
    """Is a caption that breaks the rules (copied description) failed without needing the weights?"""
    monkeypatch.setenv("A3_MODEL_CACHE", str(tmp_path))
    copied = next(d for f, _, _, d in IMAGES if f == TARGET)
    assert "copies the target's line in descriptions.csv" in failure(checks.check_scavenger_caption, copied.upper())
    assert "or its label alone" in failure(checks.check_scavenger_caption, "a photo of a naval officer")


# caption: whether it copies the target's line or label (5 or more words in a row, or the label alone)
COPY_RULE = {
    "an official portrait of an older woman in a navy uniform and cap in front of an American flag": True,
    "Older woman, in a navy uniform and cap!": True,
    "she wears a navy uniform and cap": True,  # 5 words in a row: the fewest that copy
    "a photo of a naval officer": True,
    "NAVAL OFFICER": True,
    "the image of the naval officer": True,
    "an old woman in navy uniform and cap": False,  # 4 words in a row
    "a naval officer with glasses in navy uniform": False,  # the label and words of one's own
    "naval officer, older woman": False,
    "Grace Hopper": False,
    ref.scavenger_caption: False,
}


def visible_copy_verdict(caption):
    """True when the released test cell's visible part rejects `caption` as a copy (random weights: no ranking)."""
    import csv
    import io as _io

    import nbformat

    from autograder import contract, paths

    nb = nbformat.read(paths.RELEASE / "clip.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if contract.nbgrader_meta(c).get("grade_id") == "test_scavenger_caption"]
    with open(paths.RELEASE / "images" / "descriptions.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    namespace = {
        "scavenger_caption": caption,
        "DESCRIPTIONS": [r["description"] for r in rows],
        "LABELS": [r["label"] for r in rows],
        "TARGET": next(i for i, r in enumerate(rows) if r["target"] == "1"),
        "FILES": [r["file"] for r in rows],
        "torch": torch,
        "F": torch.nn.functional,
        "image_features": torch.zeros(len(rows), 4),
        "encode_texts": lambda texts: torch.ones(len(texts), 4),
        "PRETRAINED": False,
    }
    try:
        with contextlib.redirect_stdout(_io.StringIO()):
            exec(compile(cell.source.split("### BEGIN HIDDEN TESTS")[0], "<test_scavenger_caption>", "exec"), namespace)
    except AssertionError as e:
        assert "copies the target's line or label in descriptions.csv" in str(e), e
        return True
    return False


@pytest.mark.parametrize("caption, copied", COPY_RULE.items(), ids=list(COPY_RULE))
def test_scavenger_copy_rule_is_the_same_visible_and_hidden(caption, copied):
    """Do the visible test, the hidden check (offline: before any weights are needed) and copies_target all reject
    exactly the captions that copy the target's line (5 or more words in a row) or its label alone?"""
    assert checks.copies_target(caption) == copied
    assert visible_copy_verdict(caption) == copied
    try:  # the stand-in CLIP ranks what passes the rules; only the copy rule is at stake here
        verdict = run(checks.check_scavenger_caption, caption, loader=keyword_loader)
    except CheckFailed as e:
        verdict = str(e)
    assert ("copies the target's line in descriptions.csv" in verdict) == copied, verdict


def test_reference_caption_follows_the_rules():
    """Is the reference caption a short string of our own, not the description?"""
    assert isinstance(ref.scavenger_caption, str)
    assert 0 < len(ref.scavenger_caption.split()) <= checks.MAX_CAPTION_WORDS
    assert "navy" in ref.scavenger_caption  # the keyword model ranks the target first for it
    assert (
        run(checks.check_scavenger_caption, ref.scavenger_caption, loader=keyword_loader)
        == "PASSED scavenger_caption\n"
    )


# ---------------------------------------------------------------- wrong sample submissions


def test_samples_cover_every_graded_cell():
    """Is there one wrong sample solution for each graded cell of clip.ipynb?"""
    assert set(WRONG) == set(GRADED["clip"])


@pytest.mark.parametrize("grade_id", sorted(GRADED["clip"]))
def test_wrong_sample_fails_its_check(grade_id):
    """Does each wrong sample solution lose its point?"""
    obj = cell(WRONG[grade_id], grade_id)
    if grade_id == "scavenger_caption":
        failure(checks.check_scavenger_caption, obj, loader=keyword_loader)
    else:
        failure(CHECKS[grade_id], obj)


# ---------------------------------------------------------------- one mistake, one cell
WRONG_SIMILARITY = """
def similarity_matrix(image_features, text_features):
    return image_features @ text_features.T  # forgot to normalise
"""
USES_SIMILARITY = {
    "zero_shot_probs": """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    return (logit_scale * similarity_matrix(image_features, text_features)).softmax(dim=-1)
""",
    "rank_images": """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer([caption]).to(image_features.device))
    return torch.argsort(similarity_matrix(image_features, text)[:, 0], descending=True)
""",
}


@pytest.mark.parametrize("grade_id", sorted(USES_SIMILARITY))
def test_correct_cell_passes_despite_wrong_similarity_matrix(grade_id):
    """Does a correct function that calls the notebook's (wrong) similarity_matrix still pass its own check?"""
    obj = cell(WRONG_SIMILARITY + USES_SIMILARITY[grade_id], grade_id)
    students = obj.__globals__["similarity_matrix"]
    assert f"PASSED {grade_id}" in run(CHECKS[grade_id], obj)
    assert obj.__globals__["similarity_matrix"] is students, "the notebook's own function should be put back"
