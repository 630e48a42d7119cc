"""autograder.tokens: the pass-line format written by the checks, read by the grader, stripped for students."""

import hashlib
import hmac
import os
import subprocess
import sys

from autograder import tokens

KEY = b"s3cret"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_code(code, key):
    """stdout of `code` run in a fresh interpreter with A3_CHECK_KEY=key at import."""
    env = dict(os.environ, PYTHONPATH=ROOT, A3_CHECK_KEY=key)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout


def test_token_is_the_truncated_hmac_of_the_label():
    """Is a token the first 20 hex digits of HMAC-SHA256(key, label), as graded notebooks have always carried?"""
    assert tokens.pass_token("add", KEY) == hmac.new(KEY, b"add", hashlib.sha256).hexdigest()[:20]


def test_passed_line_round_trip():
    """Does a PASSED line written with the right token read back as passed, with that token?"""
    token = tokens.pass_token("add", KEY)
    line = tokens.passed_line("add", token)
    assert line == f"PASSED add [a3:{token}]"
    assert tokens.passed_tokens(f"noise\n{line}\nmore\n", "add") == [token]
    assert tokens.is_passed(f"noise\n{line}\n", "add", KEY)


def test_wrong_key_fails():
    """Is a PASSED or UNGRADABLE line signed under another key refused?"""
    passed = tokens.passed_line("add", tokens.pass_token("add", b"other"))
    ungradable = tokens.ungradable_line(
        "add", "no weights", tokens.pass_token(tokens.ungradable_label("add"), b"other")
    )
    assert not tokens.is_passed(passed, "add", KEY)
    assert tokens.ungradable_reason(ungradable, "add", KEY) is None


def test_token_is_bound_to_its_grade_id():
    """Does a valid token of one grade id pass neither another id nor an id it is a prefix of?"""
    line = tokens.passed_line("add", tokens.pass_token("add", KEY))
    assert not tokens.is_passed(line.replace("add", "sub"), "sub", KEY)
    assert not tokens.is_passed(line, "ad", KEY)
    assert tokens.passed_tokens(line + "x", "add") == []  # nothing may follow the token on the line


def test_line_without_token_does_not_pass():
    """Is the plain pass line (no key: an instructor's own run) written without a token part, and not a pass?"""
    assert tokens.passed_line("add") == "PASSED add"
    assert tokens.ungradable_line("add", "why") == "UNGRADABLE add: why"
    assert not tokens.is_passed("PASSED add\n", "add", KEY)


def test_ungradable_round_trip():
    """Does an UNGRADABLE line read back with its reason under the right key, and only with the UNGRADABLE
    label's token (a PASSED token does not make a cell ungradable)?"""
    good = tokens.ungradable_line("add", "no weights here", tokens.pass_token(tokens.ungradable_label("add"), KEY))
    assert tokens.ungradable_claim(good, "add") == (tokens.pass_token("ungradable:add", KEY), "no weights here")
    assert tokens.ungradable_reason(f"x\n{good}\n", "add", KEY) == "no weights here"
    reused = tokens.ungradable_line("add", "no weights here", tokens.pass_token("add", KEY))
    assert tokens.ungradable_reason(reused, "add", KEY) is None
    empty = tokens.ungradable_line("add", "", tokens.pass_token("ungradable:add", KEY))
    assert tokens.ungradable_reason(empty, "add", KEY) == ""


def test_strip_removes_tokens_only():
    """Does strip() remove each token with the space before it and leave every other bracket alone?"""
    token = tokens.pass_token("add", KEY)
    text = f"PASSED add [a3:{token}]\nUNGRADABLE add [a3:{token}]: why\nlist [1, 2] [a3:XYZ]\n"
    assert tokens.strip(text) == "PASSED add\nUNGRADABLE add: why\nlist [1, 2] [a3:XYZ]\n"


def test_runtime_prints_lines_in_this_format():
    """Does a check under a key print exactly tokens.passed_line with the token of its grade id?"""
    code = "from autograder.checks import check\n@check('demo_cell')\ndef demo(): pass\ndemo()\n"
    out = run_code(code, "k3y")
    assert out == tokens.passed_line("demo_cell", tokens.pass_token("demo_cell", b"k3y")) + "\n"


def test_rebinding_token_functions_after_import_does_not_reach_the_key():
    """After a notebook rebinds pass_token (in autograder.checks and in tokens) and hmac's functions, does a
    genuine check still print its real token, without any of them seeing the key?"""
    code = (
        "import hmac\n"
        "import autograder.checks as c\n"
        "import autograder.tokens as t\n"
        "seen = []\n"
        "def spy(*args, **kwargs):\n"
        "    seen.append(args)\n"
        "    return '0' * 20\n"
        "c.pass_token = t.pass_token = hmac.new = hmac.digest = spy\n"
        "@c.check('demo_cell')\ndef demo(): pass\n"
        "c.seal()\n"
        "demo()\n"
        "print(seen)\n"
    )
    out = run_code(code, "k3y").splitlines()
    assert out == [tokens.passed_line("demo_cell", tokens.pass_token("demo_cell", b"k3y")), "[]"], out
