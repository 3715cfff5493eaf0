"""The README's quickstart runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_quickstart_runs(capsys):
    code = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S).group(1)
    exec(compile(code, str(README), "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("i am looking for")
    assert printed[1] == "['click[back to search]', 'click[next >]', 'click[b02oaq5su8]']"
    assert printed[2] == "0.6666666666666666 False 1.0"
