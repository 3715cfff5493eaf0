"""Markdown rendering for every benchmark: tables and the results page around them.

Scripts measure and return data (dicts and lists of numbers); this module turns data into
the Markdown recorded under results/, so that tests assert on the data and one place
decides how a table and a record look.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterable, Sequence

from benchmarks.machine import describe_machine


def table(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    numeric: Sequence[bool] = (),
    *,
    tight_empty: bool = False,
) -> list[str]:
    """A Markdown table as lines: the header, the rule (right-aligned where ``numeric``), the rows.

    ``tight_empty`` writes empty cells as ``| |`` (see `row_line`).

    >>> print("\\n".join(table(["agent", "score"], [["rule", 71.8]], numeric=[False, True])))
    | agent | score |
    |---|---:|
    | rule | 71.8 |
    >>> table(["run", "steps", "p50 ms"], [[1, 0, ""]], tight_empty=True)[-1]
    '| 1 | 0 | |'
    """
    rule = ["---:" if numeric and numeric[i] else "---" for i in range(len(header))]
    lines = [row_line(header, tight_empty=tight_empty), "|" + "|".join(rule) + "|"]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a row of {len(row)} cells under {len(header)} columns: {row!r}")
        lines.append(row_line(row, tight_empty=tight_empty))
    return lines


def row_line(cells: Sequence[object], *, tight_empty: bool = False) -> str:
    """One table row; an empty cell stays empty, padded like the others (``|  |``) or, with
    ``tight_empty``, written ``| |`` as some recorded tables write it (both render alike).

    >>> row_line(["a", "", 3])
    '| a |  | 3 |'
    >>> row_line(["a", "", 3, ""], tight_empty=True)
    '| a | | 3 | |'
    """
    texts = [str(cell) for cell in cells]
    if not tight_empty:
        return "| " + " | ".join(texts) + " |"
    return "|" + "|".join(f" {text} " if text else " " for text in texts) + "|"


def markdown_record(title: str, lines: Sequence[str], module: str, argv: Sequence[str] | None) -> str:
    """A results page: the title, the lines, then the command that made it and the machine.

    >>> print(markdown_record("# T", ["| a |"], "benchmarks.x", ["--n", "2"]).splitlines()[4:7])
    ['```bash', 'python -m benchmarks.x --n 2', '```']
    """
    command = f"python -m {module} " + shlex.join(sys.argv[1:] if argv is None else list(argv))
    footer = [f"```bash\n{command}\n```", f"machine: {describe_machine()}", ""]
    return "\n".join([title, "", *lines, "", *footer])
