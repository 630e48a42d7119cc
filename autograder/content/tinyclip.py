"""A tiny randomly initialised OpenCLIP model: same code path as ViT-B-32, a fraction of the size.

clip.ipynb builds the same configuration in quick mode when the real weights are not available; the
hidden checks use it as a deterministic stand-in model (3.6M parameters, built in well under a second).
"""

import open_clip
import torch

TINY_CLIP_CFG = dict(
    embed_dim=64,
    vision_cfg=dict(image_size=224, layers=2, width=64, patch_size=32, head_width=32),
    text_cfg=dict(context_length=77, vocab_size=49408, width=64, heads=2, layers=2),
    quick_gelu=True,
)


def tiny_clip(seed=0, device="cpu"):
    """
    A tiny random CLIP, identical for a given seed.

    Inputs:
    - seed: int, seeds the weight initialisation (the global RNG state is left untouched)
    - device: where to put the model

    Returns:
    - model: open_clip.CLIP in eval mode, parameters requiring grad like a freshly loaded model
    - preprocess: the evaluation transform (PIL image -> (3, 224, 224) tensor)
    - tokenizer: the ViT-B-32 tokenizer (list of str -> (B, 77) LongTensor)
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = open_clip.CLIP(**TINY_CLIP_CFG)
    model = model.to(device).eval()
    preprocess = open_clip.image_transform(TINY_CLIP_CFG["vision_cfg"]["image_size"], is_train=False)
    return model, preprocess, open_clip.get_tokenizer("ViT-B-32")
