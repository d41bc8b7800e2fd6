r"""Sealed sets (issue 13): no holdout or world-B phrasing, and no distinctive world-B
word, appears in method code or tests.

Collects every template of world A's sealed holdout (``timelines/holdout_templates.py``:
utterances, stored facts, questions, clauses, stored and said rewordings) and of world B
(``timelines/world_b_templates.py``), plus world B's distinctive vocabulary, and scans
every text file under ``widemem_bench/`` (except ``widemem_bench/timelines/``, where
they live) and ``tests/`` (except this file). A template is split at its placeholders
into literal fragments; a fragment is searched for (case-insensitive, whitespace and
quotes normalised, adjacent string literals joined, whole words) when it has 6+ words,
or 3+ words of which 2+ are not function words (so "what is the name of" is plain
English, not a hit; "took my ... on last spring" is). A template without placeholders
(most questions) counts whole from 3 words. A template with placeholders is also searched
for as a whole, each placeholder (or format field, whatever its name) read as ``{}``, when
its literal words number 2+ with a content word among them and world A's own
``templates.py`` has no template of that shape: so a copied "where is {name} based now?"
or "Dinner was {x}." is a hit although no fragment of it is long enough. Vocabulary items are searched as whole words when
distinctive: two or more words, a capitalised name, or 9+ letters (so "pottery" or
"Korean" is not a hit, "Harbourline Ambulance Trust" or "gabapentin" is).

Regexes (issue 27): every string constant of a Python file (and every line of another text
file) holding regex syntax is parsed by the stdlib's regex parser and reduced to its literal word
runs (``\s+`` a word gap, alternations and optional parts expanded, wildcards ending a run); a
sealed phrase found there as a word n-gram is a hit (`scan_regexes`). Scanned: ``widemem_bench/``,
``tests/``, ``configs/`` and every Python file of the repository, outside ``timelines/``.

``ALLOWED`` lists the hits that were already in the tree when world B was written
(widemem_bench at 9fe8ea3): general drug and condition names in the YMYL lexicon, which
is written from general medical knowledge and predates world B. Any other hit fails.
"""

from __future__ import annotations

import ast
import itertools
import re
import re._parser as sre  # the stdlib's own regex parser: patterns read as re reads them
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from widemem_bench.timelines import holdout_templates as H
from widemem_bench.timelines import templates as A
from widemem_bench.timelines import world_b_templates as BT
from widemem_bench.timelines import world_b_vocab as BV

ROOT = Path(__file__).resolve().parents[1]
SCANNED = (ROOT / "widemem_bench", ROOT / "tests", ROOT / "configs")
EXEMPT = (ROOT / "widemem_bench" / "timelines", Path(__file__).resolve())
# Besides SCANNED: every Python file of the repository (top-level experiments/, scripts), outside
# these folders (tools, caches, run outputs; never the project's own code).
NOT_REPO = (".git", ".venv", "outputs", "multirun", ".mypy_cache", ".ruff_cache", ".pytest_cache", "node_modules")
TEXT_SUFFIXES = {".py", ".md", ".txt", ".json", ".jsonl", ".yaml", ".yml", ".toml", ".csv", ".tsv", ".cfg"}
MIN_WORDS, MIN_CONTENT_WORDS, ALWAYS_WORDS = 3, 2, 6
# Closed-class English words: a fragment made of these plus one noun is plain English.
_FUNCTION_TEXT = """
a an the and or but if so to of in on at by for from with about as into over after before
than then that this these those there here what which who whom whose where when why how
is am are was were be been being do does did have has had will would can could should
may might must shall i me my mine you your yours he him his she her hers it its we us
our they them their not no yes any some all again still just now up out off very too
"""
FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())

# Hits present before world B existed (see the docstring): (file, string) pairs.
ALLOWED: frozenset[tuple[str, str]] = frozenset(
    [("widemem_bench/engine/ymyl_lexicon.py", w) for w in (
        "ibuprofen", "lamotrigine", "bipolar disorder", "valproate", "allopurinol", "febuxostat",
        "colchicine", "propranolol", "mesalamine", "ulcerative colitis", "tamsulosin",
        "methotrexate", "psoriatic arthritis", "gabapentin", "pregabalin", "spironolactone",
        "pcos", "endometriosis", "fibromyalgia", "osteoporosis", "long covid", "narcolepsy")]
    + [("tests/test_engine_policy.py", "ibuprofen"), ("tests/test_ymyl_lexicon.py", "bipolar disorder")]
    # Found when the scan began reading regexes (issue 27): an English phrasal verb among the
    # rule resolver's change markers since its first commit (c2c7880, before its first world B
    # reading, DESIGN_LOG R1); it matches a 3-word fragment of one world B template
    # ("{name} got rid of {old_short}; ..."). Left in place and named here, not hidden.
    + [("widemem_bench/engine/slot_patterns.py", "got rid of")]
    # The language layer (issue 25) reads "what's the name of X" as a question asking for a
    # name: a general English frame that issue 25 itself quotes as an asked slot, written
    # without opening world B; it matches a 4-word fragment of one world B question template.
    + [(f, "what's the name of") for f in ("widemem_bench/language/parse.py",
                                           "widemem_bench/language/read.py", "tests/test_language.py")]
)


def _strings(obj: object) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, (tuple, list)):
        for v in obj:
            yield from _strings(v)


def _norm(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    # "what did I name " "my houseplant?" (adjacent literals, maybe across lines) -> one string
    text = re.sub(r"([\"'])\s*\n?\s*(?:f|r|rf|fr)?\1", "", text)
    return re.sub(r"\s+", " ", text).lower()


def fragments(template: str) -> list[str]:
    """Literal runs of a template between placeholders that are specific enough to search
    for; a template without placeholders (most questions) counts whole from 3 words."""
    whole = _norm(template).strip(" .,;:!?()-\"'")
    if "{" not in template and len(whole.split()) >= 3:
        return [whole]
    out = []
    for part in re.split(r"\{[a-z_]+\}", template):
        frag = _norm(part).strip(" .,;:!?()-\"'")
        words = frag.split()
        content = [w for w in words if w.strip(".,;:!?()'\"") not in FUNCTION_WORDS]
        if len(words) >= ALWAYS_WORDS or (len(words) >= MIN_WORDS and len(content) >= MIN_CONTENT_WORDS):
            out.append(frag)
    return out


# A format field: {name}, {0}, {x!r}, {v:.2f}, {row['city']} (never a dict literal: those open with a quote)
_FIELD = re.compile(r"\{[A-Za-z_0-9][^{}\n\"]*\}")


def shape(template: str) -> str | None:
    """The template with every placeholder as ``{}``, when specific enough to search for."""
    if "{" not in template:
        return None
    s = _FIELD.sub("{}", _norm(template)).strip(" .,;:!?()-\"'")
    words = s.replace("{}", " ").split()
    content = [w for w in words if w.strip(".,;:!?()'\"") not in FUNCTION_WORDS]
    return s if len(words) >= 2 and content else None


def _world_a_shapes() -> frozenset[str]:
    return frozenset(filter(None, (shape(s) for s in _strings((A.UTTERANCES, A.QUESTIONS, A.FACTS,
                                                                 A.FRUSTRATION_CLAUSES)))))


def _distinctive(item: str) -> bool:
    return len(item.split()) >= 2 or item[:1].isupper() or len(item) >= 9


def sealed_phrases() -> dict[str, str]:
    """Fragment -> where it comes from."""
    out: dict[str, str] = {}
    for source, groups in (
        ("holdout", (H.UTTERANCES, H.QUESTIONS, H.FACTS, H.FRUSTRATION_CLAUSES, list(H.STORED_TEXTS.values()),
                     list(H.SAID_TEXTS.values()))),
        ("world B", (BT.UTTERANCES_1, BT.UTTERANCES_3, BT.QUESTIONS_1, BT.QUESTIONS_3, BT.FACTS,
                     BT.CLAUSES_1, BT.CLAUSES_3)),
    ):
        for s in _strings(groups):
            for frag in fragments(s):
                out.setdefault(frag, f"{source} template {s!r}")
    return out


def sealed_shapes() -> dict[str, str]:
    """Template shape (placeholders as ``{}``) -> where it comes from; world A's own shapes
    (the templates train and validation use) are not sealed."""
    out: dict[str, str] = {}
    world_a = _world_a_shapes()
    for source, groups in (
        ("holdout", (H.UTTERANCES, H.QUESTIONS, H.FACTS, H.FRUSTRATION_CLAUSES)),
        ("world B", (BT.UTTERANCES_1, BT.UTTERANCES_3, BT.QUESTIONS_1, BT.QUESTIONS_3, BT.FACTS,
                     BT.CLAUSES_1, BT.CLAUSES_3)),
    ):
        for s in _strings(groups):
            sh = shape(s)
            if sh is not None and sh not in world_a:
                out.setdefault(sh, f"{source} template {s!r}")
    return out


def world_b_words() -> dict[str, str]:
    items: dict[str, str] = {}
    for name in ("PEOPLE", "KIN_NAMES", "CITIES", "EMPLOYERS", "OCCUPATIONS", "VEHICLES", "SCHOOLS",
                 "DESTINATIONS", "PET_NAMES", "ALLERGENS", "MEDICATIONS", "CONDITIONS", "DINNERS",
                 "PODCASTS"):
        for s in _strings(getattr(BV, name)):
            if _distinctive(s):
                items.setdefault(_norm(s), f"world B vocabulary {name}: {s!r}")
    return items


def _exempt(p: Path) -> bool:
    r = p.resolve()
    return any(r == e or e in r.parents for e in EXEMPT) or "timelines" in p.relative_to(ROOT).parts[:-1]


def scanned_files() -> Iterable[Path]:
    seen: set[Path] = set()
    for top in SCANNED:
        for p in sorted(top.rglob("*")):
            if p.is_file() and p.suffix in TEXT_SUFFIXES and not _exempt(p):
                seen.add(p)
                yield p
    for p in sorted(ROOT.rglob("*.py")):
        rel = p.relative_to(ROOT).parts
        if p not in seen and not any(part in NOT_REPO for part in rel) and not _exempt(p):
            yield p


# ---------------------------------------------------------------------------- regexes
# A regex is reduced to its literal word runs: what any string it matches must contain, word
# for word. \s, a space class and a literal space are a word gap; \b, ^, $ and lookarounds
# nothing; an alternation or an optional part is expanded (up to MAX_VARIANTS readings); any
# other class or wildcard (\w+, ., [a-z]) ends a run. The runs are then compared with the sealed
# phrases as word n-grams, so r"changed\s+(?:jobs|roles),\s+now" holds "changed jobs, now".
MAX_VARIANTS = 64
_BREAK = "\x00"
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_REGEX_HINT = re.compile(r"\\[sSbBwWdD]|\(\?|\\.|[|\[\]]|[+*?]")


def _is_space_class(items: list) -> bool:
    return all((op == sre.CATEGORY and arg in (sre.CATEGORY_SPACE,)) or (op == sre.LITERAL and chr(arg).isspace())
               for op, arg in items)


def _readings(seq: Iterable) -> list[str]:
    """Every reading of a parsed pattern as text, _BREAK where a wildcard stands."""
    out = [""]
    for op, arg in seq:
        if op == sre.LITERAL:
            parts = [chr(arg)]
        elif op == sre.IN:
            items = [x for x in arg if x[0] != sre.NEGATE]
            if _is_space_class(items):
                parts = [" "]
            elif all(x[0] == sre.LITERAL for x in items) and len(items) <= 4:
                parts = [chr(x[1]) for x in items]   # [.!] or ['’]: each literal
            else:
                parts = [_BREAK]
        elif op in (sre.AT,):
            parts = [""]
        elif op == sre.SUBPATTERN:
            parts = _readings(arg[-1])
        elif op == sre.BRANCH:
            parts = [r for alt in arg[1] for r in _readings(alt)]
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
            lo, hi, body = arg
            inner = _readings(body)
            if all(x.strip(" ") == "" and x for x in inner):
                parts = [" "] if lo >= 1 else [" ", ""]
            elif hi == 1:
                parts = ([""] if lo == 0 else []) + inner
            else:
                parts = [_BREAK]
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            parts = [""]
        else:   # ANY, CATEGORY, GROUPREF, ...
            parts = [_BREAK]
        out = [a + b for a, b in itertools.product(out, parts)]
        if len(out) > MAX_VARIANTS:
            out = [out[0]]   # keep one reading: a long pattern is still scanned, once
    return out


def regex_runs(pattern: str) -> list[tuple[str, ...]]:
    """The literal word runs of a regex (see above); [] when it is not a valid pattern."""
    try:
        with warnings.catch_warnings():  # any string literal is tried as a pattern: "[[" warns, harmlessly
            warnings.simplefilter("ignore", FutureWarning)
            parsed = sre.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return []
    runs: list[tuple[str, ...]] = []
    for text in _readings(parsed):
        for run in _norm(text).split(_BREAK):
            words = tuple(_WORD.findall(run))
            if words:
                runs.append(words)
    return list(dict.fromkeys(runs))


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(_norm(text)))


def sealed_word_grams() -> dict[tuple[str, ...], str]:
    """Each sealed phrase (`sealed_phrases`) as a word tuple -> where it comes from."""
    return {w: src for frag, src in sealed_phrases().items() if len(w := _words(frag)) >= MIN_WORDS}


def pattern_strings(p: Path) -> list[str]:
    """The strings of a file that read as regexes: string constants of a Python file, lines of
    any other text file, that hold regex syntax."""
    text = p.read_text(encoding="utf-8", errors="replace")
    if p.suffix == ".py":
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return []
        strs = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    else:
        strs = text.splitlines()
    return [x for x in strs if _REGEX_HINT.search(x)]


def scan_regexes(files: Iterable[Path]) -> list[str]:
    """One line per regex whose literal word runs hold a sealed phrase as a word n-gram."""
    grams = sealed_word_grams()
    by_len: dict[int, set[tuple[str, ...]]] = {}
    for g in grams:
        by_len.setdefault(len(g), set()).add(g)
    hits = []
    for p in files:
        rel = str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p)
        for pat in pattern_strings(p):
            found: dict[tuple[str, ...], None] = {}
            for run in regex_runs(pat):
                for n, group in by_len.items():
                    for i in range(len(run) - n + 1):
                        if run[i:i + n] in group:
                            found[run[i:i + n]] = None
            hits += [f"{rel}: regex {pat[:80]!r} holds {' '.join(g)!r} ({grams[g]})" for g in found
                     if (rel, " ".join(g)) not in ALLOWED]
    return hits


def scan(files: Iterable[Path]) -> list[str]:
    """One line per hit: file, the sealed string, where it comes from."""
    phrases, words, shapes = sealed_phrases(), world_b_words(), sealed_shapes()
    # one alternation each (longest first), run once per file; whole words only
    word_re, phrase_re, shape_re = (
        re.compile(r"(?<![\w-])(" + "|".join(re.escape(w) for w in sorted(group, key=len, reverse=True))
                   + r")(?![\w-])")
        for group in (words, phrases, shapes))
    hits = []
    for p in files:
        text = _norm(p.read_text(encoding="utf-8", errors="replace"))
        rel = str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p)
        found = dict.fromkeys(m.group(1) for m in phrase_re.finditer(text))
        hits += [f"{rel}: {frag!r} ({phrases[frag]})" for frag in found if (rel, frag) not in ALLOWED]
        found = dict.fromkeys(m.group(1) for m in shape_re.finditer(_FIELD.sub("{}", text)))
        hits += [f"{rel}: {sh!r} ({shapes[sh]})" for sh in found if (rel, sh) not in ALLOWED]
        found = dict.fromkeys(m.group(1) for m in word_re.finditer(text))
        hits += [f"{rel}: {w!r} ({words[w]})" for w in found if (rel, w) not in ALLOWED]
    return hits


def test_collection_is_not_empty() -> None:
    phrases, words = sealed_phrases(), world_b_words()
    assert sum(src.startswith("holdout") for src in phrases.values()) > 100
    assert sum(src.startswith("world B") for src in phrases.values()) > 200
    assert len(words) > 150
    # common words are not scanned for; distinctive names are
    assert "pottery" not in words and "korean" not in words and "sesame" not in words
    assert "harbourline ambulance trust" in words and "gabapentin" in words


def test_scan_finds_a_pasted_string(tmp_path: Path) -> None:
    holdout_q = H.QUESTIONS["never_mentioned"][0]  # a short one: "how tall am I?"
    b_note = BT.UTTERANCES_1["pet_add_more"][2].format(a_pet_kind="a cat", pet="Y")
    f = tmp_path / "leak.py"
    f.write_text(f'WORDS = ("{holdout_q}",\n    "{b_note}", "{BV.EMPLOYERS[0]}")\n', encoding="utf-8")
    hits = scan([f])
    assert any("holdout template" in h for h in hits), hits
    assert any("world B template" in h for h in hits), hits
    assert any("world B vocabulary" in h for h in hits), hits


def test_scan_finds_a_copied_short_template(tmp_path: Path) -> None:
    """Templates with no fragment long enough are still caught when copied with their
    placeholders, whatever the placeholders are renamed to."""
    short = [s for s in _strings((BT.QUESTIONS_3, BT.UTTERANCES_1, BT.FACTS, H.FACTS))
             if not fragments(s) and shape(s) is not None and shape(s) not in _world_a_shapes()]
    assert len(short) > 50
    for i, s in enumerate(short):
        renamed = re.sub(r"\{[a-z_]+\}", "{row.value!r}", s)
        f = tmp_path / f"leak{i}.py"
        f.write_text(f'PATTERNS = [\n    "{s}",\n]\nX = f"{renamed}"\n', encoding="utf-8")
        hits = scan([f])
        assert len(hits) >= 1 and all("template" in h for h in hits), (s, hits)
    # world A's own templates stay usable: a training shape is no hit
    ok = tmp_path / "train.py"
    ok.write_text(f'T = "{A.FACTS["city"][0]}"\n', encoding="utf-8")
    assert scan([ok]) == []


def test_regex_is_read_as_its_literal_words(tmp_path: Path) -> None:
    """A holdout phrase pasted as a regex (\\s+ between words, a word in an alternation, an
    optional group) is found; the plain-string scan alone misses it."""
    frag = next(f for f, src in sealed_phrases().items() if src.startswith("holdout") and len(_words(f)) >= 4)
    words = _words(frag)
    as_regex = r"\b" + r"\s+".join(re.escape(w) for w in words) + r"\b"
    alt = r"\s+".join([f"(?:{words[0]}|zzz)", *map(re.escape, words[1:-1]), f"{words[-1]}(?:s)?"])
    f = tmp_path / "leak.py"
    f.write_text(f"import re\nPAT = re.compile({as_regex!r})\nALT = re.compile({alt!r}, re.I)\n", encoding="utf-8")
    assert scan([f]) == [] or all("regex" not in h for h in scan([f]))
    hits = scan_regexes([f])
    assert len(hits) == 2 and all(" ".join(words) in h and "holdout template" in h for h in hits), hits
    # a wildcard between the words breaks the run: no hit for a pattern that says nothing sealed
    g = tmp_path / "ok.py"
    broken = words[0] + r"\w+" + r"\s+".join(words[1:3])
    g.write_text(f"P = {broken!r}\n", encoding="utf-8")
    assert scan_regexes([g]) == []


def test_scan_covers_configs_and_every_python_file() -> None:
    files = {str(p.relative_to(ROOT)) for p in scanned_files()}
    assert any(f.startswith("configs/") for f in files)
    assert {"widemem_bench/cli.py", "tests/_faults.py"} <= files
    assert not any("/timelines/" in f or f.startswith("timelines/") for f in files)
    assert not any(f.startswith(".venv/") for f in files)


def test_no_sealed_string_in_code_or_tests() -> None:
    hits = scan(scanned_files()) + scan_regexes(scanned_files())
    if hits:
        pytest.fail(f"{len(hits)} sealed string(s) outside widemem_bench/timelines/:\n" + "\n".join(hits))


def test_a_tools_read_of_the_outside_measuring_sets_leaves_one_ledger_line(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """outside_report and outside_updates log their reads of outside sets 3 on (a stranger found that
    a re-read left no trace: the lines were written by hand); sets 1-2 (development), a file of the
    user's own and a measurement leave none."""
    import json

    from widemem_bench import sealed

    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv(sealed.LEDGER_ENV, str(ledger))
    monkeypatch.delenv(sealed.PURPOSE_ENV, raising=False)
    d = sealed.OUTSIDE_DIR
    assert sealed.record_outside([d / "updates_set1.jsonl", d / "answer_set2.jsonl"], "t") is None
    assert sealed.record_outside([tmp_path / "updates_set5.jsonl"], "t") is None  # no such file
    (tmp_path / "mine_dev.jsonl").write_bytes((d / "updates_set2.jsonl").read_bytes())
    few = (d / "updates_set4.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "a_few.jsonl").write_bytes(b"".join(few[: len(few) // 3]))  # a third of set 4 is a read of set 4
    assert sealed.record_outside([tmp_path / "mine_dev.jsonl"], "t") is None
    assert sealed.record_outside([tmp_path / "a_few.jsonl"], "t", purpose=sealed.MEASURE) is None
    assert sealed.record_outside([d / "updates_set3.jsonl"], "t", purpose=sealed.MEASURE) is None
    (tmp_path / "mine.jsonl").symlink_to(d / "updates_set3.jsonl")  # a renamed link is its target
    assert sealed.record_outside([tmp_path / "mine.jsonl"], "t", purpose=sealed.MEASURE) is None
    assert not ledger.exists()
    (tmp_path / "copy.jsonl").write_bytes((d / "answer_set6.jsonl").read_bytes())  # a renamed copy is its set
    rows = (d / "updates_set7.jsonl").read_bytes().splitlines(keepends=True)
    edited = [rows[0].replace(b'"text": "', b'"text": "x', 1), *rows[1:], b"\n"]  # one fact edited, a blank line
    assert edited[0] != rows[0]
    (tmp_path / "edited.jsonl").write_bytes(b"".join(edited))
    line = sealed.record_outside([d / "answer_set9.jsonl", d / "updates_set1.jsonl", tmp_path / "mine.jsonl",
                                  tmp_path / "copy.jsonl", tmp_path / "edited.jsonl", tmp_path / "a_few.jsonl"],
                                 "widemem-bench outside_report")
    assert line is not None and line["set"] == "outside cases"
    assert line["caller"] == "widemem-bench outside_report (sets 3, 4, 6, 7, 9)" and line["purpose"].startswith("ad hoc")
    assert [json.loads(x)["caller"] for x in ledger.read_text().splitlines()] == [line["caller"]]


def test_outside_updates_logs_its_read_of_a_measuring_set(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import json

    from widemem_bench import sealed
    from widemem_bench.evaluation import outside

    monkeypatch.setattr(sealed, "OUTSIDE_DIR", tmp_path)  # a stand-in folder: set 3 here is "committed"
    monkeypatch.setenv(sealed.LEDGER_ENV, str(tmp_path / "ledger.jsonl"))
    monkeypatch.delenv(sealed.PURPOSE_ENV, raising=False)
    path = tmp_path / "updates_set3.jsonl"
    path.write_text(json.dumps({"id": "x1", "kind": "keep", "person": "first", "oblique": False, "old": [],
                                "new": "f2", "facts": [{"id": "f1", "text": "I have a dog", "day": 1},
                                                       {"id": "f2", "text": "we got a cat", "day": 2}]}) + "\n")
    assert outside.tool({"files": [str(path)], "resolvers": ["append"], "embedder": "hash-test",
                         "candidate_k": 5, "out": None}) == 0
    lines = [json.loads(x) for x in (tmp_path / "ledger.jsonl").read_text().splitlines()]
    assert [x["caller"] for x in lines] == ["widemem-bench outside_updates (sets 3)"]
    # a report that cannot be written is neither shown nor logged (the front door holds the line)
    from widemem_bench import cli

    capsys_out = tmp_path / "blocker"
    capsys_out.write_text("a file, not a folder")
    rc = cli.main(["outside_updates", f"files=[{path}]", "resolvers=[append]", "embedder=hash-test",
                   f"out={capsys_out}/o.md"])
    assert rc != 0
    assert len((tmp_path / "ledger.jsonl").read_text().splitlines()) == 1


def test_a_merged_copy_is_every_set_it_holds_and_a_hand_written_copy_is_named(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A stranger merged development set 2 with measuring set 6: the file was read as set 2 alone and
    the read of set 6 left no line. Copies of the hand-written development files are named too."""
    from widemem_bench import sealed

    monkeypatch.setenv(sealed.LEDGER_ENV, str(tmp_path / "ledger.jsonl"))
    monkeypatch.delenv(sealed.PURPOSE_ENV, raising=False)
    d, h = sealed.OUTSIDE_DIR, sealed.HAND_DIR
    (tmp_path / "merged.jsonl").write_bytes((d / "updates_set2.jsonl").read_bytes() + (d / "updates_set6.jsonl").read_bytes())
    (tmp_path / "w1.jsonl").write_bytes((h / "answer_w1.jsonl").read_bytes())
    (tmp_path / "mine.jsonl").write_text('{"id": "x"}\n')
    got = sealed.committed_sources([tmp_path / "merged.jsonl", tmp_path / "w1.jsonl", tmp_path / "mine.jsonl",
                                    d / "answer_set4.jsonl", tmp_path / "missing.jsonl"])
    assert got == [("set 2", "set 6"), ("w1",), (), ("set 4",), ()]
    line = sealed.record_outside([tmp_path / "merged.jsonl"], "t")
    assert line is not None and line["caller"] == "t (sets 6)"
