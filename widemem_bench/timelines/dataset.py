"""The ``Timelines`` container: export to Hugging Face datasets, parquet, BEIR, and back."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from widemem_bench.timelines.generator import (
    DEFAULT_START,
    EVENT_KINDS,
    GENERATOR_VERSION,
    QUESTION_KINDS,
    generate_tables,
    normalise_events,
    normalise_questions,
)
from widemem_bench.timelines.templates import SPLITS
from widemem_bench.timelines.world_b import WORLD_B_VERSION
from widemem_bench.timelines.world_b import generate_tables as generate_tables_b
from widemem_bench.timelines.world_c import WORLD_C_VERSION
from widemem_bench.timelines.world_c import generate_tables as generate_tables_c
from widemem_bench.timelines.world_n import WORLD_N_VERSION
from widemem_bench.timelines.world_n import generate_tables as generate_tables_n

TABLES: tuple[str, ...] = ("events", "questions")
# BEIR's loader reads qrels/<split>.tsv and defaults to "test"; its names for our splits.
BEIR_SPLITS: dict[str, str] = {"train": "train", "validation": "dev", "holdout": "test"}


def split_file(table: str, split: str) -> str:
    """Path of one table's split inside a saved version, relative to its folder.

    The ``data/<split>-00000-of-00001`` shard name is the one pattern by which Hugging
    Face ``datasets`` infers *any* split name from files: with ``<table>/<split>.parquet``,
    ``load_dataset(path, data_dir=table)`` knew only train / validation / test and
    silently dropped the holdout.
    """
    return f"{table}/data/{split}-00000-of-00001.parquet"


def _read_split(path: Path, table: str, split: str) -> pd.DataFrame:
    """One saved split; folders built before the shard layout kept ``<table>/<split>.parquet``."""
    file = path / split_file(table, split)
    if not file.is_file() and (path / table / f"{split}.parquet").is_file():
        file = path / table / f"{split}.parquet"
    return pq.read_table(file).to_pandas()


def beir_user(doc_or_query_id: str) -> str:
    """The user a BEIR corpus or query ``_id`` belongs to: ids are ``<user_id>-<local id>``."""
    return str(doc_or_query_id).split("-", 1)[0]


def beir_scope(results: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """A BEIR run (query id -> {corpus id: score}) with every other user's memories dropped.

    BEIR's ``GenericDataLoader`` keeps only ``_id``, ``title`` and ``text``, and its
    retrievers search the whole corpus; a memory layer searches one user's memories. Since
    both ids start with the user id, scoping a run after retrieval needs only the ids.
    """
    return {q: {d: v for d, v in hits.items() if beir_user(d) == beir_user(q)}
            for q, hits in results.items()}
_DEFAULTS = {"span_days": 365, "questions_per_user": 40, "start": DEFAULT_START}

# The worlds a data set can come from: "a" is the timelines every method is fitted on
# (train / validation only), "b" an independently designed world for evaluation only,
# "c" a third world, written blind to B, to develop and tune on (issue 13); "n" a
# natural-register development world (chat messages and CRM notes, issues 25 and 26).
WORLDS: dict[str, str] = {"a": "timelines (world A)", "b": "world_b (evaluation-only)",
                          "c": "world_c (development)", "n": "world_n (development, natural register)"}
_WORLD_VERSIONS: dict[str, str] = {"b": WORLD_B_VERSION, "c": WORLD_C_VERSION, "n": WORLD_N_VERSION}
# The regression gate's users (widemem_bench.regression.gate_timelines): never fitted on.
GATE_SPLIT = "gate"
# Worlds nothing may be fitted, tuned or calibrated on.
SEALED_WORLDS: tuple[str, ...] = ("b",)


def check_world(world: object) -> str:
    if world not in WORLDS:
        known = ", ".join(f"{k} = {v}" for k, v in WORLDS.items())
        raise ValueError(f"world: unknown world {world!r} (known: {known})")
    return str(world)


def check_fittable(world: Any, what: str = "this") -> None:
    """Refuse to fit on world B (evaluation only, issue 13) and on the regression gate's
    users (split "gate", issue 23). Call it where a method fits, tunes or calibrates on a
    loaded data set: ``check_fittable(tl)`` (a Timelines, its meta or its world name).
    World C is a development world: fitting on it is allowed."""
    meta: Any = getattr(world, "meta", world)
    if isinstance(meta, dict):
        frames = [getattr(world, t, None) for t in TABLES]
        gated = meta.get("split") == GATE_SPLIT or any(
            f is not None and "split" in f.columns and (f["split"] == GATE_SPLIT).any() for f in frames)
        if gated:
            raise ValueError(f"dataset: the gate users (split {GATE_SPLIT!r}) are read by the regression gate "
                             f"only; {what} fits on world A train / validation or world C")
        world = str(meta.get("world", "a"))
    if check_world(world) in SEALED_WORLDS:
        raise ValueError(f"dataset: world {world!r} is evaluation-only; {what} fits on world A "
                         "train / validation (dataset=timelines or timelines_small) or world C")


def world_version(world: str = "a") -> str:
    """Version prefix of a world's folders: ``v4`` (world A), ``b2v4`` (world B v2 on the
    shared ground-truth machinery of generator v4: a change to either rebuilds it),
    ``c1v4`` (world C v1, on generator v4's columns), ``n1v4`` (world N v1)."""
    w = check_world(world)
    if w == "a":
        return f"v{GENERATOR_VERSION}"
    return f"{w}{_WORLD_VERSIONS[w]}v{GENERATOR_VERSION}"


def version_name(n_users: int, seed: int, span_days: int = 365, questions_per_user: int = 40,
                 start: dt.datetime = DEFAULT_START, world: str = "a") -> str:
    """Folder name of a generated set: ``v4-n300-s0`` (world B: ``b2v4-n300-s0``), plus
    suffixes for non-default options."""
    name = f"{world_version(world)}-n{n_users}-s{seed}"
    if span_days != _DEFAULTS["span_days"]:
        name += f"-d{span_days}"
    if questions_per_user != _DEFAULTS["questions_per_user"]:
        name += f"-q{questions_per_user}"
    if start != _DEFAULTS["start"]:
        name += f"-t{start:%Y%m%d}"
    return name


@dataclass
class Timelines:
    """Generated timelines: ``events`` and ``questions`` DataFrames plus the settings used."""

    events: pd.DataFrame
    questions: pd.DataFrame
    meta: dict[str, Any]

    def __repr__(self) -> str:
        return (f"Timelines({self.version}: {len(self.events)} events, "
                f"{len(self.questions)} questions)")

    @property
    def version(self) -> str:
        m = self.meta
        return version_name(m["n_users"], m["seed"], m["span_days"], m["questions_per_user"],
                            dt.datetime.fromisoformat(m["start"]), m.get("world", "a"))

    @property
    def world(self) -> str:
        return str(self.meta.get("world", "a"))

    def table(self, name: str) -> pd.DataFrame:
        if name not in TABLES:
            raise ValueError(f"table: expected one of {TABLES}, got {name!r}")
        return self.events if name == "events" else self.questions

    def to_datasets(self, table: str = "questions") -> Any:
        """A ``datasets.DatasetDict`` of one table with splits train / validation / holdout.

        The saved folder holds the two tables as two configs ("events", "questions") of one
        Hugging Face dataset; this returns one config at a time.
        """
        import importlib

        datasets: Any = importlib.import_module("datasets")
        df = self.table(table)
        return datasets.DatasetDict({
            s: datasets.Dataset.from_pandas(df[df["split"] == s].reset_index(drop=True),
                                            preserve_index=False)
            for s in SPLITS
        })

    # ---------------------------------------------------------------- counts and card
    def counts(self) -> dict[str, dict[str, dict[str, int]]]:
        """Rows per kind and split: {"events": {kind: {split: n}}, "questions": ..., "users": ...}."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for table, col, kinds in (("events", "event_kind", EVENT_KINDS),
                                  ("questions", "kind", QUESTION_KINDS)):
            df = self.table(table)
            out[table] = {k: {s: int(((df[col] == k) & (df["split"] == s)).sum()) for s in SPLITS}
                          for k in kinds}
        users = self.events.drop_duplicates("user_id")
        out["users"] = {"users": {s: int((users["split"] == s).sum()) for s in SPLITS}}
        ev, q = self.events, self.questions
        masks = {
            "oblique_events": ev["oblique"], "restatements": ev["restatement"],
            "ymyl_events": ev["ymyl_category"].notna(),
            "superseded_facts": ev["valid_to"].notna(),
            "unanswerable_questions": q["gold_fact_ids"].map(len) == 0,
            "quiet_frustration_questions": q["quiet_frustration"],
            **{f"gold_mode_{m}": q["gold_mode"] == m for m in ("fast", "balanced", "deep")},
        }
        out["labels"] = {}
        for name, mask in masks.items():
            df = ev if name.endswith(("events", "restatements", "facts")) else q
            out["labels"][name] = {s: int((mask & (df["split"] == s)).sum()) for s in SPLITS}
        return out

    def card(self) -> str:
        """Dataset card (README.md) with YAML config header and count tables."""
        b, c, n = self.world == "b", self.world == "c", self.world == "n"
        pretty = ("widemem_bench world B (evaluation-only)" if b else
                  "widemem_bench world C (development)" if c else
                  "widemem_bench world N (development, natural register)" if n else
                  "widemem_bench synthetic user timelines")
        lines = ["---", f"pretty_name: {pretty}",
                 "license: apache-2.0", "configs:"]
        for table in TABLES:
            lines.append(f"- config_name: {table}")
            if table == "questions":
                lines.append("  default: true")
            lines.append("  data_files:")
            for s in SPLITS:
                lines += [f"  - split: {s}", f"    path: {split_file(table, s)}"]
        title = "World B" if b else "World C" if c else "World N" if n else "Synthetic user timelines"
        lines += ["---", "", f"# {title} `{self.version}`", ""]
        if b:
            lines += ["**Evaluation only.** Nothing is fitted or tuned on world B, and no word "
                      "list or constant in method code may come from it; see "
                      "`datasets/world_b/README.md` in the repository.", "",
                      f"- world B version: {self.meta.get('world_version')}"]
        if c:
            lines += ["**Development world.** Written blind to world B, to develop and tune the "
                      "contradiction resolvers on (fitting allowed); see `datasets/world_c/README.md` "
                      "in the repository.", "",
                      f"- world C version: {self.meta.get('world_version')}"]
        if n:
            lines += ["**Development world.** Natural register (chat messages, CRM-style agent "
                      "notes), written blind to the methods it measures; its holdout is a measuring "
                      "set, read once per method version; see `datasets/world_n/README.md` in the "
                      "repository.", "",
                      f"- world N version: {self.meta.get('world_version')}"]
        lines += [f"- generator version: {self.meta['generator_version']}",
                  f"- seed: {self.meta['seed']}",
                  f"- users: {self.meta['n_users']}",
                  f"- span: {self.meta['span_days']} days from {self.meta['start']}",
                  f"- questions per user: {self.meta['questions_per_user']}",
                  "",
                  "Built by `widemem-bench data` (`make data`); see "
                  f"`datasets/{'world_b' if b else 'world_c' if c else 'world_n' if n else 'timelines'}/README.md` in the repository "
                  "for the columns.",
                  ("Splits are by user (world B as a whole is for evaluation; its phrasings are "
                   "shared by its splits)." if b else
                   "Splits are by user; every split is for development, phrasings are shared." if c else
                   "Splits are by user; train / validation are for development, the holdout is a "
                   "measuring set (read once per method version); phrasings are shared." if n else
                   "Splits are by user and by template family: a holdout user's utterances, stored "
                   "facts and questions use phrasings that no train or validation user sees."), ""]
        counts = self.counts()
        for title, key, first in (("Users per split", "users", "users"),
                                  ("Events per kind", "events", "event_kind"),
                                  ("Questions per kind", "questions", "kind"),
                                  ("Other labels", "labels", "label")):
            lines += [f"## {title}", "", f"| {first} | " + " | ".join(SPLITS) + " | total |",
                      "|---|" + "---:|" * (len(SPLITS) + 1)]
            for k, per in counts[key].items():
                vals = [per[s] for s in SPLITS]
                lines.append(f"| {k} | " + " | ".join(str(v) for v in vals) + f" | {sum(vals)} |")
            lines.append("")
        lines += ["## BEIR export", "",
                  "`beir/corpus.jsonl` (one memory per event fact, subject-stripped; `_id` = "
                  "fact_id, with `user_id`: search within one user), `beir/queries.jsonl`, "
                  "`beir/qrels/{train,dev,test}.tsv` for the splits train, validation, holdout "
                  "(query-id, corpus-id, score; questions without a gold fact have no qrels row). "
                  "`GenericDataLoader('beir').load(split='test')` reads it. Its loader keeps only "
                  "`_id`, `title` and `text`, so the user lives in the ids too: every `_id` is "
                  "`<user_id>-<fact or question id>`; keep a query's hits to its own user's memories "
                  "(`widemem_bench.timelines.dataset.beir_scope(results)`).", ""]
        return "\n".join(lines)

    # ---------------------------------------------------------------- save
    def save(self, root: str | Path) -> Path:
        """Write ``root/<version>/`` (parquet per table and split, card, BEIR, manifest).

        Writes into a temporary sibling and renames it, so an interrupted build never
        leaves a half-written version that ``build`` would mistake for a finished one.
        """
        root = Path(root)
        final = root / self.version
        # pid in the name: two builds racing never write into each other's folder
        tmp = root / f".{self.version}.{os.getpid()}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        for table in TABLES:
            (tmp / table).mkdir(parents=True, exist_ok=True)
            df = self.table(table)
            for s in SPLITS:
                part = df[df["split"] == s].reset_index(drop=True)
                (tmp / split_file(table, s)).parent.mkdir(parents=True, exist_ok=True)
                pq.write_table(pa.Table.from_pandas(part, preserve_index=False),
                               tmp / split_file(table, s))
        (tmp / "README.md").write_text(self.card() + "\n", encoding="utf-8")
        self._write_beir(tmp / "beir")
        manifest = {**self.meta, "version": self.version,
                    "rows": {t: len(self.table(t)) for t in TABLES}}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n",
                                           encoding="utf-8")
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
        return final

    def _write_beir(self, out: Path) -> None:
        (out / "qrels").mkdir(parents=True, exist_ok=True)
        ev = self.events[self.events["fact_stripped"].notna()]
        ev_rows: list[Any] = ev.to_dict("records")
        with open(out / "corpus.jsonl", "w", encoding="utf-8") as fh:
            for r in ev_rows:
                fh.write(json.dumps({"_id": r["fact_id"], "title": "", "text": r["fact_stripped"],
                                     "user_id": r["user_id"], "at": r["at"].isoformat()},
                                    ensure_ascii=False) + "\n")
        q_rows: list[Any] = self.questions.to_dict("records")
        with open(out / "queries.jsonl", "w", encoding="utf-8") as fh:
            for r in q_rows:
                fh.write(json.dumps({"_id": r["question_id"], "text": r["text"],
                                     "user_id": r["user_id"], "split": r["split"],
                                     "kind": r["kind"], "asked_at": r["asked_at"].isoformat()},
                                    ensure_ascii=False) + "\n")
        for s in SPLITS:
            with open(out / "qrels" / f"{BEIR_SPLITS.get(s, s)}.tsv", "w", encoding="utf-8") as fh:
                fh.write("query-id\tcorpus-id\tscore\n")
                for r in q_rows:
                    if r["split"] == s:
                        for fid in r["gold_fact_ids"]:
                            fh.write(f"{r['question_id']}\t{fid}\t1\n")


def generate(n_users: int = 300, seed: int = 0, *, span_days: int = 365,
             start: dt.datetime | str = DEFAULT_START, questions_per_user: int = 40,
             progress: bool = False, world: str = "a") -> Timelines:
    """Generate timelines for ``n_users`` users with ``numpy`` PCG64 seeded by ``seed``.

    ``span_days`` is the timeline length in days (>= 30), ``start`` its first day (naive UTC),
    ``questions_per_user`` the number of dated questions per user (>= 1), ``world`` the
    world: ``"a"`` (the timelines) or ``"b"`` (world B, evaluation-only).
    """
    check_world(world)
    if isinstance(n_users, bool) or not isinstance(n_users, int) or n_users < 1:
        raise ValueError(f"n_users: expected an int >= 1, got {n_users!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
    if not isinstance(span_days, int) or span_days < 30:
        raise ValueError(f"span_days: expected an int >= 30, got {span_days!r}")
    if not isinstance(questions_per_user, int) or questions_per_user < 1:
        raise ValueError(f"questions_per_user: expected an int >= 1, got {questions_per_user!r}")
    if isinstance(start, str):
        try:
            start = dt.datetime.fromisoformat(start)
        except ValueError as exc:
            raise ValueError(f"start: expected an ISO date, got {start!r}") from exc
    if start.tzinfo is not None:
        raise ValueError("start: expected a timezone-naive datetime (meaning UTC)")
    gen = {"a": generate_tables, "b": generate_tables_b, "c": generate_tables_c,
           "n": generate_tables_n}[world]
    events, questions = gen(n_users, seed, span_days, start, questions_per_user, progress=progress)
    meta: dict[str, Any] = {"generator_version": GENERATOR_VERSION, "n_users": n_users, "seed": seed,
                            "span_days": span_days, "start": start.isoformat(),
                            "questions_per_user": questions_per_user, "world": world}
    if world in _WORLD_VERSIONS:
        meta["world_version"] = _WORLD_VERSIONS[world]
    return Timelines(events, questions, meta)


def load(path: str | Path) -> Timelines:
    """Read a folder written by :meth:`Timelines.save` back into equal DataFrames."""
    path = Path(path)
    manifest = path / "manifest.json"
    if not manifest.is_file():
        raise ValueError(f"path: no timelines manifest.json in {path}")
    meta = json.loads(manifest.read_text(encoding="utf-8"))
    frames = {}
    for table in TABLES:
        parts = [_read_split(path, table, s) for s in SPLITS]
        frames[table] = pd.concat(parts, ignore_index=True)
    keep = ("generator_version", "n_users", "seed", "span_days", "start", "questions_per_user",
            "world", "world_version")
    return Timelines(normalise_events(frames["events"]), normalise_questions(frames["questions"]),
                     {k: meta[k] for k in keep if k in meta})
