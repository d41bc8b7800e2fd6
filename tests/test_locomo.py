"""LoCoMo loader and the `locomo` experiment.

Fast tier: the loader on the shared file (counts, sha256, labels), the text helpers, and
the experiment on a two-conversation slice with the deterministic `hash-test` embedder.
`models` tier: the full file with MiniLM, which must reproduce the issue's baseline.
"""

from __future__ import annotations

import datetime as dt
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from widemem_bench.evaluation import locomo_scores as sc
from widemem_bench.experiments import locomo as lx
from widemem_bench.external import locomo as ll
from widemem_bench.metrics import abstention
from widemem_bench.metrics.rates import auroc_ranksum
from widemem_bench.reports.sections import locomo as rs

ROOT = Path(__file__).resolve().parents[1]
DATA = ll.DEFAULT_LOCOMO_PATH
needs_data = pytest.mark.skipif(
    not DATA.is_file(), reason=f"LoCoMo not present at {DATA} (get snap-research/LoCoMo data/locomo10.json)"
)


@pytest.fixture(scope="module")
def locomo() -> ll.LoCoMo:
    return ll.load_locomo()


# ---------------------------------------------------------------------------- loader


@needs_data
def test_loader_counts_sha_and_labels(locomo: ll.LoCoMo) -> None:
    assert locomo.sha256 == ll.LOCOMO_SHA256
    assert len(locomo.conversations) == 10
    assert len(locomo.turns) == 5882
    assert len(locomo.questions) == 1986
    per_cat = locomo.questions["category"].value_counts().sort_index().to_dict()
    assert per_cat == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
    q = locomo.questions
    assert (q["answerable"] == q["category"].isin([1, 2, 3, 4])).all()
    assert set(q["category_name"]) == set(ll.CATEGORY_NAMES.values())
    assert q.loc[q["category"] == 4, "category_name"].eq("single-hop").all()  # LoCoMo's own mapping
    assert locomo.conversations["n_sessions"].sum() == 272
    # Every evidence id names a real turn of its own conversation.
    known = set(zip(locomo.turns["sample_id"], locomo.turns["dia_id"], strict=True))
    for sid, ev in zip(q["sample_id"], q["evidence"], strict=True):
        assert all((sid, e) in known for e in ev)
    # The malformed entries of the file are repaired, not dropped: at most the 4 empty lists
    # and the bare "D" stay without evidence.
    assert (q["evidence"].map(len) == 0).sum() <= 5


@needs_data
def test_turn_memories_carry_speaker_and_session_date(locomo: ll.LoCoMo) -> None:
    mem = locomo.memories("turn")
    assert list(mem.columns) == list(ll.MEMORY_COLUMNS)
    first = mem.iloc[0]
    assert first["content"] == f"{first['speaker']}: {first['text']}"
    assert first["session_date"] == dt.datetime(2023, 5, 8, 13, 56)
    assert mem.groupby("sample_id")["turn"].apply(lambda s: (np.diff(s) == 1).all()).all()
    assert set(mem["speaker"]) >= {"Caroline", "Melanie"}


@needs_data
def test_select_slice_and_unknown_conversation(locomo: ll.LoCoMo) -> None:
    one = locomo.select(["conv-26"])
    assert one.sample_ids == ["conv-26"]
    assert len(one.questions) == 199 and len(one.turns) == 419
    assert one.speakers("conv-26") == ("Caroline", "Melanie")
    with pytest.raises(ValueError, match="sample_ids"):
        locomo.select(["conv-999"])


@needs_data
def test_rule_extractor_memories(locomo: ll.LoCoMo) -> None:
    pytest.importorskip("widemem_bench.engine.extractors")
    one = locomo.select(["conv-26"])
    facts = one.memories("rule")
    assert len(facts) > len(one.turns) // 2
    assert set(facts["dia_id"]) <= set(one.turns["dia_id"])
    assert facts["content"].str.match(r"^(Caroline|Melanie): ").all()
    with pytest.raises(ValueError, match="form"):
        one.memories("summary")


def test_missing_file_and_wrong_hash_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="snap-research/LoCoMo") as err:
        ll.load_locomo(tmp_path / "nope.json")
    assert "\n" not in str(err.value)
    fake = tmp_path / "locomo10.json"
    fake.write_text("[]")
    with pytest.raises(ValueError, match="sha256") as err:
        ll.load_locomo(fake)
    assert "\n" not in str(err.value)
    assert len(ll.load_locomo(fake, verify=False).questions) == 0


def test_parse_session_date_and_evidence() -> None:
    assert ll.parse_session_date("1:56 pm on 8 May, 2023") == dt.datetime(2023, 5, 8, 13, 56)
    assert ll.parse_session_date("12:09 am on 13 September,  2023") == dt.datetime(2023, 9, 13, 0, 9)
    with pytest.raises(ValueError, match="session_date"):
        ll.parse_session_date("yesterday")
    assert ll.normalise_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D", "D8:6"]) == (
        "D8:6", "D9:17", "D11:26", "D30:5",
    )


# ---------------------------------------------------------------------------- helpers


def test_text_helpers() -> None:
    speakers = ("Caroline", "Melanie")
    assert sc.named_speakers("What did Caroline's mom say?", speakers) == ["Caroline"]
    assert sc.named_speakers("Do Caroline and Melanie paint?", speakers) == ["Caroline", "Melanie"]
    assert sc.strip_speakers("What is Caroline's job?", speakers) == "What is job?"
    assert sc.self_ownership("I went to my class") > 0.75
    assert sc.self_ownership("you went to your class") < 0.25
    assert sc.self_ownership("nice weather") == 0.5


def test_bm25_ranks_the_matching_doc_first() -> None:
    docs = ["I adopted a puppy named Max", "went hiking in the hills", "Max is my favourite puppy toy"]
    m = sc.bm25_matrix(["puppy Max", "hiking", "unrelated words"], docs)
    assert m.shape == (3, 3)
    assert m[0, 1] == 0 and m[0, 0] > 0 and m[0, 2] > 0
    assert m[1].argmax() == 1
    assert (m[2] == 0).all()


def test_fast_auroc_and_share_at_recall() -> None:
    rng = np.random.default_rng(0)
    s = rng.integers(0, 6, 400).astype(float)  # many ties
    y = rng.random(400) < 0.7
    assert auroc_ranksum(s, y) == pytest.approx(roc_auc_score(y, s))
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.95, 0.1, 0.65])
    ans = np.array([True, True, True, True, True, False, False, False])
    # 80% recall keeps answerable scores >= 0.6: the adversarial 0.95 and 0.65 pass, 0.1 not.
    assert abstention.adversarial_share_at_recall(scores, ans, 0.8) == pytest.approx(2 / 3)
    # Held out: each group's cut-off comes from the other group's answerable scores only.
    groups = np.array(["a"] * 4 + ["b"] * 4)
    s2 = np.array([0.9, 0.8, 0.1, 0.2, 0.5, 0.6, 0.95, 0.05])
    y2 = np.array([True, True, False, False, True, True, False, False])
    rec, adv = abstention.heldout_share_at_recall(s2, y2, groups, 0.9)
    # a's cut = min(b's answerable) = 0.5; b's cut = 0.8: a passes 0.9, 0.8; b passes only 0.95.
    assert rec == pytest.approx(2 / 4) and adv == pytest.approx(1 / 4)


def test_resolve_params_rejects_bad_keys() -> None:
    assert lx.resolve_params({})["memory_form"] == "turn"
    with pytest.raises(ValueError, match="params: unknown"):
        lx.resolve_params({"params": {"bogus": 1}})
    with pytest.raises(ValueError, match=r"params\.memory_form"):
        lx.resolve_params({"params": {"memory_form": "summary"}})
    with pytest.raises(ValueError, match=r"params\.recall_target"):
        lx.resolve_params({"params": {"recall_target": 1.5}})


def _toy() -> ll.LoCoMo:
    """Two tiny conversations where the adversarial question names the wrong speaker."""
    raw = []
    for sid, (a, b) in {"toy-1": ("Alice", "Bob"), "toy-2": ("Carol", "Dan")}.items():
        turns = [
            {"speaker": a, "dia_id": "D1:1", "text": "I adopted a puppy named Biscuit last week"},
            {"speaker": b, "dia_id": "D1:2", "text": "Wow, you adopted a puppy! Biscuit is a cute name"},
            {"speaker": b, "dia_id": "D1:3", "text": "I started pottery classes on Tuesday evenings"},
            {"speaker": a, "dia_id": "D1:4", "text": "Pottery classes sound fun, enjoy your Tuesday evenings"},
            {"speaker": a, "dia_id": "D1:5", "text": "I ran a marathon in Boston in April"},
            {"speaker": b, "dia_id": "D1:6", "text": "Running a marathon in Boston is amazing, congrats to you"},
        ]
        qa = [
            {"question": f"What is the name of {a}'s puppy?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
            {"question": f"When does {b} go to pottery classes?", "answer": "Tuesday", "evidence": ["D1:3"], "category": 2},
            {"question": f"Where did {a} run a marathon?", "answer": "Boston", "evidence": ["D1:5"], "category": 4},
            {"question": f"What is the name of {b}'s puppy?", "adversarial_answer": "Biscuit", "evidence": ["D1:1"], "category": 5},
            {"question": f"When does {a} go to pottery classes?", "adversarial_answer": "Tuesday", "evidence": ["D1:3"], "category": 5},
        ]
        raw.append({
            "sample_id": sid,
            "conversation": {"speaker_a": a, "speaker_b": b,
                             "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns},
            "qa": qa,
        })
    return ll._parse(raw, Path("toy.json"), "0" * 64)


def test_ownership_reads_who_the_evidence_belongs_to() -> None:
    from widemem_bench.embedders import load_embedder

    toy = _toy()
    pq = sc.question_features(toy, load_embedder("hash-test", cache=False))
    own = pq.set_index(["sample_id", "qa_index"])["ownership"]
    for sid in ("toy-1", "toy-2"):
        answerable = [own[(sid, i)] for i in (0, 1, 2)]
        adversarial = [own[(sid, i)] for i in (3, 4)]
        assert min(answerable) > 0.5 > max(adversarial), (answerable, adversarial)
    # The name-free hybrid search puts the evidence (or the reply echoing it) at the top.
    assert pq.loc[pq["qa_index"] == 0, "rank_hybrid"].max() <= 2


# ---------------------------------------------------------------------------- the experiment


@needs_data
def test_experiment_on_a_two_conversation_slice(locomo: ll.LoCoMo, tmp_path: Path) -> None:
    from widemem_bench.embedders import load_embedder

    emb = load_embedder("hash-test", cache=False)
    cfg = {"seed": 0, "params": {"conversations": ["conv-26", "conv-30"], "n_boot": 50}}
    res = lx.run_locomo(cfg, embedders=[emb], data=locomo)
    rs.write_locomo_report(res, tmp_path)
    t = res["tables"]
    pq = t["per_query"]
    assert len(pq) == 199 + 105
    assert set(pq["sample_id"]) == {"conv-26", "conv-30"}
    # Every method scored every question; the leave-one-conversation-out model too. hash-test
    # has no timeline calibration, so the answerability scorer is absent, not faked.
    methods = [m for m in lx.METHODS if m != "answerability"]
    assert "answerability" not in pq
    assert not pq[methods].isna().any().any()
    au = t["auroc"].set_index("method")
    assert set(au.index) == set(methods)
    assert ((au["auroc_lo"] <= au["auroc"]) & (au["auroc"] <= au["auroc_hi"])).all()
    # top1_cosine of the table is the plain AUROC of the per-query column.
    assert au.loc["top1_cosine", "auroc"] == pytest.approx(roc_auc_score(pq["answerable"], pq["top1_cosine"]))
    ret = t["retrieval"]
    assert set(ret["category"]) == {1, 2, 3, 4, 5}
    assert ((ret["hit@1"] <= ret["hit@5"]) & (ret["hit@5"] <= ret["hit@10"])).all()
    bands = t["bands"]
    shares = bands[["none", "low", "moderate", "high"]].sum(axis=1)
    assert np.allclose(shares, 1.0)
    assert {"widemem"} < set(bands["setting"])
    # hash-test is not MiniLM: widemem's fallback triple applies.
    thr = t["thresholds"]
    assert tuple(thr.loc[thr["setting"] == "widemem", ["high", "moderate", "low"]].iloc[0]) == (0.6, 0.5, 0.3)
    assert {m["metric"] for m in res["metrics"]} >= {"auroc_adversarial", "evidence_hit@10"}
    md = (tmp_path / "locomo.md").read_text()
    assert "AUROC" in md and "hit@10" in md
    for png in ("locomo_hit10.png", "locomo_auroc.png", "locomo_bands.png"):
        assert (tmp_path / "figures" / png).stat().st_size > 1000
    # The reports/README.md section rebuilds the same tables from a run folder's parquet files.
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for name, df in t.items():
        if name != "per_query" and len(df):
            df.to_parquet(run_dir / f"{name}.parquet", index=False)
    text = rs.section(pd.DataFrame(), [{"run_dir": str(run_dir), "dataset": res["data"]}], tmp_path / "fig2")
    assert "| hash-test | top1_cosine |" in text and (tmp_path / "fig2" / "locomo_auroc.png").is_file()


@needs_data
def test_sensitivity_and_forms_are_parameters_of_the_run(locomo: ll.LoCoMo, tmp_path: Path) -> None:
    """What experiments/locomo/{sensitivity,make_report}.py did: params.sensitivity and
    params.compare_forms add their tables to the record, and the section renders them."""
    from widemem_bench.embedders import load_embedder

    emb = load_embedder("hash-test", cache=False)
    cfg = {"seed": 0, "params": {"conversations": ["conv-30"], "n_boot": 20, "sensitivity": [],
                                 "sensitivity_temperatures": [0.05, 0.1], "sensitivity_bm25_weights": [0.0, 0.03],
                                 "compare_forms": True}}
    t = lx.run_locomo(cfg, embedders=[emb], data=locomo)["tables"]
    sens = t["sensitivity"]
    assert len(sens) == 4 and set(sens["embedder"]) == {"hash-test"} and sens["auroc"].between(0, 1).all()
    forms = t["auroc_forms"]
    assert set(forms["memory_form"]) == {"turn", "rule"}
    assert set(forms[forms["memory_form"] == "turn"]["auroc"]) == set(t["auroc"]["auroc"])
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for name, df in t.items():
        if name != "per_query" and len(df):
            df.to_parquet(run_dir / f"{name}.parquet", index=False)
    text = rs.section(pd.DataFrame(), [{"run_dir": str(run_dir)}], tmp_path / "fig")
    assert "How much `ownership` leans on its settings" in text and "| BM25 weight | 0.05 | 0.1 |" in text
    assert "Memory form (hash-test)" in text and "AUROC, turn | AUROC, rule" in text
    off = lx.run_locomo({"seed": 0, "params": {"conversations": ["conv-30"], "n_boot": 20}}, embedders=[emb],
                        data=locomo)["tables"]
    assert "sensitivity" not in off and "auroc_forms" not in off
    with pytest.raises(ValueError, match=r"params\.sensitivity: a list"):
        lx.resolve_params({"params": {"sensitivity": "minilm-l6"}})


def test_hydra_experiment_config_composes() -> None:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from widemem_bench.experiments import hydra_resolvers  # noqa: F401  (registers resolvers)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with initialize_config_dir(str(ROOT / "configs"), version_base=None):
            cfg = compose(config_name="config", overrides=["experiment=locomo"])
    d = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(d, dict) and d["task_name"] == "locomo"
    p = lx.resolve_params(d)
    assert Path(str(p["locomo_path"])).name == "locomo10.json"
    assert json.dumps(p)  # plain, serialisable values only


@pytest.mark.models
@pytest.mark.slow
@needs_data
def test_minilm_reproduces_baseline_and_beats_target(locomo: ll.LoCoMo, tmp_path: Path) -> None:
    """Issue 8's first row (top-1 cosine AUROC 0.553 +- 0.03) and its 0.75 target."""
    from widemem_bench.embedders import load_embedder

    res = lx.run_locomo({"params": {"n_boot": 100}}, embedders=[load_embedder("minilm-l6")], data=locomo)
    au = res["tables"]["auroc"].set_index("method")["auroc"]
    assert au["top1_cosine"] == pytest.approx(0.553, abs=0.03)
    assert au["margin"] == pytest.approx(0.496, abs=0.03)
    assert au["ownership_lr"] >= 0.75
    assert au["ownership_cv"] >= 0.75
    ret = res["tables"]["retrieval"]
    hit10 = ret[ret["search"] == "cosine"].set_index("category")["hit@10"]
    assert hit10[1] == pytest.approx(0.50, abs=0.03) and hit10[4] == pytest.approx(0.53, abs=0.03)
    widemem = res["tables"]["bands"].query("setting == 'widemem'").set_index("category")
    assert widemem.loc[5, "moderate_plus"] == pytest.approx(0.998, abs=0.003)


def test_rule_form_keeps_evidence_ids() -> None:
    pytest.importorskip("widemem_bench.engine.extractors")
    from widemem_bench.embedders import load_embedder

    pq = sc.question_features(_toy(), load_embedder("hash-test", cache=False), memory_form="rule")
    assert len(pq) == 10
    # Facts keep their turn's dia_id, so evidence ranks stay defined.
    assert np.isfinite(pq["rank_cosine"]).all()
    own = pq.set_index(["sample_id", "qa_index"])["ownership"]
    assert own[("toy-1", 0)] > 0.5 > own[("toy-1", 3)]


def test_sensitivity_grid_shape() -> None:
    from widemem_bench.embedders import load_embedder

    grid = lx.sensitivity_table(_toy(), load_embedder("hash-test", cache=False), (0.05, 0.1), (0.0, 0.03))
    assert len(grid) == 4 and set(grid["temperature"]) == {0.05, 0.1}
    assert grid["auroc"].between(0, 1).all()
    md = rs.locomo_markdown({"tables": {"auroc": pd.DataFrame(), "retrieval": pd.DataFrame(), "bands": pd.DataFrame(),
                                        "thresholds": pd.DataFrame(), "transfer": pd.DataFrame(),
                                        "sensitivity": grid,
                                        "auroc_forms": pd.DataFrame({
                                            "embedder": ["e", "e"], "method": ["top1_cosine"] * 2,
                                            "memory_form": ["turn", "rule"], "auroc": [0.55, 0.70],
                                            "adv_moderate_plus": [0.85, 0.71]})}}, {}, Path("."))
    assert "| 0.03 |" in md
    assert "| top1_cosine | 0.550 | 0.700 | 85.0% | 71.0% |" in md  # columns in order of appearance


def test_per_query_is_parquet_safe(tmp_path: Path) -> None:
    from widemem_bench.embedders import load_embedder

    pq = sc.question_features(_toy(), load_embedder("hash-test", cache=False))
    pq.to_parquet(tmp_path / "pq.parquet")
    back = pd.read_parquet(tmp_path / "pq.parquet")
    assert len(back) == len(pq) and back["evidence"].iloc[0] == "D1:1"
