"""Catalogue of solution cells for clip.ipynb, in the shape of tests/checks/harness.py: correct alternatives
(`Correct`) and realistic wrong ones (`Mutant`, with a fragment its one-line failure must contain where one is given).

Each answer is (label, source of a complete solution cell). Every mutant's comment names the student mistake
it models. The sources are exec'd after PRELUDE as if they were notebook cells (module __main__).
"""

from tests.checks.harness import Catalogue, Cell, Correct, Mutant

PRELUDE = "import numpy as np\nimport torch\nimport torch.nn.functional as F\n"

# ---------------------------------------------------------------- similarity_matrix
SIMILARITY_CORRECT = [
    Correct(
        "F.normalize then @",
        """
def similarity_matrix(image_features, text_features):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return image_features @ text_features.T
""",
    ),
    Correct(
        "manual norm, einsum",
        """
def similarity_matrix(image_features, text_features):
    a = image_features / image_features.norm(dim=1, keepdim=True)
    b = text_features / text_features.norm(dim=1, keepdim=True)
    return torch.einsum("id,td->it", a, b)
""",
    ),
    Correct(
        "F.cosine_similarity with broadcasting",
        """
def similarity_matrix(image_features, text_features):
    return F.cosine_similarity(image_features[:, None, :], text_features[None, :, :], dim=-1)
""",
    ),
    Correct(
        "in-place on a detached copy, torch.mm",
        """
def similarity_matrix(image_features, text_features):
    a = image_features.detach().clone()
    a /= a.norm(dim=-1, keepdim=True)
    b = text_features.detach().clone()
    b /= b.norm(dim=-1, keepdim=True)
    return torch.mm(a, b.t())
""",
    ),
]

SIMILARITY_MUTANTS = [
    # forgot to normalise: returns raw dot products
    Mutant(
        "no normalisation",
        """
def similarity_matrix(image_features, text_features):
    return image_features @ text_features.T
""",
        "features were not normalised",
    ),
    # normalised along dim=0 (each feature column) instead of each vector
    Mutant(
        "normalise wrong axis",
        """
def similarity_matrix(image_features, text_features):
    image_features = F.normalize(image_features, dim=0)
    text_features = F.normalize(text_features, dim=0)
    return image_features @ text_features.T
""",
        "each column (dim=0)",
    ),
    # normalised the image features only
    Mutant(
        "text features not normalised",
        """
def similarity_matrix(image_features, text_features):
    image_features = F.normalize(image_features, dim=-1)
    return image_features @ text_features.T
""",
    ),
    # normalised the text features only
    Mutant(
        "image features not normalised",
        """
def similarity_matrix(image_features, text_features):
    text_features = F.normalize(text_features, dim=-1)
    return image_features @ text_features.T
""",
    ),
    # text @ image^T: (N_texts, N_images), the transpose of what was asked
    Mutant(
        "transposed output",
        """
def similarity_matrix(image_features, text_features):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return text_features @ image_features.T
""",
        "should have shape (N_images, N_texts) = (5, 3), got (3, 5)",
    ),
    # `x /= x.norm(...)` changes the caller's features in place
    Mutant(
        "normalises the inputs in place",
        """
def similarity_matrix(image_features, text_features):
    image_features /= image_features.norm(dim=-1, keepdim=True)
    text_features /= text_features.norm(dim=-1, keepdim=True)
    return image_features @ text_features.T
""",
        "image_features should be left unchanged",
    ),
    # norm without keepdim=True: (N, D) / (N,) broadcasts wrongly (or fails)
    Mutant(
        "norm without keepdim",
        """
def similarity_matrix(image_features, text_features):
    image_features = image_features / image_features.norm(dim=-1)
    text_features = text_features / text_features.norm(dim=-1)
    return image_features @ text_features.T
""",
    ),
    # divided by the squared norm instead of the norm
    Mutant(
        "divides by squared norm",
        """
def similarity_matrix(image_features, text_features):
    image_features = image_features / (image_features ** 2).sum(dim=-1, keepdim=True)
    text_features = text_features / (text_features ** 2).sum(dim=-1, keepdim=True)
    return image_features @ text_features.T
""",
    ),
    # F.cosine_similarity without broadcasting: pairs row i with row i
    Mutant(
        "elementwise cosine_similarity",
        """
def similarity_matrix(image_features, text_features):
    return F.cosine_similarity(image_features, text_features, dim=-1)
""",
    ),
    # Euclidean distances instead of similarities
    Mutant(
        "cdist distances",
        """
def similarity_matrix(image_features, text_features):
    return torch.cdist(F.normalize(image_features, dim=-1), F.normalize(text_features, dim=-1))
""",
    ),
    # converted to NumPy for the maths: returns an ndarray, not a tensor
    Mutant(
        "returns numpy",
        """
def similarity_matrix(image_features, text_features):
    a = F.normalize(image_features, dim=-1).cpu().numpy()
    b = F.normalize(text_features, dim=-1).cpu().numpy()
    return a @ b.T
""",
    ),
]

# Device mistakes: right on a CPU, wrong on a GPU (the result or an intermediate ends up on the CPU). The checks
# catch them on every machine with the stand-in GPU (autograder/checks/devices.py).
SIMILARITY_MUTANTS_DEVICE = [
    # filled a CPU tensor in a Python loop: the result is on the CPU when the features are on the GPU
    Mutant(
        "loop into a CPU tensor",
        """
def similarity_matrix(image_features, text_features):
    out = torch.zeros(len(image_features), len(text_features))
    for i in range(len(image_features)):
        for j in range(len(text_features)):
            out[i, j] = F.cosine_similarity(image_features[i], text_features[j], dim=0)
    return out
""",
        "GPU",
        device=True,
    ),
    # moved to the CPU "to be safe"
    Mutant(
        "returns on cpu",
        """
def similarity_matrix(image_features, text_features):
    return (F.normalize(image_features, dim=-1) @ F.normalize(text_features, dim=-1).T).cpu()
""",
        "GPU",
        device=True,
    ),
]

# ---------------------------------------------------------------- zero_shot_probs
ZERO_SHOT_CORRECT = [
    Correct(
        "normalize, @, softmax(dim=-1)",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return (logit_scale * image_features @ text_features.T).softmax(dim=-1)
""",
    ),
    Correct(
        "einsum, torch.softmax(dim=1)",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    a = image_features / image_features.norm(dim=-1, keepdim=True)
    b = text_features / text_features.norm(dim=-1, keepdim=True)
    logits = torch.einsum("id,td->it", a, b) * logit_scale
    return torch.softmax(logits, dim=1)
""",
    ),
    Correct(
        "exp / sum with max subtraction",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    sims = F.cosine_similarity(image_features[:, None], text_features[None], dim=-1)
    logits = logit_scale * sims
    logits = logits - logits.max(dim=-1, keepdim=True).values
    e = logits.exp()
    return e / e.sum(dim=-1, keepdim=True)
""",
    ),
]

ZERO_SHOT_MUTANTS = [
    # softmax over images (dim=0) instead of over texts
    Mutant(
        "softmax over images",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return (logit_scale * image_features @ text_features.T).softmax(dim=0)
""",
        "softmax over images (dim=0)",
    ),
    # forgot the logit scale: softmax of raw cosines is almost uniform
    Mutant(
        "logit scale ignored",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return (image_features @ text_features.T).softmax(dim=-1)
""",
        "logit_scale was not applied",
    ),
    # scaled the features and then the similarities again
    Mutant(
        "logit scale applied twice",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    image_features = logit_scale * F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return (logit_scale * image_features @ text_features.T).softmax(dim=-1)
""",
        "logit_scale was applied twice",
    ),
    # hard-coded 100 instead of using the argument
    Mutant(
        "hard-coded 100",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return (100.0 * image_features @ text_features.T).softmax(dim=-1)
""",
        "fixed scale of 100",
    ),
    # treated logit_scale like CLIP's stored log-scale parameter and exponentiated it
    Mutant(
        "exponentiates logit_scale",
        """
import math
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return (math.exp(logit_scale) * image_features @ text_features.T).softmax(dim=-1)
""",
    ),
    # temperature confusion: divided by the scale
    Mutant(
        "divides by logit_scale",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return (image_features @ text_features.T / logit_scale).softmax(dim=-1)
""",
    ),
    # forgot to normalise the features before the scaled dot product
    Mutant(
        "no normalisation",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    return (logit_scale * image_features @ text_features.T).softmax(dim=-1)
""",
    ),
    # (N_texts, N_images) probabilities: transposed output
    Mutant(
        "transposed output",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return (logit_scale * text_features @ image_features.T).softmax(dim=0)
""",
    ),
    # returned log-probabilities
    Mutant(
        "log_softmax",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return F.log_softmax(logit_scale * image_features @ text_features.T, dim=-1)
""",
    ),
    # sigmoid per pair (SigLIP style) instead of a softmax over the texts
    Mutant(
        "sigmoid instead of softmax",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    return torch.sigmoid(logit_scale * image_features @ text_features.T)
""",
    ),
]

ZERO_SHOT_MUTANTS_DEVICE = [
    # built the logits with NumPy and came back as a CPU tensor
    Mutant(
        "numpy round trip to cpu",
        """
def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    a = F.normalize(image_features, dim=-1).detach().cpu().numpy()
    b = F.normalize(text_features, dim=-1).detach().cpu().numpy()
    return torch.from_numpy(logit_scale * a @ b.T).softmax(dim=-1)
""",
        "GPU",
        device=True,
    ),
]

# ---------------------------------------------------------------- build_prompts
PROMPTS_CORRECT = [
    Correct(
        "list comprehension with format",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return [template.format(name) for name in class_names]
""",
    ),
    Correct(
        "replace placeholder in a loop",
        """
def build_prompts(class_names, template="a photo of a {}"):
    prompts = []
    for name in class_names:
        prompts.append(template.replace("{}", name))
    return prompts
""",
    ),
    Correct(
        "list(map(...))",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return list(map(template.format, class_names))
""",
    ),
]

PROMPTS_MUTANTS = [
    # ignored the template argument
    Mutant(
        "template ignored",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return [f"a photo of a {name}" for name in class_names]
""",
    ),
    # appended the name after the template instead of filling the placeholder
    Mutant(
        "appends instead of filling",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return [template + " " + name for name in class_names]
""",
    ),
    # printf-style placeholder on a "{}" template: raises TypeError
    Mutant(
        "wrong placeholder syntax",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return [template % name for name in class_names]
""",
    ),
    # replaced the wrong placeholder: "{}" stays in the prompt
    Mutant(
        "wrong placeholder name",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return [template.replace("{name}", name) for name in class_names]
""",
    ),
    # forgot list(...): returns a lazy map object
    Mutant(
        "returns map object",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return map(template.format, class_names)
""",
        "should return a list of 3 strings, got map",
    ),
    # returned a generator expression
    Mutant(
        "returns generator",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return (template.format(name) for name in class_names)
""",
    ),
    # joined the prompts into one string
    Mutant(
        "returns one string",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return ", ".join(template.format(name) for name in class_names)
""",
    ),
    # overwrote the caller's list with the prompts and returned it
    Mutant(
        "mutates input",
        """
def build_prompts(class_names, template="a photo of a {}"):
    for i, name in enumerate(class_names):
        class_names[i] = template.format(name)
    return class_names
""",
        "should leave class_names unchanged",
    ),
    # lower-cased the class names
    Mutant(
        "lowercases names",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return [template.format(name.lower()) for name in class_names]
""",
    ),
    # added a full stop to every prompt
    Mutant(
        "adds punctuation",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return [template.format(name) + "." for name in class_names]
""",
    ),
    # de-duplicated through a set: order (and repeated names) lost
    Mutant(
        "deduplicates with a set",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return [template.format(name) for name in set(class_names)]
""",
    ),
    # returned a tuple
    Mutant(
        "returns tuple",
        """
def build_prompts(class_names, template="a photo of a {}"):
    return tuple(template.format(name) for name in class_names)
""",
    ),
]

# ---------------------------------------------------------------- rank_images
RANK_CORRECT = [
    Correct(
        "no_grad, normalize, argsort descending",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        tokens = tokenizer([caption]).to(image_features.device)
        text = F.normalize(model.encode_text(tokens), dim=-1)
    sims = F.normalize(image_features, dim=-1) @ text[0]
    return torch.argsort(sims, descending=True)
""",
    ),
    Correct(
        "encode_text(normalize=True), topk",
        """
def rank_images(caption, model, tokenizer, image_features):
    device = next(model.parameters()).device
    with torch.no_grad():
        text = model.encode_text(tokenizer(caption).to(device), normalize=True)
        images = image_features / image_features.norm(dim=-1, keepdim=True)
        scores = (images @ text.T).squeeze(1)
    return scores.topk(len(scores)).indices
""",
    ),
    Correct(
        "softmax over images is monotonic: still right",
        """
def rank_images(caption, model, tokenizer, image_features):
    tokens = tokenizer([caption]).to(image_features.device)
    text = model.encode_text(tokens).detach()
    sims = F.normalize(image_features, dim=-1) @ F.normalize(text, dim=-1).T
    probs = (100 * sims).softmax(dim=0)[:, 0]
    return probs.argsort(descending=True).cpu()
""",
    ),
    Correct(
        "numpy argsort after detach",
        """
def rank_images(caption, model, tokenizer, image_features):
    text = model.encode_text(tokenizer([caption]).to(image_features.device))
    sims = F.cosine_similarity(image_features, text, dim=-1)
    return np.argsort(-sims.detach().cpu().numpy())
""",
    ),
]

RANK_MUTANTS = [
    # ascending sort: worst match first
    Mutant(
        "ascending",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer([caption]).to(image_features.device))
    sims = F.normalize(image_features, dim=-1) @ F.normalize(text, dim=-1)[0]
    return torch.argsort(sims)
""",
        "worst first",
    ),
    # returned the similarity scores, not the indices
    Mutant(
        "returns scores",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer([caption]).to(image_features.device))
    sims = F.normalize(image_features, dim=-1) @ F.normalize(text, dim=-1)[0]
    return torch.sort(sims, descending=True).values
""",
        "got a torch.float32 tensor (scores instead of indices?)",
    ),
    # ranked by raw dot product with un-normalised image features
    Mutant(
        "image features not normalised",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer([caption]).to(image_features.device), normalize=True)
    sims = image_features @ text[0]
    return torch.argsort(sims, descending=True)
""",
        "image features were not normalised",
    ),
    # softmax over the texts: with one caption every "probability" is 1, so the order is arbitrary
    Mutant(
        "softmax over texts",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer([caption]).to(image_features.device))
    sims = F.normalize(image_features, dim=-1) @ F.normalize(text, dim=-1).T
    probs = (100 * sims).softmax(dim=-1)[:, 0]
    return torch.argsort(probs, descending=True)
""",
    ),
    # .numpy() on a tensor that still requires grad (no torch.no_grad, no .detach())
    Mutant(
        "not detached",
        """
def rank_images(caption, model, tokenizer, image_features):
    text = model.encode_text(tokenizer([caption]).to(image_features.device))
    sims = F.normalize(image_features, dim=-1) @ F.normalize(text, dim=-1)[0]
    return np.argsort(-sims.cpu().numpy())
""",
    ),
    # argsort applied twice: each image's rank instead of the ranked indices
    Mutant(
        "returns ranks instead of order",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer([caption]).to(image_features.device))
    sims = F.normalize(image_features, dim=-1) @ F.normalize(text, dim=-1)[0]
    return torch.argsort(torch.argsort(sims, descending=True))
""",
        "each image's rank",
    ),
    # kept only the top 3 images
    Mutant(
        "top 3 only",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer([caption]).to(image_features.device))
    sims = F.normalize(image_features, dim=-1) @ F.normalize(text, dim=-1)[0]
    return sims.topk(3).indices
""",
    ),
    # tokenised each character of the caption as its own text
    Mutant(
        "tokenises characters",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer(list(caption)).to(image_features.device))
    sims = F.normalize(image_features, dim=-1) @ F.normalize(text, dim=-1).T
    return torch.argsort(sims.mean(dim=-1), descending=True)
""",
    ),
    # normalised the image features in place: the caller's features change
    Mutant(
        "normalises image features in place",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer([caption]).to(image_features.device), normalize=True)
    image_features /= image_features.norm(dim=-1, keepdim=True)
    return torch.argsort(image_features @ text[0], descending=True)
""",
    ),
    # sorted Euclidean distances in descending order (farthest first)
    Mutant(
        "distance sorted descending",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer([caption]).to(image_features.device), normalize=True)
    dist = torch.cdist(F.normalize(image_features, dim=-1), text)[:, 0]
    return torch.argsort(dist, descending=True)
""",
    ),
]

RANK_MUTANTS_DEVICE = [
    # tokens left on the CPU while the model is on the GPU
    Mutant(
        "tokens not moved to device",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer([caption]))
    sims = F.normalize(image_features, dim=-1) @ F.normalize(text, dim=-1)[0]
    return torch.argsort(sims, descending=True)
""",
        "GPU",
        device=True,
    ),
    # .numpy() on a CUDA tensor
    Mutant(
        "numpy on a cuda tensor",
        """
def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text = model.encode_text(tokenizer([caption]).to(image_features.device))
        sims = F.normalize(image_features, dim=-1) @ F.normalize(text, dim=-1)[0]
    return np.argsort(-sims.numpy())
""",
        "GPU",
        device=True,
    ),
]

# ---------------------------------------------------------------- scavenger_caption
# Captions for the deterministic keyword model in test_clip.py (see KEYWORDS there).
CAPTION_CORRECT = [
    # shares 4 words in a row with the target's line ("navy uniform and cap"): one fewer than a copy
    Correct("names the uniform", 'scavenger_caption = "an old woman in navy uniform and cap"'),
    Correct("names the person", 'scavenger_caption = "Grace Hopper"'),
    # the label with words of one's own is not the label alone
    Correct("the label and more", 'scavenger_caption = "a naval officer with glasses in navy uniform"'),
]

CAPTION_MUTANTS = [
    # described a different picture of a woman and a flag: the astronaut wins
    Mutant("describes the astronaut", 'scavenger_caption = "a woman in a spacesuit in front of a flag"'),
    # too vague: "a portrait of a man" picks the cameraman
    Mutant("describes the cameraman", 'scavenger_caption = "a black and white photo of a man"'),
    # left the placeholder empty
    Mutant("empty caption", 'scavenger_caption = ""'),
    # a list of words instead of one string
    Mutant("list of words", 'scavenger_caption = ["navy", "uniform", "woman"]'),
    # pasted the description from descriptions.csv
    Mutant(
        "copies the description",
        'scavenger_caption = "An official portrait of an older woman in a navy uniform and cap in front of an '
        'American flag."',
    ),
    # 5 words in a row of the target's line ("a navy uniform and cap"), the fewest that make a copy
    Mutant("copies five words in a row", 'scavenger_caption = "she wears a navy uniform and cap"'),
    # most of the line, lightly edited ("an older woman in a navy uniform and cap")
    Mutant("copies most of the line", 'scavenger_caption = "Older woman, in a navy uniform and cap!"'),
    # the target's label from descriptions.csv, in a prompt template
    Mutant("the label alone", 'scavenger_caption = "a photo of a naval officer"'),
    # an essay instead of a caption
    Mutant("too long", 'scavenger_caption = "this is a picture of ' + "a very " * 8 + 'old woman in navy uniform"'),
]


# ---------------------------------------------------------------- the catalogue
CATALOGUE = Catalogue(
    notebook="clip",
    prelude=PRELUDE,
    cells={
        "similarity_matrix": Cell(correct=SIMILARITY_CORRECT, mutants=SIMILARITY_MUTANTS + SIMILARITY_MUTANTS_DEVICE),
        "zero_shot_probs": Cell(correct=ZERO_SHOT_CORRECT, mutants=ZERO_SHOT_MUTANTS + ZERO_SHOT_MUTANTS_DEVICE),
        "build_prompts": Cell(correct=PROMPTS_CORRECT, mutants=PROMPTS_MUTANTS),
        "rank_images": Cell(correct=RANK_CORRECT, mutants=RANK_MUTANTS + RANK_MUTANTS_DEVICE),
        "scavenger_caption": Cell(correct=CAPTION_CORRECT, mutants=CAPTION_MUTANTS),  # judged by a stand-in CLIP
    },
)
