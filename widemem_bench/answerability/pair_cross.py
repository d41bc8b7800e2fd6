"""The ``pair`` resolver's cross-encoder, built and recorded (``make resolver-cross``): `tool`.

`pair_cross_train.build` trains it (cached by sha256 outside git); `tool` then makes its
onnxruntime int8 copy (`cross_quant.build_onnx_int8`), reads development figures (pair AUROC on
world N validation candidate pairs, which never train it) and writes the committed record
`engine.pair_cross.RECORD` with its pin. It lives on this floor, beside answerability v4's
cross-encoder, for the machinery it shares; the engine reads the built copy at run time
(`engine.pair_cross`) without importing this floor.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.answerability.pair_cross_train import (
    HAND_FILES,
    SETTINGS,
    WORLD_SETS,
    build,
    hand_pairs,
)

__all__ = ["HAND_FILES", "THRESHOLD", "WORLD_SETS", "dev_figures", "hand_pairs", "tool"]


# the update cut: p(superseded) above it retires the old fact. Chosen on development data
# (DESIGN_LOG R23: a model trained on six hand-written files, three unseen writer groups; at 0.95
# right / true facts lost 27/4, 11/0, 12/0 of 60/74/60 updates; at 0.9 36/10, 24/1, 19/2)
THRESHOLD = 0.95


def _auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, scores)) if 0 < labels.sum() < len(labels) else float("nan")


def dev_figures(scorer: Any) -> dict[str, Any]:
    """Pair AUROC and the negative and positive pairs above `THRESHOLD` on world N validation
    candidate pairs (development: world N validation never trains the model)."""
    from widemem_bench.engine.pair_fit import set_pairs

    pairs, n_facts, *_ = set_pairs((("world_n", ("validation",)),), int(SETTINGS["k"]))
    p = np.array([scorer.probability(x.old, x.new) for x in pairs])
    y = np.array([int(x.label == 1) for x in pairs])
    return {"set": "world N validation (development)", "pairs": len(pairs), "positive": int(y.sum()),
            "facts": int(n_facts), "pair_auroc": _auroc(p, y),
            "negatives_above_threshold": int(((p > THRESHOLD) & (y == 0)).sum()),
            "positives_above_threshold": int(((p > THRESHOLD) & (y == 1)).sum())}


def tool(cfg: dict[str, Any]) -> int:
    """``widemem-bench resolver_cross`` (``make resolver-cross``): build the pair cross-encoder and its
    onnxruntime int8 copy (cached), then write the committed record and its pin (``build_only=true``,
    as ``make bench`` runs it: build, write nothing; a build other than the record's is then refused
    by the resolver in one line)."""
    from widemem_bench.answerability.cross import _fp32
    from widemem_bench.answerability.cross_quant import ONNX_INT8_FILE, build_onnx_int8
    from widemem_bench.engine.pair_cross import RECORD, PairCrossScorer, load_session
    from widemem_bench.engine.pins import write_pinned

    t0 = time.perf_counter()
    folder = build(log=print)
    key = folder.name
    onnx = build_onnx_int8(key)
    if cfg.get("build_only"):  # `make bench`: the model and its copy, never the committed record
        print(f"pair cross-encoder: {folder}\nonnx int8 copy: {onnx}")
        return 0
    _, meta = _fp32(key)
    qmeta = json.loads((onnx / "manifest.json").read_text(encoding="utf-8"))
    record: dict[str, Any] = {"version": 1, "key": key, "onnx_folder": onnx.name,
                              "weights_sha256": meta["weights_sha256"],
                              "onnx_int8_weights_sha256": qmeta["weights_sha256"], "threshold": THRESHOLD,
                              "max_length": int(SETTINGS["max_length"]), "settings": SETTINGS,
                              "pairs": meta["pairs"], "training_seconds": meta["training_seconds"],
                              "machine": meta["machine"]}
    scorer = PairCrossScorer(record, *load_session(onnx / ONNX_INT8_FILE, folder))
    record["development"] = dev_figures(scorer)
    print(f"record written after {time.perf_counter() - t0:.1f} s")  # not in the record: a rerun rewrites it byte for byte
    out = Path(str(cfg.get("record") or RECORD))
    text = json.dumps(record, indent=1) + "\n"
    if out == RECORD:
        write_pinned(out, text)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    print(json.dumps(record["development"]))
    print(f"wrote {out}")
    return 0
