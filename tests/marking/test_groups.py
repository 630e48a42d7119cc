"""Answer groups for grading one written question (autograder/marking/groups.py): blank and identical answers
together, near-duplicates, clusters by meaning, different answers apart."""

import time

import numpy as np
import pytest

from autograder.marking.groups import group_answers

# Answers to theory's written_maxpool_limits, as students write them
MEAN = "As x_i goes to 0, all the scores W_Q W_K x_i x_j go to 0, so the softmax becomes uniform and the output is the mean of the window, not the max."
MEAN_PARAPHRASES = [
    "When x_i tends to 0 the scores vanish, the softmax over the window is uniform and we get the average of the window instead of the maximum.",
    "If x_i is small, the scores are all near zero: softmax is flat, so the layer outputs the window average rather than the max.",
]
MIN_POOL = [
    "Negative x_i flips the sign of the scores so the layer computes min pooling instead.",
    "A negative x_i reverses the sign of every score and the softmax picks the smallest value: min pooling.",
]
UNSURE = "I don't know."


def by_student(groups):
    return {s: g for g in groups for s in g.students}


def test_blank_answers_form_one_group_first():
    """Are empty, whitespace-only and untouched ("YOUR ANSWER HERE") answers one blank group, listed first?"""
    groups = group_answers({"Zoë Ñúñez": "", "李明": "  \n", "Anna Lee~moodle11": "YOUR ANSWER HERE", "bob": MEAN})
    assert groups[0].kind == "blank" and groups[0].name == "blank"
    assert groups[0].students == ("Anna Lee~moodle11", "Zoë Ñúñez", "李明")
    assert [g.students for g in groups[1:]] == [("bob",)]


def test_identical_answers_are_one_group():
    """Are answers that differ only in case, punctuation, spacing or markdown emphasis one identical group?"""
    answers = {
        "Zoë Ñúñez": MEAN,
        "李明": MEAN.upper(),
        "Anna Lee~moodle11": "**" + MEAN.replace(",", "").replace(" ", "  ") + "**",
        "Anna Lee~moodle12": UNSURE,
    }
    groups = by_student(group_answers(answers))
    assert groups["Zoë Ñúñez"] is groups["李明"] is groups["Anna Lee~moodle11"]
    assert groups["Zoë Ñúñez"].kind == "identical" and groups["Zoë Ñúñez"].name == "g1-identical"
    assert groups["Anna Lee~moodle12"].students == ("Anna Lee~moodle12",)


def test_near_duplicates_are_one_group():
    """Are an answer with a typo and one with a word changed grouped with the answer they copy?"""
    answers = {
        "a": MEAN,
        "b": MEAN.replace("softmax", "sofmax"),
        "c": MEAN.replace("becomes uniform", "becomes flat"),
        "d": MIN_POOL[0],
    }
    groups = by_student(group_answers(answers))
    assert groups["a"].students == ("a", "b", "c") and groups["a"].kind == "near-duplicate"
    assert groups["d"].students == ("d",)


def test_tfidf_keeps_different_answers_apart():
    """With TF-IDF, are answers that say different things (the mean, min pooling, not knowing) kept apart?"""
    answers = {
        "a": MEAN,
        "b": MIN_POOL[0],
        "c": UNSURE,
        "d": "x_i near 0: the scores x_i x_j go to 0 and the softmax gives the mean of the window.",
    }
    groups = by_student(group_answers(answers, encoder="tfidf"))
    assert groups["a"] is groups["d"]
    assert len({groups["a"].name, groups["b"].name, groups["c"].name}) == 3


def test_the_groups_do_not_depend_on_the_order_of_the_answers():
    """Does the same class, listed in another order, give the same groups?"""
    answers = {f"s{i}": text for i, text in enumerate([MEAN, *MEAN_PARAPHRASES, *MIN_POOL, UNSURE, MEAN, ""])}
    again = dict(reversed(list(answers.items())))
    assert group_answers(answers) == group_answers(again)


def test_a_huge_paste_is_grouped_quickly():
    """Does a 5 MB pasted answer among ordinary ones neither break grouping nor take long?"""
    answers = {"paste": "loss 0.123 " * 500_000, "a": MEAN, "b": MEAN}
    start = time.perf_counter()
    groups = by_student(group_answers(answers))
    assert time.perf_counter() - start < 5
    assert groups["paste"].students == ("paste",) and groups["a"].students == ("a", "b")


def test_an_unknown_encoder_is_refused():
    """Is an encoder the module does not know refused in one line?"""
    with pytest.raises(ValueError, match="unknown encoder 'bert': use one of minilm, tfidf"):
        group_answers({"a": MEAN}, encoder="bert")


@pytest.mark.slow
def test_paraphrases_go_together_and_different_answers_apart():
    """With MiniLM sentence embeddings, are paraphrases of one answer (other words, same meaning) one group,
    and the answers that say something else (min pooling, not knowing) in groups of their own?"""
    texts = [MEAN, *MEAN_PARAPHRASES, *MIN_POOL, UNSURE]
    answers = dict(zip(["Zoë Ñúñez", "李明", "Anna Lee~moodle11", "Anna Lee~moodle12", "bob", "eve"], texts))
    groups = by_student(group_answers(answers, encoder="minilm"))
    assert groups["Zoë Ñúñez"].students == ("Anna Lee~moodle11", "Zoë Ñúñez", "李明")
    assert groups["Zoë Ñúñez"].kind == "similar"
    assert groups["Anna Lee~moodle12"].students == ("Anna Lee~moodle12", "bob")
    assert groups["eve"].students == ("eve",)


def test_a_ta_can_move_an_answer_or_split_a_group():
    """Does moving an answer to another group, or to a new one, change only that answer's group, and does a
    group left empty go?"""
    from autograder.marking.groups import regroup

    groups = group_answers({"a": MEAN, "b": MEAN, "c": MIN_POOL[0], "d": UNSURE})
    moved = by_student(regroup(groups, {"b": "split-1", "c": groups[0].name, "x": "split-1"}))
    assert moved["a"].students == ("a", "c") and moved["b"].students == ("b",) and moved["b"].kind == "moved"
    assert [g.name for g in regroup(groups, {"c": groups[0].name, "d": groups[0].name})] == [groups[0].name]


def test_math_symbols_tell_answers_apart():
    """Are "a + b = b + a" and "a+b = b+a" identical, while "a - b = b - a" is neither identical nor a
    near-duplicate of them (at most similar)?"""
    groups = by_student(group_answers({"a": "Because a + b = b + a.", "b": "Because a+b = b+a"}))
    assert groups["a"].students == ("a", "b") and groups["a"].kind == "identical"
    groups = by_student(group_answers({"a": "Because a + b = b + a.", "c": "Because a - b = b - a."}))
    assert groups["a"].kind not in ("identical", "near-duplicate")


def _counting_encoder(monkeypatch, tag="test-encoder"):
    """groups' MiniLM replaced by a counter of the texts it is asked to encode (rows from the text's length)."""
    from autograder.marking import groups

    seen = []

    def rows(texts):
        seen.extend(texts)
        return (
            np.array([[len(t), 1.0, 0.0] for t in texts])
            / np.linalg.norm([[len(t), 1.0, 0.0] for t in texts], axis=1)[:, None]
        )

    monkeypatch.setattr(groups, "_minilm_rows", rows)
    monkeypatch.setattr(groups, "encoder_tag", lambda: tag)
    return seen


def test_the_cache_encodes_each_text_once_across_processes(tmp_path, monkeypatch):
    """Does a second cache on the same file (a restarted page) encode only the texts the first had not seen?"""
    from autograder.marking.groups import EmbeddingCache

    seen = _counting_encoder(monkeypatch)
    first = EmbeddingCache(tmp_path / "rows.npz")(["a b", "Zoë", "a b"])
    assert sorted(seen) == ["Zoë", "a b"]
    again = EmbeddingCache(tmp_path / "rows.npz")(["李明 wrote this", "Zoë", "a b"])
    assert sorted(seen) == ["Zoë", "a b", "李明 wrote this"]  # only the new text
    assert np.array_equal(again[1:], first[[1, 0]])


@pytest.mark.parametrize("damage", ["another encoder", "a damaged file"])
def test_a_stale_or_damaged_cache_is_encoded_again(tmp_path, monkeypatch, damage):
    """Are rows from another model or precision, or a cache file cut short, encoded again instead of used?"""
    from autograder.marking.groups import EmbeddingCache

    path = tmp_path / "rows.npz"
    _counting_encoder(monkeypatch, tag="old")
    EmbeddingCache(path)(["max pooling", "mean pooling"])
    if damage == "a damaged file":
        path.write_bytes(path.read_bytes()[:40])
    seen = _counting_encoder(monkeypatch, tag="old" if damage == "a damaged file" else "new")
    EmbeddingCache(path)(["max pooling", "mean pooling"])
    assert sorted(seen) == ["max pooling", "mean pooling"]


def test_grouping_with_a_cache_gives_the_groups_without_one(tmp_path, monkeypatch):
    """Are the groups the same whether the rows come from the cache or straight from the encoder?"""
    from autograder.marking.groups import EmbeddingCache

    _counting_encoder(monkeypatch)
    answers = dict(zip("abcdef", [MEAN, *MEAN_PARAPHRASES, *MIN_POOL, UNSURE]))
    cache = EmbeddingCache(tmp_path / "rows.npz")
    plain = group_answers(answers, encoder="minilm")
    assert group_answers(answers, encoder="minilm", cache=cache) == plain
    assert group_answers(answers, encoder="minilm", cache=EmbeddingCache(tmp_path / "rows.npz")) == plain


def test_an_encoding_asked_to_stop_keeps_the_batches_it_did(tmp_path, monkeypatch):
    """When the page wants another question first, does the cache stop between batches (Preempted) and keep the
    rows it encoded, so that the question resumes where it stopped?"""
    from autograder.marking.groups import EmbeddingCache, Preempted

    seen = _counting_encoder(monkeypatch)
    texts = [f"answer number {i}" for i in range(150)]
    with pytest.raises(Preempted):  # before a row is encoded: nothing to keep yet
        EmbeddingCache(tmp_path / "rows.npz", preempt=lambda: True)(texts)
    calls = iter([False, False, True])
    with pytest.raises(Preempted):
        EmbeddingCache(tmp_path / "rows.npz", preempt=lambda: next(calls))(texts)
    assert len(seen) == 2 * EmbeddingCache.BATCH
    EmbeddingCache(tmp_path / "rows.npz")(texts)
    assert len(seen) == 150 and sorted(seen) == sorted(texts)


def test_an_answer_and_its_opposite_are_never_one_group():
    """Is a copy of an answer with "not" added (or taken away), which reads almost the same and says the opposite,
    kept out of that answer's group, by words and by meaning, while two answers that agree in other words stay
    together?"""
    says = "Doubling the batch size halves the number of steps, so you should buy a larger model here."
    answers = {
        "a": says,
        "b": says.upper(),
        "c": says.replace("should buy", "should not buy"),
        "d": says.replace("halves", "does not halve"),
    }
    for encoder in ("tfidf", "minilm"):
        groups = by_student(group_answers(answers, encoder=encoder))
        assert groups["a"] is groups["b"], encoder
        assert groups["c"] is not groups["a"] and groups["d"] is not groups["a"], encoder


def test_a_contrast_is_no_negation_of_a_paraphrase():
    """Do "the mean, not the max" and a paraphrase that never says "not" still go together (their words differ
    beyond the negation)?"""
    from autograder.marking.groups import flipped

    assert not flipped(MEAN, MEAN_PARAPHRASES[0])
    assert flipped("the count does not depend on the order", "the count does depend on the order")
    assert flipped("You can't buy it.", "You can buy it.")
    assert flipped("the count depends on the order", "the count does not depend on the order")
    assert not flipped("it doesnt depend on the order", "it does not depend on the order")
    assert not flipped("It is not small.", "It is not small at all.")


def test_a_paraphrase_stays_with_its_answer_when_its_opposite_is_in_the_cluster():
    """With an answer that already holds a "not", its opposite (one more "not") and a paraphrase that holds none, does
    the paraphrase stay with the answer and the opposite go apart (not split by counting negations)?"""
    says = "A larger model does not help here: the loss is set by the data, so spend the compute on more tokens."
    answers = {
        "a": says,
        "b": "Buying a bigger model would be wasted: the data limits the loss, so train on more tokens instead.",
        "d": says.replace("A larger model does not help", "A larger model does help"),
    }
    for encoder in ("tfidf", "minilm"):
        groups = by_student(group_answers(answers, encoder=encoder))
        assert groups["d"] is not groups["a"], encoder
        if groups["b"] is groups["d"]:
            raise AssertionError(f"{encoder}: the paraphrase went with the opposite")
