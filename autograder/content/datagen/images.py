"""The images clip.ipynb ships: offline sample images of scikit-image and matplotlib, 224 x 224 JPEGs.

Every image is converted to RGB, resized so its shorter side is 224 pixels (Lanczos), centre-cropped to
224 x 224 and JPEG-encoded with fixed settings, so a re-run writes the same bytes. `descriptions.csv`
gives each file a class label, a one-line description and marks the scavenger-hunt target (the only row with
target = 1). The whole folder is the scavenger-hunt candidate pool.
"""

import csv
import functools
import io
from pathlib import Path

import numpy as np
from PIL import Image

SIZE = 224
JPEG_SETTINGS = dict(format="JPEG", quality=90, subsampling=0, optimize=False, progressive=False)
TARGET = "grace_hopper.jpg"

# (file name, where the pixels come from, class label for zero-shot classification, one-line description)
IMAGES = [
    (
        "astronaut.jpg",
        "skimage:astronaut",
        "astronaut",
        "an astronaut in an orange spacesuit in front of an American flag",
    ),
    ("camera.jpg", "skimage:camera", "cameraman", "a black and white photo of a man filming with a camera on a tripod"),
    ("cat.jpg", "skimage:cat", "cat", "a close-up of a tabby cat's face"),
    ("coffee.jpg", "skimage:coffee", "cup of coffee", "a cup of coffee on a saucer with a spoon"),
    ("horse.jpg", "skimage:horse", "horse", "a black silhouette of a horse on a white background"),
    ("page.jpg", "skimage:page", "page of text", "a scanned page of printed text"),
    ("rocket.jpg", "skimage:rocket", "rocket", "a rocket on its launch pad at dusk"),
    ("galaxies.jpg", "skimage:hubble_deep_field", "galaxy", "a telescope image of many distant galaxies"),
    ("moon.jpg", "skimage:moon", "moon", "a grey close-up of the cratered surface of the moon"),
    ("coins.jpg", "skimage:coins", "coin", "rows of old coins on a dark background"),
    ("retina.jpg", "skimage:retina", "retina", "a medical photo of the retina of a human eye"),
    ("brick.jpg", "skimage:brick", "brick wall", "a grey brick wall"),
    ("equations.jpg", "skimage:text", "handwriting", "handwritten mathematical equations on paper"),
    ("motorcycle.jpg", "skimage:stereo_motorcycle", "motorcycle", "a red motorcycle parked in a garage"),
    (
        "grace_hopper.jpg",
        "matplotlib:grace_hopper.jpg",
        "naval officer",
        "an official portrait of an older woman in a navy uniform and cap in front of an American flag",
    ),
    ("gift.jpg", "matplotlib:Minduka_Present_Blue_Pack.png", "gift box", "a blue gift box tied with a silver ribbon"),
]


def _load(source):
    """Pixels of a sample image as an RGB PIL image (no network: only data the packages ship)."""
    library, name = source.split(":")
    if library == "skimage":
        import skimage.data

        array = getattr(skimage.data, name)()
        if isinstance(array, tuple):  # stereo_motorcycle -> (left, right, disparity)
            array = array[0]
        array = np.asarray(array)
        if array.dtype == bool:
            array = array.astype(np.uint8) * 255
        image = Image.fromarray(array)
    else:
        import matplotlib.cbook

        with matplotlib.cbook.get_sample_data(name) as f:
            image = Image.open(f)
            image.load()
    if image.mode in ("RGBA", "LA", "P"):
        image = image.convert("RGBA")
        background = Image.new("RGBA", image.size, (255, 255, 255, 255))
        image = Image.alpha_composite(background, image)
    return image.convert("RGB")


def square(image, size=SIZE):
    """Resize the shorter side to `size` (Lanczos) and centre-crop to size x size."""
    w, h = image.size
    scale = size / min(w, h)
    image = image.resize((max(size, round(w * scale)), max(size, round(h * scale))), Image.LANCZOS)
    w, h = image.size
    left, top = (w - size) // 2, (h - size) // 2
    return image.crop((left, top, left + size, top + size))


@functools.lru_cache(maxsize=1)
def _encode_all():
    pairs = []
    for file, source, _, _ in IMAGES:
        buffer = io.BytesIO()
        square(_load(source)).save(buffer, **JPEG_SETTINGS)
        pairs.append((file, buffer.getvalue()))
    return tuple(pairs)


def encoded_images():
    """Every shipped image as {file name: JPEG bytes}, in the order of IMAGES."""
    return dict(_encode_all())


def candidate_pool():
    """The scavenger-hunt pool as (file names, decoded RGB PIL images, index of the target)."""
    files, images = [], []
    for file, data in encoded_images().items():
        image = Image.open(io.BytesIO(data))
        image.load()
        files.append(file)
        images.append(image.convert("RGB"))
    return files, images, files.index(TARGET)


def generate(source_dir):
    """Write images/*.jpg and images/descriptions.csv under source_dir; return the written paths."""
    folder = Path(source_dir) / "images"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for file, data in encoded_images().items():
        (folder / file).write_bytes(data)
        written.append(folder / file)
    table = folder / "descriptions.csv"
    with open(table, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["file", "label", "description", "target", "source"])
        for file, source, label, description in IMAGES:
            writer.writerow([file, label, description, int(file == TARGET), source])
    written.append(table)
    return written
