"""python -m autograder data [--check]: regenerate the committed data and images under source/a3/.

Every generator is deterministic, so a re-run reproduces the files byte for byte; `--check` regenerates
into a temporary folder and fails when anything differs from what is committed.
"""

import filecmp
import importlib
import sys
import tempfile
from pathlib import Path

from autograder.paths import SOURCE

# Each module in autograder/content/datagen has generate(source_dir: Path) -> list of written paths.
GENERATORS = ["piglatin", "arithmetic", "images"]


def generate_all(source_dir):
    """Run every generator into source_dir; return the written paths relative to it."""
    written = []
    for name in GENERATORS:
        module = importlib.import_module(f"autograder.content.datagen.{name}")
        written += [Path(p).relative_to(source_dir) for p in module.generate(Path(source_dir))]
    return written


def main(*, check: bool = False) -> int:
    """`data`: regenerate the committed data and images (check=True: only report stale files)."""
    if not check:
        for rel in generate_all(SOURCE):
            print(f"wrote source/a3/{rel}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        stale = [
            rel
            for rel in generate_all(Path(tmp))
            if not (SOURCE / rel).exists() or not filecmp.cmp(Path(tmp) / rel, SOURCE / rel, shallow=False)
        ]
    for rel in stale:
        print(f"stale: source/a3/{rel}", file=sys.stderr)
    return 1 if stale else 0
