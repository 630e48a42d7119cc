"""The images clip.ipynb ships: reproducible byte for byte, committed, described, one scavenger target."""

import csv
import filecmp

import numpy as np
from PIL import Image

from autograder.content.datagen import images
from autograder.paths import IMAGES


def rows():
    with open(IMAGES / "descriptions.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_generator_is_reproducible_byte_for_byte(tmp_path):
    """Do two runs of the generator write identical files?"""
    images._encode_all.cache_clear()
    first = images.generate(tmp_path / "a")
    images._encode_all.cache_clear()
    second = images.generate(tmp_path / "b")
    assert [p.relative_to(tmp_path / "a") for p in first] == [p.relative_to(tmp_path / "b") for p in second]
    different = [p.name for p, q in zip(first, second) if not filecmp.cmp(p, q, shallow=False)]
    assert not different, f"expected identical bytes, saw differences in {different}"


def test_committed_images_are_up_to_date(tmp_path):
    """Are the committed source/a3/images exactly what the generator writes now?"""
    written = images.generate(tmp_path)
    stale = [p.name for p in written if not filecmp.cmp(p, IMAGES / p.name, shallow=False)]
    assert not stale, f"expected committed images to match the generator (python -m autograder data), stale: {stale}"


def test_every_image_is_a_224_rgb_jpeg():
    """Is every shipped picture a 224 x 224 RGB JPEG?"""
    for row in rows():
        with Image.open(IMAGES / row["file"]) as image:
            assert (image.format, image.mode, image.size) == ("JPEG", "RGB", (224, 224)), (
                f"{row['file']}: saw {image.format} {image.mode} {image.size}"
            )


def test_descriptions_table():
    """Does descriptions.csv list every image once with a label, a one-line description and one target?"""
    table = rows()
    files = sorted(p.name for p in IMAGES.glob("*.jpg"))
    assert sorted(r["file"] for r in table) == files, "expected one row per shipped image"
    assert all(r["label"] and r["description"] and "\n" not in r["description"] for r in table)
    targets = [r["file"] for r in table if r["target"] == "1"]
    assert targets == [images.TARGET], f"expected exactly one target {images.TARGET}, saw {targets}"
    assert {r["target"] for r in table} == {"0", "1"}


def test_candidate_pool_matches_the_files():
    """Are the pixels the check ranks the same as the pixels of the shipped files?"""
    files, pool, target = images.candidate_pool()
    assert files[target] == images.TARGET
    for file, image in zip(files, pool):
        with Image.open(IMAGES / file) as shipped:
            assert np.array_equal(np.asarray(image), np.asarray(shipped.convert("RGB"))), f"{file}: pixels differ"
