"""`apo_agent.runtime.cpu`: big tensors freed and allocated again stop page-faulting."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Allocates and frees a 256 MB tensor (above glibc's largest mmap threshold) round after round
# and prints each round's minor page faults, before and after keep_freed_memory (after it, the
# heap grows in the first two rounds, which are not counted; twelve rounds are).
SCRIPT = """
import json, resource, torch
from apo_agent.runtime.cpu import keep_freed_memory

def faults_per_round(rounds):
    counts = []
    for _ in range(rounds):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        torch.ones(64 * 2**20)
        counts.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return counts

default = faults_per_round(6)
applied = keep_freed_memory()
print(json.dumps([default, applied, faults_per_round(14)[2:]]))
"""
PAGES = 256 * 2**20 // 4096  # one round's tensor


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc: Linux only")
def test_keep_freed_memory_stops_reallocated_tensors_from_faulting():
    output = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    default, applied, kept = json.loads(output.stdout)
    assert applied is True
    # Glibc unmaps each freed tensor, so every round faults its pages in again.
    assert all(count > PAGES / 2 for count in default), default
    # Kept in the heap, the pages stay mapped. (A round may still fault where the kernel
    # reclaimed the idle pages in between, e.g. DAMON's proactive reclaim, which acts more
    # often when memory is short: three rounds in a row did beside two training runs. Most
    # rounds do not.)
    assert sum(count < PAGES / 50 for count in kept) >= 6, kept
