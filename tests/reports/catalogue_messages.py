"""A pytest plugin that writes the failure messages the mutant catalogues produce, for the report's item analysis
(`reports.items.CATALOGUE`). Not a test module; run after changing a check or a catalogue:

    .venv/bin/python -m pytest -q -n 0 -p tests.reports.catalogue_messages tests/checks -k mutant

Every CheckFailed raised while a mutant test (a mistake a check must reject) of tests/checks/test_<notebook>.py runs is recorded under its grade id
(the message's prefix), and the file is written when the session ends."""

import json
from collections import defaultdict

import pytest

from autograder import contract
from autograder.checks import CheckFailed
from autograder.reports import items

_seen = defaultdict(lambda: defaultdict(set))
_current = {"notebook": None}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    module = item.module.__name__.rsplit(".", 1)[-1]
    notebook = module.removeprefix("test_")
    mutant = "mutant" in item.name
    _current["notebook"] = notebook if mutant and notebook in contract.GRADED else None
    try:
        return (yield)
    finally:
        _current["notebook"] = None


_original_init = CheckFailed.__init__


def _recording_init(self, *args, **kwargs):
    _original_init(self, *args, **kwargs)
    notebook = _current["notebook"]
    message = str(self)
    grade_id = message.split(":", 1)[0]
    if notebook and grade_id in contract.GRADED[notebook]:
        _seen[notebook][grade_id].add(message)


CheckFailed.__init__ = _recording_init


def pytest_sessionfinish(session):
    if not _seen:
        return
    data = {nb: {gid: sorted(found) for gid, found in sorted(cells.items())} for nb, cells in sorted(_seen.items())}
    if items.CATALOGUE.exists():  # notebooks this run did not cover keep what was recorded before
        data = {**json.loads(items.CATALOGUE.read_text(encoding="utf-8")), **data}
    items.CATALOGUE.write_text(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
