"""python -m autograder fetch-models: what it downloads, where it looks, and how grading finds the cache."""

from pathlib import Path

import pytest

from autograder.content import fetch_models

REVISION = "0123456789abcdef0123456789abcdef01234567"


def plant(cache, repo, filename, content=b"x"):
    """Put a file into a Hugging Face hub cache layout, as hf_hub_download would."""
    folder = Path(cache) / f"models--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / "main").write_text(REVISION)
    path = folder / "snapshots" / REVISION / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def test_empty_cache_has_no_clip_weights(tmp_path):
    """Does an empty cache report no CLIP weights (without touching the network)?"""
    assert fetch_models.cached_clip_weights(tmp_path) is None


@pytest.mark.parametrize("filename", fetch_models.CLIP_FILES)
def test_cached_clip_weights_found(tmp_path, filename):
    """Is a cached ViT-B-32 OpenAI checkpoint found in either format?"""
    planted = plant(tmp_path, fetch_models.CLIP_REPO, filename)
    assert fetch_models.cached_clip_weights(tmp_path) == planted


def test_model_cache_follows_environment(monkeypatch, tmp_path):
    """Does grading look in $A3_MODEL_CACHE, and in the default hub cache when it is unset?"""
    monkeypatch.setenv("A3_MODEL_CACHE", str(tmp_path))
    assert fetch_models.model_cache() == str(tmp_path)
    monkeypatch.delenv("A3_MODEL_CACHE")
    assert fetch_models.model_cache() is None


def test_load_real_clip_without_weights_raises(tmp_path):
    """Does loading the real CLIP from an empty cache fail with FileNotFoundError naming the cache?"""
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        fetch_models.load_real_clip(tmp_path)


def test_load_real_clip_loads_the_cached_file_with_quickgelu(tmp_path, monkeypatch):
    """Does the real loader build ViT-B-32 from the cached file with QuickGELU, never the network?"""
    import open_clip

    planted = plant(tmp_path, fetch_models.CLIP_REPO, fetch_models.CLIP_FILES[0])
    calls = []

    class Model:
        def eval(self):
            return self

    def fake_create(name, **kwargs):
        calls.append((name, kwargs))
        return Model(), None, "preprocess"

    monkeypatch.setattr(open_clip, "create_model_and_transforms", fake_create)
    model, preprocess, tokenizer = fetch_models.load_real_clip(tmp_path)
    assert calls == [("ViT-B-32", {"pretrained": str(planted), "force_quick_gelu": True, "device": "cpu"})]
    assert preprocess == "preprocess" and tokenizer(["a cat"]).shape == (1, 77)


def test_check_mode_reports_missing_models(tmp_path, capsys):
    """Does `fetch-models --check` on an empty cache exit 1 and name every missing model?"""
    assert fetch_models.main(cache=str(tmp_path), check=True) == 1
    err = capsys.readouterr().err
    for name in ["ViT-B-32 openai", *fetch_models.HF_MODELS]:
        assert name in err, f"expected {name} reported missing, saw {err!r}"


def test_check_mode_passes_when_everything_is_cached(tmp_path, capsys):
    """With every model cached, does `--check` exit 0 and print the environment to grade with it?"""
    plant(tmp_path, fetch_models.CLIP_REPO, fetch_models.CLIP_FILES[1])
    for repo in fetch_models.HF_MODELS:
        plant(tmp_path, repo, "config.json", b"{}")
    assert fetch_models.main(cache=str(tmp_path), check=True) == 0
    out = capsys.readouterr().out
    assert f"export A3_MODEL_CACHE={tmp_path.resolve()} HF_HUB_CACHE={tmp_path.resolve()} HF_HUB_OFFLINE=1" in out


def test_fetch_downloads_every_model_into_the_cache(tmp_path, monkeypatch):
    """Does a fetch ask the hub for the CLIP checkpoint and both BERT models, all into the chosen cache?"""
    import huggingface_hub

    requested = []

    def fake_file(repo, filename, cache_dir=None):
        requested.append((repo, filename, cache_dir))
        return str(plant(cache_dir, repo, filename))

    def fake_snapshot(repo, cache_dir=None, ignore_patterns=None):
        requested.append((repo, "*", cache_dir))
        assert "*.h5" in ignore_patterns  # TensorFlow weights are not needed
        return str(plant(cache_dir, repo, "config.json", b"{}").parent)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_file)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot)
    cache = str(tmp_path.resolve())
    assert fetch_models.main(cache=cache) == 0
    assert requested == [
        (fetch_models.CLIP_REPO, "open_clip_model.safetensors", cache),
        ("tbs17/MathBERT", "*", cache),
        ("vinai/bertweet-base", "*", cache),
    ]


def test_fetch_falls_back_to_the_bin_checkpoint(tmp_path, monkeypatch):
    """When the safetensors file is missing on the hub, does the fetch take the .bin checkpoint?"""
    import huggingface_hub

    def fake_file(repo, filename, cache_dir=None):
        if filename.endswith(".safetensors"):
            raise FileNotFoundError(filename)
        return str(plant(cache_dir, repo, filename))

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_file)
    assert fetch_models.fetch_clip(str(tmp_path)).name == "open_clip_pytorch_model.bin"


def test_command_is_registered():
    """Is fetch-models a command of python -m autograder?"""
    from autograder.cli import COMMANDS

    assert COMMANDS["fetch-models"][0] == "autograder.content.fetch_models"
