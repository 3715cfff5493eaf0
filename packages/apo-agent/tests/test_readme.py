"""The README's Python example runs as written (a whole pipeline with a very small model)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_runs(tmp_path, monkeypatch):
    code = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S).group(1)
    code = code.replace("/tmp/apo-readme", str(tmp_path / "apo-readme"))
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)
    results = namespace["results"]
    assert results["test"]["reference"]["goals"] == results["test"]["trained"]["goals"] == 8
    assert Path(results["learning_curve"]).is_file()
    assert (tmp_path / "apo-readme" / "final-model" / "config.json").is_file()
