"""Pages loaded in headless Chromium for the report tests: what a reader sees, and the DOM after scripts ran.
Not a test module."""

import json
import shutil
import socket
import subprocess
import time
import urllib.request
from html.parser import HTMLParser


class _Text(HTMLParser):
    """Text a reader sees: everything outside <script>, <style> and <head>."""

    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("script", "style", "head")

    def handle_endtag(self, tag):
        self.skip -= tag in ("script", "style", "head") and self.skip > 0

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def rendered_text(html_path, tmp_path, budget_ms=3000):
    """The page's visible text after headless Chromium loaded it (its DOM, scripts run for `budget_ms` of virtual
    time)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "expected Debian's chromium (./setup.sh installs it)"
    proc = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--virtual-time-budget={budget_ms}",
            "--dump-dom",
            html_path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "<body" in proc.stdout, f"chromium failed: {proc.stderr[-300:]}"
    parser = _Text()
    parser.feed(proc.stdout)
    return " ".join(" ".join(parser.parts).split()), proc.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """Headless Chromium driven over the DevTools protocol: open a page, run JavaScript in it."""

    def __init__(self, profile):
        import websocket

        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        assert chromium, "expected Debian's chromium (./setup.sh installs it)"
        port = free_port()
        self.proc = subprocess.Popen(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                f"--user-data-dir={profile}",
                f"--remote-debugging-port={port}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(60):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=5) as r:
                    page = next(t for t in json.load(r) if t["type"] == "page")
                break
            except (OSError, StopIteration):
                time.sleep(0.5)
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.n = 0

    def send(self, method, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.n:
                return reply.get("result", {})

    def run(self, script):
        """The value of a JavaScript expression in the page."""
        return self.send("Runtime.evaluate", expression=script, returnByValue=True)["result"].get("value")

    def open(self, url, ready):
        """Go to url and wait until the expression `ready` is true."""
        self.send("Page.navigate", url=url)
        for _ in range(120):
            if self.run(f"document.readyState === 'complete' && !!({ready})"):
                return
            time.sleep(0.25)
        raise AssertionError(f"{url} never became ready ({ready})")

    def close(self):
        self.ws.close()
        self.proc.kill()
        self.proc.wait()
