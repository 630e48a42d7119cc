"""Reference solutions for clip.ipynb; the hidden checks compare student code against these."""
import torch
import torch.nn.functional as F


def similarity_matrix(image_features, text_features):
    """
    Cosine similarity between every image and every text.

    Inputs:
    - image_features: (N_images, D) tensor, not necessarily normalised
    - text_features: (N_texts, D) tensor, not necessarily normalised

    Returns:
    - similarity: (N_images, N_texts) tensor; entry [i, j] is cos(image i, text j)
    """
    image_features = F.normalize(image_features, dim=-1)  # (N_images, D)
    text_features = F.normalize(text_features, dim=-1)  # (N_texts, D)
    return image_features @ text_features.T  # (N_images, N_texts)


def zero_shot_probs(image_features, text_features, logit_scale=100.0):
    """
    Zero-shot class probabilities: for each image, a softmax over the texts.

    Inputs:
    - image_features: (N_images, D) tensor
    - text_features: (N_texts, D) tensor, one row per class prompt
    - logit_scale: float multiplying the cosine similarities before the softmax

    Returns:
    - probs: (N_images, N_texts) tensor whose rows sum to 1
    """
    logits = logit_scale * similarity_matrix(image_features, text_features)  # (N_images, N_texts)
    return logits.softmax(dim=-1)


def build_prompts(class_names, template="a photo of a {}"):
    """
    Fill a prompt template with each class name.

    Inputs:
    - class_names: list of K strings
    - template: string with one "{}" placeholder

    Returns:
    - prompts: new list of K strings, prompts[k] = template with class_names[k] in place of "{}"
    """
    return [template.format(name) for name in class_names]


def rank_images(caption, model, tokenizer, image_features):
    """
    Order images by how well they match a caption, best first.

    Inputs:
    - caption: a string
    - model: an open_clip model (encode_text)
    - tokenizer: the model's tokenizer; tokenizer([caption]) is a (1, context_length) tensor
    - image_features: (N_images, D) tensor from model.encode_image, on the model's device

    Returns:
    - order: (N_images,) LongTensor of image indices, most similar image first
    """
    with torch.no_grad():
        tokens = tokenizer([caption]).to(image_features.device)  # (1, context_length)
        text_features = model.encode_text(tokens)  # (1, D)
        scores = similarity_matrix(image_features, text_features)[:, 0]  # (N_images,)
    return torch.argsort(scores, descending=True)


scavenger_caption = "an older woman wearing glasses and a navy officer's uniform and cap"
