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
