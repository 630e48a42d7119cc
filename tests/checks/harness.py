"""The loop every notebook's hidden checks go through, and the one shape of the catalogues it reads.

A catalogue (tests/checks/mutants_<nb>.py) is a `Catalogue`: for every graded cell of the notebook, the correct
alternatives its check must pass (`Correct`) and the realistic mistakes it must reject (`Mutant`). A test module
hands it to the loop in a few lines:

    class TestCatalogue(CatalogueTests):
        catalogue = mutants_<nb>.CATALOGUE

and pytest then asks, of every graded cell: does the check pass the reference, pass each correct alternative,
reject each mutant with one line naming the cell (and containing the mutant's `expect`), and refuse the reference
imported from the autograder; and does the catalogue cover the notebook's graded cells with enough answers?
"""

import importlib
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import pytest

from autograder.checks import CheckFailed
from autograder.contract import GRADED
from tests.checks import notebook_cell

MIN_MUTANTS = 6  # mistakes per graded cell that a check catches without a GPU
MIN_CORRECT = 2  # correct alternatives per graded cell


class Correct(NamedTuple):
    """A correct answer written differently from the reference: its check must pass it."""

    label: str
    answer: object  # the object the solution cell defines, or the cell's source where the catalogue has a prelude


class Mutant(NamedTuple):
    """A realistic mistake: its check must fail it with one line that names the cell."""

    label: str
    answer: object  # as for Correct
    expect: str = ""  # a fragment the one-line failure must contain ("": any one-line failure naming the cell)
    device: bool = False  # right on a CPU, wrong on a GPU: the checks catch it everywhere with the stand-in GPU


@dataclass(frozen=True)
class Cell:
    """The answers to one graded cell."""

    correct: list  # [Correct]
    mutants: list  # [Mutant]
    name: str = ""  # the name the solution cell defines, when it is not the grade id

    def alternative(self, label):
        """The answer of the correct alternative labelled `label`."""
        return _by_label(self.correct, label)

    def mutant(self, label):
        """The answer of the mutant labelled `label`."""
        return _by_label(self.mutants, label)


def _by_label(entries, label):
    found = [entry.answer for entry in entries if entry.label == label]
    assert len(found) == 1, f"expected one answer labelled {label!r}, found {len(found)}"
    return found[0]


@dataclass(frozen=True)
class Catalogue(Mapping):
    """grade id -> Cell for one notebook; answers are objects, or cell sources run after `prelude` as notebook cells."""

    notebook: str
    cells: dict = field(repr=False)
    prelude: str | None = None  # None: the answers are the objects themselves (defined in the catalogue module)

    def __getitem__(self, grade_id):
        return self.cells[grade_id]

    def __iter__(self):
        return iter(self.cells)

    def __len__(self):
        return len(self.cells)

    def name(self, grade_id):
        """The name the graded cell defines."""
        return self.cells[grade_id].name or grade_id

    def check(self, grade_id):
        """The hidden check of the graded cell: check_<grade id> in autograder/checks/<nb>.py."""
        return getattr(importlib.import_module(f"autograder.checks.{self.notebook}"), f"check_{grade_id}")

    def imported_reference(self, grade_id):
        """The reference solution as the autograder's own module defines it."""
        return getattr(self.reference_module(), self.name(grade_id))

    def reference_module(self):
        return importlib.import_module(f"autograder.content.reference.{self.notebook}")

    def reference(self, grade_id):
        """The reference solution as a student's notebook would hand it to the check."""
        if self.prelude is None:
            return self.imported_reference(grade_id)
        return notebook_cell(self.prelude, inspect.getsource(self.reference_module()), self.name(grade_id))

    def load(self, grade_id, answer):
        """The object a catalogue answer hands to the check: the object itself, or what its cell defines."""
        return answer if self.prelude is None else notebook_cell(self.prelude, answer, self.name(grade_id))


def device_mutants(catalogue):
    """pytest params (grade id, answer) of the catalogue's device mistakes, for a module's tests on a real GPU."""
    return [
        pytest.param(grade_id, m.answer, id=f"{grade_id}: {m.label}")
        for grade_id, cell in catalogue.items()
        for m in cell.mutants
        if m.device
    ]


def _cases(catalogue, answers):
    """pytest parameters (grade id, answer) over the answers `answers(cell)` of every cell, named by both."""
    return [pytest.param(gid, a, id=f"{gid}: {a.label}") for gid, cell in catalogue.items() for a in answers(cell)]


class CatalogueTests:
    """The loop, run on `catalogue` by a subclass named Test... in tests/checks/test_<nb>.py."""

    catalogue: Catalogue
    check_kwargs: dict = {}  # grade id -> keyword arguments for every call of its check (clip's stand-in CLIP loader)
    message_words: tuple = ()  # one of these must appear in every mutant's failure (nmt: "should" or "expected")

    def pytest_generate_tests(self, metafunc):
        """Parametrize each test over the graded cells, or over their answers, as its arguments name them."""
        catalogue = self.catalogue
        if "alternative" in metafunc.fixturenames:
            metafunc.parametrize("grade_id, alternative", _cases(catalogue, lambda cell: cell.correct))
        elif "mutant" in metafunc.fixturenames:
            metafunc.parametrize("grade_id, mutant", _cases(catalogue, lambda cell: cell.mutants))
        elif "graded_function" in metafunc.fixturenames:  # a value (a caption, a letter) cannot be "imported"
            metafunc.parametrize("graded_function", [g for g in catalogue if callable(catalogue.imported_reference(g))])
        elif "grade_id" in metafunc.fixturenames:
            metafunc.parametrize("grade_id", list(catalogue))

    @pytest.fixture(autouse=True)
    def catalogue_objects_count_as_notebook_defined(self, monkeypatch):
        """A catalogue of objects defines them in a test module, not in a notebook's __main__: let the checks take
        them, as the checks' A3_ALLOW_NON_NOTEBOOK escape hatch does (a catalogue of cell sources needs no hatch)."""
        if self.catalogue.prelude is None:
            monkeypatch.setenv("A3_ALLOW_NON_NOTEBOOK", "1")

    def call(self, grade_id, obj):
        self.catalogue.check(grade_id)(obj, **self.check_kwargs.get(grade_id, {}))

    def test_catalogue_covers_every_graded_cell(self):
        """Does the catalogue hold exactly the notebook's graded cells, each with a check registered under its id?"""
        notebook = self.catalogue.notebook
        assert set(self.catalogue) == set(GRADED[notebook]), f"expected the graded cells {sorted(GRADED[notebook])}"
        for grade_id in self.catalogue:
            assert self.catalogue.check(grade_id).check_id == grade_id

    def test_catalogue_is_large_enough(self):
        """Does every graded cell face at least six mistakes caught without a GPU and two correct alternatives?"""
        sizes = {
            grade_id: (sum(not m.device for m in cell.mutants), len(cell.correct))
            for grade_id, cell in self.catalogue.items()
        }
        small = {g: size for g, size in sizes.items() if size[0] < MIN_MUTANTS or size[1] < MIN_CORRECT}
        assert not small, f"expected >= {MIN_MUTANTS} mistakes and >= {MIN_CORRECT} alternatives, got {small}"

    def test_reference_passes(self, grade_id, capsys):
        """Does the check pass the reference solution, printing exactly one PASSED line and nothing on stderr?"""
        self.call(grade_id, self.catalogue.reference(grade_id))
        out = capsys.readouterr()
        assert out.out == f"PASSED {grade_id}\n", f"expected one pass line, got {out.out!r}"
        assert out.err == "", f"expected nothing on stderr, got {out.err!r}"

    def test_correct_alternative_passes(self, grade_id, alternative, capsys):
        """Does the check accept this correct answer written differently from the reference (one PASSED line)?"""
        self.call(grade_id, self.catalogue.load(grade_id, alternative.answer))
        out = capsys.readouterr()
        assert out.out == f"PASSED {grade_id}\n", f"expected one pass line, got {out.out!r}"
        assert out.err == "", f"expected nothing on stderr, got {out.err!r}"

    def test_mutant_fails(self, grade_id, mutant, capsys):
        """Does the check reject this realistic mistake with one line naming the cell and what is wrong, printing
        nothing?"""
        obj = self.catalogue.load(grade_id, mutant.answer)
        with pytest.raises(CheckFailed) as info:
            self.call(grade_id, obj)
        message = str(info.value)
        assert message.startswith(f"{grade_id}: "), f"expected the grade id first, got {message!r}"
        assert "\n" not in message, f"expected a one-line message, got {message!r}"
        assert mutant.expect in message, f"expected {mutant.expect!r} in the message, got {message!r}"
        if self.message_words:
            assert any(word in message for word in self.message_words), f"expected one of {self.message_words}"
        out = capsys.readouterr()
        assert out.out == "", f"expected nothing printed (no pass line, not left to a person), got {out.out!r}"
        assert out.err == "", f"expected nothing on stderr, got {out.err!r}"

    def test_imported_reference_is_rejected(self, graded_function, monkeypatch, capsys):
        """Does the check refuse the reference imported from the autograder instead of defined in the notebook, in
        one line naming where it came from?"""
        monkeypatch.delenv("A3_ALLOW_NON_NOTEBOOK", raising=False)
        with pytest.raises(CheckFailed) as info:
            self.call(graded_function, self.catalogue.imported_reference(graded_function))
        message = str(info.value)
        assert message.startswith(f"{graded_function}: ") and "\n" not in message, message
        assert "must be defined in this notebook" in message, message
        assert f"autograder.content.reference.{self.catalogue.notebook}" in message, message
        out = capsys.readouterr()
        assert "PASSED" not in out.out and out.err == "", out
