"""Where things live in the repository."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "source" / "a3"
RELEASE = ROOT / "release" / "a3"
DATA = SOURCE / "data"
IMAGES = SOURCE / "images"
