"""The gate for any memory system: a `MemoryAdapter` driven over the gate users, against its own baseline.

    widemem-bench regression adapter=widemem                  # gate a peer (its baseline must exist)
    widemem-bench regression adapter=widemem write='REASON'   # bless it
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.provenance import REPO_ROOT
from widemem_bench.regression.baseline import check_inputs, dump, git_commit, load_baseline
from widemem_bench.regression.gate import (
    CONFIDENCE_KINDS,
    FORMAT,
    GATE_DATA,
    NEGATIVE_KINDS,
    GateInputError,
    Measure,
    auroc_measure,
    data_fingerprint,
    default_groups,
    gate_timelines,
    judge,
    lock_sha256,
    ratio_measure,
    setting_diffs,
)

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


def adapter_options(name: str, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """configs/adapter/<name>.yaml's ``options`` with ``overrides`` (``options.<key>=<value>``) on top."""
    import yaml

    opts_file = REPO_ROOT / "configs" / "adapter" / f"{name}.yaml"
    options: dict[str, Any] = dict((yaml.safe_load(opts_file.read_text()) or {}).get("options") or {}) \
        if opts_file.is_file() else {}
    return {**options, **dict(overrides)}


def _bless(name: str, path: Path, reason: str, options: Mapping[str, Any], tl: Any, users: Sequence[str],
           settings: Mapping[str, Any]) -> int:
    if not reason.strip():
        raise GateInputError(f"blessing needs a reason: widemem-bench regression adapter={name} write='why'")
    current = adapter_measure(name, options, tl, users)
    data = {"format": FORMAT, "blessed": {"reason": reason.strip(), "commit": git_commit(),
                                          "lock_sha256": lock_sha256(),
                                          "written": dt.datetime.now(dt.UTC).replace(tzinfo=None)
                                          .isoformat(timespec="seconds")},
            "evaluated": dict(settings), "users": list(users),
            "metrics": {k: v.to_json() for k, v in sorted(current.items())}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump(data), encoding="utf-8")
    print(f"wrote {path}")
    return 0


def adapter_gate(name: str, options: Mapping[str, Any], baseline: Path | None = None,
                 write: str | None = None) -> int:
    """Gate (or, with ``write``, bless) adapter ``name``: exit code 0 pass, 1 a change."""
    from widemem_bench.peers.adapters import ADAPTERS, plugin_names

    known = [*ADAPTERS, *plugin_names()]
    if name not in known:  # before the baseline: an unknown name is not "unblessed"
        raise GateInputError(f"adapter: unknown adapter {name!r} (known: {', '.join(known)})")
    path = baseline or adapter_baseline_path(name)
    tl = gate_timelines()
    users = sorted(tl.events["user_id"].unique())[:ADAPTER_USERS]
    settings = adapter_settings(name, options, tl, users)
    if write is not None:
        return _bless(name, path, write, options, tl, users, settings)
    if not path.is_file():
        raise GateInputError(f"no baseline {path} for adapter {name!r}; bless one with: "
                             f"widemem-bench regression adapter={name} write='REASON'")
    base = load_baseline(path)
    check_inputs(base, settings)
    print("evaluated: " + json.dumps({k: v for k, v in settings.items() if k != "gate_data"}, sort_keys=True))
    failures = setting_diffs(settings, base["evaluated"])
    table, bad, good = judge(adapter_measure(name, options, tl, users), base)
    for line in table:
        print(line)
    failures += [f"REGRESSION {b}" for b in bad] + [f"IMPROVED {g}" for g in good]
    if failures:
        print("GATE FAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"ok: {name} moved no gated metric beyond its minimal effect")
    return 0
