"""Reading a parse: tokens (``Tok``) -> ``Parse``. Pure Python, no spaCy needed.

Works on the compact token tuples, so a cached parse can be read again after the reading
changes without running spaCy (``reread``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from widemem_bench.language.parse import (
    ADDITIVE,
    ARG_DEPS,
    CLAUSE_DEPS,
    FIRST_PERSON,
    HOW_TYPES,
    MONEY_RE,
    NAMING_VERBS,
    NER_TYPE,
    NUMBER_RE,
    SECOND_PERSON,
    SUBJ_DEPS,
    THIRD_PERSON,
    TIME_RE,
    TYPE_NOUNS,
    WH_TYPES,
    WH_WORDS,
    Clause,
    Parse,
    Slot,
    Subject,
    Tok,
    Triple,
    Value,
)

PHRASE_SKIP = frozenset({"det", "punct", "poss", "case", "prep", "relcl", "acl", "cc", "conj", "appos"})


class Tree:
    """Children lists over a token tuple."""

    def __init__(self, toks: Sequence[Tok]) -> None:
        self.t = list(toks)
        self.kids: list[list[int]] = [[] for _ in self.t]
        for i, tok in enumerate(self.t):
            if tok.head != i:
                self.kids[tok.head].append(i)

    def children(self, i: int, *deps: str) -> list[int]:
        return [k for k in self.kids[i] if not deps or self.t[k].dep in deps]

    def subtree(self, i: int) -> list[int]:
        out, stack = [], [i]
        while stack:
            j = stack.pop()
            out.append(j)
            stack.extend(self.kids[j])
        return sorted(out)

    def ancestors(self, i: int) -> list[int]:
        out: list[int] = []
        while self.t[i].head != i and len(out) < len(self.t):
            i = self.t[i].head
            out.append(i)
        return out

    def low(self, i: int) -> str:
        return self.t[i].text.lower()

    def is_wh(self, i: int) -> bool:
        return self.low(i) in WH_WORDS and self.t[i].tag in ("WDT", "WP", "WP$", "WRB")

    def phrase(self, i: int) -> str:
        """The noun phrase headed by ``i`` without determiners, possessors or clauses."""
        return " ".join(self.t[j].text for j in self.span(i)).lower()

    def span(self, i: int, skip: frozenset[str] = PHRASE_SKIP) -> list[int]:
        keep = [i]
        stack = [k for k in self.kids[i] if self.t[k].dep not in skip]
        while stack:
            j = stack.pop()
            keep.append(j)
            stack.extend(k for k in self.kids[j] if self.t[k].dep not in skip)
        # punctuation and emoji are no part of a value ("leeds 😂" -> "leeds")
        return [j for j in sorted(keep) if self.t[j].pos != "PUNCT" and any(c.isalnum() for c in self.t[j].text)]

    def has_wh(self, i: int) -> bool:
        return any(self.is_wh(j) for j in self.subtree(i))


def _name(tree: Tree, i: int) -> str:
    """A proper name: the PROPN token with its PROPN compounds ("Alder Hey")."""
    parts = [i] + [k for k in tree.children(i, "compound", "flat") if tree.t[k].pos == "PROPN"]
    return " ".join(tree.t[j].text for j in sorted(parts)).lower()


def _is_name(tree: Tree, i: int) -> bool:
    t = tree.t[i]
    if t.ent.endswith("PERSON"):
        return True
    return t.pos == "PROPN" and tree.low(i) not in FIRST_PERSON | SECOND_PERSON | THIRD_PERSON | WH_WORDS


def _owner(tree: Tree, i: int, depth: int = 0) -> tuple[str, tuple[str, ...]]:
    """(owner, chain) of the possessor chain above noun ``i`` (not including ``i``)."""
    poss = tree.children(i, "poss")
    if not poss or depth > 5:
        return "", ()
    p = poss[0]
    if tree.low(p) in FIRST_PERSON:
        return "user", ()
    if tree.low(p) in SECOND_PERSON | THIRD_PERSON:
        return tree.low(p), ()
    if _is_name(tree, p) and not tree.children(p, "poss"):
        return _name(tree, p), ()
    owner, chain = _owner(tree, p, depth + 1)
    return owner, (*chain, tree.t[p].lemma.lower())


def describe(tree: Tree, i: int, implicit: bool = False) -> Subject:
    """The Subject a nominal token ``i`` refers to."""
    t = tree.t[i]
    low = tree.low(i)
    plural = t.tag in ("NNS", "NNPS") or low in ("we", "us", "our", "they", "them", "their")
    if low in FIRST_PERSON:
        return Subject("user", "user", (), "", t.text, implicit, plural)
    if low in SECOND_PERSON or low in THIRD_PERSON:
        return Subject("other", "", (), "", t.text, implicit, plural)
    owner, chain = _owner(tree, i)
    if _is_name(tree, i):
        # "Marcus's wife Grace": the relation noun is a compound or appositive of the name.
        rel = [k for k in tree.children(i, "compound", "appos", "nmod") if tree.t[k].pos == "NOUN"]
        link = (*chain, tree.t[rel[0]].lemma.lower()) if rel else chain
        return Subject("person", owner, link if owner or rel else (), _name(tree, i), t.text, implicit, plural)
    if t.pos in ("NOUN", "PROPN", "NUM", "ADJ", "PRON"):
        named = [k for k in tree.children(i, "appos", "compound") if _is_name(tree, k)]
        name = _name(tree, named[0]) if named else ""
        if owner:
            return Subject("relation", owner, (*chain, t.lemma.lower()), name, t.text, implicit, plural)
        if name:
            return Subject("person", "", (t.lemma.lower(),), name, t.text, implicit, plural)
        # no possessor ("mum drives a fiesta", chat drops "my"): the noun, owner unstated
        chain = (t.lemma.lower(),) if t.pos == "NOUN" else ()
        return Subject("other", "", chain, "", tree.phrase(i), implicit, plural)
    return Subject()


def values(tree: Tree) -> tuple[Value, ...]:
    """Named entities, then numbers / times / amounts by shape, then proper nouns NER missed."""
    out: list[Value] = []
    taken: set[int] = set()
    i, n = 0, len(tree.t)
    while i < n:
        ent = tree.t[i].ent
        if ent.startswith("B-"):
            label = ent[2:]
            j = i + 1
            while j < n and tree.t[j].ent == f"I-{label}":
                j += 1
            text = " ".join(tree.t[k].text for k in range(i, j))
            typ = NER_TYPE.get(label, "NAME")
            shaped = _shape(text)
            if typ == "NUMBER" and shaped in ("TIME", "MONEY"):
                typ = shaped
            elif shaped == "NUMBER" and sum(c.isdigit() for c in text) >= 5:
                typ = "NUMBER"  # a phone or account number NER read as a date
            out.append(Value(text, typ, label, i, j))
            taken.update(range(i, j))
            i = j
        else:
            i += 1
    for i, t in enumerate(tree.t):
        if i in taken:
            continue
        shaped = _shape(t.text)
        if shaped is None and t.pos == "NUM" and any(c.isdigit() for c in t.text):
            shaped = "NUMBER"
        if shaped:
            out.append(Value(t.text, shaped, "SHAPE", i, i + 1))
            taken.add(i)
        elif _is_name(tree, i) and t.pos == "PROPN" and t.text[:1].isalpha():
            j = i
            while j + 1 < n and tree.t[j + 1].pos == "PROPN" and j + 1 not in taken:
                j += 1
            out.append(Value(" ".join(tree.t[k].text for k in range(i, j + 1)), "NAME", "PROPN", i, j + 1))
            taken.update(range(i, j + 1))
    return tuple(sorted(out, key=lambda v: v.start))


def _shape(text: str) -> str | None:
    s = text.strip()
    if TIME_RE.match(s):
        return "TIME"
    if MONEY_RE.match(s):
        return "MONEY"
    if NUMBER_RE.match(s) and sum(c.isdigit() for c in s) >= 1:
        return "NUMBER"
    return None


def _value_type(vals: Sequence[Value], idx: list[int]) -> str:
    span = set(idx)
    for v in vals:
        if span & set(range(v.start, v.end)):
            return v.type
    return "OTHER"


def _verb_frame(tree: Tree, v: int) -> str:
    """Verb lemma + particles ("move down"); copula + attribute noun ("be nurse")."""
    t = tree.t[v]
    clitic = tree.low(v).lstrip("'") in ("s", "m", "re") and t.lemma.lower() not in ("be", "have")
    lemma = "be" if clitic and (t.pos == "AUX" or tree.children(v, "attr", "acomp")) else t.lemma.lower()
    parts = [lemma]  # "hes a plumber": the tagger's AUX "s" is "is"
    parts += [tree.low(k) for k in tree.children(v, "prt")]
    if lemma == "be":
        for k in tree.children(v, "attr", "acomp"):
            if not tree.has_wh(k) and tree.t[k].pos in ("NOUN", "ADJ"):
                parts.append(tree.t[k].lemma.lower())
                break
    return " ".join(parts)


def _noun_verb(tree: Tree, v: int) -> int | None:
    """The compound of a plural-noun root that is really a third-person verb: "<noun>
    <verb>s <prep> ..." with no verb in the sentence; returns the compound (the subject)."""
    t = tree.t[v]
    if t.dep != "ROOT" or t.tag != "NNS" or not t.text.lower().endswith("s") or tree.children(v, *SUBJ_DEPS):
        return None
    comp = [k for k in tree.children(v, "compound") if k < v and tree.t[k].pos in ("NOUN", "PROPN")]
    if not comp or not tree.children(v, "prep"):
        return None
    return comp[-1]


def _verbless(tree: Tree, v: int) -> bool:
    """A note with no verb ("wife Grace - nurse @ Alder Hey"): a common-noun root with no
    subject or auxiliary, and more than itself to say."""
    t = tree.t[v]
    return (t.dep == "ROOT" and t.pos in ("NOUN", "ADJ") and not tree.children(v, *SUBJ_DEPS, "aux")
            and _noun_verb(tree, v) is None
            and len([k for k in tree.subtree(v) if tree.t[k].pos in ("NOUN", "PROPN", "NUM")]) > 1)


def clause_heads(tree: Tree) -> list[int]:
    """Predicate heads: the sentence roots and the clauses joined to them."""
    heads = []
    for i, t in enumerate(tree.t):
        if t.dep == "ROOT" or (t.dep in CLAUSE_DEPS and t.pos in ("VERB", "AUX")):
            if t.pos == "PUNCT" or (t.dep == "conj" and tree.t[t.head].pos not in ("VERB", "AUX")):
                continue
            heads.append(i)
    return heads


def _subject_of(tree: Tree, v: int, question: bool) -> tuple[Subject, int | None]:
    subj = tree.children(v, *SUBJ_DEPS)
    if not subj and tree.t[v].dep in ("conj", "xcomp"):  # "moved and started", "want to move"
        subj = tree.children(tree.t[v].head, *SUBJ_DEPS)
    subj = [s for s in subj if tree.t[s].dep != "expl"] or subj
    if subj:
        s = subj[0]
        if tree.is_wh(s):
            # "who is my manager?": the asked thing is the attribute, whose owner is the subject
            attrs = [k for k in tree.children(v, "attr", "dobj") if not tree.is_wh(k)]
            if attrs:
                return describe(tree, attrs[0]), attrs[0]
            return Subject(), None
        if question and tree.t[v].lemma.lower() == "be" and any(tree.is_wh(k) for k in tree.children(v, "attr")):
            # "what's the name of my dentist?" / "what's my account number?": the subject
            # noun is the slot; whose it is is its "of" object or its possessor.
            of = [p for k in tree.children(s, "prep") if tree.low(k) == "of" for p in tree.children(k, "pobj")]
            if of:
                return describe(tree, of[0]), of[0]
            owner, chain = _owner(tree, s)
            if owner == "user" and not chain:
                return Subject("user", "user", (), "", tree.t[s].text), s
            if owner:
                return Subject("relation", owner, chain, "", tree.t[s].text), s
        return describe(tree, s), s
    t = tree.t[v]
    between = _between_aux(tree, v) if question else None
    if between is not None:
        return between
    if t.pos in ("VERB", "AUX") and not question and t.tag not in ("VBG",):
        return Subject("user", "user", (), "", "", implicit=True), None  # chat drops "I"
    if t.pos in ("NOUN", "PROPN", "ADJ"):
        # a verbless note: "Cust. wife Grace - nurse @ Alder Hey" -> a person among the
        # compounds; "pt allergic to penicillin" -> the nominal before the root
        for k in tree.subtree(v):
            if k != v and _is_name(tree, k) and tree.t[k].ent.endswith("PERSON"):
                return describe(tree, k), k
        left = [k for k in tree.kids[v] if k < v and tree.t[k].pos in ("NOUN", "PROPN", "PRON")]
        if left and t.pos == "ADJ":
            return describe(tree, left[0]), left[0]
    return Subject(), None


def _between_aux(tree: Tree, v: int) -> tuple[Subject, int] | None:
    """In a question with do-support the subject stands between the auxiliary and the
    verb ("where does marcus work?"), whatever the tagger called it."""
    aux = [k for k in tree.children(v, "aux") if k < v]
    if not aux:
        return None
    span = [k for k in range(aux[0] + 1, v) if tree.t[k].pos not in ("DET", "PUNCT", "PART", "ADV")
            and not tree.is_wh(k)]
    if not span:
        return None
    k = span[-1]
    if tree.low(k) in FIRST_PERSON or tree.t[k].pos in ("NOUN", "PROPN", "PRON"):
        return describe(tree, k), k
    if tree.low(k).isalpha() and tree.low(k) not in SECOND_PERSON | THIRD_PERSON:
        # a lowercase name the tagger took for a verb or adjective
        return Subject("person", "", (), tree.low(k), tree.t[k].text), k
    return None


def _args(tree: Tree, v: int, skip: int | None, frame: str) -> list[tuple[str, int, bool]]:
    """(frame suffix, argument head, additive) for each argument of predicate ``v``; the
    wh-phrase of a question is the slot, not an argument."""
    out: list[tuple[str, int, bool]] = []
    verbless = tree.t[v].pos in ("NOUN", "PROPN")
    heads = [v] + [k for k in tree.children(v, "attr", "dobj") if tree.t[k].pos in ("NOUN", "PROPN")]
    for h in heads:
        # "is a nurse at Alder Hey" -> frame "be nurse at"; "booked a flight to Lisbon" -> "book flight to"
        prefix = "" if h == v or frame.endswith(" " + tree.t[h].lemma.lower()) else tree.t[h].lemma.lower() + " "
        for k in tree.kids[h]:
            if k == skip or tree.has_wh(k):
                continue
            dep = tree.t[k].dep
            if dep in ARG_DEPS and h == v:
                out.append(("", k, _additive(tree, k)))
            elif verbless and h == v and dep in ("appos", "npadvmod") and _is_name(tree, k):
                out.append(("", k, _additive(tree, k)))  # "nurse @ Alder Hey" in a note
            elif dep in ("prep", "agent") or (dep == "advmod" and tree.t[k].pos == "ADP"):
                word = tree.low(k)
                objs = tree.children(k, "pobj", "pcomp")
                if not objs:
                    for sub in tree.children(k, "prep"):  # "down to bristol" -> "down to"
                        objs = tree.children(sub, "pobj")
                        if objs:
                            word = f"{word} {tree.low(sub)}"
                            break
                for p in objs:
                    out.append((prefix + word, p, _additive(tree, p)))
    return out


def _additive(tree: Tree, i: int) -> bool:
    near = tree.subtree(i) + tree.kids[tree.t[i].head]
    return bool(tree.children(i, "conj")) or tree.t[i].dep == "conj" or any(tree.low(k) in ADDITIVE for k in near)


def _slot(tree: Tree) -> Slot | None:
    whs = [i for i in range(len(tree.t)) if tree.is_wh(i)]
    if not whs:
        return None
    w = whs[0]
    wh = tree.low(w).replace("'s", "").replace("s", "") if tree.low(w) in ("whats", "what's") else tree.low(w)
    t = tree.t[w]
    if wh == "how":
        nxt = w + 1
        if nxt < len(tree.t) and tree.t[nxt].pos in ("ADJ", "ADV"):
            head = tree.low(nxt)
            return Slot("how", head, f"how {head}", HOW_TYPES.get(head, ("OTHER",)))
        return Slot("how", "", "how", ("OTHER",))
    head_i = t.head if t.dep == "det" and tree.t[t.head].pos in ("NOUN", "PROPN") else None
    if head_i is None and t.dep in ("attr", "nsubj") and tree.t[t.head].lemma.lower() == "be":
        subj = [k for k in tree.children(t.head, "nsubj") if k != w and tree.t[k].pos == "NOUN"]
        head_i = subj[0] if subj else None
    if head_i is None:
        naming = [a for a in tree.ancestors(w) if tree.t[a].lemma.lower() in NAMING_VERBS]
        if naming:  # "what's my son's teacher called?"
            return Slot(wh, "name", f"{wh} {tree.t[naming[0]].lemma.lower()}", TYPE_NOUNS["name"])
        return Slot(wh, "", wh, WH_TYPES.get(wh, ("OTHER",)))
    head = tree.t[head_i].lemma.lower()
    comp = [tree.t[k].lemma.lower() for k in tree.children(head_i, "compound")]
    text = " ".join([wh, *comp, head])
    expects = TYPE_NOUNS.get(head) or WH_TYPES.get(wh) or ("OTHER",)
    return Slot(wh, head, text, expects)


def _asked_frame(tree: Tree, clauses: Sequence[Clause]) -> str:
    """The frame the wh-phrase fills: "which school does my son go to?" -> "go to",
    "which city do I live in?" -> "live in", "what car does my mum drive?" -> "drive"."""
    w = next(i for i in range(len(tree.t)) if tree.is_wh(i))
    anchor = tree.t[w].head if tree.t[w].dep in ("det", "advmod") and tree.t[w].head != w else w
    by_verb = {c.verb: c.predicate for c in clauses}
    prep = ""
    node = anchor
    if tree.t[node].dep == "pobj":
        prep = tree.low(tree.t[node].head)
        node = tree.t[node].head
    for a in [node, *tree.ancestors(node)]:
        if a in by_verb:
            if not prep:  # a stranded preposition: "who does Sarah work for?"
                stranded = [k for k in tree.children(a, "prep") if not tree.children(k, "pobj", "pcomp")]
                prep = tree.low(stranded[0]) if stranded else ""
            return f"{by_verb[a]} {prep}".strip()
    return next(iter(by_verb.values()), "")


def read(text: str, toks: Sequence[Tok]) -> Parse:
    """The Parse of ``text`` from its tokens."""
    if not toks or not text.strip():
        return Parse(text=text)
    tree = Tree(toks)
    question = text.rstrip().endswith("?") or tree.is_wh(0) or (toks[0].pos == "AUX" and toks[0].dep == "aux")
    vals = values(tree)
    clauses: list[Clause] = []
    triples: list[Triple] = []
    for v in clause_heads(tree):
        subj, s_i = _subject_of(tree, v, question)
        frame = _verb_frame(tree, v)
        misread = _noun_verb(tree, v)
        if misread is not None:
            # "my flight leaves at 7:45am": the tagger read "flight leaves" as a compound noun
            owner, chain = _owner(tree, v)
            c = tree.t[misread]
            if c.pos == "PROPN":  # "marcus works at the royal infirmary"
                subj = describe(tree, misread)
            else:
                subj = Subject("relation" if owner else "other", owner,
                               (*chain, c.lemma.lower()) if owner else (c.lemma.lower(),), "", c.text)
            s_i, frame = misread, tree.low(v)[:-1]
        elif _verbless(tree, v):
            frame = "be " + tree.t[v].lemma.lower()  # a note: the root noun is the attribute
        elif tree.t[v].pos not in ("VERB", "AUX"):
            if not tree.children(v, *SUBJ_DEPS, "aux"):
                continue  # a bare name, an emoji: no clause
            frame = tree.low(v)  # a verb the tagger took for a noun ("does my mum drive")
        args = _args(tree, v, s_i, frame)
        neg = bool(tree.children(v, "neg")) or any(tree.low(k) in ("never", "no") for k in tree.children(v, "advmod"))
        past = tree.t[v].tag in ("VBD", "VBN")
        # "my husband and I both work at the hospital": one clause per coordinated subject
        both = [] if s_i is None or misread is not None else tree.children(s_i, "conj")
        for subj_i in [subj, *(describe(tree, k) for k in both)]:
            ci = len(clauses)
            clauses.append(Clause(subj_i, frame, v, tuple(tree.phrase(a[1]) for a in args)))
            for suffix, a, add in args:
                value = tree.phrase(a)
                if not value:
                    continue
                f = frame if not suffix else f"{frame} {suffix}"
                triples.append(Triple(subj_i.key, f, value, _value_type(vals, tree.span(a)), ci,
                                      add or bool(both), neg, past))
    main = _main_clause(clauses, triples)
    slot = _slot(tree) if question else None
    if slot is not None:
        slot = replace(slot, frame=_asked_frame(tree, clauses))
    nouns = tuple(dict.fromkeys(t.lemma.lower() for t in toks if t.pos == "NOUN"))
    names = tuple(dict.fromkeys(v.text.lower() for v in vals if v.type in ("PERSON", "NAME", "ORG", "PLACE")))
    return Parse(
        text=text, is_question=question,
        subject=clauses[main].subject if clauses else Subject(),
        predicate=clauses[main].predicate if clauses else "",
        slot=slot,
        values=vals, nouns=nouns, names=names, clauses=tuple(clauses), triples=tuple(triples),
        tokens=tuple(toks),
    )


def _main_clause(clauses: Sequence[Clause], triples: Sequence[Triple]) -> int:
    """The fact clause: the one with the most arguments, a known subject breaking ties,
    earlier first ("lol anyway we moved to bristol" -> "moved")."""
    if not clauses:
        return 0
    def score(i: int) -> tuple[int, int, int]:
        c = clauses[i]
        n = sum(1 for t in triples if t.clause == i)
        return (n, int(c.subject.kind != "none"), -i)
    return max(range(len(clauses)), key=score)
