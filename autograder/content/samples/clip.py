"""Realistic wrong solution cells for clip.ipynb, one per graded cell (used to build sample submissions).

Each value is the complete source a student might put in that solution cell; every one loses the point.
"""

WRONG = {
    # forgot to normalise: raw dot products instead of cosine similarities
    "similarity_matrix": """def similarity_matrix(image_features, text_features):
    return image_features @ text_features.T
""",
    # softmax over the images (dim=0) instead of over the texts
    "zero_shot_probs": """import torch.nn.functional as F


def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    image_features = F.normalize(image_features, dim=-1)
    text_features = F.normalize(text_features, dim=-1)
    logits = logit_scale * image_features @ text_features.T
    return logits.softmax(dim=0)
""",
    # ignores the template argument
    "build_prompts": """def build_prompts(class_names, template="a photo of a {}"):
    return ["a photo of a " + name for name in class_names]
""",
    # sorts ascending: the worst match comes first
    "rank_images": """import torch
import torch.nn.functional as F


def rank_images(caption, model, tokenizer, image_features):
    with torch.no_grad():
        text_features = model.encode_text(tokenizer([caption]).to(image_features.device))
    scores = F.normalize(image_features, dim=-1) @ F.normalize(text_features, dim=-1)[0]
    return torch.argsort(scores)
""",
    # describes the astronaut (also a woman in front of an American flag) instead of the target
    "scavenger_caption": """scavenger_caption = "a woman in a spacesuit in front of the American flag"
""",
}
