"""Damaged and hostile submissions, built at test time from the release and source notebooks.

`build(submissions, release, source)` writes one student folder (or LMS-named file) per case and
returns the expectations: for each case the student id the grader must use and, per notebook, the
expected status (a regex) and score. tests/grading/test_pipeline_corpus.py grades the whole corpus in one batch;
tests/grading/test_ingest.py reuses the notebook builders below.

Provided code cells are locked in every notebook, and ingest restores a locked cell a student edited,
so each submission runs the notebook's full quick mode, as a real one would.

Run `python tests/corpus/make_corpus.py DEST` to write the corpus somewhere to look at it.
"""

import copy
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder import contract, paths

NMT_IDS = list(contract.GRADED["nmt"])
NMT_MAX = contract.max_score("nmt")
FAKE_TOKEN = "0123456789abcdef0123"


# ---------------------------------------------------------------------------------------------
# notebook builders


def gid(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def index_of(nb, grade_id):
    return next(i for i, c in enumerate(nb.cells) if gid(c) == grade_id)


def strip_markers(source):
    """A source solution cell as a student would write it: the nbgrader region markers removed."""
    markers = ("### BEGIN SOLUTION", "### END SOLUTION")
    return "\n".join(line for line in source.splitlines() if line.strip() not in markers)


def unsolved(release_nb):
    """The release notebook as handed out (every solution cell still a stub)."""
    return copy.deepcopy(release_nb)


def solved(release_nb, source_nb):
    """The release notebook with every solution cell filled in from the instructor's source."""
    nb = copy.deepcopy(release_nb)
    answers = {gid(c): c.source for c in source_nb.cells if gid(c)}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            cell.source = strip_markers(answers[gid(cell)])
        elif meta.get("solution"):
            cell.source = "My answer: the model attends to the right characters."
    return nb


def set_solution(nb, grade_id, code):
    nb.cells[index_of(nb, grade_id)].source = code


def insert_after(nb, grade_id, code):
    """Add a student code cell right after the cell with `grade_id`."""
    nb.cells.insert(index_of(nb, grade_id) + 1, nbformat.v4.new_code_cell(code))


def strip_nbgrader(nb):
    for cell in nb.cells:
        cell.metadata.pop("nbgrader", None)


def drop_test_cells(nb):
    nb.cells = [c for c in nb.cells if not (gid(c) or "").startswith("test_")]


def colabify(nb):
    """What a Colab download looks like: Colab metadata everywhere, Colab's kernelspec."""
    nb.metadata["colab"] = {"provenance": [], "collapsed_sections": [], "gpuType": "T4"}
    nb.metadata["accelerator"] = "GPU"
    nb.metadata["gpuClass"] = "standard"
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"abc": {"model_name": "HBoxModel"}}}
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    for i, cell in enumerate(nb.cells):
        cell.metadata["id"] = f"colab{i:04d}"
        cell.metadata["colab"] = {"base_uri": "https://localhost:8080/"}
        if cell.cell_type == "code":
            cell.metadata["outputId"] = f"out{i}"
            cell.metadata["executionInfo"] = {"status": "ok", "elapsed": 12}


def as_v40(nb):
    """The notebook as nbformat 4.0 JSON (no cell ids), as old Jupyter or some LMS previews write it."""
    raw = json.loads(nbformat.writes(nb))
    raw["nbformat_minor"] = 0
    for cell in raw["cells"]:
        cell.pop("id", None)
    return json.dumps(raw, indent=1)


def write(nb, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(nb, (str, bytes)):
        path.write_bytes(nb.encode() if isinstance(nb, str) else nb)
    else:
        nbformat.write(nb, path)


# ---------------------------------------------------------------------------------------------
# hostile code a student might add

REFERENCE = {
    "positional_encodings": "from autograder.content.reference.nmt import create_positional_encodings",
    "scaled_dot_attention": "from autograder.content.reference.nmt import ScaledDotAttention",
    "causal_scaled_dot_attention": "from autograder.content.reference.nmt import CausalScaledDotAttention",
    "generate_tensors_for_training_decoder_nmt": "from autograder.content.reference.nmt import generate_tensors_for_training_decoder_nmt",
    "decoder_only_transformer": "from autograder.content.reference.nmt import DecoderOnlyTransformer",
    "perplexity": "from autograder.content.reference.nmt import perplexity",
    "decoder_params": "from autograder.content.reference.nmt import decoder_params",
    "find_optimal_params": "from autograder.content.reference.nmt import find_optimal_params",
    "fit_linear_log": "from autograder.content.reference.nmt import fit_linear_log",
}

FAKE_MODULE = f"""import sys, types
fake = types.ModuleType("autograder.checks.nmt")
for _id in {NMT_IDS!r}:
    exec(f"def check_{{_id}}(*args, **kwargs):\\n    print('PASSED {{_id}} [a3:{FAKE_TOKEN}]')", fake.__dict__)
sys.modules["autograder.checks.nmt"] = fake
"""

FAKE_WITH_DECORATOR = f"""import sys, types
from autograder.checks import check
fake = types.ModuleType("autograder.checks.nmt")
for _id in {NMT_IDS!r}:
    setattr(fake, f"check_{{_id}}", check(_id)(lambda *args, **kwargs: None))
sys.modules["autograder.checks.nmt"] = fake
"""

REDEFINE_CHECKS = "\n".join(
    f"def check_{i}(*args, **kwargs):\n    print('PASSED {i} [a3:{FAKE_TOKEN}]')\n" for i in NMT_IDS
)

MONKEYPATCH = """import builtins, numpy, numpy.testing, torch
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.Tensor.allclose = lambda *a, **k: True
numpy.allclose = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
builtins.abs = lambda x: 0.0
"""

PE_ZEROS = """def create_positional_encodings(max_seq_len, hidden_size):
    return torch.zeros(max_seq_len, hidden_size)
"""

ANYTHING = """class Anything(float):
    \"\"\"Equal to everything.\"\"\"
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = float.__hash__

"""

SNOOP = """import os, socket
for path in [{root!r} + "/source/a3/nmt.ipynb", "../../../gradebook.db", "../../../source/a3/nmt.ipynb",
             "/root/.bash_history"]:
    try:
        print(path, "read", len(open(path, "rb").read()), "bytes")
    except OSError as e:
        print(path, "->", type(e).__name__)
try:
    socket.create_connection(("1.1.1.1", 80), timeout=3)
    print("network: connected")
except OSError as e:
    print("network ->", type(e).__name__)
"""

MEMORY_BOMB = """def bomb():
    hog = []
    while True:
        hog.append(torch.ones(2**26))  # 256 MB each, touched
try:
    bomb()
except (MemoryError, RuntimeError) as e:
    print("memory bomb stopped:", type(e).__name__)
"""


# ---------------------------------------------------------------------------------------------
# the cases


@dataclass
class Case:
    """One submission: what the student did, and what the grader must make of it."""

    name: str  # folder name (or LMS file prefix) in SUBMISSIONS
    what: str
    student: str  # the id the grader must use
    expect: dict  # notebook -> (status regex, score); notebooks not listed: missing, 0
    log: list = field(default_factory=list)  # regexes that must appear in grading.log
    baseline: str = ""  # for tampering: the honest case whose score it must not beat


def build(submissions, release, source):
    """Write the corpus into `submissions`; returns the list of Case.

    Inputs:
    - submissions: empty folder.
    - release, source: folders holding the release and the source nmt.ipynb.
    """
    sub = Path(submissions)
    rel = nbformat.read(Path(release) / "nmt.ipynb", as_version=4)
    src = nbformat.read(Path(source) / "nmt.ipynb", as_version=4)
    full = ("^graded$", NMT_MAX)
    zero = ("^graded$", 0)
    cases = []

    def case(name, what, expect, files, student=None, log=(), baseline=""):
        for rel_path, content in files.items():
            write(content, sub / rel_path)
        cases.append(Case(name, what, student or name, {"nmt": expect}, list(log), baseline))

    # -- Colab and LMS damage: the code is right, so the score must be full
    case("clean", "solved notebook, nothing wrong", full, {"clean/nmt.ipynb": solved(rel, src)})
    nb = solved(rel, src)
    colabify(nb)
    case(
        "colab_copy",
        "Colab download 'Copy of nmt.ipynb' with Colab metadata and kernelspec",
        full,
        {"colab_copy/Copy of nmt.ipynb": nb},
        log=[r"REPAIR colab_copy/nmt: removed editor metadata"],
    )
    case(
        "nested_v40",
        "nbformat 4.0 without cell ids, as Downloads/A3/NMT.ipynb",
        full,
        {"nested_v40/Downloads/A3/NMT.ipynb": as_v40(solved(rel, src))},
        log=[r"REPAIR nested_v40/nmt: upgraded nbformat 4\.0 to 4\.5"],
    )
    case(
        "dup_names",
        "an old unsolved nmt.ipynb and the solved 'nmt (1).ipynb'",
        full,
        {"dup_names/nmt.ipynb": unsolved(rel), "dup_names/nmt (1).ipynb": solved(rel, src)},
        log=[r"REPAIR dup_names/nmt: 2 files for nmt: took 'nmt \(1\)\.ipynb'"],
    )
    case(
        "smithj_12345_678_nmt.ipynb",
        "Canvas-style LMS file name at the top level",
        full,
        {"smithj_12345_678_nmt.ipynb": solved(rel, src)},
        student="smithj~canvas12345",
    )
    case(
        "moodle",
        "Moodle-style student folder 'Jane Doe_123456_assignsubmission_file_'",
        full,
        {"Jane Doe_123456_assignsubmission_file_/nmt.ipynb": solved(rel, src)},
        student="Jane Doe~moodle123456",
    )
    nb = solved(rel, src)
    strip_nbgrader(nb)
    case(
        "lost_metadata",
        "every cell lost its nbgrader metadata (stock nbgrader scores this 0)",
        full,
        {"lost_metadata/nmt.ipynb": nb},
        log=[r"restored lost nbgrader metadata of 'test_scaled_dot_attention'"],
    )
    nb = solved(rel, src)
    drop_test_cells(nb)
    case(
        "deleted_tests",
        "solved, but every test cell deleted",
        full,
        {"deleted_tests/nmt.ipynb": nb},
        log=[r"restored deleted test cell 'test_fit_linear_log'"],
    )
    nb = solved(rel, src)
    i = index_of(nb, "scaled_dot_attention")
    broken = copy.deepcopy(nb.cells[i])
    broken.source = "class ScaledDotAttention(nn.Module):\n    pass  # first attempt\n"
    broken["id"] = "first-attempt"
    nb.cells.insert(i, broken)
    case(
        "dup_solution",
        "solution cell copied: a broken first attempt above the final one",
        full,
        {"dup_solution/nmt.ipynb": nb},
        log=[r"grade id 'scaled_dot_attention' was on 2 cells"],
    )
    # -- files that are not gradable: a one-line status, score 0, nothing lost
    case("empty_file", "nmt.ipynb is 0 bytes", (r"^empty file", 0), {"empty_file/nmt.ipynb": b""})
    text = nbformat.writes(solved(rel, src))
    case(
        "invalid_json",
        "truncated download",
        (r"^not a notebook: invalid JSON", 0),
        {"invalid_json/nmt.ipynb": text[: len(text) // 2]},
    )
    case(
        "pdf_only",
        "a PDF export instead of the notebook",
        (r"^not a notebook: 'nmt\.pdf'", 0),
        {"pdf_only/nmt.pdf": b"%PDF-1.4\n%fake\n"},
    )
    other = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Assignment 2: CNNs"),
            nbformat.v4.new_code_cell("import torch\nprint('cnn')"),
        ]
    )
    case(
        "other_assignment",
        "nmt.ipynb is another assignment's notebook",
        (r"^not this assignment's notebook", 0),
        {"other_assignment/nmt.ipynb": other},
    )
    case(
        "no_notebook",
        "only a README",
        (r"^missing \(found only: README\.txt\)", 0),
        {"no_notebook/README.txt": "I could not finish.\n"},
    )
    # -- honest baselines the tampering cases are compared with
    case("unsolved", "the release as handed out, nothing filled in", zero, {"unsolved/nmt.ipynb": unsolved(rel)})
    nb = solved(rel, src)
    set_solution(nb, "positional_encodings", PE_ZEROS)
    wrong = contract.GRADED["nmt"]["positional_encodings"]
    case(
        "pe_wrong",
        "solved except positional encodings (all zeros)",
        ("^graded$", NMT_MAX - wrong),
        {"pe_wrong/nmt.ipynb": nb},
    )
    # -- tampering: the grade must not rise above its baseline
    nb = unsolved(rel)
    for cell in nb.cells:
        if (gid(cell) or "").startswith("test_"):
            cell.source = f"print('PASSED {gid(cell)[5:]} [a3:{FAKE_TOKEN}]')"
    case(
        "edited_tests",
        "unsolved; test cells replaced by fake PASSED lines",
        zero,
        {"edited_tests/nmt.ipynb": nb},
        log=[r"restored the edited locked cell 'test_positional_encodings'"],
        baseline="unsolved",
    )
    nb = unsolved(rel)
    for cell in nb.cells:
        if (gid(cell) or "").startswith("test_"):
            cell.metadata["tags"] = ["skip-execution"]
    case(
        "skip_tag",
        "unsolved; skip-execution tag on every test cell",
        zero,
        {"skip_tag/nmt.ipynb": nb},
        log=[r"removed tag\(s\) skip-execution from 'test_positional_encodings'"],
        baseline="unsolved",
    )
    nb = unsolved(rel)
    drop_test_cells(nb)
    case(
        "deleted_tests_unsolved",
        "unsolved; every test cell deleted",
        zero,
        {"deleted_tests_unsolved/nmt.ipynb": nb},
        baseline="unsolved",
    )
    nb = unsolved(rel)
    for grade_id, line in REFERENCE.items():
        set_solution(nb, grade_id, line)
    insert_after(nb, "imports", FAKE_MODULE)
    case(
        "fake_module",
        "reference implementations imported + fake autograder.checks.nmt in sys.modules",
        zero,
        {"fake_module/nmt.ipynb": nb},
        baseline="unsolved",
    )
    nb = unsolved(rel)
    for grade_id, line in REFERENCE.items():
        set_solution(nb, grade_id, line)
    insert_after(nb, "imports", FAKE_WITH_DECORATOR)
    case(
        "check_decorator",
        "reference implementations imported + fake autograder.checks.nmt whose checks use the real @check decorator",
        zero,
        {"check_decorator/nmt.ipynb": nb},
        baseline="unsolved",
    )
    nb = unsolved(rel)
    for grade_id, line in REFERENCE.items():
        set_solution(nb, grade_id, line)
    case(
        "reference_import",
        "solution cells import autograder.content.reference",
        zero,
        {"reference_import/nmt.ipynb": nb},
        log=[r"CHECK reference_import/nmt/positional_encodings: 0/1: .*defined in this notebook"],
        baseline="unsolved",
    )
    nb = unsolved(rel)
    for grade_id, line in REFERENCE.items():
        set_solution(nb, grade_id, line + "\n\n" + REDEFINE_CHECKS)
    case(
        "redefine_check",
        "reference imports + check_* functions redefined in the notebook",
        zero,
        {"redefine_check/nmt.ipynb": nb},
        log=[r"CHECK redefine_check/nmt/fit_linear_log: 0/1: .*defined in this notebook"],
        baseline="unsolved",
    )
    nb = solved(rel, src)
    insert_after(nb, "imports", MONKEYPATCH)
    set_solution(nb, "positional_encodings", PE_ZEROS)
    case(
        "monkeypatch",
        "torch.allclose/equal, numpy.testing and builtins.abs patched; positional encodings wrong",
        ("^graded$", NMT_MAX - wrong),
        {"monkeypatch/nmt.ipynb": nb},
        log=[r"CHECK monkeypatch/nmt/positional_encodings: 0/1"],
        baseline="pe_wrong",
    )
    lost = contract.GRADED["nmt"]["find_optimal_params"] + contract.GRADED["nmt"]["fit_linear_log"]
    nb = solved(rel, src)
    set_solution(nb, "find_optimal_params", "def find_optimal_params(x, y):\n    return 0.0, 0.0\n")
    set_solution(nb, "fit_linear_log", "def fit_linear_log(x, y):\n    return 0.0, 0.0\n")
    case(
        "zeros",
        "solved except find_optimal_params and fit_linear_log (return zeros)",
        ("^graded$", NMT_MAX - lost),
        {"zeros/nmt.ipynb": nb},
    )
    nb = solved(rel, src)
    for name in ("find_optimal_params", "fit_linear_log"):
        set_solution(nb, name, ANYTHING + f"def {name}(x, y):\n    return Anything(0), Anything(0)\n")
    case(
        "eq_true",
        "as zeros, but the results' __eq__ always returns True",
        ("^graded$", NMT_MAX - lost),
        {"eq_true/nmt.ipynb": nb},
        log=[r"CHECK eq_true/nmt/fit_linear_log: 0/1"],
        baseline="zeros",
    )
    # -- the sandbox: nothing to read, no network; the log says so
    nb = solved(rel, src)
    insert_after(nb, "test_positional_encodings", SNOOP.format(root=str(paths.ROOT)))
    case(
        "snoop",
        "reads source/, the gradebook, the instructor's home; opens a socket",
        full,
        {"snoop/nmt.ipynb": nb},
        log=[
            r"SANDBOX snoop/nmt: .*tried to read .*/source/a3/nmt\.ipynb",
            r"SANDBOX snoop/nmt: .*tried to read .*gradebook\.db",
            r"SANDBOX snoop/nmt: .*network connection",
        ],
    )
    # -- limits: graded as far as it got, and the next submission is graded normally
    nb = solved(rel, src)
    insert_after(nb, "test_positional_encodings", "while True:\n    pass")
    case(
        "infinite_loop",
        "an infinite loop after part 1 (the cell times out, grading goes on)",
        full,
        {"infinite_loop/nmt.ipynb": nb},
    )
    nb = solved(rel, src)
    insert_after(nb, "test_positional_encodings", "print('x' * 10**9)")
    case("big_print", "prints 1 GB", full, {"big_print/nmt.ipynb": nb})
    nb = solved(rel, src)
    insert_after(nb, "test_positional_encodings", MEMORY_BOMB)
    case("memory_bomb", "allocates until the memory cap stops it", full, {"memory_bomb/nmt.ipynb": nb})
    nb = solved(rel, src)
    insert_after(nb, "test_positional_encodings", "import os\nos._exit(1)")
    case(
        "os_exit",
        "calls os._exit (refused: SystemExit, grading goes on)",
        full,
        {"os_exit/nmt.ipynb": nb},
        log=[r"SANDBOX os_exit/nmt: .*os\._exit: refused"],
    )
    nb = solved(rel, src)
    insert_after(nb, "test_causal_scaled_dot_attention", "import ctypes\nctypes.string_at(0)")
    so_far = sum(
        contract.GRADED["nmt"][k]
        for k in ("positional_encodings", "scaled_dot_attention", "causal_scaled_dot_attention")
    )
    case(
        "segfault", "segfaults after part 3 (graded as far as it got)", ("^graded$", so_far), {"segfault/nmt.ipynb": nb}
    )
    return cases


def expected_rows(cases, notebooks=contract.NOTEBOOKS):
    """{(student, notebook): (status regex, score)} for every student x notebook."""
    rows = {}
    for c in cases:
        for nb in notebooks:
            rows[(c.student, nb)] = c.expect.get(nb, ("^missing", 0))
    return rows


def matches(status, pattern):
    return re.search(pattern, status) is not None


if __name__ == "__main__":
    dest = Path(sys.argv[1] if len(sys.argv) > 1 else "corpus_out")
    dest.mkdir(parents=True, exist_ok=True)
    built = build(dest, paths.RELEASE, paths.SOURCE)
    for c in built:
        print(f"{c.student:<24} {c.what}")
