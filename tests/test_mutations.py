"""The regression gate's mutation catalogue (issue 23): every real scoring change fails
the gate, every neutral change passes it. The catalogue itself runs in `make test-full`
(slow: one gate run per entry, in a temporary copy of the checkout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from widemem_bench import mutations

ISSUE_THREE = ("weights_default", "similarity_halved", "v2_moderate_cutoff")


def test_catalogue_size_and_kinds() -> None:
    muts = [m for m in mutations.CATALOGUE if not m.neutral]
    neutral = [m for m in mutations.CATALOGUE if m.neutral]
    assert len(muts) >= 20 and len(neutral) == 5
    assert len({m.name for m in mutations.CATALOGUE}) == len(mutations.CATALOGUE)
    assert set(ISSUE_THREE) <= {m.name for m in muts}


def test_every_entry_applies_to_the_checkout() -> None:
    for m in mutations.CATALOGUE:
        mutations.check_applies(m)  # one line naming the entry when its text moved


def test_an_entry_that_does_not_apply_is_one_line(tmp_path: Path) -> None:
    m = mutations.Mutation("gone", "widemem_bench/engine/config.py", "no such text\n", "x", "-")
    with pytest.raises(ValueError, match=r"^mutation gone does not apply: its text occurs 0 times"):
        mutations.check_applies(m)
    from widemem_bench.cli import main as front_door

    assert front_door(["mutations", "only=nope"]) == 2


def test_a_mutated_pinned_file_gets_its_pin_so_the_gate_sees_its_numbers(tmp_path: Path) -> None:
    """A mutation of a pinned committed file (v2's cut-off, the calibration's) is written with its
    pin, as the make target writes both; else the copy refuses to load it and the gate "catches"
    it by an error, whatever its numbers."""
    import shutil

    from widemem_bench.answerability import v2
    from widemem_bench.engine.pins import pins, sha256

    m = mutations.by_name(["v2_moderate_cutoff"])[0]
    folder = tmp_path / Path(m.path).parent
    folder.mkdir(parents=True)
    for name in (Path(m.path).name, "pins.json"):
        shutil.copy(mutations.REPO_ROOT / Path(m.path).parent / name, folder / name)
    mutations.apply(m, tmp_path)
    target = tmp_path / m.path
    assert m.new in target.read_text("utf-8")
    assert pins(folder / "pins.json")[target.name] == sha256(target.read_bytes())
    v2.set_scorer_v2(None)
    assert v2.load_scorer_v2("minilm-l6", folder).cutoffs[1] == 0.85  # loads: outside the committed folder
    v2.set_scorer_v2(None)


@pytest.mark.slow
@pytest.mark.models
def test_the_gate_catches_the_catalogue(tmp_path: Path) -> None:
    outcomes = [mutations.run_one(m) for m in mutations.CATALOGUE]
    text = mutations.table(outcomes)
    (tmp_path / "mutations.md").write_text(text, encoding="utf-8")  # reports/mutations.md: `widemem-bench mutations` only
    muts = [o for o in outcomes if not o.mutation.neutral]
    assert sum(o.caught for o in muts) >= 0.95 * len(muts), text
    assert not [o.mutation.name for o in outcomes if o.mutation.neutral and o.caught], text
    for o in outcomes:
        if o.mutation.name in ISSUE_THREE:
            assert o.caught and o.metrics, f"{o.mutation.name}: no failing line names a metric\n{text}"


def test_the_committed_report_describes_todays_catalogue() -> None:
    """reports/mutations.md is written by one run of today's catalogue: every row's name and
    description are the entry's (a row describing a constant since changed is stale), and the
    report names the commit it ran at."""
    import re

    text = mutations.REPORT.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)`(?: \(neutral\))? \| (.*?) \| ", text, flags=re.M)
    assert rows == [(m.name, m.what) for m in mutations.CATALOGUE], "re-run `widemem-bench mutations`"
    assert re.search(r"^Every row ran at `[0-9a-f]{7}` \(", text, flags=re.M), "the report names no commit"


def test_the_table_names_its_commit() -> None:
    m = mutations.CATALOGUE[0]
    text = mutations.table([mutations.Outcome(m, 1, ["REGRESSION retrieval/hit@1: x"], 1.0)], commit="`abc1234`")
    assert "Every row ran at `abc1234`" in text and "| `weights_default` |" in text
