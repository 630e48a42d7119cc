"""autograder.cli: one parser for every command, each command's engine called with keyword options."""

import importlib
import inspect
from pathlib import Path

import pytest

from autograder import cli, lms


def test_every_command_parses_into_its_engine_signature():
    """Does each command's parsed namespace name exactly the keyword options its module's main takes (release's
    main takes each LMS's setting as a keyword of **settings, one per record of lms.REGISTRY)?"""
    required = {
        "grade": ["SUBS", "--out", "OUT"],
        "check": ["nmt.ipynb"],
        "feedback": ["OUT"],
        "formgrader": ["OUT"],
        "mark": ["OUT"],
        "report": ["OUT"],
        "export": ["OUT"],
        "similarity": ["OUT"],
        "release": ["OUT", "--lms", "moodle"],
    }
    for name, (module, _) in cli.COMMANDS.items():
        options = vars(cli.parser().parse_args([name] + required.get(name, [])))
        options.pop("command")
        params = inspect.signature(importlib.import_module(module).main).parameters
        named = {n for n, p in params.items() if p.kind is p.KEYWORD_ONLY}
        more = {n for n, p in params.items() if p.kind is p.VAR_KEYWORD}
        assert set(params) == named | more, f"{module}.main takes positional arguments"
        settings = {system.setting for system in lms.REGISTRY.values()} if more else set()
        assert set(options) == named | settings, (
            f"{name}: parsed {sorted(options)}, {module}.main takes {sorted(params)}"
        )


def test_unknown_command_is_a_usage_error(capsys):
    """Does an unknown command exit 2 with argparse's one-line complaint, running nothing?"""
    assert cli.main(["nonsense"]) == 2
    assert "invalid choice: 'nonsense'" in capsys.readouterr().err


def test_no_arguments_prints_the_commands(capsys):
    """Does `python -m autograder` alone list every command and exit 0?"""
    assert cli.main([]) == 0
    text = capsys.readouterr().out
    assert all(name in text for name in cli.COMMANDS)


def test_options_reach_the_engine(monkeypatch):
    """Are parsed options passed to the engine as keywords (e.g. --scheduler as scheduler_address)?"""
    from autograder.grading import pipeline

    seen = {}
    monkeypatch.setattr(pipeline, "main", lambda **options: seen.update(options) or 7)
    assert cli.main(["grade", "SUBS", "--out", "OUT", "--workers", "3", "--scheduler", "tcp://h:1", "--force"]) == 7
    assert seen["scheduler_address"] == "tcp://h:1" and seen["workers"] == 3 and seen["force"] is True
    assert str(seen["submissions"]) == "SUBS" and str(seen["out"]) == "OUT"


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_exits_zero(flag, capsys):
    """Does --help print usage and exit 0 instead of raising SystemExit?"""
    assert cli.main([flag]) == 0
    assert "usage:" in capsys.readouterr().out


def test_the_cli_is_the_only_entry_point():
    """Does no module besides autograder/__main__.py and the sandbox processes (launcher, kernel, zygote,
    which run as `python -m autograder.sandbox.<name>`) keep an `if __name__ == "__main__":` block?"""
    root = Path(cli.__file__).parent
    allowed = {"__main__.py", "sandbox/launcher.py", "sandbox/kernel.py", "sandbox/zygote/__main__.py"}
    found = {p.relative_to(root).as_posix() for p in root.rglob("*.py") if '__name__ == "__main__"' in p.read_text()}
    assert found == allowed, f"entry points besides the CLI: {sorted(found - allowed)}"


def test_help_says_whole_sentences(capsys):
    """Does the top-level --help describe the tool in whole sentences (none cut off mid-way)?"""
    cli.main(["--help"])
    text = capsys.readouterr().out
    description = " ".join(text.split("\n\n")[1].split())
    assert description.endswith("."), description
