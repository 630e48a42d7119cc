"""The zygote's protocol (autograder.sandbox.zygote.protocol): lines that arrive in pieces, requests that carry
file descriptors, and control questions with nobody to answer them."""

import os
import socket
import threading
import time

import pytest

from autograder.sandbox.zygote import protocol
from tests.slowdown import scaled


@pytest.fixture
def pair():
    """Two connected unix stream sockets, closed afterwards."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    yield a, b
    a.close()
    b.close()


def test_read_line_joins_pieces(pair):
    """Does read_line return one whole line that arrived in several pieces?"""
    a, b = pair
    a.sendall(b'{"cwd": ')
    threading.Timer(0.05, lambda: a.sendall(b'"/x"}\n')).start()
    assert protocol.read_line(b) == b'{"cwd": "/x"}'


def test_read_line_returns_what_came_before_the_close(pair):
    """When the peer closes without a newline, does read_line return what it sent (b"" for nothing)?"""
    a, b = pair
    a.sendall(b"ok")
    a.shutdown(socket.SHUT_WR)
    assert protocol.read_line(b) == b"ok"
    assert protocol.read_line(b) == b""


def test_read_line_refuses_an_endless_line(pair, monkeypatch):
    """Does read_line stop with ValueError once a line passes MAX_LINE bytes, instead of reading forever?"""
    monkeypatch.setattr(protocol, "MAX_LINE", 100)
    a, b = pair
    a.sendall(b"x" * 300)
    with pytest.raises(ValueError, match="over 100 bytes"):
        protocol.read_line(b)


def test_request_arrives_whole_with_its_descriptors(pair):
    """Does a KernelRequest cross the socket unchanged, with file descriptors the receiver can write to?"""
    a, b = pair
    sent = protocol.KernelRequest(
        cwd="/w/autograded/alice/a3",
        connection='{"ip": "/tmp/a3k-1/k", "key": "' + "s" * 5000 + '"}',  # longer than one datagram piece
        argv=["--HistoryManager.hist_file=:memory:"],
        key="notebook-key",
        env={"A3_QUICK": "1"},
        folders={"/w/autograded/alice/a3": 12, "/tmp/a3k-1": 34},
    )
    r, w = os.pipe()
    try:
        protocol.send_request(a, sent, [w, w, w])
        got, fds = protocol.receive_request(b)
        assert got == sent
        assert len(fds) == protocol.STDIO
        os.write(fds[1], b"through the passed fd")
        for fd in fds:
            os.close(fd)
        assert os.read(r, 100) == b"through the passed fd"
    finally:
        os.close(r)
        os.close(w)


def test_a_line_that_is_no_request_is_refused():
    """Is a line that is not a request (an unknown field, not JSON) refused with an error?"""
    with pytest.raises(TypeError):
        protocol.KernelRequest.decode(b'{"cwd": "/x", "shell": "rm -rf /"}')
    with pytest.raises(ValueError):
        protocol.KernelRequest.decode(b"reset")


def test_ask_without_a_zygote_answers_nothing_at_once(tmp_path):
    """With no zygote for a workspace, does ask() return b"" at once rather than wait for its time-out?"""
    start = time.monotonic()
    assert protocol.ask(tmp_path, protocol.CHECK, timeout=scaled(30)) == b""
    assert time.monotonic() - start < scaled(5)  # a sixth of the time-out, however slow the machine


def test_ask_gets_the_reply_line(tmp_path):
    """Does ask() send its command as one line to the workspace's control socket and return the reply line?"""
    folder = protocol.socket_folder(tmp_path)
    folder.mkdir(mode=0o700)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(folder / protocol.CONTROL))
    server.listen(1)
    heard = []

    def answer():
        conn, _ = server.accept()
        with conn:
            heard.append(protocol.read_line(conn))
            conn.sendall(protocol.CLEAN + b"\n")

    thread = threading.Thread(target=answer)
    thread.start()
    try:
        assert protocol.ask(tmp_path, protocol.RESET, timeout=scaled(10)) == protocol.CLEAN
        thread.join(scaled(10))
        assert heard == [protocol.RESET]
    finally:
        server.close()
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


def test_socket_paths_are_short_and_one_per_workspace(tmp_path):
    """Is each workspace's socket path within the 107 bytes a unix socket allows, the same for two spellings of
    one folder and different for two folders?"""
    deep = tmp_path / ("x" * 150)
    deep.mkdir()
    path = protocol.socket_folder(deep) / protocol.CONTROL
    assert len(str(path).encode()) < 108
    assert protocol.socket_folder(deep) == protocol.socket_folder(deep / ".." / deep.name)
    assert protocol.socket_folder(deep) != protocol.socket_folder(tmp_path)


def test_a_launchers_first_line_names_its_notebook():
    """Does a launcher's first line carry the notebook's name to the zygote, '' meaning any notebook?"""
    assert protocol.notebook_of(protocol.notebook_line("nmt").strip()) == "nmt"
    assert protocol.notebook_of(protocol.notebook_line("lab-1_Zoë").strip()) == "lab-1_Zoë"
    assert protocol.notebook_of(protocol.notebook_line("").strip()) == ""


def test_a_notebook_name_that_does_not_fit_a_line_asks_for_any_notebook():
    """Is a name with a space or a line break sent as '' (any notebook: every library in), not as a broken line?"""
    for name in ("two words", "nmt\nreset", "x" * 300):
        line = protocol.notebook_line(name)
        assert line.count(b"\n") == 1 and protocol.notebook_of(line.strip()) == ""


def test_a_first_line_that_names_no_notebook_is_refused():
    """Is a first line that is not `notebook <name>` (a request sent too early, a control command) refused?"""
    for line in (b'{"cwd": "/x"}', b"reset", b"notebook two words", b""):
        with pytest.raises(ValueError):
            protocol.notebook_of(line)
