"""axe-core's WCAG 2.1 A and AA rules run in headless Chromium on the pages the kit writes under an OUT folder.
Not a test module: `python -m tests.reports.axe OUT [PAGE ...]` prints each page's violations (exit status 1 when
there is any); axe-core comes from `.node/` (`./setup.sh` installs it from npm)."""

import json
import sys
import tempfile
from pathlib import Path

from autograder import paths
from tests.reports.browser import Browser

AXE = paths.ROOT / ".node" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# MathJax typesets after the page has loaded; axe then sees the formulas as a reader does
_SETTLED = "new Promise(done => window.MathJax && MathJax.Hub ? MathJax.Hub.Queue(() => done(true)) : done(true))"


def pages(out):
    """Every page a reader opens under OUT: the students' feedback pages, the TA's index, the grade report and the
    similarity report (those that exist)."""
    out = Path(out)
    found = sorted((out / "feedback").glob("*/*.html"))
    found += [p for p in (out / "feedback" / "index.html", out / "report.html", out / "similarity.html") if p.exists()]
    return found


def check(browser, url):
    """axe-core's WCAG 2.1 A/AA violations on the page at url: [{"id", "impact", "help", "nodes": [(target,
    summary)]}]."""
    assert AXE.exists(), f"expected axe-core at {AXE} (./setup.sh installs it)"
    browser.ws.settimeout(600)  # axe takes tens of seconds on a long page when the machine is busy
    browser.open(url, "document.body")
    browser.send("Runtime.evaluate", expression=_SETTLED, awaitPromise=True)
    browser.send("Runtime.evaluate", expression=AXE.read_text(encoding="utf-8"))
    run = f"axe.run(document, {{runOnly: {{type: 'tag', values: {json.dumps(TAGS)}}}}}).then(r => JSON.stringify(r.violations))"
    reply = browser.send("Runtime.evaluate", expression=run, awaitPromise=True, returnByValue=True)
    assert "exceptionDetails" not in reply, f"axe-core failed on {url}: {reply['exceptionDetails']}"
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "nodes": [(" ".join(map(str, n["target"])), n.get("failureSummary", "")) for n in v["nodes"]],
        }
        for v in json.loads(reply["result"]["value"])
    ]


def report(results):
    """Lines for people: per page, each rule it breaks, on how many elements, and the first few elements."""
    lines = []
    for page, violations in results.items():
        lines.append(f"{page}: {sum(len(v['nodes']) for v in violations)} violation(s)")
        for v in violations:
            targets = ", ".join(t for t, _ in v["nodes"][:3])
            lines.append(f"  {v['id']} ({v['impact']}, {len(v['nodes'])} elements): {v['help']} — {targets}")
    return lines


def main(argv):
    """Check OUT's pages (or the pages given after it) and print what axe-core finds."""
    out, *chosen = argv
    targets = [Path(p) for p in chosen] or pages(out)
    with tempfile.TemporaryDirectory() as profile:
        browser = Browser(Path(profile))
        try:
            results = {str(p): check(browser, p.resolve().as_uri()) for p in targets}
        finally:
            browser.close()
    print("\n".join(report(results)))
    return 1 if any(results.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
