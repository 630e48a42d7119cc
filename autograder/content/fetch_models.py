"""python -m autograder fetch-models [--cache DIR] [--check]: cache the real pretrained models.

Run it once on a machine with internet. It downloads into DIR, a standard Hugging Face hub cache:
- OpenCLIP ViT-B-32 with OpenAI weights (hub repo timm/vit_base_patch32_clip_224.openai), read by
  clip.ipynb and by the hidden check of the scavenger hunt;
- tbs17/MathBERT and vinai/bertweet-base (PyTorch weights and tokenizer files), read by bert.ipynb.

DIR defaults to $A3_MODEL_CACHE, else the Hugging Face default cache (~/.cache/huggingface/hub or
$HF_HUB_CACHE). The default is the simplest choice: the grading sandbox mounts $HF_HOME
(~/.cache/huggingface) read-only, so grading finds the weights with no further setting. With another
DIR (e.g. a copy on a machine without internet) set

    export A3_MODEL_CACHE=DIR      # clip.ipynb and the scavenger-hunt check look here
    export HF_HUB_CACHE=DIR        # transformers (bert.ipynb) looks here
    export HF_HUB_OFFLINE=1        # never try the network

and make DIR readable inside the grading sandbox. Without cached CLIP weights the scavenger-hunt
check reports UNGRADABLE (a person grades that cell) instead of awarding or removing the point.
`--check` only looks at DIR (no network) and exits 1 when something is missing.
"""

import os
import sys
from pathlib import Path

from autograder import envvars

CLIP_MODEL = "ViT-B-32"
CLIP_REPO = "timm/vit_base_patch32_clip_224.openai"
CLIP_FILES = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")  # open_clip tries them in this order
HF_MODELS = ("tbs17/MathBERT", "vinai/bertweet-base")
HF_IGNORE = ["*.h5", "*.msgpack", "*.onnx", "*.ot", "tf_*", "flax_*", "rust_*", "coreml/*"]


def model_cache():
    """The model cache folder: $A3_MODEL_CACHE, or None for the Hugging Face default cache."""
    return os.environ.get(envvars.MODEL_CACHE) or None


def cached_file(repo, filename, cache_dir=None):
    """Path of `filename` from hub repo `repo` when it is in the cache, else None (never uses the network)."""
    from huggingface_hub import try_to_load_from_cache

    path = try_to_load_from_cache(repo, filename, cache_dir=cache_dir)
    return Path(path) if isinstance(path, str) and os.path.isfile(path) else None


def cached_clip_weights(cache_dir=None):
    """Path of the cached ViT-B-32 OpenAI checkpoint, or None when it is not cached."""
    for filename in CLIP_FILES:
        path = cached_file(CLIP_REPO, filename, cache_dir)
        if path is not None:
            return path
    return None


def load_real_clip(cache_dir=None, device="cpu"):
    """
    Load OpenCLIP ViT-B-32 with the OpenAI weights from the cache, without touching the network.

    Inputs:
    - cache_dir: hub cache folder (None: the Hugging Face default cache)
    - device: where to put the model

    Returns:
    - model (eval mode), preprocess (PIL image -> (3, 224, 224) tensor), tokenizer
    Raises FileNotFoundError when the weights are not cached.
    """
    import open_clip

    path = cached_clip_weights(cache_dir)
    if path is None:
        where = cache_dir or "the Hugging Face default cache"
        raise FileNotFoundError(f"no cached {CLIP_MODEL} OpenAI weights ({CLIP_REPO}) in {where}")
    # The OpenAI checkpoints were trained with QuickGELU; pretrained='openai' sets this from the tag.
    model, _, preprocess = open_clip.create_model_and_transforms(
        CLIP_MODEL, pretrained=str(path), force_quick_gelu=True, device=device
    )
    return model.eval(), preprocess, open_clip.get_tokenizer(CLIP_MODEL)


def fetch_clip(cache_dir):
    """Download the ViT-B-32 OpenAI checkpoint into cache_dir; return its path."""
    from huggingface_hub import hf_hub_download

    error = None
    for filename in CLIP_FILES:
        try:
            return Path(hf_hub_download(CLIP_REPO, filename, cache_dir=cache_dir))
        except Exception as e:  # the safetensors file may be missing: try the next format
            error = e
    raise RuntimeError(f"could not download {CLIP_REPO}: {error}")


def fetch_hf(repo, cache_dir):
    """Download the PyTorch weights, config and tokenizer files of a hub model into cache_dir."""
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(repo, cache_dir=cache_dir, ignore_patterns=HF_IGNORE))


def missing(cache_dir):
    """Names of the models that are not in cache_dir (checked without network)."""
    gone = [] if cached_clip_weights(cache_dir) else [f"{CLIP_MODEL} openai ({CLIP_REPO})"]
    gone += [repo for repo in HF_MODELS if cached_file(repo, "config.json", cache_dir) is None]
    return gone


def main(*, cache: str | None = None, check: bool = False) -> int:
    """`fetch-models`: cache the real models into `cache` (default: model_cache()); check=True only reports."""
    cache = cache or model_cache()
    cache = str(Path(cache).resolve()) if cache else None
    where = cache or "the Hugging Face default cache"
    if not check:
        if cache:
            Path(cache).mkdir(parents=True, exist_ok=True)
        print(f"fetching {CLIP_MODEL} (OpenAI weights) into {where}")
        fetch_clip(cache)
        for repo in HF_MODELS:
            print(f"fetching {repo} into {where}")
            fetch_hf(repo, cache)
    gone = missing(cache)
    for name in gone:
        print(f"missing: {name} in {where}", file=sys.stderr)
    if gone:
        return 1
    print(f"all models cached in {where}")
    if cache:
        print(f"to grade with them: export A3_MODEL_CACHE={cache} HF_HUB_CACHE={cache} HF_HUB_OFFLINE=1")
    return 0
