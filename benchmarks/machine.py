"""One line that says what machine a benchmark ran on (printed and recorded with every result)."""

from __future__ import annotations

import os
import platform
import shlex
import sys
from collections.abc import Sequence
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


def markdown_record(title: str, lines: Sequence[str], module: str, argv: Sequence[str] | None) -> str:
    """A results page: the title, the lines, then the command that made it and the machine.

    >>> print(markdown_record("# T", ["| a |"], "benchmarks.x", ["--n", "2"]).splitlines()[4:7])
    ['```bash', 'python -m benchmarks.x --n 2', '```']
    """
    command = f"python -m {module} " + shlex.join(sys.argv[1:] if argv is None else list(argv))
    footer = [f"```bash\n{command}\n```", f"machine: {describe_machine()}", ""]
    return "\n".join([title, "", *lines, "", *footer])


if __name__ == "__main__":
    print(describe_machine())
