"""The grading-by-question page as a tornado application: jinja2 templates (templates/), static script and style
(static/), and authentication as jupyter_server does it.

- The token is accepted only in the first URL (`?token=`) or in an `Authorization: token …` header. Once it
  matched, the browser gets a signed cookie named for this port (`a3mark-PORT`), which holds no token; a request
  without the token or the cookie gets a 403 and nothing else.
- The Host header must be one of 127.0.0.1, localhost, [::1] or a name given with --allow-host, so a page that
  rebinds its own name to 127.0.0.1 reaches nothing.
- Every write needs tornado's XSRF value (cookie `_xsrf-a3mark-PORT` and an `X-XSRFToken` header), except a request
  that carries the token in its Authorization header (a script, which a foreign page cannot send).
- Every error is one sentence: JSON `{"error": …}` for the API, plain text otherwise.
"""

import asyncio
import concurrent.futures
import errno
import json
import secrets
import socket
import sqlite3
import threading
import urllib.parse
from pathlib import Path

import jinja2
import tornado.httpserver
import tornado.ioloop
import tornado.netutil
import tornado.web

from autograder import rubrics
from autograder.text import one_line

HERE = Path(__file__).parent
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
MAX_BODY = 1_000_000
BUSY = "the gradebook is busy (another grader or formgrader is writing): nothing was saved; try again in a moment"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self'; "
    "form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)

templates = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def cookie_name(port: int) -> str:
    """The session cookie of the page on `port` (cookies ignore ports: two pages in one browser keep theirs)."""
    return f"a3mark-{port}"


class Guarded(tornado.web.RequestHandler):
    """What every request of the page goes through: the Host allow-list, then the token or this port's cookie."""

    def set_default_headers(self) -> None:
        self.set_header("Cache-Control", "no-store")
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Referrer-Policy", "no-referrer")

    @property
    def marking(self):
        """The page's state (marking.server.Marking)."""
        return self.settings["marking"]

    def _header_token(self) -> str:
        kind, _, value = self.request.headers.get("Authorization", "").partition(" ")
        return value.strip() if kind.lower() == "token" else ""

    def _host_allowed(self) -> bool:
        return self.request.host_name.lower() in self.settings["allowed_hosts"]

    def check_xsrf_cookie(self) -> None:
        """Writes need the XSRF value, except from a script that sends the token itself (and is checked for it)."""
        if self._host_allowed() and self._header_token():
            return
        super().check_xsrf_cookie()

    def get_current_user(self) -> str | None:
        token = self.settings["token"]
        sent = self._header_token() or self.get_query_argument("token", "")
        if sent:
            return "ta" if secrets.compare_digest(sent.encode(), token.encode()) else None
        session = self.get_signed_cookie(self.settings["cookie"], max_age_days=7)
        return "ta" if session else None

    def prepare(self) -> None:
        if not self._host_allowed():
            raise tornado.web.HTTPError(403, reason=f"host {self.request.host_name!r} is not allowed")
        if self.current_user is None:
            raise tornado.web.HTTPError(403, reason="open the link with its token that `mark` printed")
        if self.get_query_argument("token", "") and self.request.method == "GET":
            # the token matched: a cookie for this port, then the same page without the token in its address
            self.set_signed_cookie(self.settings["cookie"], secrets.token_urlsafe(16), httponly=True,
                                   samesite="Strict", expires_days=7)  # fmt: skip
            query = [(k, v) for k, vs in self.request.query_arguments.items() if k != "token" for v in vs]
            here = self.request.path + ("?" + urllib.parse.urlencode(query, doseq=True) if query else "")
            self.redirect(here)

    def write_error(self, status_code: int, **kwargs) -> None:
        self.clear_header("Set-Cookie")
        reason = self._reason
        error = kwargs.get("exc_info", (None, None))[1]
        if status_code >= 500 and error is not None and not isinstance(error, tornado.web.HTTPError):
            reason = f"the page failed: {one_line(error, 300)}"
        if self.request.path.startswith("/api/"):
            self.set_header("Content-Type", "application/json; charset=utf-8")
            self.finish(json.dumps({"error": reason}))
        else:
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(reason + "\n")

    def render_page(self, name: str, **values) -> None:
        values.update(xsrf=self.xsrf_token.decode(), static=self.static_url)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(templates.get_template(name).render(**values))

    async def blocking(self, fn, *args):
        """Run a call that reads or writes files and the gradebook off the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.settings["executor"], fn, *args)

    def question(self, notebook: str, grade_id: str) -> tuple[str, str]:
        cell = (notebook, grade_id)
        if cell not in self.marking.rubrics():
            raise tornado.web.HTTPError(404, reason=f"no written question {notebook}/{grade_id}")
        return cell


class Index(Guarded):
    async def get(self) -> None:
        rows = await self.blocking(self.marking.index_rows)
        self.render_page("index.html", rows=rows, second=self.marking.second is not None)


class Question(Guarded):
    async def get(self, notebook: str, grade_id: str) -> None:
        cell = self.question(notebook, grade_id)
        if not self.marking.cell_answers(cell):
            raise tornado.web.HTTPError(404, reason="no answers to grade for this question")
        names = self.get_query_argument("names", "0") == "1"
        page = await self.blocking(self.marking.question_view, cell, names)
        self.render_page("question.html", **page)


class More(Guarded):
    async def get(self, notebook: str, grade_id: str) -> None:
        cell = self.question(notebook, grade_id)
        try:
            start = int(self.get_query_argument("from", "0"))
        except ValueError:
            raise tornado.web.HTTPError(400, reason="from should be a number of answers")
        names = self.get_query_argument("names", "0") == "1"
        page = await self.blocking(self.marking.question_view, cell, names, max(0, start))
        self.render_page("cards.html", **page)


class Outputs(Guarded):
    async def get(self, notebook: str, grade_id: str, shown: str) -> None:
        cell = self.question(notebook, grade_id)
        found = await self.blocking(self.marking.outputs, cell, shown)
        if found is None:
            raise tornado.web.HTTPError(404, reason="no such answer")
        self.render_page("outputs.html", found=found)


class Suggestions(Guarded):
    async def get(self, notebook: str, grade_id: str) -> None:
        cell = self.question(notebook, grade_id)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(json.dumps(await self.blocking(self.marking.suggestions, cell), ensure_ascii=False))


class Ready(Guarded):
    def get(self, notebook: str, grade_id: str) -> None:
        self.finish({"ready": (notebook, grade_id) in self.marking.groups})


class Api(Guarded):
    """POST /api/<call>: a JSON object naming the question (notebook, grade_id) and the call's fields."""

    async def post(self, call: str) -> None:
        if len(self.request.body) > MAX_BODY:
            raise tornado.web.HTTPError(413, reason=f"the request is larger than {MAX_BODY:,} bytes")
        try:
            body = json.loads(self.request.body or b"{}")
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise tornado.web.HTTPError(400, reason="the request is not JSON")
        if not (
            isinstance(body, dict) and isinstance(body.get("notebook"), str) and isinstance(body.get("grade_id"), str)
        ):
            raise tornado.web.HTTPError(400, reason="the request should name the question (notebook, grade_id)")
        cell = self.question(body["notebook"], str(body.get("grade_id")))
        m = self.marking
        if m.second is not None and call != "mark":
            raise tornado.web.HTTPError(403, reason=m.SECOND_ONLY_MARKS)
        try:
            if call == "mark":
                marks = body.get("marks")
                if not isinstance(marks, list) or not all(isinstance(c, dict) for c in marks):
                    raise tornado.web.HTTPError(400, reason="marks should be a list of changes")
                status, reply = await self.blocking(m.apply, cell, marks)
            elif call == "regrade":
                status, reply = await self.blocking(m.resolve, cell, body.get("student"), body.get("why"))
            elif call == "move":
                status, reply = await self.blocking(m.move, cell, body.get("student"), body.get("group"))
            elif call == "item":
                status, reply = await self.blocking(
                    m.edit_item, cell, body.get("item"), body.get("points"), body.get("text")
                )
            else:
                raise tornado.web.HTTPError(404, reason=f"no call {call!r}")
        except sqlite3.OperationalError:
            raise tornado.web.HTTPError(503, reason=BUSY)
        except rubrics.RubricError as exc:
            raise tornado.web.HTTPError(500, reason=one_line(exc, 300))
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(json.dumps(reply, ensure_ascii=False))


class Static(tornado.web.StaticFileHandler):
    """The page's script and style (no secrets), behind the Host allow-list too."""

    def prepare(self) -> None:
        if self.request.host_name.lower() not in self.settings["allowed_hosts"]:
            raise tornado.web.HTTPError(403)


class NotFound(Guarded):
    def prepare(self) -> None:
        super().prepare()
        raise tornado.web.HTTPError(404, reason="no such page")


def application(marking, token: str, port: int, allow_hosts=()) -> tornado.web.Application:
    part = r"([^/]+)"
    return tornado.web.Application(
        [
            (r"/", Index),
            (rf"/q/{part}/{part}", Question),
            (rf"/q/{part}/{part}/more", More),
            (rf"/outputs/{part}/{part}/{part}", Outputs),
            (rf"/api/ready/{part}/{part}", Ready),
            (rf"/api/suggest/{part}/{part}", Suggestions),
            (r"/api/(mark|regrade|move|item)", Api),
        ],
        default_handler_class=NotFound,
        static_path=str(HERE / "static"),
        static_handler_class=Static,
        marking=marking,
        token=token,
        cookie=cookie_name(port),
        cookie_secret=secrets.token_bytes(32),
        xsrf_cookies=True,
        xsrf_cookie_name=f"_xsrf-{cookie_name(port)}",
        xsrf_cookie_kwargs={"httponly": False, "samesite": "Strict"},
        allowed_hosts=LOCAL_HOSTS | {h.lower() for h in allow_hosts},
        executor=concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="a3mark"),
        log_function=lambda handler: None,  # the console is for marks, not for every request
    )


class PortTaken(OSError):
    """No free port at or after the one asked for."""


def bind(port: int, tries: int = 20) -> list[socket.socket]:
    """Listening sockets on 127.0.0.1 at `port` (0: any free one), or the next free port after it."""
    for candidate in [port] if port == 0 else range(port, port + tries):
        try:
            return tornado.netutil.bind_sockets(candidate, "127.0.0.1")
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
    raise PortTaken(f"ports {port}-{port + tries - 1} on 127.0.0.1 are all in use: give another with --port")


class Served:
    """A page being served from a thread of its own: its address, and stop()."""

    def __init__(self, marking, port: int = 0, token: str | None = None, allow_hosts=()):
        self.token = token or secrets.token_urlsafe(24)
        sockets = bind(port)
        self.port = sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/?token={self.token}"
        self.moved = port not in (0, self.port)
        self.marking = marking
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(sockets, allow_hosts), daemon=True)
        self._thread.start()
        self._ready.wait()

    def _run(self, sockets, allow_hosts) -> None:
        asyncio.set_event_loop(asyncio.new_event_loop())
        self.loop = tornado.ioloop.IOLoop.current()
        self.app = application(self.marking, self.token, self.port, allow_hosts)
        # bodies up to 16 MB are read and answered (413 past MAX_BODY); past that tornado closes the connection
        self.server = tornado.httpserver.HTTPServer(self.app, max_body_size=16 * MAX_BODY, xheaders=False)
        self.server.add_sockets(sockets)
        self._ready.set()
        self.loop.start()

    def stop(self) -> None:
        """Stop answering, then wait for the writes under way."""

        def _stop():
            self.server.stop()
            self.loop.stop()

        self.loop.add_callback(_stop)
        self._thread.join(30)
        self.app.settings["executor"].shutdown(wait=True)
