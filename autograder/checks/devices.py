"""Device semantics for the checks: devices compared by meaning, and a stand-in GPU on every machine.

A grading machine usually has no GPU, yet a student who creates a tensor on the CPU while the inputs
live on CUDA must lose the point there too, and a correct answer must pass on a machine with a GPU
exactly as it passes without one. So the checks never use a real GPU. They run the placement part of
a check on PyTorch's ``meta`` device, which every build has, inside :class:`FakeCuda`: a torch function
mode under which ``"cuda"`` means ``meta`` (``.cuda()``, ``.to("cuda")``, ``device="cuda"``,
``is_cuda``), and a meta tensor behaves like a CUDA tensor where CUDA differs from the CPU (mixing it
with CPU tensors fails, ``.numpy()`` refuses, ``.cpu()`` and ``.item()`` work).
"""

import re

import torch
from torch.overrides import TorchFunctionMode

FAKE_CUDA = torch.device("meta")

# What PyTorch says when an operation mixes devices (CUDA and meta kernels alike).
_MIXED = re.compile(
    r"same device|expected device|is not on the expected device|found at least two devices"
    r"|device type|should be the same|on different devices",
    re.I,
)


def canonical(device) -> tuple[str, int]:
    """(type, index) of a device, the index filled in: 'cuda' is the current CUDA device, 'cpu' is cpu:0."""
    device = torch.device(device)
    index = device.index
    if index is None:
        index = torch.cuda.current_device() if device.type == "cuda" and torch.cuda.is_available() else 0
    return device.type, index


def same_device(a, b) -> bool:
    """True when devices a and b (torch.device or str) are the same place: 'cuda' equals 'cuda:0'."""
    return canonical(a) == canonical(b)


def shown(device) -> str:
    """A device as a student thinks of it: the stand-in meta device is shown as 'cuda'."""
    device = torch.device(device)
    return "cuda" if device.type == FAKE_CUDA.type else str(device)


def _is_cuda(value):
    try:
        return isinstance(value, (str, torch.device)) and torch.device(value).type == "cuda"
    except (RuntimeError, ValueError):
        return False


def _is_fake(value):
    return isinstance(value, torch.Tensor) and value.device.type == FAKE_CUDA.type


def _host_copy(tensor):
    """A CPU tensor of a meta tensor's shape and dtype: the place is right, the values are unknown (zeros)."""
    return torch.zeros(tensor.shape, dtype=tensor.dtype)


def _fake(value):
    return FAKE_CUDA if _is_cuda(value) else value


class MixedDevices(RuntimeError):
    """Raised by stand-ins when their inputs sit on different devices, as a CUDA kernel would."""


class FakeCuda(TorchFunctionMode):
    """Within this mode 'cuda' means the meta device, and meta tensors behave like CUDA tensors."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if "device" in kwargs:
            kwargs["device"] = _fake(kwargs["device"])
        owner = getattr(func, "__self__", None)
        on_fake = bool(args) and _is_fake(args[0])
        if owner is torch.Tensor.is_cuda:
            return on_fake or func(*args, **kwargs)
        if func is torch.Tensor.cuda:
            return args[0].to(FAKE_CUDA)
        if func is torch.Tensor.to:
            args = tuple(_fake(a) for a in args)
            target = next(
                (torch.device(a) for a in args[1:] if isinstance(a, (str, torch.device))), kwargs.get("device")
            )
            if on_fake and target is not None and torch.device(target).type == "cpu":
                return _host_copy(args[0])
        if func is torch.Tensor.__setitem__ and not on_fake and _is_fake(args[2]):
            args = (args[0], args[1], _host_copy(args[2]))  # a GPU value written into a CPU tensor
        if func is torch.Tensor.copy_ and not on_fake and _is_fake(args[1]):
            args = (args[0], _host_copy(args[1]), *args[2:])
        if on_fake and func is torch.Tensor.cpu:
            return _host_copy(args[0])
        if on_fake and func in (torch.Tensor.numpy, torch.Tensor.__array__):
            raise TypeError(
                "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                "tensor to host memory first."
            )
        if on_fake and func is torch.Tensor.item:
            return 0.0 if args[0].dtype.is_floating_point else 0
        if on_fake and func is torch.Tensor.tolist:
            return _host_copy(args[0]).tolist()
        return func(*args, **kwargs)


class Undecided(Exception):
    """The stand-in GPU cannot run this code (an operation the meta device lacks): placement not judged."""


def on_fake_cuda(fn, *args, **kwargs) -> object:
    """
    Call fn(*args, **kwargs) with 'cuda' meaning the meta device.

    Returns fn's result. Raises MixedDevices when the code mixes devices (or converts a GPU tensor to
    NumPy), as it would on a real GPU, and Undecided when the meta device cannot run it at all.
    """
    try:
        with FakeCuda():
            return fn(*args, **kwargs)
    except MixedDevices:
        raise
    except TypeError as e:
        if "numpy" in str(e) and "cuda" in str(e):
            raise MixedDevices(str(e)) from None
        raise Undecided(str(e)) from None
    except Exception as e:  # noqa: BLE001 - everything else is for the CPU run to judge
        if is_mixed(e):
            raise MixedDevices(str(e).replace(FAKE_CUDA.type, "cuda")) from None
        raise Undecided(f"{type(e).__name__}: {e}") from None


def is_mixed(exc) -> bool:
    """True when exc is PyTorch's complaint about tensors on different devices."""
    return isinstance(exc, RuntimeError) and bool(_MIXED.search(str(exc)))


def to_fake_cuda(*tensors) -> tuple[torch.Tensor, ...]:
    """Meta copies (shape and dtype only) of tensors, as if moved to a GPU."""
    return tuple(torch.empty(t.shape, dtype=t.dtype, device=FAKE_CUDA) for t in tensors)
