"""Feedback HTML for students: python -m autograder feedback OUT re-renders every page of a graded OUT.

A page shows the score per graded cell with the check's one-line message and the repairs made to the
submission. The notebook under it goes through `reports.sanitize` first (hidden test source removed from every
test cell, test-cell errors cut down to their last line, so neither the hidden code nor its traceback ever
reaches a student); `reports.nbhtml` turns it into HTML.
"""

import collections
import copy
import functools
import html
import re
import shutil
import site
import sys
import sysconfig
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import nbformat

from autograder import contract, csvsafe, lms, paths, readiness, term
from autograder.gradebook import NOT_ENTERED
from autograder.marking import pages
from autograder.out import Out
from autograder.records import BLANK, HAND_GRADED, NotebookResult, Results, Status, final_scores, is_settled
from autograder.reports import nbhtml
from autograder.reports.sanitize import ANCHOR, sanitize
from autograder.text import one_line

OWN_RUN = "── the student's own run (outputs saved in the submitted notebook) ──\n"


def with_submitted_outputs(graded, submitted):
    """Copy of `graded` whose provided code cells also show the outputs the student submitted.

    Grading re-runs a notebook in quick mode without drawing figures, so a TA grading a written answer
    would not see the full-run plots the answer is about; they follow the graded outputs, after a marker
    line. Errors and stderr of the student's run are left out.
    """
    graded = copy.deepcopy(graded)
    theirs = {
        contract.nbgrader_meta(c)["grade_id"]: c
        for c in submitted.cells
        if c.cell_type == "code" and contract.nbgrader_meta(c).get("grade_id")
    }
    for cell in graded.cells:
        meta = contract.nbgrader_meta(cell)
        if (
            cell.cell_type != "code"
            or contract.is_solution_cell(cell)
            or contract.is_graded_cell(cell)
            or not meta.get("grade_id")
            or meta["grade_id"] not in theirs
        ):
            continue
        own = [
            copy.deepcopy(o)
            for o in theirs[meta["grade_id"]].get("outputs", [])
            if o.get("output_type") in ("display_data", "execute_result")
            or (o.get("output_type") == "stream" and o.get("name") == "stdout")
        ]
        if own:
            cell.outputs = (
                list(cell.get("outputs", [])) + [nbformat.v4.new_output("stream", name="stdout", text=OWN_RUN)] + own
            )
    return graded


# What a student's page says instead of the grader's own words: a check that could not decide tells the TA
# why and what to do (a model cache to fetch, an environment variable to set, what to look for when grading by
# hand); the student only needs to know a person grades it, and the verdict under the test cell says whether one
# has. The full reason stays in grading.log, grades_by_cell.csv and the TA's index.
FOR_STUDENT_MANUAL = Status.NEEDS_MANUAL.detail("a TA grades this cell by hand")
# A failure of the grader itself is the staff's to fix (its exception may name the grading machine's folders and
# ids); the next run grades the notebook again.
FOR_STUDENT_FAILED = Status.FAILED.detail("the grader itself failed on this notebook, which will be graded again")
_UNGRADABLE_LINE = re.compile(r"^UNGRADABLE \S.*(?:\n|$)", re.M)  # what the check printed for the grader
_UNDECIDED = re.compile(r"^\S+: not graded automatically\b")  # the error a check that could not decide raised
# Ingest's line naming the id a student is graded under ('Anna Lee~moodle1017'): an internal id, for TAs only.
_ID_REPAIR = re.compile(r"^student .* is graded as .*$")


@functools.lru_cache(maxsize=1)
def _grader_prefixes():
    """Folders of the grading machine a traceback or message may name, longest first, each with what a student
    sees instead: site-packages (nothing: `torch/nn/functional.py`), the standard library (`python/`), the
    Python environment and the kit itself."""
    found = {}
    for folder in [*site.getsitepackages(), site.getusersitepackages(), sysconfig.get_paths()["purelib"]]:
        found[folder] = ""
    found[sysconfig.get_paths()["stdlib"]] = "python"
    for folder in (sys.prefix, sys.exec_prefix):  # the environment, unless it is the system's own /usr
        if folder not in ("/", "/usr", "/usr/local"):
            found.setdefault(folder, "python")
    found.setdefault(str(paths.ROOT), "")
    expanded = {}
    for folder, label in found.items():
        for form in {folder, str(Path(folder).resolve())}:
            if len(form) > 1:
                expanded.setdefault(form.rstrip("/"), label)
    return sorted(expanded.items(), key=lambda kv: -len(kv[0]))


_PATH_CHAR = r"[^\s/'\"\x1b:,()<>\[\]]"
_PACKAGES = re.compile(rf"(?:/{_PATH_CHAR}+)*/(?:site|dist)-packages/")
_VENV = re.compile(rf"(?:/{_PATH_CHAR}+)*/\.venv(?=[/\s'\":,)]|$)")


def for_students(text):
    """Text for a student's page without the grading machine's own paths (its Python environment, site-packages,
    the kit's folder); `.../site-packages/torch/nn/functional.py` reads `torch/nn/functional.py`."""
    text = str(text)
    for folder, label in _grader_prefixes():
        if folder in text:
            text = re.sub(
                rf"{re.escape(folder)}(/|(?=[\s'\":,)\]]|$))", lambda m: label + m.group(1) if label else "", text
            )
    return _VENV.sub("python", _PACKAGES.sub("", text))


def student_note(note):
    """A cell's one-line note as a student reads it: a cell a person grades, or one the grader failed on, says only
    that."""
    if Status.NEEDS_MANUAL.starts(note):
        return FOR_STUDENT_MANUAL
    if Status.FAILED.starts(note):
        return FOR_STUDENT_FAILED
    return for_students(note)


def _for_student_outputs(nb):
    """Outputs of a sanitised notebook as a student reads them: no grader paths, no reasons meant for the TA,
    long outputs folded into <details>."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream":
                out["text"] = for_students(_UNGRADABLE_LINE.sub("", out["text"]))
                if not out["text"]:
                    continue
                out = _folded(out, out["text"])
            elif kind == "error" and contract.is_test_cell(cell) and _UNDECIDED.match(out.get("evalue", "")):
                continue
            elif kind == "error":
                out["evalue"] = for_students(out.get("evalue", ""))
                out["traceback"] = [for_students(t) for t in out.get("traceback", [])]
            elif kind in ("execute_result", "display_data") and "text/plain" in out.get("data", {}):
                out["data"]["text/plain"] = for_students(out["data"]["text/plain"])
                if set(out["data"]) == {"text/plain"}:
                    out = _folded(out, out["data"]["text/plain"])
            outputs.append(out)
        cell["outputs"] = outputs
    return nb


LONG_OUTPUT = 30  # lines: a longer text output is folded on a student's page (click to read it)


def _folded(out, text):
    """A text output of more than LONG_OUTPUT lines as a folded <details> block (its first lines as the summary),
    else the output unchanged."""
    lines = text.splitlines()
    if len(lines) <= LONG_OUTPUT:
        return out
    body = html.escape(text)
    first = html.escape(lines[0][:100])
    folded = (
        f"<details><summary>{len(lines)} lines of output (click to show): <code>{first}</code>…</summary>"
        f"<pre>{body}</pre></details>"
    )
    return nbformat.v4.new_output("display_data", data={"text/html": folded, "text/plain": text})


_COLAB_BADGE = re.compile(r"\[!\[[^\]]*\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]\([^)]*\)")


def _without_colab_badge(nb):
    """The notebook without the release's "Open in Colab" badge (an image from the web: broken offline, and no
    use on a feedback page), a cell that held only the badge gone, and without the generated last cell (the
    student's own check before submitting: no answer, nothing graded)."""
    cells = []
    for cell in nb.cells:
        if readiness.is_generated(cell):
            continue
        if cell.cell_type == "markdown" and _COLAB_BADGE.search(cell.source):
            cell.source = _COLAB_BADGE.sub("", cell.source).strip()
            if not cell.source:
                continue
        cells.append(cell)
    nb.cells = cells
    return nb


# The part of a student id that is the grader's, never the student's: the LMS user id or the hash ingest adds
# ('Anna Lee~moodle1017' names Anna Lee on her page).
_ID_SUFFIX = re.compile(rf"{lms.ID_SUFFIX.pattern}|~[0-9a-f]{{10}}$")


def shown_name(student):
    """How a page names the student: their id without the suffix ingest adds to it."""
    return _ID_SUFFIX.sub("", student)


def _fmt(x):
    return "" if x is None else f"{x:g}"


def _esc(text):
    return html.escape(str(text), quote=False).replace("|", "&#124;").replace("*", "&#42;").replace("_", "&#95;")


@dataclass(frozen=True)
class Page:
    """What one feedback page shows: a notebook's recorded result, whom it belongs to, and what came after grading.

    student: the name they submitted under (the page shows it without the grader's suffix, shown_name).
    hand: {grade id: HandGrade} entered by people (gradebook.read_hand_grades) for this notebook.
    late / late_penalty: the late note (term.describe) and the points it takes off ('' and 0 when on time).
    model_answers: {written grade id: markdown} shown under each answer (course option [release] model_answers).
    """

    result: NotebookResult
    student: str
    hand: Mapping[str, Mapping] = field(default_factory=dict)
    late: str = ""
    late_penalty: float = 0.0
    model_answers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, result, student, hand=None, late=None, model_answers=None):
        """The page of `result`, its late note and penalty computed from `late` (a term.Late, None without a course
        file) on the notebook's final raw score."""
        hand = hand or {}
        note, off = "", 0.0
        if late is not None:
            final, written = final_scores(result, hand)
            raw = final.score + sum(score or 0.0 for score, _ in written.values())
            note, off = term.describe(late, raw), term.penalty(raw, late.fraction)
        shown = {gid: text for gid, text in (model_answers or {}).items() if gid in result.manual}
        return cls(result, student, hand, note, off, shown)

    @functools.cached_property
    def scores(self) -> tuple[NotebookResult, dict[str, tuple[float | None, str]]]:
        """(the result with the hand-scored cells filled in, {written grade id: (score or None, note)})."""
        return final_scores(self.result, self.hand)


def summary_markdown(page):
    """The header of a feedback page: score, per-cell table, written answers, total, late penalty, repairs and
    notes (scores as they stand: what grading decided, completed by the hand grades entered so far,
    records.final_scores). A student reads it: what they did and earned, nothing meant for staff."""
    summary, written = page.scores
    lines = [
        f"# Feedback: {_esc(summary.notebook)}.ipynb, {_esc(shown_name(page.student))}",
        "",
        f"**Autograded score: {_fmt(summary.score)} / {_fmt(summary.max_score)}**"
        + ("" if summary.status == Status.GRADED else f" (status: {_esc(student_status(summary.status))})"),
        "",
    ]
    if summary.cells:
        lines += ["| graded cell | score | message |", "|---|---|---|"]
        for c in summary.cells:
            score = Status.NEEDS_MANUAL if c.score is None else f"{_fmt(c.score)} / {_fmt(c.max_score)}"
            note = "" if c.note == "passed" else _esc(student_note(c.note))
            remark = _hand_comment(page, c)
            if remark:  # a cell a TA graded by rubric (the CLIP caption): the items and comment, as for a written one
                note += f": {_esc(one_line(remark))}"
            lines.append(f"| `{c.grade_id}` | {score} | {note} |")
        lines.append("")
    if summary.manual:
        lines += written_markdown(summary.manual, written, page.hand)
    lines += total_markdown(summary, written, page.late_penalty)
    if page.late:
        lines += [f"**{_esc(page.late)}**", ""]
    repairs = [r for r in summary.repairs if not _ID_REPAIR.match(r)]
    if repairs:
        lines += ["**Repairs made to your submission before grading:**", ""]
        lines += [f"- {_esc(for_students(r))}" for r in repairs] + [""]
    for note in summary.notes:
        lines.append(f"- {_esc(for_students(note))}")
    return "\n".join(lines)


def student_status(status):
    """A notebook's status as a student reads it: one waiting for a person, or that the grader failed on, says only
    that."""
    if Status.NEEDS_MANUAL.starts(status):
        return Status.NEEDS_MANUAL.value
    return student_note(status)


def written_markdown(points, written, hand):
    """Lines on the written answers: each one's score so far (a blank answer scores 0 by itself) and the TA's
    comment.

    Inputs:
    - points: {grade id: points}; written: {grade id: (score or None, note)} (records.final_scores);
      hand: {grade id: {"score", "comment"}} as entered in formgrader.
    """
    lines = ["| written answer | score | TA's comment |", "|---|---|---|"]
    for gid, pts in points.items():
        score, _ = written.get(gid, (None, ""))
        shown = "not graded yet" if score is None else f"{_fmt(score)} / {_fmt(pts)}"
        if score is not None and hand.get(gid, NOT_ENTERED).score is None:
            shown += " (no answer)" if summary_blank(written, gid) else ""
        comment = hand.get(gid, NOT_ENTERED).comment
        lines.append(f"| `{gid}` | {shown} | {_esc(one_line(comment))} |")
    return lines + [""]


def total_markdown(summary, written, late_penalty=None):
    """The total line: autograded and written points, less the late penalty when there is one, marked provisional
    while anything waits for a person; none when the autograded score alone is the whole total.

    Inputs:
    - summary: the notebook's scores as they stand (records.final_scores); written: {grade id: (score or None,
      note)}; late_penalty: points the late policy takes off (term.penalty), None or 0 when on time.
    """
    points = summary.manual
    if not points and not late_penalty:
        return []
    cells_waiting = sum(c.score is None for c in summary.cells)
    waiting = sum(score is None for score, _ in written.values())
    raw = (summary.score or 0.0) + sum(score for score, _ in written.values() if score is not None)
    most = (summary.max_score or 0.0) + sum(points.values())
    total = f"{_fmt(raw)} / {_fmt(most)}"
    if late_penalty:
        total = f"{_fmt(raw)} − {_fmt(late_penalty)} late penalty = {_fmt(max(0.0, raw - late_penalty))} / {_fmt(most)}"
    line = f"**{'Total so far' if waiting or cells_waiting else 'Total'}: {total}** (autograded{' and written' * bool(points)})"
    if waiting or cells_waiting:
        todo = [f"{n} {what}" for n, what in ((cells_waiting, "graded cell(s)"), (waiting, "written answer(s)")) if n]
        line += f", provisional: {' and '.join(todo)} still to be graded by a TA"
    return [line, ""]


def summary_blank(written, gid):
    """True when the written answer `gid` scored 0 by itself (blank, or its notebook was not graded)."""
    note = written.get(gid, (None, ""))[1]
    return note == BLANK or note.startswith("not graded")


def contents_markdown(summary, nb):
    """A table of contents: each graded cell and written answer, linked to its place on the page."""
    present = {contract.nbgrader_meta(c).get("grade_id") for c in nb.cells}
    links = [
        f"[{c.grade_id}](#{ANCHOR}{c.grade_id})" for c in summary.cells if contract.test_cell_id(c.grade_id) in present
    ]
    links += [f"[{gid}](#{ANCHOR}{gid})" for gid in summary.manual if gid in present]
    return "**Contents:** " + " · ".join(links) if links else ""


def _hand_comment(page, cell):
    """What a TA wrote on a check cell they graded by hand (the rubric items applied, then the comment), or ''."""
    if cell.note != HAND_GRADED:
        return ""
    return page.hand.get(contract.test_cell_id(cell.grade_id), NOT_ENTERED).comment


def annotate(nb, page):
    """Sanitized notebook with the summary on top and each test cell's verdict (hand grades included) right after
    it."""
    nb = _for_student_outputs(_without_colab_badge(sanitize(nb))) if nb is not None else nbformat.v4.new_notebook()
    page = in_notebook_order(page, nb)
    summary = page.result
    nb.metadata["title"] = f"{summary.notebook}.ipynb feedback: {shown_name(page.student)}"
    verdicts = {contract.test_cell_id(c.grade_id): c for c in page.scores[0].cells}
    cells = [nbformat.v4.new_markdown_cell(summary_markdown(page) + "\n\n" + contents_markdown(summary, nb))]
    for cell in nb.cells:
        gid = contract.nbgrader_meta(cell).get("grade_id")
        if gid in summary.manual:
            cells.append(nbformat.v4.new_markdown_cell(f'<a id="{ANCHOR}{gid}"></a>**written answer `{gid}`**'))
        cells.append(cell)
        if gid in page.model_answers:
            cells.append(nbformat.v4.new_markdown_cell(model_answer_markdown(gid, page)))
        if contract.is_test_cell(cell) and gid in verdicts:
            c = verdicts.pop(gid)
            anchor = f'<a id="{ANCHOR}{c.grade_id}"></a>'
            if c.score is None:
                text = f"**{c.grade_id}: {Status.NEEDS_MANUAL}** — a TA grades this cell by hand"
            elif c.note == "passed":
                text = f"**{c.grade_id}: {_fmt(c.score)} / {_fmt(c.max_score)}** — passed"
            else:
                text = f"**{c.grade_id}: {_fmt(c.score)} / {_fmt(c.max_score)}** — {_esc(student_note(c.note))}"
            remark = _hand_comment(page, c)
            if remark:
                text += "\n\n" + "\n".join(f"- {_esc(line)}" for line in remark.splitlines() if line.strip())
            cells.append(nbformat.v4.new_markdown_cell(anchor + text))
    nb.cells = cells
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"fb-{i}"
    return nb


def in_notebook_order(page, nb):
    """The page with its written answers in the notebook's order (a recorded result keeps them sorted by id), the
    contract's order for those the notebook lacks."""
    where = {contract.nbgrader_meta(c).get("grade_id"): i for i, c in enumerate(nb.cells)}
    listed = {gid: i for i, gid in enumerate(contract.WRITTEN.get(page.result.notebook, {}))}
    order = sorted(page.result.manual, key=lambda gid: (where.get(gid, len(where)), listed.get(gid, len(listed))))
    return replace(page, result=replace(page.result, manual={gid: page.result.manual[gid] for gid in order}))


def model_answer_markdown(gid, page):
    """Under a written answer (course option [release] model_answers): the TA's marks, one per line (the rubric
    items applied with their points, then the comment), and the model answer."""
    marks = page.hand.get(gid, NOT_ENTERED).comment
    lines = [f"- {_esc(line)}" for line in marks.splitlines() if line.strip()]
    lines = [f"**Marks on `{gid}`:**", "", *lines, ""] if lines else []
    return "\n".join(lines + [f"**Model answer for `{gid}`:**", "", page.model_answers[gid]])


def render(nb, page):
    """Feedback HTML for one notebook.

    Inputs:
    - nb: the autograded notebook (NotebookNode), or None when there is nothing graded to show.
    - page: a Page (the notebook's recorded result, the student's name, hand grades, late note, model answers).
    Returns:
    - a standalone HTML page (str).
    """
    return nbhtml.notebook_html(annotate(nb, page))


# A page is one file that reads anywhere: its math is typeset as MathML when it is written (nbhtml.typeset_math),
# and it loads no script, font or style, so a page unpacked alone from an LMS's zip, or read offline, shows every
# formula. Earlier versions typeset it in the browser with MathJax copied into OUT/feedback/.mathjax: write_index
# removes that copy.
OLD_MATHJAX = ".mathjax"


def rerender(out, students=None, source=paths.SOURCE, notebooks=None, tables=True, hand=None, recorded=None):
    """Re-render OUT/feedback/<student>/<nb>.html from OUT/autograded, the recorded results and the hand grades
    in OUT/gradebook.db (entered in formgrader), and rewrite the CSVs with those hand grades.

    students: re-render only these students' pages (None: every student's); notebooks: only these notebooks' (None:
    all of them).
    source: the folder of rubrics.toml, whose model answers the pages show with [release] model_answers.
    tables: also rewrite the CSVs and the TA index (False: the caller writes them next).
    hand / recorded: the hand grades (Results.hand_grades) and the term (term.Term.load) when the caller has read
    them already."""
    results = Results(out)
    hand = results.hand_grades() if hand is None else hand
    recorded = term.Term.load(out) if recorded is None else recorded
    models = model_answers(recorded, source)
    count = 0
    for state in results.states():
        if students is not None and state.student not in students:
            continue
        late = recorded.late(state.student)
        for name, summary in state.notebooks.items():
            if notebooks is not None and name not in notebooks:
                continue
            graded = results.autograded_path(state.student, name)
            nb = nbformat.read(graded, as_version=4) if graded.exists() else None
            page = Page.of(summary, state.submitted_as, hand.get((state.student, name)), late, models.get(name))
            results.write_feedback(state.student, name, render(nb, page))
            count += 1
    if tables:
        results.write_csvs(hand, recorded)  # hand grades entered since grading reach grades.csv too
        write_index(out)
    return count


def model_answers(recorded, source=paths.SOURCE):
    """{notebook: {written grade id: model answer}} from rubrics.toml when the course shows them on the pages
    ([release] model_answers), else {}.

    Inputs:
    - recorded: the term (term.Term) whose course file says whether to show them; source: rubrics.toml's folder.
    """
    from autograder import rubrics

    if recorded.course is None or not recorded.course.model_answers:
        return {}
    found = {}
    for (notebook, gid), rubric in rubrics.load(Path(source) / rubrics.FILENAME).items():
        found.setdefault(notebook, {})[gid] = rubric.answer
    return found


def pending(row, reasons):
    """What a TA still has to do for one grades.csv row (short reasons; empty when nothing is left): a notebook
    that did not grade, and each cell or written answer still waiting for a person.

    reasons: {grade id: why the checks left that cell to a person} (the grader's words, for the TA).
    """
    why = [] if is_settled(row["status"]) else [row["status"]]
    waiting = (row.get("ungraded") or "").split()
    if waiting:
        why.append(f"to grade by hand: {' '.join(waiting)}")
    why += [f"{gid}: {reasons[gid]}" for gid in waiting if gid in reasons]
    return why


def flagged(row):
    """The TA's flags of a grades.csv row (answers found in cells the student added, runs that disagree:
    grading/answers.py)."""
    return [f for f in (row.get("flags") or "").split("; ") if f]


def remarks(row, repairs):
    """What is worth knowing about a settled grades.csv row, with nothing left to do: no points, repairs."""
    why = []
    if row["status"] == Status.GRADED and row["score"] in ("0", ""):
        why.append("no autograded points")
    if repairs:
        why.append(f"{len(repairs)} repair(s)")
    return why


def index_html(out):
    """OUT/feedback/index.html (for TAs): every student's pages with scores, those with work still pending first."""
    results = Results(out)
    states = results.states()
    repairs = {(st.student, nb): s.repairs for st in states for nb, s in st.notebooks.items()}
    # the reason a cell waits for a person is for the TA (it may say what to fetch or set), never the student
    manual = {
        (st.student, nb): {c.grade_id: c.note for c in s.cells if c.score is None}
        for st in states
        for nb, s in st.notebooks.items()
    }
    shown = {st.student: st.submitted_as for st in states}  # as the student submitted
    with open(Out.at(out).grades, newline="") as f:
        rows = list(csvsafe.DictReader(f))
    names = {r["student"]: r.get("submitted_as") or shown.get(r["student"], r["student"]) for r in rows}
    shared = {n for n, k in collections.Counter(names.values()).items() if k > 1}  # two Moodle students "Anna Lee"

    def line(row, why):
        e = html.escape
        href = f"{urllib.parse.quote(row['student'])}/{urllib.parse.quote(row['notebook'])}.html"
        link = f'<a href="{e(href)}">{e(row["notebook"])}</a>'
        written = (
            f"{e(row.get('written_score') or '–')} / {e(row.get('written_max_score'))}"
            if row.get("written_max_score")
            else ""
        )
        name = names[row["student"]] + (f" ({row['student']})" if names[row["student"]] in shared else "")
        return (
            f"<tr><td>{e(name)}</td><td>{link}</td><td>{e(row['score'])} / {e(row['max_score'])}</td>"
            f"<td>{written}</td><td>{e(row['status'])}</td><td>{e('; '.join(why))}</td></tr>"
        )

    head = "<tr><th>student</th><th>notebook</th><th>autograded</th><th>written</th><th>status</th><th>why</th></tr>"
    todo = [(r, pending(r, manual.get((r["student"], r["notebook"]), {}))) for r in rows]
    needs = [line(r, why + flagged(r)) for r, why in todo if why]
    every = [line(r, why + flagged(r) + remarks(r, repairs.get((r["student"], r["notebook"]), []))) for r, why in todo]
    # answers the student typed into cells they added below the answer cell: a TA looks at each (written ones are
    # to grade anyway; graded code keeps its test's score, which the TA may want to revisit)
    added = [line(r, flagged(r)) for r, _ in todo if flagged(r)]
    similar = (  # the similarity report is for TAs: linked from this index only, never from a student's page
        "<p>Cells that look alike between students: <a href='../similarity.html'>similarity report</a>.</p>"
        if Out.at(out).similarity_html.exists()
        else ""
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'><title>A3 feedback: all students</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
        "padding:3px 8px;text-align:left;overflow-wrap:anywhere}</style></head><body><main><h1>A3 feedback: all students</h1>"
        f"<p>{len(rows)} submissions; <a href='#attention'>{len(needs)} need attention</a> (not graded, or cells "
        f"and written answers still to grade by hand); <a href='#all'>all submissions</a> (with repairs and "
        f"notebooks without autograded points).</p>"
        f"{similar}"
        f"<h2 id='attention'>Needs attention ({len(needs)})</h2><table>{head}{''.join(needs)}</table>"
        f"{_added_section(head, added)}"
        f"<h2 id='all'>All submissions</h2><table>{head}{''.join(every)}</table></main></body></html>"
    )


def _added_section(head, rows):
    """The index's section on the TA's flags (none when there are none)."""
    if not rows:
        return ""
    return (
        f"<h2 id='added'>Flagged for a look ({len(rows)})</h2><p>An answer found in an added cell: the student left "
        "the answer cell as released and typed the answer into a cell added below it; a written answer was taken from "
        "there (grade it as usual), graded code was scored by its test as it stands. Runs that disagree: a test cell's "
        "visible checks passed on the student's own run and failed on the grader's (or the reverse): often a "
        f"difference between full and quick mode, or between GPU and CPU.</p><table>{head}{''.join(rows)}</table>"
    )


def write_index(out):
    """Write OUT/feedback/index.html; returns its path."""
    from autograder.files import atomic_write

    path = Out.at(out).index
    shutil.rmtree(path.parent / OLD_MATHJAX, ignore_errors=True)  # no page loads it now
    atomic_write(path, index_html(out))
    return path


def main(*, out: Path, course: Path | None = None, extensions: Path | None = None) -> int:
    """`feedback`: render OUT's feedback pages, CSVs and exports again with its hand grades."""
    out = Path(out)
    if not Out.at(out).state.is_dir():
        print(f"feedback: {out} holds no grading results", file=sys.stderr)
        return 1
    try:  # --course/--extensions replace what OUT keeps, so every later command computes the same penalty
        term.replace_files(out, course, extensions)
    except term.TermError as exc:
        print(f"feedback: {exc}", file=sys.stderr)
        return 2
    with pages.turn(out):  # every page: what a grading page left to render is done too
        done = pages.taken(out)
        n = rerender(out)
        pages.cross_off(out, done)
    print(f"wrote {n} feedback pages under {out / 'feedback'}")
    return 0
