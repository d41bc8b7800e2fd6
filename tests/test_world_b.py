"""World B (issue 13): same schema as the timelines, its own world, ground truth that holds."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pandas as pd
import pytest

from widemem_bench.timelines import (
    GENERATOR_VERSION,
    QUESTION_KINDS,
    Timelines,
    check_fittable,
    generate,
    load,
    materialize,
)
from widemem_bench.timelines import vocab as VA
from widemem_bench.timelines import world_b as WB
from widemem_bench.timelines import world_b_vocab as VB

N = 60


@pytest.fixture(scope="module")
def wb() -> Timelines:
    return generate(N, seed=0, world="b")


@pytest.fixture(scope="module")
def wa() -> Timelines:
    return generate(20, seed=0)


def _valid_at(fact: dict, t: pd.Timestamp) -> bool:
    return fact["valid_from"] <= t and (pd.isna(fact["valid_to"]) or t < fact["valid_to"])


# ---------------------------------------------------------------- schema and determinism
def test_schema_equals_world_a(wb: Timelines, wa: Timelines) -> None:
    for table in ("events", "questions"):
        a, b = wa.table(table), wb.table(table)
        assert list(a.columns) == list(b.columns), table
        assert dict(a.dtypes) == dict(b.dtypes), table
    assert set(wb.questions["kind"]) == set(QUESTION_KINDS)
    assert set(wb.events["split"]) == set(wa.events["split"])
    assert wb.events["fact_id"].is_unique and wb.questions["question_id"].is_unique


def test_same_seed_same_world_other_seed_differs(wb: Timelines) -> None:
    again = generate(N, seed=0, world="b")
    pd.testing.assert_frame_equal(again.events, wb.events)
    pd.testing.assert_frame_equal(again.questions, wb.questions)
    other = generate(N, seed=1, world="b")
    assert not other.events["utterance"].equals(wb.events["utterance"])


def test_save_load_round_trip(wb: Timelines, tmp_path: Path) -> None:
    path = wb.save(tmp_path)
    assert path.name == f"b{WB.WORLD_B_VERSION}v{GENERATOR_VERSION}-n{N}-s0"
    back = load(path)
    pd.testing.assert_frame_equal(back.events, wb.events)
    pd.testing.assert_frame_equal(back.questions, wb.questions)
    assert back.meta == wb.meta and back.world == "b"
    card = (path / "README.md").read_text(encoding="utf-8")
    assert "Evaluation only" in card


# ---------------------------------------------------------------- its own world
def test_at_least_eight_attributes_world_a_lacks(wb: Timelines, wa: Timelines) -> None:
    a_attrs = set(generate(60, seed=0).events["attribute"].dropna())
    b_attrs = set(wb.events["attribute"].dropna())
    new = b_attrs - a_attrs
    assert len(new) >= 8, sorted(new)
    assert set(WB.NEW_ATTRIBUTES) <= new
    assert {"pet", "child", "language", "hobby", "vehicle", "school", "travel"} <= new
    # partners' jobs: an occupation whose subject is a partner
    ev = wb.events
    assert ((ev["attribute"] == "occupation") & ev["subject"].isin(VB.PARTNERS)).any()


def test_vocabulary_disjoint_from_world_a() -> None:
    a_names = {*VA.FIRST_NAMES, *VA.FEMALE_NAMES, *VA.MALE_NAMES, *VA.NEUTRAL_NAMES}
    assert not a_names & {*VB.PEOPLE, *VB.KIN_NAMES}
    assert not {c for c, _ in VA.CITIES} & {c for c, _ in VB.CITIES}
    assert not set(VA.EMPLOYERS) & set(VB.EMPLOYERS)
    assert not {m for m, _ in VA.MEDICATIONS} & {m for m, _ in VB.MEDICATIONS}
    a_conds = {*VA.CONDITIONS, *(c for _, c in VA.MEDICATIONS)}
    assert not a_conds & {*VB.CONDITIONS, *(c for _, c in VB.MEDICATIONS)}
    assert not {x for x, _ in VA.ALLERGENS} & {x for x, _ in VB.ALLERGENS}
    assert not set(VA.RELATIVES) & {*VB.PARTNERS, *VB.KIN}


def test_multi_valued_facts_coexist(wb: Timelines) -> None:
    ev = wb.events
    facts = ev[ev["fact_stripped"].notna()]
    for attr in WB.MULTI_VALUED:
        rows = facts[facts["attribute"] == attr]
        assert rows["multi_valued"].all(), attr
        assert (rows["update_kind"] == "coexists").any(), attr
        # a coexisting fact leaves the earlier values valid
        for r in rows[rows["update_kind"] == "coexists"].head(5).to_dict("records"):
            same = facts[(facts["user_id"] == r["user_id"]) & (facts["attribute"] == attr)
                         & (facts["at"] < r["at"])]
            assert any(_valid_at(f, r["at"]) for f in same.to_dict("records")), r["fact_id"]
    assert not facts.loc[~facts["attribute"].isin(WB.MULTI_VALUED), "multi_valued"].any()
    # answerable questions about a multi-valued slot can need several facts
    q = wb.questions
    multi = q[(q["kind"] == "answerable") & q["attribute"].isin(WB.MULTI_VALUED)]
    assert (multi["gold_fact_ids"].map(len) >= 2).any()


def test_contradictions_are_marked(wb: Timelines) -> None:
    ev = wb.events.set_index("fact_id")
    sup = ev[ev["update_kind"] == "supersedes"]
    assert len(sup) > 0
    assert sup["supersedes"].notna().all()
    for fid, r in sup.iterrows():
        old = ev.loc[r["supersedes"]]
        assert (old["user_id"], old["subject"], old["attribute"]) == (r["user_id"], r["subject"], r["attribute"])
        assert old["valid_to"] == r["at"], fid
    # a corrected allergy or swapped hobby ends that value only
    multi_sup = sup[sup["attribute"].isin(WB.MULTI_VALUED)]
    assert len(multi_sup) > 0
    # and oblique updates exist (a vehicle traded in without naming the attribute)
    assert (sup["oblique"] & (sup["attribute"] == "vehicle")).any()
    assert set(ev["update_kind"].dropna()) == {"new", "coexists", "supersedes", "restates"}


def test_first_and_third_person(wb: Timelines) -> None:
    ev, q = wb.events, wb.questions
    named = [n in u for n, u in zip(ev["user_name"], ev["utterance"], strict=True)]
    first = ev["utterance"].str.contains(r"\b(?:I|I'm|I've|my|My|me|We|we)\b", regex=True)
    assert sum(named) > 100 and first.sum() > 100
    names = ev.drop_duplicates("user_id").set_index("user_id")["user_name"]
    q_named = [names[u] in t for u, t in zip(q["user_id"], q["text"], strict=True)]
    q_first = q["text"].str.contains(r"\b(?:I|my|me)\b", regex=True)
    assert sum(q_named) > 200 and q_first.sum() > 200
    # a name in both the fact and the question: the stored facts keep the name often
    full = ev[ev["fact_stored"].notna() & (ev["fact_stored"] == ev["fact_full"])]
    assert len(full) > 0.2 * ev["fact_stored"].notna().sum()


# ---------------------------------------------------------------- ground truth
def test_gold_valid_and_negatives_unstated(wb: Timelines) -> None:
    ev, q = wb.events, wb.questions
    idx = {r["fact_id"]: r for r in ev.to_dict("records")}
    for r in q[q["kind"].isin(["answerable", "stale_probe"])].to_dict("records"):
        assert r["gold_fact_ids"], r["question_id"]
        if (r["subject"], r["attribute"]) == ("user", "name") and idx[r["gold_fact_ids"][0]]["attribute"] != "name":
            continue  # the name carried by stored full-form notes (test_name_question_...)
        for fid in r["gold_fact_ids"]:
            f = idx[fid]
            assert (f["user_id"], f["subject"], f["attribute"]) == (r["user_id"], r["subject"], r["attribute"])
            assert _valid_at(f, r["asked_at"]), (r["question_id"], fid)
    for r in q[q["kind"] == "stale_probe"].to_dict("records"):
        assert r["stale_fact_ids"] and not set(r["stale_fact_ids"]) & set(r["gold_fact_ids"])
    stated = ev[ev["fact_stripped"].notna()]
    neg = q[q["kind"].isin(["hard_negative", "other_person", "never_mentioned"])]
    assert (neg["gold_fact_ids"].map(len) == 0).all()
    for r in q[q["kind"].isin(["hard_negative", "other_person"])].to_dict("records"):
        same = stated[(stated["user_id"] == r["user_id"]) & (stated["at"] <= r["asked_at"])
                      & (stated["subject"] == r["subject"]) & (stated["attribute"] == r["attribute"])]
        assert same.empty, r["question_id"]
    for r in q[q["kind"] == "other_person"].to_dict("records"):
        others = [idx[f] for f in r["distractor_fact_ids"]]
        assert any(f["attribute"] == r["attribute"] and f["subject"] != r["subject"] for f in others)


def test_name_question_answerable_when_a_stored_note_names_the_person(wb: Timelines) -> None:
    """A stored full-form note naming the person answers a question about their name: it
    is never a hard negative / other-person question (gold = those notes)."""
    ev, q = wb.events, wb.questions
    full = ev[ev["fact_stored"].notna() & (ev["fact_stored"] == ev["fact_full"])
              & (ev["fact_full"] != ev["fact_stripped"])]
    rows = q[(q["subject"] == "user") & (q["attribute"] == "name")].to_dict("records")
    assert rows
    for r in rows:
        mine = full[(full["user_id"] == r["user_id"]) & (full["at"] <= r["asked_at"])]
        named = {f["fact_id"] for f in mine.to_dict("records")
                 if re.search(rf"(?<!\w){re.escape(f['user_name'])}(?!\w)", f["fact_stored"])}
        if r["kind"] in ("hard_negative", "other_person") or r["gold_action"] == "apologize_and_ask":
            assert not named, (r["question_id"], named)
    # the reviewer's case (no world-B vocabulary in tests: the name comes from the events)
    r = q.set_index("question_id").loc["u0015-q013"]
    name = ev.loc[ev["user_id"] == "u0015", "user_name"].iloc[0]
    assert r["kind"] == "answerable" and r["gold_value"] == name
    stored = ev.set_index("fact_id").loc[r["gold_fact_ids"], "fact_stored"]
    assert len(stored) and all(name in t for t in stored)


# ---------------------------------------------------------------- build, config, errors
def test_config_and_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = materialize.read_config("world_b")
    assert cfg["world"] == "b" and cfg["n_users"] == 300 and cfg["seed"] == 0
    from widemem_bench.cli import main as front_door

    args = ["data", "configs=[world_b]", "n_users=4", f"out={tmp_path}"]
    assert front_door(args) == 0
    assert "built" in capsys.readouterr().out
    (path,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert path.name.startswith("b") and load(path).world == "b"
    assert front_door(args) == 0
    assert "already built" in capsys.readouterr().out
    # a stale build (another generator version in its manifest) is rebuilt
    man = path / "manifest.json"
    m = json.loads(man.read_text())
    man.write_text(json.dumps({**m, "generator_version": "0"}))
    assert front_door(args) == 0
    assert "built" in capsys.readouterr().out
    assert json.loads(man.read_text())["generator_version"] == m["generator_version"]


def test_unknown_world_and_dataset_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match=r"world: unknown world 'z' \(known: a = .*b = ") as e:
        generate(2, world="z")
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match=r"dataset: unknown data set 'world_z' \(known: .*world_b") as e2:
        materialize.read_config("world_z")
    assert "\n" not in str(e2.value)
    with pytest.raises(ValueError, match="world"):
        materialize.settings({**materialize.read_config("world_b"), "world": "z"})


def test_build_cli_bad_config_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from widemem_bench.cli import main as front_door

    assert front_door(["data", "configs=[world_z]"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: data: dataset: unknown data set 'world_z' (known: ") and "world_b" in err
    assert err.count("\n") == 1


def test_fitting_on_world_b_is_refused() -> None:
    check_fittable("a")
    with pytest.raises(ValueError, match="world 'b' is evaluation-only; calibration fits on world A") as e:
        check_fittable("b", "calibration")
    assert "\n" not in str(e.value)


def test_output_independent_of_python_hash_seed(tmp_path: Path) -> None:
    import hashlib
    import subprocess
    import sys

    code = ("import hashlib; from widemem_bench.timelines import generate; t = generate(6, seed=2, world='b'); "
            "print(hashlib.sha256((t.events.to_csv() + t.questions.to_csv()).encode()).hexdigest())")
    outs = set()
    for hs in ("1", "2"):
        env = {"PYTHONHASHSEED": hs, "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1",
               "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                             check=True, cwd=tmp_path)
        outs.add(res.stdout.strip())
    assert len(outs) == 1 and hashlib.sha256(b"").hexdigest() not in outs


def test_generation_speed_extrapolates_under_30s() -> None:
    t0 = time.perf_counter()
    generate(30, seed=3, world="b")
    assert (time.perf_counter() - t0) * 10 < 30.0


@pytest.mark.slow
def test_make_data_both_worlds_under_30s(tmp_path: Path) -> None:
    t0 = time.perf_counter()
    for world in ("a", "b"):
        tl = generate(300, seed=0, world=world)
        tl.save(tmp_path / world)
        assert len(tl.questions) == 300 * 40
    assert time.perf_counter() - t0 < 30.0


# ---------------------------------------------------------------- its own, readable phrasings
def _shape(template: str) -> str:
    s = re.sub(r"\{[a-z_]+\}", "{}", template.lower()).strip(" .,;:!?")
    for short, full in (("what's", "what is"), ("where's", "where is"), ("i'm", "i am")):
        s = s.replace(short, full)
    return s


def test_templates_are_not_copies_of_world_a() -> None:
    """No world B template is a world A (or sealed holdout) template with its placeholders
    renamed: "{name} lives in {city}." was world A's stored fact, "what's my {rel} called?"
    a train question."""
    from widemem_bench.timelines import holdout_templates as H
    from widemem_bench.timelines import templates as A
    from widemem_bench.timelines import world_b_templates as BT

    def strings(*groups: object) -> list[str]:
        out: list[str] = []
        for g in groups:
            for v in (g.values() if isinstance(g, dict) else g):  # type: ignore[attr-defined]
                out += [v] if isinstance(v, str) else list(v)
        return out

    world_a = {_shape(s) for s in strings(A.UTTERANCES, A.QUESTIONS, A.FACTS, A.FRUSTRATION_CLAUSES,
                                          H.UTTERANCES, H.QUESTIONS, H.FACTS, H.FRUSTRATION_CLAUSES)}
    copies = [s for s in strings(BT.UTTERANCES_1, BT.UTTERANCES_3, BT.QUESTIONS_1, BT.QUESTIONS_3,
                                 BT.FACTS, BT.CLAUSES_1, BT.CLAUSES_3) if _shape(s) in world_a]
    assert copies == []


def test_generated_text_reads_as_english(wb: Timelines) -> None:
    """Regions fill "lives in {region}", clauses and hobbies take no hard-coded article:
    no "lives in above <region>", "as a <vowel-initial job>", "the the <destination>"."""
    preps = ("above ", "on ", "in ", "at ", "by ", "near ", "along ")
    assert [r for _, r in VB.CITIES if r.startswith(preps)] == []
    assert [v for v, _ in VB.VEHICLES if v[0].lower() in "aeiou"] == []  # "a {vehicle}" in clauses
    ev, q = wb.events, wb.questions
    texts = [*ev["utterance"].dropna(), *ev["fact_stored"].dropna(), *ev["fact_full"].dropna(), *q["text"]]
    bad = [t for t in texts if re.search(r"\ba [aeiou]|\bthe the\b|\bin (above|on|at) |classes at", t, re.I)]
    assert bad == []


def test_calibration_refuses_world_b(wb: Timelines, tmp_path: Path) -> None:
    """The documented guard acts: calibrating (the pipeline or experiment=calibrate) on world B
    is a one-line error before anything is embedded, fitted or written."""
    from widemem_bench.calibration.options import Options
    from widemem_bench.experiments import calibrate as exp
    from widemem_bench.experiments import calibrate_pipeline as pipeline

    with pytest.raises(ValueError, match="evaluation-only; calibration fits on world A") as e:
        pipeline.calibrate_embedder("hash-test", Options(holdout=True), wb, {"version": "x", "sha256": "x"})
    assert "\n" not in str(e.value)

    class Ctx:
        def timelines(self) -> Timelines:
            return wb

    with pytest.raises(ValueError, match="evaluation-only; calibration fits on world A"):
        exp.run({}, Ctx())  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
