"""How a run uses the CPU: torch's threads, and glibc's malloc kept from unmapping big tensors.

glibc serves an allocation above its mmap threshold (at most 32 MB) with a fresh ``mmap`` and
unmaps it on ``free``, so the next tensor of that size touches new pages and every page faults.
Batched rollouts allocate such tensors at every forward (the activations of 256 padded prompts),
and on two cores the kernel's fault handling was 40% of Stage 1's CPU time: 512 episodes of the
`cpu-demo` preset at 256 envs faulted 17.7 M times and cost 0.26 CPU s each on one thread. With
big tensors served from the heap (``M_MMAP_MAX`` 0) and the heap not trimmed back
(``M_TRIM_THRESHOLD``), the same episodes faulted 0.39 M times and cost 0.15 CPU s each, with the
same samples; a Stage 2 update of 32 episodes took 1.9 s instead of 2.3 s. The price: the
process keeps the memory of its peak (RSS does not fall after it), which a training run holds
again at its next step anyway.
"""

from __future__ import annotations

import ctypes
import sys

import torch

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_MAX = -4
_KEEP_TRIM = 2**31 - 1  # the largest value mallopt takes: never trim the heap


def keep_freed_memory() -> bool:
    """Makes glibc's malloc keep freed memory mapped (see the module docstring), process-wide.

    Returns whether it applied: only on Linux with glibc (elsewhere it does nothing).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # another C library (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, _KEEP_TRIM))


def configure_cpu(torch_threads: int | None, device: torch.device) -> None:
    """What every stage of a run sets first: torch's threads (None: torch's default) and, when
    the model runs on the CPU, `keep_freed_memory`."""
    if torch_threads:
        torch.set_num_threads(torch_threads)
    if device.type == "cpu":
        keep_freed_memory()
