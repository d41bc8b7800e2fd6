"""Regression gate: the code as it stands, on its own gate users, against a blessed baseline.

What it evaluates is built from the code's current defaults, never from the baseline:
``EngineConfig()`` (weights, decay, adaptation, boost, mode, YMYL floor and immunity),
the default config groups (``configs/config.yaml``: the embedder), widemem's threshold
table for that embedder's model, the committed calibration file and the committed
answerability v2 file. It prints those settings, and a setting that differs from what
the baseline recorded is one failing line naming it.

What it gates (``GATED``), on the gate users (`gate_timelines`: their own seed, user
ids ``g0000``.., split "gate", refused by every fit through ``check_fittable``):

- per confidence method (widemem's bands, the calibrated thresholds, answerability v2
  = the engine's ``confidence="answerability"``): recall at MODERATE+, false confidence
  and the NONE share per question kind, and AUROC of its score;
- retrieval hit@1 and MRR;
- each resolver's stale-fact survival and false-update rate (``MemoryEngine`` replays);
- YMYL survival at day 60 (strong-YMYL facts in the top 3, YMYL on).

Statistics: per metric, a paired bootstrap over users of (code - baseline) on the same
questions (the baseline stores per-user numerators and denominators, and per-question
scores for AUROC). A change fails when its 95 % interval excludes 0 and it exceeds the
metric's declared minimal effect (``min_effect`` in the metric registry): in the bad
direction as a regression, in the good one as "re-bless with make golden REASON='...'".

    python -m widemem_bench.regression                     # the gate: exit 1 on a change
    python -m widemem_bench.regression --write REASON      # make golden REASON='...'
    python -m widemem_bench.regression adapter=widemem     # gate a peer memory system
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
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
                             f"python -m widemem_bench.answerability.fit embedder={embedder}")
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


def measure(tl: Any, emb: Any, progress: Any = print) -> dict[str, Measure]:
    """Every gated metric of the code as it stands on the gate users (keys ``<group>/<metric>``)."""
    from widemem_bench.answerability.data import returned_columns
    from widemem_bench.answerability.v2 import MAX_RESULTS, feature_rows, load_scorer_v2
    from widemem_bench.calibration import assign_bands, load_calibration
    from widemem_bench.engine import EngineConfig, batch, thresholds_for_model

    ec = EngineConfig()
    users = sorted(tl.events["user_id"].unique())
    code = {u: i for i, u in enumerate(users)}
    nu = len(users)
    out: dict[str, Measure] = {}
    mode = str(ec.default_mode)
    thr = thresholds_for_model(emb.model_id)

    # confidence and retrieval: the batched scorer (the engine's arithmetic, every question at once)
    t0 = time.perf_counter()
    qs = tl.questions[tl.questions["kind"].isin(CONFIDENCE_KINDS)].reset_index(drop=True)
    prep = batch.prepare(tl.events, qs, emb, mode=mode, adapt=ec.adapt_weights, age_from=ec.age_from)
    sc = batch.score(prep, ec.weights, ec.decay_function, ec.decay_rate, thr, two_pass=ec.two_pass_boost,
                     keep_final=True)
    kinds = qs.set_index("question_id").loc[prep.question_ids, "kind"].to_numpy(dtype=str)
    ucodes = np.array([code[u] for u in prep.user_ids], np.intp)
    top1 = np.nan_to_num(sc.top1_sim, nan=-1.0)  # nothing stored = the lowest score
    cols = returned_columns(prep, np.asarray(sc.final))
    texts = prep.memories["content"].to_numpy()
    contents, cosines = [], []
    for i in range(prep.n_questions):
        c = cols[i][cols[i] >= 0][:MAX_RESULTS]
        contents.append([str(t) for t in texts[prep.mem[i, c]]])
        cosines.append([float(v) for v in prep.sim[i, c]])
    v2 = load_scorer_v2(emb.name)
    qtext = qs.set_index("question_id").loc[prep.question_ids, "text"].astype(str).tolist()
    prob = np.asarray(v2.model.predict_proba(feature_rows(qtext, contents, cosines, emb, v2.prototypes)), float)
    cal = load_calibration(emb.name)
    bands = {"widemem": np.asarray(sc.band, np.int8), "calibrated": assign_bands(top1, cal.thresholds),
             "answerability_v2": assign_bands(prob, v2.cutoffs)}
    for method, b in bands.items():
        out[f"{method}/recall_moderate_plus"] = ratio_measure("recall_moderate_plus", ucodes, nu, b, kinds)
        for k in NEGATIVE_KINDS:
            out[f"{method}/false_confidence_{k}"] = ratio_measure(f"false_confidence_{k}", ucodes, nu, b, kinds)
        for k in CONFIDENCE_KINDS:
            out[f"{method}/share_{k}_none"] = ratio_measure(f"share_{k}_none", ucodes, nu, b, kinds)
    out["similarity/auroc"] = auroc_measure(ucodes, top1, kinds)  # widemem's and the calibrated score
    out["answerability_v2/auroc"] = auroc_measure(ucodes, prob, kinds)
    gold = (kinds == "answerable") & (prep.n_gold_stored > 0)
    for m in ("hit@1", "mrr"):
        out[f"retrieval/{m}"] = ratio_measure(m, ucodes[gold], nu, sc.gold_rank[gold])
    progress(f"  confidence and retrieval: {prep.n_questions} questions, {time.perf_counter() - t0:.1f} s")

    # resolvers: MemoryEngine itself, fact by fact, one replay per resolver
    from widemem_bench.evaluation.replay import MemoEmbedder
    from widemem_bench.experiments import contradiction

    t0 = time.perf_counter()
    ev = tl.events
    memo = MemoEmbedder(emb, [*ev["fact_stripped"].dropna(), *tl.questions["text"]])
    gold_slots = contradiction.gold_by_content(ev)
    n_user = ev[ev["fact_stripped"].notna()].groupby("user_id").size().reindex(users).fillna(0).to_numpy(float)
    for name in RESOLVERS:
        probes, updates, _ = contradiction.replay(ev, tl.questions, memo, dataclasses.replace(ec, resolver=name),
                                                  users, k=PROBE_K, gold=gold_slots)
        po = contradiction.probe_outcomes(probes, PROBE_K)
        po = po[po["kind"] == "direct"]
        pc = np.array([code[u] for u in po["user_id"]], np.intp)
        out[f"resolver_{name}/stale_survival"] = ratio_measure("stale_survival", pc, nu, po["survival"].to_numpy())
        fu = np.zeros(nu)
        if not updates.empty:
            bad = updates[updates["verdict"] == "false_update"].groupby("user_id").size()
            for u, n in bad.items():
                fu[code[str(u)]] = float(n)
        out[f"resolver_{name}/false_update_rate"] = ratio_measure("false_update_rate", np.arange(nu), nu, fu, n_user)
    progress(f"  resolvers {', '.join(RESOLVERS)}: {len(ev)} facts each, {time.perf_counter() - t0:.1f} s")

    # YMYL: strong-YMYL facts aged 60 quiet days, YMYL on (the engine's floor and immunity)
    from widemem_bench.experiments import ymyl_decay

    t0 = time.perf_counter()
    lay = ymyl_decay.layout(ev, emb, mode=mode)
    ys = ymyl_decay.score_days(lay, YMYL_DAY, ec.decay_function, ec.decay_rate, "on", ec.weights, thr)
    crit = (lay.rows["category"] == "critical").to_numpy()
    yc = np.array([code[u] for u in lay.rows["user_id"][crit]], np.intp)
    out["ymyl/ymyl_survival"] = ratio_measure("ymyl_survival", yc, nu, (ys.gold_rank[crit] <= YMYL_REACH_K))
    progress(f"  YMYL at day {YMYL_DAY:g}: {int(crit.sum())} strong-YMYL questions, {time.perf_counter() - t0:.1f} s")
    return out


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


# ------------------------------------------------------------------ baseline file
def load_baseline(path: Path = BASELINE_PATH) -> dict[str, Any]:
    if not path.is_file():
        raise GateInputError(f"baseline {path} does not exist; create it with: make golden REASON='...'")
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise GateInputError(f"baseline {path} is not valid JSON ({exc.msg}); "
                             f"restore it with git checkout or {RE_BLESS}") from None
    if data.get("format") != FORMAT or "metrics" not in data or "evaluated" not in data:
        raise GateInputError(f"baseline {path} is stale (format {data.get('format')!r}, the gate writes "
                             f"{FORMAT}); {RE_BLESS}")
    return data


def check_inputs(baseline: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
    """Raise GateInputError (one line) when the baseline cannot be compared with this checkout."""
    blessed = (baseline.get("blessed") or {}).get("lock_sha256")
    now = lock_sha256()
    if blessed != now:
        raise GateInputError(f"the baseline was blessed under lock {blessed or 'none'}, this checkout has "
                             f"{now or 'no requirements.lock'}; {RE_BLESS}")
    b_data, n_data = baseline["evaluated"].get("gate_data", {}), settings.get("gate_data", {})
    if b_data.get("sha256") != n_data.get("sha256"):
        raise GateInputError("the gate users differ from the baseline's (generator or GATE_DATA changed): "
                             f"the baseline is stale; {RE_BLESS}")


def git_commit() -> str | None:
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    return r.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def write_baseline(reason: str, path: Path = BASELINE_PATH, progress: Any = print) -> Path:
    """Bless the code as it stands (``make golden REASON='...'``)."""
    if not reason.strip():
        raise GateInputError("blessing needs a reason: make golden REASON='why the numbers moved'")
    tl, emb = _inputs(progress)
    settings = evaluated_settings(tl)
    current = measure(tl, emb, progress)
    data = {
        "format": FORMAT,
        "blessed": {"reason": reason.strip(), "commit": git_commit(), "lock_sha256": lock_sha256(),
                    "written": dt.datetime.now(dt.UTC).replace(tzinfo=None).isoformat(timespec="seconds")},
        "statistics": f"paired bootstrap over users, {N_BOOT} replicates, seed {SEED}, {LEVEL:.0%} percentile "
                      "interval; fail beyond the registry's min_effect when the interval excludes 0",
        "evaluated": settings,
        "users": sorted(tl.events["user_id"].unique().tolist()),
        "metrics": {k: v.to_json() for k, v in sorted(current.items())},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(dump(data), encoding="utf-8")
    tmp.replace(path)
    return path


def dump(data: Mapping[str, Any]) -> str:
    """The baseline as JSON: settings indented, one line per metric (small, diffable)."""
    head = {k: v for k, v in data.items() if k != "metrics"}
    text = json.dumps(head, indent=1)[:-2] + ',\n "metrics": {\n'
    text += ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}"
                       for k, v in data["metrics"].items())
    return text + "\n }\n}\n"


def _inputs(progress: Any = print) -> tuple[Any, Any]:
    from widemem_bench.embedders import load_embedder

    t0 = time.perf_counter()
    tl = gate_timelines()
    emb = load_embedder(default_groups().get("embedder", "minilm-l6"))
    progress(f"gate users: {tl.events['user_id'].nunique()} (seed {GATE_DATA['seed']}, split 'gate'), "
             f"{len(tl.events)} facts, {len(tl.questions)} questions; embedder {emb.name} "
             f"({time.perf_counter() - t0:.1f} s)")
    return tl, emb


def run_gate(path: Path = BASELINE_PATH, progress: Any = print) -> tuple[int, list[str]]:
    """(exit code, failing lines): 0 pass, 1 a change beyond its minimal effect or a setting changed."""
    baseline = load_baseline(path)
    t0 = time.perf_counter()
    tl, emb = _inputs(progress)
    settings = evaluated_settings(tl)
    check_inputs(baseline, settings)
    progress("evaluated (the code's defaults): " + json.dumps(
        {k: v for k, v in settings.items() if k not in ("modes", "gate_data")}, sort_keys=True))
    failures = group_mismatches() + setting_diffs(settings, baseline["evaluated"])
    current = measure(tl, emb, progress)
    table, bad, good = judge(current, baseline)
    for line in table:
        progress(line)
    failures += [f"REGRESSION {b}" for b in bad] + [f"IMPROVED {g}" for g in good]
    progress(f"gate: {len(current)} metrics in {time.perf_counter() - t0:.1f} s")
    return (1 if failures else 0), failures


# ------------------------------------------------------------------ any memory system
ADAPTER_USERS = 60   # gate users driven through an adapter (an outside system is slower)
ADAPTER_TOP_K = 10


def adapter_baseline_path(name: str) -> Path:
    return REPO_ROOT / "reports" / "baseline" / f"adapter-{name}.json"


def adapter_settings(name: str, options: Mapping[str, Any], tl: Any, users: Sequence[str]) -> dict[str, Any]:
    return {"adapter": name, "options": dict(options), "embedder": default_groups().get("embedder", "minilm-l6"),
            "users": len(users), "top_k": ADAPTER_TOP_K,
            "gate_data": {**GATE_DATA, "sha256": data_fingerprint(tl)}}


def adapter_measure(name: str, options: Mapping[str, Any], tl: Any, users: Sequence[str],
                    progress: Any = print) -> dict[str, Measure]:
    """The gated metrics a `MemoryAdapter` can give: its own band (when it reports one),
    AUROC of its top-1 score, hit@1 / MRR, and stale-fact survival (stale above current)."""
    import contextlib
    import tempfile

    from widemem_bench.embedders import load_embedder
    from widemem_bench.peers.adapters import build_adapter
    from widemem_bench.peers.evaluate import BAND_CODE, drive, score_answers
    from widemem_bench.peers.replay import replay_steps

    code = {u: i for i, u in enumerate(users)}
    nu = len(users)
    steps = replay_steps(tl.events, tl.questions, users)
    emb = load_embedder(default_groups().get("embedder", "minilm-l6"))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"wb-gate-{name}-") as work:
        adapter = build_adapter(name, emb, dict(options), work_dir=Path(work))
        with contextlib.closing(adapter):
            answers, _ = drive(adapter, steps, top_k=ADAPTER_TOP_K)
    sc = score_answers(answers, tl.events, tl.questions)
    progress(f"  adapter {name}: {len(steps)} calls, {time.perf_counter() - t0:.1f} s")
    kinds = sc["kind"].to_numpy(dtype=str)
    uc = np.array([code[str(u)] for u in sc["user_id"]], np.intp)
    out: dict[str, Measure] = {}
    conf = np.isin(kinds, CONFIDENCE_KINDS)
    if sc["band"].notna().all():
        b = sc["band"].map(BAND_CODE).to_numpy(dtype=np.int8)
        out[f"{name}/recall_moderate_plus"] = ratio_measure("recall_moderate_plus", uc[conf], nu, b[conf], kinds[conf])
        for k in NEGATIVE_KINDS:
            out[f"{name}/false_confidence_{k}"] = ratio_measure(f"false_confidence_{k}", uc[conf], nu, b[conf],
                                                                kinds[conf])
        for k in CONFIDENCE_KINDS:
            out[f"{name}/share_{k}_none"] = ratio_measure(f"share_{k}_none", uc[conf], nu, b[conf], kinds[conf])
    out[f"{name}/auroc"] = auroc_measure(uc[conf], sc["top1_score"].to_numpy(float)[conf], kinds[conf])
    ans = kinds == "answerable"
    rank = sc["gold_rank"].to_numpy(float)
    rank = np.where(rank > 0, rank, np.inf)
    for m in ("hit@1", "mrr"):
        out[f"{name}/{m}"] = ratio_measure(m, uc[ans], nu, rank[ans])
    stale = kinds == "stale_probe"
    out[f"{name}/stale_survival"] = ratio_measure("stale_survival", uc[stale], nu,
                                                  sc["stale_above_gold"].to_numpy(float)[stale])
    return out


def adapter_main(name: str, args: Sequence[str]) -> int:
    """``widemem-bench regression adapter=<name> [baseline=PATH] [--write REASON] [options.k=v]``."""
    import yaml

    path = adapter_baseline_path(name)
    write: str | None = None
    opts_file = REPO_ROOT / "configs" / "adapter" / f"{name}.yaml"
    options: dict[str, Any] = dict((yaml.safe_load(opts_file.read_text()) or {}).get("options") or {}) \
        if opts_file.is_file() else {}
    it = iter(args)
    for a in it:
        if a == "--write":
            write = next(it, "")
        elif a.startswith("baseline="):
            path = Path(a.split("=", 1)[1])
        elif a.startswith("options."):
            k, v = a.removeprefix("options.").split("=", 1)
            options[k] = yaml.safe_load(v)
        else:
            raise GateInputError(f"unknown argument {a!r} (adapter=<name> [baseline=PATH] [--write REASON] "
                                 "[options.<key>=<value>])")
    tl = gate_timelines()
    users = sorted(tl.events["user_id"].unique())[:ADAPTER_USERS]
    settings = adapter_settings(name, options, tl, users)
    if write is not None:
        if not write.strip():
            raise GateInputError(f"blessing needs a reason: widemem-bench regression adapter={name} --write 'why'")
        current = adapter_measure(name, options, tl, users)
        data = {"format": FORMAT, "blessed": {"reason": write.strip(), "commit": git_commit(),
                                              "lock_sha256": lock_sha256(),
                                              "written": dt.datetime.now(dt.UTC).replace(tzinfo=None)
                                              .isoformat(timespec="seconds")},
                "evaluated": settings, "users": list(users),
                "metrics": {k: v.to_json() for k, v in sorted(current.items())}}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump(data), encoding="utf-8")
        print(f"wrote {path}")
        return 0
    if not path.is_file():
        raise GateInputError(f"no baseline {path} for adapter {name!r}; bless one with: "
                             f"widemem-bench regression adapter={name} --write 'REASON'")
    baseline = load_baseline(path)
    check_inputs(baseline, settings)
    print("evaluated: " + json.dumps({k: v for k, v in settings.items() if k != "gate_data"}, sort_keys=True))
    failures = setting_diffs(settings, baseline["evaluated"])
    table, bad, good = judge(adapter_measure(name, options, tl, users), baseline)
    for line in table:
        print(line)
    failures += [f"REGRESSION {b}" for b in bad] + [f"IMPROVED {g}" for g in good]
    if failures:
        print("GATE FAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"ok: {name} moved no gated metric beyond its minimal effect")
    return 0


BENCH_HEADER = "## Regression gate, warm"
BUDGET_S = 60.0


def bench(out: Path, rounds: int = 3) -> str:
    """Time warm gate runs (each its own process, after one warm-up) and write the
    section `BENCH_HEADER` of ``out`` (a benchmark: nothing asserts on it)."""
    import resource

    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "widemem_bench.regression"]
    walls, cpus, codes = [], [], []
    load0 = os.getloadavg()
    for i in range(rounds + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i == 0:
            continue  # the warm-up fills the embedding cache if it was cold
        walls.append(wall)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        codes.append(r.returncode)
    load1 = os.getloadavg()
    med, cpu = float(np.median(walls)), float(np.median(cpus))
    section = "\n".join([
        BENCH_HEADER, "",
        "`python -m widemem_bench.regression` (the gate of `make test`: the gate users, "
        f"MemoryEngine replays of {len(RESOLVERS)} resolvers), warm embedding cache, "
        f"each run its own process, {rounds} rounds after one warm-up; written by "
        "`python -m widemem_bench.regression --bench` (part of `make perf`).",
        "",
        f"- wall time: median **{med:.1f} s** (rounds {', '.join(f'{w:.1f}' for w in walls)}); "
        f"{med / BUDGET_S:.2f} of the 60 s budget; exit codes {codes}",
        f"- CPU time: median {cpu:.1f} s (the rest is waiting on a shared machine)",
        f"- load average at start {[round(x, 2) for x in load0]}, at the end {[round(x, 2) for x in load1]}",
        f"- {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, commit {git_commit()}",
        "",
    ])
    text = out.read_text(encoding="utf-8") if out.is_file() else ""
    if BENCH_HEADER in text:
        head, _, rest = text.partition(BENCH_HEADER)
        nxt = rest.find("\n## ")
        text = head + section + (rest[nxt + 1:] if nxt >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    out.write_text(text, encoding="utf-8")
    return section


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args = list(sys.argv[1:] if argv is None else argv)
    if "-h" in args or "--help" in args:
        print("usage: widemem-bench regression [--write REASON | --bench [--out FILE]]\n"
              "       widemem-bench regression adapter=<name> [baseline=PATH] [--write REASON] "
              "[options.<key>=<value>]\n\n" + (__doc__ or ""))
        return 0
    adapter = next((a.split("=", 1)[1] for a in args if a.startswith("adapter=")), None)
    rest = [a for a in args if not a.startswith("adapter=")]
    if adapter is not None:
        return adapter_main(adapter, rest)
    if rest[:1] == ["--bench"]:
        print(bench(Path(rest[2]) if rest[1:2] == ["--out"] and len(rest) > 2 else REPO_ROOT / "reports" / "perf.md"))
        return 0
    if rest[:1] == ["--write"]:
        if len(rest) > 2:
            raise GateInputError("usage: --write 'REASON' (one argument; make golden REASON='...')")
        print(f"wrote {write_baseline(rest[1] if len(rest) > 1 else '')}")
        return 0
    if rest:
        raise GateInputError(f"unknown argument {rest[0]!r} (the gate takes no settings: it evaluates the code's "
                             "defaults; --write REASON blesses; adapter=<name> gates a peer)")
    code, failures = run_gate()
    if failures:
        print("GATE FAILED:\n  " + "\n  ".join(failures))
    else:
        print("ok: no gated metric moved beyond its minimal effect; settings as blessed")
    return code


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
