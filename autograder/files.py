"""Writing a file whole: `atomic_write`, the one way the kit writes what a reader may open at any moment
(stdlib only)."""

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path | str, data: bytes | str) -> None:
    """Write bytes or text to `path` through a temporary file and a rename (never half-written)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
