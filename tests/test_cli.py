"""`widemem-bench`: one front door (tested through `python -m widemem_bench.cli` and `cli.main`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from widemem_bench import cli

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "widemem_bench.cli", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def test_overview_lists_experiments_and_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("compare_embedders", "contradiction", "locomo", *cli.TOOLS):
        assert re.search(rf"^  {name} ", out, re.M), name


@pytest.mark.parametrize("name", ["contradiction", "compare_embedders", "smoke"])
def test_experiment_help_names_its_keys(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: widemem-bench {name}") and "honours:" in out and "params." in out


def test_every_tool_has_its_config_and_its_function() -> None:
    files = {p.stem for p in cli.TOOL_DIR.glob("*.yaml")}
    composed = {n for n, t in cli.TOOLS.items() if not t.raw}
    raw = {n for n, t in cli.TOOLS.items() if t.raw}  # compose their own file (regression: a free-text reason)
    assert composed <= files and files - composed <= raw, files ^ composed
    for name, tool in cli.TOOLS.items():
        assert callable(cli._target(tool)), name


@pytest.mark.parametrize("tool", sorted(n for n, t in cli.TOOLS.items() if not t.raw))
def test_tool_help_lists_every_key_with_its_default(tool: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([tool, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: widemem-bench {tool} [key=value ...]")
    for key in cli.tool_defaults(tool):
        assert re.search(rf"^  {key}=", out, re.M), key


def test_tools_that_parse_their_own_keys_get_the_raw_list(monkeypatch: pytest.MonkeyPatch) -> None:
    import widemem_bench.regression as regression

    seen: list[list[str] | None] = []
    monkeypatch.setattr(regression, "main", lambda argv=None: seen.append(argv) or 0)
    assert cli.main(["regression", "write=fix: the decay (a reason)", "--help"]) == 0
    assert seen == [["write=fix: the decay (a reason)", "--help"]]


def test_run_names_the_experiment_where_a_tool_has_the_same_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "calibrate", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: widemem-bench calibrate")


def test_unknown_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: nope: unknown command") and "\n" not in err


def test_unknown_command_suggests_the_near_name_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["contradictoin"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'contradiction'?" in err and "\n" not in err.rstrip("\n")
    known = err.split("known: ", 1)[1].strip().split(", ")
    assert known.count("calibrate") == 1 and known.count("perf") == 1  # experiment and tool: one name


# --------------------------------------------------------------------------- tool keys

@pytest.mark.parametrize(("args", "line"), [
    (["aggregate", "rot=x"], "error: aggregate: rot: not a key of aggregate; did you mean 'root'? accepted: root, out"),
    (["aggregate"], "error: aggregate: root: required (e.g. root=...); see widemem-bench aggregate --help"),
    (["bench", "jobs=abc"], "error: bench: jobs: expected an integer, got 'abc'"),
    (["bench", "jobs=2,3"], "error: bench: jobs: expected an integer, got '[2,3]'"),
    (["bench", "jobs=range(1,3)"], "error: bench: jobs: a tool runs once: one value or a list, not a sweep (jobs=range(1,3))"),
    (["bench", "--jobs", "2"], "error: bench: --jobs: tools take key=value only (see widemem-bench bench --help)"),
    (["bench", "force=maybe"], "error: bench: force: expected true or false, got 'maybe'"),
    (["perf_v3", "users=1.5"], "error: perf_v3: users: expected an integer, got '1.5'"),
    (["data", "n_users=abc"], "error: data: n_users: expected an integer, got 'abc'"),
    (["perf", "params=3"], "error: perf: params: set its keys one by one, e.g. params.<key>=value"),
    (["perf", "params.n_users=abc"], "error: perf: params.n_users: expected an integer, got 'abc'"),
    (["perf", "params.n_user=3"], "error: perf: params.n_user: not a key of perf's params; accepted: "),
    (["fit_v2", "targets.high=lots"], "error: fit_v2: targets.high: expected a number, got 'lots'"),
    (["resolver_fit", "check"], "error: resolver_fit: 'check' is not key=value (keys: check)"),
    (["fit_v2", "targets.low=0.3"], "error: fit_v2: targets.low: not a key of fit_v2's targets; accepted: high, moderate"),
    (["bench", "only=[peer,nosuch]"], "error: bench: only: nosuch: not an experiment of the bench plan; known: "),
    (["bench", "skip=[nosuch]"], "error: bench: skip: nosuch: not an experiment of the bench plan; known: "),
    (["check_report", "only=nosuch"], "error: check_report: only: nosuch: not an experiment of the bench plan; known: "),
    (["world_n_hardness", "splits=[train,test]"],
     "error: world_n_hardness: splits: ['test']; accepted: train, validation, holdout (a list)"),
])
def test_a_bad_tool_key_or_value_is_one_line_naming_it(args: list[str], line: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(line) and err.count("\n") == 1 and (line.endswith(": ") or err == line + "\n")


def test_tool_values_compose_as_typed() -> None:
    cfg = cli.compose_tool("bench_embedders", ["models=a,b", "n=5", "out=/tmp/x y.md"])  # a,b: a list
    assert cfg == {"n": 5, "seed": 0, "batch_size": 64, "models": ["a", "b"], "out": "/tmp/x y.md"}
    assert cli.compose_tool("bench", ["only=peer", "skip=[x,y]"])["only"] == ["peer"]
    assert cli.compose_tool("perf", ["params.n_users=20", "params.stages=[limit_engine]"])["params"] == {
        "n_users": 20, "stages": ["limit_engine"]}
    assert cli.compose_tool("outside_updates", ["embedder=123"])["embedder"] == "123"  # a string key stays a string


def test_a_refused_tool_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "emb.md"
    bad = _cli("bench_embedders", "models=[hash-test]", "n=lots", f"out={out}", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr == "error: bench_embedders: n: expected an integer, got 'lots'\n"
    late = _cli("bench_embedders", "models=[no-such-model]", "n=10", f"out={out}", cwd=tmp_path)
    assert late.returncode == 2 and late.stderr.startswith("error: bench_embedders: ")
    assert len(late.stderr.strip().splitlines()) == 1, late.stderr
    assert not any(tmp_path.iterdir()), sorted(tmp_path.iterdir())


def test_yaml_copies_are_pinned_to_the_code() -> None:
    """Where a tool's defaults live in code too, the tool's YAML says the same."""
    from widemem_bench import bench
    from widemem_bench.answerability import fit, fit_v3
    from widemem_bench.timelines import build

    assert tuple(cli.tool_defaults("bench")["embedders"]) == bench.DEFAULT_EMBEDDERS
    assert tuple(cli.tool_defaults("data")["configs"]) == build.DEFAULT_CONFIGS
    assert fit.options(cli.compose_tool("fit_v2", [])) == fit.FitOptions()
    assert fit_v3.options(cli.compose_tool("fit_v3", [])) == fit_v3.FitOptions()


# --------------------------------------------------------------------------- one front door

def test_only_the_front_door_reads_the_command_line() -> None:
    hits = []
    for path in sorted((ROOT / "widemem_bench").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel == "widemem_bench/cli.py":
            continue
        text = path.read_text(encoding="utf-8")
        hits += [f"{rel}: {m.group(0)}" for m in re.finditer(r"argparse|sys\.argv|getopt|optparse", text)]
    assert hits == []


def test_no_module_is_run_as_a_script() -> None:
    """No `if __name__ == "__main__"` in the package but the front door (and run.py, which
    hands its arguments to it); no top-level scripts folder."""
    mains = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "widemem_bench").rglob("*.py"))
             if '__name__ == "__main__"' in p.read_text(encoding="utf-8")]
    assert set(mains) == {"widemem_bench/cli.py", "widemem_bench/run.py"}
    assert not (ROOT / "experiments").exists()


def test_every_make_target_that_runs_the_package_calls_the_front_door() -> None:
    """Python runs only tools (pip, pytest; ruff and mypy are their own commands) and, before
    the venv exists, provenance.py's lock check loaded from its file."""
    lines = [ln.strip() for ln in (ROOT / "Makefile").read_text().splitlines() if ln.startswith("\t")]
    # $(WB) is the venv's console script, so a target's line is the front door and not a bare word
    # (a `WB := $(WB)` left by a merge made every target run "check_report" as a shell command).
    proc = subprocess.run(["make", "-s", "-f", "-", "-f", str(ROOT / "Makefile"), "print-wb"],
                          input="print-wb:\n\t@echo $(WB)\n", capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.stdout.strip() == ".venv/bin/widemem-bench", proc.stdout + proc.stderr
    assert len([ln for ln in lines if re.search(r"\$\(WB\) |/bin/widemem-bench ", ln)]) >= 13
    python = [ln for ln in lines if re.search(r"\$\((PY|PYTHON)\)", ln) and "$(call PROVENANCE" not in ln]
    stray = [ln for ln in python if not re.search(r"\$\((PY|PYTHON)\) -m (pip|pytest|venv)\b", ln)]
    assert stray == []
    assert not any(re.search(r"-m widemem_bench|widemem_bench/\S+\.py", ln) for ln in lines)


def test_the_front_door_names_its_command_for_an_ad_hoc_read(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from widemem_bench import sealed

    monkeypatch.delenv(sealed.PURPOSE_ENV, raising=False)
    monkeypatch.setenv(sealed.COMMAND_ENV, "")
    assert cli.main(["aggregate", f"root={tmp_path}"]) == 0
    assert sealed.current_purpose() == f"ad hoc: widemem-bench aggregate root={tmp_path}"


def test_tool_command_prints_what_differs_from_the_defaults() -> None:
    from widemem_bench.provenance import tool_command

    cfg = cli.compose_tool("bench_embedders", ["models=[a,b]"])
    assert tool_command("bench_embedders", cfg) == "widemem-bench bench_embedders models=[a,b]"
    assert tool_command("perf_v3", cli.compose_tool("perf_v3", []), every=True) == (
        "widemem-bench perf_v3 out=reports/perf.md users=20 repeats=3")


# --------------------------------------------------------------------------- experiments

def test_experiment_runs_through_the_front_door(tmp_path: Path) -> None:
    proc = _cli("smoke", "params.n=3", f"paths.output_dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(next(tmp_path.rglob("record.json")).read_text())
    assert rec["config"]["params"]["n"] == 3
    bad = _cli("smoke", "weights=equal", f"paths.output_dir={tmp_path / 'b'}", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].startswith("error: weights: experiment smoke does not honour")


def test_hydra_s_spelling_goes_through_the_same_checks(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _cli("experiment=smoke", "params.n=abc", f"paths.output_dir={out}", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr == "error: params.n: expected an integer, got 'abc'\n"
    assert not out.exists()
    old = subprocess.run([sys.executable, "-m", "widemem_bench.run", "experiment=smoke"], capture_output=True,
                         text=True, cwd=tmp_path, timeout=300)
    assert old.returncode == 2 and old.stderr.startswith("error: widemem_bench.run is the Hydra application")
    assert not any(tmp_path.rglob("record.json"))


def test_experiment_overrides_are_read_by_hydra_s_parser(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from widemem_bench import run

    assert cli.main(["smoke", "params.n=[1,2", f"paths.output_dir={tmp_path / 'o'}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 'params.n=[1,2' is not a Hydra override (") and err.count("\n") == 1
    assert not (tmp_path / "o").exists()
    assert run.expand_weight_triples(["weights=[0.8,0.1,0.1]", "weights=equal", "seed=1"]) == [
        "weights.similarity=0.8", "weights.importance=0.1", "weights.recency=0.1", "weights=equal", "seed=1"]
    assert run.value_texts(run.parse_overrides(["embedder='minilm-l6',tfidf"])[0]) == ["minilm-l6", "tfidf"]
    assert run.value_texts(run.parse_overrides(["params.n=range(1,3)"])[0]) is None
    assert run.check_group_choices(["-m", "experiment=smoke", "embedder=tfidf,'nope'"]) == (
        "embedder: unknown option 'nope' (known: " + ", ".join(sorted(
            p.stem for p in (ROOT / "configs" / "embedder").glob("*.yaml"))) + ")")
    assert run.expand_adapter_choice(["experiment=peer", "adapter=mine", "adapter.options.k=1"]) == [
        "experiment=peer", "+adapter.name=mine", "+adapter.options.k=1"]
    assert run.expand_adapter_choice(["experiment=peer", "adapter=engine"]) == ["experiment=peer", "adapter=engine"]


def test_a_bad_value_names_its_key_and_a_refused_run_writes_nothing(tmp_path: Path) -> None:
    """A typed default is checked before the run; a refusal inside the run (here the experiment's
    own, for a negative count) removes the folder Hydra made for it."""
    out = tmp_path / "out"
    bad = _cli("smoke", "params.n=abc", f"paths.output_dir={out}", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1] == "error: params.n: expected an integer, got 'abc'"
    late = _cli("smoke", "params.n=-1", f"paths.output_dir={out}", cwd=tmp_path)
    assert late.returncode == 2 and late.stderr.strip().startswith("error: ")
    assert not out.exists(), sorted(out.rglob("*"))
    # A folder that already holds a run keeps it.
    assert _cli("smoke", "params.n=2", f"paths.output_dir={out}", cwd=tmp_path).returncode == 0
    again = _cli("smoke", "params.n=2", "params.sleep=-1", f"paths.output_dir={out}", cwd=tmp_path)
    assert again.returncode == 2 and any(out.rglob("record.json"))


def test_a_null_default_s_conversion_error_names_its_key() -> None:
    from widemem_bench.harness.keys import name_bad_value

    cfg = {"params": {"n_users": "abc", "n_boot": 10}, "seed": 0}
    try:
        int(cfg["params"]["n_users"])
    except ValueError as exc:
        assert name_bad_value(exc, cfg) == "params.n_users: expected an integer, got 'abc'"
    assert name_bad_value(ValueError("something else"), cfg) is None


def test_tool_yaml_files_are_plain_mappings() -> None:
    for path in cli.TOOL_DIR.glob("*.yaml"):
        node = yaml.safe_load(path.read_text())
        assert isinstance(node, dict) and node, path
        assert all(re.fullmatch(r"[a-z_][a-z0-9_]*", k) for k in node), path


def test_an_unknown_experiment_key_is_one_line_naming_the_accepted_ones_and_writes_nothing(tmp_path: Path) -> None:
    r = _cli("smoke", "nosuch=1", f"paths.output_dir={tmp_path / 'out'}", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("error: nosuch: no such key in the config of experiment smoke; accepted: ")
    assert "params" in r.stderr.split("accepted: ", 1)[1]
    assert not any(tmp_path.iterdir()), sorted(tmp_path.iterdir())


def test_peer_help_lists_how_to_add_a_memory_system(capsys: pytest.CaptureFixture[str]) -> None:
    """README, "Adding a memory system": `peer adapter=<name>`, `adapter.factory=...`,
    `adapter.options.<key>=...`; each built-in adapter's options."""
    assert cli.main(["peer", "--help"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  adapter=<name>: engine, mem0, widemem\b", out, re.M)
    assert re.search(r"^  adapter\.factory=<package\.module:Class>: ", out, re.M)
    line = next(ln for ln in out.splitlines() if ln.startswith("  adapter.options.<key>=<value>: "))
    assert "mem0: model, search_threshold" in line and "widemem: clock, encoder, mode" in line
    assert re.search(r"^  embedder=<option>: .*minilm-l6", out, re.M)


def test_peer_refuses_the_top_level_mode_it_never_read() -> None:
    from widemem_bench.run import check_keys

    msg = check_keys(["experiment=peer", "mode=fast"])
    assert msg is not None and msg.startswith("mode: experiment peer does not honour this key")
    assert check_keys(["experiment=peer", "params.mode=fast", "adapter=engine", "adapter.options.mode=fast"]) is None


def test_no_file_names_a_command_other_than_the_front_door() -> None:
    """What the package writes (dataset cards, error lines, report generators) and what the
    README, docs, configs, Makefile and CI tell a user to run is `widemem-bench ...`: no
    `python -m widemem_bench.<module>` but `.cli` (the front door without its entry point).
    reports/DESIGN_LOG.md keeps the commands as they were run."""
    pattern = re.compile(r"python3? -m widemem_bench(?!\.cli\b)[\w.]*")
    files = [*(ROOT / "widemem_bench").rglob("*.py"), ROOT / "README.md", *(ROOT / "docs").rglob("*.md"),
             *(ROOT / "configs").rglob("*.yaml"), ROOT / "Makefile", *(ROOT / ".github").rglob("*.yml"),
             *(ROOT / ".ci").iterdir(), *(ROOT / "datasets").glob("*/README.md")]
    hits = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in files if p.is_file()
            for m in pattern.finditer(p.read_text(encoding="utf-8"))]
    assert not hits, hits


def test_overview_summaries_are_whole(capsys: pytest.CaptureFixture[str]) -> None:
    """A summary runs to the first colon of its config's comment, even on the second line."""
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("  resolver_transfer "))
    assert line.endswith("and the candidate ceiling (issue 26)"), line
    assert "engine, adapter;" in out


@pytest.mark.parametrize(("args", "start"), [
    (["smoke", "--nosuch"], "error: --nosuch: not a flag of widemem-bench; an experiment takes key=value"),
    (["-m"], "error: -m needs an experiment: widemem-bench -m <experiment> key=a,b"),
])
def test_a_bad_flag_is_one_line_not_hydras_usage(args: list[str], start: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(start) and err.count("\n") == 1, err
    assert cli.check_flags(["experiment=smoke", "--cfg", "job"]) is None
    assert cli.check_flags(["-m", "experiment=smoke", "params.n=1,2"]) is None


@pytest.mark.parametrize("name", ["contradiction", "frustration"])
def test_a_group_choice_that_would_not_act_is_refused_naming_the_key_that_does(name: str) -> None:
    """Honouring resolver.candidate_k does not make `resolver=<option>` act: the replayed
    resolvers are params.resolvers (review8 A3: it ran, and its record had no such setting)."""
    from widemem_bench.run import check_keys

    msg = check_keys([f"experiment={name}", "resolver=structure"])
    assert msg == (f"resolver=structure: experiment {name} does not honour the resolver choice (of resolver "
                   "it reads only resolver.candidate_k, resolver.similarity_floor, not resolver.name); the "
                   "resolver options it runs are params.resolvers: set params.resolvers=[structure]")
    swept = check_keys(["-m", f"experiment={name}", "resolver=append,rule"])  # append is the default: rule is not
    assert swept is not None and swept.startswith("resolver=rule: ")
    assert "set params.resolvers=[structure]" in (check_keys([f"experiment={name}", "resolver.name=structure"]) or "")
    for ok in (["resolver=append"], ["resolver.candidate_k=3"], ["params.resolvers=[structure]"], ["engine=default"]):
        assert check_keys([f"experiment={name}", *ok]) is None, ok


def test_a_choice_read_by_its_name_acts() -> None:
    from widemem_bench.run import check_keys

    for name in ("smoke", "perf", "resolver_transfer"):  # they honour embedder.name: the registry reads the rest
        assert check_keys([f"experiment={name}", "embedder=tfidf"]) is None, name
    msg = check_keys(["experiment=resolver_transfer", "resolver=structure"])
    assert msg is not None and msg.endswith("; the resolver options it runs are params.resolvers: "
                                            "set params.resolvers=[structure]")


def test_every_accepted_group_choice_changes_only_honoured_keys() -> None:
    """Over every experiment and every group it honours only in part, an accepted option
    changes no key the experiment does not honour (or the group is read by its name)."""
    from widemem_bench.experiments import available_experiments
    from widemem_bench.experiments.registry import honours_of
    from widemem_bench.harness.keys import default_of, honoured, leaf_keys
    from widemem_bench.run import FILE_GROUPS, _compose_plain, check_keys

    seen = 0
    for name in available_experiments():
        honours = honours_of(name)
        base = _compose_plain([f"experiment={name}"], ROOT / "configs")
        for group in FILE_GROUPS:
            if group in honours or f"{group}.name" in honours or not any(h.startswith(f"{group}.") for h in honours):
                continue
            for option in sorted(p.stem for p in (ROOT / "configs" / group).glob("*.yaml")):
                if check_keys([f"experiment={name}", f"{group}={option}"]) is not None:
                    continue
                seen += 1
                chosen = _compose_plain([f"experiment={name}", f"{group}={option}"], ROOT / "configs")
                changed = [k for k in leaf_keys(chosen.get(group) or {}, f"{group}.")
                           if default_of(k, chosen) != default_of(k, base)]
                assert all(honoured(k, honours) for k in changed), (name, group, option, changed)
    assert seen  # at least the default options were accepted


def test_a_refused_group_choice_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    bad = _cli("contradiction", "resolver=structure", f"paths.output_dir={out}", cwd=tmp_path)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert bad.stderr.startswith("error: resolver=structure: experiment contradiction does not honour")
    assert not out.exists()


# Each: one line on stderr, a nonzero exit, nothing under the output folder (review8 A5, B).
def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


ONE_LINERS = [
    (["sweep_weights", "params.step=0", "embedder=hash-test"], "error: params.step: must be in (0, 1], got 0"),
    (["smoke", "hydra.nosuch=1"], "error: hydra.nosuch: no such key in Hydra's config"),
    (["smoke", "hydra.job.env_set.X=1"], "error: hydra.job.env_set.X: no such key in Hydra's config"),
    (["smoke", "paths.output_dir=/proc/nope"], "error: paths.output_dir: /proc/nope cannot be made: "),
    (["smoke", f"paths.output_dir={ROOT / 'README.md'}/x"], "error: paths.output_dir: "),
    pytest.param(["-m", "smoke", "params.n=1,2", "hydra/launcher=ray"],
                 'error: hydra/launcher=ray: its plugin is not installed (No module named '
                 "'hydra_plugins.hydra_ray_launcher'); pip install -e \".[ray]\" in a separate venv",
                 marks=pytest.mark.skipif(_installed("hydra_plugins.hydra_ray_launcher"), reason="ray installed")),
    pytest.param(["-m", "smoke", "params.n=1,2", "hydra/launcher=submitit_slurm"],
                 "error: hydra/launcher=submitit_slurm: its plugin is not installed", marks=pytest.mark.skipif(
                     _installed("hydra_plugins.hydra_submitit_launcher"), reason="submitit installed")),
    (["regression", "-m"], "error: regression: a tool, not an experiment: it runs once, without -m"),
    (["smoke", "params.n=-1"], "error: params.n: must be >= 1, got -1"),
    # -m: every job is validated before Hydra launches one (no multirun.yaml, no half-run sibling)
    (["-m", "sweep_weights", "params.step=0", "embedder=hash-test"], "error: params.step: must be in (0, 1], got 0"),
    (["-m", "smoke", "params.n=-1,1"], "error: params.n: must be >= 1, got -1 (job: "),
    (["-m", "smoke", "params.n=1,-1", "embedder=hash-test,tfidf"], "error: params.n: must be >= 1, got -1 (job: "),
    (["-m", "locomo", "params.locomo_path=/nope.json"], "error: locomo_path: no file at /nope.json"),
    # past SWEEP_CHECK_CAP jobs each distinct value is still checked
    (["-m", "smoke", "params.n=range(300,-1,-1)", "params.sleep=0,0.0"], "error: params.n: must be >= 1, got 0"),
]


@pytest.mark.parametrize(("args", "start"), ONE_LINERS)
def test_a_bad_setting_is_one_line_and_writes_nothing(args: list[str], start: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _cli(*args, f"paths.output_dir={out}", cwd=tmp_path)
    assert proc.returncode != 0
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith(start), proc.stderr
    assert not out.exists(), sorted(out.rglob("*"))


def test_a_good_sweep_still_runs_every_job(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _cli("-m", "smoke", "params.n=1,2", "embedder=hash-test,tfidf", f"paths.output_dir={out}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(list((out / "smoke" / "multiruns").glob("*/record.json"))) == 4


def test_sweep_jobs_expand_as_hydra_does() -> None:
    from widemem_bench.run import SWEEP_CHECK_CAP, sweep_jobs

    assert sweep_jobs(["-m", "experiment=smoke", "params.n=range(1,3)", "embedder=a,b"]) == [
        ["experiment=smoke", "params.n=1", "embedder=a"], ["experiment=smoke", "params.n=1", "embedder=b"],
        ["experiment=smoke", "params.n=2", "embedder=a"], ["experiment=smoke", "params.n=2", "embedder=b"]]
    big = sweep_jobs(["experiment=smoke", f"params.n=range(0,{SWEEP_CHECK_CAP})", "params.sleep=0,1"])
    assert len(big) == SWEEP_CHECK_CAP  # the longest axis, not the product
    assert {j[1] for j in big} == {f"params.n={i}" for i in range(SWEEP_CHECK_CAP)}
    assert {j[2] for j in big} == {"params.sleep=0", "params.sleep=1"}


def test_help_into_a_closed_pipe_exits_quietly() -> None:
    """`widemem-bench contradiction --help | head -5` printed a BrokenPipeError traceback."""
    proc = subprocess.Popen([sys.executable, "-m", "widemem_bench.cli", "contradiction", "--help"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the interpreter is up: its first write meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and err == ""
