"""The README's engine example runs as written (real MiniLM, a real SQLite store)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _example() -> str:
    text = README.read_text()
    section = text.split("## Using the engine from Python", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README: the engine example's python block is missing"
    return match.group(1)


def test_readme_engine_example_runs_and_undoes_its_update():
    code = _example()
    out = io.StringIO()
    scope: dict = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), scope)  # our own README
    res = scope["res"]
    assert [m.content for m in res.superseded] == ["i rent a flat in leeds city centre"]
    assert scope["hits"][0].memory.content == "we moved down to bristol last weekend"
    printed = out.getvalue()
    assert "datetime.datetime(2026, 1, 20" in printed  # the old version's valid_to
    assert "['i rent a flat in leeds city centre', 'we moved down to bristol last weekend']" in printed
