"""Writing a file whole: `atomic_write`, the one way the kit writes what a reader may open at any moment, and
`write_staged` for a folder no one reads until its writer is done (stdlib only)."""

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


def write_staged(path: Path | str, data: bytes | str) -> None:
    """Write bytes or text straight to `path`, with atomic_write's mode, in an existing folder that nothing reads
    until its writer is done (a student's pages waiting to be recorded): no temporary file, no rename."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    with os.fdopen(fd, "wb") as f:
        os.fchmod(fd, 0o644)  # whatever the umask
        f.write(data.encode() if isinstance(data, str) else data)
