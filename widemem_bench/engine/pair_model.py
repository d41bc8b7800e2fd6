"""The ``structure`` resolver's pair scorer (version 3): does a new fact supersede an old one?

Gradient-boosted trees (:mod:`.trees`, scikit-learn's ``HistGradientBoostingClassifier``,
fixed ``random_state``) over values computed once per text and cached, fitted on
DEVELOPMENT candidate pairs only (issue 26):

- fitting: world A train + validation, world C (every split), world N train;
- choosing the threshold: world N validation (never fitted on).

Features of an (old, new) pair (:func:`features`, the one implementation, used by the fit
and by the resolver):

- the resolver's own fixed MiniLM-L6 vectors of both texts (``minilm-l6``, the packaged
  weights, sha256 checked by the embedder; cached by the embedding cache; never the
  engine's swept embedder): u*v, |u-v|, their cosine, and how far the cosine is below the
  best of the same fact's candidates;
- the language layer's parse (:mod:`.structure` claims): how the owners relate
  (:data:`.structure.RELATIONS`), the rule's verdict (:func:`.structure.supersedes`), same
  frame / frame class / verb / possessed noun, the frame table's single-valued and
  several-valued flags, value types agree, the values' words equal / nested / overlapping,
  negation and additive cues on either side, how many claims each side has.

No word list: closed word classes (the parse's) and learned models only.

Pairs are what the engine shows a resolver: per fact its ``candidate_k`` nearest earlier
facts of the same user still true at that moment (cosine of the MiniLM vectors), plus the
fact it supersedes when that one is farther; label 1 is the gold ``supersedes`` link (a
several-valued attribute's second value is a "coexist" negative). Only the pairs the gate
leaves to the scorer (:func:`.structure.gate` is MODEL) are fitted and thresholded.

``make resolver-pair`` (:func:`build`) fits it in about a minute on one thread and writes the
committed ``files/pair_model.json`` (the trees, the threshold, the settings, the sets and the
pair counts it saw). :func:`load_scorer` refuses a missing or unreadable file in one line
naming ``make resolver-pair``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .pair_heads import Linear, fit_heads, head_row
from .pair_heads import predict as head_predict
from .structure import RELATIONS, Claim, FrameTable, relation, supersedes, types_agree
from .trees import TreeModel, fit_trees

FILES = Path(__file__).parent / "files"
POINTER = FILES / "pair_model.json"
VERSION = 3
TRAIN_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("timelines", ("train", "validation")),
    ("world_c", ()),
    ("world_n", ("train",)),
)
CHOOSE_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (("world_n", ("validation",)),)
EMBEDDER = "minilm-l6"
SETTINGS: dict[str, Any] = {
    "seed": 26, "candidate_k": 5, "max_iter": 200, "max_leaf_nodes": 15, "learning_rate": 0.05,
    "min_samples_leaf": 300, "l2_regularization": 5.0,
    # threshold: the lowest score whose false positives among world N validation's candidate
    # pairs the gate leaves to the scorer stay within this share of its facts (issue 26:
    # false updates <= 0.5 % of facts on a measuring set; half of it, for margin)
    "max_false_share": 0.0025,
}
REFUSE = "resolver structure: {why}; build it with `make resolver-pair`"
HEAD_FEATURES: tuple[str, ...] = ("family_agree", "family_same", "family_conf", "subject_agree", "subject_same",
                                  "user_old", "user_new", "user_gap", "multi_old", "multi_new", "multi_max")
STRUCT_FEATURES: tuple[str, ...] = (
    *(f"owner_{r}" for r in RELATIONS), "no_claim_new", "no_claim_old", "rule",
    "same_frame", "same_class", "same_verb", "same_noun", "both_single", "any_multi", "unknown_frame",
    "types_agree", "same_type", "words_equal", "words_nested", "words_jaccard",
    "negated_new", "negated_old", "additive_old", "claims_new", "claims_old", "words_new", "words_old",
)


@dataclass(frozen=True)
class Pair:
    old: str
    new: str
    label: int
    kind: str  # "supersede", "coexist" (same person, several-valued), "merge" (the same value reworded),
    # "same" (same person, another fact), "other" (another person)
    group: int = 0  # the new fact's index: pairs of one fact share it


# ------------------------------------------------------------------ features
def _verb(frame: str) -> str:
    return frame.split(":", 1)[-1].split(" ")[0]


def _claim_pair(n: Claim, o: Claim, table: FrameTable) -> list[float]:
    """The structure features of one pair of claims (the pair's are their maxima)."""
    same_class = table.same_frame(n.frame, o.frame)
    single = table.single_valued(n.frame) and table.single_valued(o.frame)
    union = n.words | o.words
    return [
        float(supersedes(n, o, table)), float(n.frame == o.frame), float(same_class),
        float(_verb(n.frame) == _verb(o.frame)), float(n.frame.split(":")[0] == o.frame.split(":")[0]),
        float(single), float(n.frame in table.multi or o.frame in table.multi),
        float(not (table.single_valued(n.frame) or n.frame in table.multi)),
        float(types_agree(n.type, o.type)), float(n.type == o.type), float(n.words == o.words),
        float(n.words <= o.words or o.words <= n.words), len(n.words & o.words) / max(1, len(union)),
    ]


def structure_row(new: tuple[Claim, ...], old: tuple[Claim, ...], table: FrameTable) -> list[float]:
    """The parse features of one (old, new) pair, in :data:`STRUCT_FEATURES` order."""
    rels = {relation(n, o) for n in new for o in old}
    best = [0.0] * 13
    for n in new:
        for o in old:
            best = [max(a, b) for a, b in zip(best, _claim_pair(n, o, table), strict=True)]
    return [
        *(float(r in rels) for r in RELATIONS), float(not new), float(not old), *best,
        float(any(c.negated for c in new)), float(any(c.negated for c in old)), float(any(c.additive for c in old)),
        float(len(new)), float(len(old)), float(sum(len(c.words) for c in new)), float(sum(len(c.words) for c in old)),
    ]


FEATURES: tuple[str, ...] = ("cosine", "cosine_gap", *HEAD_FEATURES, *STRUCT_FEATURES)


def features(pairs: Sequence[tuple[str, str]], groups: Sequence[int], vec: Mapping[str, np.ndarray],
             read: Mapping[str, tuple[Claim, ...]], table: FrameTable,
             heads: Mapping[str, Mapping[str, np.ndarray]], cols: tuple[int, int]) -> np.ndarray:
    """One row per (old, new) pair (:data:`FEATURES`): cosine, the gap to the best cosine
    among pairs of the same group (the same new fact), the heads' agreement
    (:func:`.pair_heads.head_row`; ``cols``: the "yes" columns of the user and multi heads),
    then :func:`structure_row`."""
    if not pairs:
        return np.zeros((0, len(FEATURES)))
    u = np.stack([vec[o] for o, _ in pairs]).astype(np.float64)
    v = np.stack([vec[n] for _, n in pairs]).astype(np.float64)
    cos = (u * v).sum(axis=1)
    g = np.asarray(groups)
    top = {int(k): float(cos[g == k].max()) for k in np.unique(g)}
    gap = np.asarray([top[int(k)] for k in g]) - cos
    hrows = np.asarray([head_row(heads, o, n, *cols) for o, n in pairs], dtype=np.float64)  # type: ignore[arg-type]
    rows = np.asarray([structure_row(read[n], read[o], table) for o, n in pairs], dtype=np.float64)
    return np.hstack([cos[:, None], gap[:, None], hrows, rows])


# ------------------------------------------------------------------ pairs
def _load(name: str, splits: Sequence[str]) -> Any:
    from widemem_bench.engine.structure_fit import _load as load_dev

    ev = load_dev(name, splits)
    if ev is None:
        raise FileNotFoundError(f"pair model: data set {name!r} is not built; run `make data`")
    return ev


def _clean(text: Any) -> str:
    return " ".join(str(text).split())


def user_pairs(recs: Sequence[dict[str, Any]], vecs: np.ndarray, k: int, group0: int = 0) -> list[Pair]:
    """One user's candidate pairs (facts in time order, ``vecs`` their unit vectors); the
    group of a pair is ``group0`` + the new fact's index."""
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
            out.append(Pair(_clean(o["fact_stripped"]), _clean(r["fact_stripped"]), label, _kind(o, r, label),
                            group0 + j))
    return out


def _kind(o: dict[str, Any], r: dict[str, Any], label: int) -> str:
    if label:
        return "supersede"
    if o["subject"] != r["subject"]:
        return "other"
    if o["attribute"] == r["attribute"] and str(o["value"]) == str(r["value"]):
        return "merge"  # a rewording of a value still true: replacing it loses nothing (neither fitted nor counted)
    fam = str(o["attribute"]).split(":")[0] == str(r["attribute"]).split(":")[0]
    return "coexist" if fam and (bool(o["multi_valued"]) or bool(r["multi_valued"])) else "same"


def _missing(x: Any) -> bool:
    import pandas as pd

    return x is None or bool(pd.isna(x))


Facts = dict[str, list[str]]  # "text" and each head's gold labels, one entry per fact


def set_pairs(sets: Sequence[tuple[str, Sequence[str]]], k: int
              ) -> tuple[list[Pair], int, dict[str, np.ndarray], Facts]:
    """(candidate pairs, facts, text -> unit vector, the facts' texts and head labels) over
    ``sets``, users in sorted order."""
    from widemem_bench.embedders import load_embedder

    emb = load_embedder(EMBEDDER, progress=False)
    pairs: list[Pair] = []
    vec: dict[str, np.ndarray] = {}
    facts: Facts = {"text": [], "family": [], "subject": [], "multi": []}
    n_facts = 0
    for name, splits in sets:
        ev = _load(name, splits)
        facts["text"] += [_clean(t) for t in ev["fact_stripped"]]
        facts["family"] += [str(a).split(":")[0] for a in ev["attribute"]]
        facts["subject"] += [str(a) for a in ev["subject"]]
        facts["multi"] += ["yes" if bool(a) else "no" for a in ev["multi_valued"]]
        texts = sorted({_clean(t) for t in ev["fact_stripped"]})
        arr = _unit(np.asarray(emb.encode(texts, kind="passage"), dtype=np.float32))
        vec.update(zip(texts, arr, strict=True))
        for _, u in ev.groupby("user_id", sort=True):
            recs: list[dict[str, Any]] = u.sort_values(["at", "fact_id"], kind="stable").to_dict("records")  # type: ignore[assignment]
            pairs.extend(user_pairs(recs, np.stack([vec[_clean(r["fact_stripped"])] for r in recs]), k, n_facts))
            n_facts += len(recs)
    return pairs, n_facts, vec, facts


def _unit(a: np.ndarray) -> np.ndarray:
    return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)


def read_pairs(pairs: Sequence[Pair], table: FrameTable) -> tuple[dict[str, tuple[Claim, ...]], list[bool]]:
    """(text -> claims, whether the gate leaves each pair to the scorer), from cached parses."""
    from widemem_bench.engine.structure import MODEL, claims, gate, parses
    from widemem_bench.language import parse_many

    texts = sorted({p.old for p in pairs} | {p.new for p in pairs})
    parsed = dict(zip(texts, parse_many(texts), strict=True))
    read = {t: claims(parsed[t], table.user_aliases, table.user_nouns) for t in texts}
    ok = [parses(parsed[p.new]) and gate(read[p.new], read[p.old], table) == MODEL for p in pairs]
    return read, ok


def choose_threshold(scores: np.ndarray, labels: np.ndarray, n_facts: int, share: float) -> float:
    """The lowest cut-off (a pair supersedes when its score is above it) that lets at most
    ``share`` of ``n_facts`` negatives through, and never below 0.5."""
    neg = np.sort(scores[labels == 0])[::-1]
    allowed = int(share * n_facts)
    cut = float(neg[allowed]) if allowed < len(neg) else 0.0
    return max(0.5, cut)


# ------------------------------------------------------------------ scoring
def _yes_cols(heads: Mapping[str, Linear]) -> tuple[int, int]:
    return heads["subject"].classes.index("user"), heads["multi"].classes.index("yes")


def same_weights(embedder: Any) -> bool:
    """Whether ``embedder`` (or what it wraps, by registry name) runs :data:`EMBEDDER`'s weights."""
    from widemem_bench.embedders import registry

    try:
        mine, theirs = registry.get_spec(EMBEDDER), registry.get_spec(str(getattr(embedder, "name", "")))
    except (KeyError, ValueError):
        return False
    return bool(mine.sha256) and all(getattr(mine, f) == getattr(theirs, f) for f in
                                     ("sha256", "model_id", "pooling", "query_prefix", "passage_prefix"))


class PairScorer:
    """P(new supersedes old) for the pairs of one ``decide`` call, in one array call.
    Vectors come from the resolver's own MiniLM (``embedder``), each text encoded once
    (an in-process memo in front of the on-disk embedding cache), its heads computed once."""

    def __init__(self, model: TreeModel, heads: Mapping[str, Linear], threshold: float, table: FrameTable,
                 embedder: Any = None) -> None:
        self.model = model
        self.heads = dict(heads)
        self.threshold = float(threshold)
        self.table = table
        self._emb = embedder
        self._vec: dict[str, np.ndarray] = {}
        self._head: dict[str, dict[str, np.ndarray]] = {h: {} for h in self.heads}
        self._cols = _yes_cols(self.heads)

    @property
    def embedder(self) -> Any:
        if self._emb is None:
            from widemem_bench.embedders import load_embedder

            self._emb = load_embedder(EMBEDDER, progress=False)
        return self._emb

    def share_embedder(self, embedder: Any) -> None:
        """Use ``embedder`` (the engine's) when it runs the scorer's own MiniLM weights: the
        registry entries' weights sha256, pooling and prefixes agree (``minilm-l6`` and
        ``minilm-l6-onnx``: vectors equal to ~2e-7). Any other embedder is left alone."""
        if same_weights(embedder):
            self._emb = embedder

    def prefetch(self, texts: Sequence[str]) -> None:
        """Encode ``texts`` not seen yet in one call (a bulk loader's lookahead), and their heads."""
        todo = sorted({_clean(t) for t in texts} - self._vec.keys())
        if not todo:
            return
        arr = _unit(np.asarray(self.embedder.encode(todo, kind="passage"), dtype=np.float32))
        self._vec.update(zip(todo, arr, strict=True))
        for name, vals in head_predict(self.heads, todo, arr.astype(np.float64)).items():
            self._head[name].update(vals)

    def score(self, pairs: Sequence[tuple[str, str]], groups: Sequence[int],
              read: Mapping[str, tuple[Claim, ...]]) -> list[float]:
        if not pairs:
            return []
        self.prefetch([t for p in pairs for t in p])
        clean = [(_clean(o), _clean(n)) for o, n in pairs]
        cread = {_clean(t): c for t, c in read.items()}
        x = features(clean, groups, self._vec, cread, self.table, self._head, self._cols)
        if len(x) <= 64:  # a few rows: the plain-Python walk beats numpy's per-depth passes
            return [self.model.prob_one(row) for row in x]
        return [float(s) for s in self.model.predict_proba(x)]


def read_pointer(path: Path | None = None) -> dict[str, Any]:
    path = path or POINTER
    if not path.is_file():
        raise FileNotFoundError(REFUSE.format(why=f"no pair model at {path}"))
    try:
        out: dict[str, Any] = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(REFUSE.format(why=f"pair model {path} is unreadable ({exc})")) from exc
    if out.get("version") != VERSION or "model" not in out or "heads" not in out:
        raise ValueError(REFUSE.format(why=f"pair model {path} is not version {VERSION}"))
    return out


def load_scorer(path: Path | None = None, table: FrameTable | None = None) -> PairScorer:
    """The committed pair scorer; a one-line error when it is missing, unreadable, damaged or
    another version, or fitted against another frame table."""
    from .structure import load_table

    ptr = read_pointer(path)
    table = table if table is not None else load_table()
    try:
        model = TreeModel.from_dict(ptr["model"])
        heads = {name: Linear.from_dict(d) for name, d in ptr["heads"].items()}
        _yes_cols(heads)
        if tuple(model.features) != FEATURES:
            raise ValueError("its features are not this code's")
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(REFUSE.format(why=f"pair model {path or POINTER} is damaged ({exc})")) from exc
    if table.sha256 and ptr.get("frame_table_sha256") not in (None, table.sha256):
        raise ValueError(REFUSE.format(why="pair model was fitted with another frame table"))
    return PairScorer(model, heads, float(ptr["threshold"]), table)


# ------------------------------------------------------------------ the Make target
def _counts(pairs: Sequence[Pair]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in pairs:
        out[p.kind] = out.get(p.kind, 0) + 1
    return dict(sorted(out.items()))


def _gated(sets: Sequence[tuple[str, Sequence[str]]], k: int, table: FrameTable) -> Any:
    """(gated pairs, vectors, claims, facts, counts of every candidate pair, facts' count)."""
    pairs, n_facts, vec, facts = set_pairs(sets, k)
    read, ok = read_pairs(pairs, table)
    gated = [p for p, keep in zip(pairs, ok, strict=True) if keep]
    return gated, vec, read, facts, _counts(pairs), n_facts


def build(settings: dict[str, Any] | None = None, pointer: Path | None = None) -> dict[str, Any]:
    """``make resolver-pair``: the heads on the development facts, the trees on the
    development pairs the gate leaves to the scorer (heads out of fold), the threshold on
    world N validation's pairs (heads fitted on all), and the committed file. Merges (the
    same value reworded) are neither fitted nor counted as false positives."""
    from .structure import load_table

    settings = dict(settings or SETTINGS)
    k, seed = int(settings["candidate_k"]), int(settings["seed"])
    table = load_table()
    t0 = time.perf_counter()
    train, vec, read, facts, all_train, n_train_facts = _gated(TRAIN_SETS, k, table)
    x_facts = np.stack([vec[t] for t in facts["text"]]).astype(np.float64)
    heads, oof = fit_heads(facts["text"], x_facts, facts, seed)
    fit = [p for p in train if p.kind != "merge"]
    x = features([(p.old, p.new) for p in fit], [p.group for p in fit], vec, read, table, oof, _yes_cols(heads))
    model = fit_trees(x, np.asarray([p.label for p in fit]), FEATURES, seed=seed,
                      max_iter=int(settings["max_iter"]), max_leaf_nodes=int(settings["max_leaf_nodes"]),
                      learning_rate=float(settings["learning_rate"]),
                      min_samples_leaf=int(settings["min_samples_leaf"]),
                      l2_regularization=float(settings["l2_regularization"]))
    seconds = time.perf_counter() - t0
    val, vvec, vread, _, _, n_val_facts = _gated(CHOOSE_SETS, k, table)
    vtexts = sorted(vvec)
    vheads = head_predict(heads, vtexts, np.stack([vvec[t] for t in vtexts]).astype(np.float64))
    xv = features([(p.old, p.new) for p in val], [p.group for p in val], vvec, vread, table, vheads,
                  _yes_cols(heads))
    scores = model.predict_proba(xv)
    labels = np.asarray([p.label for p in val])
    counted = np.asarray([p.kind != "merge" for p in val])
    cut = choose_threshold(scores[counted], labels[counted], n_val_facts, float(settings["max_false_share"]))
    hit = scores > cut
    data = hashlib.sha256(json.dumps([[p.old, p.new, p.label] for p in fit]).encode()).hexdigest()
    body = {
        "version": VERSION, "threshold": round(cut, 6), "settings": settings, "embedder": EMBEDDER,
        "frame_table_sha256": table.sha256, "train_pairs_sha256": data,
        "train_sets": [f"{n}/{'+'.join(s) or 'all'}" for n, s in TRAIN_SETS],
        "choose_sets": [f"{n}/{'+'.join(s) or 'all'}" for n, s in CHOOSE_SETS],
        "train_facts": n_train_facts, "candidate_pairs": all_train, "fitted_pairs": _counts(fit),
        "fit_seconds": round(seconds, 1), "threads": 1,
        "choose": {"facts": n_val_facts, "pairs_left_to_model": _counts(val), "positives": int(labels.sum()),
                   "recall": round(float(hit[labels == 1].mean()), 4) if labels.any() else None,
                   "false_positives": int((hit & (labels == 0) & counted).sum())},
        "heads": {name: h.to_dict() for name, h in heads.items()},
        "model": model.to_dict(),
    }
    (pointer or POINTER).write_text(json.dumps(body, sort_keys=True) + "\n", "utf-8")
    return body


def tool(cfg: dict[str, Any]) -> int:
    """``widemem-bench resolver_pair`` (``make resolver-pair``): fit the pair scorer, write its file."""
    b = build(pointer=Path(str(cfg["pointer"])) if cfg.get("pointer") else None)
    print(f"pair scorer v{VERSION}: {sum(b['fitted_pairs'].values())} gated pairs fitted in {b['fit_seconds']} s "
          f"(seed {b['settings']['seed']}, one thread); threshold {b['threshold']} on world N validation "
          f"(recall {b['choose']['recall']}, {b['choose']['false_positives']} false of {b['choose']['facts']} facts); "
          f"wrote {cfg.get('pointer') or POINTER}")
    return 0
