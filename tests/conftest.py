"""Shared test set-up: offline hub, quiet tokenizers, gpu marker skipping, the slow tier behind --run-slow, the
zygote's waits stretched on a busy machine (tests/slowdown.py)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("A3_QUICK", "1")

import pytest  # noqa: E402

from tests import slowdown  # noqa: E402

SLOW_LEFT_OUT = pytest.StashKey[int]()


def pytest_report_header(config):
    return slowdown.describe()


@pytest.fixture(autouse=True)
def _patient_zygote(monkeypatch):
    """The waits on a zygote that this process makes, stretched on a busy machine (tests/slowdown.py): for a kernel
    (client.READY_TIMEOUT, 60 s: the zygote may still be importing its libraries, about 6 s idle and over a minute
    on a busy machine) and for a reset (client.RESET_TIMEOUT, 30 s, after those imports). A launcher process reads
    its own READY_TIMEOUT: tests/sandbox/kernels.py waits for the imports before it starts one."""
    from autograder.sandbox.zygote import client

    monkeypatch.setattr(client, "READY_TIMEOUT", slowdown.scaled(client.READY_TIMEOUT))
    monkeypatch.setattr(client, "RESET_TIMEOUT", slowdown.scaled(client.RESET_TIMEOUT))


def pytest_addoption(parser):
    parser.addoption(
        "--run-slow",
        action="store_true",
        help="also run the slow tier (tests marked slow: whole notebooks, batches, benchmarks), as .ci/run does",
    )


def slow_tier_chosen(config):
    """True when the slow tier runs: --run-slow, or a -m expression that names `slow` (it then picks by itself)."""
    return config.getoption("--run-slow") or "slow" in (config.getoption("markexpr") or "")


def pytest_collection_modifyitems(config, items):
    if not slow_tier_chosen(config):
        slow = [item for item in items if "slow" in item.keywords]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if "slow" not in item.keywords]
        config.stash[SLOW_LEFT_OUT] = len(slow)

    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)  # set in a pytest-xdist worker
    if workeroutput is not None:
        workeroutput["slow_left_out"] = session.config.stash.get(SLOW_LEFT_OUT, 0)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist: every worker collects the whole selection, so any one tells how many slow tests it left out."""
    left_out = getattr(node, "workeroutput", {}).get("slow_left_out", 0)
    node.config.stash[SLOW_LEFT_OUT] = max(left_out, node.config.stash.get(SLOW_LEFT_OUT, 0))


def pytest_terminal_summary(terminalreporter, config):
    left_out = config.stash.get(SLOW_LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(
            f"slow tier not run: {left_out} tests marked slow deselected; `pytest --run-slow` runs them too "
            "(.ci/run always does)"
        )


@pytest.fixture(scope="module")
def releases():
    """The released notebooks, {name: notebook} (the check and readiness tests start from them)."""
    import nbformat

    from autograder import contract, paths

    return {name: nbformat.read(paths.RELEASE / f"{name}.ipynb", as_version=4) for name in contract.NOTEBOOKS}


@pytest.fixture(scope="module")
def sources():
    """The source notebooks, {name: notebook} (their solutions fill a release in)."""
    import nbformat

    from autograder import contract, paths

    return {name: nbformat.read(paths.SOURCE / f"{name}.ipynb", as_version=4) for name in contract.NOTEBOOKS}
