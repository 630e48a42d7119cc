"""Hidden checks for clip.ipynb: one per graded cell, each called by that cell's hidden test region.

Values are checked on the CPU on every machine, and placement on the stand-in GPU (see
autograder/checks/devices.py), so a verdict never depends on whether the grading machine has a GPU.
Features are random with row norms between 0.2 and 5, so forgetting to normalise always changes the
answer. The scavenger hunt needs the real ViT-B-32 OpenAI weights: they are looked up, without network,
in the hub cache $A3_MODEL_CACHE (see autograder/content/fetch_models.py); when they are not there the check
raises CheckUngradable and a person grades the caption.
"""

import torch

from autograder.checks import (
    FAKE_CUDA,
    UNDECIDED,
    CheckFailed,
    CheckUngradable,
    check,
    cpu64,
    expect_close,
    expect_device,
    fmt_shape,
    is_tensor,
    pristine,
    require_notebook_defined,
    run_on_gpu,
    seeded_generator,
    substituted,
    tensors_close,
    to_fake_cuda,
)
from autograder.checks.devices import MixedDevices, same_device
from autograder.content.reference import clip as ref

MAX_CAPTION_WORDS = 12
# A caption copies the target's line of descriptions.csv when it shares COPY_RUN or more words in a row with it (case
# and punctuation ignored), or when its words, FILLER aside, are the target's label and nothing else. The visible
# test cell of clip.ipynb and rubrics.toml's [clip.test_scavenger_caption] `copied` item use the same rule.
COPY_RUN = 5
FILLER = frozenset({"a", "an", "the", "of", "photo", "picture", "image"})


def _features(n, d, seed, device):
    """(n, d) float32 features whose row norms are spread between 0.2 and 5."""
    g = seeded_generator(seed)
    x = pristine.randn(n, d, generator=g)  # (n, d)
    x = x / x.norm(dim=-1, keepdim=True)
    norms = torch.linspace(0.2, 5.0, n)[torch.randperm(n, generator=g)]  # (n,)
    return (x * norms[:, None]).to(device)


def _expect_unchanged(before, after, what):
    if not pristine.equal(cpu64(before), cpu64(after)):
        raise CheckFailed(f"{what} should be left unchanged, but your function modified it in place")


def _expect_shape(got, want_shape, call, axes):
    if not is_tensor(got):
        raise CheckFailed(f"{call} should return a torch.Tensor, got {pristine.type(got).__name__}")
    if tuple(got.shape) != tuple(want_shape):
        raise CheckFailed(f"{call} should have shape {axes} = {tuple(want_shape)}, got {tuple(got.shape)}")


def _expect_on_gpu(fn, img, txt, call, **kwargs):
    """fn(img, txt) with both on the stand-in GPU must run there and return its (N_images, N_texts) tensor there."""
    img, txt = to_fake_cuda(img, txt)
    got = run_on_gpu(call, fn, img, txt, **kwargs)
    if got is UNDECIDED or not is_tensor(got):
        return
    expect_device(got, FAKE_CUDA, f"{call} on a GPU")


def _hint(got, candidates):
    """The hint of the first wrong-but-common answer that `got` matches, else ''."""
    for want, hint in candidates:
        if tensors_close(got, want):
            return hint
    return ""


def _unit(x):
    return x / x.norm(dim=-1, keepdim=True)


@check("similarity_matrix")
def check_similarity_matrix(similarity_matrix) -> None:
    """Cosine similarities of un-normalised features, (N_images, N_texts), inputs untouched, same device."""
    require_notebook_defined(similarity_matrix, "similarity_matrix")
    device = torch.device("cpu")
    for seed, (n_img, n_txt, d) in enumerate([(5, 3, 16), (2, 7, 8), (4, 4, 6)]):
        img, txt = _features(n_img, d, 10 + seed, device), _features(n_txt, d, 20 + seed, device)
        img_in, txt_in = img.clone(), txt.clone()
        got = similarity_matrix(img_in, txt_in)
        _expect_unchanged(img, img_in, "image_features")
        _expect_unchanged(txt, txt_in, "text_features")
        call = f"similarity_matrix of {n_img} images and {n_txt} texts"
        _expect_shape(got, (n_img, n_txt), call, "(N_images, N_texts)")
        expect_device(got, device, call)
        want = ref.similarity_matrix(img, txt)
        a, b = cpu64(img), cpu64(txt)
        hint = _hint(
            got,
            [
                (want.T, "it looks transposed: rows should be images, columns texts"),
                (a @ b.T, "it looks like the features were not normalised to unit length"),
                (_unit(a) @ b.T, "it looks like only the image features were normalised"),
                (a @ _unit(b).T, "it looks like only the text features were normalised"),
                (
                    (a / a.norm(dim=0)) @ (b / b.norm(dim=0)).T,
                    "it looks like you normalised each column (dim=0) instead of each feature vector (dim=-1)",
                ),
            ],
        )
        expect_close(got, want, call, hint=hint)
    _expect_on_gpu(similarity_matrix, img, txt, "similarity_matrix")


@check("zero_shot_probs")
def check_zero_shot_probs(zero_shot_probs) -> None:
    """Softmax over texts of logit_scale * cosine similarity, for the default and other scales."""
    require_notebook_defined(zero_shot_probs, "zero_shot_probs")
    device = torch.device("cpu")
    cases = [((4, 6, 16), None), ((3, 5, 8), 4.0), ((5, 2, 12), 1.0)]
    for seed, ((n_img, n_txt, d), scale) in enumerate(cases):
        img, txt = _features(n_img, d, 30 + seed, device), _features(n_txt, d, 40 + seed, device)
        img_in, txt_in = img.clone(), txt.clone()
        with substituted(zero_shot_probs, similarity_matrix=ref.similarity_matrix):
            if scale is None:
                got, scale, how = zero_shot_probs(img_in, txt_in), 100.0, "with the default logit_scale"
            elif seed == 1:
                got, how = zero_shot_probs(img_in, txt_in, logit_scale=scale), f"with logit_scale={scale}"
            else:
                got, how = zero_shot_probs(img_in, txt_in, scale), f"with logit_scale={scale} (positional)"
        _expect_unchanged(img, img_in, "image_features")
        _expect_unchanged(txt, txt_in, "text_features")
        call = f"zero_shot_probs of {n_img} images and {n_txt} texts {how}"
        _expect_shape(got, (n_img, n_txt), call, "(N_images, N_texts)")
        expect_device(got, device, call)
        cos = ref.similarity_matrix(cpu64(img), cpu64(txt))  # (N_images, N_texts)
        want = ref.zero_shot_probs(img, txt, logit_scale=scale)
        hint = _hint(
            got,
            [
                (
                    (scale * cos).softmax(dim=0),
                    "it looks like a softmax over images (dim=0); take it over texts (dim=-1)",
                ),
                (cos.softmax(dim=-1), "it looks like logit_scale was not applied to the similarities"),
                ((scale * scale * cos).softmax(dim=-1), "it looks like logit_scale was applied twice"),
                (
                    (100.0 * cos).softmax(dim=-1),
                    "it looks like a fixed scale of 100 instead of the logit_scale argument",
                ),
                ((cos / scale).softmax(dim=-1), "it looks like the similarities were divided by logit_scale"),
                (
                    (scale * cpu64(img) @ cpu64(txt).T).softmax(dim=-1),
                    "it looks like the features were not normalised to unit length",
                ),
            ],
        )
        expect_close(got, want, call, hint=hint)
    with substituted(zero_shot_probs, similarity_matrix=ref.similarity_matrix):
        _expect_on_gpu(zero_shot_probs, img, txt, "zero_shot_probs", logit_scale=2.0)


@check("build_prompts")
def check_build_prompts(build_prompts) -> None:
    """A new list of template.format(name), in order, for the default and other templates."""
    require_notebook_defined(build_prompts, "build_prompts")
    cases = [
        (["cat", "Golden Retriever", "space shuttle"], None),
        (["cat", "dog", "cat"], "a blurry photo of the {}."),
        (["ox"], "itap of a {} in the wild"),
        (["red panda", "Eiffel Tower"], "{}"),
    ]
    for i, (names, template) in enumerate(cases):
        names_in = list(names)
        if template is None:
            got, template, how = build_prompts(names_in), "a photo of a {}", "the default template"
        elif i == 1:
            got, how = build_prompts(names_in, template=template), f"template={template!r}"
        else:
            got, how = build_prompts(names_in, template), f"template {template!r} (positional)"
        if names_in != names:
            raise CheckFailed(f"build_prompts should leave class_names unchanged, but {names} became {names_in}")
        want = [template.format(name) for name in names]
        call = f"build_prompts({names!r}) with {how}"
        if pristine.type(got) is not list:
            raise CheckFailed(f"{call} should return a list of {len(want)} strings, got {pristine.type(got).__name__}")
        if pristine.len(got) != len(want) or any(pristine.type(p) is not str for p in got):
            raise CheckFailed(f"{call} should return {len(want)} strings, got {got!r}")
        for p, w in zip(got, want):
            if p != w:
                raise CheckFailed(f"{call}: expected {w!r}, got {p!r}")


def _as_order(got, n, call):
    """A ranking returned by a student as a list of Python ints (tensor, array or list accepted)."""
    import numpy as np

    if is_tensor(got):
        if got.dtype.is_floating_point or got.dtype.is_complex or got.dtype == torch.bool:
            raise CheckFailed(
                f"{call} should return integer image indices, got a {got.dtype} tensor (scores instead of indices?)"
            )
        if got.dim() != 1:
            raise CheckFailed(f"{call} should return a 1-D tensor of {n} indices, got shape {tuple(got.shape)}")
        order = pristine.tensor_to(pristine.tensor_detach(got), "cpu").tolist()
    elif pristine.isinstance(got, np.ndarray):
        if got.dtype.kind not in "iu" or got.ndim != 1:
            raise CheckFailed(f"{call} should return a 1-D array of integer indices, got {got.dtype} {got.shape}")
        order = [int(i) for i in got]
    elif pristine.type(got) in (list, tuple) and all(pristine.type(i) is int for i in got):
        order = list(got)
    else:
        raise CheckFailed(f"{call} should return a 1-D tensor of image indices, got {fmt_shape(got)}")
    if sorted(order) != list(range(n)):
        raise CheckFailed(f"{call} should contain each image index 0..{n - 1} exactly once, got {order}")
    return order


class _ModelOnGpu(torch.nn.Module):
    """A stand-in CLIP on the stand-in GPU: like CUDA, encode_text refuses tokens left on another device."""

    def __init__(self, dim):
        super().__init__()
        self.text_projection = torch.nn.Parameter(torch.empty(dim, dim, device=FAKE_CUDA))

    def encode_text(self, text, normalize=False):
        if not same_device(text.device, self.text_projection.device):
            raise MixedDevices(
                f"Expected all tensors to be on the same device, but found at least two devices, "
                f"cuda:0 and {text.device}!"
            )
        return torch.empty(text.shape[0], self.text_projection.shape[1], device=FAKE_CUDA)  # (B, D)


@check("rank_images")
def check_rank_images(rank_images) -> None:
    """Indices of un-normalised image features, most cosine-similar to the caption first."""
    require_notebook_defined(rank_images, "rank_images")
    from autograder.content.tinyclip import tiny_clip

    device = torch.device("cpu")
    model, _, tokenizer = tiny_clip(seed=0, device=device)
    captions = ["a photo of a cat", "an astronaut next to a rocket", "handwritten equations on paper"]
    for seed, caption in enumerate(captions):
        n = 7
        feats = _features(n, model.text_projection.shape[1], 50 + seed, device)  # (N_images, D)
        feats_in = feats.clone()
        call = f"rank_images({caption!r}, ...) for {n} images"
        with substituted(rank_images, similarity_matrix=ref.similarity_matrix):
            got = rank_images(caption, model, tokenizer, feats_in)
        _expect_unchanged(feats, feats_in, "image_features")
        order = _as_order(got, n, call)
        with torch.no_grad():
            text = model.encode_text(tokenizer([caption]).to(device))  # (1, D)
        scores = cpu64(ref.similarity_matrix(feats, text)[:, 0])  # (N_images,)
        want = ref.rank_images(caption, model, tokenizer, feats).tolist()
        if all(scores[order[i]] >= scores[order[i + 1]] - 1e-6 for i in range(n - 1)):
            continue
        hint = ""
        if order == want[::-1]:
            hint = "; that is worst first: sort in descending order"
        elif order == torch.argsort(torch.tensor(want)).tolist():
            hint = "; you returned each image's rank, not the image indices in ranked order"
        elif order == torch.argsort(cpu64(feats @ text.T)[:, 0], descending=True).tolist():
            hint = "; it looks like the image features were not normalised"
        raise CheckFailed(f"{call}: expected image indices best first {want}, got {order}{hint}")
    (feats,) = to_fake_cuda(_features(5, 8, 60, device))
    with substituted(rank_images, similarity_matrix=ref.similarity_matrix):
        run_on_gpu(
            "rank_images with the model and image_features on a GPU",
            rank_images,
            captions[0],
            _ModelOnGpu(8),
            tokenizer,
            feats,
        )


def _real_clip(device):
    """The real ViT-B-32 OpenAI model from the model cache, or CheckUngradable when it is not there."""
    from autograder.content.fetch_models import load_real_clip, model_cache

    try:
        return load_real_clip(model_cache(), device=device)
    except FileNotFoundError as e:
        raise CheckUngradable(
            f"{e}; run `python -m autograder fetch-models` on a machine with internet and set A3_MODEL_CACHE"
        ) from None
    except Exception as e:
        raise CheckUngradable(
            f"the cached ViT-B-32 weights could not be loaded ({pristine.type(e).__name__}: {e})"
        ) from None


def _target_row():
    """(label, description) of the target in descriptions.csv."""
    from autograder.content.datagen.images import IMAGES, TARGET

    return next((label, description) for file, _, label, description in IMAGES if file == TARGET)


def _tokens(text):
    """The words of `text`, lower-cased, every character that is not a letter or a digit a separator."""
    return "".join(c if c.isalnum() else " " for c in text.lower()).split()


def copies_target(caption):
    """True when `caption` shares COPY_RUN or more words in a row with the target's description, or is its label
    alone (FILLER words aside): the rule the visible test, this check and the rubric's `copied` item apply."""
    label, description = _target_row()
    own, line = _tokens(caption), _tokens(description)
    runs = {tuple(line[i : i + COPY_RUN]) for i in range(len(line) - COPY_RUN + 1)}
    if any(tuple(own[i : i + COPY_RUN]) in runs for i in range(len(own) - COPY_RUN + 1)):
        return True
    return [w for w in own if w not in FILLER] == _tokens(label)


def _show_target():
    """In a notebook, show the target image beside the caption, for the person who grades it by hand."""
    try:
        from IPython import get_ipython
        from IPython.display import Image, display
    except ImportError:
        return
    if get_ipython() is None:
        return
    from autograder.content.datagen.images import TARGET, encoded_images

    display(Image(data=encoded_images()[TARGET], format="jpeg", width=160, metadata={"alt": "the target image"}))


@check("scavenger_caption")
def check_scavenger_caption(caption, loader=None) -> None:
    """
    With the real CLIP weights, the caption must rank the target image first among the shipped images.

    Inputs:
    - caption: the student's scavenger_caption
    - loader: callable(device) -> (model, preprocess, tokenizer); default: the real ViT-B-32 OpenAI
      weights from the model cache, raising CheckUngradable when they are not cached
    """
    from autograder.content.datagen.images import candidate_pool

    if pristine.type(caption) is not str:
        raise CheckFailed(f"scavenger_caption should be a string, got {pristine.type(caption).__name__}")
    words = caption.split()
    if not words:
        raise CheckFailed("scavenger_caption is empty: write a caption that describes the target image")
    if copies_target(caption):
        raise CheckFailed(
            f"scavenger_caption copies the target's line in descriptions.csv ({COPY_RUN} or more words in a row, "
            "or its label alone): write your own caption"
        )
    if len(words) > MAX_CAPTION_WORDS:
        raise CheckFailed(f"scavenger_caption should have at most {MAX_CAPTION_WORDS} words, got {len(words)}")
    device = torch.device("cpu")  # the same ranking on every grading machine
    try:
        model, preprocess, tokenizer = (loader or _real_clip)(device)
    except CheckUngradable as e:
        _show_target()
        raise CheckUngradable(
            f"{e}. Grade by hand: does the caption {caption!r} single out the target image grace_hopper.jpg?"
        ) from None
    files, images, target = candidate_pool()
    with torch.no_grad():
        pixels = torch.stack([preprocess(image) for image in images]).to(device)  # (N, 3, H, W)
        feats = model.encode_image(pixels)  # (N, D)
    order = ref.rank_images(caption, model, tokenizer, feats).tolist()
    if order[0] != target:
        raise CheckFailed(
            f"expected your caption to rank the target {files[target]} first, but it ranks "
            f"{files[order[0]]} first and the target number {order.index(target) + 1} "
            f"of {len(files)}"
        )
