"""Language-aware text analysis for the lexical (BM25) side of search: English and German.

An analyzer turns a text into index terms:

1. Unicode NFKC, casefolded, typographic apostrophes made plain; words are ``\\w+`` runs that
   keep inner apostrophes and underscores (``don't``, ``snake_case``).
2. The language: ``"en"``, ``"de"``, or ``"auto"`` (per text: German when it has more German
   than English function words, or umlauts/ß and no English ones).
3. Stop words dropped (Snowball's English and German lists; see :data:`STOPWORDS`; German
   text also drops "bin", "die", "war"... which English text keeps), and an English
   possessive ``'s``.
4. Snowball stemming in the text's language (``snowballstemmer``; it uses ``PyStemmer``'s C
   code when that is installed). German stemming also folds umlauts and ß (``Käse``,
   ``Kaese`` -> ``kas``; ``Straße`` -> ``strass``).
5. German compounds (``auto``/``de``, words of 10+ letters): besides the whole word, its heads
   of at least 4 letters ending the word are added as terms (``Lieblingseditor`` ->
   ``lieblingseditor``, ``editor``, ...), so a question naming the head finds the compound.

Query and documents go through the same analyzer; in ``"auto"`` mode each is detected on its
own, which is right for the usual case (a German question about German memories).
Measured effects are in ``docs/benchmarks.md`` ("Retrieval quality" and "German and English").
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import islice
from typing import Literal

import snowballstemmer

from ..errors import InvalidValueError

Language = Literal["en", "de", "auto"]
LANGUAGES: tuple[str, ...] = ("en", "de", "auto")

_WORD = re.compile(r"\w+(?:'\w+)*")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
_GERMAN_LETTERS = frozenset("äöüß")

# Function words that tell the two languages apart: none is a function word of the other
# language ("in", "an", "am" and "was" are both, so they count for neither: with them "Ich
# wohne in Leipzig." and "An welchem Tag wurde ich geboren?" were taken for English).
_GERMAN_TEXT = """
    ich du er wir ihr sie und oder nicht ist sind bin bist war waren hat habe haben der die das
    den dem des ein eine einen einem einer mein meine meinen meinem dein deine sein seine mit
    für auf bei von zu zum zur im ins auch noch wie wer wo wann warum welche welcher welches
    mir mich dir dich uns euch ihm ihn ihnen kein keine keinen gern gerne schon immer sehr
    unser unsere unseren unserem unserer als
"""
# ... and the verbs a fact about someone is most often said with, which no English text has
# ("Jonas wohnt in Bochum." holds no function word of either language).
_GERMAN_VERBS = """
    wohne wohnt lebe lebt arbeite arbeitet heiße heißt fahre fährt spiele spielt trinke trinkt
    esse isst mag liebt geht gehe
"""
_GERMAN_HINTS = frozenset(_GERMAN_TEXT.split()) | frozenset(_GERMAN_VERBS.split())
_ENGLISH_TEXT = """
    i you he she we they and or not is are were has have had the a my your his her our
    their with for on at of to from what who where when why how which do does did this that
    these those it its me him them us be been will would can could should
"""
_ENGLISH_HINTS = frozenset(_ENGLISH_TEXT.split())

COMPOUND_MIN = 10
"""German words at least this long are treated as possible compounds."""
HEAD_MIN = 4
"""The shortest compound head (and modifier) added as a term."""
CACHED_MAX = 64
"""Longest word whose stem is cached."""
COMPOUND_MAX = 40
"""Longer words are not split: no German compound is that long, and splitting costs the square
of the length (a 100 kB "word" in a query must not take minutes)."""


def _check(language: str) -> None:
    if language not in LANGUAGES:
        raise InvalidValueError(f"language must be one of {LANGUAGES}, got {language!r}.")


def normalise(text: str) -> str:
    """NFKC, casefolded, plain apostrophes.

    >>> normalise("Ｆｕｌｌ Don’t STRASSE Straße")
    "full don't strasse strasse"
    """
    if text.isascii():  # NFKC and the apostrophes change no ASCII character
        return text.casefold()
    return unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).casefold()


def words(text: str) -> list[str]:
    """The normalised words of ``text`` (no stop words removed, nothing stemmed)."""
    return _WORD.findall(normalise(text))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_ABBREVIATION_TEXT = "st dr mr mrs ms mt prof jr sr nr str bzw ca vs etc usw z.b u.a d.h e.g i.e hr fr"
_ABBREVIATIONS = frozenset(_ABBREVIATION_TEXT.split())
"""Words that end in a full stop without ending a sentence ("St. Luke's", "Dr. Weber",
"z.B. Tee"): titles, saints and streets, and the common short forms of both languages."""
_MONTH_TEXT = "januar jänner februar märz april mai juni juli august september oktober november dezember"
_MONTHS = frozenset(_MONTH_TEXT.split())


def _goes_on(before: str, after: str) -> bool:
    """Whether a full stop at the end of ``before`` ends no sentence: after an abbreviation,
    an initial ("J. R. R. Tolkien") or a German ordinal ("am 3. August", "3. Stock")."""
    if not before.endswith("."):
        return False
    last = before[:-1].rsplit(None, 1)[-1].casefold() if before[:-1].strip() else ""
    if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()):
        return True
    first = after.split(None, 1)[0].casefold().strip(",.;:") if after.strip() else ""
    return last.isdigit() and len(last) <= 2 and (first in _MONTHS or after[:1].islower())


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: split after ".", "!" or "?" and a space, except where a full
    stop ends an abbreviation, an initial or a German ordinal.

    >>> sentences("Maya works at St. Luke's. She likes it!")
    ["Maya works at St. Luke's.", 'She likes it!']
    >>> sentences("Jonas hat am 3. August Geburtstag.")
    ['Jonas hat am 3. August Geburtstag.']
    """
    out: list[str] = []
    for part in _SENTENCE_END.split(text.strip()):
        if out and _goes_on(out[-1], part):
            out[-1] = f"{out[-1]} {part}"
        elif part:
            out.append(part)
    return out


def without_names(text: str, names: Iterable[str]) -> str:
    """``text`` without ``names`` (casefolded) where written as names are, with a capital
    ("Lena", "Lena's", "Lenas"; "the user" is no name), or ``text`` when nothing else is left:
    "What is Lena putting money aside for?" without the user's own name, which every fact an
    agent saved about her holds and so tells none apart.

    >>> without_names("What is Lena's dog called?", {"lena"})
    'What is dog called?'
    >>> without_names("What does the user drink?", {"user"})
    'What does the user drink?'
    """
    capitalised = sorted({n[:1].upper() + n[1:] for n in names if n}, key=len, reverse=True)
    if not capitalised:
        return text
    alternatives = "|".join(re.escape(n) for n in capitalised)
    left = re.sub(rf"\s*\b(?:{alternatives})(?:'s|’s|s)?\b'?", "", text)
    return left.strip() if words(left) else text


def s_stem(word: str) -> str:
    """Harman's "S" stemmer: fold English plurals to the singular, nothing else.

    >>> [s_stem(w) for w in ["parties", "boxes", "cats", "glass", "status", "is"]]
    ['party', 'boxe', 'cat', 'glass', 'status', 'is']
    """
    if len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith(("us", "ss")):
        return word
    return word[:-1]


def tokenize(text: str, *, stem: bool = False) -> list[str]:
    """Split text into lowercase unicode words, dropping English and German stopwords.

    Words keep inner apostrophes and underscores (``don't``, ``snake_case``), so identifiers
    stay whole; an English possessive ``'s`` is removed. ``stem=True`` also folds English
    plurals (:func:`s_stem`).

    >>> tokenize("Caroline's dog ISN'T chasing the ball_pit!")
    ['caroline', 'dog', 'chasing', 'ball_pit']
    """
    kept = (w[:-2] if w.endswith("'s") else w for w in words(text) if w not in STOPWORDS)
    return [s_stem(word) if stem else word for word in kept]


def detect(tokens: list[str]) -> Literal["en", "de"]:
    """``"de"`` when the words look German, else ``"en"`` (the tie goes to English unless a
    word has an umlaut or ß).

    >>> detect(words("Ich trinke keinen Kaffee"))
    'de'
    >>> detect(words("I do not drink coffee"))
    'en'
    >>> detect(words("Müller"))
    'de'
    """
    german = sum(map(_GERMAN_HINTS.__contains__, tokens))
    english = sum(map(_ENGLISH_HINTS.__contains__, tokens))
    if german != english:
        return "de" if german > english else "en"
    return "en" if _GERMAN_LETTERS.isdisjoint("".join(tokens)) else "de"


_local = threading.local()


def _stemmer(language: str) -> snowballstemmer.Stemmer:
    """This thread's Snowball stemmer of ``language`` (stemmers keep state between calls)."""
    stemmers = _local.__dict__.setdefault("stemmers", {})
    if language not in stemmers:
        stemmer = stemmers[language] = snowballstemmer.stemmer(
            "german" if language == "de" else "english"
        )
        if hasattr(stemmer, "maxCacheSize"):
            # PyStemmer's word cache, off: this module keeps its own (:func:`stem`'s, and
            # each :func:`analyze_many`'s vocabulary), and filling PyStemmer's (every word,
            # the long ones too, 10,000 at a time) took five times as long as stemming.
            stemmer.maxCacheSize = 0
    return stemmers[language]


@lru_cache(maxsize=200_000)
def stem(word: str, language: Literal["en", "de"]) -> str:
    """The Snowball stem of one lowercase word.

    >>> stem("running", "en"), stem("Häuser".casefold(), "de"), stem("kaese", "de")
    ('run', 'haus', 'kas')
    """
    return str(_stemmer(language).stemWord(word))


def stem_word(word: str, language: Literal["en", "de"]) -> str:
    """:func:`stem`, with only words of a sane length going through its cache (a cache of
    100 kB keys would be a memory leak an attacker controls)."""
    return stem(word, language) if len(word) <= CACHED_MAX else str(_stemmer(language).stemWord(word))


@lru_cache(maxsize=100_000)
def compound_heads(word: str) -> tuple[str, ...]:
    """Stems of the possible heads of a long German word: every ending of at least
    :data:`HEAD_MIN` letters that leaves a modifier of at least as many.

    >>> "editor" in compound_heads("lieblingseditor")
    True
    >>> compound_heads("editor")
    ()
    """
    if not COMPOUND_MIN <= len(word) <= COMPOUND_MAX or not word.isalpha():
        return ()
    heads = {stem(word[i:], "de") for i in range(HEAD_MIN, len(word) - HEAD_MIN + 1)}
    heads.discard(stem(word, "de"))
    return tuple(sorted(heads))


def german_extras(word: str) -> tuple[str, ...]:
    """Terms a German word adds beside its stem: its compound heads (:func:`compound_heads`)
    and, for a verb in the third person, the stem without its ending "t", which Snowball keeps
    ("wohnt" also gives "wohn", the stem of "wohne" and "wohnen"; "arbeitet" gives "arbeit").
    A fact said of someone ("Jonas wohnt in Bochum") then shares its verb with a question in
    the first person ("Wo wohne ich?").

    >>> german_extras("wohnt"), german_extras("wohne")
    (('wohn',), ())
    """
    heads = compound_heads(word)
    if len(word) < 5 or not word.endswith("t") or not word.isalpha():
        return heads
    base = stem(word[:-1], "de")
    return heads if base == stem(word, "de") or base in heads else (*heads, base)


# Snowball's English stop list (snowballstem.org, BSD licence).
_ENGLISH = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom this
    that these those am is are was were be been being have has had having do does did doing would
    should could ought i'm you're he's she's it's we're they're i've you've we've they've i'd
    you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll isn't aren't wasn't
    weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't shan't shouldn't can't
    cannot couldn't mustn't let's that's who's what's here's there's when's where's why's how's a
    an the and but if or because as until while of at by for with about against between into
    through during before after above below to from up down in out on off over under again
    further then once here there when where why how all any both each few more most other some
    such no nor not only own same so than too very
"""
ENGLISH_STOPWORDS = frozenset(_ENGLISH.split())

# Snowball's German stop list (snowballstem.org, BSD licence), less the words that are also
# English content words ("bin den die hat man nun war"), so English text keeps them.
_GERMAN = """
    aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes
    anderm andern anderr anders auch auf aus bei bis bist da damit dann der des dem das daß dass
    derselbe derselben denselben desselben demselben dieselbe dieselben dasselbe dazu dein deine
    deinem deinen deiner deines denn derer dessen dich dir du dies diese diesem diesen dieser
    dieses doch dort durch ein eine einem einen einer eines einig einige einigem einigen einiger
    einiges einmal er ihn ihm es etwas euer eure eurem euren eurer eures für gegen gewesen hab
    habe haben hatte hatten hier hin hinter ich mich mir ihr ihre ihrem ihren ihrer ihres euch im
    in indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein
    keine keinem keinen keiner keines können könnte machen manche manchem manchen mancher manches
    mein meine meinem meinen meiner meines mit muss musste nach nicht nichts noch nur ob oder
    ohne sehr sein seine seinem seinen seiner seines selbst sich sie ihnen sind so solche solchem
    solchen solcher solches soll sollte sondern sonst über um und uns unsere unserem unseren
    unser unseres unter viel vom von vor während waren warst was weg weil weiter welche welchem
    welchen welcher welches wenn werde werden wie wieder will wir wird wirst wo wollen wollte
    würde würden zu zum zur zwar zwischen
"""
GERMAN_STOPWORDS = frozenset(_GERMAN.split())

STOPWORDS = ENGLISH_STOPWORDS | GERMAN_STOPWORDS
"""Words the default tokenizer drops (English and German)."""

_DROPPED = {"en": STOPWORDS, "de": STOPWORDS | {"bin", "den", "die", "hat", "man", "nun", "war"}}
"""The stop words of each language's text: German text also drops the German stop words that are
English content words."""


def analyze(
    text: str,
    *,
    language: Language = "auto",
    stopwords: frozenset[str] | None = None,
    compounds: bool = True,
) -> list[str]:
    """Index terms of ``text`` (see the module docstring).

    >>> analyze("Caroline's dogs were chasing the ball_pit!")
    ['carolin', 'dog', 'chase', 'ball_pit']
    >>> analyze("Mein Lieblingseditor ist Neovim.")[:2]
    ['lieblingseditor', 'neovim']
    >>> "editor" in analyze("Mein Lieblingseditor ist Neovim.")
    True
    >>> analyze("Ich mag Käse") == analyze("Ich mag Kaese") == analyze("ICH MAG KÄSE")
    True
    """
    _check(language)
    tokens = words(text)
    lang: Literal["en", "de"] = detect(tokens) if language == "auto" else language
    drop = _DROPPED[lang] if stopwords is None else stopwords
    out: list[str] = []
    heads: list[str] = []
    for word in tokens:  # one text: each word's stem from stem_word's cache, no batch
        if word not in drop:
            word = word[:-2] if word.endswith("'s") else word
            out.append(stem_word(word, lang))
            if lang == "de" and compounds and len(word) <= COMPOUND_MAX:
                heads.extend(german_extras(word))
    return out + heads


def analyze_many(
    texts: Iterable[str], *, language: Language = "auto", compounds: bool = True
) -> Iterator[list[str]]:
    """``analyze(text, language=language, compounds=compounds)`` of each text, in order, with
    one stemmer call per batch of new words and a table of the words met (freed when the
    iteration ends).

    >>> texts = ["Caroline's dogs were chasing the ball_pit!", "Mein Lieblingseditor ist Neovim."]
    >>> list(analyze_many(texts)) == [analyze(t) for t in texts]
    True
    """
    _check(language)
    yield from _analyzed(texts, language, compounds)


_BATCH = 512
"""Texts tokenized before their new words are stemmed together (it bounds the words held at
once, not what is kept)."""


class _Vocabulary:
    """One language's words met by one :func:`analyze_many`: word -> index term (None for a stop
    word) and, for German, its extra terms (:func:`german_extras`)."""

    __slots__ = ("drop", "heads", "language", "split", "terms")

    def __init__(self, language: Literal["en", "de"], compounds: bool) -> None:
        self.language = language
        self.drop = _DROPPED[language]
        self.split = language == "de" and compounds
        self.terms: dict[str, str | None] = {}
        self.heads: dict[str, tuple[str, ...]] = {}

    def learn(self, new: Iterable[str]) -> None:
        """Add words not met yet: their stems in one call of the stemmer."""
        kept: list[str] = []
        bare: list[str] = []
        for word in new:
            if word in self.drop:
                self.terms[word] = None
                continue
            kept.append(word)
            bare.append(word[:-2] if word.endswith("'s") else word)
        stems = _stemmer(self.language).stemWords(bare)
        for word, base, term in zip(kept, bare, stems, strict=True):
            self.terms[word] = str(term)
            if self.split:
                self.heads[word] = german_extras(base) if len(base) <= COMPOUND_MAX else ()

    def of(self, tokens: list[str]) -> list[str]:
        """The terms of a text's words (all of them learnt): stems, then German extras."""
        terms = self.terms
        out = [term for term in map(terms.__getitem__, tokens) if term is not None]
        if self.split:
            for word in tokens:
                if terms[word] is not None:
                    out.extend(self.heads[word])
        return out


def _analyzed(texts: Iterable[str], language: Language, compounds: bool) -> Iterator[list[str]]:
    """The terms of each text, read :data:`_BATCH` texts at a time."""
    vocabularies: dict[str, _Vocabulary] = {}
    rest = iter(texts)
    while batch := list(islice(rest, _BATCH)):
        tokenized = []
        new: dict[_Vocabulary, dict[str, None]] = {}
        for text in batch:
            tokens = words(text)
            lang: Literal["en", "de"] = detect(tokens) if language == "auto" else language
            if lang not in vocabularies:
                vocabularies[lang] = _Vocabulary(lang, compounds)
            vocabulary = vocabularies[lang]
            unknown = (word for word in tokens if word not in vocabulary.terms)
            new.setdefault(vocabulary, {}).update(dict.fromkeys(unknown))
            tokenized.append((tokens, vocabulary))
        for vocabulary, unknown_words in new.items():
            vocabulary.learn(unknown_words)
        for tokens, vocabulary in tokenized:
            yield vocabulary.of(tokens)


class LanguageAnalyzer:
    """A ``str -> list[str]`` analyzer for the store's keyword index
    (:class:`~langgraph_episodic.chroma.ranking.lexical.LexicalIndex`): :func:`analyze` with a
    fixed language, with :meth:`many` for many texts at once."""

    __slots__ = ("compounds", "language")

    def __init__(self, language: Language = "auto", *, compounds: bool = True) -> None:
        _check(language)
        self.language: Language = language
        self.compounds = compounds

    def __call__(self, text: str) -> list[str]:
        return analyze(text, language=self.language, compounds=self.compounds)

    def many(self, texts: Iterable[str]) -> Iterator[list[str]]:
        """The terms of each text, in order (as calling the analyzer on each)."""
        return analyze_many(texts, language=self.language, compounds=self.compounds)

    def __repr__(self) -> str:
        return f"LanguageAnalyzer({self.language!r}, compounds={self.compounds})"


analyzer = LanguageAnalyzer
"""``analyzer(language="auto", *, compounds=True)``: a :class:`LanguageAnalyzer`."""
