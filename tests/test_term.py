"""The course term (autograder/term.py): course file, times, extensions and the late penalty, without grading."""

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest

from autograder import paths, term
from tests.fixtures import term as term_fixture

EDT = timezone(timedelta(hours=-4))
DUE = datetime(2023, 3, 31, 23, 59, tzinfo=EDT)


def course(**kw):
    return term.Course(**dict(dict(due=DUE, grace_minutes=10, policy="per_day", percent=10, max_days=5), **kw))


def after(**delta):
    return DUE + timedelta(**delta)


COURSE = term_fixture.COURSE


# --- the penalty -------------------------------------------------------------------------------
def test_on_time_costs_nothing():
    """Does a submission before the due date cost nothing?"""
    assert term.lateness(after(hours=-1), DUE, course()) == (0, 0.0)


def test_within_grace_is_on_time():
    """Is a submission 9 minutes after the due date, within a 10-minute grace, on time?"""
    assert term.lateness(after(minutes=9), DUE, course()) == (0, 0.0)


def test_after_grace_counts_from_the_due_date():
    """Is a submission 11 minutes late (grace 10) one started day late, 10 % off?"""
    assert term.lateness(after(minutes=11), DUE, course()) == (1, pytest.approx(0.1))


def test_per_day_counts_started_days():
    """Does 1 day and 3 hours late count as 2 started days under per_day (20 %)?"""
    assert term.lateness(after(days=1, hours=3), DUE, course()) == (2, pytest.approx(0.2))


def test_per_hour_counts_started_hours():
    """Does 2 h 30 min late count as 3 started hours under per_hour at 5 % an hour?"""
    assert term.lateness(after(hours=2, minutes=30), DUE, course(policy="per_hour", percent=5)) == (
        3,
        pytest.approx(0.15),
    )


def test_zero_policy_takes_everything():
    """Does any lateness past the grace score zero under policy 'zero'?"""
    assert term.lateness(after(minutes=11), DUE, course(policy="zero")) == (1, 1.0)


def test_a_new_late_policy_is_one_entry_in_the_table(monkeypatch):
    """Is a policy added to term.POLICIES accepted by the course file (its percent required when it takes one per
    unit) and applied, with nothing else changed?"""
    halves = term.LatePolicy(timedelta(weeks=1), per_unit=False, fraction=lambda units, percent: 1 - 0.5**units)
    monkeypatch.setitem(term.POLICIES, "per_week_half", halves)
    got = term.parse_course(COURSE.replace('policy = "per_day"', 'policy = "per_week_half"'))
    assert got.policy == "per_week_half" and got.unit == timedelta(weeks=1)
    assert term.lateness(after(days=4), DUE, got) == (1, 0.5)
    assert term.lateness(after(days=9), DUE, dataclasses.replace(got, max_days=None)) == (2, 0.75)
    assert term.lateness(after(days=6), DUE, dataclasses.replace(got, max_days=5)) == (1, 1.0)


def test_none_policy_reports_lateness_without_penalty():
    """Under policy 'none', is a late submission counted late but not penalised?"""
    assert term.lateness(after(days=3), DUE, course(policy="none")) == (3, 0.0)


def test_later_than_max_days_scores_zero():
    """Is a submission later than max_days (5) worth nothing even though 6 × 10 % is only 60 %?"""
    assert term.lateness(after(days=5, minutes=1), DUE, course()) == (6, 1.0)


def test_exactly_max_days_is_still_per_day():
    """Is a submission exactly max_days late still charged per day (50 %), not zero?"""
    assert term.lateness(after(days=5), DUE, course()) == (5, pytest.approx(0.5))


def test_penalty_never_exceeds_the_raw_score():
    """Does a 30 %-a-day policy stop at 100 % of the raw score?"""
    assert term.lateness(after(days=4), DUE, course(percent=30, max_days=None)) == (4, 1.0)


def test_late_without_a_time_is_one_unit():
    """Does 'late' from the LMS with no time (Canvas _LATE) cost exactly one unit?"""
    assert term.lateness(None, DUE, course(), late_unknown=True) == (1, pytest.approx(0.1))


def test_no_evidence_is_on_time():
    """Is a student with no submission time and no late marker on time?"""
    assert term.lateness(None, DUE, course()) == (0, 0.0)


def test_extension_later_than_submission_makes_it_on_time():
    """Is a submission two days after the course's due date on time for a student with a three-day extension?"""
    submitted = after(days=2)
    assert term.lateness(submitted, DUE + timedelta(days=3), course()) == (0, 0.0)


def test_extension_earlier_than_submission_still_late():
    """Is a submission three days late still one day late for a student with a two-day extension?"""
    assert term.lateness(after(days=3), DUE + timedelta(days=2), course()) == (1, pytest.approx(0.1))


def test_penalty_is_a_share_of_the_raw_score():
    """Is 20 % of a raw score of 7.5 a penalty of 1.5 points?"""
    assert term.penalty(7.5, 0.2) == 1.5


def test_describe_names_lateness_extension_and_cost():
    """Does the feedback line say how late, that the due date was extended, and the cost in % and points?"""
    late = term.Late(after(days=1, hours=3), DUE, True, 2, 0.2)
    assert (
        term.describe(late, 20.0)
        == "Submitted 1 d 3 h late (due 2023-03-31 23:59 -0400 with extension) → −20 % (−4 points)"
    )


# --- the course file ---------------------------------------------------------------------------
def test_repository_course_file_parses():
    """Does the committed course.toml parse as a valid course?"""
    assert term.read_course(paths.ROOT / "course.toml").policy in term.POLICIES


def test_course_file_gives_its_settings():
    """Does the course file's text give the due date with its offset and the late policy?"""
    assert term.parse_course(COURSE) == course()


def test_unknown_key_names_the_key_and_line():
    """Is a misspelt key a one-line error naming the file, its line and the key?"""
    with pytest.raises(term.TermError, match=r"^c\.toml:7: late\.percnt: unknown key"):
        term.parse_course(COURSE.replace("percent", "percnt"), "c.toml")


def test_unknown_section_is_an_error():
    """Is an unknown [section] an error naming it?"""
    with pytest.raises(term.TermError, match=r"c\.toml:10: extra: unknown section"):
        term.parse_course(COURSE + "\n[extra]\nx = 1\n", "c.toml")


def test_lms_section_gives_the_moodle_maximum_and_the_canvas_assignment_id():
    """Does an [lms] section give the Moodle assignment's maximum grade and the Canvas assignment id?"""
    got = term.parse_course(COURSE + "\n[lms]\nmoodle_max = 100\ncanvas_assignment_id = 48213\n")
    assert (got.moodle_max, got.canvas_assignment_id) == (100.0, 48213)


@pytest.mark.parametrize("bad", ['"48213"', "-3", "4.5"])
def test_canvas_assignment_id_must_be_a_number(bad):
    """Is a Canvas assignment id that is not a positive whole number refused, naming the key and line?"""
    with pytest.raises(term.TermError, match=r"c\.toml:11: lms\.canvas_assignment_id: must be the Canvas"):
        term.parse_course(COURSE + f"\n[lms]\ncanvas_assignment_id = {bad}\n", "c.toml")


def test_model_answers_are_off_unless_the_release_section_says_so():
    """Are model answers left off the pages by default, and shown with [release] model_answers = true?"""
    assert term.parse_course(COURSE).model_answers is False
    assert term.parse_course(COURSE + "\n[release]\nmodel_answers = true\n").model_answers is True


def test_model_answers_must_be_true_or_false():
    """Is a model_answers that is not a TOML boolean (a string "yes") refused, naming the key and line?"""
    with pytest.raises(term.TermError, match=r"c\.toml:11: release\.model_answers: must be true or false"):
        term.parse_course(COURSE + '\n[release]\nmodel_answers = "yes"\n', "c.toml")


def test_due_without_offset_is_an_error():
    """Is a due date without a UTC offset refused (no penalty from a guessed time zone)?"""
    with pytest.raises(term.TermError, match=r"c\.toml:2: assignment\.due: .* has no UTC offset"):
        term.parse_course(COURSE.replace("-04:00", ""), "c.toml")


def test_unknown_policy_is_an_error():
    """Is a policy other than none|zero|per_day|per_hour refused, naming the key?"""
    with pytest.raises(term.TermError, match=r"late\.policy: must be one of"):
        term.parse_course(COURSE.replace('"per_day"', '"weekly"'))


@pytest.mark.parametrize("bad", ["-1", "150", '"ten"', "true"])
def test_bad_percent_is_an_error(bad):
    """Is a percent outside 0..100, or not a number, refused?"""
    with pytest.raises(term.TermError, match=r"late\.percent: must be a number"):
        term.parse_course(COURSE.replace("percent = 10", f"percent = {bad}"))


def test_negative_grace_is_an_error():
    """Is a negative grace refused?"""
    with pytest.raises(term.TermError, match=r"assignment\.grace_minutes"):
        term.parse_course(COURSE.replace("grace_minutes = 10", "grace_minutes = -5"))


def test_not_toml_is_an_error():
    """Is a file that is not TOML a one-line error naming it?"""
    with pytest.raises(term.TermError, match=r"^c\.toml: not valid TOML"):
        term.parse_course("[assignment\n", "c.toml")


# --- times ---------------------------------------------------------------------------------------
def test_nbgrader_timestamp_parses_as_utc():
    """Does nbgrader's timestamp.txt format ('%Y-%m-%d %H:%M:%S.%f %Z', UTC) parse as a UTC time?"""
    assert term.parse_time("2023-04-01 03:12:00.250000 UTC") == datetime(2023, 4, 1, 3, 12, 0, 250000, timezone.utc)


def test_iso_time_keeps_its_offset():
    """Does an ISO 8601 time keep its offset?"""
    assert term.parse_time("2023-03-31T23:00:00-04:00") == datetime(2023, 3, 31, 23, tzinfo=EDT)


@pytest.mark.parametrize("text", ["2023-04-01 03:12:00", "yesterday", "2023-04-01 03:12:00 EST"])
def test_time_without_offset_or_garbage_is_refused(text):
    """Is a time without an offset, or one that is not a time, refused?"""
    with pytest.raises(ValueError):
        term.parse_time(text)


def test_extensions_for_unicode_students(tmp_path):
    """Are extensions read for students named 李明 and 'Zoë Ñúñez', keyed by their ids?"""
    path = tmp_path / "ext.csv"
    path.write_text("student,due\n李明,2023-04-02T23:59:00-04:00\nZoë Ñúñez,2023-04-03T12:00:00Z\n", encoding="utf-8")
    got = term.read_times(path, term.EXTENSION_COLUMNS, ["李明", "Zoë Ñúñez"])
    assert got == {"李明": DUE + timedelta(days=2), "Zoë Ñúñez": datetime(2023, 4, 3, 12, tzinfo=timezone.utc)}


def test_extension_for_unknown_student_names_file_and_line(tmp_path):
    """Is an extension for a student not in OUT a one-line error naming the file and line?"""
    path = tmp_path / "ext.csv"
    path.write_text("student,due\n李明,2023-04-02T23:59:00-04:00\nAnna Lee,2023-04-02T23:59:00-04:00\n")
    with pytest.raises(term.TermError, match=rf"^{path}:3: unknown student 'Anna Lee'"):
        term.read_times(path, term.EXTENSION_COLUMNS, ["李明"])


def test_extension_without_offset_names_file_and_line(tmp_path):
    """Is an extension whose due date has no offset refused, naming the file and line?"""
    path = tmp_path / "ext.csv"
    path.write_text("student,due\n李明,2023-04-02 23:59\n")
    with pytest.raises(term.TermError, match=rf"^{path}:2: due: .*no UTC offset"):
        term.read_times(path, term.EXTENSION_COLUMNS, ["李明"])


def test_extensions_header_is_checked(tmp_path):
    """Is an extensions file with the wrong header refused?"""
    path = tmp_path / "ext.csv"
    path.write_text("name,deadline\n李明,2023-04-02T23:59:00-04:00\n")
    with pytest.raises(term.TermError, match=r":1: the extensions file's header must be student,due"):
        term.read_times(path, term.EXTENSION_COLUMNS)


def test_extensions_of_two_anna_lees_are_kept_apart(tmp_path):
    """Do two students called 'Anna Lee' with different LMS ids each keep their own extension?"""
    path = tmp_path / "ext.csv"
    path.write_text(
        "student,due\nAnna Lee~canvas11,2023-04-01T23:59:00-04:00\nAnna Lee~canvas12,2023-04-05T23:59:00-04:00\n"
    )
    got = term.read_times(path, term.EXTENSION_COLUMNS, ["Anna Lee~canvas11", "Anna Lee~canvas12"])
    assert got["Anna Lee~canvas12"] - got["Anna Lee~canvas11"] == timedelta(days=4)


# Students as grading names them, with the names they submitted under (folder name, LMS name)
KNOWN = {
    "李明": {"李明"},
    "Zoë Ñúñez~9f0c3e2a1b": {"Zoë Ñúñez"},  # a folder name in NFD, as a macOS zip spells it
    "Anna Lee~moodle1001": {"Anna Lee"},
    "Anna Lee~moodle1017": {"Anna Lee"},
    "olan~canvas77": {"olan", "Ola Nordmann"},
}


def test_extension_names_a_student_by_folder_or_lms_name(tmp_path):
    """May an extension name a student as the TA knows them: the folder name ('Zoë Ñúñez', even when the id has a
    hash) or the LMS name ('Ola Nordmann'), when only one student has it?"""
    path = tmp_path / "ext.csv"
    path.write_text("student,due\nZoë Ñúñez,2023-04-03T12:00:00Z\nOla Nordmann,2023-04-03T12:00:00Z\n")
    assert sorted(term.read_times(path, term.EXTENSION_COLUMNS, KNOWN)) == ["Zoë Ñúñez~9f0c3e2a1b", "olan~canvas77"]


def test_extension_for_a_shared_name_names_the_ids_to_use(tmp_path):
    """Is an extension for 'Anna Lee', whom two Moodle students are called, refused with the ids to use instead?"""
    path = tmp_path / "ext.csv"
    path.write_text("student,due\nAnna Lee,2023-04-03T12:00:00Z\n")
    with pytest.raises(term.TermError) as err:
        term.read_times(path, term.EXTENSION_COLUMNS, KNOWN)
    assert str(err.value) == (f"{path}:2: two students called Anna Lee: use Anna Lee~moodle1001 or Anna Lee~moodle1017")


def test_out_keeps_an_extension_under_the_student_id(tmp_path):
    """Is an extension given by folder name kept in OUT under the student's id, so every later command finds it?"""
    (tmp_path / "ext.csv").write_text("student,due\nOla Nordmann,2023-04-01T23:59:00-04:00\n", encoding="utf-8")
    term.write_term(tmp_path / "out", extensions=tmp_path / "ext.csv", students=KNOWN)
    assert list(term.Term.load(tmp_path / "out").extensions) == ["olan~canvas77"]


# --- what OUT keeps ----------------------------------------------------------------------------
def test_out_keeps_course_extension_and_evidence(tmp_path):
    """After write_term, does Term.load(OUT) give the student's extended due date and penalty from what was kept?"""
    (tmp_path / "c.toml").write_text(COURSE)
    (tmp_path / "ext.csv").write_text("student,due\n李明,2023-04-01T23:59:00-04:00\n", encoding="utf-8")
    out = tmp_path / "out"
    term.write_term(
        out,
        course=tmp_path / "c.toml",
        extensions=tmp_path / "ext.csv",
        evidence={"李明": (after(days=2, hours=1).isoformat(), "timestamp.txt")},
        students=["李明"],
    )
    late = term.Term.load(out).late("李明")
    assert (late.extended, late.units, late.fraction) == (True, 2, pytest.approx(0.2))


def test_bad_extensions_keep_what_out_had(tmp_path):
    """Does a bad extensions file leave OUT's recorded course untouched (nothing written from a bad file)?"""
    (tmp_path / "c.toml").write_text(COURSE)
    (tmp_path / "ext.csv").write_text("student,due\nnobody,2023-04-01T23:59:00-04:00\n")
    with pytest.raises(term.TermError):
        term.write_term(
            tmp_path / "out", course=tmp_path / "c.toml", extensions=tmp_path / "ext.csv", students=["李明"]
        )
    assert not (tmp_path / "out" / "term").exists()


# --- Moodle grading worksheet ----------------------------------------------------------------------
WORKSHEET = (
    "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
    "Last modified (submission),Last modified (grade),Feedback comments\n"
)


@pytest.mark.parametrize(
    "text",
    [
        "Saturday, 1 April 2023, 12:05 AM",
        "samedi 1 avril 2023, 00:05",
        "Samstag, 1. April 2023, 00:05",
        "sábado, 1 de abril de 2023, 00:05",
    ],
)
def test_worksheet_dates_in_four_languages(text):
    """Is Moodle's worksheet date read the same in English (12-hour clock), French, German and Spanish?"""
    assert term.parse_local_time(text, "America/Toronto") == datetime(2023, 4, 1, 0, 5, tzinfo=EDT)


def test_worksheet_gives_times_by_participant(tmp_path):
    """Does the worksheet give 李明 (Participant 101) his submission time and Zoë Ñúñez (no submission, '-')
    none?"""
    path = tmp_path / "ws.csv"
    rows = 'Participant 101,李明,,,,,,"Saturday, 1 April 2023, 12:05 AM",-,\nParticipant 102,Zoë Ñúñez,,,,,,-,-,\n'
    path.write_text(WORKSHEET + rows, encoding="utf-8")
    found, notes = term.read_worksheet(path, {"101": "李明~moodle101", "102": "Zoë Ñúñez~moodle102"}, "America/Toronto")
    assert (found, notes) == ({"李明~moodle101": datetime(2023, 4, 1, 0, 5, tzinfo=EDT)}, [])


def test_worksheet_matching_no_student_is_an_error(tmp_path):
    """Is a worksheet whose ids match no student graded here a one-line error naming the file and line?"""
    path = tmp_path / "ws.csv"
    path.write_text(WORKSHEET + 'Participant 999,X,,,,,,"Saturday, 1 April 2023, 12:05 AM",-,\n')
    with pytest.raises(term.TermError, match=rf"^{path}:2: no Identifier in the worksheet matches"):
        term.read_worksheet(path, {"101": "李明~moodle101"}, "America/Toronto")


def test_worksheet_bad_date_names_line(tmp_path):
    """Is a worksheet date that does not parse an error naming the file and line?"""
    path = tmp_path / "ws.csv"
    path.write_text(WORKSHEET + "Participant 101,X,,,,,,someday,-,\n")
    with pytest.raises(term.TermError, match=rf"^{path}:2: Last modified \(submission\)"):
        term.read_worksheet(path, {"101": "李明~moodle101"}, "America/Toronto")


def test_worksheet_without_time_zone_is_refused(tmp_path):
    """Are worksheet times refused when the course file names no time zone (they carry no offset)?"""
    path = tmp_path / "ws.csv"
    path.write_text(WORKSHEET)
    with pytest.raises(term.TermError, match="set \\[assignment\\] timezone"):
        term.read_worksheet(path, {}, "")


def test_bad_time_zone_is_an_error():
    """Is a time zone name that does not exist refused, naming the key?"""
    with pytest.raises(term.TermError, match=r"assignment\.timezone: 'Mars/Olympus'"):
        term.parse_course(COURSE.replace("grace_minutes = 10", 'grace_minutes = 10\ntimezone = "Mars/Olympus"'))


def test_late_counts_for_the_report():
    """Does the report's summary count on-time, late, late-without-time and no-evidence students once each, and
    bin submission times by days after each student's due date?"""
    rows = [
        {"student": "李明", "submitted_at": "2023-04-02T06:59:00+00:00", "due": DUE.isoformat(), "late_units": "2"},
        {"student": "李明", "submitted_at": "2023-04-02T06:59:00+00:00", "due": DUE.isoformat(), "late_units": "2"},
        {"student": "Zoë", "submitted_at": "2023-03-31T20:00:00-04:00", "due": DUE.isoformat(), "late_units": "0"},
        {"student": "leea", "submitted_at": term.UNKNOWN_TIME, "due": DUE.isoformat(), "late_units": "1"},
        {"student": "nobody", "submitted_at": "", "due": DUE.isoformat(), "late_units": "0"},
    ]
    assert term.late_counts(rows) == {
        "counts": {"on time": 1, "late": 1, "late (time unknown)": 1, "no submission time": 1},
        "days_after_due": {0: 1, 2: 1},
    }


def test_recorded_names_are_the_folder_and_lms_names(tmp_path):
    """Does OUT give each recorded student the names a TA may know them by: the name submitted under (grades.csv)
    and the name in the LMS (lms_ids.csv)?"""
    (tmp_path / "grades.csv").write_text(
        "student,notebook,submitted_as\nAnna Lee~moodle1001,nmt,Anna Lee\nolan~canvas77,nmt,olan\n", encoding="utf-8"
    )
    (tmp_path / "lms_ids.csv").write_text(
        "student,lms,lms_user_id,lms_name\nolan~canvas77,canvas,77,Ola Nordmann\n", encoding="utf-8"
    )
    assert term.recorded_names(tmp_path) == {
        "Anna Lee~moodle1001": {"Anna Lee~moodle1001", "Anna Lee"},
        "olan~canvas77": {"olan~canvas77", "olan", "Ola Nordmann"},
    }
