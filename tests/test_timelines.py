"""Ground-truth checks of the synthetic timelines (issue 4)."""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

import pandas as pd
import pytest

from widemem_bench.timelines import (
    EVENT_KINDS,
    GENERATOR_VERSION,
    GOLD_ACTIONS,
    QUESTION_KINDS,
    Timelines,
    generate,
    load,
    materialize,
    quiet_days,
)
from widemem_bench.timelines import holdout_templates as H
from widemem_bench.timelines import templates as T
from widemem_bench.timelines import vocab as V
from widemem_bench.timelines.dataset import BEIR_SPLITS

N = 60  # three full 20-user split patterns: 42 train / 9 validation / 9 holdout


@pytest.fixture(scope="module")
def tl() -> Timelines:
    return generate(N, seed=0)


# The ground-truth invariants must also hold off the default path: a short span, another
# seed, fewer questions (changes crowd together, sessions overlap the last days).
@pytest.fixture(scope="module", params=["default", "short-span"])
def tl_any(request: pytest.FixtureRequest, tl: Timelines) -> Timelines:
    if request.param == "default":
        return tl
    return generate(20, seed=7, span_days=45, questions_per_user=25)


@pytest.fixture(scope="module")
def ev_index(tl_any: Timelines) -> dict[str, dict]:
    return {r["fact_id"]: r for r in tl_any.events.to_dict("records")}


def _sha(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def _valid_at(fact: dict, t: pd.Timestamp) -> bool:
    return fact["valid_from"] <= t and (pd.isna(fact["valid_to"]) or t < fact["valid_to"])


# ---------------------------------------------------------------- determinism
def test_same_seed_byte_identical_parquet_other_seed_differs(tmp_path: Path) -> None:
    a = generate(20, seed=0).save(tmp_path / "a")
    b = generate(20, seed=0).save(tmp_path / "b")
    c = generate(20, seed=1).save(tmp_path / "c")
    sa, sb, sc = _sha(a), _sha(b), _sha(c)
    parquet = [k for k in sa if k.endswith(".parquet")]
    assert len(parquet) == 6
    assert sa == sb  # every file, parquet, card, BEIR and manifest
    assert all(sa[k] != sc[k] for k in parquet)


def test_small_set_is_prefix_of_big_set(tl: Timelines) -> None:
    small = generate(20, seed=0)
    big_ev = tl.events[tl.events["user_id"].isin(small.events["user_id"].unique())]
    pd.testing.assert_frame_equal(small.events, big_ev.reset_index(drop=True))


def test_save_load_round_trip_and_datasets(tl: Timelines, tmp_path: Path) -> None:
    path = tl.save(tmp_path)
    assert path.name == f"v{GENERATOR_VERSION}-n{N}-s0"
    back = load(path)
    pd.testing.assert_frame_equal(back.events, tl.events)
    pd.testing.assert_frame_equal(back.questions, tl.questions)
    assert back.meta == tl.meta
    dd = tl.to_datasets("questions")
    assert set(dd) == set(T.SPLITS)
    assert sum(len(d) for d in dd.values()) == len(tl.questions)
    assert len(tl.to_datasets("events")["holdout"]) == int((tl.events["split"] == "holdout").sum())
    with pytest.raises(ValueError, match="table"):
        tl.to_datasets("nope")


# ---------------------------------------------------------------- schema and variety
def test_required_columns(tl: Timelines) -> None:
    ev_cols = {"fact_id", "user_id", "split", "at", "utterance", "fact_full", "fact_stripped",
               "importance", "ymyl_category", "ymyl_strength", "subject", "attribute", "value",
               "valid_from", "valid_to", "supersedes", "oblique", "event_kind", "gold_action"}
    q_cols = {"question_id", "user_id", "split", "asked_at", "text", "kind", "gold_fact_ids",
              "stale_fact_ids", "template_family", "attribute", "subject", "gold_mode",
              "session_id", "rephrase_of", "quiet_frustration", "gold_action"}
    assert ev_cols <= set(tl.events.columns)
    assert q_cols <= set(tl.questions.columns)
    assert tl.events["fact_id"].is_unique and tl.questions["question_id"].is_unique


def test_every_kind_present_and_labels_in_range(tl: Timelines) -> None:
    ev, q = tl.events, tl.questions
    assert set(ev["event_kind"]) == set(EVENT_KINDS)
    assert set(q["kind"]) == set(QUESTION_KINDS)
    assert set(ev["gold_action"].dropna()) == set(GOLD_ACTIONS)
    imp = ev["importance"].dropna()
    assert imp.between(1, 10).all()
    assert (ev.loc[ev["event_kind"] == "trivial", "importance"] <= 3).all()
    assert set(q["gold_mode"]) == {"fast", "balanced", "deep"}
    assert (q.loc[q["kind"] == "broad", "gold_mode"] == "deep").all()
    # obliques: region restatements of a city and YMYL facts a regex would miss
    obl = ev[ev["oblique"]]
    assert ((obl["attribute"] == "city") & (obl["event_kind"] == "restatement")).any()
    assert (obl["ymyl_category"].notna()).any()
    assert "sugar levels" in " ".join(ev["utterance"]) or (obl["attribute"] == "condition").any()
    # relationship facts have another person as subject
    assert set(ev.loc[ev["event_kind"] == "relation", "subject"]) - {"user"}


def test_template_families_per_question_group_cover_every_split() -> None:
    for group, fams in T.QUESTIONS.items():
        assert len(fams) >= 6, group
        splits = T.family_split(f"q.{group}", len(fams))
        assert set(splits) == set(T.SPLITS), group


# ---------------------------------------------------------------- splits
def test_users_split_disjoint_and_holdout_families_unseen_in_train(tl_any: Timelines) -> None:
    q = tl_any.questions
    per_user = q.groupby("user_id")["split"].nunique()
    assert (per_user == 1).all()
    n = tl_any.meta["n_users"]
    assert tl_any.events.drop_duplicates("user_id")["split"].value_counts().to_dict() == {
        "train": 14 * n // 20, "validation": 3 * n // 20, "holdout": 3 * n // 20}

    def parts(split: str) -> set[str]:
        fams = q.loc[q["split"] == split, "template_family"]
        return {p for f in fams for p in f.split("+")}

    train, val, hold = parts("train"), parts("validation"), parts("holdout")
    assert hold and val
    assert not hold & train
    assert not val & train
    # the same for templated utterances (vocabulary-driven oblique ones carry no split)
    ev = tl_any.events
    utt = {s: set(ev.loc[ev["split"] == s, "utterance_family"]) for s in T.SPLITS}
    templated = {s: {f for f in fams if f.split(".")[1] in T.UTTERANCES} for s, fams in utt.items()}
    assert not templated["holdout"] & templated["train"]


# ---------------------------------------------------------------- sealed holdout (issue 13)
def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{[a-z_]+\}", template)
    return re.compile("^" + ".+".join(re.escape(p) for p in parts) + "$")


def test_holdout_templates_mirror_and_never_repeat_train() -> None:
    for mine, theirs in ((H.UTTERANCES, T.UTTERANCES), (H.FACTS, T.FACTS), (H.QUESTIONS, T.QUESTIONS),
                         (H.FRUSTRATION_CLAUSES, T.FRUSTRATION_CLAUSES)):
        assert set(mine) == set(theirs)
    fields = re.compile(r"\{([a-z_]+)\}")
    for key, fams in H.UTTERANCES.items():
        allowed = {f for t in T.UTTERANCES[key] for f in fields.findall(t)} | {"name"}
        assert all(set(fields.findall(t)) <= allowed for t in fams), key
    for key, fams in H.QUESTIONS.items():
        assert len(fams) >= 3, key  # quiet-frustration rephrases need distinct phrasings
    old = {t for group in (T.UTTERANCES, T.QUESTIONS) for fams in group.values() for t in fams}
    old |= {t for pair in T.FACTS.values() for t in pair}
    new = {t for group in (H.UTTERANCES, H.QUESTIONS) for fams in group.values() for t in fams}
    new |= {t for pair in H.FACTS.values() for t in pair}
    assert not old & new
    stored = {x[2] for x in V.CONDITION_OBLIQUE} | {x[i] for x in V.LEGAL for i in (2, 4)}
    assert set(H.STORED_TEXTS) == stored and not set(H.STORED_TEXTS.values()) & stored
    said = ({x[1] for x in V.ALLERGY_OBLIQUE} | {x[1] for x in V.CONDITION_OBLIQUE}
            | {x[i] for x in V.LEGAL for i in (1, 3)})
    assert set(H.SAID_TEXTS) == said and not set(H.SAID_TEXTS.values()) & said


def test_holdout_shares_no_string_with_train_or_validation() -> None:
    """The seal holds on the exact strings too: no holdout utterance, stored fact or
    question is word for word a train or validation one (the default 300 users)."""
    full = generate(300, seed=0)
    ev, q = full.events, full.questions
    for table, cols in ((ev, ("utterance", "fact_full", "fact_stripped", "fact_stored")), (q, ("text",))):
        hold = table["split"] == "holdout"
        for col in cols:
            shared = set(table.loc[hold, col].dropna()) & set(table.loc[~hold, col].dropna())
            assert not shared, (col, len(shared), sorted(shared)[:3])


def test_holdout_is_sealed_on_memory_and_question_side(tl: Timelines) -> None:
    ev, q = tl.events, tl.questions
    hold_ev, rest_ev = ev[ev["split"] == "holdout"], ev[ev["split"] != "holdout"]
    hold_pats = [_pattern(f) for _, f in H.FACTS.values()]
    rest_pats = [_pattern(f) for _, f in T.FACTS.values()]
    frust = {e["fact_stripped"] for e in ev.to_dict("records") if e["gold_action"] == "reassure"}
    for facts, pats, extra in ((hold_ev, hold_pats, set(H.STORED_TEXTS.values())),
                               (rest_ev, rest_pats, set(H.STORED_TEXTS))):
        for f in facts["fact_stripped"].dropna():
            assert f in extra or f in frust or any(p.match(f) for p in pats), f
    # no train / validation stored fact has a holdout shape, and no holdout fact a train one
    leaked = [f for f in rest_ev["fact_stripped"].dropna() if any(p.match(f) for p in hold_pats)]
    assert not leaked, leaked[:3]
    held = [f for f in hold_ev["fact_stripped"].dropna() if f not in frust and any(p.match(f) for p in rest_pats)]
    assert not held, held[:3]
    fam = hold_ev["utterance_family"]
    templated = fam[fam.str.split(".").str[1].isin(list(T.UTTERANCES))]
    assert templated.str.startswith("uh.").all() and len(templated) > 0
    parts = {p for f in q.loc[q["split"] == "holdout", "template_family"] for p in f.split("+")}
    assert parts and all(p.startswith("qh.") for p in parts)
    rest = {p for f in q.loc[q["split"] != "holdout", "template_family"] for p in f.split("+")}
    assert not any(p.startswith("qh.") for p in rest)
    # the retired families (family_split's "holdout" positions in templates.py) are unused
    for p in rest:
        key, i = p.split(".", 1)[1].rsplit(".", 1)
        assert T.family_split(f"q.{key}", len(T.QUESTIONS[key]))[int(i)] != "holdout", p


# ---------------------------------------------------------------- ground truth
def test_answerable_gold_exists_and_is_valid_at_question_time(tl_any: Timelines, ev_index) -> None:
    q = tl_any.questions
    rows = q[q["kind"].isin(["answerable", "stale_probe"])
             | ((q["kind"] == "frustration") & (q["gold_action"] == "reassure"))]
    assert len(rows) > 0
    for r in rows.to_dict("records"):
        assert r["gold_fact_ids"], r["question_id"]
        gold = [ev_index[fid] for fid in r["gold_fact_ids"]]
        if (r["subject"], r["attribute"]) == ("user", "name") and gold[0]["attribute"] != "name":
            # the name carried by full-form memories (test_name_question_labels)
            assert r["gold_value"] == gold[0]["user_name"]
            continue
        for f in gold:
            assert f["user_id"] == r["user_id"]
            assert (f["subject"], f["attribute"]) == (r["subject"], r["attribute"])
            assert _valid_at(f, r["asked_at"]), (r["question_id"], f["fact_id"])
        assert gold[0]["value"] == r["gold_value"]


def _names_user(ev: pd.DataFrame, r: dict) -> list[str]:
    """Facts of the question's user stored by then in full form with the user's name."""
    mine = ev[(ev["user_id"] == r["user_id"]) & (ev["at"] <= r["asked_at"])
              & ev["fact_stored"].notna() & (ev["fact_stored"] == ev["fact_full"])
              & (ev["fact_full"] != ev["fact_stripped"])]
    return [f["fact_id"] for f in mine.to_dict("records")
            if re.search(rf"(?<!\w){re.escape(f['user_name'])}(?!\w)", f["fact_stored"])]


def test_name_question_labels(tl_any: Timelines) -> None:
    """"what's my name?" is answerable when a stored full-form fact names the user, even
    if the name was never stated as a fact of its own (gold = those memories); with only
    subject-stripped facts stored it is not."""
    ev, q = tl_any.events, tl_any.questions
    rows = q[(q["subject"] == "user") & (q["attribute"] == "name")].to_dict("records")
    assert rows
    for r in rows:
        named = _names_user(ev, r)
        stated = ev[(ev["user_id"] == r["user_id"]) & (ev["at"] <= r["asked_at"])
                    & (ev["subject"] == "user") & (ev["attribute"] == "name")]
        unanswerable = r["kind"] in ("hard_negative", "other_person") or r["gold_action"] == "apologize_and_ask"
        assert not (unanswerable and named), (r["question_id"], named)
        if stated.empty and named:
            assert r["kind"] in ("answerable", "frustration") and r["gold_action"] in (None, "reassure")
            assert set(r["gold_fact_ids"]) == set(named), r["question_id"]
            assert not r["distractor_fact_ids"]


def test_name_question_repro(tl: Timelines) -> None:
    # The reviewer's case: "what name did I give you?" while "Oliver lives in Dublin" is stored.
    r = tl.questions.set_index("question_id").loc["u0050-q014"]
    ev = tl.events.set_index("fact_id")
    assert r["kind"] == "answerable" and r["gold_value"] == "Oliver"
    assert r["gold_fact_ids"] and all("Oliver" in ev.loc[f, "fact_stored"] for f in r["gold_fact_ids"])


def test_stale_probes_name_superseded_facts(tl_any: Timelines, ev_index) -> None:
    q, ev = tl_any.questions, tl_any.events
    superseded = set(ev["supersedes"].dropna())
    stale = q[q["kind"] == "stale_probe"]
    assert len(stale) > 0
    for r in stale.to_dict("records"):
        assert r["stale_fact_ids"]
        for fid in r["stale_fact_ids"]:
            f = ev_index[fid]
            assert f["user_id"] == r["user_id"]
            assert not pd.isna(f["valid_to"]) and f["valid_to"] <= r["asked_at"]
            assert fid in superseded
            newer = ev[ev["supersedes"] == fid].iloc[0]
            assert newer["at"] <= r["asked_at"]
            assert fid not in r["gold_fact_ids"]
    # answerable questions are about slots that never changed before the question
    for r in q[q["kind"] == "answerable"].to_dict("records"):
        assert not r["stale_fact_ids"]


def test_negatives_have_no_gold_and_slot_never_stated(tl_any: Timelines, ev_index) -> None:
    q, ev = tl_any.questions, tl_any.events
    neg = q[q["kind"].isin(["never_mentioned", "hard_negative", "other_person"])]
    assert (neg["gold_fact_ids"].map(len) == 0).all()
    stated = ev[ev["fact_stripped"].notna()]
    for r in q[q["kind"].isin(["hard_negative", "other_person"])].to_dict("records"):
        before = stated[(stated["user_id"] == r["user_id"]) & (stated["at"] <= r["asked_at"])]
        same = before[(before["subject"] == r["subject"]) & (before["attribute"] == r["attribute"])]
        assert same.empty, r["question_id"]
    # other-person: the attribute is currently stored, but for someone else
    for r in q[q["kind"] == "other_person"].to_dict("records"):
        others = [ev_index[f] for f in r["distractor_fact_ids"]]
        assert any(f["attribute"] == r["attribute"] and f["subject"] != r["subject"]
                   and _valid_at(f, r["asked_at"]) for f in others), r["question_id"]
    # never-mentioned questions ask about attributes nobody states
    assert neg.loc[neg["kind"] == "never_mentioned", "attribute"].isna().all()


def test_broad_gold_is_every_current_non_trivial_fact(tl_any: Timelines, ev_index) -> None:
    for r in tl_any.questions[tl_any.questions["kind"] == "broad"].to_dict("records"):
        assert r["gold_fact_ids"]
        for fid in r["gold_fact_ids"]:
            f = ev_index[fid]
            assert _valid_at(f, r["asked_at"]) and f["importance"] >= 4


def test_frustration_labels(tl_any: Timelines) -> None:
    ev, q = tl_any.events, tl_any.questions
    fe = ev[ev["event_kind"] == "frustration"]
    assert fe["gold_action"].notna().all()
    # recover_and_pin starts a new value (the message carries the fact), vague has no fact
    rec = fe[fe["gold_action"] == "recover_and_pin"]
    assert rec["fact_stripped"].notna().all() and not rec["restatement"].any()
    assert fe.loc[fe["gold_action"] == "apologize_and_ask", "fact_stripped"].isna().all()
    fq = q[q["kind"] == "frustration"]
    assert set(fq["gold_action"]) == {"reassure", "apologize_and_ask"}
    assert (fq.loc[fq["gold_action"] == "apologize_and_ask", "gold_fact_ids"].map(len) == 0).all()
    assert q.loc[q["kind"] != "frustration", "gold_action"].isna().all()


def test_quiet_frustration_rephrases(tl_any: Timelines) -> None:
    q = tl_any.questions.set_index("question_id")
    reph = q[q["rephrase_of"].notna()]
    assert len(reph) > 0
    assert reph["quiet_frustration"].all()
    assert not q.loc[q["rephrase_of"].isna(), "quiet_frustration"].any()
    for qid, r in reph.iterrows():
        first = q.loc[r["rephrase_of"]]
        assert first["rephrase_of"] is None
        assert first["session_id"] == r["session_id"] and first["asked_at"] < r["asked_at"]
        assert (first["subject"], first["attribute"]) == (r["subject"], r["attribute"])
        assert first["text"] != r["text"], qid
    sizes = reph.groupby("rephrase_of").size() + 1
    assert sizes.between(2, 4).all()


def test_some_ymyl_and_trivial_facts_stay_quiet_for_months(tl: Timelines) -> None:
    ev = tl.events
    quiet = quiet_days(ev)
    assert quiet[ev["fact_stripped"].isna()].isna().all()
    for kind in ("ymyl", "trivial"):
        assert (quiet[ev["event_kind"] == kind] > 120).sum() >= 5, kind
    # a restated value is quiet only until its restatement
    rs = ev[ev["restatement"] & ~ev["oblique"]].iloc[0]
    same = ev[(ev["user_id"] == rs["user_id"]) & (ev["subject"] == rs["subject"])
              & (ev["attribute"] == rs["attribute"]) & (ev["value"] == rs["value"])
              & (ev["at"] < rs["at"])]
    prev = same.index[-1]
    assert quiet[prev] == pytest.approx((rs["at"] - ev.loc[prev, "at"]).total_seconds() / 86400)


def test_fact_stored_is_stripped_or_full(tl: Timelines) -> None:
    ev = tl.events[tl.events["fact_stripped"].notna()]
    is_full = ev["fact_stored"] == ev["fact_full"]
    assert ((ev["fact_stored"] == ev["fact_stripped"]) | is_full).all()
    assert 0.1 < is_full.mean() < 0.3
    # full sentences carry the user's name
    assert all(n in f for n, f in zip(ev["user_name"], ev["fact_full"], strict=True) if "user's name" not in f)


# ---------------------------------------------------------------- exports
def test_card_counts_match_data(tl: Timelines, tmp_path: Path) -> None:
    path = tl.save(tmp_path)
    card = (path / "README.md").read_text(encoding="utf-8")
    assert f"generator version: {GENERATOR_VERSION}" in card and "- seed: 0" in card
    assert "Built by `widemem-bench data` (`make data`)" in card  # the front door, not a module
    sections = {sec.split("\n", 1)[0]: sec for sec in card.split("\n## ")[1:]}

    def table(title: str) -> dict[str, list[int]]:
        rows = re.findall(r"^\| ([a-z_]+) \| ((?:\d+ \| ){3}\d+) \|$", sections[title], flags=re.M)
        return {k: [int(x) for x in v.split(" | ")] for k, v in rows}

    for title, col, kinds, df in (("Events per kind", "event_kind", EVENT_KINDS, tl.events),
                                  ("Questions per kind", "kind", QUESTION_KINDS, tl.questions)):
        got = table(title)
        assert set(got) == set(kinds)
        for k in kinds:
            want = [int(((df[col] == k) & (df["split"] == s)).sum()) for s in T.SPLITS]
            assert got[k] == [*want, sum(want)], (title, k)
    assert table("Users per split")["users"] == [42, 9, 9, N]
    labels = table("Other labels")
    want = [int((tl.events["oblique"] & (tl.events["split"] == s)).sum()) for s in T.SPLITS]
    assert labels["oblique_events"] == [*want, sum(want)]
    unans = tl.questions["gold_fact_ids"].map(len) == 0
    want = [int((unans & (tl.questions["split"] == s)).sum()) for s in T.SPLITS]
    assert labels["unanswerable_questions"] == [*want, sum(want)]


def test_beir_export_matches_gold(tl: Timelines, tmp_path: Path) -> None:
    path = tl.save(tmp_path) / "beir"
    corpus = [json.loads(line) for line in (path / "corpus.jsonl").read_text().splitlines()]
    queries = [json.loads(line) for line in (path / "queries.jsonl").read_text().splitlines()]
    ids = {c["_id"] for c in corpus}
    assert len(ids) == len(corpus) == int(tl.events["fact_stripped"].notna().sum())
    assert len(queries) == len(tl.questions)
    for s in T.SPLITS:
        qrels = pd.read_csv(path / "qrels" / f"{BEIR_SPLITS[s]}.tsv", sep="\t")
        assert list(qrels.columns) == ["query-id", "corpus-id", "score"]
        assert set(qrels["corpus-id"]) <= ids
        q = tl.questions[tl.questions["split"] == s]
        assert len(qrels) == int(q["gold_fact_ids"].map(len).sum())


# ---------------------------------------------------------------- config, build, errors
@pytest.mark.parametrize("name", ["timelines", "timelines_small", "world_b", "world_c", "world_n"])
def test_dataset_configs(name: str) -> None:
    cfg = materialize.read_config(name)
    for key in ("name", "n_users", "seed", "span_days", "questions_per_user", "root"):
        assert key in cfg, key
    assert "${" not in cfg["root"]


def test_build_is_idempotent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from widemem_bench.cli import main as front_door

    args = ["data", "configs=[timelines_small]", "n_users=5", f"out={tmp_path}"]
    assert front_door(args) == 0
    first = capsys.readouterr().out
    assert "built" in first
    before = _sha(tmp_path)
    assert front_door(args) == 0
    assert "already built" in capsys.readouterr().out
    assert _sha(tmp_path) == before


@pytest.mark.parametrize(("kwargs", "key"), [
    ({"n_users": 0}, "n_users"), ({"seed": -1}, "seed"), ({"span_days": 5}, "span_days"),
    ({"questions_per_user": 0}, "questions_per_user"), ({"start": "yesterday"}, "start"),
])
def test_bad_arguments_name_the_key(kwargs: dict, key: str) -> None:
    with pytest.raises(ValueError, match=key):
        generate(**{"n_users": 2, **kwargs})


def test_generation_speed_extrapolates_under_30s() -> None:
    t0 = time.perf_counter()
    generate(30, seed=3)
    assert (time.perf_counter() - t0) * 10 < 30.0


@pytest.mark.slow
def test_default_size_under_30s(tmp_path: Path) -> None:
    t0 = time.perf_counter()
    tl = generate()
    tl.save(tmp_path)
    assert time.perf_counter() - t0 < 30.0
    assert len(tl.questions) == 300 * 40


def test_output_independent_of_python_hash_seed(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import hashlib; from widemem_bench.timelines import generate; t = generate(8, seed=2); "
            "print(hashlib.sha256((t.events.to_csv() + t.questions.to_csv()).encode()).hexdigest())")
    outs = set()
    for hs in ("1", "2"):
        env = {"PYTHONHASHSEED": hs, "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                             check=True, cwd=tmp_path)
        outs.add(res.stdout.strip())
    assert len(outs) == 1
