"""The package's layout (issues 14 and 24), checked over the whole of widemem_bench/.

- Floors: a module imports only its own folder and folders on LOWER floors
  (`docs/ARCHITECTURE.md`, "Floors", is the table; `FLOORS` here must equal it). Imports
  written inside functions and `importlib.import_module("widemem_bench...")` count.
  At most one upward import in the package, named in `DOCUMENTED_UPWARD` and in the doc.
- No circle among the package's folders.
- No module over 500 lines (data-table modules with no logic: `DATA_TABLES`), no function
  over 80 lines; experiments/ keeps its own 400-line limit, no plotting and no experiment
  importing another.

`PENDING_*` list what other branches of issue 24 remove (owner in the value); an entry
that no longer happens fails, so the list shrinks as they merge and ends empty.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

from widemem_bench.experiments import available_experiments

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "widemem_bench"
EXPERIMENTS = PKG / "experiments"
DOC = ROOT / "docs" / "ARCHITECTURE.md"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
MAX_EXPERIMENT_LINES = 400

# Folder (or top-level module) -> floor. Keep equal to the table in docs/ARCHITECTURE.md.
FLOORS: dict[str, int] = {
    "provenance": 0, "feedback": 0,
    "metrics": 1, "embedders": 1, "timelines": 1,
    "language": 2,
    "engine": 3,
    "calibration": 4,
    "external": 5,
    "sealed": 6,
    "answerability": 7, "design_log": 7,
    "harness": 8,
    "evaluation": 9, "peers": 9,
    "perf": 10,
    "experiments": 11,
    "regression": 12, "mutations": 12, "aggregate": 12,
    "reports": 13,
    "bench": 14,
    "run": 15, "hydra_callbacks": 15,
    "cli": 16,
}
# (importing file, imported folder): the one upward import the floors allow, if any.
DOCUMENTED_UPWARD: set[tuple[str, str]] = set()
# Upward imports that other issue-24 branches remove: (file, folder) -> owner.
PENDING_EDGES: dict[tuple[str, str], str] = {}
# Modules over 500 lines / functions over 80 that other branches split: path -> owner.
PENDING_MODULES: dict[str, str] = {}
PENDING_FUNCTIONS: dict[str, str] = {}
# Data tables (vocabularies, templates): exempt from the module limit while they hold no logic.
DATA_TABLES = ("timelines/world_n_vocab.py", "timelines/world_b_templates.py")

SOURCES = sorted(PKG.rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(PKG).as_posix()


def _folder(module: str) -> str | None:
    """`widemem_bench.engine.store` -> "engine"; the package itself -> None."""
    parts = module.split(".")
    return parts[1] if parts[0] == "widemem_bench" and len(parts) > 1 else None


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, text: str | None = None) -> list[str]:
    """Every widemem_bench module `path` imports: at the top, inside functions, relative,
    and through `importlib.import_module` / `__import__` with a literal (or f-string prefix)."""
    tree = ast.parse(path.read_text() if text is None else text)
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out += [mod] + [f"{mod}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call) and node.args and (
            getattr(node.func, "attr", None) == "import_module"
            or getattr(node.func, "id", None) in ("import_module", "__import__")
        ):
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.append(arg.value)
            elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                out.append(str(arg.values[0].value).rstrip("."))
    return [m for m in out if m == "widemem_bench" or m.startswith("widemem_bench.")]


def edges_of(path: Path, text: str | None = None) -> set[str]:
    """The other folders `path` imports."""
    own = _folder(_module_name(path))
    found = {_folder(m) for m in imported_modules(path, text)}
    return {f for f in found if f is not None and f != own and f in _rooms()}


@cache
def _rooms() -> frozenset[str]:
    return frozenset(p.stem if p.is_file() else p.name for p in PKG.iterdir()
                     if (p.is_dir() and (p / "__init__.py").exists())
                     or (p.suffix == ".py" and p.name != "__init__.py"))


@cache
def graph() -> dict[tuple[str, str], str]:
    """(importing file, imported folder) -> importing folder, over the whole package."""
    out: dict[tuple[str, str], str] = {}
    for path in SOURCES:
        own = _folder(_module_name(path))
        if own is None:
            continue  # widemem_bench/__init__.py: the package's front (it imports nothing below)
        for folder in edges_of(path):
            out[(_rel(path), folder)] = own
    return out


def upward(edges: dict[tuple[str, str], str]) -> list[str]:
    return sorted(f"{src} ({FLOORS[own]}) -> {dst} ({FLOORS[dst]})"
                  for (src, dst), own in edges.items() if FLOORS[dst] >= FLOORS[own])


def test_every_folder_has_a_floor() -> None:
    assert sorted(_rooms() - set(FLOORS)) == [], "place the new folder in FLOORS and docs/ARCHITECTURE.md"
    assert sorted(set(FLOORS) - _rooms()) == []


def test_the_doc_states_the_same_floors() -> None:
    rows = re.findall(r"^\|\s*(\d+)\s*\|([^|]+)\|", DOC.read_text(), flags=re.M)
    doc = {name.strip(" `"): int(floor) for floor, names in rows for name in names.split(",")}
    assert doc == FLOORS


def test_imports_only_go_down() -> None:
    edges = {k: v for k, v in graph().items() if k not in PENDING_EDGES and k not in DOCUMENTED_UPWARD}
    assert upward(edges) == []


def test_at_most_one_documented_upward_import() -> None:
    assert len(DOCUMENTED_UPWARD) <= 1
    text = DOC.read_text()
    for src, dst in DOCUMENTED_UPWARD:
        assert (src, dst) in graph(), f"{src} -> {dst} no longer happens: drop it here and in the doc"
        assert src in text, f"{src} -> {dst} is not written in docs/ARCHITECTURE.md"


def test_pending_edges_still_happen() -> None:
    stale = sorted(f"{k} ({v})" for k, v in PENDING_EDGES.items() if k not in graph())
    assert stale == [], "fixed: remove them from PENDING_EDGES"


def test_no_circle_among_folders() -> None:
    succ: dict[str, set[str]] = defaultdict(set)
    for (_, dst), own in graph().items():
        if (_, dst) not in PENDING_EDGES:
            succ[own].add(dst)
    state: dict[str, int] = {}
    circles: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(succ[node]):
            if state.get(nxt) == 1:
                circles.append(" -> ".join([*path[path.index(nxt):], nxt]) if nxt in path else nxt)
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(succ):
        if node not in state:
            visit(node, [node])
    assert circles == []


def test_the_checker_counts_imports_inside_functions_and_importlib() -> None:
    # The checker itself must see every form; the demo in the issue-24 note adds such a line.
    path = PKG / "engine" / "recency.py"
    text = path.read_text()
    for line in ("\n\ndef _f():\n    from widemem_bench.experiments import records\n",
                 "\n\ndef _f():\n    import importlib\n    importlib.import_module('widemem_bench.experiments')\n",
                 "\n\ndef _f():\n    from ..experiments import records\n"):
        assert "experiments" in edges_of(path, text + line)
    assert "experiments" not in edges_of(path, text)


def _logic(tree: ast.AST) -> list[str]:
    """Statements that make a module more than a table (a dataclass with fields is a table)."""
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.For, ast.While, ast.If,
             ast.Try, ast.With)
    return sorted({type(n).__name__ for n in ast.walk(tree) if isinstance(n, kinds)})


def _long_functions(path: Path) -> list[str]:
    return [f"{_rel(path)}:{n.name}" for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]  # type: ignore[operator]


def test_module_sizes() -> None:
    long = {_rel(p): len(p.read_text().splitlines()) for p in SOURCES}
    over = sorted(f"{k} ({n})" for k, n in long.items()
                  if n > MAX_MODULE_LINES and k not in PENDING_MODULES and k not in DATA_TABLES)
    assert over == []
    assert sorted(k for k in PENDING_MODULES if long.get(k, 0) <= MAX_MODULE_LINES) == [], \
        "under the limit now: remove from PENDING_MODULES"
    for name in DATA_TABLES:
        assert _logic(ast.parse((PKG / name).read_text())) == [], f"{name} holds logic: not a data table"


def test_function_sizes() -> None:
    found = {f for p in SOURCES for f in _long_functions(p)}
    assert sorted(found - set(PENDING_FUNCTIONS)) == []
    assert sorted(set(PENDING_FUNCTIONS) - found) == [], "under 80 now: remove from PENDING_FUNCTIONS"


MODULES = sorted(EXPERIMENTS.glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_experiment_module_sizes(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_EXPERIMENT_LINES


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_plotting_and_no_experiment_imports_another(path: Path) -> None:
    experiments = set(available_experiments()) - {path.stem}
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            assert not name.startswith("matplotlib"), f"{path.name} imports {name}"
            parts = name.split(".")
            assert not (parts[:2] == ["widemem_bench", "experiments"] and len(parts) > 2
                        and parts[2] in experiments), f"{path.name} imports experiment {parts[2]}"


def test_no_symlink_and_no_built_data_is_committed() -> None:
    # A committed link into one machine's checkout (datasets/*/<set> -> /work/...) breaks
    # every fresh clone's `make data`, and a merge replaces the built folder with the link.
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    staged = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True)
    rows = [line.split(maxsplit=3) for line in staged.stdout.splitlines()]
    assert [r[3] for r in rows if r[0] == "120000"] == []
    # datasets/outside/ and datasets/handwritten/ hold hand-written cases (no builder makes
    # them), committed so the outside report reproduces and development fits can read them;
    # everything else under datasets/ is built by `make data`.
    built = [r[3] for r in rows if r[3].startswith("datasets/") and not r[3].endswith("README.md")
             and not r[3].startswith(("datasets/outside/", "datasets/handwritten/"))]
    assert built == []
