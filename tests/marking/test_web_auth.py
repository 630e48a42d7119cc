"""The grading page's doors (autograder/marking/web.py), tried as an attacker would: the token, the cookie it is
exchanged for, the Host header, XSRF on writes, malformed requests, a taken port."""

import http.client
import http.cookiejar
import json
import socket
import urllib.error
import urllib.request

import pytest

from autograder.marking import server as mark_server
from autograder.marking import web
from tests.marking.test_mark import graded, out, source  # noqa: F401
from tests.marking.test_server import change, serving


@pytest.fixture
def page(out):  # noqa: F811
    marking = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
    with serving(marking, token="s3cret-token") as base:
        yield base, out
    marking.close()
    marking.settle()


def raw(base, method, path, headers=None, body=None):
    """(status, headers, body) of one request, with exactly these headers (no redirect followed, no cookie kept)."""
    host, port = base.removeprefix("http://").split(":")
    con = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        con.request(method, path, body=body, headers=headers or {})
        r = con.getresponse()
        return r.status, r.headers, r.read().decode()
    finally:
        con.close()


@pytest.mark.parametrize("path", ["/", "/q/toy/written_toy", "/?token=wrong", "/api/ready/toy/written_toy", "/nope"])
def test_no_token_gets_no_cookie_and_no_token(page, path):
    """Does a request without the token, or with a wrong one, get a 403 that sets no cookie and holds no token?"""
    base, _ = page
    status, headers, body = raw(base, "GET", path)
    assert status == 403
    assert headers.get_all("Set-Cookie") is None and "s3cret-token" not in body + str(headers)


def test_the_token_in_the_first_url_becomes_a_cookie_of_this_port(page):
    """Does the token in the first URL give a signed cookie named for the port, holding no token, and send the
    browser on to the same page without the token in its address?"""
    base, _ = page
    port = base.rsplit(":", 1)[1]
    status, headers, _ = raw(base, "GET", "/q/toy/written_toy?names=1&token=s3cret-token")
    assert status == 302 and headers["Location"] == "/q/toy/written_toy?names=1"
    cookies = headers.get_all("Set-Cookie")
    assert any(c.startswith(f"a3mark-{port}=") for c in cookies) and "s3cret-token" not in str(cookies)
    assert all("HttpOnly" in c and "SameSite=Strict" in c for c in cookies if c.startswith("a3mark-"))


def test_a_browser_keeps_working_with_its_cookie(page):
    """Once the first URL was opened, does the cookie alone open the question page, and a foreign cookie not?"""
    base, _ = page
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(f"{base}/?token=s3cret-token", timeout=30) as r:
        assert r.status == 200 and r.url == f"{base}/"
    with opener.open(f"{base}/q/toy/written_toy", timeout=30) as r:
        assert r.status == 200 and "written_toy" in r.read().decode()
    port = base.rsplit(":", 1)[1]
    forged = {"Cookie": f"a3mark-{port}=2|1:0|10:1700000000|11:a3mark-{port}|8:eHl6|{'0' * 64}"}
    assert raw(base, "GET", "/", forged)[0] == 403


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8891", "127.0.0.1.nip.io", "localhost.evil"])
def test_a_foreign_host_is_refused_even_with_the_token(page, host):
    """Is a request whose Host is not 127.0.0.1, localhost or [::1] refused (DNS rebinding), token or not?"""
    base, _ = page
    status, headers, _ = raw(base, "GET", "/", {"Host": host, "Authorization": "token s3cret-token"})
    assert status == 403 and headers.get_all("Set-Cookie") is None
    body = json.dumps({"notebook": "toy", "grade_id": "written_toy", "marks": [change("李明", ["order"])]})
    status, _, _ = raw(base, "POST", "/api/mark", {"Host": host, "Authorization": "token s3cret-token"}, body)
    assert status == 403


def test_allow_host_admits_a_named_host(out):  # noqa: F811
    """Does --allow-host NAME let that Host in (an SSH tunnel's name), and no other?"""
    marking = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
    served = web.Served(marking, 0, token="t", allow_hosts=("grader.lan",))
    try:
        assert raw(served.base, "GET", "/", {"Host": "grader.lan:9", "Authorization": "token t"})[0] == 200
        assert raw(served.base, "GET", "/", {"Host": "other.lan", "Authorization": "token t"})[0] == 403
    finally:
        served.stop()
        marking.close()


def _browser_session(base):
    """A cookie-holding session as the page's browser has it: the cookie header and the XSRF value."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(f"{base}/q/toy/written_toy?token=s3cret-token", timeout=30) as r:
        text = r.read().decode()
    xsrf = text.split('name="a3-xsrf" content="')[1].split('"')[0]
    return "; ".join(f"{c.name}={c.value}" for c in jar), xsrf


def test_a_write_without_the_xsrf_value_is_refused(page):
    """With the page's cookie but without the XSRF header (a form another site posts), is a write refused, and
    with it taken?"""
    base, folder = page
    cookie, xsrf = _browser_session(base)
    body = json.dumps({"notebook": "toy", "grade_id": "written_toy", "marks": [change("李明", ["order"])]})
    status, _, _ = raw(base, "POST", "/api/mark", {"Cookie": cookie, "Content-Type": "application/json"}, body)
    assert status == 403 and not (folder / "marks.jsonl").exists()
    status, _, reply = raw(base, "POST", "/api/mark", {"Cookie": cookie, "X-XSRFToken": xsrf}, body)
    assert status == 200 and json.loads(reply)["graded"] == 2


@pytest.mark.parametrize(
    "body, error",
    [
        (b"{not json", "the request is not JSON"),
        (b"[1, 2]", "the request should name the question"),
        (json.dumps({"notebook": "toy", "grade_id": "written_toy", "marks": "x"}).encode(), "marks should be a list"),
        (json.dumps({"notebook": "toy", "grade_id": "nope", "marks": []}).encode(), "no written question toy/nope"),
        (b"\xff\xfe", "the request is not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "the request is not JSON"),
        (json.dumps({"notebook": "toy", "marks": []}).encode(), "the request should name the question"),
        (b" " * 1_100_000, "the request is larger than 1,000,000 bytes"),
    ],
)
def test_a_malformed_post_gets_a_400_with_a_sentence(page, body, error):
    """Is a malformed write answered 400 (or 404 for an unknown question) with one sentence, the connection kept?"""
    base, _ = page
    status, headers, reply = raw(base, "POST", "/api/mark", {"Authorization": "token s3cret-token"}, body)
    assert status in (400, 404, 413) and error in json.loads(reply)["error"]


def test_a_taken_port_moves_to_the_next_free_one(out):  # noqa: F811
    """When the port asked for is taken, does the page take the next free one and say so?"""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        marking = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
        served = web.Served(marking, port, token="t")
        try:
            assert served.moved and served.port != port
            assert raw(served.base, "GET", "/", {"Authorization": "token t"})[0] == 200
        finally:
            served.stop()
            marking.close()


def test_two_pages_in_one_browser_keep_their_own_cookies(out):  # noqa: F811
    """Are the cookies of two pages on two ports named apart, so one page's login never replaces the other's?"""
    first = mark_server.Marking(out, source(out), "ta-ana", "tfidf")
    a, b = web.Served(first, 0, token="t1"), web.Served(first, 0, token="t2")
    try:
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        opener.open(f"{a.base}/?token=t1", timeout=30).read()
        opener.open(f"{b.base}/?token=t2", timeout=30).read()
        for served in (a, b):
            with opener.open(f"{served.base}/", timeout=30) as r:
                assert r.status == 200
        assert {c.name for c in jar} >= {f"a3mark-{a.port}", f"a3mark-{b.port}"}
    finally:
        a.stop()
        b.stop()
        first.close()


def test_an_unknown_call_is_a_404_sentence(page):
    """Is a POST to a call the page does not have answered 404 in JSON, not a dropped connection?"""
    base, _ = page
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(
            urllib.request.Request(f"{base}/api/nope", data=b"{}", headers={"Authorization": "token s3cret-token"}),
            timeout=30,
        )
    assert caught.value.code == 404
