"""The zygote's protocol, both ends: where its sockets are and the lines that cross them.

Two unix sockets lie in a 0700 host folder that no sandbox shows (`socket_folder`):
- LAUNCH, for the kernel launchers: a launcher first sends the line `notebook <name>` (which notebook the kernel is
  for; nothing after the word: any) and waits. The zygote forks the kernel once that notebook's libraries are in
  (`preload`); the child answers READY, the launcher sends one KernelRequest line with its stdin, stdout and stderr
  attached, and the child answers OK and becomes the kernel, or DECLINED (the launcher then starts a kernel of its
  own). The key is in the request alone, so only the child ever reads it. The connection stays open while the
  kernel runs: either end closing it ends the other.
- CONTROL, for the grading side: RESET (answered CLEAN or `failed: <why>`) before the next student, and
  CHECK after each cell (answered with a JSON list of what the process guard stopped since the last CHECK).
Every message is one line ending in a newline.
"""

import hashlib
import json
import socket
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

AUTOGRADED = "autograded"  # the workspace folder a zygote's sandbox shows (writable); kernels run below it
LAUNCH = "zygote.sock"
CONTROL = "control.sock"
NOTEBOOK = b"notebook"  # the first word of a launcher's first line
RESET, CHECK = b"reset", b"check"  # control commands
READY, OK, DECLINED, CLEAN = b"ready", b"ok", b"declined", b"clean"  # replies
CHECK_TIMEOUT = 10  # seconds either end waits on a control connection
MAX_LINE = 1 << 20  # bytes; a connection file and the kernel variables take a few KiB
STDIO = 3  # the file descriptors a KernelRequest carries: the launcher's stdin, stdout and stderr


def socket_folder(workspace) -> Path:
    """Host folder of a workspace's zygote sockets (0700, outside every sandbox)."""
    digest = hashlib.sha256(str(Path(workspace).resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"a3z-{digest}"


@dataclass
class KernelRequest:
    """What a launcher asks of the zygote: run the kernel of this connection file in cwd."""

    cwd: str  # the notebook's folder (below the workspace's AUTOGRADED folder)
    connection: str  # the connection file's text
    argv: list[str]  # kernel options after `-f CONNECTION_FILE`
    key: str  # this notebook's check key
    env: dict[str, str]  # the kernel variables; the zygote declines when it started with others
    folders: dict[str, int]  # path -> inode of the folders the kernel must see (cwd, the sockets' folder)

    def encode(self) -> bytes:
        """The request as one line."""
        return json.dumps(asdict(self)).encode() + b"\n"

    @classmethod
    def decode(cls, line: bytes) -> "KernelRequest":
        """The request of one line (ValueError or TypeError when it is not one)."""
        return cls(**json.loads(line))


def read_line(conn: socket.socket, data: bytes = b"") -> bytes:
    """Read from conn until a newline (after `data`, already read); the line without it, or what came
    before the peer closed (b"" for nothing). OSError on a time-out; ValueError past MAX_LINE bytes."""
    while not data.endswith(b"\n"):
        if len(data) > MAX_LINE:
            raise ValueError(f"a zygote message over {MAX_LINE} bytes")
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    return data.strip()


def wait_closed(conn: socket.socket) -> None:
    """Block until the peer closes conn (an error counts as closed); what it sends meanwhile is dropped."""
    try:
        while conn.recv(256):
            pass
    except OSError:
        pass


def closed(conn: socket.socket) -> bool:
    """True when the peer has closed conn (or it failed), without waiting; what it sent is left unread."""
    try:
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _plain(notebook: str) -> bool:
    """True for a name that fits a line: no spaces or line breaks, at most 255 characters."""
    return len(notebook) <= 255 and not any(c.isspace() for c in notebook)


def notebook_line(notebook: str) -> bytes:
    """A launcher's first line: the kernel is for `notebook` ('' for any; a name with spaces counts as '')."""
    return NOTEBOOK + b" " + (notebook if _plain(notebook) else "").encode() + b"\n"


def notebook_of(line: bytes) -> str:
    """The notebook a launcher's first line names ('' for any); ValueError when it is no such line."""
    word, _, name = line.partition(b" ")
    notebook = name.decode(errors="replace")
    if word != NOTEBOOK or not _plain(notebook):
        raise ValueError(f"not a launcher's first line: {line[:60]!r}")
    return notebook


def send_request(conn: socket.socket, request: KernelRequest, fds: list[int]) -> None:
    """Send a request with its STDIO file descriptors attached."""
    socket.send_fds(conn, [request.encode()], fds)


def receive_request(conn: socket.socket) -> tuple[KernelRequest, list[int]]:
    """The request on conn and the file descriptors that came with it."""
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, STDIO)
    return KernelRequest.decode(read_line(conn, data)), fds


def ask(workspace, command: bytes, timeout: float) -> bytes:
    """Send a control command to the workspace's zygote; its reply line (b"" when there is no zygote or it
    did not answer in time)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(str(socket_folder(workspace) / CONTROL))
        conn.sendall(command + b"\n")
        return read_line(conn)
    except (OSError, ValueError):
        return b""
    finally:
        conn.close()
