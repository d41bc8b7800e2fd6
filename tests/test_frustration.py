"""frustration: the rephrase detector and the spoken-frustration scoring on hand-made cases."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _embedders import make_test_embedder
from _runcfg import run_and_render, tiny_cfg

from widemem_bench.engine import EngineConfig
from widemem_bench.engine.rephrase import (
    RephraseDetector,
    fit_threshold,
    precision_recall,
    prior_similarity,
    threshold_for,
)
from widemem_bench.experiments.frustration import score_quiet, score_spoken

T0 = dt.datetime(2025, 3, 1, 9)


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float64)
    return v / np.linalg.norm(v)


def test_prior_similarity_looks_back_inside_session_and_window():
    a, a2, b = _unit(1, 0, 0), _unit(0.95, 0.3, 0), _unit(0, 0, 1)
    vecs = np.stack([a, a2, b, a, a])
    sessions = ["s1", "s1", "s1", "s2", "s1"]
    minutes = [0, 2, 4, 3, 200]  # the last one re-asks q0 but far outside a 60-minute window
    score = prior_similarity(vecs, sessions, minutes, window_minutes=60)
    assert np.isneginf(score[0])  # nothing before it
    assert score[1] == pytest.approx(float(a @ a2))
    assert score[2] == pytest.approx(max(float(b @ a), float(b @ a2)))
    assert np.isneginf(score[3])  # alone in its session
    assert np.isneginf(score[4])  # only older than the window
    det = RephraseDetector(threshold=0.9, window_minutes=60)
    assert det.flags(vecs, sessions, minutes).tolist() == [False, True, False, False, False]
    assert det.frustrated_sessions(vecs, sessions, minutes) == {"s1"}
    assert RephraseDetector(threshold=0.9, min_repeats=2).frustrated_sessions(vecs, sessions, minutes) == set()


def test_same_minute_uses_input_order_and_rejects_bad_arguments():
    v = np.stack([_unit(1, 0), _unit(1, 0.1)])
    assert np.isfinite(prior_similarity(v, ["s", "s"], [5, 5])[1])
    assert np.isneginf(prior_similarity(v, ["s", "s"], [5, 5])[0])
    with pytest.raises(ValueError, match="window_minutes"):
        prior_similarity(v, ["s", "s"], [0, 1], window_minutes=0)
    with pytest.raises(ValueError, match="sessions/minutes"):
        prior_similarity(v, ["s"], [0, 1])
    with pytest.raises(ValueError, match="threshold"):
        RephraseDetector(threshold=1.5)
    with pytest.raises(ValueError, match="min_repeats"):
        RephraseDetector(min_repeats=0)


def test_fit_threshold_and_precision_recall():
    scores = np.array([-np.inf, 0.2, 0.55, 0.7, 0.8, 0.9])
    labels = np.array([False, False, False, True, True, True])
    thr = fit_threshold(scores, labels)
    assert 0.55 < thr <= 0.7
    assert precision_recall(scores >= thr, labels) == (1.0, 1.0)
    assert fit_threshold(scores, np.zeros(6, bool)) == float("inf")
    p, r = precision_recall([True, True, False, False], [True, False, True, False])
    assert (p, r) == (0.5, 0.5)
    assert np.isnan(precision_recall([False], [False])[0])
    assert threshold_for("no-such-embedder") == threshold_for("another-unknown")


def _events() -> pd.DataFrame:
    def ev(fid: str, day: int, kind: str, utter: str, fact: str | None, attr: str | None, value: str | None,
           gold: str | None = None) -> dict:
        return {"fact_id": fid, "user_id": "u1", "split": "train", "at": T0 + dt.timedelta(days=day),
                "event_kind": kind, "utterance": utter, "fact_stripped": fact, "importance": 8,
                "subject": "user" if attr else None, "attribute": attr, "value": value, "gold_action": gold}

    return pd.DataFrame([
        ev("f0", 0, "move", "Home for me is San Francisco.", "lives in San Francisco", "city", "San Francisco"),
        ev("f1", 3, "trivial", "Had a poke bowl.", "had a poke bowl for lunch", "lunch", "a poke bowl"),
        ev("f2", 30, "frustration", "I told you I moved to Boston!", "lives in Boston", "city", "Boston",
           gold="recover_and_pin"),
        ev("f3", 40, "frustration", "I told you this already!", None, None, None, gold="apologize_and_ask"),
        ev("f4", 50, "frustration", "I told you I live in Boston!", "lives in Boston", "city", "Boston",
           gold="reassure"),
    ])


def test_spoken_frustration_actions_and_pin():
    events = _events()
    questions = pd.DataFrame(columns=["question_id", "user_id", "split", "asked_at", "text", "kind",
                                      "gold_action", "subject", "attribute", "gold_value"])
    out = score_spoken(events, questions, make_test_embedder(), EngineConfig(resolver="append"))
    by = out.set_index("item_id")
    # No memory says Boston before f2: the restated fact is pulled out and pinned.
    assert by.loc["f2", "action"] == "recover_and_pin" and by.loc["f2", "pinned"]
    assert by.loc["f2", "correct"] == 1.0
    assert by.loc["f2", "answered"] in (0.0, 1.0)
    # Nothing to pull out of a vague complaint.
    assert by.loc["f3", "action"] == "apologize_and_ask" and not by.loc["f3", "pinned"]
    assert np.isnan(by.loc["f3", "answered"])
    # Each item is replayed on its own: f2's pin and fact are not in f4's store, so
    # the hash embedder's low cosine cannot reach HIGH and the fact is pinned again.
    assert by.loc["f4", "action"] in ("recover_and_pin", "reassure")
    assert set(out["action"]) <= {"reassure", "recover_and_pin", "apologize_and_ask", "none"}


def test_quiet_scoring_labels_identical_reasks_apart():
    q = pd.DataFrame({
        "question_id": [f"q{i}" for i in range(6)], "user_id": ["u1"] * 3 + ["u2"] * 3,
        "split": ["train"] * 3 + ["holdout"] * 3,
        "asked_at": [T0, T0 + dt.timedelta(minutes=2), T0 + dt.timedelta(minutes=10)] * 2,
        "session_id": ["a"] * 3 + ["b"] * 3,
        "text": ["where do I live?", "where do I live now?", "what's my bank?",
                 "what's my bank?", "what's my bank?", "where do I live?"],
        "quiet_frustration": [False, True, False, False, False, False],
    })
    out, thr = score_quiet(q, make_test_embedder(), window_minutes=60)
    assert np.isfinite(thr)
    assert bool(out.set_index("question_id").loc["q1", "flag"])
    assert out.set_index("question_id").loc["q4", "identical_reask"]


def test_experiment_end_to_end_on_a_tiny_timeline(tmp_path: Path):
    cfg = tiny_cfg(tmp_path, 3, {"resolvers": ["append"], "n_boot": 50, "window_sweep": [60], "cost_store_size": 60})
    rec, md = run_and_render("frustration", cfg, tmp_path)
    names = {m["metric"] for m in rec["metrics"]}
    assert {"action_accuracy", "rephrase_precision", "rephrase_recall", "auto_mode_agreement",
            "search_ms_auto", "search_ms_balanced", "search_ms_auto_store60", "candidates_balanced_store60"} <= names
    assert md.startswith("## Frustration")
    assert (tmp_path / "reports" / "figures" / "auto_mode.png").stat().st_size > 0
