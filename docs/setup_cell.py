# Setup: run this cell first. It works on a fresh Colab kernel and locally, and never installs nbgrader.
import os
import random
import urllib.request
from pathlib import Path

import numpy as np
import torch

# GRADING is True only while the autograder runs this notebook (nbgrader sets NBGRADER_EXECUTION): it then
# skips the training runs and figures that no check needs (`if not GRADING:` blocks). When you run the
# notebook, in quick mode or not, it is False and every cell runs.
GRADING = "NBGRADER_EXECUTION" in os.environ
# Quick mode shrinks data, epochs and models so the notebook runs in under a minute on a CPU.
# It is on during autograding and whenever A3_QUICK=1.
QUICK = os.environ.get("A3_QUICK") == "1" or GRADING
DATA_URL = os.environ.get("A3_DATA_URL", "https://raw.githubusercontent.com/a3-course/a3/main/release/a3")


def get_device():
    """CUDA if available, else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def set_seed(seed=0):
    """Seed Python, NumPy and PyTorch (every device)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def fetch(relpath):
    """Path of a course file next to this notebook, downloading it from DATA_URL when missing."""
    path = Path(relpath)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        url = f"{DATA_URL}/{relpath}"
        print(f"downloading {relpath} from {DATA_URL}")
        try:
            urllib.request.urlretrieve(url, path)
        except OSError as e:  # no network, a wrong A3_DATA_URL, a moved file
            raise RuntimeError(f"could not download {url} ({e}). Put the course's data folder next to this "
                               f"notebook, or point A3_DATA_URL at the course's copy (the folder that holds "
                               f"{relpath}), e.g. os.environ['A3_DATA_URL'] = 'https://.../release/a3' before "
                               f"this cell") from None
    return path


def needs(cell, probe):
    """Run probe(), which uses the graded object `cell` of an earlier cell; if that does not work yet, say so.

    Returns probe()'s result, or None (after a one-line note) when it raises: the visible checks that
    depend on `cell` are then skipped, and only that earlier cell needs fixing.
    """
    try:
        return probe()
    except Exception as e:  # noqa: BLE001 - any failure of the earlier cell means "not ready yet"
        reason = f"{type(e).__name__}: {e}".strip().rstrip(":")
        print(f"skipped: this needs `{cell}`, which does not work yet ({reason[:120]}); "
              f"finish that cell first")
        return None


def ready(*names):
    """True when earlier cells made every one of `names`; else say in one line what this cell waits for."""
    missing = [name for name in names if name not in globals()]
    if missing:
        print(f"skipped: this cell needs {', '.join(missing)} from an earlier cell that did not finish; fix the "
              f"first error above (often a TODO still to do) and run the notebook again")
    return not missing


def expect_shape(x, shape, what):
    """Check that `x` (a tensor or array) has `shape`, naming it `what` if not; True (a `needs` probe) if so."""
    assert tuple(x.shape) == tuple(shape), f"{what}: expected shape {tuple(shape)}, got {tuple(x.shape)}"
    return True


def attempt(fn, *args, what):
    """fn(*args); any error but a TODO's NotImplementedError becomes one line saying `what` should work."""
    try:
        return fn(*args)
    except NotImplementedError:  # a TODO still to do: its own message says so
        raise
    except Exception as e:  # noqa: BLE001 - the student's code may raise anything
        reason = " ".join(f"{type(e).__name__}: {e}".split())
        raise AssertionError(f"{what} should work, but raised {reason}") from e


DEVICE = get_device()
set_seed(0)
print(f"device: {DEVICE}, quick mode: {QUICK}")
