"""Runtime for hidden checks: one-line failures, quiet execution, pristine helpers and pass tokens.

Hidden test cells call a check function on the student's object. A check either prints one
``PASSED <grade_id> [a3:<token>]`` line or raises :class:`CheckFailed` with one line a student
understands (the line format lives in autograder.tokens). Every check defined with @check before the
runtime is sealed is recorded in `registry`. See docs/ARCHITECTURE.md.
"""

import builtins
import contextlib
import functools
import io
import math
import os
import sys
import types
import warnings
from collections.abc import Callable, Iterator

import numpy as np
import torch
import torch.nn.functional as F

from autograder import envvars, tokens
from autograder.checks.devices import (
    FAKE_CUDA,
    MixedDevices,
    Undecided,
    on_fake_cuda,
    same_device,
    shown,
    to_fake_cuda,  # noqa: F401 - re-exported for the checks
)
from autograder.text import one_line
from autograder.tokens import pass_token  # noqa: F401 - re-exported


class CheckFailed(AssertionError):
    """A check's verdict: one line saying what was expected and what was seen."""


class CheckUngradable(Exception):
    """The check cannot decide here (e.g. real model weights unavailable); a person must grade it."""


# Pristine references, captured when this package is first imported. The grading kernel imports it
# before any student code runs, so monkey-patching torch/numpy/builtins in a notebook does not
# change what the checks compute with.
pristine = types.SimpleNamespace(
    allclose=torch.allclose,
    equal=torch.equal,
    isclose=torch.isclose,
    isfinite=torch.isfinite,
    softmax=torch.softmax,
    matmul=torch.matmul,
    zeros=torch.zeros,
    randn=torch.randn,
    manual_seed=torch.manual_seed,
    Tensor=torch.Tensor,
    Module=torch.nn.Module,
    cross_entropy=F.cross_entropy,
    normalize=F.normalize,
    np_allclose=np.allclose,
    np_asarray=np.asarray,
    isinstance=builtins.isinstance,
    type=builtins.type,
    print=builtins.print,
    abs=builtins.abs,
    len=builtins.len,
    float=builtins.float,
    tensor_max=torch.Tensor.max,
    tensor_abs=torch.Tensor.abs,
    tensor_item=torch.Tensor.item,
    tensor_to=torch.Tensor.to,
    tensor_float=torch.Tensor.float,
    tensor_detach=torch.Tensor.detach,
    stdout_write=sys.stdout.write if hasattr(sys.stdout, "write") else None,
)

registry = {}  # grade_id -> check function, filled by @check until seal() (genuine checks only)


def _runtime(
    key,
    token=tokens.pass_token,
    passed_line=tokens.passed_line,
    ungradable_line=tokens.ungradable_line,
    ungradable_label=tokens.ungradable_label,
    registry=registry,
):
    """The signer's state (key, seal) lives in this closure, not in module attributes a notebook can read; so do
    the token and pass-line functions and the registry, captured at import (rebinding a module attribute later
    reaches none of them)."""
    state = {"key": key, "sealed": False}

    def set_key(value):
        """Give the kernel its per-run key (bytes) once, when it was not set at import."""
        if state["key"]:
            raise RuntimeError("the check key is already set")
        state["key"] = value

    def seal():
        """From now on, checks defined with @check print no tokens (only the genuine ones, defined before, do)
        and are not recorded in the registry."""
        state["sealed"] = True

    def signer():
        """Pass-line functions for a check being defined now: passed(grade_id) and ungradable(grade_id, reason),
        whose lines carry no token after seal() or without a key."""
        sealed = state["sealed"]

        def sign(label):
            return None if sealed or not state["key"] else token(label, state["key"])

        return (
            lambda grade_id: passed_line(grade_id, sign(grade_id)),
            lambda grade_id, reason: ungradable_line(grade_id, reason, sign(ungradable_label(grade_id))),
        )

    def register(grade_id, fn):
        """Record check `fn` under `grade_id` (the latest definition wins), unless the runtime is sealed."""
        if not state["sealed"]:
            registry[grade_id] = fn

    return set_key, seal, signer, register


set_key, seal, _signer, _register = _runtime(os.environ.pop(envvars.CHECK_KEY, "").encode())
del _runtime


def is_tensor(x) -> bool:
    """True only for a real torch.Tensor (subclasses with a rigged __eq__ included are fine to inspect)."""
    return pristine.isinstance(x, pristine.Tensor)


def fmt_shape(x) -> tuple | str:
    """Shape of a tensor as a tuple, or the type name of anything else."""
    if is_tensor(x):
        return tuple(x.shape)
    return pristine.type(x).__name__


def expect(condition, message) -> None:
    """Raise CheckFailed(message) unless condition is exactly True."""
    if condition is not True:
        raise CheckFailed(message)


def expect_tensor(x, name, shape=None) -> None:
    """x must be a real tensor (of `shape` when given)."""
    if not is_tensor(x):
        raise CheckFailed(f"{name} should be a torch.Tensor, got {pristine.type(x).__name__}")
    if shape is not None and tuple(x.shape) != tuple(shape):
        raise CheckFailed(f"{name} should have shape {tuple(shape)}, got {tuple(x.shape)}")


def expect_device(got, want, name) -> None:
    """Tensor `got` must sit on device `want`, compared by meaning ('cuda' is 'cuda:0')."""
    if not same_device(got.device, want):
        raise CheckFailed(f"{name} should be on the inputs' device {shown(want)}, but it is on {shown(got.device)}")


UNDECIDED = object()  # what run_on_gpu returns when the stand-in GPU cannot run the code


def run_on_gpu(what, fn, *args, **kwargs) -> object:
    """
    Call fn(*args, **kwargs) as if its tensor inputs were on a GPU (the stand-in meta device).

    Returns fn's result, or UNDECIDED when the stand-in cannot run the code (the CPU run judges it).
    Raises CheckFailed when the code mixes devices, as it would on a real GPU.
    """
    try:
        return on_fake_cuda(fn, *args, **kwargs)
    except MixedDevices as e:
        raise CheckFailed(
            f"{what} on a GPU should run without errors, but it mixes devices ({e}); create "
            f"new tensors on the inputs' device, e.g. device=x.device"
        ) from None
    except Undecided:
        return UNDECIDED


def cpu64(x) -> torch.Tensor:
    """A detached float64 copy of tensor x on the CPU: checks compare values in it on every machine."""
    return pristine.tensor_to(pristine.tensor_detach(x), "cpu", torch.float64)


def tensors_close(a, b, rtol=1e-4, atol=1e-5) -> bool:
    """True when tensors a and b have equal shapes and close values (compared by cpu64)."""
    return tuple(a.shape) == tuple(b.shape) and pristine.allclose(
        cpu64(a), cpu64(b), rtol=rtol, atol=atol, equal_nan=False
    )


def max_abs_diff(a, b) -> float:
    """Largest absolute difference between two tensors, as a Python float (computed on CPU, float64)."""
    a, b = cpu64(a), cpu64(b)
    return pristine.float(pristine.tensor_item(pristine.tensor_max(pristine.tensor_abs(a - b))))


def expect_close(got, want, name, atol=1e-5, rtol=1e-4, hint="") -> None:
    """got must be a tensor with want's shape and values (within tolerance)."""
    expect_tensor(got, name, tuple(want.shape))
    g, w = cpu64(got), cpu64(want)
    if not pristine.allclose(g, w, rtol=rtol, atol=atol, equal_nan=False):
        diff = max_abs_diff(g, w)
        msg = f"{name} has the right shape {tuple(want.shape)} but wrong values (max abs difference {diff:.3g})"
        raise CheckFailed(msg + (f"; {hint}" if hint else ""))


def _as_text(value, digits) -> str:
    """A number, or a (nested) list or tuple of numbers, with `digits` significant digits."""
    if pristine.isinstance(value, (list, tuple)):
        return "[" + ", ".join(_as_text(v, digits) for v in value) + "]"
    try:
        return f"{pristine.float(value):.{digits}g}"
    except (TypeError, ValueError):
        return repr(value)


def digits_to_differ(want, got, digits=4) -> int:
    """The fewest significant digits, at least `digits`, with which `want` and `got` (numbers, or lists of numbers)
    read differently; `digits` when they are equal."""
    for more in range(digits, 18):  # 17 significant digits tell any two floats apart
        if _as_text(want, more) != _as_text(got, more):
            return more
    return digits


def differing(want, got, digits=4) -> tuple[str, str]:
    """`want` and `got` (numbers, or lists of numbers) as text with `digits` significant digits, or with as many
    more as it takes for two different values to read differently ("expected 0.3, got 0.30004", never "expected
    0.3, got 0.3"). Equal values keep `digits`."""
    more = digits_to_differ(want, got, digits)
    return _as_text(want, more), _as_text(got, more)


def _autograder_parts(obj):
    """Names of the autograder modules that `obj` (a function or class) or anything it inherits comes from."""
    found = set()
    for klass in getattr(obj, "__mro__", None) or (obj,):
        for part in (klass, *vars(klass).values()) if isinstance(klass, type) else (klass,):
            module = getattr(part, "__module__", None) or ""
            if module.split(".")[0] == "autograder":
                found.add(module)
    return found


def require_notebook_defined(obj, name) -> None:
    """A graded object must be defined in the notebook itself, not imported, subclassed or copied from us."""
    # test suites only; the grading kernel never receives it. A literal: notebook code could rebind envvars' names
    if os.environ.get("A3_ALLOW_NON_NOTEBOOK"):
        return
    module = getattr(obj, "__module__", None)
    if module != "__main__":
        raise CheckFailed(f"{name} must be defined in this notebook (it comes from module {module!r})")
    borrowed = _autograder_parts(obj)
    if borrowed:
        raise CheckFailed(f"{name} must be your own code, but it uses {sorted(borrowed)[0]} from the grader")


@contextlib.contextmanager
def substituted(fn, **names) -> Iterator[None]:
    """Within the block, names that `fn` reads from its module (the notebook) are swapped for known-good ones.

    A graded function that calls another graded function of the notebook (e.g. zero_shot_probs calling
    similarity_matrix) is then checked on its own, so one mistake costs points in one cell only.
    A name the notebook lacks (its cell was left undone or raised) is lent for the block too. For a
    class, the namespace is that of the first of its own methods that has one.
    """
    namespace = getattr(fn, "__globals__", None)
    if namespace is None and pristine.isinstance(fn, type):
        methods = [m for m in vars(fn).values() if hasattr(m, "__globals__")]
        namespace = methods[0].__globals__ if methods else None
    if namespace is None:
        yield
        return
    saved = {name: namespace[name] for name in names if name in namespace}
    namespace.update(names)
    try:
        yield
    finally:
        for name in names:
            if name in saved:
                namespace[name] = saved[name]
            else:
                namespace.pop(name, None)


def check(grade_id) -> Callable[[Callable], Callable]:
    """Decorator: run a check quietly, turn any error into one line, print a pass line on success.

    Before seal(), the check is recorded in `registry` under `grade_id` (the latest definition wins)."""

    def decorate(fn):
        passed, ungradable = _signer()

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            captured = io.StringIO()
            threads = torch.get_num_threads()
            torch.set_num_threads(1)  # tiny tensors on a busy CPU are ~100x slower with a thread pool
            try:
                with warnings.catch_warnings(), contextlib.redirect_stderr(captured):
                    warnings.simplefilter("ignore")
                    with torch.random.fork_rng(devices=[]):
                        fn(*args, **kwargs)
            except CheckFailed as e:
                raise CheckFailed(f"{grade_id}: {e}") from None
            except CheckUngradable as e:
                # The grader turns this into "needs manual grading": no points awarded or removed silently.
                pristine.print(ungradable(grade_id, e))
                raise CheckFailed(f"{grade_id}: not graded automatically: {e}") from None
            except Exception as e:  # student code crashed inside the check
                raise CheckFailed(f"{grade_id}: your code raised {one_line(e, 300, more='...')}") from None
            finally:
                torch.set_num_threads(threads)
            pristine.print(passed(grade_id))

        wrapper.check_id = grade_id
        wrapper.unwrapped = fn
        _register(grade_id, wrapper)
        return wrapper

    return decorate


def seeded_generator(seed=0) -> torch.Generator:
    """A CPU torch.Generator with a fixed seed, so check inputs never depend on the student's RNG use."""
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def finite(x) -> bool:
    """True when every entry of tensor x is finite."""
    return pristine.tensor_item(pristine.isfinite(x).all()) is True


__all__ = [
    "CheckFailed",
    "CheckUngradable",
    "check",
    "expect",
    "expect_tensor",
    "expect_close",
    "differing",
    "digits_to_differ",
    "max_abs_diff",
    "require_notebook_defined",
    "seeded_generator",
    "substituted",
    "pristine",
    "pass_token",
    "is_tensor",
    "fmt_shape",
    "finite",
    "math",
    "expect_device",
    "same_device",
    "run_on_gpu",
    "to_fake_cuda",
    "FAKE_CUDA",
    "UNDECIDED",
    "cpu64",
    "tensors_close",
    "registry",
]
