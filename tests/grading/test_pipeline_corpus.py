"""The corpus of damaged and hostile submissions, graded in one batch by `python -m autograder grade`."""

import re

import pytest

from autograder import contract
from tests.corpus import batch

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    return batch.graded_corpus(tmp_path_factory)


def test_grade_command_succeeds(corpus):
    """Does the grade command finish with exit status 0 on the whole corpus?"""
    assert corpus["returncode"] == 0, f"expected exit 0, got {corpus['returncode']}: {corpus['output'][-500:]}"


def test_corpus_is_large_enough(corpus):
    """Does the corpus hold at least 25 damaged or hostile submissions?"""
    assert len(corpus["cases"]) >= 25, f"expected at least 25 cases, got {len(corpus['cases'])}"


def test_no_submission_lost(corpus):
    """Does grades.csv have a row for every student x notebook of the corpus?"""
    want = {(c.student, nb) for c in corpus["cases"] for nb in contract.NOTEBOOKS}
    lost = sorted(want - set(corpus["grades"]))
    assert not lost, f"expected every student x notebook in grades.csv, missing {lost}"


def test_every_case_gets_its_status_and_score(corpus):
    """Does every case end with its expected status and score (printed as the corpus table)?"""
    print("\n" + batch.table(corpus))
    wrong = []
    for c in corpus["cases"]:
        for nb in contract.NOTEBOOKS:
            pattern, score = c.expect.get(nb, ("^missing", 0))
            row = corpus["grades"].get((c.student, nb))
            if row is None or not re.search(pattern, row["status"]) or float(row["score"]) != score:
                got = "lost" if row is None else f"{row['status']!r} {row['score']}"
                wrong.append(f"{c.student}/{nb}: expected {pattern!r} {score}, got {got}")
    assert not wrong, "\n".join(wrong)


def test_log_records_repairs_and_blocked_access(corpus):
    """Does grading.log carry each case's expected repair, check or sandbox line?"""
    missing = [f"{c.student}: {p}" for c in corpus["cases"] for p in c.log if not re.search(p, corpus["log"])]
    assert not missing, "expected these log lines:\n" + "\n".join(missing)


def test_lms_ids_are_recorded_for_the_exports(corpus):
    """Does OUT/lms_ids.csv keep the Canvas user id and the Moodle participant id that ingest found?"""
    rows = {r["student"]: r for r in batch.read_csv(corpus["out"] / "lms_ids.csv")}
    assert (rows["smithj~canvas12345"]["lms"], rows["smithj~canvas12345"]["lms_user_id"]) == ("canvas", "12345")
    assert (rows["Jane Doe~moodle123456"]["lms"], rows["Jane Doe~moodle123456"]["lms_user_id"]) == ("moodle", "123456")
