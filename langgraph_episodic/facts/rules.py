"""Consolidation without a model: German and English rules that compare a new fact with the
user's current ones (the behaviour, with examples: ``docs/facts.md``, "Consolidation on write").

A fact closes another only when both set the same attribute of the same subject, its
**slot** (``residence``, ``work``, ``partner``, ``favourite:food``, ``residence:schwest``...);
a text that only mentions a topic ("At work I mostly write TypeScript") has none, and when
unsure both stay current. The decision is ``same``, ``update`` (a new value of the slot, the
same statement about another object, a switch, a correction), ``end`` (what the text names
stopped) or ``new``. What a sentence does beside its topic is read by :mod:`.phrasing`. The
slot is stored with every fact, so same-slot candidates are found by a store filter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..language.analysis import STOPWORDS, stem_word, tokenize
from .dates import word_set
from .phrasing import (
    CHANGE,
    NEGATED_ENDING,
    SPEAKER,
    correction_of,
    is_correction,
    is_ending,
    is_statement,
    speaker_of,
)

_F = re.IGNORECASE | re.UNICODE

_NOT_A_ROLE = (
    r"(?!(?:a|an|the|in|on|at|with|for|from|to|here|there|home|still|also|always|very|so|not|"
    r"really|quite|bit|little|lot|big|huge|only|next|last|this|regular|member|guest|patient|"
    r"customer|visitor|fan|gast|mitglied|kunde|kundin|patientin|stammgast|student|studentin|"
    r"schüler|schülerin|pupil|urlaub|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|"
    r"wochenende|morgen|vormittag|mittag|nachmittag|abend|januar|februar|märz|april|mai|juni|juli|"
    r"august|september|oktober|november|dezember|ostern|pfingsten|weihnachten|silvester)\b)"
)
"""Words after "am"/"bin" that name no role: what one is, a time ("Ich bin Sonntag bei Oma", "Ich
bin Samstag an der Ostsee" say where one is then)."""
_ROLE = re.compile(
    rf"\b(?:am|is|i'm)\s+(?:(?:a|an|the)|now(?:\s+(?:a|an|the))?)\s+"
    rf"(?:{_NOT_A_ROLE}[^\W\d_][\w-]*\s+){{1,3}}?at\s+(?-i:[A-ZÄÖÜ])"
    rf"|\b(?:bin|ist)\s+(?:(?:jetzt|nun)\s+)?(?:(?:ein|eine)\s+)?{_NOT_A_ROLE}(?-i:[A-ZÄÖÜ])\w+"
    rf"\s+(?:bei|an|am)\s+(?:(?:der|dem|den)\s+)?(?-i:[A-ZÄÖÜ])",
    _F,
)
"""A role at a named employer: "I'm a teacher at Hillside Primary", "is now lead designer at
Monzo", "Ich bin Pflegerin bei Vivantes", "Ich bin Lehrerin an der Grundschule am Park" (in
English after an article or "now", so "I'm tired at Christmas" names no job; in German a noun,
at an employer or an institution). A student or pupil at a school studies there: no job. Read
in the text as said, "now" included."""

_NEW_HOME = (r"\b(?:neue[nmrs]?|new)\s+(?:wohnung|haus|zuhause|flat|apartment|house|home)\s+"
             r"(?:in|im)\s+(?-i:[A-ZÄÖÜ])")
"""A new home in a place: "Unsere neue Wohnung in Dresden ist eingerichtet", "our new flat in
Leeds"."""
_NEW_BOSS = (r"\b(?:neue[rn]?\s+(?:chef|chefin|vorgesetzte[rn]?|arbeitgeber)\s+bei|new\s+(?:boss|"
             r"manager|supervisor|employer)\s+at)\s+(?-i:[A-ZÄÖÜ])")
"""A new boss at a named employer: "Mein neuer Chef bei Bosch", "My new manager at Southmead
Hospital"."""

_SLOTS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, _F)
    for name, pattern in {
        "name": r"\b(?:heiße|heisse|mein name ist|my name is|call me|i am called)\b",
        "age": r"\b(?:\d+\s+jahre\s+alt|\d+\s+years?\s+old|i am \d+\b|ich bin \d+\b)",
        "residence": r"\b(?:wohne|wohnt|wohnen|lebe|lebt|wohnort|wohnhaft|umgezogen|gezogen|"
                     r"ziehe|zieht|ziehen|zog|weggezogen|ausgezogen|live|lives|living|lived|moved|move|"
                     r"relocated|reside|resides|home town|hometown)\b|" + _NEW_HOME,
        # Shifts before work: "I work night shifts now" is not a new employer.
        "shift": r"schicht(?:en|dienst)?\b|\bshifts?\b",
        "work": r"\b(?:arbeite|arbeitet|arbeitete|angestellt|beschäftigt|job|stelle|"
                r"arbeitgeber|gekündigt|work|works|working|worked|employed|employer|"
                r"joined|hired|quit|selbstständig|selbständig|freiberuflich|self-employed|"
                r"freelancer?|freelancing)\b|" + _NEW_BOSS,
        "partner": r"\b(?:verheiratet|verlobt|freundin|ehefrau|ehemann|partnerin|partner|"
                   r"geschieden|getrennt|single|married|engaged|wife|husband|girlfriend|"
                   r"boyfriend|divorced|broke up|mit \w+ zusammen|zusammen mit|together with|"
                   r"verlobte[rn]?|unsere hochzeit|meine hochzeit|fiancée?|fiancé|dating|"
                   r"been seeing|our wedding|my wedding)\b",
        "car": r"\b(?:auto|fahre ein|fahre einen|fährt ein|fährt einen|wagen|car|drive a|"
               r"drive an|drives a|drives an)\b",
        "diet": r"\b(?:vegetarier\w*|veganer\w*|vegan|fleisch|vegetarian|meat)\b",
        "phone": r"\b(?:handynummer|telefonnummer|phone number|mobile number)\b",
        "study": r"\b(?:studiere|studiert|studium|study|studying|studies|university|"
                 r"universität|studiengang|degree|master'?s|bachelor'?s|phd)\b",
    }.items()
}
"""The topic words of each single-valued topic (a slot), in the order they are tried."""
_FAVOURITE = re.compile(r"\blieblings[-\s]?(\w+)|\bfavou?rite\s+(\w+)", _F)
_SWITCH = tuple(
    re.compile(pattern, _F)
    for pattern in (
        r"\bvon\s+(?P<old>[^,.;]+?)\s+(?:auf|zu|zum|zur|nach|in)\s+[^,.;]+?\s+"
        r"(?:umgestiegen|gewechselt|umgezogen|gezogen|umgesattelt)\b",
        r"\b(?:statt|anstatt|anstelle von|anstelle|nicht mehr)\s+(?P<old>[^,.;]+?)"
        r"(?:,|\.|;|$|\s+sondern\b)",
        r"\b(?:switched|changed|moved|went|upgraded|converted)\s+(?:over\s+)?from\s+"
        r"(?P<old>[^,.;]+?)\s+to\b",
        r"\b(?:instead of|rather than|in place of)\s+(?P<old>[^,.;]+)",
    )
)
"""A switch names the old object: "von VS Code auf Neovim umgestiegen", "statt Klavier",
"switched from the iPhone to a Pixel", "instead of the violin"."""
_COMPATIBLE = re.compile(
    r"\b(?:auch|außerdem|zusätzlich|zweite[nmrs]?|(?<!nur )noch eine?[nmrs]?|also|too|as well|another|"
    r"second|additionally)\b", _F)
"""Words saying that a statement adds to what holds ("auch", "a second", "too")."""
_YEAR = re.compile(r"^(?:19|20)\d\d$")


def _stemmed(de: str, en: str) -> frozenset[str]:
    """The stems of the German words ``de`` and of the English words ``en``."""
    return (frozenset(stem_word(w, "de") for w in word_set(de))
            | frozenset(stem_word(w, "en") for w in word_set(en)))


_TIME_STEMS = _stemmed("seit jetzt nun inzwischen mittlerweile neuerdings",
                       "since now currently recently")
_FRAME_WORDS = word_set("ist sind bin war heißt lautet is are am was")
"""Copulas: "X ist A" then "X ist B" says the same thing of another object. Verbs of liking are
not among them: one likes many things at once."""
_LIKING = word_set("gern gerne mag mögen liebe like likes love loves enjoy enjoys")
_HAVING = word_set("hat habe haben hast hatte has have had")
"""Verbs of having: one has many things at once ("Jonas hat Höhenangst" does not end "Jonas hat
eine Laktoseintoleranz"), so they are no content word of a frame."""


@dataclass(frozen=True)
class Candidate:
    """A current fact a new one is compared with: its store key, text and topic."""

    key: str
    text: str
    slot: str | None = None


@dataclass(frozen=True)
class Decision:
    """What a new fact is relative to the current ones: ``"same"``, ``"update"``, ``"new"`` or
    ``"end"``; ``target`` is the key of the fact it confirms, replaces or ends."""

    action: str
    target: str | None = None
    reason: str = ""


_GERMAN = word_set("ich mein meine habe bin und ist nicht bei in seit der die das keinen mehr "
                   "wohne arbeite")
_ENGLISH = word_set("i my have am and is not at the since live work anymore longer")


def _language(text: str) -> Literal["en", "de"]:
    words = re.findall(r"\w+", text.casefold())
    de, en = sum(w in _GERMAN for w in words), sum(w in _ENGLISH for w in words)
    return "de" if de > en else "en"


def stems(text: str, *, like: str | None = None) -> list[str]:
    """The text's content words, stop words dropped and stemmed (German or English, by the
    language of ``like`` when given: a part of a sentence is stemmed as the sentence)."""
    language = _language(like if like is not None else text)
    return [stem_word(w, language) for w in tokenize(text)]


def _topic_free(text: str) -> set[str]:
    """The content stems of ``text`` without its topic words and numbers (years; an age is a topic word)."""
    for pattern in _SLOTS.values():
        text = pattern.sub(" ", text)
    return {s for s in stems(text) if not _YEAR.match(s) and s not in _TIME_STEMS}


_POSSESSED = re.compile(
    r"^\W*(?:mein|meine|meinem|meinen|meiner|unser|unsere|unserem|unseren|my|our)\s+"
    r"(?:(?:neue[nmrs]?|alte[nmrs]?|jetzige[nmrs]?|new|old|current)\s+)?(\w+)",
    _F,
)
_NAMED = re.compile(
    # A few words may come between the name and the verb ("Maya sold her Honda Civic and now
    # drives ...").
    r"^\W*([A-ZÄÖÜ][\w-]+)\s+(?:(?!(?i:ich|i|wir|we|du|you)\b)\S+\s+){0,6}?"
    r"(?:wohnt|lebt|arbeitet|studiert|zog|zieht|fährt|ist|hat|verkaufte|kaufte|lives|works|"
    r"studies|moved|relocated|drives|rides|left|joined|quit|sold|bought|started|switched|broke|"
    r"became|is|has)\b",
    re.UNICODE,
)


def _named_subject(text: str) -> str | None:
    """The casefolded name a fact is about ("Anna lebt in Wien"), or None (the user's own
    facts, "Ich ...", "My ...")."""
    named = _NAMED.match(text)
    name = named.group(1).casefold() if named is not None else None
    # A function word ("Ab nächstem Monat arbeite ich ...") names no one.
    return None if name in _NOT_NAMES else name


_NAME_POSSESSED = re.compile(r"^\W*(?-i:[A-ZÄÖÜ])[\w-]*(?:'s|’s|(?<=s)')\s+(\w+)"
                             r"|^\W*(?-i:[A-ZÄÖÜ])[\w-]*s\s+((?-i:[A-ZÄÖÜ])\w+)",
                             re.UNICODE)
"""A person's own ("Tarek's mother", "Tareks Mutter"): the fact is about the possessed."""
_OWNER = re.compile(r"^\W*((?-i:[A-ZÄÖÜ])[\w-]*?)(?:'s|’s|'|s(?=\s+(?-i:[A-ZÄÖÜ])))\s", re.UNICODE)
"""Whose it is: "Ethan's girlfriend", "Sabines Freund"."""
_SELF = word_set(
    "ich wir i we mein meine my our unser unsere "
    # a question asks, it is about no one: "Was habe ich studiert?"
    "was wer wo wie welche welcher welches what who where which how when why")
_NOT_NAMES = _SELF | STOPWORDS | word_set(
    "heute gestern morgen jetzt nun seit endlich dann also auch today yesterday tomorrow now "
    "since finally then last next this")
"""Words that begin a sentence or follow a question's verb like a name and name no one."""


def _other_subject(text: str, topic: re.Pattern[str]) -> str | None:
    """The stem of the person or thing a fact is about when that is not the user ("Meine
    Schwester lebt in Wien", "My brother works at Google", "Anna lebt in Wien"); None for the
    user's own facts, also when the noun names the topic itself (``topic``: "Mein Wohnort ist
    Berlin", "My employer is Initech")."""
    possessed = _POSSESSED.match(text) or _NAME_POSSESSED.match(text)
    if possessed is not None:
        noun = possessed.group(possessed.lastindex or 1)
        said = topic.search(text)  # the topic said with the noun: "My name is Maya"
        if topic.search(noun) or (said is not None and said.start() < possessed.end()):
            # "Ethan's girlfriend is Chloe" is Ethan's partner, "My partner ..." the user's.
            owner = _OWNER.match(text) if possessed.re is _NAME_POSSESSED else None
            name = owner.group(1).casefold() if owner is not None else None
            return None if name in _SELF or name in STOPWORDS else name
        return stem_word(noun.casefold(), _language(text))
    return _named_subject(text)


_PLACE = r"\b(?:in|nach|(?<!next )(?<!close )to|into)\s+(?:(?:the|die|den)\s+)?(?-i:[A-ZÄÖÜ])[\w-]*"
"""A place named after a preposition of place: "in Berlin", "nach Graz", "to the Netherlands"
(a capital letter, so "in a small flat", "in der Nähe", "im dritten Stock" name none)."""
_VALUES: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, _F)
    for name, pattern in {
        "residence": _PLACE + r"|\b(?:wohnort|hometown|home town)\s+(?:ist|is)\s+(?:\w+\s+)?"
                     r"(?-i:[A-ZÄÖÜ])|" + _NEW_HOME,
        "work": r"\b(?:work|works|working|worked|arbeite|arbeitet|employed|angestellt|beschäftigt|job|"
                r"stelle)\b(?:\s+(?!at\b|for\b|bei\b|für\b|as\b|als\b)\w+){0,2}?\s+"
                r"(?:at|for|bei|für|as|als)\s+(?!home\b|hause\b|a living\b|hours\b|free\b)\w"
                r"|^\W*(?:bei|für)\s+\S+(?:\s+\S+)?\s+(?:arbeite|arbeitet)\b"
                r"|\bjoined\s+(?-i:[A-Z])|\bhired\s+(?:by|at)\b"
                r"|\b(?:employer|arbeitgeber)\s+(?:is|ist)\b"
                r"|\b(?:bin|ist|am|is|i'm|work|works|arbeite|arbeitet)\s+(?:(?:now|jetzt|nun)\s+)?"
                r"(?:as\s+a\s+)?(?:selbstständig|selbständig|freiberuflich|self-employed|"
                r"freelancer?|freelance)\b|" + _NEW_BOSS,
        "partner": r"\b(?:married|engaged|verheiratet|verlobt|together|zusammen|dating)\s+"
                   r"(?:to|with|mit)\s+(?-i:[A-ZÄÖÜ])"
                   r"|\bmit\s+(?-i:[A-ZÄÖÜ])\w*\s+(?:\w+\s+)?(?:zusammen|verheiratet|verlobt)\b"
                   r"|\b(?:married|heiratete|seeing|dating)\s+(?-i:[A-ZÄÖÜ])"
                   r"|\b(?:wife|husband|girlfriend|boyfriend|partner\w*|freundin|freund|frau|"
                   r"mann|ehefrau|ehemann)(?:'s name)?\s+(?:is called|is named|heißt|is)\s+"
                   r"(?-i:[A-ZÄÖÜ])(?!\w*\b(?:and|und)\b)"
                   r"|\b(?:i am|i'm|ich bin)\s+(?:(?:now|jetzt|wieder|again)\s+)?(?:single|married|"
                   r"engaged|divorced|verheiratet|verlobt|geschieden|ledig)\b",
        "car": r"\b(?:drive|drives|driving|fahre|fährt)\s+(?:(?:now|jetzt|nun|inzwischen)\s+)?"
               r"(?:a|an|einen|ein|eine)\s+(?!lot\b|bit\b|little\b)\w"
               r"|\b(?:car|auto|wagen)\s+(?:is|ist)\s+(?:(?:now|jetzt)\s+)?(?:a|an|ein|eine)\s",
        "diet": r"\b(?:am|i'm|is|are|bin|ist|sind|became|become|wurde|geworden|lebe|live)\s+"
                r"(?:(?:now|jetzt|nun|wieder|again|seit \w+)\s+)*(?:a\s+)?(?:vegetarian|vegan|"
                r"pescetarian|vegetarier\w*|veganer\w*|vegan)\b"
                r"|\b(?:eat|eats|esse|isst)\s+(?:(?:now|again|wieder|jetzt)\s+)*(?:meat|fleisch)\b",
        "study": r"\b(?:study|studying|studies|studiere|studiert)\s+(?!(?:every|each|hard|late|"
                 r"for|with|on|in the|at night|a lot|jeden|jede|abends|morgens|viel|für|mit|gern|"
                 r"gerne|zusammen)\b)\w"
                 r"|\b(?:degree|studium|studiengang|master'?s|bachelor'?s|phd)\s+(?:in|is|ist|to)\s",
        "name": r"\b(?:heiße|heisse|name is|name ist|call me|i am called)\s+(?:\w+\s+)?"
                r"(?-i:[A-ZÄÖÜ])",
        "phone": r"\d",
    }.items()
}
"""What sets a slot's value, beyond mentioning its topic (:data:`_SLOTS`): "I work at X", not
"At work I ..."; a place after "live"; a partner by name. A slot without an entry (age,
shifts) is set by its topic words alone."""
_FAVOURITE_VALUE = re.compile(
    r"\b(?:lieblings[-\s]?\w+|favou?rite\s+\w+)\s+(?:ist|sind|war|heißt|lautet|is|are|was)\b"
    r"|\b(?:ist|sind|is|are)\s+(?:mein\w*|my)\s+(?:lieblings|favou?rite)", _F)
_UNSET = re.compile(
    # A wish, a plan or a possibility is no value yet ("May" is a month).
    r"\b(?:(?-i:may)|might|could|would|want to|wants to|wanna|thinking (?:about|of)|considering|"
    r"planning|plan to|hope to|dream of|someday|one day|möchte|möchten|würde|würden|könnte|"
    r"überlege\w*|ich plane|plane ich|träume|vielleicht|if|falls|"
    # A negation sets no value ("I don't work on Mondays"; "X, not Y" is a correction).
    r"not|never|nicht|nie|niemals|kein\w*)\b|n't\b", _F)
_PAST = re.compile(
    r"\b(?:used to|früher|damals|when i was|as a (?:kid|child|teenager|student)|als (?:kind|"
    r"teenager|student\w*|schüler\w*)|(?<!have )(?<!has )(?<!'ve )(?:lived|worked|studied)|"
    r"wohnte|lebte|arbeitete|studierte|gewohnt|gelebt|gearbeitet)\b", _F)
"""The past holds no current value: "I lived in London as a student", "Früher ...", "I worked
at a bakery"; a present perfect ("I have worked at Globex"), "since"/"seit" and a sentence
that goes on to the present ("..., jetzt wohne ich in Hamburg") still do."""
_SINCE = re.compile(r"\b(?:since|seit)\b", _F)
_NEGATION = re.compile(r"\b(?:not|never|nicht|nie|niemals|kein\w*)\b|n't\b", _F)


def topic_of(text: str) -> str | None:
    """The single-valued topic a text mentions, set or not (a question's, an ending's), or
    None. A fact about somebody else has that person's topic: the sister's home is not the
    user's.

    >>> topic_of("At work I mostly write TypeScript."), topic_of("Ich habe gekündigt.")
    ('work', 'work')
    """
    favourite = _FAVOURITE.search(text)
    if favourite is not None:
        word = (favourite.group(1) or favourite.group(2)).casefold()
        return f"favourite:{stem_word(word, 'de' if favourite.group(1) else 'en')}"
    plain = _unchanged(text)  # "Ich fahre jetzt einen Tesla": "fahre einen" names the car
    for name, pattern in _SLOTS.items():
        # Shifts at a named employer are the job: "Maya works night shifts at St. Luke's".
        if name == "shift" and _VALUES["work"].search(plain):
            continue
        if pattern.search(plain) or (name == "work" and _ROLE.search(text)):
            other = _other_subject(plain, pattern)
            return name if other is None else f"{name}:{other}"
    return None


def _unchanged(text: str) -> str:
    """``text`` without the words saying it changed ("jetzt", "now", "nur noch")."""
    return re.sub(r"\s{2,}", " ", CHANGE.sub(" ", text))


def _topic_words(text: str) -> set[str]:
    """The stems of the topic words in ``text`` ("vegan", "35 years old")."""
    return {w for pattern in _SLOTS.values() for m in pattern.finditer(_unchanged(text))
            for w in stems(m.group(0), like=text)}


_VALUE_IN_TOPIC = frozenset(["age", "diet"])
"""Slots whose value is a topic word: "I am vegan" after "I am vegetarian" is a change."""


def sets_value(text: str, topic: str) -> bool:
    """True when ``text`` sets the value of ``topic`` (:func:`topic_of`): it says where, for
    whom, whom, which, in the present, without a wish, a plan or a negation."""
    if _UNSET.search(text) or (_PAST.search(text) and not _SINCE.search(text)
                               and not CHANGE.search(text)):
        return False
    name = topic.split(":")[0]
    if name == "favourite":
        return _FAVOURITE_VALUE.search(text) is not None
    pattern = _VALUES.get(name)
    return (pattern is None or pattern.search(_unchanged(text)) is not None
            or (name == "work" and _ROLE.search(text) is not None))


def slot_of(text: str) -> str | None:
    """The single-valued attribute a fact sets (its topic, when it sets the topic's value), or
    None (see the module docstring). A correction's slot is that of what it states ("I moved
    to Hamburg" in "Correction: I moved to Hamburg, not Berlin").

    >>> slot_of("Ich bin nach Berlin gezogen."), slot_of("My favourite food is sushi.")
    ('residence', 'favourite:food')
    >>> slot_of("Meine Schwester lebt in Wien."), slot_of("Mein Wohnort ist jetzt Bonn.")
    ('residence:schwest', 'residence')
    >>> slot_of("At work I mostly write TypeScript."), slot_of("I work from home on Fridays.")
    (None, None)
    """
    stated = correction_of(text)[0]
    topic = topic_of(stated)
    return topic if topic is not None and sets_value(stated, topic) else None


_QUESTION_TOPICS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, _F)
    for name, pattern in {
        # Past participles ask about a topic that a statement's present tense names; in a
        # statement they mislead ("Ich bin es gewohnt", "vegan gelebt"), so only questions.
        "residence": r"\b(?:wo|wohin|where)\b.*\b(?:(?<!es )gewohnt|gelebt|lived|stayed)\b",
        "work": r"\b(?:wo|bei wem|für wen|where|who|which company)\b.*\b(?:gearbeitet|"
                r"angestellt|beschäftigt|worked|employed)\b|\b(?:arbeitgeber|employer)\b",
        "partner": r"\b(?:mit wem|who)\b.*\b(?:zusammen|verheiratet|verlobt|together|"
                   r"married|engaged|dating|dated)\b",
    }.items()
}


def topic_of_question(question: str) -> str | None:
    """The single-valued topic a question asks about (as :func:`topic_of` finds it in a
    statement), or None: recall uses it to find the topic's earlier versions by filter.

    >>> topic_of_question("Wo habe ich früher gewohnt?"), topic_of_question("Welches Auto hatte ich?")
    ('residence', 'car')
    >>> topic_of_question("Mit wem war ich früher zusammen?")
    'partner'
    """
    asked = (name for name, pattern in _QUESTION_TOPICS.items() if pattern.search(question))
    return topic_of(question) or next(asked, None)


_TOPIC_AS_PLACE = re.compile(
    r"\b(?:to|(?<!do )for|at|from|after|before|zur|zum|von der|nach der|vor der)\s+(?:the\s+)?"
    r"(?:work|arbeit|job|office|büro)\b|\bwork(?:s|ing)?\s+out\b", _F)
"""A topic word that names a place or an occasion, not the value asked for: "How do I get to
work?", "What laptop do I use for work?", "Where do I work out?"."""
_NO_VALUE_ASKED = re.compile(
    r"^\W*(?:when|wann|seit wann|how (?:many|much|long|often)|wie (?:viele?|lange|oft))\b"
    r"|\bfor a living\b|\blives? with\b|\bleben? mit\b|\blebt mit\b", _F)
"""A question that asks a time, a count or something else than the topic's value: "When did we
get married?", "How many animals live with me?", "What does my spouse do for a living?"."""


def value_topic_of_question(question: str) -> str | None:
    """The single-valued topic whose current value ``question`` asks for ("Where do I
    work?", "Welches Auto fahre ich?"), or None, also when the topic's word only names a place
    or an occasion ("How do I get to work?"): recall reads that topic's current fact by filter.

    >>> value_topic_of_question("Where do I work?"), value_topic_of_question("How do I get to work?")
    ('work', None)
    """
    if _TOPIC_AS_PLACE.search(question) or _NO_VALUE_ASKED.search(question):
        return None
    return asked_slot(question, topic_of_question(question))


def asked_slot(question: str, topic: str | None) -> str | None:
    """``topic`` with the subject ``question`` asks about, as :func:`slot_of` writes a fact's
    slot: after the verb, a person of the user's ("Wo wohnt meine Schwester?":
    ``residence:schwest``) or a name ("Where does Rachel live?": ``residence:rachel``); the
    user's own topic when it names none ("What is my job?": ``work``).

    >>> asked_slot("Where does Rachel live?", "residence"), asked_slot("Where do I live?", "residence")
    ('residence:rachel', 'residence')
    """
    if topic is None or ":" in topic or topic not in _SLOTS:
        return topic
    for match in _ASKED_ABOUT.finditer(question):
        noun = match.group(1)
        if not _SLOTS[topic].search(noun):
            return f"{topic}:{stem_word(noun.casefold(), _language(question))}"
    for match in _ASKED_NAMED.finditer(question):
        name = match.group(1).casefold()
        if name not in _NOT_NAMES:
            return f"{topic}:{name}"
    return topic


_ASKED_ABOUT = re.compile(
    r"\b(?:mein|meine|meinem|meinen|meiner|meines|unser|unsere|unserem|unseren|my|our)\s+"
    r"(?:(?:neue[nmrs]?|alte[nmrs]?|new|old|current)\s+)?(\w+)", _F)
"""Whose value a question asks: the noun after "mein", "my" ("meine Schwester", "my job")."""
_ASKED_NAMED = re.compile(
    r"\b(?i:does|did|is|was|has|had|wohnt|lebt|arbeitet|fährt|ist|war|hat|hatte|heißt)\s+"
    r"([A-ZÄÖÜ][\w-]+)", re.UNICODE)
"""A name after the verb of a question: "Where does Rachel live?", "Wo arbeitet Jonas?"."""


def _words(text: str) -> list[str]:
    return re.findall(r"\w+(?:'\w+)?", text.casefold().replace("’", "'"))


def _conflict(a: str | None, b: str | None) -> bool:
    """Two facts about different known topics: one never closes the other."""
    return a is not None and b is not None and a != b


def _same_frame(new: str, old: str) -> bool:
    """Two sentences that say the same thing about different objects: a shared beginning of
    at least two words holding two content words, or one and a copula, then one differing tail of at
    most three words each ("Mein Lieblingsessen ist Pizza" / "... ist Sushi"). When the new
    one says it changed ("nur noch", "jetzt", "only ... now"), those words are dropped and
    the two may also share an end ("Ich trinke morgens zwei Tassen Kaffee" / "... nur noch
    eine Tasse Kaffee"). A statement that adds ("auch", "too", "a second") is no update."""
    if _COMPATIBLE.search(new):
        return False
    changed = CHANGE.search(new) is not None
    a, b = _words(CHANGE.sub(" ", new)), _words(old)
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    if changed:
        while (suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]):
            suffix += 1
    if (prefix < 2 or prefix + suffix >= min(len(a), len(b))
            or max(len(a), len(b)) - prefix - suffix > 3 or any(w in _LIKING for w in a[:prefix])):
        return False
    shared = a[:prefix] + a[len(a) - suffix:]
    # "Ich bin ..." alone is no frame: the copula is no content word, nor is a having verb or
    # the named subject ("Jonas ist ..." is "Ich bin ..." said of Jonas).
    subject = _named_subject(new)
    content = len([w for w in tokenize(" ".join(shared))
                   if w not in _FRAME_WORDS and w not in _HAVING and w != subject])
    return content >= 2 or (content >= 1 and any(w in _FRAME_WORDS for w in a[:prefix]))


_OCCASIONAL = re.compile(
    r"\b(?:when it|if|wenn|falls|sometimes|manchmal|occasionally|gelegentlich|ab und zu|"
    r"bei (?:sonnenschein|regen|schönem wetter)|on (?:sunny|rainy) days)\b", _F)
"""What one does now and then instead of something ("instead of driving when it is sunny")
replaces nothing."""


def _switched_from(text: str, candidates: Sequence[Candidate], slot: str | None) -> Candidate | None:
    """The candidate naming the old object of a switch in ``text`` (most shared words, at
    least half of the object's)."""
    if _OCCASIONAL.search(text):
        return None
    old = {stem for pattern in _SWITCH for match in pattern.finditer(text)
           for stem in stems(match.group("old"), like=text)} - _TIME_STEMS
    if not old:
        return None
    shared, best = max(((len(old & set(stems(c.text))), c) for c in candidates
                        if not _conflict(slot, c.slot)), key=lambda pair: pair[0], default=(0, None))
    return best if shared and 2 * shared >= len(old) else None


_WEAK = _stemmed(
    """montag dienstag mittwoch donnerstag freitag samstag sonntag montags dienstags mittwochs
    donnerstags freitags samstags sonntags morgens abends wochenende heute gestern letzt woche
    monat jahr mehr länger geworden""",
    """monday tuesday wednesday thursday friday saturday sunday morning evening night weekend
    today yesterday last week month year ago anymore longer got get became become""",
) | _TIME_STEMS
"""Words an ending says beside what it ends ("on Fridays", "since last month"): they name
no fact."""
_ENDING_STEMS = frozenset(stem_word(w, lang) for lang in ("de", "en") for w in word_set(
    "mehr länger gekündigt aufgehört getrennt verkauft weggezogen ausgezogen gestorben verstorben "
    "abgeschafft longer anymore quit left sold broke stopped gave died passed divorced moved away"
))


def _ended(text: str, candidates: Sequence[Candidate]) -> Candidate | None:
    """The current fact an ending ends: the one holding what it names ("I no longer live in
    Hamburg": the fact naming Hamburg, at least half the named words, or one of them on the
    same topic), or, when it names only a topic ("I quit my job"), that topic's fact. None
    when no current fact holds what it names: the ending is about an earlier version."""
    topic = topic_of(text)
    named = _topic_free(text) - _ENDING_STEMS - _WEAK
    if not named:
        return next((c for c in candidates if topic is not None and c.slot == topic), None)
    scored = [(shared / len(named) + (c.slot == topic), c) for c in candidates
              if not _conflict(topic, c.slot) and (shared := len(named & set(stems(c.text))))
              and (c.slot == topic or 2 * shared >= len(named))]
    return max(scored, key=lambda pair: pair[0], default=(0.0, None))[1]


def _corrected(stated: str, wrong: str | None, marked: bool, slot: str | None,
               candidates: Sequence[Candidate]) -> Candidate | None:
    """The current fact a correction replaces: the one holding the value it takes back
    (marked as a correction, or saying the same of it: same slot, same frame), else, when
    marked, the current fact of its slot."""
    named = set(stems(wrong, like=stated)) - _TIME_STEMS if wrong else set()
    if named:
        for c in candidates:
            if not named <= set(stems(c.text)) or _conflict(slot, c.slot):
                continue
            if marked or (slot is not None and c.slot == slot) or _same_frame(stated, c.text):
                return c
    if marked and slot is not None:
        return next((c for c in candidates if c.slot == slot), None)
    return None


def decide_by_rules(text: str, candidates: Sequence[Candidate]) -> Decision:
    """Decide what ``text`` is relative to ``candidates`` (the user's current facts, best
    match first); the target is always one of them.

    >>> old = [Candidate("k1", "Ich wohne in München.", "residence")]
    >>> decide_by_rules("Ich bin nach Berlin gezogen.", old)
    Decision(action='update', target='k1', reason='same topic: residence')
    >>> decide_by_rules("Ich habe eine Katze.", old).action
    'new'
    >>> decide_by_rules("Ich wohne nicht mehr in Hamburg.", old).action
    'new'
    """
    own = stems(text)
    for c in candidates:
        if stems(c.text) == own:
            return Decision("same", c.key, "same words")
    body = SPEAKER.sub("", text, count=1)
    if "?" in body:
        return Decision("new", None, "a question sets nothing")
    if NEGATED_ENDING.search(text):
        return Decision("new", None, "a change denied changes nothing")
    # Only the same speaker's facts (all of them when no speaker is named) can be closed: a
    # turn of one speaker is about someone else than a turn of another.
    speaker = speaker_of(text)
    candidates = [c for c in candidates if speaker_of(c.text) == speaker]
    # Only a statement corrects, ends or sets a value; a turn of several sentences may still
    # name what it switched from.
    statement = is_statement(text)
    stated, wrong, marked = correction_of(body) if statement else (body, None, False)
    slot = slot_of(body) if statement else None
    if marked or wrong is not None:
        corrected = _corrected(stated, wrong, is_correction(body), slot, candidates)
        if corrected is not None:
            return Decision("update", corrected.key, "a correction replaces what it corrects")
    elif statement and is_ending(body):
        ended = _ended(body, candidates)
        if ended is not None:
            return Decision("end", ended.key, "ends the fact holding what it names")
        return Decision("new", None, "an ending that names no current fact ends nothing")
    switched = _switched_from(stated, candidates, slot)
    if switched is not None:
        return Decision("update", switched.key, "switched from what it names")
    if not statement:
        return Decision("new", None, "a turn of several sentences tells, it sets no value")
    if slot is not None:
        for c in candidates:
            if c.slot == slot:
                if not _topic_free(stated) - _topic_free(c.text) and (
                        slot.split(":")[0] not in _VALUE_IN_TOPIC
                        or _topic_words(stated) == _topic_words(c.text)):
                    return Decision("same", c.key, f"same topic and content: {slot}")
                return Decision("update", c.key, f"same topic: {slot}")
    if _NEGATION.search(stated):
        return Decision("new", None, "a negation adds what does not hold, it replaces nothing")
    for c in candidates:
        if c.slot == slot and _same_frame(stated, c.text):
            return Decision("update", c.key, "same statement, another object")
    return Decision("new", None, "no current fact on this topic")
