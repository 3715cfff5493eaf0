"""One line that says what machine a benchmark ran on (printed and recorded with every result)."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def describe_machine() -> str:
    """CPU model, cores this process may use, memory, Python and OS.

    >>> "Python" in describe_machine()
    True
    """
    cpu = platform.processor() or platform.machine()
    memory = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f", {int(line.split()[1]) / 2**20:.0f} GiB RAM"
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cpu}, {cores} cores{memory}, Python {platform.python_version()}, {platform.system()}"


if __name__ == "__main__":
    print(describe_machine())
