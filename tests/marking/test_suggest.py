"""Rubric items suggested from the TA's first marks (marking.suggest, `mark OUT --suggest NB/GRADE_ID`): on a class
whose answers come in families (copies, typos, paraphrases of a right and of a wrong answer, off-topic, blank),
after a TA marks one answer per family; abstentions, calibration, the CSV and the command."""

import csv
import io
import random
import re
import shutil

import numpy as np
import pytest

from autograder import bench, cli, rubrics
from autograder.content import build
from autograder.marking import groups, mark, suggest
from autograder.out import Out
from tests.fixtures import toy

CELL = ("toy", "written_toy")
SPEC = "toy/written_toy"
RIGHT, PARTIAL, WRONG = ("counting", "order"), ("counting",), ("circular",)  # the toy rubric's items
R1 = "Adding counts the objects, and counting does not depend on order."
R2 = "Addition is counting: you count a things, then b things, and the total is the same whichever group you count first."
W1 = "Because a + b = b + a, which is the commutative law."
W2 = "It is commutative because swapping the two numbers a and b gives b + a, which equals a + b."
RIGHT_OWN = [  # a right answer in the students' own words
    "When you add, you are counting objects, and the count comes out the same no matter which order you count them in.",
    "Addition just counts things; the number of things does not change if you count them in a different order.",
    "a + b counts the items of two piles together. Counting gives the same total whichever pile you start with, "
    "since order does not matter when counting.",
    "Adding is counting all the objects, and counting doesn't depend on the order, so a+b and b+a are the same count.",
    "Because adding means counting up the objects, and the order of counting cannot change how many there are.",
    "Sum = count of all the things. The count is independent of the order we count in.",
    "Addition counts elements; counting them in another order still gives the same number.",
    "Put a objects and b objects together and count them: the total is the same whatever order you count them in.",
]
WRONG_OWN = [  # the question restated, in the students' own words
    "Because a plus b is equal to b plus a.",
    "Addition is commutative since a + b equals b + a for all numbers.",
    "It's the commutative property: a+b=b+a.",
    "Since swapping a and b gives the same sum, a + b = b + a.",
    "The commutative law of addition says that a + b = b + a.",
    "a + b and b + a are equal, that is why addition is commutative.",
    "We know that b + a = a + b, so it is commutative.",
    "Because of commutativity, b + a is the same as a + b.",
]
PARTIAL_OWN = [  # half an answer: addition is counting, but nothing on the order
    "Addition is counting objects together.",
    "Adding two numbers is the same as counting how many things there are in total.",
    "Because addition is just counting.",
    "When we add we count all the objects in both groups.",
    "Adding means counting the objects of both sets.",
]
OFF_TOPIC = [
    "The transformer attends to every source word at each step of decoding.",
    "I did not have time to finish this question, sorry.",
    "Gradient descent lowers the training loss a little every epoch.",
    "Pig Latin moves the first consonant cluster to the end of the word and adds ay.",
    "The learning rate was 0.001 and the batch size 32.",
    "My model overfits the small data set after 50 epochs.",
    "lorem ipsum dolor sit amet consectetur",
    "Python lists are mutable but tuples are not.",
]
BLANK = ["YOUR ANSWER HERE", "", "  \n", "YOUR ANSWER HERE\n"]


def family_class(seed=0):
    """[(family, the items a TA gives it, text)] in a random order: copies of a right and of a wrong answer (case and
    spacing aside), typos of another of each, paraphrases of each and of half a right answer, off-topic answers and
    blank ones."""
    rng = random.Random(seed)
    made = []
    for text, family, items in ((R1, "right-copied", RIGHT), (W1, "wrong-copied", WRONG)):
        variants = [text, text.upper(), text.lower(), text.replace(" ", "  "), text.rstrip(".")]
        made += [(family, items, rng.choice(variants)) for _ in range(6)]
    for text, family, items in ((R2, "right-typo", RIGHT), (W2, "wrong-typo", WRONG)):
        made += [(family, items, bench.typo(text, rng)) for _ in range(5)]
    made += [("right-paraphrase", RIGHT, t) for t in RIGHT_OWN] + [("wrong-paraphrase", WRONG, t) for t in WRONG_OWN]
    made += [("partial-paraphrase", PARTIAL, t) for t in PARTIAL_OWN]
    made += [("off-topic", (), t) for t in OFF_TOPIC] + [("blank", None, t) for t in BLANK]
    rng.shuffle(made)
    return made


def one_per_family(made):
    """{index: items}: the TA's marks, the first answer of each family (blank ones need none)."""
    first = {}
    for n, (family, items, _) in enumerate(made):
        if family != "blank":
            first.setdefault(family, (n, items))
    return dict(first.values())


def toy_rubric():
    return rubrics.load(toy.TOY_SOURCE / rubrics.FILENAME)[CELL]


def tally(made, marks, suggestions):
    """{family: [exactly right, wrong, abstained]} of the suggestions for the answers not marked."""
    counts = {}
    for n, (family, items, _) in enumerate(made):
        if family == "blank" or n in marks:
            continue
        got = suggestions[n].items
        c = counts.setdefault(family, [0, 0, 0])
        c[2 if got is None else 0 if set(got) == set(items) else 1] += 1
    return counts


def engine(made, marks, encoder="tfidf"):
    suggester = suggest.Suggester({n: t for n, (_, _, t) in enumerate(made)}, toy_rubric(), 1.0, encoder)
    return suggester.suggest(marks)


def test_one_mark_per_family_teaches_the_rest():
    """After a TA marks one answer per family, are the suggestions for the others exactly right nearly always
    (>= 95% of those made, over five classes), and do most members of a marked family (off-topic aside) get one,
    with TF-IDF, which sees only shared words and characters?"""
    right = wrong = abstained = 0
    for seed in range(5):
        made = family_class(seed)
        marks = one_per_family(made)
        for family, (r, w, a) in tally(made, marks, engine(made, marks)).items():
            right, wrong = right + r, wrong + w
            abstained += a if family != "off-topic" else 0
    assert right / (right + wrong) >= 0.95, (right, wrong)
    assert right / (right + wrong + abstained) >= 0.5, (right, wrong, abstained)


def test_off_topic_answers_get_no_wrong_items_and_never_full_credit():
    """Is an off-topic answer (far from every graded answer and from the model answer) never suggested items a TA
    would not give, nor full marks?"""
    rubric = toy_rubric()
    for seed in range(5):
        made = family_class(seed)
        marks = one_per_family(made)
        suggestions = engine(made, marks)
        for n, (family, _, _) in enumerate(made):
            if family == "off-topic" and n not in marks:
                items = suggestions[n].items
                assert items in (None, ()), (made[n], suggestions[n])
                assert items is None or rubrics.score(rubric, items, 0.0, 1.0) < 1.0


def test_blank_and_graded_answers_get_no_suggestion():
    """Does the suggester skip blank answers and the answers already marked?"""
    made = family_class()
    marks = one_per_family(made)
    suggestions = engine(made, marks)
    blank = {n for n, (family, _, _) in enumerate(made) if family == "blank"}
    assert blank and not blank & set(suggestions)
    assert not set(marks) & set(suggestions)
    assert set(suggestions) == set(range(len(made))) - blank - set(marks)


def test_abstains_without_enough_marks():
    """With no marks, or one, is every answer left without a suggestion (the model answer alone calibrates
    nothing)?"""
    made = family_class()
    for marks in ({}, dict(list(one_per_family(made).items())[:1])):
        suggestions = engine(made, marks)
        assert suggestions and all(s.items is None and s.confidence is None for s in suggestions.values())


def test_the_model_answer_is_an_example():
    """With only wrong and off-topic answers marked, does an answer that copies the model answer get every positive
    item (the model answer is an example that earns them)?"""
    made = family_class()
    marks = {n: items for n, items in one_per_family(made).items() if items != RIGHT}
    made.append(("model", RIGHT, toy_rubric().answer.upper()))
    assert engine(made, marks)[len(made) - 1].items == RIGHT


# --- the rule on made-up rows: what is close to what is set by hand ----------------------------------------------


def rows_for(monkeypatch, rows):
    """Make the suggester see `rows` ({text: vector}) as the answers' features."""
    table = {t: np.asarray(v, dtype=float) / np.linalg.norm(v) for t, v in rows.items()}

    def similarities(texts, encoder="tfidf", cache=None):
        found = np.stack([table[t] for t in texts])
        return found @ found.T

    monkeypatch.setattr(suggest, "similarities", similarities)


def test_never_suggests_items_the_closest_graded_answers_disagree_on(monkeypatch):
    """Does an answer about as close to a right graded answer as to a wrong one get no suggestion, while one clearly
    closer to the right ones gets theirs?"""
    rubric = toy_rubric()
    rows_for(monkeypatch, {
        rubric.answer: [1, 0.05, 0], "r1": [1, 0.1, 0], "r2": [1, 0, 0.1], "w1": [0, 1, 0.1], "w2": [0.1, 1, 0],
        "w3": [0, 1, 0], "between": [1, 0.97, 0], "right": [1, 0.2, 0],
    })  # fmt: skip
    texts = {s: s for s in ("r1", "r2", "w1", "w2", "w3", "between", "right")}
    got = suggest.Suggester(texts, rubric, 1.0).suggest(
        {"r1": RIGHT, "r2": RIGHT, "w1": WRONG, "w2": WRONG, "w3": WRONG}
    )
    assert got["between"].items is None
    assert got["right"].items == RIGHT


def test_the_threshold_follows_the_marks(monkeypatch):
    """Is the closeness a suggestion needs calibrated on the marks, never a fixed guess: does an answer as close to
    the graded ones as graded answers with the same items were to each other get a suggestion, and the same answer
    none once a TA marked an answer that close to the right ones wrong?"""
    rubric = toy_rubric()
    a, b, c, d = np.eye(4)
    rows = {
        rubric.answer: a, "r1": 0.5 * a + 0.866 * c,  # a right answer at cosine 0.5 from the model answer
        "w1": b, "w2": 0.99 * b + 0.141 * c, "w3": 0.99 * b + 0.141 * d,
        "new": a + 0.5 * a + 0.866 * c,  # cosine 0.87 from both right examples
        "odd": 0.9 * a + 0.436 * d,  # cosine 0.9 from the model answer
    }  # fmt: skip
    rows_for(monkeypatch, rows)
    suggester = suggest.Suggester({s: s for s in rows if s != rubric.answer}, rubric, 1.0)
    marks = {"r1": RIGHT, "w1": WRONG, "w2": WRONG, "w3": WRONG}
    assert suggester.suggest(marks)["new"].items == RIGHT
    assert suggester.suggest(dict(marks, odd=WRONG))["new"].items is None


def test_calibrate_picks_the_lowest_threshold_that_is_right_often_enough():
    """Is the threshold the lowest leave-one-out similarity at or above which its suggestions were right at least
    95% of the time, is there none once one was wrong among the closest, and none when the examples hold one item
    set?"""

    def turned(degrees, towards):  # the unit row `degrees` from the first axis towards axis `towards`
        row = np.zeros(4)
        row[0 if towards == 2 else 1], row[towards] = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
        return row

    rights = [turned(t, 2) for t in (0, 8, 16, 61.6)]  # the last one 45.6 degrees (cosine 0.7) from its closest
    wrongs = [turned(t, 3) for t in (0, 8, 16)]
    rows, labels = np.stack(rights + wrongs), [RIGHT] * 4 + [WRONG] * 3
    threshold, trust = suggest.calibrate(rows @ rows.T, labels)
    assert threshold == pytest.approx(np.cos(np.radians(45.6)))
    assert trust == pytest.approx(8 / 9)
    confused = np.stack([*rows, turned(4, 2)])  # marked wrong, and closer to the right ones than they are
    assert suggest.calibrate(confused @ confused.T, [*labels, WRONG])[0] is None
    assert suggest.calibrate(np.stack(rights) @ np.stack(rights).T, [RIGHT] * 4)[0] is None


# --- the command, on a graded OUT ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def family_out(tmp_path_factory):
    """A graded OUT of the toy course whose written answers are family_class(0): (OUT, {student: (family, items,
    text)})."""
    root = tmp_path_factory.mktemp("suggest")
    template = build.template(root / "template", toy.TOY_SOURCE)
    made = family_class(0)
    with pytest.MonkeyPatch.context() as patch:  # the synthetic class's answers are these families
        patch.setattr(bench, "written_answers", lambda model, others, n, rng: [(f, t) for f, _, t in made])
        bench.mark_class(root / "out", len(made), toy.TOY_SOURCE, template)
    return root / "out", {f"student{n:04d}": answer for n, answer in enumerate(made)}


@pytest.fixture
def out(family_out, tmp_path):
    """A fresh copy of the family OUT and the toy rubric, with one answer per family marked by a TA: (OUT, class,
    {student: items} of the marks)."""
    graded, made = family_out
    copy = tmp_path / "out"
    shutil.copytree(graded, copy)
    (tmp_path / "source").mkdir()
    shutil.copy2(toy.TOY_SOURCE / rubrics.FILENAME, tmp_path / "source" / rubrics.FILENAME)
    answers = mark.collect(copy)
    marks = {f"student{n:04d}": items for n, items in one_per_family([made[s] for s in sorted(made)]).items()}
    mark.append_log(copy, [mark.Mark(s, *CELL, items, 0.0, "", "ta", mark.now(), mark.digest(answers[(s, *CELL)].text))
                           for s, items in marks.items()])  # fmt: skip
    return copy, made, marks


def run_suggest(out, tmp_path, **options):
    """(exit status, rows of the CSV) of `mark OUT --suggest toy/written_toy` through mark.main."""
    target = tmp_path / "suggested.csv"
    options = {"encoder": "tfidf", **options}
    code = mark.main(out=out, source=out.parent / "source", suggest=SPEC, output=target, **options)
    text = target.read_text(encoding="utf-8") if target.exists() else ""
    return code, text


def test_suggest_csv_columns_and_formatting(out, tmp_path):
    """Does --suggest write student,items,confidence,like with items joined by ';' and a confidence like 0.83, both
    empty where it abstains, one row per answer still to grade?"""
    out, made, marks = out
    code, text = run_suggest(out, tmp_path)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(text)))
    assert text.splitlines()[0] == "student,items,confidence,like"
    to_grade = {s for s, (family, _, _) in made.items() if family != "blank"} - set(marks)
    assert [r["student"] for r in rows] == sorted(to_grade)
    ids = set(toy_rubric().ids)
    for r in rows:
        assert r["confidence"] or not r["items"]  # abstained: both empty; no items: a confidence
        if r["confidence"]:
            assert re.fullmatch(r"[01]\.\d\d", r["confidence"]) and 0 <= float(r["confidence"]) <= 1
            assert set(filter(None, r["items"].split(";"))) <= ids
    made_any = [r for r in rows if r["confidence"]]
    assert made_any and any(";" in r["items"] for r in made_any)
    right = [r for r in made_any if set(filter(None, r["items"].split(";"))) == set(made[r["student"]][1])]
    assert len(right) >= 0.9 * len(made_any), made_any  # what a TA would give them, through the CSV


def test_like_names_a_graded_student(out, tmp_path):
    """Does every row's `like` name a student whose answer a TA has marked (never the model answer)?"""
    out, _, marks = out
    rows = list(csv.DictReader(io.StringIO(run_suggest(out, tmp_path)[1])))
    assert rows and all(r["like"] in marks for r in rows)


def test_suggest_writes_no_mark_and_follows_the_log(out, tmp_path):
    """Does --suggest leave OUT/marks.jsonl as it was, and does an answer whose mark no longer holds (its text changed
    since) count as still to grade, not as an example?"""
    out, made, marks = out
    student = sorted(marks)[0]
    stale = mark.Mark(student, *CELL, RIGHT, 0.0, "", "ta", mark.now(), mark.digest("an older text"))
    mark.append_log(out, [stale])
    before = Out(out).marks.read_bytes()
    rows = list(csv.DictReader(io.StringIO(run_suggest(out, tmp_path)[1])))
    assert Out(out).marks.read_bytes() == before
    assert student in {r["student"] for r in rows}
    assert all(r["like"] != student for r in rows)


def test_suggest_on_the_command_line(out, tmp_path, capsys):
    """Does `python -m autograder mark OUT --suggest NB/GRADE_ID` print the CSV, write it with -o, and refuse an
    unknown question in one line?"""
    out, _, _ = out
    base = ["mark", str(out), "--source", str(out.parent / "source"), "--encoder", "tfidf"]
    assert cli.main([*base, "--suggest", SPEC]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("student,items,confidence,like\n")
    target = tmp_path / "s.csv"
    assert cli.main([*base, "--suggest", SPEC, "-o", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == printed
    assert "wrote suggestions for" in capsys.readouterr().out
    assert cli.main([*base, "--suggest", "toy/nope"]) == 1
    assert "unknown written cell 'toy/nope'" in capsys.readouterr().err


def test_minilm_rows_are_kept_in_out(out, tmp_path, monkeypatch):
    """With MiniLM, are the answers' rows kept in OUT, so that the next --suggest encodes nothing, and are its
    suggestions exactly right where it makes them?"""
    out, made, _ = out
    code, text = run_suggest(out, tmp_path, encoder="minilm")
    assert code == 0 and (out / "mark_embeddings.npz").exists()

    def refuse(texts):
        raise AssertionError(f"encoded again: {texts[:1]}")

    monkeypatch.setattr(groups, "_minilm_rows", refuse)
    assert run_suggest(out, tmp_path, encoder="minilm") == (0, text)
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r["confidence"]]
    right = [r for r in rows if set(filter(None, r["items"].split(";"))) == set(made[r["student"]][1])]
    assert len(rows) >= 25 and len(right) >= 0.9 * len(rows), (len(right), len(rows))


def test_a_marked_answer_with_not_added_gets_no_suggestion():
    """After a TA marks an answer right, does a copy of it with a negation added or taken away (it says the opposite)
    get no suggestion, while an exact copy gets the right items?"""
    made = family_class(0)
    marks = one_per_family(made)
    flips = {
        "copy": R1.lower(),
        "same": R1.replace("does not depend", "doesnt depend"),  # a negation without its apostrophe: the same
        "flip": R1.replace("does not depend", "does depend"),
        "flip2": R1.replace("Adding counts", "Adding never counts"),
        "flip3": R1.replace("does not depend", "depends"),
        "flip4": R1.replace("Adding counts", "Adding does not count"),
        "flip5": R1.replace("Adding counts", "Adding cannot count"),
    }
    assert len(set(flips.values()) | {R1}) == 8
    texts = {str(n): t for n, (_, _, t) in enumerate(made)} | flips
    for encoder in ("tfidf", "minilm"):
        got = suggest.Suggester(texts, toy_rubric(), 1.0, encoder).suggest({str(n): i for n, i in marks.items()})
        assert got["copy"].items == got["same"].items == RIGHT, encoder
        assert all(got[f].items is None for f in ("flip", "flip2", "flip3", "flip4", "flip5")), encoder
