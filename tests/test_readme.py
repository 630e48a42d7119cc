"""The README's points table against the contract (autograder/contract.py), so that the two never drift apart."""

import re

from autograder import contract
from autograder.paths import ROOT

ROW = re.compile(r"^\| `(?P<nb>\w+)\.ipynb` \|.*\| (?P<auto>\d+) \| (?P<written>\d+) \|$")


def points_table():
    """{notebook: (autograded points, written points)} from the rows of the README's points table."""
    text = ROOT.joinpath("README.md").read_text()
    table = text.split("| notebook | topic |", 1)[1].split("\n\n", 1)[0]
    rows = [ROW.match(line) for line in table.splitlines()[2:]]
    assert all(rows), f"expected every row as | `name.ipynb` | topic | points | written points |, saw {table!r}"
    return {m["nb"]: (int(m["auto"]), int(m["written"])) for m in rows}


def test_readme_lists_every_notebook_in_course_order():
    """Does the README's points table list exactly the course's notebooks, in course order?"""
    assert list(points_table()) == list(contract.NOTEBOOKS)


def test_readme_points_match_the_contract():
    """Are the README's autograded and written points each notebook's sums of contract.GRADED and WRITTEN?"""
    want = {nb: (contract.max_score(nb), contract.written_max_score(nb)) for nb in contract.NOTEBOOKS}
    seen = points_table()
    wrong = {nb: f"README says {seen[nb]}, contract gives {want[nb]}" for nb in want if seen.get(nb) != want[nb]}
    assert not wrong, f"expected the README's (autograded, written) points to match the contract: {wrong}"
