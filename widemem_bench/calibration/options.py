"""What one calibration run certifies: targets, caps, delta, method, presets per embedder.

`Options` is built from the `calibrate` experiment's ``params`` node (`from_params`),
which names every bad key in one line before anything runs; `resolved` gives the
settings in force for one embedder (its preset under the keys given explicitly).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from widemem_bench.calibration.certify import DEFAULT_LADDER_TARGETS, DEFAULT_NONE_ANSWERABLE

DEFAULT_EMBEDDERS = ("minilm-l6", "minilm-l6-int8", "minilm-l3", "bge-small", "tfidf")
CONFIDENCE_KINDS = ("answerable", "never_mentioned", "hard_negative", "other_person")
NEGATIVE_KINDS = CONFIDENCE_KINDS[1:]
DEFAULT_CAP = {"hard_negative": 0.10}
# Settings an embedder needs to get a reachable ladder, applied unless given explicitly
# and recorded in its file. tfidf: the lexical cosine is exactly 0 for every question
# sharing no word with the stored facts (46 % of answerable train questions), so no LOW
# above 0 keeps answerable NONE under 5 %; and no cosine band reaches 0.95 precision on
# enough users.
EMBEDDER_PRESETS: dict[str, dict[str, Any]] = {
    "tfidf": {"none_answerable": 0.5, "targets": {"high": 0.85}},
}
_OFF = ("none", "null", "off")


@dataclass
class Options:
    """What one calibration run uses (the experiment's ``params``)."""

    data: Path | None = None
    name: str | None = None
    model_id: str = ""
    dataset: str = "timelines"
    targets: dict[str, float] = dataclasses.field(default_factory=dict)
    none_answerable: float | str | None = None   # None: 0.05 or the preset; "none": no NONE statement
    low_cap: dict[str, float] = dataclasses.field(default_factory=dict)
    delta: float = 0.1
    method: str = "cluster"
    cap: dict[str, float] | None = None       # None: the default (hard negatives <= 10 % when present)
    n_boot: int = 1000
    seed: int = 0
    write_package_files: bool = False
    holdout: bool = False       # read the sealed holdout (its figures in the file; a ledger line unless measuring)

    def resolved(self, embedder: str | None = None) -> dict[str, Any]:
        """Targets, none_answerable and caps in force (presets for ``embedder`` under explicit keys)."""
        preset = EMBEDDER_PRESETS.get(embedder or "", {})
        targets = {**DEFAULT_LADDER_TARGETS, **preset.get("targets", {}), **self.targets}
        none = self.none_answerable if self.none_answerable is not None else preset.get(
            "none_answerable", DEFAULT_NONE_ANSWERABLE)
        cap = dict(DEFAULT_CAP) if self.cap is None else dict(self.cap)
        return {"targets": targets, "none_answerable": None if none == "none" else float(none), "cap": cap,
                "low_cap": dict(self.low_cap), "delta": self.delta, "method": self.method, "preset": preset}

    def record(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The ``options`` block of a calibration file: the settings in force and the seed."""
        return {"targets": dict(settings["targets"]), "none_answerable": settings["none_answerable"],
                "caps": dict(settings["cap"]), "low_caps": dict(settings["low_cap"]), "delta": self.delta,
                "method": self.method, "preset": dict(settings.get("preset") or {}), "seed": self.seed}


def _float(key: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"params.{key}: expected a number, got {value!r}") from None


def _kind_rates(key: str, node: Any, what: str) -> dict[str, float] | None:
    """{kind: rate} of a caps node; None for the string "default"; kinds checked."""
    if node is None or (isinstance(node, str) and node.lower() in _OFF):
        return {}
    if node == "default":
        return None
    if not isinstance(node, Mapping):
        raise ValueError(f"params.{key}: expected {{kind: rate}}, 'default' or none, got {node!r}")
    out: dict[str, float] = {}
    for kind, rate in node.items():
        if kind == "answerable" or not kind:
            raise ValueError(f"params.{key}.{kind}: unknown kind {kind!r}; {what} name an unanswerable kind, "
                             f"e.g. {'never_mentioned' if key == 'low_cap' else 'hard_negative'}")
        if rate is not None and not (isinstance(rate, str) and rate.lower() in _OFF):
            out[str(kind)] = _float(f"{key}.{kind}", rate)
    return out


def _targets(node: Any) -> dict[str, float]:
    if node is None:
        return {}
    if not isinstance(node, Mapping):
        raise ValueError(f"params.targets: expected {{high: p, moderate: p}}, got {node!r}")
    out: dict[str, float] = {}
    for band, value in node.items():
        if band == "low":
            raise ValueError("params.targets.low: LOW is no longer a precision target; set "
                             "params.none_answerable (the share of answerable questions allowed to read NONE)")
        if band not in ("high", "moderate"):
            raise ValueError(f"params.targets.{band}: unknown band {band!r}; expected high, moderate")
        if value is not None:
            out[str(band)] = _float(f"targets.{band}", value)
    return out


def from_params(p: Mapping[str, Any], *, seed: int = 0, dataset: str = "timelines") -> Options:
    """`Options` from the experiment's ``params`` node; a bad value names its key."""
    none = p.get("none_answerable")
    if isinstance(none, str) and none.lower() in _OFF:
        none = "none"
    elif none is not None:
        none = _float("none_answerable", none)
    method = str(p.get("method", "cluster"))
    if method not in ("cluster", "binomial"):
        raise ValueError(f"params.method: expected cluster or binomial, got {method!r}")
    data = p.get("data")
    opts = Options(data=Path(str(data)) if data else None, name=p.get("name") or None,
                   model_id=str(p.get("model_id") or ""), dataset=dataset, targets=_targets(p.get("targets")),
                   none_answerable=none, low_cap=_kind_rates("low_cap", p.get("low_cap"), "low caps") or {},
                   delta=_float("delta", p.get("delta", 0.1)), method=method,
                   cap=_kind_rates("cap", p.get("cap", "default"), "caps"),
                   n_boot=int(_float("n_boot", p.get("n_boot", 1000))), seed=seed,
                   write_package_files=bool(p.get("write_package_files", False)),
                   holdout=bool(p.get("holdout", False)))
    if opts.data is not None and opts.write_package_files:
        raise ValueError("params.write_package_files: for embedder runs; a params.data calibration is "
                         "written under outputs/ only")
    if opts.write_package_files and not opts.holdout:
        raise ValueError("params.write_package_files: the committed files carry holdout figures; "
                         "pass params.holdout=true as well (make calibrate does)")
    return opts
