"""Where things live in the repository."""
from pathlib import Path

from autograder.assignment import GRADED

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "source" / "a3"
RELEASE = ROOT / "release" / "a3"
DATA = SOURCE / "data"
IMAGES = SOURCE / "images"
ASSIGNMENT = "a3"
NOTEBOOKS = tuple(GRADED)  # the course's notebooks, in course order (the contract lists them)
