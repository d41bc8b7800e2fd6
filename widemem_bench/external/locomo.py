"""LoCoMo loader: real two-speaker conversations with answerable and adversarial questions.

LoCoMo (Maharana et al., ACL 2024, "Evaluating Very Long-Term Conversational Memory of
LLM Agents") is distributed by snap-research/LoCoMo as ``data/locomo10.json`` under
CC BY-NC 4.0. The project never copies it into its own tree: the path comes from the
config (default ``../shared/data/locomo10.json`` beside the checkout) and the file is
checked against a pinned sha256 before use.

Everything here is plain pandas: one row per turn, one row per question, so that an
experiment can embed all texts once and slice by conversation with array operations.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from widemem_bench.provenance import file_sha256

LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
LOCOMO_SOURCE = "snap-research/LoCoMo, data/locomo10.json (CC BY-NC 4.0)"
# The repository root is two levels above this package folder; the shared data sits beside it.
DEFAULT_LOCOMO_PATH = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo10.json"

# LoCoMo's own mapping (widemem's scripts swap 1 and 4; we do not).
CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
ANSWERABLE_CATEGORIES = (1, 2, 3, 4)
ADVERSARIAL_CATEGORY = 5

MEMORY_FORMS = ("turn", "rule")
MEMORY_COLUMNS = ("sample_id", "speaker", "dia_id", "session", "session_date", "turn", "text", "content")

_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D:?(\d+):0*(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


def parse_session_date(text: str) -> dt.datetime:
    """Parse LoCoMo's session stamp, e.g. "1:56 pm on 8 May, 2023", to a naive UTC datetime."""
    cleaned = " ".join(text.strip().split())
    try:
        return dt.datetime.strptime(cleaned, _DATE_FORMAT)
    except ValueError:
        raise ValueError(f"session_date: cannot parse {text!r} (expected like '1:56 pm on 8 May, 2023')") from None


def normalise_evidence(items: Iterable[str]) -> tuple[str, ...]:
    """Canonical dia_ids from LoCoMo's evidence list.

    A few entries are malformed in the file ("D8:6; D9:17", "D:11:26", "D30:05", "D"): split
    them, fix the stray colon and zero padding, drop what names no turn at all.
    """
    out: list[str] = []
    for item in items:
        for match in _DIA_ID.finditer(str(item)):
            dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia_id not in out:
                out.append(dia_id)
    return tuple(out)


def resolve_locomo_path(path: str | Path | None = None) -> Path:
    """The data path: the argument, else the default beside the checkout."""
    return Path(path).expanduser().resolve() if path is not None else DEFAULT_LOCOMO_PATH


@dataclass(frozen=True)
class LoCoMo:
    """The parsed file.

    ``conversations``: sample_id, speaker_a, speaker_b, n_sessions, n_turns, n_questions.
    ``turns``: sample_id, session (int), session_date (datetime), turn (position in the
    conversation), speaker, dia_id, text, blip_caption, content ("Speaker: text").
    ``questions``: sample_id, qa_index, question, answer, adversarial_answer, category,
    category_name, evidence (tuple of dia_ids), answerable (category 1-4).
    """

    conversations: pd.DataFrame
    turns: pd.DataFrame
    questions: pd.DataFrame
    path: Path
    sha256: str

    @property
    def sample_ids(self) -> list[str]:
        return list(self.conversations["sample_id"])

    def select(self, sample_ids: Sequence[str]) -> LoCoMo:
        """A subset of conversations (e.g. a one-conversation slice for a fast test)."""
        unknown = sorted(set(sample_ids) - set(self.sample_ids))
        if unknown:
            raise ValueError(f"sample_ids: unknown conversation(s) {unknown}")
        keep = list(sample_ids)
        return LoCoMo(
            conversations=self.conversations[self.conversations["sample_id"].isin(keep)].reset_index(drop=True),
            turns=self.turns[self.turns["sample_id"].isin(keep)].reset_index(drop=True),
            questions=self.questions[self.questions["sample_id"].isin(keep)].reset_index(drop=True),
            path=self.path,
            sha256=self.sha256,
        )

    def speakers(self, sample_id: str) -> tuple[str, str]:
        row = self.conversations.loc[self.conversations["sample_id"] == sample_id]
        if row.empty:
            raise ValueError(f"sample_id: unknown conversation {sample_id!r}")
        return str(row["speaker_a"].iloc[0]), str(row["speaker_b"].iloc[0])

    def memories(self, form: str = "turn", **options: Any) -> pd.DataFrame:
        """Memories to store, one row each (``MEMORY_COLUMNS``); ``content`` is what gets embedded
        and ``text`` the same without the "Speaker: " prefix.

        ``turn``: one memory per turn, "Speaker: text" (the issue's baseline form).
        ``rule``: facts pulled from each turn by the engine's ``rule`` extractor (loaded
        lazily: ImportError when the engine is not there); each fact keeps its turn's dia_id.
        """
        if form == "turn":
            return self.turns[list(MEMORY_COLUMNS)].copy()
        if form == "rule":
            return rule_fact_memories(self.turns, **options)
        raise ValueError(f"form: unknown memory form {form!r} (expected one of {MEMORY_FORMS})")


def rule_fact_memories(turns: pd.DataFrame, **options: Any) -> pd.DataFrame:
    """Facts from the engine's ``rule`` extractor, one row per fact, tagged with the source turn.

    Imported lazily because the extractor lives in the engine, which may be absent in a
    notebook that only wants the turns. The extractor sees the bare text (no speaker prefix)
    and each fact is stored as "Speaker: fact" so that the speaker stays searchable.
    """
    from widemem_bench.engine import extractors  # lazy: optional dependency of this loader

    extract = _find_rule_extractor(extractors, **options)
    rows: list[dict[str, Any]] = []
    for rec in turns.itertuples(index=False):
        for fact in extract(str(rec.text)):
            text = getattr(fact, "content", fact)
            text = str(text).strip()
            if not text:
                continue
            rows.append(
                {
                    "sample_id": rec.sample_id,
                    "speaker": rec.speaker,
                    "dia_id": rec.dia_id,
                    "session": rec.session,
                    "session_date": rec.session_date,
                    "turn": rec.turn,
                    "text": text,
                    "content": f"{rec.speaker}: {text}",
                }
            )
    return pd.DataFrame(rows, columns=list(MEMORY_COLUMNS))


def _find_rule_extractor(module: Any, **options: Any) -> Any:
    """A callable text -> facts from the extractors module, whatever shape it settled on."""
    for name in ("get_extractor", "make_extractor", "load_extractor", "build_extractor"):
        factory = getattr(module, name, None)
        if callable(factory):
            extractor = factory("rule", **options)
            break
    else:
        cls = getattr(module, "RuleExtractor", None)
        if cls is None:
            raise ImportError("widemem_bench.engine.extractors has no rule extractor yet")
        extractor = cls(**options)
    for method in ("extract", "__call__"):
        fn = getattr(extractor, method, None)
        if callable(fn):
            return fn
    raise ImportError("widemem_bench.engine.extractors: rule extractor is not callable")


def locomo_file(path: str | Path | None = None) -> Path:
    """The resolved path of locomo10.json; one-line ValueError when there is no file there
    (a check that reads nothing: a sweep runs it on every job before one starts)."""
    resolved = resolve_locomo_path(path)
    if not resolved.is_file():
        raise ValueError(
            f"locomo_path: no file at {resolved}; get {LOCOMO_SOURCE} and point the config at it"
        )
    return resolved


def load_locomo(path: str | Path | None = None, *, verify: bool = True) -> LoCoMo:
    """Read and check locomo10.json; one-line ValueError if it is missing or not the pinned file."""
    resolved = locomo_file(path)
    digest = file_sha256(resolved)
    if verify and digest != LOCOMO_SHA256:
        raise ValueError(
            f"locomo_path: sha256 {digest[:12]}... of {resolved} is not the pinned "
            f"{LOCOMO_SHA256[:12]}...; get {LOCOMO_SOURCE}"
        )
    with resolved.open(encoding="utf-8") as handle:
        raw = json.load(handle)
    if not isinstance(raw, list):
        raise ValueError(f"locomo_path: {resolved} is not a JSON list of conversations")
    return _parse(raw, resolved, digest)


def _parse(raw: list[dict[str, Any]], path: Path, digest: str) -> LoCoMo:
    conv_rows: list[dict[str, Any]] = []
    turn_rows: list[dict[str, Any]] = []
    q_rows: list[dict[str, Any]] = []
    for item in raw:
        sample_id = str(item["sample_id"])
        conv = item["conversation"]
        sessions = sorted(
            int(m.group(1)) for k in conv if (m := _SESSION_KEY.fullmatch(k)) and isinstance(conv[k], list)
        )
        position = 0
        for session in sessions:
            date = parse_session_date(conv[f"session_{session}_date_time"])
            for turn in conv[f"session_{session}"]:
                text = str(turn["text"])
                turn_rows.append(
                    {
                        "sample_id": sample_id,
                        "session": session,
                        "session_date": date,
                        "turn": position,
                        "speaker": str(turn["speaker"]),
                        "dia_id": str(turn["dia_id"]),
                        "text": text,
                        "blip_caption": turn.get("blip_caption"),
                        "content": f"{turn['speaker']}: {text}",
                    }
                )
                position += 1
        known = {r["dia_id"] for r in turn_rows if r["sample_id"] == sample_id}
        for index, qa in enumerate(item["qa"]):
            category = int(qa["category"])
            if category not in CATEGORY_NAMES:
                raise ValueError(f"category: {sample_id} question {index} has unknown category {category}")
            evidence = tuple(e for e in normalise_evidence(qa.get("evidence", [])) if e in known)
            answer = qa.get("answer")
            q_rows.append(
                {
                    "sample_id": sample_id,
                    "qa_index": index,
                    "question": str(qa["question"]),
                    "answer": None if answer is None else str(answer),
                    "adversarial_answer": qa.get("adversarial_answer"),
                    "category": category,
                    "category_name": CATEGORY_NAMES[category],
                    "evidence": evidence,
                    "answerable": category in ANSWERABLE_CATEGORIES,
                }
            )
        conv_rows.append(
            {
                "sample_id": sample_id,
                "speaker_a": str(conv["speaker_a"]),
                "speaker_b": str(conv["speaker_b"]),
                "n_sessions": len(sessions),
                "n_turns": position,
                "n_questions": len(item["qa"]),
            }
        )
    return LoCoMo(
        conversations=pd.DataFrame(conv_rows),
        turns=pd.DataFrame(turn_rows),
        questions=pd.DataFrame(q_rows),
        path=path,
        sha256=digest,
    )
