"""Experiments on hash-test timelines end to end (no Hydra) and the report built from their records."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from _runcfg import BASE

from widemem_bench.experiments.runner import execute
from widemem_bench.reports import plots
from widemem_bench.reports.writer import load_source, write_report
from widemem_bench.timelines import GENERATOR_VERSION

PARAMS = {
    "compare_embedders": {"n_boot": 20, "n_boot_slow": 10},
    "calibrate": {"delta": 0.1, "n_boot": 20, "targets": {"high": 0.85}, "none_answerable": 0.5, "holdout": True},
    "sweep_thresholds": {"step": 0.1, "n_boot": 10, "splits": ["all", "holdout"]},
    "sweep_decay": {"functions": {"exponential": [0.01], "linear": [0.005], "step": [0.0], "none": [0.0]},
                    "n_boot": 10},
    "sweep_weights": {"step": 0.25, "adapt": [True, False], "n_boot": 10},
}


# The calibration certificate takes users as its unit and needs at least 30 of them
# (timelines_small has 21 train users); hash-test needs tfidf-like settings (PARAMS).
DATASETS = {"calibrate": {**BASE["dataset"], "name": "timelines", "n_users": 300}}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("outputs")
    for name, params in PARAMS.items():
        cfg = {**BASE, "dataset": DATASETS.get(name, BASE["dataset"]), "task_name": name, "params": params}
        rec = execute(cfg, root / name / "multiruns" / "x")
        assert rec is not None and rec["status"] == "complete"
    return root


def test_records_carry_dataset_version_and_sha(outputs):
    src = load_source("compare_embedders", outputs / "compare_embedders" / "multiruns", "cmd")
    ds = src.records[0]["dataset"]
    assert ds["version"] == f"v{GENERATOR_VERSION}-n30-s0" and len(ds["sha256"]) == 64
    r = src.results
    assert {"recall_moderate_plus", "auroc", "hit@1", "share_hard_negative_none"} <= set(r["metric"])
    # Band shares of one kind sum to one.
    shares = r[(r["split"] == "all") & r["metric"].str.startswith("share_hard_negative_")]
    assert shares["value"].sum() == pytest.approx(1.0)


def test_sweep_tables(outputs):
    grid = load_source("sweep_weights", outputs / "sweep_weights" / "multiruns", "c").table("grid")
    assert len(grid) == 2 * 15  # step 0.25: 15 simplex points, adaptation on and off
    assert ((grid["w_sim"] + grid["w_imp"] + grid["w_rec"]).round(9) == 1).all()
    dec = load_source("sweep_decay", outputs / "sweep_decay" / "multiruns", "c")
    assert set(dec.table("age_curve")["decay"]) == {"exponential", "linear", "step", "none"}
    none = dec.table("age_curve").query("decay == 'none'")
    assert (none["recency"] == 1.0).all()
    curve = load_source("sweep_thresholds", outputs / "sweep_thresholds" / "multiruns", "c").table("curve")
    part = curve[curve["split"] == "all"].sort_values("threshold")
    assert part["recall_moderate_plus"].is_monotonic_decreasing


def test_calibration_file_written(outputs):
    from widemem_bench.calibration import read_calibration

    src = load_source("calibrate", outputs / "calibrate" / "multiruns", "c")
    cal = read_calibration(Path(src.records[0]["run_dir"]) / "calibration.json")
    h, m, low = cal.thresholds
    assert 0 < low < m < h < 1
    assert cal.dataset["version"] == f"v{GENERATOR_VERSION}-n300-s0"
    assert set(src.results["setting"]) == {"calibrated", "widemem"}


def test_report_from_records(outputs, tmp_path):
    sources = {n: load_source(n, outputs / n / "multiruns", f"python -m widemem_bench.run -m experiment={n}")
               for n in PARAMS}
    path = write_report(tmp_path, sources, embedders=["hash-test"])
    text = path.read_text()
    for heading in ("Embedder comparison", "calibrated thresholds", "vs threshold", "Decay", "Weight mixes"):
        assert heading in text
    assert "python -m widemem_bench.run -m experiment=compare_embedders" in text
    for png in ("band_shares", "risk_coverage", "reliability", "threshold_curves", "score_vs_age",
                "decay_survival", "weight_grid"):
        f = tmp_path / "figures" / f"{png}.png"
        assert f.is_file() and f.stat().st_size > 5000, png
        assert f"figures/{png}.png" in text


def test_plots_are_pure_functions_of_tables(tmp_path):
    pq = pd.DataFrame({"embedder": ["a"] * 6, "kind": ["answerable", "hard_negative"] * 3,
                       "top1_sim": [0.9, 0.2, 0.8, 0.3, 0.7, 0.6]})
    p = plots.plot_risk_coverage(pq, tmp_path / "rc.png")
    q = plots.plot_reliability(pq, tmp_path / "rel.png", n_bins=2)
    assert p.is_file() and q.is_file()


def test_load_source_keeps_only_named_runs(outputs):
    root = outputs / "sweep_decay" / "multiruns"
    assert load_source("sweep_decay", root, "c", run_names=["default"]).records == []
    assert len(load_source("sweep_decay", root, "c", run_names=["x"]).records) == 1
    assert load_source("calibrate", root, "c").records == []  # another experiment's folder


def test_report_opens_with_the_answer(outputs, tmp_path):
    """README.md: under 250 lines, a takeaway of at most 8 sentences first, then the thresholds
    to ship; long tables live in reports/<experiment>.md and every link to one resolves."""
    import re

    from widemem_bench.reports.summary import MAX_SENTENCES

    sources = {n: load_source(n, outputs / n / "multiruns", f"python -m widemem_bench.run -m experiment={n}")
               for n in PARAMS}
    (tmp_path / "calibration.md").write_text("# Confidence calibration per embedder\n")
    text = write_report(tmp_path, sources, embedders=["hash-test"]).read_text()
    lines = text.splitlines()
    assert len(lines) < 250
    heads = [ln for ln in lines if ln.startswith("## ")]
    assert heads[:2] == ["## Takeaway", "## Thresholds to ship"]
    take = lines[lines.index("## Takeaway") + 2]
    assert take and len(re.findall(r"[.!?](?:\s|$)", take)) <= MAX_SENTENCES
    assert "AUROC" in take and "widemem's default thresholds" in take
    # the recommendation table: calibrated beside widemem's default, env lines to paste
    # calibrated thresholds on the holdout carry DESIGN_LOG C1's mark
    assert "| hash-test | calibrated (ship) † |" in text and "| hash-test | widemem default |" in text
    assert "## Reads of the measuring splits" in text and "| world A holdout |" in text
    assert re.search(r"^WIDEMEM_CONFIDENCE_MODERATE=0\.\d+$", text, re.M)
    # the decay table moved out; its fragment holds it
    assert "| exponential |" not in text and "| exponential |" in (tmp_path / "sweep_decay.md").read_text()
    links = re.findall(r"\]\(([^)#]+\.md)\)", text)
    assert {"calibrate.md", "sweep_decay.md", "calibration.md"} <= set(links)
    for link in links:
        assert (tmp_path / link).is_file(), link
    assert not re.search(r"\bissue\b|in this issue", text)


def test_takeaway_quotes_each_run_that_exists():
    """One sentence per source run, numbers with their intervals; none without the run."""
    from types import SimpleNamespace

    from widemem_bench.reports.summary import takeaway

    def src(rows, records=()):
        return SimpleNamespace(results=pd.DataFrame(rows), records=list(records))

    row = {"value": 0.5, "ci_lo": 0.4, "ci_hi": 0.6}
    sources = {
        "compare_embedders": src([{**row, "metric": "auroc", "split": "all", "embedder": "a", "value": 0.81},
                                  {**row, "metric": "auroc", "split": "all", "embedder": "b", "value": 0.62}]),
        "transfer": src([{**row, "metric": "transfer_auroc", "setting": "answerability v2", "split": s}
                         for s in ("world A holdout", "world B")]),
        "contradiction": src([{**row, "metric": "survival", "setting": st, "kind": k}
                              for st in ("rule", "append") for k in ("direct", "oblique")]),
        "ymyl_decay": src([{**row, "metric": "lost_reach", "kind": "medication", "days": 60.0, "store": "300",
                            "decay": "exponential", "rate": 0.01, "ymyl": y, "reach_k": 3}
                           for y in ("off", "on", "on_lexicon")], [{"config": {"params": {"plot_store": 300}}}]),
    }
    text = takeaway(sources, ["a", "b"], recs=[])
    # b's interval reaches a's: the takeaway must not call a "best" without saying so
    assert text.startswith("Of 2 embedders, a has the highest AUROC for answerable against unanswerable "
                           "questions (0.810 [0.400, 0.600]), with intervals overlapping b (")
    assert "Answerability v2 reaches AUROC 0.500 [0.400, 0.600] † on world A's holdout" in text
    assert "rule resolver leaves the stale value retrievable in 50.0% [40.0, 60.0]" in text
    assert "After 60 quiet days in a store of 300" in text
    assert "on world A's holdout" in text and "0.500 [0.400, 0.600] † on world A's holdout" in text
    assert text.count(". ") + 1 == 5 and text.endswith("headers of reports/DESIGN_LOG.md.)")
    assert takeaway({"contradiction": sources["contradiction"]}, ["a"], recs=[]).startswith(
        "Pooled over every user (mostly development)")
    assert takeaway({}, ["a"], recs=[]) == ""


def test_takeaway_gives_the_resolver_on_held_out_users_first():
    """issue 27: the resolver figure is world A's holdout (with its †), world B labelled
    development; the contradiction probes by split, the train figure named development."""
    from types import SimpleNamespace

    from widemem_bench.reports.summary import takeaway

    def src(rows):
        return SimpleNamespace(results=pd.DataFrame(rows), records=[])

    rt = [{"metric": "survival", "setting": "rule", "kind": "direct", "set": "timelines", "split": "holdout",
           "value": 65 / 189, "ci_lo": 0.288, "ci_hi": 0.402, "count": 65, "n": 189},
          {"metric": "survival", "setting": "rule", "kind": "direct", "set": "world_b", "split": "all",
           "value": 368 / 668, "ci_lo": 0.511, "ci_hi": 0.594, "count": 368, "n": 668}]
    ct = [{"metric": "survival", "setting": st, "kind": "direct", "split": sp, "value": v, "ci_lo": v, "ci_hi": v}
          for st, sp, v in (("rule", "holdout", 0.3), ("append", "holdout", 0.9), ("rule", "train", 0.0),
                            ("rule", "all", 0.05))]
    text = takeaway({"resolver_transfer": src(rt), "contradiction": src(ct)}, ["a"], recs=[])
    assert text.startswith("On world A's held-out users the rule resolver leaves a directly superseded fact "
                           "stored in 34.4% [28.8, 40.2] (65/189) † of supersessions (world B, development for "
                           "the resolvers: 55.1% [51.1, 59.4] (368/668) †)")
    assert "held-out users the stale value stays retrievable in 30.0% [30.0, 30.0] †" in text
    assert "against 0.0% [0.0, 0.0] on the train users it was written on (development)" in text
    assert "5.0%" not in text   # the pooled, mostly in-sample figure is no longer the headline


def test_takeaway_quotes_the_structure_resolver_on_the_newest_fresh_split():
    """issue 26: the opt-in resolver's figure is its version's measuring read (the newest world N
    fresh split), beside rule on the same users, with its false updates; older fresh splits are
    not quoted."""
    from types import SimpleNamespace

    from widemem_bench.reports.summary import takeaway

    def row(metric, setting, kind, set_name, split, count, n):
        v = count / n
        return {"metric": metric, "setting": setting, "kind": kind, "set": set_name, "split": split,
                "value": v, "ci_lo": v, "ci_hi": v, "count": count, "n": n}

    rows = [row("survival", "rule", "direct", "timelines", "holdout", 65, 189)]
    for set_name, split, kept in (("world_n_fresh", "fresh", 185), ("world_n_fresh2", "fresh2", 119)):
        rows += [row("survival", "structure", "direct", set_name, split, kept, 196),
                 row("survival", "rule", "direct", set_name, split, 196, 196),
                 row("false_update_rate", "structure", "all", set_name, split, 8, 1248)]
    text = takeaway({"resolver_transfer": SimpleNamespace(results=pd.DataFrame(rows), records=[])}, ["a"],
                    recs=[])
    assert ("on world N fresh 2 (world N's generator, users made for one read per resolver version) the "
            "structure resolver (opt-in, `resolver=structure`) leaves 60.7% [60.7, 60.7] (119/196)") in text
    assert "against 100.0% [100.0, 100.0] (196/196) for rule, and wrongly updates 0.6% [0.6, 0.6] (8/1248)" in text
    assert "185/196" not in text


def test_readme_block_reaches_the_short_form(tmp_path: Path) -> None:
    """A section's marked headline table is in README.md's short block; the rest stays in the fragment."""
    from widemem_bench.reports.fragments import summarise

    md = ("## Demo\n\nWhat it measures.\n\n<!-- readme -->\n| a | b |\n|---|---|\n| 1 | 2 |\n<!-- /readme -->\n\n"
          "| detail | only |\n|---|---|\n| 3 | 4 |\n")
    short = summarise("demo", md, tmp_path, "python -m widemem_bench.run experiment=demo")
    assert "| 1 | 2 |" in short and "| 3 | 4 |" not in short and "<!--" not in short
    frag = (tmp_path / "demo.md").read_text()
    assert "| 1 | 2 |" in frag and "| 3 | 4 |" in frag
