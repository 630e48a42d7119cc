"""Device semantics of the check runtime (autograder/checks/devices.py), tested without a GPU."""

import numpy as np
import pytest
import torch

from autograder.checks import UNDECIDED, CheckFailed, expect_device, run_on_gpu
from autograder.checks.devices import FAKE_CUDA, MixedDevices, Undecided, on_fake_cuda, same_device, to_fake_cuda


@pytest.mark.parametrize(
    "a, b",
    [
        (torch.device("cuda"), torch.device("cuda", 0)),
        ("cuda", "cuda:0"),
        (torch.device("cpu"), torch.device("cpu", 0)),
        ("cpu", torch.device("cpu")),
        ("meta", FAKE_CUDA),
    ],
)
def test_same_place_is_the_same_device(a, b):
    """Are 'cuda' and 'cuda:0' (and 'cpu' and 'cpu:0') the same device?"""
    assert same_device(a, b) and same_device(b, a)


@pytest.mark.parametrize(
    "a, b",
    [
        ("cpu", "cuda"),
        (torch.device("cuda", 0), torch.device("cuda", 1)),
        ("cpu", "meta"),
    ],
)
def test_different_places_are_different_devices(a, b):
    """Are the CPU, another GPU and the stand-in GPU told apart?"""
    assert not same_device(a, b) and not same_device(b, a)


def test_expect_device_names_the_stand_in_as_cuda():
    """Does a placement failure speak of 'cuda', never of the meta device the student never used?"""
    with pytest.raises(CheckFailed, match=r"^result should be on the inputs' device cuda, but it is on cpu$"):
        expect_device(torch.zeros(2), FAKE_CUDA, "result")


def test_expect_device_accepts_the_same_device():
    """Does a tensor on the expected device pass?"""
    expect_device(torch.zeros(2), torch.device("cpu", 0), "result")
    expect_device(torch.zeros(2, device="meta"), FAKE_CUDA, "result")


def test_mixing_cpu_and_gpu_tensors_fails():
    """Does concatenating a new CPU tensor with inputs on the stand-in GPU fail, as on CUDA?"""
    (x,) = to_fake_cuda(torch.zeros(3, 2))
    with pytest.raises(MixedDevices):
        on_fake_cuda(lambda: torch.cat([torch.zeros(3, 1), x], 1))


@pytest.mark.parametrize(
    "make",
    [
        lambda x: torch.zeros(3, 1, device=x.device),
        lambda x: torch.zeros(3, 1).cuda(),
        lambda x: torch.zeros(3, 1).to("cuda"),
        lambda x: torch.zeros(3, 1, device="cuda"),
        lambda x: torch.zeros(3, 1, device=torch.device("cuda", 0)),
        lambda x: torch.zeros(3, 1, device="cuda" if x.is_cuda else "cpu"),
    ],
    ids=["device=x.device", ".cuda()", ".to('cuda')", "device='cuda'", "device=cuda:0", "x.is_cuda"],
)
def test_every_correct_way_to_reach_the_gpu_works(make):
    """Does every usual way of creating a tensor on the inputs' GPU land on the stand-in GPU?"""
    (x,) = to_fake_cuda(torch.zeros(3, 2))
    out = on_fake_cuda(lambda: torch.cat([make(x), x], 1))
    assert out.device == FAKE_CUDA


def test_numpy_of_a_gpu_tensor_fails_like_cuda():
    """Does .numpy() on a tensor on the stand-in GPU fail, as it does on CUDA?"""
    (x,) = to_fake_cuda(torch.zeros(3))
    with pytest.raises(MixedDevices, match="numpy"):
        on_fake_cuda(lambda: x.numpy())


def test_copies_to_the_host_work_like_cuda():
    """Do .cpu(), .item(), .tolist() and writing a GPU value into a CPU tensor work, as they do on CUDA?"""
    (x,) = to_fake_cuda(torch.ones(3))

    def host_side():
        out = torch.zeros(3)
        out[0] = x.sum()
        return x.cpu().numpy(), x.sum().item(), x.tolist(), out

    array, number, values, out = on_fake_cuda(host_side)
    assert isinstance(array, np.ndarray) and array.shape == (3,)
    assert isinstance(number, float) and len(values) == 3 and out.device.type == "cpu"


def test_code_the_stand_in_cannot_run_is_undecided():
    """Is code the meta device cannot run (reading values) left to the CPU run instead of failed?"""
    (x,) = to_fake_cuda(torch.ones(3))
    with pytest.raises(Undecided):
        on_fake_cuda(lambda: bool(x.sum() > 0))
    assert run_on_gpu("reading a value", lambda: bool(x.sum() > 0)) is UNDECIDED


def test_run_on_gpu_turns_a_device_mix_into_a_one_line_failure():
    """Does a device mix become one CheckFailed line that says what to do?"""
    (x,) = to_fake_cuda(torch.zeros(3, 2))
    with pytest.raises(CheckFailed) as info:
        run_on_gpu("f(x)", lambda: torch.cat([torch.zeros(3, 1), x], 1))
    message = str(info.value)
    assert message.startswith("f(x) on a GPU should run without errors, but it mixes devices")
    assert "device=x.device" in message and "\n" not in message and "meta" not in message


def test_the_mode_ends_with_the_call():
    """Is the stand-in switched off after the call (a meta tensor cannot be copied to the CPU again)?"""
    on_fake_cuda(lambda: torch.zeros(1, device="cuda"))
    x = torch.zeros(1, device="meta")
    with pytest.raises(NotImplementedError):
        x.cpu()
