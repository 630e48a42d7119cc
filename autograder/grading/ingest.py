"""Ingest: turn a folder (or LMS zip) of raw submissions into one repaired notebook per student x notebook.

Real submissions come back from Colab and LMS downloads damaged. `ingest()` chains three steps:
`discover` finds each student's files under Colab/LMS names and gives the student an id, `read` unpacks zips and
parses each file as a notebook, `repair` repairs it against the release notebook (then `answers` takes a written
answer typed into cells added below its untouched stub into the answer cell, and flags it for the TA). In between,
this module picks one file per notebook when a student has several (most complete, then newest). Every repair is
one line; every student x notebook gets a Submission, with status OK, MISSING or a one-line reason
(records.Status), so nothing is lost. `read_submitted` and `prepare` are the steps `check` runs on one file.
"""

import functools
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from autograder import contract, cores, files, paths
from autograder.grading import answers, discover, read, repair
from autograder.records import Status
from autograder.reports import timeontask
from autograder.text import one_line


@dataclass
class Submission:
    """One student x notebook: the repaired notebook (or None) and how it got there. Ingest makes it, the
    pipeline groups it by student, the worker grades it (autograder.grading.worker.Task.notebooks)."""

    student: str
    notebook: str
    path: Path | None
    status: Status | str  # Status.OK, Status.MISSING (maybe with what was found instead), or why it cannot be graded
    repairs: list[str] = field(default_factory=list)
    lms: dict = field(default_factory=dict)  # {"lms": "canvas" or "moodle", "user_id", "name"} when an LMS named it
    submitted_as: str = ""  # the folder or LMS name exactly as submitted
    digest: str = ""  # hash of the student's submitted files (names and bytes): same bytes, same digest
    timestamp: Path | None = None  # nbgrader's timestamp.txt in the student's folder (evidence of when they submitted)
    flags: list[str] = field(default_factory=list)  # for the TA: answers found in added cells (answers.AddedAnswer)
    own_run: dict = field(default_factory=dict)  # {test cell id: passed/failed} on the student's run (answers.own_run)

    @classmethod
    def missing(cls, student: str, notebook: str, status: str = Status.MISSING, **more) -> "Submission":
        """A notebook the student has no file for (the one spelling of it): no path, status MISSING."""
        return cls(student, notebook, None, status, **more)

    @property
    def ready(self) -> bool:
        """True when there is a notebook to grade (status OK and a path)."""
        return self.status == Status.OK and self.path is not None


def _read_candidate(candidate, releases, damaged):
    """Read and identify one candidate: (notebook name or None, nb or None, problem or None, repairs).

    damaged: {path: why} of the entries that could not be read, "download" for the LMS download's (the TA's copy:
    the student is not to blame) and "own" for a zip the student submitted.
    """
    if candidate.path in damaged["download"]:
        return candidate.name_says, None, _redownload(candidate, damaged["download"]), []
    if candidate.path in damaged["own"]:
        return candidate.name_says, None, f"{candidate.shown!r} could not be read: {damaged['own'][candidate.path]}", []
    nb, problem, repairs = read.read_notebook(candidate.path)
    if nb is None:
        return candidate.name_says, None, problem, repairs
    name, score = repair.identify(nb, releases)
    if score < 3:
        if candidate.name_says and candidate.name_says not in releases:
            return candidate.name_says, nb, None, repairs  # no release to compare with: taken as is
        problem = "not this assignment's notebook (none of its cells match the A3 release)"
        return candidate.name_says, None, problem, repairs
    if candidate.name_says and name != candidate.name_says:
        repairs.append(f"{candidate.shown!r} holds the {name} notebook: graded as {name}")
    return name, nb, None, repairs


def read_submitted(path: Path, releases: dict[str, dict]) -> tuple[str | None, dict | None, str | None, list[str]]:
    """One file read and identified as ingest reads a student's file: (notebook name or None, nb or None, problem or
    None, repairs). The name is the release notebook the content matches; a file named after another notebook gets
    a repair line saying so; one matching no release (and named after a notebook that has one) gets a problem."""
    candidate = discover.Candidate(path, path.name, 0.0, discover.notebook_from_name(path.name))
    return _read_candidate(candidate, releases, {"download": {}, "own": {}})


def prepare(nb: dict, rel: dict | None, repairs: list[str]) -> tuple[str | None, list[answers.AddedAnswer]]:
    """Make a read notebook gradable: repaired against its release (repair.repair), then each written answer found
    in cells added below its untouched stub taken into the answer cell (answers.take_added_answers).

    Inputs:
    - nb: the notebook (changed in place); rel: its release notebook, or None (no release: only repaired).
    - repairs: receives one line per repair.
    Returns:
    - (None, or why it is not a valid notebook; the answers found in added cells, each a flag for the TA).
    """
    problem = repair.repair(nb, rel, repairs)
    if problem or rel is None:
        return problem, []
    return None, answers.take_added_answers(nb, rel, repairs)


def _redownload(candidate, download):
    """The status of a file the TA's LMS download damaged: it waits for a good download."""
    why = download[candidate.path]
    return Status.DAMAGED.detail(
        f"{candidate.shown!r} could not be read from the LMS download: {why}; download it again"
    )


def _sort_candidates(candidates, releases, damaged):
    """Read and identify each of a student's files.

    Returns:
    - by_nb: {notebook name: [(candidate, nb or None, problem or None, repairs)]}
    - problems: {notebook name: one-line status} for files named after a notebook that are no .ipynb
    - others: the names (as shown) of files that are none of the notebooks (nbgrader's timestamp.txt left out)
    """
    by_nb, problems, others = defaultdict(list), {}, []
    for cand in candidates:
        if cand.path.name == discover.TIMESTAMP_FILE:
            continue
        is_ipynb = cand.path.suffix.lower() == ".ipynb"
        if not is_ipynb and not cand.name_says:
            others.append(cand.shown)
            continue
        name, nb, problem, repairs = _read_candidate(cand, releases, damaged)
        if not is_ipynb and nb is None:  # e.g. nmt.pdf or nmt.py instead of the notebook
            problems.setdefault(cand.name_says, f"not a notebook: {cand.shown!r} is not an .ipynb file")
            continue
        if name is None:
            others.append(cand.shown)
            continue
        by_nb[name].append((cand, nb, problem, repairs))
    return by_nb, problems, others


def _missing_status(name, problems, others, lost):
    """The status of a notebook the student has no file for: its problem, a damaged download when a file the
    download damaged may be it (`lost`: their statuses), or 'missing' and what was found."""
    status = problems.get(name)
    if status is None and lost:
        status = lost[0]
    if status is None:
        status = Status.MISSING + (f" (found only: {', '.join(others[:5])})" if others else "")
    return status


def _pick(name, options, rel):
    """The option to grade (most complete, then newest) and the line that says which file was taken, or None."""

    def rank(o):
        cand, nb, problem, _ = o
        return (nb is not None, repair.completeness(nb, rel) if nb is not None and rel else 0, cand.mtime)

    if len(options) > 1:  # only then ranked: how complete a file is takes a pass over every cell
        options.sort(key=rank, reverse=True)
        rest = ", ".join(repr(o[0].shown) for o in options[1:])
        return options[0], (
            f"{len(options)} files for {name}: took {options[0][0].shown!r} (most complete, then newest); "
            f"ignored {rest}"
        )
    cand = options[0][0]
    if cand.shown != f"{name}.ipynb":
        return options[0], f"took {cand.shown!r} as {name}.ipynb"
    return options[0], None


def ingest_student(
    student: str,
    raw: str,
    candidates: list[discover.Candidate],
    releases: dict[str, dict],
    staging: Path,
    damaged: dict[Path, str] | None = None,
    stamps: bool = True,
) -> list[Submission]:
    """Pick and repair one student's notebooks.

    Inputs:
    - student: the student's id; raw: the name the student (or LMS) gave, logged when it differs.
    - candidates: the student's files (from discover.discover).
    - releases: {name: release notebook} (from read.load_releases).
    - staging: repaired notebooks are written to staging/<student>/<notebook>.ipynb.
    - damaged: {path: why} of the entries of the LMS download that could not be read: such a notebook waits for a
      good download (Status.DAMAGED), as does every notebook missing beside a damaged file whose name names none.
    - stamps: take nbgrader's timestamp.txt among the candidates as the submission time (False for an LMS zip,
      where a student could have uploaded one).
    Returns:
    - one Submission per notebook of contract.NOTEBOOKS, in that order.
    """
    damaged = {"download": damaged or {}, "own": {}}
    header = [] if raw == student else [f"student {raw!r} is graded as {student!r}"]
    lms = next((c.lms for c in candidates if c.lms), {})
    if any(c.lms.get("late") for c in candidates):  # a file Canvas marked late makes the submission late
        lms = dict(lms, late=True)
    digest = discover.submission_digest(raw, [(c.shown, c.path) for c in candidates])
    stamp = None
    if stamps:  # the shallowest one
        found = [c.path for c in candidates if c.path.name == discover.TIMESTAMP_FILE]
        stamp = min(found, key=lambda p: len(p.parts), default=None)
    lost = [
        _redownload(c, damaged["download"]) for c in candidates if c.path in damaged["download"] and not c.name_says
    ]
    candidates, unpacked = read.expand_zips(student, candidates, staging, damaged["own"])
    header += unpacked
    by_nb, problems, others = _sort_candidates(candidates, releases, damaged)
    out = []

    def submission(name, path, status, repairs):
        return Submission(student, name, path, status, list(repairs), dict(lms), raw, digest, stamp)

    for name in contract.NOTEBOOKS:
        if not by_nb.get(name):
            out.append(submission(name, None, _missing_status(name, problems, others, lost), header))
            continue
        rel = releases.get(name)
        (cand, nb, problem, repairs), took = _pick(name, by_nb[name], rel)
        repairs = header + ([took] if took else []) + repairs
        if nb is None:
            out.append(submission(name, None, problem, repairs))
            continue
        runs = timeontask.record(nb)  # repair strips Colab's executionInfo: time on task reads it first
        own = answers.own_run(nb)  # and the outputs of the student's own run, before repair restores test cells
        try:
            problem, found = prepare(nb, rel, repairs)
        except Exception as exc:  # damage no repair step knows: this notebook is recorded, the batch goes on
            problem = f"could not be repaired: {type(exc).__name__}: {one_line(str(exc), 150)}"
        if problem:
            out.append(submission(name, None, problem, repairs))
            continue
        dest = staging / student / f"{name}.ipynb"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(nb), encoding="ascii")  # read by machines only: compact (and faster in ASCII)
        if runs["executions"]:  # collect counts a staged notebook without a record as one without runs
            timeontask.save(runs, dest.with_name(name + timeontask.RECORD))
        out.append(submission(name, dest, Status.OK, repairs))
        out[-1].flags, out[-1].own_run = [f.flag for f in found], own
    return out


SPREAD_FROM = 100  # students from which ingest runs across the cores (on 2 cores: 64 were faster here, 128 across)


@functools.lru_cache(maxsize=8)
def _releases_at(folder: Path, stamp: tuple) -> dict:
    """read.load_releases(folder), read once a process for each `stamp` (files.stamp: what the folder holds)."""
    return read.load_releases(folder)


def _ingest_entry(release, staging, damaged, stamps, entry):
    """ingest_student for one (student, (raw name, candidates)) of discover.discover, against the release notebooks
    of `release` ((folder, its files.stamp)): a helper process reads them once, not with each hand-off."""
    student, (raw, candidates) = entry
    return ingest_student(student, raw, candidates, _releases_at(*release), staging, damaged, stamps)


def _default_release(staging):
    """The grading template's release next to staging (what `grade` compiles from source), else release/a3."""
    template = staging.parent / "template" / "release"
    return template if any(template.glob("*.ipynb")) else paths.RELEASE


def ingest(
    submissions: Path | str,
    staging: Path | str,
    release: Path | str | None = None,
    notes: list[str] | None = None,
) -> list[Submission]:
    """Find, pick and repair every student's notebooks.

    Inputs:
    - submissions: Path of a folder (one sub-folder per student, Moodle names accepted; or Canvas-named
      files) or of an LMS zip of the same.
    - staging: Path; repaired notebooks are written to staging/<student>/<notebook>.ipynb.
    - release: folder of release notebooks to repair against. Default: the grading template's release
      next to staging (OUT/.cache/template/release, what `grade` compiles from source) when it exists,
      else release/a3.
    - notes: list that receives one line per problem of the batch as a whole (a damaged LMS zip, processes that
      could not share a large class's work) and one per notebook a damaged zip took, naming the student.
    Returns:
    - list of Submission, one per student x notebook (contract.NOTEBOOKS), sorted by student.
    """
    submissions, staging = Path(submissions), Path(staging)
    folder = Path(_default_release(staging) if release is None else release)
    release = (folder, files.stamp(folder))
    staging.mkdir(parents=True, exist_ok=True)
    damaged, stamps = {}, submissions.is_dir()
    if submissions.is_file():
        submissions, damaged = read.unpack(submissions, staging, [] if notes is None else notes)
    students = sorted(discover.discover(submissions, unwrap=submissions.name == ".unpacked").items())
    each = functools.partial(_ingest_entry, release, staging, damaged, stamps)
    out = [s for subs in cores.spread(each, students, at_least=SPREAD_FROM, notes=notes) for s in subs]
    if notes is not None:  # whose notebooks the damage took, beside the line about the zip
        notes += [f"{s.student}/{s.notebook}: {s.status}" for s in out if Status.DAMAGED.starts(s.status)]
    return out
