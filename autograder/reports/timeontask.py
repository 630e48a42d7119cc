"""Time on task, for instructors and TAs (never on a student's page): when and for how long students ran each
notebook, read from what the notebook itself recorded before ingest strips it.

Colab keeps in every executed cell's `metadata.executionInfo` when the run ended (`timestamp`, ms since the epoch),
how long it took (`elapsed`, ms) and the account that ran it (`user.userId`); Jupyter, when it records timing, keeps
`metadata.execution` (`iopub.execute_input`, `shell.execute_reply`, ISO times). Per student × notebook: the first
and last execution, the active time (executions and the pauses between them, a pause over GAP dropped: a break, a
night), and the same per part of the notebook (its level-1 and level-2 headings). Overlapping runs (two tabs, two
accounts, clocks that disagree) count once. A notebook without any of these fields is counted, never guessed.
Accounts are counted, never named.
"""

import datetime
import json
import math
import re
import statistics
from pathlib import Path

from autograder.out import Out

GAP = 30 * 60  # seconds: a longer pause between two executions is a break, not work
RECORD = ".executions.json"  # beside each staged notebook: what `record` kept of it before repair
COLUMNS = ["student", "notebook", "part", "first", "last", "active_minutes", "executions", "accounts"]
WHOLE = "(whole notebook)"
SEVERAL_ACCOUNTS = "several accounts ran this notebook"
_HEADING = re.compile(r"^#{1,2}\s+(.+?)\s*#*\s*$", re.M)


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _iso(value):
    """Seconds since the epoch of an ISO 8601 time (Jupyter's, 'Z' or an offset; naive taken as UTC), else None."""
    if not isinstance(value, str):
        return None
    try:
        when = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


def _execution(metadata):
    """(start, end, account) in seconds since the epoch of one cell's last run, or None when it recorded none."""
    info = metadata.get("executionInfo")
    if isinstance(info, dict):
        end, elapsed = _number(info.get("timestamp")), _number(info.get("elapsed"))
        if end is not None and end > 0:
            end /= 1000
            start = end - (elapsed / 1000 if elapsed is not None and elapsed >= 0 else 0.0)
            user = info.get("user")
            account = (user.get("userId") or user.get("displayName")) if isinstance(user, dict) else None
            return start, end, account
    jupyter = metadata.get("execution")
    if isinstance(jupyter, dict):
        start = _iso(jupyter.get("iopub.execute_input")) or _iso(jupyter.get("iopub.status.busy"))
        end = _iso(jupyter.get("shell.execute_reply")) or _iso(jupyter.get("iopub.status.idle"))
        if start is not None or end is not None:
            start = start if start is not None else end
            end = end if end is not None and end >= start else start
            return start, end, None
    return None


def record(nb):
    """What a submitted notebook recorded of its runs: {"executions": [[start, end, part, account], ...]} in cell
    order (account: a number per distinct account, never its id), {"executions": []} when it recorded none."""
    part, found, accounts = "", [], {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            headings = _HEADING.findall(cell.get("source", ""))
            part = headings[-1] if headings else part
            continue
        if cell.get("cell_type") != "code":
            continue
        run = _execution(cell.get("metadata") or {})
        if run is None:
            continue
        start, end, account = run
        number = accounts.setdefault(account, len(accounts)) if account is not None else None
        found.append([start, end, part, number])
    return {"executions": found}


def save(rec, path):
    """Write a record (record()) as JSON to path: ingest takes it before repair strips the metadata it reads (and
    keeps none of a notebook that recorded no runs: collect counts that one as without execution times)."""
    Path(path).write_text(json.dumps(rec), encoding="utf-8")


def active_seconds(spans):
    """Seconds of work in [(start, end)]: overlapping runs counted once, pauses of at most GAP between runs
    counted, longer ones dropped. Returns {index of a span: seconds credited to it} (a pause goes to the run after
    it), so that parts can be summed."""
    order = sorted(range(len(spans)), key=lambda i: (spans[i][0], spans[i][1]))
    credit, reached = {}, None
    for i in order:
        start, end = spans[i]
        if reached is None or start - reached > GAP:
            gained = end - start
        else:
            gained = max(0.0, end - reached)  # from where the work already counted had reached
        credit[i] = gained
        reached = end if reached is None or start - reached > GAP else max(reached, end)
    return credit


def _stamp(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).isoformat(timespec="seconds")


def rows(student, notebook, rec):
    """time_on_task.csv rows of one student × notebook: the whole notebook, then each part in notebook order
    (none when the notebook recorded no execution times)."""
    runs = rec.get("executions") or []
    if not runs:
        return []
    credit = active_seconds([(s, e) for s, e, _, _ in runs])
    accounts = len({a for *_, a in runs if a is not None})

    def row(part, chosen):
        return {
            "student": student,
            "notebook": notebook,
            "part": part,
            "first": _stamp(min(runs[i][0] for i in chosen)),
            "last": _stamp(max(runs[i][1] for i in chosen)),
            "active_minutes": round(sum(credit[i] for i in chosen) / 60, 2),
            "executions": len(chosen),
            "accounts": accounts,
        }

    parts = list(dict.fromkeys(r[2] for r in runs))
    return [row(WHOLE, range(len(runs)))] + [
        row(p or "(before the first heading)", [i for i, r in enumerate(runs) if r[2] == p]) for p in parts
    ]


def enabled(out):
    """False when OUT's course file turns time on task off (`[report] time_on_task = false`), or cannot be read."""
    from autograder.term import Term, TermError

    try:
        course = Term.load(out).course
    except TermError:
        return False
    return course is None or course.time_on_task


def forget(out):
    """Remove every record ingest kept when OUT's course turns time on task off (`grade` calls it once the course
    file is in OUT); returns how many it removed."""
    if enabled(out):
        return 0
    records = list(Out.at(out).staging.glob(f"*/*{RECORD}"))
    for path in records:
        path.unlink()
    return len(records)


def collect(out):
    """Every record ingest kept under OUT/.cache/staging: (rows, {notebook: submissions without execution times});
    nothing when the course turns time on task off."""
    found, without = [], {}
    if not enabled(out):
        return found, without
    staging = Out.at(out).staging
    kept = {(p.parent.name, p.name.removesuffix(RECORD)): p for p in staging.glob(f"*/*{RECORD}")}
    for staged in staging.glob("*/*.ipynb"):  # ingest keeps no record of a notebook that recorded no runs
        if not staged.parent.name.startswith("."):  # a student's folder, not an LMS zip's unpacked files
            kept.setdefault((staged.parent.name, staged.stem), None)
    for (student, notebook), path in sorted(kept.items(), key=lambda item: (item[0][0], item[0][1] + RECORD)):
        try:
            rec = json.loads(path.read_text(encoding="utf-8")) if path else {}
        except ValueError:
            rec = {}
        made = rows(student, notebook, rec)
        if not made:
            without[notebook] = without.get(notebook, 0) + 1
        found += made
    return found, without


def distribution(found):
    """Per notebook and part: students, median and quartiles of the active minutes (part order kept)."""
    groups = {}
    for r in found:
        groups.setdefault((r["notebook"], r["part"]), []).append(r["active_minutes"])
    table = []
    for (notebook, part), minutes in groups.items():
        q1, median, q3 = (
            statistics.quantiles(minutes, n=4, method="inclusive") if len(minutes) > 1 else [minutes[0]] * 3
        )
        table.append(
            {"notebook": notebook, "part": part, "students": len(minutes), "q1": q1, "median": median, "q3": q3}
        )
    return table


def several_accounts(found):
    """(student, notebook) of every notebook more than one account ran (for the TA, in these words only)."""
    return [(r["student"], r["notebook"]) for r in found if r["part"] == WHOLE and r["accounts"] > 1]


def write(out):
    """Write OUT/time_on_task.csv from the records ingest kept; returns its path, or None when there are none."""
    import io

    from autograder import csvsafe
    from autograder.files import atomic_write

    found, without = collect(out)
    if not found and not without:
        return None
    text = io.StringIO()
    writer = csvsafe.DictWriter(text, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(found)
    path = Out.at(out).time_on_task
    atomic_write(path, text.getvalue())
    return path


def minutes(value):
    """A number of minutes as people read it: '1 h 05 min', '12 min' ('–' for none)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    hours, rest = divmod(round(value), 60)
    return f"{hours} h {rest:02d} min" if hours else f"{rest} min"
