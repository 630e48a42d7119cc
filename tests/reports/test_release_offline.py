"""Feedback that reads anywhere (issue 58): a release zip, for Moodle and for Canvas, unpacked into an empty folder and
opened in headless Chromium with the network blocked, shows every formula of every page typeset, loads nothing from
the network, and a page passes axe-core's WCAG 2.1 AA rules there."""

import json
import shutil
import zipfile

import nbformat
import pytest

from autograder import contract, demo, paths
from autograder.reports import feedback, release
from tests.fixtures.pages import page_of
from tests.reports import axe
from tests.reports.browser import Browser
from tests.reports.test_feedback_math import _NETWORK
from tests.reports.test_release import CANVAS_ID, MAXIMUM, STUDENTS, write_out

pytestmark = pytest.mark.slow

TWO = {s: STUDENTS[s] for s in ("李明", "Zoë Ñúñez")}
SETTING = {"moodle": MAXIMUM, "canvas": CANVAS_ID}


class OfflineBrowser(Browser):
    """Headless Chromium with the network cut (offline, and every http, https and websocket URL blocked) that keeps
    the URL of every request a page makes other than to files and data."""

    def __init__(self, profile):
        self.requests = []
        super().__init__(profile)
        self.send("Network.enable")
        self.send(
            "Network.emulateNetworkConditions", offline=True, latency=0, downloadThroughput=-1, uploadThroughput=-1
        )
        self.send("Network.setBlockedURLs", urls=["http://*", "https://*", "ws://*", "wss://*"])

    def send(self, method, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("method") == "Network.requestWillBeSent":
                url = reply["params"]["request"]["url"]
                if not url.startswith(("file:", "data:", "about:", "blob:")):
                    self.requests.append(url)
            if reply.get("id") == self.n:
                return reply.get("result", {})


def _page(notebook, student):
    """The notebook's feedback page for a student who handed in the reference answers, every check passed."""
    rel = nbformat.read(paths.RELEASE / f"{notebook}.ipynb", as_version=4)
    nb = demo.reference_submission(rel, nbformat.read(paths.SOURCE / f"{notebook}.ipynb", as_version=4))
    cells = [
        {"grade_id": g, "score": p, "max_score": p, "note": "passed"} for g, p in contract.GRADED[notebook].items()
    ]
    summary = {
        "notebook": notebook,
        "score": float(sum(contract.GRADED[notebook].values())),
        "max_score": float(sum(contract.GRADED[notebook].values())),
        "status": "graded",
        "cells": cells,
        "manual": dict(contract.WRITTEN[notebook]),
    }
    return feedback.render(nb, page_of(summary, student))


@pytest.fixture(scope="module", params=["moodle", "canvas"])
def unpacked(request, tmp_path_factory):
    """(LMS, the folder its release zip was unpacked into, alone) for two students with real pages of every
    notebook."""
    lms = request.param
    out = write_out(tmp_path_factory.mktemp(lms) / "out", lms, pending=False, students=TWO)
    for notebook in contract.NOTEBOOKS:
        for student in TWO:
            (out / "feedback" / student / f"{notebook}.html").write_text(_page(notebook, student), encoding="utf-8")
    got = release.release(out, lms, setting=SETTING[lms])
    assert sorted(got["released"]) == sorted(TWO)
    folder = tmp_path_factory.mktemp(f"{lms}_unpacked")
    with zipfile.ZipFile(out / "release" / f"{lms}_feedback.zip") as z:
        z.extractall(folder)
    shutil.rmtree(out)  # nothing of OUT is left for a page to reach
    return lms, folder


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    chromium = OfflineBrowser(tmp_path_factory.mktemp("offline"))
    yield chromium
    chromium.close()


def _pages(folder):
    pages = sorted(folder.rglob("*.html"))
    assert len(pages) == len(TWO) * len(contract.NOTEBOOKS)
    return pages


# In a page as Chromium shows it: formulas (math elements laid out as MathML), formulas left as TeX because they
# could not be read, and TeX in the text of the markdown and LaTeX outputs (code left out): a $...$, \(, \[ or
# \command a reader would see raw
_SEEN = r"""(() => {
  const text = [...document.querySelectorAll('.jp-RenderedMarkdown, .jp-RenderedLatex')].map(e => {
    const copy = e.cloneNode(true); copy.querySelectorAll('code, pre').forEach(c => c.remove()); return copy.textContent;
  }).join('\n');
  const raw = text.match(/\$[^$\n]+\$|\\[(\[]|\\[A-Za-z]+/g) || [];
  const math = [...document.querySelectorAll('math')];
  return {formulas: math.filter(m => m instanceof MathMLElement && m.getBoundingClientRect().height > 0).length,
          unread: document.querySelectorAll('.a3-tex-unread').length, raw: raw.slice(0, 5)};
})()"""


def test_every_unpacked_page_shows_its_formulas_typeset(unpacked, offline):
    """Opened from the unpacked zip with the network blocked, does every page show no TeX raw and no formula left
    unread, and the theory pages their formulas typeset?"""
    lms, folder = unpacked
    seen = {}
    for page in _pages(folder):
        offline.open(page.as_uri(), "document.body")
        seen[page.relative_to(folder).as_posix()] = offline.run(_SEEN)
    assert {name: (s["unread"], s["raw"]) for name, s in seen.items() if s["unread"] or s["raw"]} == {}
    theory = [s["formulas"] for name, s in seen.items() if name.endswith("theory.html")]
    assert len(theory) == len(TWO) and min(theory) > 100, f"{lms}: theory pages show {theory} formulas"


def test_unpacked_pages_request_nothing_from_the_network(unpacked, offline):
    """Loading every unpacked page, does Chromium ask the network for nothing (no script, style, font or image)?"""
    _, folder = unpacked
    offline.requests.clear()
    for page in _pages(folder):
        offline.open(page.as_uri(), "document.body")
    offline.run("1")  # the events of the last page's load read
    assert offline.requests == []


def test_the_request_check_sees_a_script_from_a_cdn(tmp_path, offline):
    """Does the check above see a page that asks a CDN for a script (as nbconvert's require.js did), blocked?"""
    page = tmp_path / "cdn.html"
    page.write_text('<html lang="en"><head><script src="https://cdn.example.org/require.js"></script></head></html>')
    offline.requests.clear()
    offline.open(page.as_uri(), "document.body")
    offline.run("1")
    assert offline.requests == ["https://cdn.example.org/require.js"]


def test_unpacked_pages_name_no_script_style_or_font_on_the_network(unpacked):
    """Does no page in the zip name an http(s) script, stylesheet, font or CSS import?"""
    _, folder = unpacked
    found = {p.relative_to(folder).as_posix(): _NETWORK.findall(p.read_text(encoding="utf-8")) for p in _pages(folder)}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_an_unpacked_theory_page_passes_wcag_21_aa(unpacked, offline):
    """Opened from the unpacked zip with the network blocked, does a theory page, math typeset, pass axe-core's WCAG
    2.1 A and AA rules?"""
    _, folder = unpacked
    page = next(p for p in _pages(folder) if p.name.endswith("theory.html"))
    violations = axe.check(offline, page.as_uri())
    assert violations == [], "\n".join(axe.report({page.name: violations}))
