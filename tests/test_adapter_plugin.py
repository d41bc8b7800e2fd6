"""An adapter from outside the package: a separate distribution, built and installed here,
registers itself in the `widemem_bench.adapters` entry-point group, and
`widemem-bench peer adapter=<name>` drives it with no file of `widemem_bench/` edited."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TOY = '''
"""A toy memory: word-overlap (Jaccard) scores, no embedder."""


class ToyMemory:
    name = "toy"

    def __init__(self, embedder, *, boost: float = 0.0):
        self.boost = float(boost)
        self.facts: dict[str, list[str]] = {}

    def add_fact(self, text, user_id, at):
        self.facts.setdefault(user_id, []).append(text)

    def search(self, query, user_id, top_k):
        q = set(query.lower().split())
        scored = [(t, min(1.0, len(q & set(t.lower().split())) / max(1, len(q | set(t.lower().split())))
                       + self.boost)) for t in self.facts.get(user_id, [])]
        return sorted(scored, key=lambda p: -p[1])[:top_k]
'''

PYPROJECT = '''
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "toy-memory-adapter"
version = "0.1.0"

[project.entry-points."widemem_bench.adapters"]
toy = "toy_memory:ToyMemory"
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the toy distribution's wheel and install it into a folder of its own."""
    root = tmp_path_factory.mktemp("toy")
    pkg = root / "src"
    (pkg / "toy_memory").mkdir(parents=True)
    (pkg / "toy_memory" / "__init__.py").write_text(textwrap.dedent(TOY))
    (pkg / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT))
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(root / "dist"), str(pkg)],
                   check=True, capture_output=True, timeout=300)
    wheel = next((root / "dist").glob("toy_memory_adapter-*.whl"))
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(root / "site"), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    assert (root / "site" / "toy_memory_adapter-0.1.0.dist-info" / "entry_points.txt").exists()
    return root / "site"


def _peer(site: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "widemem_bench.cli", "peer", *args, "embedder=hash-test",
                           "params.adapter_users=40", f"paths.output_dir={out}"],
                          capture_output=True, text=True, env=env, timeout=600)


def test_an_installed_adapter_is_found_by_its_entry_point(site: Path, tmp_path: Path) -> None:
    proc = _peer(site, tmp_path / "out", "adapter=toy", "adapter.options.boost=0.01")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "toy (hash-test), validation users:" in proc.stdout
    assert "calibrated thresholds (train users)" in proc.stdout
    rec = json.loads(next((tmp_path / "out").rglob("record.json")).read_text())
    assert rec["extra"]["peer"]["adapter"] == {"name": "toy", "options": {"boost": 0.01}}
    hit1 = [m for m in rec["metrics"] if m["metric"] == "hit@1"]
    assert hit1 and 0 < hit1[0]["value"] <= 1


def test_a_factory_path_and_the_bad_ones(site: Path, tmp_path: Path) -> None:
    ok = _peer(site, tmp_path / "a", "adapter.factory=toy_memory:ToyMemory")
    assert ok.returncode == 0, ok.stderr[-2000:]
    for args, msg in [(("adapter=nosuch",), "adapter.name: unknown adapter 'nosuch' (known: engine, widemem, mem0, toy"),
                      (("adapter.factory=toy_memory:Nope",), "adapter.factory: cannot import 'toy_memory:Nope'"),
                      (("adapter=toy", "adapter.options.colour=red"), "adapter.options: unknown option(s) ['colour']")]:
        out = tmp_path / "bad"
        bad = _peer(site, out, *args)
        assert bad.returncode == 2
        last = bad.stderr.strip().splitlines()[-1]
        assert last.startswith(f"error: {msg}"), last
        assert not out.exists()
