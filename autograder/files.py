"""Writing a file whole: `atomic_write`, the one way the kit writes what a reader may open at any moment, and
`write_staged` for a folder no one reads until its writer is done; `stamp`, what a cache of a folder's files is
keyed by (stdlib only)."""

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


def rewrite(path: Path | str, text: str) -> None:
    """Replace the text of an existing file as atomic_write does, keeping its mode and writing through a symlink to
    the file it names; a failed write leaves the file as it was and no temporary file behind."""
    real = Path(os.path.realpath(path))
    mode = real.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(text.encode())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_staged(path: Path | str, data: bytes | str) -> None:
    """Write bytes or text straight to `path`, with atomic_write's mode, in an existing folder that nothing reads
    until its writer is done (a student's pages waiting to be recorded): no temporary file, no rename."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    with os.fdopen(fd, "wb") as f:
        os.fchmod(fd, 0o644)  # whatever the umask
        f.write(data.encode() if isinstance(data, str) else data)


def stamp(folder: Path | str, pattern: str = "*.ipynb") -> tuple:
    """What tells one content of a folder's files matching `pattern` (a glob; "**/*.ipynb" for every level) from
    another: their paths in the folder, sizes and change times. A cache keyed by it reads the files again when they
    change."""
    folder = Path(folder)
    return tuple(
        sorted(
            (str(p.relative_to(folder)), st.st_size, st.st_mtime_ns) for p in folder.glob(pattern) for st in [p.stat()]
        )
    )
