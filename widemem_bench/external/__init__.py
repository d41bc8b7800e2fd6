"""External data: LoCoMo and widemem's own confidence fixture (read from ../shared/data).

Names are resolved lazily so that one loader's optional dependencies never break the other.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "FixtureChecksumError": "widemem_fixture",
    "fixture_calibration_table": "widemem_fixture",
    "fixture_negative_figures": "widemem_fixture",
    "fixture_recall_table": "widemem_fixture",
    "load_widemem_fixture": "widemem_fixture",
    "load_widemem_fixture_raw": "widemem_fixture",
    "LoCoMo": "locomo",
    "load_locomo": "locomo",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'widemem_bench.external' has no attribute {name!r}")
    return getattr(importlib.import_module(f"widemem_bench.external.{module}"), name)
