"""Pages loaded in headless Chromium for the report tests: what a reader sees, and the DOM after scripts ran.
Not a test module."""

import shutil
import subprocess
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
