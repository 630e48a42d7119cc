"""autograder.reports.timeontask: time on task from the execution times Colab and Jupyter record in a notebook, with
Colab's real metadata shapes (missing fields, aborted runs, clock skew, cells run out of order, runs across days,
two accounts)."""

import csv
import datetime

import nbformat
import pytest

from autograder.reports import timeontask as tot

T0 = 1_681_830_000_000  # 2023-04-18 15:00 UTC, in Colab's milliseconds


def colab(end_ms, elapsed_ms, user_id="01234567890123456789", name="Ann Lee"):
    """A cell's executionInfo as Colab writes it (timestamp: when the run ended, local offset in minutes)."""
    return {
        "executionInfo": {
            "elapsed": elapsed_ms,
            "status": "ok",
            "timestamp": end_ms,
            "user": {"displayName": name, "userId": user_id},
            "user_tz": 240,
        },
        "colab": {"base_uri": "https://localhost:8080/"},
        "id": "a1b2c3",
        "outputId": "d4e5f6",
    }


def code(metadata):
    return nbformat.v4.new_code_cell("x = 1", metadata=metadata)


def notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def minutes(ms):
    return ms * 60_000


def test_colab_runs_and_short_pauses_count_as_work():
    """Are two runs with a 10-minute pause between them 1 + 10 + 2 minutes of work, from the first start to the
    last end?"""
    nb = notebook(code(colab(T0 + minutes(1), minutes(1))), code(colab(T0 + minutes(13), minutes(2))))
    (whole, part) = tot.rows("ann", "nmt", tot.record(nb))
    assert whole["active_minutes"] == pytest.approx(13)
    assert (whole["first"], whole["last"]) == ("2023-04-18T15:00:00+00:00", "2023-04-18T15:13:00+00:00")
    assert whole["executions"] == 2 and whole["accounts"] == 1


def test_a_night_between_runs_is_dropped():
    """Is a notebook run on two days (a 14-hour night between) only the two sessions' work, the night left out?"""
    nb = notebook(
        code(colab(T0 + minutes(20), minutes(20))),
        code(colab(T0 + minutes(14 * 60 + 5), minutes(5))),
    )
    whole = tot.rows("ann", "nmt", tot.record(nb))[0]
    assert whole["active_minutes"] == pytest.approx(25)
    assert whole["last"].startswith("2023-04-19T05:05")


def test_cells_run_out_of_order_are_ordered_by_time():
    """When a later cell ran first and an earlier one after it, is the work the same as in order?"""
    in_order = notebook(code(colab(T0 + minutes(5), minutes(5))), code(colab(T0 + minutes(12), minutes(2))))
    reversed_ = notebook(code(colab(T0 + minutes(12), minutes(2))), code(colab(T0 + minutes(5), minutes(5))))
    a = tot.rows("ann", "nmt", tot.record(in_order))[0]
    b = tot.rows("ann", "nmt", tot.record(reversed_))[0]
    assert a["active_minutes"] == b["active_minutes"] == pytest.approx(12)


def test_overlapping_runs_count_once():
    """Do two runs that overlap (two tabs, or clocks that disagree by a minute) count their overlap once?"""
    nb = notebook(code(colab(T0 + minutes(10), minutes(10))), code(colab(T0 + minutes(9), minutes(4))))
    assert tot.rows("ann", "nmt", tot.record(nb))[0]["active_minutes"] == pytest.approx(10)


def test_clock_skew_never_gives_negative_time():
    """A cell whose recorded end is before the previous run's (a skewed clock) and one with a negative elapsed: is
    no time negative and the skewed run not counted twice?"""
    nb = notebook(
        code(colab(T0 + minutes(30), minutes(30))),
        code(colab(T0 + minutes(3), minutes(1))),  # the other device's clock is 27 minutes behind
        code(colab(T0 + minutes(31), -500)),  # a negative elapsed, as a Colab restore writes
    )
    rows = tot.rows("ann", "nmt", tot.record(nb))
    assert rows[0]["active_minutes"] == pytest.approx(31) and all(r["active_minutes"] >= 0 for r in rows)


def test_missing_fields_are_counted_not_guessed():
    """Are cells with no executionInfo, an aborted run without timestamp or a non-numeric timestamp left out, and a
    notebook with none of them given no row at all?"""
    aborted = {"executionInfo": {"status": "aborted", "user": {"userId": "1"}}}
    text = {"executionInfo": {"timestamp": "yesterday", "elapsed": 5}}
    nb = notebook(code({}), code(aborted), code(text), code(colab(T0 + minutes(2), minutes(2))))
    assert tot.record(nb)["executions"] == [[T0 / 1000, T0 / 1000 + 120, "", 0]]
    assert tot.rows("ann", "nmt", tot.record(notebook(code({}), code(aborted)))) == []


def test_jupyter_execution_times_are_read():
    """Are Jupyter's own execution timestamps (metadata.execution, recorded with record_timing) read too?"""
    meta = {
        "execution": {
            "iopub.execute_input": "2024-03-01T10:00:00.000000Z",
            "iopub.status.busy": "2024-03-01T09:59:59.900000Z",
            "iopub.status.idle": "2024-03-01T10:04:00.100000Z",
            "shell.execute_reply": "2024-03-01T10:04:00.000000Z",
        }
    }
    whole = tot.rows("ann", "bert", tot.record(notebook(code(meta))))[0]
    assert whole["active_minutes"] == pytest.approx(4) and whole["accounts"] == 0


def test_time_per_part_follows_the_headings():
    """Is each run's time credited to the part (level-1 or level-2 heading) it sits under, a pause to the part of
    the run after it, the parts adding up to the whole?"""
    nb = notebook(
        nbformat.v4.new_markdown_cell("# Part 1: attention\n\ntext"),
        code(colab(T0 + minutes(10), minutes(10))),
        nbformat.v4.new_markdown_cell("### a sub-section is no part"),
        code(colab(T0 + minutes(15), minutes(1))),
        nbformat.v4.new_markdown_cell("## 2. Training"),
        code(colab(T0 + minutes(25), minutes(5))),
    )
    whole, first, second = tot.rows("ann", "nmt", tot.record(nb))
    assert (first["part"], first["active_minutes"], first["executions"]) == ("Part 1: attention", 15, 2)
    assert (second["part"], second["active_minutes"]) == ("2. Training", 10)
    assert whole["active_minutes"] == first["active_minutes"] + second["active_minutes"]


def test_several_accounts_are_counted_never_named():
    """Does a notebook run by two Colab accounts say 'several accounts ran this notebook' for the TA, with the
    accounts counted and neither id nor name kept?"""
    nb = notebook(
        code(colab(T0 + minutes(1), minutes(1), user_id="111", name="Ann Lee")),
        code(colab(T0 + minutes(2), minutes(1), user_id="222", name="Ann's other account")),
    )
    rec = tot.record(nb)
    assert "111" not in str(rec) and "Ann" not in str(rec)
    found = tot.rows("ann", "nmt", rec)
    assert found[0]["accounts"] == 2 and tot.several_accounts(found) == [("ann", "nmt")]
    assert tot.SEVERAL_ACCOUNTS == "several accounts ran this notebook"


def test_distribution_gives_median_and_quartiles():
    """Are the median and quartiles per notebook and part those of the students' active minutes?"""
    found = [{"notebook": "nmt", "part": tot.WHOLE, "active_minutes": m} for m in (10, 20, 30, 40, 50)]
    (row,) = tot.distribution(found)
    assert (row["students"], row["q1"], row["median"], row["q3"]) == (5, 20, 30, 40)


def test_csv_from_what_ingest_kept(tmp_path):
    """Does OUT/time_on_task.csv hold the rows of each record ingest kept beside the staged notebooks, and are the
    notebooks without execution times counted?"""
    staging = tmp_path / ".cache" / "staging"
    (staging / "ann").mkdir(parents=True)
    (staging / "bob").mkdir()
    tot.save(tot.record(notebook(code(colab(T0 + minutes(3), minutes(3))))), staging / "ann" / f"nmt{tot.RECORD}")
    tot.save(tot.record(notebook(code({}))), staging / "bob" / f"nmt{tot.RECORD}")
    path = tot.write(tmp_path)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["student"], r["part"], r["active_minutes"]) for r in rows] == [
        ("ann", tot.WHOLE, "3.0"),
        ("ann", "(before the first heading)", "3.0"),
    ]
    assert tot.collect(tmp_path)[1] == {"nmt": 1}
    assert datetime.datetime.fromisoformat(rows[0]["first"]).tzinfo is not None


def test_a_staged_notebook_that_recorded_no_runs_counts_as_without_times(tmp_path):
    """Is a notebook ingest staged without a record beside it (it recorded no runs, so none was kept) counted with
    the notebooks without execution times, and are an LMS zip's unpacked notebooks left out?"""
    staging = tmp_path / ".cache" / "staging"
    for folder in ("Zoë Ñúñez", "ann", ".unpacked"):
        (staging / folder).mkdir(parents=True)
    (staging / "Zoë Ñúñez" / "nmt.ipynb").write_text("{}")
    (staging / ".unpacked" / "nmt.ipynb").write_text("{}")
    (staging / "ann" / "nmt.ipynb").write_text("{}")
    tot.save(tot.record(notebook(code(colab(T0 + minutes(3), minutes(3))))), staging / "ann" / f"nmt{tot.RECORD}")
    rows, without = tot.collect(tmp_path)
    assert {r["student"] for r in rows} == {"ann"} and without == {"nmt": 1}


def test_ingest_keeps_no_record_of_a_notebook_without_runs(tmp_path):
    """Does ingest stage a notebook that recorded no runs without a record beside it (one file fewer a notebook),
    and keep the record of one that did?"""
    import json

    from autograder import paths
    from autograder.grading import ingest

    for student, runs in (("ann", True), ("bob", False)):
        nb = json.loads((paths.RELEASE / "nmt.ipynb").read_text())
        if runs:
            first = next(c for c in nb["cells"] if c["cell_type"] == "code")
            first["metadata"].update(colab(T0 + minutes(3), minutes(3)))
        (tmp_path / "subs" / student).mkdir(parents=True)
        (tmp_path / "subs" / student / "nmt.ipynb").write_text(json.dumps(nb))
    ingest.ingest(tmp_path / "subs", tmp_path / "staging", release=paths.RELEASE)
    assert (tmp_path / "staging" / "ann" / f"nmt{tot.RECORD}").exists()
    assert sorted(p.name for p in (tmp_path / "staging" / "bob").iterdir()) == ["nmt.ipynb"]


def test_the_course_file_can_turn_time_on_task_off():
    """Does `[report] time_on_task = false` in course.toml turn it off, with anything but true or false refused in
    one line naming the key?"""
    from autograder import term
    from tests.fixtures.term import COURSE

    assert term.parse_course(COURSE).time_on_task is True
    assert term.parse_course(COURSE + "\n[report]\ntime_on_task = false\n").time_on_task is False
    with pytest.raises(term.TermError, match="report.time_on_task: must be true or false"):
        term.parse_course(COURSE + '\n[report]\ntime_on_task = "no"\n')


def test_turned_off_nothing_is_kept_or_shown(tmp_path):
    """With the course turning it off, are the records ingest kept removed, and no row made from them?"""
    from tests.fixtures.term import COURSE

    folder = tmp_path / ".cache" / "staging" / "ann"
    folder.mkdir(parents=True)
    tot.save(tot.record(notebook(code(colab(T0 + minutes(3), minutes(3))))), folder / f"nmt{tot.RECORD}")
    assert tot.forget(tmp_path) == 0 and tot.collect(tmp_path)[0]  # no course file: on
    (tmp_path / "term").mkdir()
    (tmp_path / "term" / "course.toml").write_text(COURSE + "\n[report]\ntime_on_task = false\n")
    assert tot.collect(tmp_path) == ([], {})
    assert tot.forget(tmp_path) == 1 and not list(folder.iterdir())
    assert tot.write(tmp_path) is None
