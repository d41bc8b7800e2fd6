"""Fitting the ``structure`` resolver's pair scorer (``make resolver-pair``): development
candidate pairs, the cross-subject refusal on them, the threshold out of fold by user, the
committed file. What the scorer is and reads: :mod:`.pair_model`."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .pair_heads import fit_heads
from .pair_model import (
    DEV_SETS,
    EMBEDDER,
    FEATURES,
    POINTER,
    SETTINGS,
    VERSION,
    Pair,
    _clean,
    _unit,
    _yes_cols,
    cross_subject,
    features,
)
from .pins import write_pinned
from .structure import Claim, FrameTable
from .trees import TreeModel, fit_trees


# ------------------------------------------------------------------ pairs
def _load(name: str, splits: Sequence[str]) -> Any:
    from widemem_bench.engine.structure_fit import _load as load_dev

    ev = load_dev(name, splits)
    if ev is None:
        raise FileNotFoundError(f"pair model: data set {name!r} is not built; run `make data`")
    return ev




def user_pairs(recs: Sequence[dict[str, Any]], vecs: np.ndarray, k: int, group0: int = 0,
               user: str = "") -> list[Pair]:
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
                            group0 + j, user))
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
    facts: Facts = {"text": [], "family": [], "subject": [], "multi": [], "world": []}
    n_facts = 0
    for name, splits in sets:
        ev = _load(name, splits)
        facts["text"] += [_clean(t) for t in ev["fact_stripped"]]
        facts["family"] += [str(a).split(":")[0] for a in ev["attribute"]]
        facts["subject"] += [str(a) for a in ev["subject"]]
        facts["multi"] += ["yes" if bool(a) else "no" for a in ev["multi_valued"]]
        facts["world"] += [name] * len(ev)
        texts = sorted({_clean(t) for t in ev["fact_stripped"]})
        arr = _unit(np.asarray(emb.encode(texts, kind="passage"), dtype=np.float32))
        vec.update(zip(texts, arr, strict=True))
        for uid, u in ev.groupby("user_id", sort=True):
            recs: list[dict[str, Any]] = u.sort_values(["at", "fact_id"], kind="stable").to_dict("records")  # type: ignore[assignment]
            pairs.extend(user_pairs(recs, np.stack([vec[_clean(r["fact_stripped"])] for r in recs]), k, n_facts,
                                    f"{name}/{uid}"))
            n_facts += len(recs)
    return pairs, n_facts, vec, facts




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


def false_updates(scores: np.ndarray, labels: np.ndarray, counted: np.ndarray, groups: np.ndarray,
                  cut: float) -> tuple[int, int]:
    """(false updates, true updates) the resolver makes at ``cut``: per new fact (``groups``)
    its best-scored pair, when above ``cut``; a false one is a counted (not a merge) negative."""
    best: dict[int, int] = {}
    for i, g in enumerate(groups.tolist()):
        if g not in best or scores[i] > scores[best[g]]:
            best[g] = i
    top = np.asarray(sorted(best.values()), dtype=int)
    hit = top[scores[top] > cut] if len(top) else top
    return int(((labels[hit] == 0) & counted[hit]).sum()), int((labels[hit] == 1).sum())


def choose_update_threshold(scores: np.ndarray, labels: np.ndarray, counted: np.ndarray, groups: np.ndarray,
                            n_facts: int, share: float) -> float:
    """The lowest cut-off (never below 0.5) whose :func:`false_updates` stay within ``share``
    of ``n_facts``: each new fact's best-scored pair decides, as in the resolver."""
    best: dict[int, int] = {}
    for i, g in enumerate(groups.tolist()):
        if g not in best or scores[i] > scores[best[g]]:
            best[g] = i
    top = np.asarray(list(best.values()), dtype=int)
    bad = top[(labels[top] == 0) & counted[top]] if len(top) else top
    return choose_threshold(scores[bad], np.zeros(len(bad), dtype=int), n_facts, share)


def world_threshold(scores: np.ndarray, labels: np.ndarray, counted: np.ndarray, groups: np.ndarray,
                    cross: np.ndarray, worlds: np.ndarray, n_facts: Mapping[str, int], share: float,
                    cross_share: float) -> float:
    """The lowest cut-off at which every world (``worlds``: each pair's) keeps its
    :func:`false_updates` within ``share`` of its facts and those across subjects (``cross``:
    the old fact is another person's) within ``cross_share``."""
    cuts = [0.5]
    for w, n in sorted(n_facts.items()):
        m = worlds == w
        cuts.append(choose_update_threshold(scores[m], labels[m], counted[m], groups[m], n, share))
        cuts.append(choose_update_threshold(scores[m], labels[m], counted[m] & cross[m], groups[m], n, cross_share))
    return max(cuts)


def user_fold(user: str, folds: int) -> int:
    return int(hashlib.sha256(user.encode("utf-8")).hexdigest(), 16) % folds


# ------------------------------------------------------------------ the Make target
def _counts(pairs: Sequence[Pair]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in pairs:
        out[p.kind] = out.get(p.kind, 0) + 1
    return dict(sorted(out.items()))


def _fit(x: np.ndarray, y: np.ndarray, settings: Mapping[str, Any]) -> TreeModel:
    return fit_trees(x, y, FEATURES, seed=int(settings["seed"]),
                     max_iter=int(settings["max_iter"]), max_leaf_nodes=int(settings["max_leaf_nodes"]),
                     learning_rate=float(settings["learning_rate"]),
                     min_samples_leaf=int(settings["min_samples_leaf"]),
                     l2_regularization=float(settings["l2_regularization"]))


def build(settings: dict[str, Any] | None = None, pointer: Path | None = None,
          progress: bool = True) -> dict[str, Any]:
    """``make resolver-pair``: the heads on the development facts; the pairs the gate and
    :func:`cross_subject` (heads out of fold) leave to the scorer; the threshold out of fold by
    user (trees fitted on the other folds score each held-out fold, pooled); the committed
    trees on every development user; the file. Merges (the same value reworded) are neither
    fitted nor counted as false positives."""
    from tqdm import tqdm

    from .structure import load_table

    settings = dict(settings or SETTINGS)
    k, seed, folds, cut = int(settings["candidate_k"]), int(settings["seed"]), int(settings["folds"]), \
        float(settings["subject_cut"])
    table = load_table()
    t0 = time.perf_counter()
    pairs, n_facts, vec, facts = set_pairs(DEV_SETS, k)
    read, ok = read_pairs(pairs, table)
    x_facts = np.stack([vec[t] for t in facts["text"]]).astype(np.float64)
    heads, oof = fit_heads(facts["text"], x_facts, facts, seed)
    parse_gated = [p for p, keep in zip(pairs, ok, strict=True) if keep]
    sub = oof["subject"]
    gated = [p for p in parse_gated
             if not cross_subject(sub[p.old], sub[p.new], read[p.new], read[p.old], cut, table)]
    x = features([(p.old, p.new) for p in gated], [p.group for p in gated], vec, read, table, oof, _yes_cols(heads))
    y = np.asarray([p.label for p in gated])
    counted = np.asarray([p.kind != "merge" for p in gated])
    groups = np.asarray([p.group for p in gated])
    fold = np.asarray([user_fold(p.user, folds) for p in gated])
    pooled = np.zeros(len(gated))
    for f in tqdm(range(folds), desc="pair scorer: user folds", disable=not progress):
        fit = (fold != f) & counted
        pooled[fold == f] = _fit(x[fit], y[fit], settings).predict_proba(x[fold == f])
    worlds = np.asarray([p.user.split("/")[0] for p in gated])
    cross = np.asarray([p.kind == "other" for p in gated])
    world_facts = {w: facts["world"].count(w) for w in sorted(set(facts["world"]))}
    thr = world_threshold(pooled, y, counted, groups, cross, worlds, world_facts,
                          float(settings["max_false_share"]), float(settings["max_cross_share"]))
    false, true = false_updates(pooled, y, counted, groups, thr)
    top_other = _cross_false(pooled, y, counted, groups, gated, thr)
    per_world = {}
    for w, n in world_facts.items():
        m = worlds == w
        f_w, t_w = false_updates(pooled[m], y[m], counted[m], groups[m], thr)
        c_w, _ = false_updates(pooled[m], y[m], counted[m] & cross[m], groups[m], thr)
        sup = len({p.group for p in pairs if p.label == 1 and p.user.split("/")[0] == w})
        per_world[w] = {"facts": n, "superseding_facts": sup, "true_updates": t_w, "false_updates": f_w,
                        "false_updates_across_subjects": c_w}
    model = _fit(x[counted], y[counted], settings)
    seconds = time.perf_counter() - t0
    data = hashlib.sha256(json.dumps([[p.old, p.new, p.label] for p, c in zip(gated, counted, strict=True)
                                      if c]).encode()).hexdigest()
    positives = len({p.group for p in pairs if p.label == 1})
    body = {
        "version": VERSION, "threshold": round(thr, 6), "settings": settings, "embedder": EMBEDDER,
        "frame_table_sha256": table.sha256, "train_pairs_sha256": data,
        "dev_sets": [f"{n}/{'+'.join(s) or 'all'}" for n, s in DEV_SETS],
        "dev_facts": n_facts, "candidate_pairs": _counts(pairs), "parse_gated_pairs": _counts(parse_gated),
        "fitted_pairs": _counts([p for p, c in zip(gated, counted, strict=True) if c]),
        "fit_seconds": round(seconds, 1), "threads": 1,
        "choose": {"facts": n_facts, "folds": folds, "unit": "user", "pairs_left_to_model": _counts(gated),
                   "superseding_facts": positives, "true_updates": true, "false_updates": false,
                   "false_updates_across_subjects": top_other,
                   "recall": round(true / positives, 4) if positives else None, "worlds": per_world},
        "heads": {name: h.to_dict() for name, h in heads.items()},
        "model": model.to_dict(),
    }
    text = json.dumps(body, sort_keys=True) + "\n"
    if pointer is None or pointer == POINTER:
        write_pinned(POINTER, text)  # the committed file and its sha256 pin, together
    else:
        pointer.write_text(text, "utf-8")
    return body


def _cross_false(scores: np.ndarray, labels: np.ndarray, counted: np.ndarray, groups: np.ndarray,
                 pairs: Sequence[Pair], cut: float) -> int:
    """Of :func:`false_updates` at ``cut``, those whose old fact is another person's."""
    best: dict[int, int] = {}
    for i, g in enumerate(groups.tolist()):
        if g not in best or scores[i] > scores[best[g]]:
            best[g] = i
    return sum(1 for i in best.values() if scores[i] > cut and labels[i] == 0 and counted[i]
               and pairs[i].kind == "other")


def tool(cfg: dict[str, Any]) -> int:
    """``widemem-bench resolver_pair`` (``make resolver-pair``): fit the pair scorer, write its file."""
    b = build(pointer=Path(str(cfg["pointer"])) if cfg.get("pointer") else None)
    c = b["choose"]
    print(f"pair scorer v{VERSION}: {sum(b['fitted_pairs'].values())} gated pairs fitted in {b['fit_seconds']} s "
          f"(seed {b['settings']['seed']}, one thread); threshold {b['threshold']} out of fold by user "
          f"({c['folds']} folds: recall {c['recall']}, {c['false_updates']} false updates of {c['facts']} facts, "
          f"{c['false_updates_across_subjects']} across subjects); wrote {cfg.get('pointer') or POINTER}")
    return 0
