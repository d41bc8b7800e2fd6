"""Per-embedder calibration files: schema, save, and load by embedder name.

One JSON file per embedder lives in ``widemem_bench/calibration/files/<name>.json``
inside the installed package, so ``EngineConfig(thresholds="calibrated")`` finds it
without any path. A file records what was fitted (thresholds, their precision
bounds, targets, delta), on what (embedder fingerprint, data set version and
sha256), how well it did (validation and holdout figures), and the
``WIDEMEM_CONFIDENCE_*`` lines that make widemem itself use the same thresholds.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import asdict, dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any

from widemem_bench.calibration.certify import Ladder, check_reachable
from widemem_bench.calibration.ltt import BANDS, ThresholdFit

SCHEMA_VERSION = 2
FILES_PACKAGE = "widemem_bench.calibration"
FILES_DIR = "files"
# Only params.write_package_files=true writes the committed file; a plain run writes under outputs/.
CREATE_COMMAND = "widemem-bench calibrate embedder={name} params.holdout=true params.write_package_files=true"
COPY_COMMAND = "widemem-bench calibrate embedder={name}, then copy outputs/calibrate/runs/embedder={name}/calibration.json there"
ENV_NAMES = {
    "high": "WIDEMEM_CONFIDENCE_HIGH",
    "moderate": "WIDEMEM_CONFIDENCE_MODERATE",
    "low": "WIDEMEM_CONFIDENCE_LOW",
}
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_BAND_KEYS = ("threshold", "target", "certified", "precision", "precision_lower_bound", "coverage", "recall", "n")


class CalibrationNotFoundError(FileNotFoundError, ValueError):
    """No calibration file for an embedder (a ValueError too, like every bad-input error here)."""


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("widemem_bench")
    except Exception:  # not installed (e.g. run from a bare checkout)
        return "unknown"


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _SAFE_NAME.match(name):
        raise ValueError(f"embedder name must be letters, digits, '.', '_' or '-', got {name!r}")
    return name


def env_lines(thresholds: tuple[float, float, float]) -> list[str]:
    """The environment lines that make widemem 2.0.2 use these (high, moderate, low) thresholds.

    Values are written in full (shortest round-trip repr): rounding to fewer places
    could move a threshold below the one that was certified.
    """
    return [f"{ENV_NAMES[b]}={float(t)!r}" for b, t in zip(BANDS, thresholds, strict=True)]


@dataclass
class CalibrationFile:
    """Calibration of one embedder.

    ``bands`` maps high / moderate / low to a dict with threshold, target, certified,
    precision, precision_lower_bound, coverage, recall and n on the train split.
    ``validation`` and ``holdout`` hold figures such as precision_moderate_plus,
    recall_moderate_plus and false_confidence_<kind>. ``answerability`` is the
    optional answerability-scorer section (model description and its own ``bands``
    of probability cut-offs, same layout).
    """

    embedder: str
    model_id: str
    fingerprint: str
    bands: dict[str, dict[str, Any]]
    delta: float
    method: str = "binomial"
    score: str = "top1_cosine"
    dataset: dict[str, Any] = field(default_factory=dict)
    validation: dict[str, Any] = field(default_factory=dict)
    holdout: dict[str, Any] = field(default_factory=dict)
    answerability: dict[str, Any] | None = None
    certificate: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    env: list[str] = field(default_factory=list)
    created: str = ""
    generator: str = ""
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        _check_name(self.embedder)
        missing = [b for b in BANDS if b not in self.bands]
        if missing:
            raise ValueError(f"bands is missing {missing}; expected high, moderate, low")
        for b in BANDS:
            absent = [k for k in _BAND_KEYS if k not in self.bands[b]]
            if absent:
                raise ValueError(f"bands.{b} is missing keys {absent}")
        h, m, lo = self.thresholds
        if not 0 <= lo <= m <= h <= 1:
            raise ValueError(f"bands thresholds must satisfy 0 <= low <= moderate <= high <= 1, got {(h, m, lo)}")
        # No file exports a triple with a band no score can reach (LOW = 0 disables NONE).
        check_reachable(self.thresholds, score_name=f"calibration of {self.embedder!r}")
        if self.answerability_thresholds is not None:
            check_reachable(self.answerability_thresholds, score_name=f"answerability cut-offs of {self.embedder!r}")
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta}")
        if not self.env:
            self.env = env_lines(self.thresholds)
        if not self.created:
            self.created = dt.datetime.now(dt.UTC).replace(tzinfo=None).isoformat(timespec="seconds")
        if not self.generator:
            self.generator = f"widemem_bench {_package_version()}"

    @property
    def thresholds(self) -> tuple[float, float, float]:
        """(high, moderate, low) similarity thresholds."""
        return (
            float(self.bands["high"]["threshold"]),
            float(self.bands["moderate"]["threshold"]),
            float(self.bands["low"]["threshold"]),
        )

    @property
    def answerability_thresholds(self) -> tuple[float, float, float] | None:
        """(high, moderate, low) probability cut-offs of the answerability scorer, if fitted."""
        if not self.answerability or "bands" not in self.answerability:
            return None
        bands = self.answerability["bands"]
        return (float(bands["high"]["threshold"]), float(bands["moderate"]["threshold"]), float(bands["low"]["threshold"]))

    @classmethod
    def from_fit(
        cls,
        fit: ThresholdFit,
        *,
        embedder: str,
        model_id: str,
        fingerprint: str,
        dataset: dict[str, Any] | None = None,
        validation: dict[str, Any] | None = None,
        holdout: dict[str, Any] | None = None,
        answerability: dict[str, Any] | None = None,
        score: str = "top1_cosine",
    ) -> CalibrationFile:
        return cls(
            embedder=embedder,
            model_id=model_id,
            fingerprint=fingerprint,
            bands=bands_from_fit(fit),
            delta=fit.delta,
            method=fit.method,
            score=score,
            dataset=dict(dataset or {}),
            validation=dict(validation or {}),
            holdout=dict(holdout or {}),
            answerability=answerability,
        )

    @classmethod
    def from_ladder(
        cls,
        ladder: Ladder,
        *,
        embedder: str,
        model_id: str,
        fingerprint: str,
        dataset: dict[str, Any] | None = None,
        validation: dict[str, Any] | None = None,
        holdout: dict[str, Any] | None = None,
        answerability: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
        intra_user_correlation: float | None = None,
        score: str = "top1_cosine",
    ) -> CalibrationFile:
        """A file from a certified ladder (`certify.certify_ladder`): bands, certificate, options."""
        cert = ladder.certificate()
        if intra_user_correlation is not None:
            cert["intra_user_correlation"] = float(intra_user_correlation)
        return cls(
            embedder=embedder,
            model_id=model_id,
            fingerprint=fingerprint,
            bands={b: dict(v) for b, v in ladder.bands.items()},
            delta=ladder.delta,
            method=ladder.method,
            score=score,
            dataset=dict(dataset or {}),
            validation=dict(validation or {}),
            holdout=dict(holdout or {}),
            answerability=answerability,
            certificate=cert,
            options=dict(options or {}),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CalibrationFile:
        version = data.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise ValueError(f"schema_version {version} is not supported (expected {SCHEMA_VERSION})")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"calibration file has unknown keys {unknown}")
        required = ("embedder", "model_id", "fingerprint", "bands", "delta")
        missing = [k for k in required if k not in data]
        if missing:
            raise ValueError(f"calibration file is missing keys {missing}")
        return cls(**data)


def bands_from_fit(fit: ThresholdFit) -> dict[str, dict[str, Any]]:
    """The ``bands`` section of a calibration file from a ``ThresholdFit``."""
    out: dict[str, dict[str, Any]] = {}
    for b in BANDS:
        bf = fit.bands[b]
        out[b] = {
            "threshold": bf.threshold,
            "target": bf.target,
            "certified": bf.certified,
            "inherited": bf.inherited,
            # NaN is not JSON; an uncertified band has no precision to report.
            "precision": None if bf.precision != bf.precision else bf.precision,
            "precision_lower_bound": bf.precision_lower_bound,
            "coverage": bf.coverage,
            "recall": None if bf.recall != bf.recall else bf.recall,
            "n": bf.n,
            "p_value": bf.p_value,
        }
    return out


def _json_safe(value: Any) -> Any:
    """NaN / inf (undefined figures) become null, numpy scalars plain Python: strict JSON."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def save_calibration(file: CalibrationFile, path: str | Path) -> Path:
    """Write ``file`` as indented JSON to ``path`` (a file, or a folder to hold <embedder>.json)."""
    p = Path(path)
    if p.is_dir():
        p = p / f"{file.embedder}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(_json_safe(file.to_dict()), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    from widemem_bench.engine.pins import pin_committed

    pin_committed(p, calibration_dir())  # a committed file and its pin are written together
    return p


def read_calibration(path: str | Path) -> CalibrationFile:
    """Read a calibration file from an explicit path (a committed one checked against its pin)."""
    from widemem_bench.engine.pins import read_committed

    p = Path(path)
    try:
        data = json.loads(read_committed(p, calibration_dir(), "make calibrate", "calibration"))
    except json.JSONDecodeError as err:
        raise ValueError(f"calibration file {p} is not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise ValueError(f"calibration file {p} must hold a JSON object")
    return CalibrationFile.from_dict(data)


def calibration_dir() -> Path:
    """The package folder holding committed calibration files."""
    return Path(str(resources.files(FILES_PACKAGE) / FILES_DIR))


def calibration_path(embedder_name: str, directory: str | Path | None = None) -> Path:
    base = Path(directory) if directory is not None else calibration_dir()
    return base / f"{_check_name(embedder_name)}.json"


def load_calibration(embedder_name: str, directory: str | Path | None = None) -> CalibrationFile:
    """The committed calibration of ``embedder_name``; a clear one-line error when there is none."""
    path = calibration_path(embedder_name, directory)
    if not path.is_file():
        cmd = (CREATE_COMMAND if directory is None else COPY_COMMAND).format(name=embedder_name)
        raise CalibrationNotFoundError(
            f"no calibration file for embedder {embedder_name!r} (looked for {path}); create it with: {cmd}"
        )
    cal = read_calibration(path)
    if cal.embedder != embedder_name:
        raise ValueError(f"calibration file {path} is for embedder {cal.embedder!r}, not {embedder_name!r}")
    return cal


def available_calibrations(directory: str | Path | None = None) -> list[str]:
    """Names of the embedders that have a calibration file."""
    base = Path(directory) if directory is not None else calibration_dir()
    return sorted(p.stem for p in base.glob("*.json") if p.name != "pins.json") if base.is_dir() else []
