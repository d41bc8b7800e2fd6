"""The regression gate's core: what is evaluated, one gated metric, and the paired statistics.

See `widemem_bench.regression` for what the gate does and how it is run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.provenance import REPO_ROOT

BASELINE_PATH = REPO_ROOT / "reports" / "baseline" / "metrics.json"
LOCK_PATH = REPO_ROOT / "requirements.lock"
FORMAT = 2
# The gate users: world A's generator with a seed no fit reads, holdout-family users left
# out (their wording is the sealed holdout's), the rest renamed g0000.. with split "gate".
GATE_DATA: dict[str, Any] = {"world": "a", "seed": 23, "n_users": 200, "span_days": 365,
                             "questions_per_user": 40, "start": "2025-01-06", "drop_families": ["holdout"]}
CONFIDENCE_KINDS = ("answerable", "hard_negative", "other_person", "never_mentioned")
NEGATIVE_KINDS = CONFIDENCE_KINDS[1:]
METHODS = ("widemem", "calibrated", "answerability_v2")
RESOLVERS = ("append", "rule", "oracle")
PROBE_K = 5         # configs/experiment/contradiction.yaml: params.k
YMYL_DAY = 60.0
YMYL_REACH_K = 3    # configs/experiment/ymyl_decay.yaml: params.reach_k
N_BOOT = 2000
SEED = 0
LEVEL = 0.95
RE_BLESS = "re-bless with `make golden REASON='...'`"


class GateInputError(ValueError):
    """Bad input (missing or stale baseline, another lock): one line saying what to run."""


@dataclasses.dataclass
class Measure:
    """One gated metric of one run: per-user terms (ratio metrics) or per-question arrays."""

    metric: str                       # registry name
    value: float
    num: np.ndarray | None = None     # (U,) per-user numerator sums
    den: np.ndarray | None = None     # (U,) per-user denominator sums
    user: np.ndarray | None = None    # (n,) user index per question (weighted metrics)
    arrays: tuple[np.ndarray, ...] = ()

    def to_json(self) -> dict[str, Any]:
        from widemem_bench.metrics import get_metric

        m = get_metric(self.metric)
        out: dict[str, Any] = {"metric": self.metric, "value": self.value, "direction": m.direction,
                               "min_effect": m.min_effect}
        if self.num is not None and self.den is not None:
            out["num"], out["den"] = _floats(self.num), _floats(self.den)
        else:
            # AUROC reads only the order of the scores: their dense ranks are stored (ints).
            out["user"] = [int(u) for u in np.asarray(self.user)]
            out["score_rank"] = [int(r) for r in np.unique(self.arrays[0], return_inverse=True)[1]]
            out["label"] = [int(v) for v in self.arrays[1]]
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Measure:
        if "num" in d:
            return cls(str(d["metric"]), float(d["value"]), np.asarray(d["num"], float), np.asarray(d["den"], float))
        return cls(str(d["metric"]), float(d["value"]), user=np.asarray(d["user"], np.intp),
                   arrays=(np.asarray(d["score_rank"], float), np.asarray(d["label"], float)))


def _floats(a: Any) -> list[float]:
    return [float(v) for v in np.asarray(a, dtype=float)]


# ------------------------------------------------------------------ what is evaluated
def default_groups() -> dict[str, str]:
    """The default option of every config group (configs/config.yaml's defaults list)."""
    import yaml

    cfg = yaml.safe_load((REPO_ROOT / "configs" / "config.yaml").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for item in cfg.get("defaults", []):
        if isinstance(item, Mapping):
            for k, v in item.items():
                if isinstance(v, str) and not str(k).startswith("override"):
                    out[str(k)] = v
    return out


def group_config() -> dict[str, Any]:
    """The composed default config as plain dicts (no Hydra): each group's default file."""
    import yaml

    root = yaml.safe_load((REPO_ROOT / "configs" / "config.yaml").read_text(encoding="utf-8"))
    cfg: dict[str, Any] = {k: root[k] for k in ("mode", "age_from") if k in root}
    for group, option in default_groups().items():
        path = REPO_ROOT / "configs" / group / f"{option}.yaml"
        if path.is_file():
            cfg[group] = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return cfg


def lock_sha256(path: Path = LOCK_PATH) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def gate_timelines() -> Any:
    """The gate users (see `GATE_DATA`), generated in memory: 0.5 s, seeded, never on disk."""
    from widemem_bench.timelines.dataset import GATE_SPLIT, Timelines, generate

    g = GATE_DATA
    tl = generate(int(g["n_users"]), int(g["seed"]), span_days=int(g["span_days"]),
                  questions_per_user=int(g["questions_per_user"]), start=str(g["start"]), world=str(g["world"]))
    keep_users = sorted(set(tl.events.loc[~tl.events["split"].isin(g["drop_families"]), "user_id"]))
    rename = {u: f"g{i:04d}" for i, u in enumerate(keep_users)}
    out = []
    for df in (tl.events, tl.questions):
        df = df[df["user_id"].isin(rename)].copy()
        df["family_split"] = df["split"]
        df["user_id"] = df["user_id"].map(rename)
        df["split"] = GATE_SPLIT
        out.append(df.reset_index(drop=True))
    return Timelines(out[0], out[1], {**tl.meta, "split": GATE_SPLIT, "gate": dict(g)})


def data_fingerprint(tl: Any) -> str:
    """sha256 of what the gate reads of its users (a changed generator makes the baseline stale)."""
    h = hashlib.sha256()
    ev = tl.events[["user_id", "fact_id", "at", "fact_stripped", "importance", "subject", "attribute"]]
    qs = tl.questions[["user_id", "question_id", "asked_at", "text", "kind"]]
    for df in (ev, qs):
        h.update(df.astype(str).to_csv(index=False).encode())
    return h.hexdigest()


def evaluated_settings(tl: Any | None = None) -> dict[str, Any]:
    """Everything the gate's numbers depend on, read from the code as it stands."""
    from widemem_bench.answerability.v2 import scorer_path
    from widemem_bench.calibration import load_calibration
    from widemem_bench.calibration.file import calibration_path
    from widemem_bench.embedders.registry import get_spec
    from widemem_bench.engine import EngineConfig, scoring, thresholds_for_model
    from widemem_bench.engine.modes import RETRIEVAL_MODE_PRESETS
    from widemem_bench.engine.recency import STEP_FLOOR, STEP_SCHEDULE

    ec = EngineConfig()
    embedder = default_groups().get("embedder", "minilm-l6")
    model_id = str(get_spec(embedder).model_id)
    cal = load_calibration(embedder)
    v2_path = scorer_path(embedder)
    if not v2_path.is_file():
        raise GateInputError(f"no answerability v2 file {v2_path}; fit it with "
                             f"widemem-bench fit_v2 embedder={embedder}")
    v2 = json.loads(v2_path.read_text(encoding="utf-8"))
    engine = {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(ec).items()
              if k not in ("llm_api_key", "llm_url", "llm_model", "llm_timeout")}
    out: dict[str, Any] = {
        "engine": json.loads(json.dumps(engine, default=str)),
        "adaptation": {"temporal": list(scoring.TEMPORAL_WEIGHTS), "factual": list(scoring.FACTUAL_WEIGHTS),
                       "short_what_max_words": scoring.SHORT_WHAT_MAX_WORDS},
        "scoring": {"boost_n": scoring.BOOST_N, "importance_max": scoring.IMPORTANCE_MAX,
                    "step_schedule": [list(x) for x in STEP_SCHEDULE], "step_floor": STEP_FLOOR},
        "modes": {str(m.value): dataclasses.asdict(p) for m, p in RETRIEVAL_MODE_PRESETS.items()},
        "embedder": embedder,
        "model_id": model_id,
        "widemem_thresholds": list(thresholds_for_model(model_id)),
        "calibration": {"thresholds": list(cal.thresholds),
                        "sha256": _file_sha(calibration_path(embedder))},
        "answerability_v2": {"cutoffs": list(v2["cutoffs"]), "sha256": _file_sha(v2_path)},
        "resolvers": list(RESOLVERS),
        "gate_data": dict(GATE_DATA),
    }
    if tl is not None:
        out["gate_data"]["sha256"] = data_fingerprint(tl)
        out["gate_data"]["users"] = int(tl.events["user_id"].nunique())
    return out


def group_mismatches() -> list[str]:
    """Where the default config groups give another EngineConfig than EngineConfig(): a
    default that a run and the gate would read differently."""
    from widemem_bench.engine import EngineConfig
    from widemem_bench.harness.settings import engine_config

    ours, theirs = dataclasses.asdict(EngineConfig()), dataclasses.asdict(engine_config(group_config()))
    return [f"settings: the default config groups give {k}={theirs[k]!r} but EngineConfig() has {ours[k]!r}"
            for k in ours if ours[k] != theirs[k]]


def setting_diffs(now: Mapping[str, Any], base: Mapping[str, Any], prefix: str = "") -> list[str]:
    """One line per setting that differs from the baseline's record."""
    out: list[str] = []
    for k in sorted(set(now) | set(base)):
        a, b = now.get(k, "<absent>"), base.get(k, "<absent>")
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out += setting_diffs(a, b, f"{prefix}{k}.")
        elif a != b:
            out.append(f"settings: {prefix}{k} is {a!r} in the code but {b!r} in the baseline")
    return out


# ------------------------------------------------------------------ the measurements
def _per_user(codes: np.ndarray, values: np.ndarray, n_users: int) -> np.ndarray:
    return np.bincount(codes, weights=np.asarray(values, float), minlength=n_users).astype(float)


def ratio_measure(metric: str, codes: np.ndarray, n_users: int, *arrays: Any, **params: Any) -> Measure:
    from widemem_bench.metrics import get_metric

    m = get_metric(metric)
    terms = m.ratio_terms(*arrays, **params)
    assert terms is not None, metric
    num, den = _per_user(codes, terms[0], n_users), _per_user(codes, terms[1], n_users)
    value = float(num.sum() / den.sum()) if den.sum() > 0 else float("nan")
    return Measure(metric, value, num, den)


def _kinds(labels: np.ndarray) -> np.ndarray:
    return np.where(np.asarray(labels) > 0.5, "answerable", "hard_negative")


def auroc_measure(codes: np.ndarray, scores: np.ndarray, kinds: np.ndarray) -> Measure:
    from widemem_bench.metrics import compute

    labels = (np.asarray(kinds) == "answerable").astype(float)
    s = np.asarray(scores, float)
    return Measure("auroc", float(compute("auroc", s, _kinds(labels))), user=codes.astype(np.intp),
                   arrays=(s, labels))


# ------------------------------------------------------------------ statistics
def paired_interval(cur: Measure, base: Measure, *, n_boot: int = N_BOOT, seed: int = SEED,
                    level: float = LEVEL) -> tuple[float, float]:
    """Percentile interval of (code - baseline): the same users drawn for both, per replicate."""
    from widemem_bench.metrics import get_metric

    rng = np.random.default_rng(seed)
    if cur.num is not None and base.num is not None and cur.den is not None and base.den is not None:
        nu = cur.num.size
        if base.num.size != nu:
            raise GateInputError(f"{cur.metric}: the baseline has {base.num.size} users, the gate {nu}; "
                                 f"the baseline is stale: {RE_BLESS}")
        idx = rng.integers(0, nu, size=(n_boot, nu))
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = cur.num[idx].sum(1) / cur.den[idx].sum(1) - base.num[idx].sum(1) / base.den[idx].sum(1)
    else:
        metric = get_metric(cur.metric)
        assert cur.user is not None and base.user is not None
        nu = int(max(cur.user.max(), base.user.max())) + 1
        draws = rng.integers(0, nu, size=(n_boot, nu)) + (np.arange(n_boot) * nu)[:, None]
        counts = np.bincount(draws.ravel(), minlength=n_boot * nu).reshape(n_boot, nu).astype(float)
        a = metric.weighted_values(counts[:, cur.user], cur.arrays[0], _kinds(cur.arrays[1]))
        b = metric.weighted_values(counts[:, base.user], base.arrays[0], _kinds(base.arrays[1]))
        assert a is not None and b is not None
        reps = a - b
    reps = reps[np.isfinite(reps)]
    if reps.size == 0:
        return float("nan"), float("nan")
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(reps, [tail, 100 - tail])
    return float(lo), float(hi)


def judge(current: Mapping[str, Measure], baseline: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """(table lines, regressions, improvements); a regression or improvement is one line naming the metric."""
    from widemem_bench.metrics import get_metric

    table, bad, good = [], [], []
    base_metrics = baseline["metrics"]
    for key in sorted(set(current) | set(base_metrics)):
        if key not in base_metrics:
            bad.append(f"{key}: gated now but not in the baseline; {RE_BLESS}")
            continue
        if key not in current:
            bad.append(f"{key}: in the baseline but no longer measured; {RE_BLESS}")
            continue
        cur, base = current[key], Measure.from_json(base_metrics[key])
        m = get_metric(cur.metric)
        eff = float(m.min_effect or 0.0)
        diff = cur.value - base.value
        if cur.value == base.value or (np.isnan(cur.value) and np.isnan(base.value)):
            lo = hi = 0.0
        else:
            lo, hi = paired_interval(cur, base)
        worse = -diff if m.direction == "higher" else diff
        excludes_bad = (hi < 0) if m.direction == "higher" else (lo > 0)
        excludes_good = (lo > 0) if m.direction == "higher" else (hi < 0)
        table.append(f"{key:48s} {base.value:8.4f} -> {cur.value:8.4f}  diff {diff:+.4f} "
                     f"[{lo:+.4f}, {hi:+.4f}]  min effect {eff:g}")
        if np.isnan(cur.value) != np.isnan(base.value):
            bad.append(f"{key}: {base.value} -> {cur.value} (NaN changed)")
        elif worse > eff and excludes_bad:
            bad.append(f"{key}: {base.value:.4f} -> {cur.value:.4f} ({m.direction} is better; worse by "
                       f"{worse:.4f} > min effect {eff:g}, 95% paired interval [{lo:+.4f}, {hi:+.4f}])")
        elif -worse > eff and excludes_good:
            good.append(f"{key}: {base.value:.4f} -> {cur.value:.4f} (better by {-worse:.4f} > min effect "
                        f"{eff:g}, 95% paired interval [{lo:+.4f}, {hi:+.4f}]): {RE_BLESS}")
    return table, bad, good
