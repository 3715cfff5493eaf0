"""What machine a benchmark ran on (one line, printed and recorded with every result), and the
memory a process holds (the one place the benchmarks read RSS from)."""

from __future__ import annotations

import os
import platform
import resource
from pathlib import Path

MB = 2**20


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


def process_memory(pid: int | str = "self") -> dict[str, float]:
    """RSS, anonymous RSS, PSS and private memory of a process in MB (``/proc/<pid>/smaps_rollup``).

    >>> sorted(process_memory())
    ['anonymous', 'private', 'pss', 'rss']
    """
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Rss", "Pss", "Anonymous", "Private_Clean", "Private_Dirty"):
            fields[key] = int(value.split()[0]) * 1024 / MB
    return {
        "rss": fields["Rss"],
        "anonymous": fields["Anonymous"],
        "pss": fields["Pss"],
        "private": fields["Private_Clean"] + fields["Private_Dirty"],
    }


STATUS_FIELDS = ("VmRSS", "VmHWM", "RssAnon", "RssFile")


def process_status(pid: int | str = "self") -> dict[str, float]:
    """The kernel's memory counters of a process in MB, by their names in ``/proc/<pid>/status``:
    VmRSS (resident now), VmHWM (the most it has been), RssAnon and RssFile (its anonymous and
    file-backed parts). Cheaper than `process_memory`, which walks every mapping.

    >>> figures = process_status()
    >>> sorted(figures) == sorted(STATUS_FIELDS) and figures["VmHWM"] >= figures["VmRSS"] > 0
    True
    """
    figures = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in STATUS_FIELDS:
            figures[key] = int(value.split()[0]) * 1024 / MB
    return figures


def peak_rss_mb() -> float:
    """The most memory this process has held so far (``ru_maxrss``, KiB on Linux), in MB.

    >>> peak_rss_mb() > 0
    True
    """
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MB


if __name__ == "__main__":
    print(describe_machine())
