"""A small cross-lingual memory set (our own, CC0): German memories asked about in English and
English memories asked about in German.

* ``GERMAN_MEMORIES``: 30 facts told in German, each with an English question that asks for it
  in other words;
* ``ENGLISH_MEMORIES``: 30 facts told in English, each with a German question;
* ``NEVER_SAID``: 15 English questions about things none of the German facts says, and 15
  German ones about things none of the English facts says.

Each language's facts are one user's memory (one namespace), asked in the other language:
the two halves share topics (a pet, an instrument), so in one namespace a question would have
two right answers.

The facts and topics differ from ``data/german_memory.jsonl`` and ``english_memory.jsonl``
(on whose tune half the store's floors were chosen), so this set is held out for every
constant. Used by ``benchmarks/cross_lingual.py`` and ``tests/store/test_cross_lingual.py``.
"""

from __future__ import annotations

GERMAN_MEMORIES: tuple[tuple[str, str], ...] = (
    ("Mein Hund heißt Bello.", "What is my dog called?"),
    ("Ich spiele seit zehn Jahren Cello im Stadtorchester.", "Which instrument do I play?"),
    ("Meine Großmutter wohnt in einem Altenheim in Kassel.", "Where does my grandma live?"),
    ("Ich vertrage kein Gluten.", "Which food intolerance do I have?"),
    ("Unser Sohn Max geht in die dritte Klasse.", "What grade is our boy in?"),
    ("Ich fahre einen roten Skoda Octavia.", "Which vehicle do I own?"),
    ("Im Winter gehe ich gern Ski fahren in Tirol.", "What winter sport do I enjoy?"),
    ("Meine Lieblingsband ist Radiohead.", "Which group do I love listening to?"),
    ("Ich arbeite als Bäckerin in einer kleinen Bäckerei.", "What is my profession?"),
    ("Ich habe Angst vor Spinnen.", "Which animals frighten me?"),
    ("Meine Frau heißt Sabine und ist Ärztin.", "What is my wife's occupation?"),
    ("Ich trinke jeden Abend ein Glas Rotwein.", "What do I drink at night?"),
    ("Mein Geburtstag ist am dritten Oktober.", "When do I celebrate my birthday?"),
    ("Ich lerne gerade Italienisch.", "Which language am I studying at the moment?"),
    ("Nächsten Sommer reisen wir nach Norwegen.", "Where are we going on holiday next year?"),
    ("Ich schlafe schlecht, wenn es warm ist.", "When do I sleep badly?"),
    ("Mein Chef heißt Herr Becker.", "Who is my manager?"),
    ("Ich sammle alte Briefmarken.", "What is my collecting hobby?"),
    ("Wir haben einen Garten mit Apfelbäumen.", "What trees grow in our garden?"),
    ("Ich bin Linkshänder.", "Which hand do I write with?"),
    ("Mein Bruder studiert Medizin in Heidelberg.", "What does my brother study?"),
    ("Ich esse am liebsten Spaghetti Carbonara.", "What is my favourite dish?"),
    ("Ich gehe dreimal pro Woche schwimmen.", "How often do I go to the pool?"),
    ("Unsere Wohnung liegt im vierten Stock ohne Aufzug.", "On which floor is our apartment?"),
    ("Ich habe eine Katze namens Luna.", "What is the name of my cat?"),
    ("Mein Auto muss im März zum TÜV.", "When is my car's inspection due?"),
    ("Ich mag keine Horrorfilme.", "Which kind of movies do I dislike?"),
    ("Meine Tochter hat eine Erdnussallergie.", "What is my daughter allergic to?"),
    ("Ich spreche fließend Französisch.", "Which foreign language do I speak well?"),
    ("Ich treffe mich jeden Donnerstag mit meinem Lesekreis.", "When does my book club meet?"),
)
"""(German memory, English question about it)."""

ENGLISH_MEMORIES: tuple[tuple[str, str], ...] = (
    ("My horse is called Storm.", "Wie heißt mein Pferd?"),
    ("I play the violin in a string quartet.", "Welches Instrument spiele ich?"),
    ("My uncle lives on a farm near Dublin.", "Wo wohnt mein Onkel?"),
    ("I am allergic to cats.", "Auf welche Tiere reagiere ich allergisch?"),
    ("Our twins started kindergarten this year.", "Seit wann gehen unsere Zwillinge in den Kindergarten?"),
    ("I ride a black electric scooter to the office.", "Womit fahre ich ins Büro?"),
    ("I go surfing in Portugal every autumn.", "Welchen Wassersport mache ich?"),
    ("My favourite singer is Adele.", "Welche Sängerin höre ich am liebsten?"),
    ("I am a firefighter.", "Was ist mein Beruf?"),
    ("I am scared of heights.", "Wovor fürchte ich mich?"),
    ("My partner Chris works as a pilot.", "Was arbeitet mein Partner?"),
    ("I drink two espressos every morning.", "Was trinke ich morgens?"),
    ("My wedding anniversary is on 12 July.", "Wann ist unser Hochzeitstag?"),
    ("I am taking Japanese lessons online.", "Welche Sprache lerne ich im Internet?"),
    ("We are moving to Canada next spring.", "Wohin ziehen wir bald um?"),
    ("I suffer from migraines when I skip meals.", "Wann bekomme ich Kopfschmerzen?"),
    ("My landlord is Mrs Patel.", "Wer ist meine Vermieterin?"),
    ("I build model railways in the basement.", "Was ist mein Bastelhobby?"),
    ("We grow tomatoes on our balcony.", "Welches Gemüse pflanzen wir an?"),
    ("I am colour blind.", "Habe ich eine Sehschwäche?"),
    ("My cousin is a lawyer in Boston.", "Welchen Beruf hat meine Cousine?"),
    ("My favourite dessert is apple pie.", "Welche Nachspeise mag ich am meisten?"),
    ("I run five kilometres every Sunday.", "Wie weit laufe ich am Wochenende?"),
    ("Our house has a large cellar.", "Hat unser Haus einen Keller?"),
    ("I have a parrot named Kiwi.", "Wie heißt mein Vogel?"),
    ("My passport expires in November.", "Wann läuft mein Reisepass ab?"),
    ("I hate romantic comedies.", "Welche Filme kann ich nicht leiden?"),
    ("My son is allergic to bee stings.", "Wogegen ist mein Sohn allergisch?"),
    ("I speak Portuguese fluently.", "Welche Fremdsprache beherrsche ich gut?"),
    ("I meet my chess club every Monday evening.", "Wann treffe ich meinen Schachverein?"),
)
"""(English memory, German question about it)."""

NEVER_SAID: dict[str, tuple[str, ...]] = {
    "en": (
        "What is my blood type?",
        "How tall am I?",
        "Which political party do I vote for?",
        "What was the name of my first teacher?",
        "How much rent do I pay?",
        "Which football team does my father support?",
        "What is my shoe size?",
        "Where did I go to university?",
        "Do I own a boat?",
        "What is my neighbour's name?",
        "Which bank do I use?",
        "What time does my train leave?",
        "Have I ever broken a bone?",
        "What is my email password hint?",
        "Which streaming service do I subscribe to?",
    ),
    "de": (
        "Welche Blutgruppe habe ich?",
        "Wie groß bin ich?",
        "Welche Partei wähle ich?",
        "Wie hieß meine erste Lehrerin?",
        "Wie viel Miete zahle ich?",
        "Für welchen Fußballverein ist mein Vater?",
        "Welche Schuhgröße habe ich?",
        "Wo habe ich studiert?",
        "Besitze ich ein Boot?",
        "Wie heißt mein Nachbar?",
        "Bei welcher Bank bin ich?",
        "Wann fährt mein Zug?",
        "Habe ich mir schon einmal einen Knochen gebrochen?",
        "Welche Versicherung habe ich?",
        "Welchen Streamingdienst habe ich abonniert?",
    ),
}
"""Questions about things none of the other language's memories says, by question language."""
