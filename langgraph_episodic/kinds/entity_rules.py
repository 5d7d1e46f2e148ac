"""The rule-based entity extractor: which clauses state a fact, which words in them are names.

Used by the entity writer when it has no chat model; :func:`entity_key` is the key two
spellings of one entity share. A message is cut into sentences and
clauses (at ";"); a clause states nothing worth storing when it is a question (it ends in "?",
or it starts with a verb and a pronoun: "Do you know ...", "Kennst du ...") or a request (it
starts with an imperative, "Find and fix ...", "Schreibe ...", or says "please" / "bitte"),
except for what follows a "that" / "dass" in it ("Can you remember that my wife is Julia.").

In the clauses left, names come from

- phrases that introduce one: "my name is", "call me", "I work at", "I live in", "I use",
  "ich heiße", "heißt", "namens", "ich arbeite bei", "ich wohne in", "ich nutze" ...;
- words written like names: inner capitals (``LangGraph``, ``iPhone 15``), acronyms (``AWS``)
  and letters with digits (``GPT-4``), but not the acronyms of everyday technical text
  (API, CSV, JSON, ...; :data:`COMMON_ACRONYMS`);
- in English, capitalised words; a capitalised first word only before a verb such as "is"
  ("Alice works at ACME", not "Count the words");
- in German, where every noun is capitalised, only capitalised words in a name's position:
  after a title ("Frau Weber"), after a possessive and a noun ("mein Hund Bello", "meine
  Kollegin Julia") and after "in" / "nach" / "aus" ("in Wien"); a word that looks like a
  common noun (its ending, or one of the few nouns these prepositions take without an
  article) is not taken there, nor after "ich nutze" / "ich arbeite mit" ("Ich nutze
  Tabellen").

Days, months and languages are never names, and a clause that only greets or thanks a name
("Thanks, Maria!") states nothing about it. The rules were written against the labelled sets
of ``benchmarks/entity_rules.py``, which measures their precision and recall.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..memory_kinds import sentences
from ..relevance import TRIVIAL_WORDS


def entity_key(name: str) -> str:
    """The case- and space-insensitive key two spellings of one entity share."""
    return " ".join(name.lower().split())


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


QUESTION_WORDS: frozenset[str] = _wordset(
    """
    what who whom whose which when where why how
    wer wen wem wessen was wo wohin woher wann warum wieso weshalb weswegen wie welche welcher
    welches welchen welchem womit wofür wozu worüber worauf wodurch
    """
)
"""Words that make a sentence a question when they come first (English and German)."""

_AUXILIARIES = _wordset(
    """
    is are am was were do does did can could would should will shall may might have has had
    ist sind bist seid war waren hast hat habt haben kannst kann können könnt darf darfst
    dürfen soll sollst sollte solltest würde würdest würden gibt magst möchtest weißt kennst
    """
)
_PRONOUNS = _wordset(
    """
    i you he she it we they there this that these those your my
    ich du er sie es wir ihr man das dies dein deine mein meine euer es's
    """
)

IMPERATIVES: frozenset[str] = _wordset(
    """
    add adjust analyse analyze append apply ask build bump calculate call change check clean
    clear compare compile compute configure convert copy count create debug define delete
    deploy describe design detect disable document download draft draw edit enable ensure
    explain export extract find fix format generate give handle help implement import improve
    include insert install investigate keep let list load look make merge migrate move note
    optimise optimize parse plot port prepare print propose put raise read rebuild reduce
    refactor remember remove rename render replace reply report rerun reset resolve restore
    restructure review rewrite run save scan search send set show simplify sort split start
    stop store suggest summarise summarize take tell test tidy translate try turn update
    upgrade upload use validate verify write
    aktualisiere analysiere ändere baue bau behebe beheb benenne berechne beschreibe debugge
    entferne entwirf entwerfe erhöhe erkläre ergänze erstelle erzeuge exportiere finde fixe
    formatiere füge fasse generiere gib hilf implementiere importiere installiere konvertiere
    korrigiere lade liste lies lösche mach mache merk merke nimm optimiere plane prüfe
    refaktoriere repariere sag sage schick schicke schreib schreibe sende sortiere speichere
    starte suche such teste übersetze überarbeite überprüfe validiere vereinfache vergleiche
    verschiebe wandle zähle zeig zeige
    """
)
"""First words that make a clause a request (English base forms, German imperatives)."""

_REQUEST_WORDS = _wordset("please pls kindly bitte")
_LEADING = _wordset("please pls kindly bitte now then also and so just und dann jetzt noch")
_NAMED_ME = re.compile(r"^\W*(?:please\s+)?(?i:call me|nenn mich|nennt mich)\b")
_THAT = re.compile(r"\b(?i:that|dass)\b")

COMMON_ACRONYMS: frozenset[str] = _wordset(
    """
    api apis csv json xml yaml yml html css http https url urls uri sql cli gui ui ux pdf
    readme uuid id ids rest rpc ok faq todo cpu gpu ram ssd usb dns tcp udp ip ssh ssl tls
    sdk ide ci cd pr prs qa eta asap fyi ai ml llm llms nlp ocr orm crud mvp kpi kpis roi
    ceo cto hr it eod ps tv pc db jwt png jpg jpeg gif svg zip eof utc gmt eur usd tbd
    gmbh ag se kg mwst plz edv
    """
)
"""Acronyms of everyday technical and business text: written like names, but not names."""

_NOT_NAMES = COMMON_ACRONYMS | _wordset(
    """
    monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays
    thursdays fridays saturdays sundays january february march april may june july august
    september october november december
    montag dienstag mittwoch donnerstag freitag samstag sonntag montags dienstags mittwochs
    donnerstags freitags samstags sonntags januar februar märz mai juni juli oktober dezember
    english german french spanish italian dutch polish russian chinese japanese portuguese
    englisch deutsch französisch spanisch italienisch englische deutsche
    everything everyone everybody nothing nobody someone somebody something anyone anybody
    anything all both each every most many some none one
    """
)

_STOPWORDS = _wordset(
    """
    i i'm i've i'll i'd me my mine you your we our they their he she it the a an and or but
    ich du er sie es wir ihr der die das ein eine und oder aber mein meine dein deine
    ok okay mr mrs ms dr yes no hi hello hey thanks thank please also then so now here there
    today yesterday tomorrow however this that these those when if after before as in on at
    for with from by of to our we're it's let's sure well herr herrn frau dr. prof prof.
    since until during while because although though last next every each some many most
    both all only even still maybe perhaps usually often sometimes always never
    """
)
_NAME_VERBS = _wordset(
    """
    is was has had works worked lives lived likes liked prefers uses used wants needs said says
    knows loves leads manages runs owns joined founded built wrote will can should and
    """
)
_GERMAN_HINTS = _wordset(
    "ich und der die das ist nicht mit für bei ein eine einer einen einem mein meine unser "
    "unsere wir sie es auf zu im den dem des sich auch noch wie bin habe hat kann sind war "
    "mich mir dir uns nach aus von vom zum zur gern sehr schon immer"
)
_ENGLISH_HINTS = _wordset(
    "i and the is not with for at a an my we it on to of you are this that have"
)

# Nouns German puts after "in" / "nach" / "aus" without an article ("nach Hause").
_BARE_GERMAN_NOUNS = _wordset(
    """
    hause zukunft ruhe urlaub rente versehen arbeit teilzeit vollzeit zeit dauer bett eile
    kraft betrieb gefahr grund not ordnung sorge frieden panik rage angst liebe spaß
    """
)
_GERMAN_NOUN_ENDINGS = ("ung", "heit", "keit", "schaft", "tät", "nis", "ling", "tum", "ismus",
                        "ik", "ie", "enz", "anz", "ur", "e")
_GERMAN_PLURAL_ENDINGS = ("en", "er", "ern")

_WORD = re.compile(r"[\w'’-]+")
_NAME_TOKEN = r"(?:[A-ZÄÖÜ][\w.+#-]*|[a-z]+[A-Z][\w.+#-]*)"
_NAME_RUN = rf"({_NAME_TOKEN}(?:\s+{_NAME_TOKEN}){{0,3}}(?:\s+\d+(?:\.\d+)*\b)?)"
_NAMING = re.compile(
    r"\b(?i:name is|am called|is called|are called|call me|named|i'm|i am|"
    r"name ist|heiße|heisse|heißt|heisst|namens|nenn mich|nennt mich)"
    rf"\s+{_NAME_RUN}"
)
_PLACES = re.compile(
    r"\b(?i:(?:work|works|working|worked) (?:at|for)|(?:live|lives|living) in|"
    r"(?:am|is|come|comes) from|"
    r"(?:arbeite|arbeitet|arbeiten)(?: ich| er| sie| wir)?(?: jetzt| nun| inzwischen| seit \w+)?"
    r" (?:bei|für)|(?:wohne|wohnt|wohnen|lebe|lebt|leben) in|(?:komme|kommt|kommen) aus)"
    rf"\s+{_NAME_RUN}"
)
_TOOLS = re.compile(
    r"\b(?i:(?:work|works|working|worked) with|uses?|using|prefers?|"
    r"(?:arbeite|arbeitet|arbeiten)(?: ich| er| sie| wir)? mit|nutze|nutzt|nutzen|benutze|"
    r"benutzt|verwende|verwendet|bevorzuge|bevorzugt)"
    rf"\s+{_NAME_RUN}"
)
_POSSESSIVE = r"(?i:mein|meine|meinem|meinen|meiner|unser|unsere|unserem|unseren|unserer|" \
              r"dein|deine|sein|seine|ihr|ihre)"
_APPOSITION = re.compile(rf"\b{_POSSESSIVE}\s+[A-ZÄÖÜ][a-zäöüß]+\s+{_NAME_RUN}")
_TITLED = re.compile(rf"\b(?:Herrn?|Frau|Mrs?|Ms|Dr|Prof)\.?\s+{_NAME_RUN}")
_GERMAN_PLACE = re.compile(rf"\b(?:in|nach|aus)\s+({_NAME_TOKEN})(?!\s*-)")
_CAPITALISED_RUN = re.compile(rf"\b{_NAME_RUN}")
_TOKEN = re.compile(r"(?<![\w-])([A-Za-z][\w+#.-]*[\w+#]|[A-Za-z])(\s+\d+(?:\.\d+)*\b)?")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def is_question(sentence: str) -> bool:
    """True for a question: a trailing "?", a question word first, or verb-first with a pronoun.

    >>> is_question("Wie spät ist es")
    True
    >>> is_question("Do you know Alice")
    True
    >>> is_question("Alice works at ACME.")
    False
    """
    words = _words(sentence)
    if sentence.strip().endswith("?") or (words and words[0] in QUESTION_WORDS):
        return True
    return _verb_first_question(words)


def _verb_first_question(words: list[str]) -> bool:
    return len(words) > 1 and words[0] in _AUXILIARIES and words[1] in _PRONOUNS


def statements(text: str) -> list[str]:
    """The sentences of ``text`` that do not end in "?" (the rule-based extractor's input).

    Only a question mark marks a question here: "Wie besprochen arbeite ich jetzt bei Siemens."
    and "Can you remember that my wife is Julia." are statements.

    >>> statements("Wie besprochen arbeite ich jetzt bei Siemens. Wo ist das Büro?")
    ['Wie besprochen arbeite ich jetzt bei Siemens.']
    """
    return [s for s in sentences(text) if not s.endswith("?")]


def _asks(words: list[str]) -> bool:
    """A question without "?": verb first with a pronoun ("Do you know"), or a question word
    before an auxiliary or a pronoun ("How do I", "Wie parse ich"; not "Wie besprochen ...")."""
    return _verb_first_question(words) or (
        len(words) > 2 and words[0] in QUESTION_WORDS
        and (words[1] in _AUXILIARIES or words[2] in _PRONOUNS))


def _is_request(clause: str, words: list[str]) -> bool:
    if _NAMED_ME.match(clause):
        return False
    if not _REQUEST_WORDS.isdisjoint(words):
        return True
    first = next((w for w in words if w not in _LEADING), "")
    return first in IMPERATIVES or _asks(words)


def fact_clauses(sentence: str) -> list[str]:
    """The clauses of ``sentence`` that can state a fact (see the module docstring).

    >>> fact_clauses("The CSV export fails on empty input; fix it.")
    ['The CSV export fails on empty input']
    >>> fact_clauses("Find and fix the crash in the rate limiter.")
    []
    >>> fact_clauses("Can you remember that my wife is Julia.")
    ['my wife is Julia.']
    """
    kept = []
    for clause in sentence.split(";"):
        words = _words(clause)
        if not words:
            continue
        if _is_request(clause, words):
            that = _THAT.search(clause)
            if that is None:
                continue
            clause = clause[that.end():]
        if clause.strip():
            kept.append(clause.strip())
    return kept


def is_german(text: str) -> bool:
    """More German than English hint words (articles, pronouns, "und", "ist", ...)."""
    words = _words(text)
    return sum(w in _GERMAN_HINTS for w in words) > sum(w in _ENGLISH_HINTS for w in words)


def _name_like(token: str) -> bool:
    """Written like a name: inner capitals (LangGraph), an acronym (AWS) or letters+digits;
    a hyphenated word only when one of its parts is ("GPT-4", not "CSV-Export")."""
    if "-" in token.strip("-"):
        return any(_name_like(part) for part in token.split("-") if part)
    if token.lower() in COMMON_ACRONYMS:
        return False
    return (
        bool(re.search(r"[a-z][A-Z]", token))
        or sum(c.isupper() for c in token) >= 2
        or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token))
    )


def _german_noun(word: str, *, plural: bool = False) -> bool:
    """Looks like a German common noun rather than a name (by its ending)."""
    low = word.lower()
    endings = _GERMAN_NOUN_ENDINGS + (_GERMAN_PLURAL_ENDINGS if plural else ())
    return low in _BARE_GERMAN_NOUNS or (not _name_like(word) and low.endswith(endings))


def _clean_name(name: str) -> str | None:
    tokens = name.strip(" .,:;!?\"'()").split()
    while tokens and tokens[0].lower() in _STOPWORDS:
        tokens.pop(0)
    while tokens and tokens[-1].lower() in _STOPWORDS:
        tokens.pop()
    cleaned = " ".join(tokens).strip(" .,:;!?\"'()")
    words = [t.lower().strip(".,") for t in cleaned.split()]
    if len(cleaned) < 2 or all(w in _NOT_NAMES or w.replace(".", "").isdigit() for w in words):
        return None
    return cleaned


def _capitalised_names(clause: str) -> Iterator[str]:
    """Capitalised word runs; a lone first word counts only before a verb like "is", "works"."""
    for match in _CAPITALISED_RUN.finditer(clause):
        run = match.group(1)
        if match.start() == 0 and " " not in run.strip():
            following = _words(clause[match.end():])[:1]
            if not following or following[0] not in _NAME_VERBS:
                continue
        yield run


def _candidates(clause: str) -> Iterator[str]:
    german = is_german(clause)
    yield from (m.group(1) for m in _NAMING.finditer(clause))
    for pattern, plural in ((_PLACES, False), (_TOOLS, True)):
        for m in pattern.finditer(clause):
            if not (german and _german_noun(m.group(1).split()[0], plural=plural)):
                yield m.group(1)
    yield from (m.group(1) + (m.group(2) or "") for m in _TOKEN.finditer(clause)
                if _name_like(m.group(1)))
    yield from (m.group(1) for m in _TITLED.finditer(clause))
    if german:
        yield from (m.group(1) for m in _APPOSITION.finditer(clause))
        yield from (m.group(1) for m in _GERMAN_PLACE.finditer(clause)
                    if not _german_noun(m.group(1)))
    else:
        yield from _capitalised_names(clause)


def _only_addresses(clause: str, name: str) -> bool:
    """The clause only greets, thanks or acknowledges ``name`` ("Thanks, Maria!", "Hey John!",
    "Danke, Julia."): every word but the name's is one of
    :data:`~langgraph_episodic.relevance.TRIVIAL_WORDS`, so it says nothing about it.

    >>> _only_addresses("Thanks, Maria!", "Maria"), _only_addresses("Maria is great", "Maria")
    (True, False)
    """
    own = set(_words(name))
    return all(w in TRIVIAL_WORDS for w in _words(clause) if w not in own)


def find_names(text: str) -> list[tuple[str, str]]:
    """(name, description) for each name the rules find in ``text``; the description is the
    clause the name came from. A longer name replaces its part ("ACME" -> "ACME Corp"). A
    clause that only greets or thanks a name ("Thanks, Maria!") says nothing about it: the
    name comes from the message's next clause about it, or not at all.

    >>> find_names("I work at ACME and I use LangGraph daily. Write a CSV parser.")
    [('ACME', 'I work at ACME and I use LangGraph daily.'), ('LangGraph', 'I work at ACME and I use LangGraph daily.')]
    """
    found: dict[str, tuple[str, str]] = {}
    for sentence in statements(text):
        for clause in fact_clauses(sentence):
            description = " ".join(clause.split())[:240]
            for raw in _candidates(clause):
                name = _clean_name(raw)
                if not name or _only_addresses(clause, name):
                    continue
                key = entity_key(name)
                if any(key in k.split() or key == k for k in found):
                    continue  # already found, maybe as part of a longer name
                for shorter in [k for k in found if k in key.split()]:
                    del found[shorter]
                found[key] = (name, description)
    return list(found.values())
