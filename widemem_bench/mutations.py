"""Mutation catalogue of the regression gate: does the gate fail on real scoring changes?

Each entry is one named edit (an exact text, found exactly once, replaced) applied to a
temporary copy of the checkout; the gate (``widemem-bench regression``) then
runs in that copy against the committed baseline. A *mutation* changes what the code
scores and must fail the gate; a *neutral* change (a rename, a reorder of independent
statements, a comment, a helper refactor, an unused option) must pass it.

    widemem-bench mutations                       # all; writes reports/mutations.md
    widemem-bench mutations only=[weights_default,v2_moderate_cutoff]   # prints its table
    widemem-bench mutations check=true            # every entry still applies (fast)

An entry that no longer applies (its text was edited away) is one line naming it and
what to update; nothing is written then.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from widemem_bench.provenance import REPO_ROOT

REPORT = REPO_ROOT / "reports" / "mutations.md"


@dataclasses.dataclass(frozen=True)
class Mutation:
    name: str
    path: str          # relative to the checkout
    old: str           # found exactly once
    new: str
    what: str
    neutral: bool = False
    cold_cache: bool = False  # the edit acts before the embedding cache: run on an empty one


M = Mutation
CATALOGUE: tuple[Mutation, ...] = (
    # --- the three
    M("weights_default", "widemem_bench/engine/config.py",
      "    weights: tuple[float, float, float] = WIDEMEM_WEIGHTS\n",
      "    weights: tuple[float, float, float] = (0.2, 0.5, 0.3)\n",
      "default weights 0.5/0.3/0.2 -> 0.2/0.5/0.3 in EngineConfig"),
    M("similarity_halved", "widemem_bench/engine/scoring.py",
      "    return w_sim * similarity + w_imp * imp + w_rec * recency\n",
      "    return w_sim * (similarity * 0.5) + w_imp * imp + w_rec * recency\n",
      "similarity halved in scoring.combine (the one weighted sum)"),
    M("v2_moderate_cutoff", "widemem_bench/answerability/files/minilm-l6.json",
      ' "cutoffs": [\n  0.9817560048286029,\n  0.7020242716771369,\n',
      ' "cutoffs": [\n  0.9817560048286029,\n  0.85,\n',
      "answerability v2 MODERATE cut-off 0.702 -> 0.85 in its committed file"),
    # --- weights, decay, adaptation
    M("decay_rate_default", "widemem_bench/engine/config.py",
      "    decay_rate: float = WIDEMEM_DECAY[1]\n", "    decay_rate: float = 0.05\n",
      "default decay rate 0.01 -> 0.05"),
    M("decay_function_default", "widemem_bench/engine/config.py",
      "    decay_function: str = WIDEMEM_DECAY[0]\n", '    decay_function: str = "step"\n',
      "default decay function exponential -> step"),
    M("decay_formula", "widemem_bench/engine/recency.py",
      "        return np.exp(-rate * np.maximum(age_days, 0.0))\n",
      "        return np.exp(-0.5 * rate * np.maximum(age_days, 0.0))\n",
      "exponential decay formula: half the rate inside exp"),
    M("recency_clamp", "widemem_bench/engine/recency.py",
      "        return np.exp(-rate * np.maximum(age_days, 0.0))\n",
      "        return np.exp(-rate * np.maximum(age_days, 30.0))\n",
      "recency clamp: ages clamped at 30 days instead of 0"),
    M("adaptation_factual_weights", "widemem_bench/engine/scoring.py",
      "FACTUAL_WEIGHTS: Weights = (0.75, 0.10, 0.15)\n", "FACTUAL_WEIGHTS: Weights = (0.50, 0.30, 0.20)\n",
      "per-query adaptation: factual weights 0.75/0.10/0.15 -> 0.50/0.30/0.20"),
    M("adaptation_rule", "widemem_bench/engine/scoring.py",
      "SHORT_WHAT_MAX_WORDS = 10\n", "SHORT_WHAT_MAX_WORDS = 3\n",
      "adaptation rule: a short 'what' query is factual up to 3 words, not 10"),
    M("importance_floor", "widemem_bench/engine/scoring.py",
      "    return np.clip(np.asarray(importance, dtype=np.float64), 0.0, IMPORTANCE_MAX) / IMPORTANCE_MAX\n",
      "    return np.clip(np.asarray(importance, dtype=np.float64), 5.0, IMPORTANCE_MAX) / IMPORTANCE_MAX\n",
      "importance floor: importance clipped at 5 instead of 0"),
    # --- boost, modes, fetch, top-k, ties
    M("similarity_boost", "widemem_bench/engine/modes.py",
      "    RetrievalMode.BALANCED: ModePreset(25, 4, 0.15, True),\n",
      "    RetrievalMode.BALANCED: ModePreset(25, 4, 0.60, True),\n",
      "balanced similarity boost 0.15 -> 0.60"),
    M("boost_count", "widemem_bench/engine/scoring.py",
      "BOOST_N = 5  #", "BOOST_N = 1  #", "two-pass boost lifts the top 1 by similarity, not 5"),
    M("mode_default", "widemem_bench/engine/config.py",
      '    default_mode: str = "balanced"\n', '    default_mode: str = "fast"\n',
      "default retrieval mode balanced -> fast"),
    M("mode_preset_top_k", "widemem_bench/engine/modes.py",
      "    RetrievalMode.BALANCED: ModePreset(25, 4, 0.15, True),\n",
      "    RetrievalMode.BALANCED: ModePreset(3, 4, 0.15, True),\n",
      "top-k: balanced preset returns 3 results, not 25"),
    M("fetch_multiplier", "widemem_bench/engine/modes.py",
      "    RetrievalMode.BALANCED: ModePreset(25, 4, 0.15, True),\n",
      "    RetrievalMode.BALANCED: ModePreset(25, 1, 0.15, True),\n",
      "balanced fetch multiplier 4 -> 1 (factual queries fetch 25, not 100)"),
    M("tie_breaking", "widemem_bench/engine/scoring.py",
      "    return after, np.lexsort((-final, -after))\n",
      "    return after, np.lexsort((final, -after))\n",
      "tie-breaking after the boost: pre-boost score ascending instead of descending"),
    # --- bands, calibration, answerability v2
    M("band_thresholds", "widemem_bench/engine/confidence.py",
      '    "all-minilm-l6-v2": (0.60, 0.30, 0.20),\n', '    "all-minilm-l6-v2": (0.60, 0.40, 0.20),\n',
      "widemem's MiniLM band thresholds: MODERATE 0.30 -> 0.40"),
    M("band_rule", "widemem_bench/engine/confidence.py",
      "((score >= low).astype(np.int8) + (score >= moderate) + (score >= high))",
      "((score >= low).astype(np.int8) + (score >= moderate - 0.05) + (score >= high))",
      "band rule (arrays): MODERATE reached 0.05 below its cut-off"),
    M("calibration_moderate_cutoff", "widemem_bench/calibration/files/minilm-l6.json",
      '    "moderate": {\n      "threshold": 0.4901360869407654,\n',
      '    "moderate": {\n      "threshold": 0.55,\n',
      "calibrated MODERATE cut-off 0.490 -> 0.55 in the committed calibration file"),
    M("v2_coefficient", "widemem_bench/answerability/files/minilm-l6.json",
      '  "coef": [\n   0.263719854238073,\n   0.8510640501539496,\n',
      '  "coef": [\n   0.263719854238073,\n   -0.8510640501539496,\n',
      "answerability v2: the second coefficient's sign flipped"),
    M("v2_low_cutoff", "widemem_bench/answerability/files/minilm-l6.json",
      "  0.7020242716771369,\n  0.29427952931674106\n",
      "  0.7020242716771369,\n  0.5\n",
      "answerability v2 LOW cut-off 0.294 -> 0.5"),
    # --- resolvers, YMYL, embeddings
    M("resolver_reading_removed", "widemem_bench/engine/resolvers.py",
      "                if any(not values_agree(new.slots[a], old.slots[a]) for a in shared):\n"
      "                    return Action(\"UPDATE\", i, memory.id)\n", "",
      "rule resolver: a changed value of a shared slot is no longer read as an update"),
    M("resolver_candidates", "widemem_bench/engine/config.py",
      "    candidate_k: int = 5\n", "    candidate_k: int = 1\n",
      "resolvers see 1 candidate memory, not 5"),
    M("ymyl_floor", "widemem_bench/engine/config.py",
      "    ymyl_importance_floor: float = 8.0\n", "    ymyl_importance_floor: float = 2.0\n",
      "YMYL importance floor 8 -> 2"),
    M("ymyl_immunity", "widemem_bench/engine/config.py",
      "    ymyl_decay_immunity: bool = True\n", "    ymyl_decay_immunity: bool = False\n",
      "YMYL decay immunity off"),
    M("embedding_normalisation", "widemem_bench/embedders/base.py",
      "    norms = np.linalg.norm(x, axis=1, keepdims=True)\n",
      "    norms = np.linalg.norm(x, axis=1, keepdims=True)\n    x = x + np.float32(0.02) * np.sign(x)\n"
      "    norms = np.linalg.norm(x, axis=1, keepdims=True)\n",
      "embedding normalisation: rows pushed off their direction before they are normalised", cold_cache=True),
    # --- neutral changes: must pass
    M("neutral_rename", "widemem_bench/engine/scoring.py",
      "        imp = importance01(importance)\n        recency = np.asarray(recency, dtype=np.float64)\n"
      "    return w_sim * similarity + w_imp * imp + w_rec * recency\n",
      "        imp = importance01(importance)\n        recency = np.asarray(recency, dtype=np.float64)\n"
      "    total = w_sim * similarity + w_imp * imp + w_rec * recency\n    return total\n",
      "rename: the weighted sum gets a local name", neutral=True),
    M("neutral_reorder", "widemem_bench/engine/batch.py",
      "    has = present.any(axis=1)\n    rows = np.arange(prep.n_questions)\n",
      "    rows = np.arange(prep.n_questions)\n    has = present.any(axis=1)\n",
      "reorder two independent statements in batch.score", neutral=True),
    M("neutral_comment", "widemem_bench/engine/recency.py",
      "        return np.exp(-rate * np.maximum(age_days, 0.0))\n",
      "        # (a comment: the clamp keeps future-stamped memories at full recency)\n"
      "        return np.exp(-rate * np.maximum(age_days, 0.0))\n",
      "a comment in the decay function", neutral=True),
    M("neutral_helper", "widemem_bench/engine/scoring.py",
      "def boost_add(final, top_final, boost):\n"
      '    """A boosted candidate\'s score: ``final + top_final * boost`` (widemem\'s two-pass add)."""\n'
      "    return final + top_final * float(boost)\n",
      "def _lift(top_final, boost):\n    return top_final * float(boost)\n\n\n"
      "def boost_add(final, top_final, boost):\n"
      '    """A boosted candidate\'s score: ``final + top_final * boost`` (widemem\'s two-pass add)."""\n'
      "    return final + _lift(top_final, boost)\n",
      "helper refactor: the boost's lift moved into a helper", neutral=True),
    M("neutral_unused_option", "widemem_bench/engine/batch.py",
      "    keep_final: bool = False,\n) -> Scored:\n",
      "    keep_final: bool = False,\n    label: str | None = None,\n) -> Scored:\n",
      "an unused keyword option on batch.score", neutral=True),
)


def by_name(names: Sequence[str] | None) -> list[Mutation]:
    if not names:
        return list(CATALOGUE)
    known = {m.name: m for m in CATALOGUE}
    bad = [n for n in names if n not in known]
    if bad:
        raise ValueError(f"unknown mutation {bad[0]!r}; known: {', '.join(known)}")
    return [known[n] for n in names]


def check_applies(m: Mutation, root: Path = REPO_ROOT) -> None:
    """ValueError (one line) unless ``m.old`` occurs exactly once in its file."""
    path = root / m.path
    if not path.is_file():
        raise ValueError(f"mutation {m.name} does not apply: {m.path} is missing; update widemem_bench/mutations.py")
    n = path.read_text(encoding="utf-8").count(m.old)
    if n != 1:
        raise ValueError(f"mutation {m.name} does not apply: its text occurs {n} times in {m.path} (expected once); "
                         "update its entry in widemem_bench/mutations.py")


def copy_checkout(dest: Path, root: Path = REPO_ROOT) -> None:
    """The checkout's tracked and untracked-but-not-ignored files (no venv, caches or outputs)."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root, check=True,
                         capture_output=True).stdout.decode()
    for rel in filter(None, out.split("\0")):
        src = root / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


@dataclasses.dataclass
class Outcome:
    mutation: Mutation
    code: int
    failures: list[str]
    seconds: float

    @property
    def caught(self) -> bool:
        return self.code != 0

    @property
    def metrics(self) -> list[str]:
        return [re.split(r"[: ]", f.split(" ", 1)[1], maxsplit=1)[0] for f in self.failures
                if f.startswith(("REGRESSION ", "IMPROVED "))]

    @property
    def settings(self) -> list[str]:
        return [f for f in self.failures if f.startswith("settings:")]


def apply(m: Mutation, dest: Path) -> None:
    """Make the edit in the copy ``dest``. A committed file that is pinned (`engine.pins`) gets its
    pin rewritten with it, as `make calibrate` or a fit writes both: the gate must catch the
    change by its numbers, not by the pin's refusal to load an edited file."""
    from widemem_bench.engine.pins import pins, write_pin

    target = dest / m.path
    target.write_text(target.read_text(encoding="utf-8").replace(m.old, m.new, 1), encoding="utf-8")
    table = target.parent / "pins.json"
    if target.name in pins(table):
        write_pin(target, table)


def run_one(m: Mutation, root: Path = REPO_ROOT) -> Outcome:
    check_applies(m, root)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"wb-mut-{m.name}-") as tmp:
        dest = Path(tmp) / "checkout"
        copy_checkout(dest, root)
        apply(m, dest)
        env = {**os.environ, "PYTHONPATH": str(dest), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        if m.cold_cache:
            env["WIDEMEM_BENCH_CACHE"] = str(Path(tmp) / "cache")
        r = subprocess.run([sys.executable, "-m", "widemem_bench.cli", "regression"], cwd=dest, env=env,
                           capture_output=True, text=True)
    lines = r.stdout.splitlines()
    failures: list[str] = []
    if "GATE FAILED:" in lines:
        failures = [ln.strip() for ln in lines[lines.index("GATE FAILED:") + 1:] if ln.strip()]
    elif r.returncode != 0:
        err = (r.stderr.strip().splitlines() or ["?"])[-1]
        failures = [f"error: {err}"]
    return Outcome(m, r.returncode, failures, time.perf_counter() - t0)


def ran_at(root: Path = REPO_ROOT) -> str:
    """The commit the catalogue runs at (every row copies this checkout), and whether its
    tracked files differ from it: the report names it so a fresh clone can reproduce it."""
    from widemem_bench.provenance import git_info

    info = git_info() if root == REPO_ROOT else {"sha": None, "dirty": None}
    sha = info.get("sha")
    if not sha:
        return "a checkout outside git"
    return f"`{sha[:7]}`" + (" with uncommitted changes" if info.get("dirty") else "")


def table(outcomes: Sequence[Outcome], commit: str | None = None) -> str:
    muts = [o for o in outcomes if not o.mutation.neutral]
    neutral = [o for o in outcomes if o.mutation.neutral]
    caught = sum(o.caught for o in muts)
    by_metric = sum(bool(o.metrics) for o in muts)
    flagged = sum(o.caught for o in neutral)
    lines = [
        "# Mutation catalogue of the regression gate",
        "",
        "Each row: one named edit applied to a temporary copy of the checkout, then "
        "`widemem-bench regression` run there against the committed baseline "
        "(`widemem-bench mutations`, part of `make test-full`). A mutation must fail "
        "the gate; a neutral change must pass it.",
        "",
        f"- mutations caught: **{caught} / {len(muts)}** ({100 * caught / max(len(muts), 1):.1f} %); "
        f"caught by a gated metric (not only by a changed setting): {by_metric} / {len(muts)}",
        f"- neutral changes flagged: **{flagged} / {len(neutral)}**",
        "",
        *([f"Every row ran at {commit} (`widemem-bench mutations`, OMP_NUM_THREADS=1).", ""] if commit else []),
        "| mutation | what | caught | metrics that failed | settings that differ |",
        "|---|---|---|---|---|",
    ]
    for o in outcomes:
        mets = o.metrics
        shown = ", ".join(f"`{k}`" for k in mets[:4]) + (f" (+{len(mets) - 4} more)" if len(mets) > 4 else "")
        err = next((f for f in o.failures if f.startswith("error:")), "")
        sets = "; ".join(s.split(" is ", 1)[0].removeprefix("settings: ") for s in o.settings) or ""
        kind = " (neutral)" if o.mutation.neutral else ""
        verdict = ("yes" if o.caught else "no") if not o.mutation.neutral else ("FLAGGED" if o.caught else "passed")
        lines.append(f"| `{o.mutation.name}`{kind} | {o.mutation.what} | {verdict} | {shown or err or '-'} | "
                     f"{sets or '-'} |")
    return "\n".join(lines) + "\n"


def tool(cfg: dict[str, Any]) -> int:
    """Run the catalogue (or `only`) and write its table; `check=true` only checks that each entry applies."""
    chosen = by_name([str(n) for n in cfg["only"]])  # ValueError: one line from the front door
    for m in chosen:
        check_applies(m)
    if cfg["check"]:
        print(f"ok: all {len(chosen)} catalogue entries apply")
        return 0
    outcomes = []
    for i, m in enumerate(chosen, 1):
        o = run_one(m)
        outcomes.append(o)
        print(f"[{i}/{len(chosen)}] {m.name}: {'caught' if o.caught else 'passed'} ({o.seconds:.0f} s)"
              + (f" {', '.join(o.metrics[:3]) or (o.failures[0] if o.failures else '')}" if o.caught else ""),
              file=sys.stderr, flush=True)
    text = table(outcomes, commit=ran_at())
    out = str(cfg["out"]) if cfg.get("out") is not None else ("-" if cfg["only"] else str(REPORT))
    if out != "-":
        Path(out).write_text(text, encoding="utf-8")
        print(f"wrote {out}")
    else:
        print(text)
    return 0

