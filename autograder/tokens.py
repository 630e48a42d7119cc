"""The pass-line format, in one place: how a check writes its verdict line, how the grader reads it back and
how a student's page loses the token.

A check that passes prints ``PASSED <grade_id> [a3:<token>]``; one that cannot decide prints
``UNGRADABLE <grade_id> [a3:<token>]: <reason>``. The token is an HMAC of a label (the grade id, or
``ungradable:<grade id>``) under the notebook's check key; without a key the line has no token.

Light on purpose (hmac, hashlib, re): the grading kernel imports it with `autograder.checks`, before any
student code. It never holds a key: the runtime's signer (autograder.checks) keeps the key in a closure and
calls the `pass_token` captured there at import.
"""

import hashlib
import hmac
import re

TAG = "a3"  # the token's mark in a line: [a3:<token>]
TOKEN_CHARS = 20  # hex digits of the HMAC kept in a token
UNGRADABLE_PREFIX = "ungradable:"  # label prefix of an UNGRADABLE line's token
TOKEN = re.compile(rf"\s*\[{TAG}:[0-9a-f]+\]")  # a token as it appears in any output text, with the space before


def _signing(digest=hmac.digest, sha256=hashlib.sha256):
    """pass_token, bound at import to the hmac functions of that moment (a notebook patching hmac later cannot
    see the key go by)."""

    def pass_token(label: str, key: bytes) -> str:
        """HMAC token that proves a check for `label` (a grade id) really ran under `key` (bytes)."""
        return digest(key, label.encode(), sha256).hex()[:TOKEN_CHARS]

    return pass_token


pass_token = _signing()
del _signing


def ungradable_label(grade_id: str) -> str:
    """The label an UNGRADABLE line for `grade_id` is signed with (never the same token as its PASSED line)."""
    return UNGRADABLE_PREFIX + grade_id


def suffix(token: str | None) -> str:
    """' [a3:<token>]', or '' without a token."""
    return f" [{TAG}:{token}]" if token else ""


def passed_line(grade_id: str, token: str | None = None) -> str:
    """The line a passing check prints: ``PASSED <grade_id> [a3:<token>]`` (no token part without one)."""
    return f"PASSED {grade_id}{suffix(token)}"


def ungradable_line(grade_id: str, reason: object, token: str | None = None) -> str:
    """The line a check that cannot decide prints: ``UNGRADABLE <grade_id> [a3:<token>]: <reason>``."""
    return f"UNGRADABLE {grade_id}{suffix(token)}: {reason}"


def _passed_pattern(grade_id):
    return re.compile(rf"^PASSED {re.escape(grade_id)} \[{TAG}:([0-9a-f]+)\]\s*$", re.M)


def _ungradable_pattern(grade_id):
    return re.compile(rf"^UNGRADABLE {re.escape(grade_id)} \[{TAG}:([0-9a-f]+)\]:? ?(.*)$", re.M)


def passed_tokens(text: str, grade_id: str) -> list[str]:
    """Tokens of every ``PASSED <grade_id> [a3:<token>]`` line of `text` (a cell's stdout)."""
    return _passed_pattern(grade_id).findall(text)


def ungradable_claim(text: str, grade_id: str) -> tuple[str, str] | None:
    """(token, reason) of the first ``UNGRADABLE <grade_id> [a3:<token>]: <reason>`` line of `text`, or None."""
    found = _ungradable_pattern(grade_id).search(text)
    return (found.group(1), found.group(2)) if found else None


def is_passed(text: str, grade_id: str, key: bytes) -> bool:
    """True when `text` holds a PASSED line for `grade_id` whose token is valid under `key`."""
    want = pass_token(grade_id, key)
    return any(hmac.compare_digest(token, want) for token in passed_tokens(text, grade_id))


def ungradable_reason(text: str, grade_id: str, key: bytes) -> str | None:
    """The reason of the first UNGRADABLE line for `grade_id` when its token is valid under `key` (stripped;
    may be ''), else None."""
    claim = ungradable_claim(text, grade_id)
    if claim and hmac.compare_digest(claim[0], pass_token(ungradable_label(grade_id), key)):
        return claim[1].strip()
    return None


def strip(text: str) -> str:
    """`text` without its pass tokens (what a student may see of a pass line)."""
    return TOKEN.sub("", text)
