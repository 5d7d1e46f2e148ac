"""The conversations of ``lived_in.py``: six users who lived with an agent for a few sessions.

Hand-written for this benchmark (CC0). Each persona talks over about six sessions (a thread
each, with a date): facts said in passing and in varied phrasing, small talk, help requests,
their own questions, and assistant replies that repeat their words; about five facts change
in a later session (a move, a new job, a new partner, a new car, a diet). The questions are
phrased unlike the statements: answerable ones, ones about things never said, ones asked in
the other language than the memory, and ones about changed facts.

Three personas per half: English, German, and one who mixes both (German and English sentences
in the same sessions). ``HALVES["tune"]`` is for tuning, ``HALVES["held-out"]`` is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("answerable", "never", "cross", "changed")
"""A question's kind: has an answer, was never said, asked in the other language than the
memory, asks for a fact that changed (``markers`` the current, ``old`` the earlier)."""


@dataclass(frozen=True)
class UserTurn:
    """One user message and the assistant's reply."""

    text: str
    reply: str
    facts: tuple[str, ...] = ()
    """The fact sentences an agent with the save tool saves for this turn (row A)."""
    ask: bool = False
    """A question or request of the user's own that holds no fact."""


@dataclass(frozen=True)
class Session:
    """One conversation (one thread), started at ``date`` (ISO, UTC)."""

    date: str
    turns: tuple[UserTurn, ...]


@dataclass(frozen=True)
class Question:
    """A question and the marker strings a returned line must hold (any one, as whole words,
    any case)."""

    text: str
    kind: str
    markers: tuple[str, ...] = ()
    old: tuple[str, ...] = ()


@dataclass(frozen=True)
class Persona:
    user_id: str
    language: str
    """``"en"``, ``"de"`` or ``"mixed"``."""
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]


def say(text: str, reply: str, *facts: str) -> UserTurn:
    """A user turn; with ``facts``, the sentences the saving agent stores."""
    return UserTurn(text, reply, tuple(facts))


def ask(text: str, reply: str) -> UserTurn:
    """The user's own question or request (no fact in it)."""
    return UserTurn(text, reply, ask=True)


def session(date: str, *turns: UserTurn) -> Session:
    return Session(date, turns)


def q(text: str, *markers: str) -> Question:
    return Question(text, "answerable", markers)


def never(text: str) -> Question:
    return Question(text, "never")


def cross(text: str, *markers: str) -> Question:
    return Question(text, "cross", markers)


def changed(text: str, now: str, old: str) -> Question:
    """A question about a fact that changed: ``now`` marks the current, ``old`` the earlier."""
    return Question(text, "changed", (now,), (old,))


# --- tune half ---

MAYA = Persona("maya", "en", (
    session(
        "2026-01-12T21:40",
        say("Hi! I'm Maya. Ugh, long day at St. Luke's again, being a nurse on night shifts is "
            "killing me.",
            "Hi Maya! Night shifts as a nurse at St. Luke's sound exhausting. I hope you get "
            "some proper rest.",
            "Maya works night shifts as a nurse at St. Luke's hospital."),
        say("Can you help me write an email to my landlord? The boiler in my flat in Leeds has "
            "been broken for a week.",
            "Of course. Here's a draft: 'Dear Mr Hughes, the boiler in my flat in Leeds has not "
            "worked for a week. Could you send someone to repair it this week? Kind regards, "
            "Maya'",
            "Maya lives in a flat in Leeds."),
        say("Thanks, that's perfect.", "You're welcome! Good luck with the boiler."),
        say("My daughter Lily turned seven last week and now she wants a sleepover party.",
            "Happy belated birthday to Lily! Seven is a lovely age for a first sleepover.",
            "Maya's daughter Lily is seven years old."),
        ask("Any ideas for games at a sleepover for her and her friends?",
            "Sure: a treasure hunt, a pillow fort contest, glow-stick dancing and a film with "
            "popcorn."),
    ),
    session(
        "2026-01-20T08:15",
        say("Just got back from walking Biscuit in the rain, my beagle refuses to come inside "
            "without a treat.",
            "Ha, Biscuit sounds like a clever beagle who knows how to negotiate!",
            "Maya has a beagle called Biscuit."),
        say("And my Honda Civic wouldn't start this morning, so I had to beg a lift to work.",
            "Oh no, I hope the Civic just needs a new battery.",
            "Maya drives a Honda Civic."),
        say("The pharmacy asked about allergies again. Penicillin gives me hives, so I always "
            "have to flag it.",
            "Good that you flag it: a penicillin allergy is important for every pharmacy to know.",
            "Maya is allergic to penicillin."),
        ask("What's the difference between ibuprofen and paracetamol for a headache?",
            "Paracetamol relieves pain and fever; ibuprofen also reduces inflammation but can "
            "upset the stomach."),
        say("Had cello practice last night, the Bach suite is finally coming together.",
            "Lovely! The Bach cello suites are beautiful, great that it's coming together.",
            "Maya plays the cello."),
        say("Anyway, how's your day going?", "I'm doing well, thanks for asking!"),
    ),
    session(
        "2026-02-03T19:05",
        say("My sister Rachel called from Toronto, she says it's minus twenty over there.",
            "Minus twenty in Toronto! I hope Rachel is staying warm.",
            "Maya's sister Rachel lives in Toronto."),
        say("Tom and I went out for Thai, I always get the green curry, I could eat it every day.",
            "Sounds like a nice evening with Tom. Thai green curry is a great choice.",
            "Maya's partner is Tom.", "Maya's favourite dish is Thai green curry."),
        ask("Can you recommend a good podcast for my commute?",
            "Try 'The Rest Is History' or 'Radiolab', both are great for a commute."),
        say("Training for the Great North half marathon in October, did 12 km this morning.",
            "12 km is a strong run! You'll be ready for the half marathon in October.",
            "Maya is training for a half marathon in October."),
        say("Oh and I'm pescatarian, so fish is fine but no meat in the recipes please.",
            "Noted: fish is fine, no meat.",
            "Maya is pescatarian: she eats fish but no meat."),
        ask("Give me a quick recipe for dinner tonight?",
            "How about a salmon and broccoli traybake: 25 minutes at 200 degrees with lemon "
            "and garlic."),
    ),
    session(
        "2026-02-21T10:30",
        say("Big news, we're moving! We found a house in Manchester, the removal van comes "
            "Saturday.",
            "Congratulations on the move to Manchester! Good luck on Saturday.",
            "Maya has moved to Manchester."),
        say("Oat flat white, extra hot, that's my order at every café.",
            "An extra hot oat flat white, noted!",
            "Maya drinks extra hot oat milk flat whites."),
        say("Mum rang from Cork, she wants us to come over in the summer.",
            "How nice, a summer trip to Cork to see your mum.",
            "Maya's mother lives in Cork, Ireland."),
        ask("What's the best way to pack fragile things for a move?",
            "Wrap each piece in paper, fill the gaps with towels and label the boxes 'fragile'."),
        say("I picked up Duolingo again, Spanish every morning on the bus.",
            "¡Muy bien! Daily Spanish practice on the bus adds up.",
            "Maya is learning Spanish."),
    ),
    session(
        "2026-03-10T20:00",
        say("Tom and I split up last month. I'm seeing someone new now, Daniel, he's a chef.",
            "I'm sorry about Tom, and glad you've met Daniel.",
            "Maya broke up with Tom; her new partner is Daniel, a chef."),
        say("Sold the old Civic and bought a second-hand Toyota Prius, so much cheaper on petrol.",
            "A Prius is a smart choice for saving on petrol.",
            "Maya sold her Honda Civic and now drives a Toyota Prius."),
        say("Daniel talked me into going fully vegan, no more fish for me.",
            "Going vegan is a big step, good luck with it!",
            "Maya is vegan now and no longer eats fish."),
        ask("Can you suggest some vegan protein sources?",
            "Lentils, chickpeas, tofu, tempeh, seitan and edamame are all good vegan protein "
            "sources."),
        say("It's my birthday on the 14th of March, Daniel has booked a table somewhere secret.",
            "How exciting, happy early birthday!",
            "Maya's birthday is on the 14th of March."),
        say("Fleetwood Mac on vinyl with a pot of tea, that's my Sunday ritual.",
            "That sounds like a perfect Sunday.",
            "Maya loves Fleetwood Mac."),
    ),
    session(
        "2026-04-02T17:45",
        say("First week at the new job! I left St. Luke's, I'm the school nurse at Ridgeway "
            "Academy now, no more nights.",
            "Congratulations on the job at Ridgeway Academy, and no more night shifts!",
            "Maya left St. Luke's and now works as the school nurse at Ridgeway Academy."),
        say("Book club tonight, it's every Thursday at the library, we're reading Klara and "
            "the Sun.",
            "Enjoy book club! Klara and the Sun is a great pick.",
            "Maya goes to a book club at the library every Thursday."),
        say("Honestly, coriander tastes like soap to me, I pick it out of everything.",
            "You're not alone, lots of people find coriander soapy.",
            "Maya hates coriander."),
        say("I grew up in Dublin, so the Manchester rain doesn't bother me one bit.",
            "Ha, growing up in Dublin is good training for Manchester weather.",
            "Maya grew up in Dublin."),
        say("Going bouldering with Priya this weekend, she's been my best friend since school.",
            "Have fun bouldering with Priya!",
            "Maya goes bouldering at weekends.", "Priya is Maya's best friend since school."),
        say("My knee still aches from that skiing accident, stairs are the worst.",
            "Sorry to hear that, maybe ask a physio about the knee.",
            "Maya has a bad knee from a skiing accident."),
        say("We're putting money aside for a trip to Japan next spring.",
            "Japan in spring is wonderful, the cherry blossoms!",
            "Maya is saving for a trip to Japan next spring."),
        ask("Could you help me plan a two-week itinerary for that trip?",
            "Sure: Tokyo for four days, Hakone for one, Kyoto for four, Nara for one, Osaka "
            "for two and Hiroshima for two."),
    ),
), (
    q("Do I have kids?", "Lily"),
    q("How old is my little girl?", "seven"),
    q("What sort of animal lives with me?", "Biscuit", "beagle"),
    q("Which medicine must doctors never give me?", "penicillin"),
    q("What instrument do I practise?", "cello"),
    q("Where is my sibling based?", "Toronto"),
    q("What do I usually order at a restaurant?", "green curry"),
    q("When should you wish me many happy returns?", "14th of March"),
    q("What race am I getting ready for?", "half marathon"),
    q("How do I take my coffee?", "flat white", "flat whites"),
    q("Which language am I picking up?", "Spanish"),
    q("Where is my mum?", "Cork"),
    q("Which band's records do I love?", "Fleetwood Mac"),
    q("What do I do on Thursday evenings?", "book club"),
    q("Which herb can't I stand?", "coriander"),
    q("Which city was Maya raised in?", "Dublin"),
    q("Why does my leg hurt on the stairs?", "knee"),
    q("Where am I travelling next year?", "Japan"),
    q("Who is my closest friend?", "Priya"),
    q("What does Maya do for sport at weekends?", "bouldering"),
    never("What's my favourite football team?"),
    never("Which university did I study at?"),
    never("What's my blood type?"),
    never("Do I play any video games?"),
    never("What size shoes do I wear?"),
    cross("Wie heißt mein Hund?", "Biscuit"),
    cross("In welcher Stadt wohnt meine Schwester?", "Toronto"),
    cross("Gegen welches Medikament bin ich allergisch?", "penicillin"),
    cross("Welches Instrument spiele ich?", "cello"),
    changed("Where do I live?", "Manchester", "Leeds"),
    changed("What car do I drive?", "Prius", "Civic"),
    changed("Who is my boyfriend?", "Daniel", "Tom"),
    changed("What do I eat these days, any restrictions?", "vegan", "pescatarian"),
    changed("Where do I work?", "Ridgeway", "night shifts"),
))


JONAS = Persona("jonas", "de", (
    session(
        "2026-01-09T18:20",
        say("Moin, ich bin Jonas. Bin grad von der Schicht bei den Stadtwerken heim, als "
            "Elektriker steht man echt den ganzen Tag im Keller.",
            "Hallo Jonas! Ein ganzer Tag im Keller bei den Stadtwerken klingt anstrengend.",
            "Jonas arbeitet als Elektriker bei den Stadtwerken."),
        ask("Kannst du mir helfen, eine Mail an meinen Vermieter zu schreiben? Die Heizung "
            "tropft seit Tagen.",
            "Klar: 'Sehr geehrter Herr Krause, seit einigen Tagen tropft die Heizung in meiner "
            "Wohnung. Bitte schicken Sie zeitnah jemanden vorbei. Mit freundlichen Grüßen, "
            "Jonas Becker'"),
        say("Die Wohnung in Langendreer ist eh zu klein, seit der Kleine da ist.",
            "Verstehe, mit Kind wird eine Wohnung in Langendreer schnell eng.",
            "Jonas wohnt in einer Wohnung in Bochum-Langendreer."),
        say("Finn ist jetzt vier und redet ohne Punkt und Komma.",
            "Mit vier Jahren haben Kinder so viel zu erzählen!",
            "Jonas hat einen Sohn, Finn, der vier Jahre alt ist."),
        say("Danke dir, bis später!", "Gern, bis später!"),
    ),
    session(
        "2026-01-17T11:00",
        say("Mogli hat heute Nacht wieder die Vorhänge runtergerissen, dieser Kater macht mich "
            "fertig.",
            "Oh je, Mogli scheint ein echter Wirbelwind zu sein!",
            "Jonas hat einen Kater namens Mogli."),
        say("Heute Abend Flutlicht an der Castroper Straße, als VfL-Fan bin ich natürlich "
            "dabei.",
            "Viel Spaß im Stadion, hoffentlich gewinnt der VfL!",
            "Jonas ist Fan des VfL Bochum."),
        ask("Wie lange braucht man mit der Bahn von Bochum nach Köln?",
            "Mit dem RE oder ICE etwa eine Stunde bis eineinhalb Stunden."),
        say("Bei Milch muss ich aufpassen, Laktose verträgt mein Bauch gar nicht.",
            "Dann sind laktosefreie Produkte für dich die sichere Wahl.",
            "Jonas hat eine Laktoseintoleranz."),
        say("Mein alter Passat hat schon wieder die Kupplung durch, das Ding frisst Geld.",
            "Ärgerlich, eine Kupplung am Passat ist teuer.",
            "Jonas fährt einen alten VW Passat."),
    ),
    session(
        "2026-02-02T20:45",
        say("Probe mit den Kellerasseln war super, am Schlagzeug hab ich endlich den "
            "Groove gefunden.",
            "Klasse, wenn es am Schlagzeug läuft! Wie lange spielt ihr schon zusammen als "
            "Kellerasseln?",
            "Jonas spielt Schlagzeug in der Band Die Kellerasseln."),
        say("Seit drei Jahren ungefähr. Anna kommt manchmal mit zu den Auftritten.",
            "Schön, dass Anna euch unterstützt.",
            "Jonas ist mit Anna zusammen."),
        say("Tobias hat aus Hamburg angerufen, mein Bruder kommt an Ostern runter.",
            "Schön, dann siehst du Tobias an Ostern!",
            "Jonas' Bruder Tobias wohnt in Hamburg."),
        ask("Was kann ich mit meinem Bruder in Bochum unternehmen?",
            "Das Bergbau-Museum, ein Spiel im Ruhrstadion, das Bermuda-Dreieck am Abend oder "
            "eine Radtour am Kemnader See."),
        say("Ohne Currywurst mit Pommes geht bei mir kein Wochenende, Fleisch muss sein.",
            "Currywurst mit Pommes ist ein Klassiker!",
            "Jonas isst gern Fleisch, vor allem Currywurst."),
    ),
    session(
        "2026-02-24T07:30",
        say("Ich büffle jeden Abend für die Meisterprüfung im Juni, das Fachrechnen ist "
            "brutal.",
            "Viel Erfolg bei der Meisterprüfung im Juni, Fachrechnen schaffst du!",
            "Jonas lernt für die Meisterprüfung im Juni."),
        say("Meine Mutter ist jetzt in Rente und hat in Dortmund endlich Zeit für ihren "
            "Garten.",
            "Wie schön, dann kann sie sich in Dortmund ganz dem Garten widmen.",
            "Jonas' Mutter ist in Rente und wohnt in Dortmund."),
        say("Kaffee trinke ich schwarz, ohne Zucker, alles andere ist Verschwendung.",
            "Schwarz und ohne Zucker, ganz puristisch.",
            "Jonas trinkt seinen Kaffee schwarz ohne Zucker."),
        ask("Kannst du mir drei Formeln zur Leitungsberechnung erklären?",
            "Gern: Spannungsfall, Leitungswiderstand und Strombelastbarkeit. Fang mit dem "
            "Spannungsfall an."),
        say("Am dritten August werde ich 35, da wird gegrillt.",
            "Dann schon mal vorab alles Gute zum 35.!",
            "Jonas hat am 3. August Geburtstag."),
        say("Wie spät ist es eigentlich bei dir?", "Ich habe keine Uhr, aber ich bin da, "
            "wann immer du mich brauchst."),
    ),
    session(
        "2026-03-14T16:10",
        say("Anna und ich haben uns getrennt. Ich bin jetzt mit Selin zusammen, wir kennen "
            "uns aus der Band.",
            "Das mit Anna tut mir leid, schön, dass du mit Selin glücklich bist.",
            "Jonas hat sich von Anna getrennt und ist jetzt mit Selin zusammen."),
        say("Wir ziehen zusammen nach Münster, der Mietvertrag ist unterschrieben.",
            "Glückwunsch zum Umzug nach Münster!",
            "Jonas zieht mit Selin nach Münster."),
        say("Selin kocht vegetarisch und ich hab gemerkt, mir fehlt nix. Ich bin jetzt "
            "Vegetarier, auch keine Currywurst mehr.",
            "Respekt, als Vegetarier ganz ohne Currywurst!",
            "Jonas ist jetzt Vegetarier."),
        ask("Hast du ein Rezept für ein schnelles vegetarisches Chili?",
            "Ja: Zwiebeln, Paprika, Kidneybohnen, Mais, Tomaten, Kreuzkümmel und Chili, 30 "
            "Minuten köcheln lassen."),
        say("Den Passat hab ich verkauft, jetzt steht ein gebrauchter Skoda Octavia Kombi vor "
            "der Tür.",
            "Ein Octavia Kombi ist praktisch für den Umzug!",
            "Jonas fährt jetzt einen Skoda Octavia statt des Passats."),
        say("Finn geht jetzt in die Kita Sonnenschein, da hat er schon zwei Freunde.",
            "Wie schön, dass Finn sich in der Kita Sonnenschein wohlfühlt.",
            "Finn geht in die Kita Sonnenschein."),
    ),
    session(
        "2026-04-06T09:00",
        say("Meisterbrief in der Tasche! Ich hab bei den Stadtwerken gekündigt und mache mich "
            "selbstständig mit Becker Elektrotechnik.",
            "Herzlichen Glückwunsch zum Meisterbrief und zur eigenen Firma!",
            "Jonas hat bei den Stadtwerken gekündigt und ist jetzt selbstständig mit Becker "
            "Elektrotechnik."),
        say("Auf Leitern geht's, aber aufs Dach steig ich nicht, ich hab furchtbare "
            "Höhenangst.",
            "Dann übernimmt jemand anderes die Arbeiten auf dem Dach.",
            "Jonas hat Höhenangst."),
        say("Sonntags gibt's bei Oma Rouladen mit Rotkohl, da sag ich nie nein.",
            "Rouladen mit Rotkohl bei Oma klingen herrlich.",
            "Jonas' Lieblingsessen sind Omas Rouladen."),
        say("Diesen Sommer geht's wieder mit dem Zelt an die Ostsee, wie jedes Jahr.",
            "Camping an der Ostsee ist toll!",
            "Jonas fährt jeden Sommer zum Campen an die Ostsee."),
        say("Samstags sitze ich frühmorgens mit Kemal am Wasser und wir angeln, er ist seit "
            "der Schule mein bester Kumpel.",
            "Klingt entspannt, viel Petri Heil euch!",
            "Jonas geht samstags mit Kemal angeln.", "Kemal ist Jonas' bester Freund."),
        say("Der Bandscheibenvorfall vom letzten Jahr meldet sich wieder, vor allem nach "
            "langen Tagen.",
            "Gute Besserung, vielleicht hilft Physiotherapie.",
            "Jonas hatte einen Bandscheibenvorfall."),
        say("Abends lese ich zum Runterkommen, am liebsten alles von Sebastian Fitzek.",
            "Fitzek ist perfekt, wenn man Spannung mag.",
            "Jonas liest gern Krimis von Sebastian Fitzek."),
        ask("Welche Versicherungen brauche ich als Selbstständiger?",
            "Betriebshaftpflicht, Krankenversicherung, Berufsunfähigkeit und eventuell eine "
            "Inhaltsversicherung für Werkzeug."),
    ),
), (
    q("Habe ich Kinder?", "Finn"),
    q("Wie alt ist mein Junge?", "vier"),
    q("Was für ein Haustier lebt bei mir?", "Mogli"),
    q("Für welchen Verein schlägt mein Herz?", "VfL"),
    q("Was vertrage ich nicht?", "Laktose", "Laktoseintoleranz"),
    q("Welches Instrument spiele ich?", "Schlagzeug"),
    q("In welcher Stadt lebt mein Bruder?", "Hamburg"),
    q("Wann feiere ich meinen Ehrentag?", "dritten August", "3. August"),
    q("Wovor fürchte ich mich?", "Höhenangst"),
    q("Was ist mein Leibgericht?", "Rouladen"),
    q("Welche Prüfung hatte ich vor mir?", "Meisterprüfung"),
    q("Wo ist meine Mama zu Hause?", "Dortmund"),
    q("Wo mache ich im Sommer Urlaub?", "Ostsee"),
    q("Was ist Jonas' Hobby am Wochenende?", "angeln"),
    q("Wie mag ich meinen Kaffee?", "schwarz"),
    q("Wer ist mein engster Freund?", "Kemal"),
    q("Warum schmerzt mein Kreuz?", "Bandscheibenvorfall"),
    q("Welchen Schriftsteller lese ich am liebsten?", "Fitzek"),
    q("Wie heißt meine Musikgruppe?", "Kellerasseln"),
    q("In welche Betreuung geht mein Sohn?", "Sonnenschein"),
    never("Welche Blutgruppe habe ich?"),
    never("Wie heißt meine Patentante?"),
    never("Spiele ich Tennis?"),
    never("Welche Schuhgröße habe ich?"),
    never("An welcher Uni habe ich studiert?"),
    cross("What is my cat called?", "Mogli"),
    cross("Which football club do I support?", "VfL"),
    cross("What instrument do I play?", "Schlagzeug"),
    cross("Where does my brother live?", "Hamburg"),
    changed("Wo wohne ich?", "Münster", "Langendreer"),
    changed("Welches Auto fahre ich?", "Octavia", "Passat"),
    changed("Mit wem bin ich zusammen?", "Selin", "Anna"),
    changed("Wie ernähre ich mich inzwischen?", "Vegetarier", "Currywurst"),
    changed("Wo arbeite ich?", "Becker Elektrotechnik", "Stadtwerken"),
))


LENA = Persona("lena", "mixed", (
    session(
        "2026-01-14T19:00",
        say("Hey, I'm Lena. Just home from Spotify, I design the UX for the podcast player there "
            "and today was all meetings.",
            "Hi Lena! A day full of meetings at Spotify is tiring, even for a UX designer.",
            "Lena works as a UX designer at Spotify."),
        say("Meine Wohnung in Camden ist winzig, aber ich liebe den Markt um die Ecke.",
            "Camden hat wirklich einen tollen Markt!",
            "Lena wohnt in einer kleinen Wohnung in Camden."),
        say("Pixel, my greyhound, sleeps about twenty hours a day, it's hilarious.",
            "Greyhounds really are champion sleepers, Pixel sounds adorable.",
            "Lena has a greyhound called Pixel."),
        ask("Kannst du mir helfen, eine Absage für ein Meeting auf Englisch zu formulieren?",
            "Klar: 'Hi all, unfortunately I can't make Thursday's meeting. Could we move it to "
            "next week? Thanks, Lena'"),
        say("Perfekt, danke!", "Gern geschehen!"),
    ),
    session(
        "2026-01-22T12:30",
        say("Oliver und ich waren gestern im Kino, er wollte unbedingt den neuen Nolan sehen.",
            "Klingt nach einem schönen Abend mit Oliver.",
            "Lena ist mit Oliver zusammen."),
        say("I'm doing keto at the moment, so no bread, no pasta, nothing fun.",
            "Keto is strict, good luck sticking with it!",
            "Lena is on a keto diet."),
        say("Und Gluten geht bei mir sowieso nicht, ich habe Zöliakie.",
            "Mit Zöliakie muss man wirklich aufpassen.",
            "Lena hat Zöliakie und verträgt kein Gluten."),
        ask("What's a good keto lunch I can take to the office?",
            "Try a big salad with chicken, avocado, eggs and olive oil, or cauliflower rice "
            "with salmon."),
        say("Padel on Tuesdays is the only exercise I actually enjoy.",
            "Padel is great fun, nice that you found something you enjoy.",
            "Lena plays padel every Tuesday."),
    ),
    session(
        "2026-02-05T21:15",
        say("Clara hat angerufen, meine Schwester arbeitet jetzt als Ärztin in der Uniklinik "
            "Freiburg.",
            "Toll für Clara, Ärztin in Freiburg ist ein großer Schritt!",
            "Lenas Schwester Clara ist Ärztin in Freiburg."),
        say("Meine Eltern in Stuttgart wollen uns im März besuchen.",
            "Schön, Besuch aus Stuttgart im März!",
            "Lenas Eltern wohnen in Stuttgart."),
        ask("What should I show my parents in London, they've never been?",
            "The South Bank walk, Borough Market, a West End show and Kew Gardens are always "
            "a hit."),
        say("My bike got nicked again, the old Raleigh, second time this year.",
            "Oh no, losing the Raleigh again is so annoying.",
            "Lena rides an old Raleigh bike."),
        say("Binge-watching Succession again, I know every line by now.",
            "Succession rewards rewatching!",
            "Lena's favourite TV series is Succession."),
    ),
    session(
        "2026-02-19T08:40",
        say("Japanese lessons on Wednesday evenings are kicking my butt, kanji is hard.",
            "Kanji takes time, keep going with the Japanese lessons!",
            "Lena takes Japanese lessons on Wednesday evenings."),
        say("Bei Katzen muss ich leider sofort niesen, deshalb kann ich nie zu Hannah.",
            "Eine Katzenallergie ist lästig.",
            "Lena ist allergisch gegen Katzen."),
        say("Hannah's been my best friend since uni, we talk every day.",
            "It's lovely to have a friend like Hannah.",
            "Hannah is Lena's best friend since university."),
        say("Im Café nehme ich immer einen Chai Latte mit Hafermilch.",
            "Chai Latte mit Hafermilch, lecker!",
            "Lena trinkt am liebsten Chai Latte mit Hafermilch."),
        ask("Wie bekomme ich Kalkflecken aus der Dusche?",
            "Essig oder Zitronensäure auftragen, 15 Minuten einwirken lassen und abspülen."),
        say("Saturday mornings I volunteer at the food bank in Kentish Town.",
            "That's a wonderful way to spend a Saturday.",
            "Lena volunteers at a food bank on Saturday mornings."),
    ),
    session(
        "2026-03-12T18:00",
        say("Oliver und ich haben Schluss gemacht. Ich date jetzt Marco, er ist Italiener und "
            "kocht wie ein Gott.",
            "Das mit Oliver tut mir leid, schön, dass du Marco kennengelernt hast.",
            "Lena hat sich von Oliver getrennt und ist jetzt mit Marco zusammen."),
        say("We finally moved out of Camden, we've got a two-bed in Hackney now.",
            "Congratulations on the new place in Hackney!",
            "Lena has moved to Hackney."),
        say("Keto ist vorbei, ich mache jetzt Intervallfasten 16:8, das passt besser zu Marcos "
            "Pasta.",
            "Intervallfasten ist flexibler, klingt gut.",
            "Lena macht jetzt Intervallfasten statt Keto."),
        say("Bought a folding Brompton to replace the stolen Raleigh, it comes inside with me.",
            "A Brompton is thief-proof if it lives indoors!",
            "Lena now rides a Brompton folding bike."),
        ask("Any tips for a first dinner with his family?",
            "Bring something small, compliment the food, ask about family stories and don't "
            "refuse seconds."),
    ),
    session(
        "2026-04-08T20:20",
        say("I handed in my notice at Spotify, I'm starting at Monzo next week as lead designer.",
            "Big move! Congratulations on the lead designer role at Monzo.",
            "Lena left Spotify and is now lead designer at Monzo."),
        say("Aufgewachsen bin ich am Bodensee, das Wasser fehlt mir hier manchmal.",
            "Der Bodensee ist wunderschön, verständlich, dass er dir fehlt.",
            "Lena ist am Bodensee aufgewachsen."),
        say("My birthday's on the 2nd of November, Marco already hinted at a trip.",
            "How exciting, a birthday trip!",
            "Lena's birthday is on the 2nd of November."),
        say("Vor Spinnen ekle ich mich total, Marco muss die immer rausbringen.",
            "Gut, dass Marco da ist!",
            "Lena ekelt sich vor Spinnen."),
        say("I've got forty houseplants now, the monstera is my pride and joy.",
            "Forty plants, that's a jungle! Monsteras are gorgeous.",
            "Lena has forty houseplants and loves her monstera most."),
        say("Ich habe mir einen kleinen Wal aufs Handgelenk tätowieren lassen.",
            "Ein Wal-Tattoo, wie schön!",
            "Lena hat ein Wal-Tattoo am Handgelenk."),
        say("We're putting money aside every month for a deposit on a flat.",
            "Saving for a deposit takes discipline, good on you.",
            "Lena is saving for a deposit on a flat."),
        ask("Can you make me a simple monthly savings plan?",
            "Sure: 50% needs, 20% savings straight into a separate account on payday, 30% "
            "wants; review it every month."),
    ),
), (
    q("What kind of animal do I have at home?", "Pixel", "greyhound"),
    q("Was macht meine Schwester beruflich?", "Ärztin"),
    q("Which racket sport do I do?", "padel"),
    q("Wo leben meine Eltern?", "Stuttgart"),
    q("Which month do I get a year older?", "November"),
    q("Which TV drama am I hooked on?", "Succession"),
    q("What language am I studying?", "Japanese"),
    q("Gegen welche Tiere reagiere ich allergisch?", "Katzen"),
    q("How do I spend my weekend mornings?", "food bank"),
    q("Was bestelle ich im Café?", "Chai"),
    q("Wo bin ich groß geworden?", "Bodensee"),
    q("Who is my closest friend?", "Hannah"),
    q("Wovor graust es mir?", "Spinnen"),
    q("Which green thing in my home do I love most?", "monstera"),
    q("Was ist auf meiner Haut verewigt?", "Wal"),
    q("What is Lena putting money aside for?", "deposit"),
    q("Welche Krankheit habe ich?", "Zöliakie"),
    q("Wie heißt meine Schwester?", "Clara"),
    q("How many pot plants do I own?", "forty"),
    q("What breed is my dog?", "greyhound"),
    never("What's my blood type?"),
    never("Spiele ich ein Instrument?"),
    never("Which football team do I support?"),
    never("Wie heißt meine Chefin?"),
    never("Have I ever been to Australia?"),
    cross("Where do my parents live?", "Stuttgart"),
    cross("What does my sister do for a living?", "Ärztin"),
    cross("Wie heißt mein Hund?", "Pixel"),
    cross("Welche Sprache lerne ich gerade?", "Japanese"),
    changed("Where do I live now?", "Hackney", "Camden"),
    changed("Mit wem bin ich zusammen?", "Marco", "Oliver"),
    changed("Was für ein Fahrrad fahre ich?", "Brompton", "Raleigh"),
    changed("Where do I work?", "Monzo", "Spotify"),
    changed("Welche Ernährungsform mache ich gerade?", "Intervallfasten", "keto"),
))



# --- held-out half ---

ETHAN = Persona("ethan", "en", (
    session(
        "2026-01-08T16:50",
        say("Evening! Ethan here. Just finished marking thirty essays on the Tudors, teaching "
            "history at Cotham School is relentless in January.",
            "Hi Ethan! Thirty essays on the Tudors is a lot, Cotham's history department keeps "
            "you busy.",
            "Ethan teaches history at Cotham School."),
        say("Oscar's three now and he's decided bedtime is optional.",
            "Three-year-olds are experts at negotiating bedtime!",
            "Ethan has a son, Oscar, who is three."),
        ask("Could you write a short note to the nursery saying Oscar will be off on Friday?",
            "Of course: 'Dear nursery team, Oscar will be absent this Friday for a family "
            "appointment. Thank you, Ethan'"),
        say("Cheers, that works.", "Glad to help!"),
        say("Our flat in Bedminster has a damp problem again, the bathroom ceiling is black.",
            "Damp in the bathroom is nasty, worth reporting it to the landlord.",
            "Ethan lives in a flat in Bedminster, Bristol."),
    ),
    session(
        "2026-01-18T10:10",
        say("Pudding knocked a mug off the table at 5 am, that cat wants breakfast early.",
            "Ha, Pudding sounds like a very punctual cat.",
            "Ethan has a cat called Pudding."),
        say("Cheddar on everything, honestly, I'm a cheese man through and through.",
            "A true cheddar fan!",
            "Ethan loves cheese, especially cheddar."),
        say("The Fiesta failed its MOT, the brakes need doing.",
            "Sorry to hear that, hopefully the Fiesta's brakes aren't too pricey.",
            "Ethan drives a Ford Fiesta."),
        ask("How do I explain the causes of the First World War to Year 9 in one lesson?",
            "Use MAIN: militarism, alliances, imperialism, nationalism, with the assassination "
            "in Sarajevo as the spark."),
        say("Five-a-side on Wednesday nights keeps me sane, even if my passing is rubbish.",
            "Five-a-side is a great outlet!",
            "Ethan plays five-a-side football on Wednesday nights."),
    ),
    session(
        "2026-02-01T19:30",
        say("Rovers lost again at the Mem, I don't know why I put myself through it.",
            "Being a Rovers fan takes dedication!",
            "Ethan supports Bristol Rovers."),
        say("Forgot my inhaler on the run this morning, the asthma is worse in the cold.",
            "Cold air can trigger asthma, keep the inhaler with you.",
            "Ethan has asthma and uses an inhaler."),
        say("Chloe and I are cooking lamb tagine tonight, it's my favourite thing to eat.",
            "Lamb tagine sounds delicious, enjoy the evening with Chloe.",
            "Ethan's girlfriend is Chloe.", "Ethan's favourite food is lamb tagine."),
        ask("What can I serve with a tagine besides couscous?",
            "Flatbread, a herby bulgur salad, roasted carrots or a yoghurt and mint dip."),
        say("Kieran's ship is docked in Plymouth for a month, my brother's been in the navy "
            "ten years now.",
            "Nice that Kieran is close for a month, ten years in the navy is impressive.",
            "Ethan's brother Kieran serves in the navy, based in Plymouth."),
    ),
    session(
        "2026-02-20T21:00",
        say("Friday games night again, Catan got properly heated this time.",
            "Catan brings out everyone's competitive side!",
            "Ethan hosts games night on Fridays and loves playing Catan."),
        say("I've started learning the ukulele from YouTube, my fingers hurt.",
            "Sore fingers are normal at the start, keep going with the ukulele.",
            "Ethan is learning the ukulele."),
        say("Dad called from Swansea, he wants to come for Easter.",
            "Lovely, Easter with your dad!",
            "Ethan's father lives in Swansea."),
        ask("What's the fastest train route from Bristol to Swansea?",
            "The direct GWR train via Cardiff takes about an hour and a half."),
        say("I never fly, planes terrify me, so it's trains everywhere.",
            "Trains are a calmer way to travel anyway.",
            "Ethan is afraid of flying and travels by train."),
        say("Builder's tea with two sugars, don't judge me.",
            "No judgement, a proper cuppa!",
            "Ethan drinks strong tea with two sugars."),
    ),
    session(
        "2026-03-15T13:20",
        say("Chloe and I broke up in February. I've been seeing Jess for a few weeks, she's a "
            "midwife.",
            "Sorry about Chloe, and it's nice you met Jess.",
            "Ethan broke up with Chloe and is now seeing Jess, a midwife."),
        say("We're leaving Bedminster, we've signed for a terrace in Bath.",
            "Exciting, congratulations on the house in Bath!",
            "Ethan is moving to Bath."),
        say("Scrapped the Fiesta and got a used Nissan Leaf, charging it at home is so cheap.",
            "A Leaf will save you a lot on fuel.",
            "Ethan sold his Ford Fiesta and now drives a Nissan Leaf."),
        say("The GP says I'm lactose intolerant, so I'm dairy-free now, goodbye cheddar.",
            "That's a big change for a cheese lover, but there are good dairy-free options.",
            "Ethan is lactose intolerant and dairy-free now."),
        ask("Which dairy-free cheese actually tastes decent?",
            "Many people like the cashew-based ones, or a vegan cheddar for melting."),
        say("Marcus is my oldest mate, he's helping us move on Saturday.",
            "Good friends who help with moving are rare!",
            "Marcus is Ethan's oldest friend."),
    ),
    session(
        "2026-04-10T17:00",
        say("Big change: I've left Cotham and started as a curator at M Shed, no more "
            "marking!",
            "Congratulations on the curator job at M Shed!",
            "Ethan left teaching at Cotham School and is now a curator at M Shed."),
        say("My birthday's on the 30th of June, Jess wants to do a surprise.",
            "A surprise birthday, how fun!",
            "Ethan's birthday is on the 30th of June."),
        say("Reading Pratchett again before bed, the Discworld never gets old.",
            "Discworld is perfect bedtime reading.",
            "Ethan is a Terry Pratchett fan."),
        say("I grew up in Newcastle, so the West Country still feels soft to me.",
            "Ha, after Newcastle winters the West Country must feel mild.",
            "Ethan grew up in Newcastle."),
        say("In August I'm walking the Pennine Way with Marcus, all 268 miles.",
            "What an adventure! Good luck on the Pennine Way.",
            "Ethan is walking the Pennine Way in August."),
        ask("What should I pack for a three-week hike?",
            "Light tent, sleeping bag, waterproofs, two pairs of boots socks, a first-aid kit, "
            "a map and a power bank."),
    ),
), (
    q("Am I a parent?", "Oscar"),
    q("How old is my boy?", "three"),
    q("What's the name of the animal that lives with me?", "Pudding"),
    q("What sport do I do midweek?", "five-a-side"),
    q("Which team do I follow?", "Rovers"),
    q("What breathing problem do I have?", "asthma"),
    q("What does my sibling do for a job?", "navy"),
    q("When do I turn a year older?", "30th of June"),
    q("Which dish do I like best?", "tagine"),
    q("What do we play around the table on Fridays?", "Catan"),
    q("Which instrument am I learning?", "ukulele"),
    q("Where's my father?", "Swansea"),
    q("Why don't I take planes?", "flying", "fly"),
    q("How do I like my brew?", "two sugars"),
    q("Who is Ethan's best mate?", "Marcus"),
    q("Who's my favourite writer?", "Pratchett"),
    q("Which city was I brought up in?", "Newcastle"),
    q("What long walk am I planning?", "Pennine Way"),
    q("Do I have a brother?", "Kieran"),
    q("Where is my brother stationed?", "Plymouth"),
    never("Do I speak French?"),
    never("What's my mother's name?"),
    never("Have I ever run a marathon?"),
    never("What's my favourite colour?"),
    never("Do I own a motorbike?"),
    cross("Wie heißt meine Katze?", "Pudding"),
    cross("Welchen Fußballverein unterstütze ich?", "Rovers"),
    cross("Welches Instrument lerne ich?", "ukulele"),
    cross("Wo wohnt mein Vater?", "Swansea"),
    changed("Where's home for me now?", "Bath", "Bedminster"),
    changed("What do I drive?", "Leaf", "Fiesta"),
    changed("Who is my girlfriend?", "Jess", "Chloe"),
    changed("Do I eat cheese?", "dairy-free", "Cheddar on everything"),
    changed("What's my job?", "M Shed", "Cotham"),
))

SABINE = Persona("sabine", "de", (
    session(
        "2026-01-10T20:10",
        say("Hallo, ich bin Sabine. Heute wieder bis acht in der Kanzlei Hartmann gesessen, "
            "Steuerberaterin im Januar heißt Überstunden.",
            "Hallo Sabine! Im Januar ist in der Kanzlei Hartmann sicher viel los.",
            "Sabine arbeitet als Steuerberaterin in der Kanzlei Hartmann."),
        say("Frank hat gekocht, als ich heimkam, mein Mann ist ein Schatz.",
            "Wie schön, dass Frank dich mit Essen empfangen hat!",
            "Sabine ist mit Frank verheiratet."),
        ask("Kannst du mir einen Text für die Abwesenheitsnotiz schreiben?",
            "Gern: 'Vielen Dank für Ihre Nachricht. Ich bin bis zum 20. Januar nicht im Büro "
            "und antworte danach. Mit freundlichen Grüßen, Sabine Wolf'"),
        say("Paula hat angerufen, sie ist mitten in den Prüfungen, Medizin in Jena ist kein "
            "Zuckerschlecken.",
            "Medizin in Jena ist anspruchsvoll, viel Kraft für Paula!",
            "Sabines Tochter Paula studiert Medizin in Jena."),
        say("Unsere Altbauwohnung in Gohlis ist nachts so schön ruhig.",
            "Gohlis ist ein schönes Viertel.",
            "Sabine wohnt in einer Altbauwohnung in Leipzig-Gohlis."),
    ),
    session(
        "2026-01-21T07:45",
        say("Fritzi hat beim Gassigehen wieder jede Taube gejagt, typisch Dackel.",
            "Dackel haben eben Jagdinstinkt, Fritzi ist ganz in ihrem Element.",
            "Sabine hat eine Dackelhündin namens Fritzi."),
        say("Mein roter Fiat springt bei Frost nicht an, ich musste die Bahn nehmen.",
            "Ärgerlich! Vielleicht braucht der Fiat eine neue Batterie.",
            "Sabine fährt einen roten Fiat 500."),
        say("Freitags gibt es bei uns immer Fisch, meistens Lachs aus dem Ofen.",
            "Lachs aus dem Ofen ist lecker und einfach.",
            "Sabine isst gern Fisch, freitags gibt es immer Lachs."),
        ask("Wie lange ist die Abgabefrist für die Steuererklärung mit Berater?",
            "Mit Steuerberater verlängert sich die Frist in der Regel bis Ende Februar des "
            "übernächsten Jahres."),
        say("Donnerstag ist Chorprobe in der Thomaskirche, wir üben das Weihnachtsoratorium "
            "für nächstes Jahr.",
            "Wie schön, im Chor das Weihnachtsoratorium zu singen!",
            "Sabine singt im Kirchenchor der Thomaskirche."),
    ),
    session(
        "2026-02-04T18:30",
        say("Im Frühjahr bin ich wegen Heuschnupfen immer völlig verquollen, ich graue mich "
            "jetzt schon.",
            "Heuschnupfen ist wirklich lästig, vielleicht hilft eine Hyposensibilisierung.",
            "Sabine hat Heuschnupfen."),
        say("Mittwochs gehe ich zum Töpfern, letzte Woche ist mir endlich eine Schale "
            "gelungen.",
            "Glückwunsch zur ersten gelungenen Schale!",
            "Sabine töpfert mittwochs."),
        say("Ulrike hat aus Wien geschrieben, meine Schwester lädt uns zum Opernball ein.",
            "Ein Opernball in Wien, wie aufregend!",
            "Sabines Schwester Ulrike lebt in Wien."),
        ask("Was zieht man zum Wiener Opernball an?",
            "Für Damen ein bodenlanges Abendkleid, für Herren Frack mit weißer Fliege."),
        say("Meine Königsberger Klopse sind legendär, das Rezept ist von meiner Oma.",
            "Königsberger Klopse nach Omas Rezept klingen wunderbar.",
            "Sabines Lieblingsgericht sind Königsberger Klopse."),
    ),
    session(
        "2026-02-26T21:05",
        say("Ich hatte wieder einen Migräneanfall, den ganzen Nachmittag im dunklen Zimmer.",
            "Das tut mir leid, Migräne ist furchtbar.",
            "Sabine leidet unter Migräne."),
        say("Morgens trinke ich nur grünen Tee, Kaffee bekommt mir nicht.",
            "Grüner Tee ist ein sanfter Start in den Tag.",
            "Sabine trinkt morgens grünen Tee statt Kaffee."),
        say("Birgit und ich kennen uns seit dem Studium, wir telefonieren jeden Sonntag.",
            "Eine Freundschaft seit dem Studium ist etwas Besonderes.",
            "Birgit ist Sabines älteste Freundin aus dem Studium."),
        say("Ich lese gerade das neue Buch von Juli Zeh, ich mag alles von ihr.",
            "Juli Zeh schreibt großartig.",
            "Sabine liest gern Romane von Juli Zeh."),
        ask("Kannst du mir ein ähnliches Buch empfehlen?",
            "Vielleicht 'Mittagsstunde' von Dörte Hansen oder 'Die Vermessung der Welt' von "
            "Daniel Kehlmann."),
        say("Am Wochenende war ich bei Papa im Pflegeheim in Halle, er baut langsam ab.",
            "Das ist schwer, schön, dass du ihn in Halle besuchst.",
            "Sabines Vater lebt in einem Pflegeheim in Halle."),
    ),
    session(
        "2026-03-18T19:15",
        say("Frank und ich lassen uns scheiden. Ich bin jetzt mit Jürgen zusammen, wir haben "
            "uns im Chor kennengelernt.",
            "Eine Scheidung ist schwer, schön, dass du Jürgen gefunden hast.",
            "Sabine lässt sich von Frank scheiden und ist jetzt mit Jürgen zusammen."),
        say("Ich ziehe zu Jürgen nach Dresden, die Wohnung in Gohlis gebe ich auf.",
            "Ein Neuanfang in Dresden, viel Glück!",
            "Sabine zieht nach Dresden."),
        say("Jürgen lebt vegan und ich mache jetzt mit, also auch kein Fisch mehr am Freitag.",
            "Spannend, vegan zu leben ist eine große Umstellung.",
            "Sabine ernährt sich jetzt vegan."),
        say("Den Fiat habe ich verkauft, ich fahre jetzt einen gebrauchten VW ID.3.",
            "Ein ID.3 ist ein gutes Elektroauto für die Stadt.",
            "Sabine fährt jetzt einen VW ID.3 statt des Fiats."),
        ask("Wo kann ich in Dresden ein E-Auto laden?",
            "Die Stadtwerke DREWAG betreiben viele Ladesäulen, dazu Supermärkte und Parkhäuser."),
    ),
    session(
        "2026-04-12T10:30",
        say("Ich habe bei Hartmann gekündigt und eröffne in Dresden meine eigene Kanzlei.",
            "Herzlichen Glückwunsch zur eigenen Kanzlei!",
            "Sabine hat bei der Kanzlei Hartmann gekündigt und hat jetzt eine eigene Kanzlei "
            "in Dresden."),
        say("In Aufzügen bekomme ich Platzangst, ich nehme immer die Treppe.",
            "Die Treppe ist ja auch gesund.",
            "Sabine hat Platzangst in Aufzügen."),
        say("Seit Februar lerne ich Italienisch an der Volkshochschule, für die Toskana.",
            "Bravissima! Italienisch ist eine schöne Sprache.",
            "Sabine lernt Italienisch an der Volkshochschule."),
        say("Im Sommer geht es wie jedes Jahr zum Wandern nach Südtirol.",
            "Südtirol ist perfekt zum Wandern!",
            "Sabine wandert jeden Sommer in Südtirol."),
        say("Aufgewachsen bin ich in Rostock, die Ostsee vermisse ich in Sachsen.",
            "Verständlich, als Rostockerin fehlt einem das Meer.",
            "Sabine ist in Rostock aufgewachsen."),
        say("Mein Geburtstag ist am 12. Dezember, da feiern wir immer mit Glühwein.",
            "Glühwein zum Geburtstag, wie passend!",
            "Sabine hat am 12. Dezember Geburtstag."),
        ask("Wie melde ich ein Gewerbe in Dresden an?",
            "Als Steuerberaterin brauchst du kein Gewerbe: Du meldest dich bei der "
            "Steuerberaterkammer und beim Finanzamt."),
    ),
), (
    q("Habe ich Nachwuchs?", "Paula"),
    q("Was studiert meine Tochter?", "Medizin"),
    q("Welches Tier gehört zu mir?", "Fritzi", "Dackel"),
    q("Wo singe ich mit?", "Chor", "Kirchenchor", "Chorprobe"),
    q("Was plagt mich im Frühling?", "Heuschnupfen"),
    q("Welches Handwerk betreibe ich in meiner Freizeit?", "Töpfern", "töpfert"),
    q("Wo lebt meine Schwester?", "Wien"),
    q("Wann habe ich Geburtstag?", "12. Dezember"),
    q("Welches Gericht koche ich am besten?", "Klopse"),
    q("Wohin fahre ich jedes Jahr in die Berge?", "Südtirol"),
    q("Warum muss ich mich manchmal ins Dunkle legen?", "Migräne", "Migräneanfall"),
    q("Was trinke ich zum Frühstück?", "grünen Tee"),
    q("Wer ist Sabines älteste Freundin?", "Birgit"),
    q("Welche Autorin mag ich?", "Juli Zeh"),
    q("Wo ist mein Vater untergebracht?", "Halle"),
    q("Warum nehme ich nie den Lift?", "Platzangst"),
    q("Welche Fremdsprache lerne ich?", "Italienisch"),
    q("Woher stamme ich ursprünglich?", "Rostock"),
    q("In welcher Stadt studiert meine Tochter?", "Jena"),
    q("Welche Rasse hat mein Hund?", "Dackel"),
    never("Spiele ich Golf?"),
    never("Welche Partei wähle ich?"),
    never("Wie heißt mein Zahnarzt?"),
    never("Bin ich schon mal einen Marathon gelaufen?"),
    never("Welches Handy habe ich?"),
    cross("What's my dog called?", "Fritzi"),
    cross("Where does my sister live?", "Wien"),
    cross("Which language am I learning?", "Italienisch"),
    cross("What does my daughter study?", "Medizin"),
    changed("Wo wohne ich?", "Dresden", "Gohlis"),
    changed("Wer ist mein Partner?", "Jürgen", "Frank"),
    changed("Was fahre ich für ein Auto?", "ID.3", "Fiat"),
    changed("Esse ich tierische Produkte?", "vegan", "Lachs"),
    changed("Wo arbeite ich?", "eigene Kanzlei", "Kanzlei Hartmann"),
))


TAREK = Persona("tarek", "mixed", (
    session(
        "2026-01-11T22:00",
        say("Hi, I'm Tarek. Long day at N26, I'm a backend engineer there and the payments "
            "service fell over twice.",
            "Hi Tarek! Two outages in the payments service at N26 sounds like a rough day.",
            "Tarek works as a backend engineer at N26."),
        say("Meine WG in Neukölln ist laut, aber die Miete ist unschlagbar.",
            "Neukölln ist lebendig, und eine günstige Miete ist viel wert.",
            "Tarek wohnt in einer WG in Neukölln."),
        ask("Can you help me write a post-mortem summary for the outage?",
            "Sure: what happened, the impact, the timeline, the root cause, what we fix and "
            "who owns each action."),
        say("Thanks man!", "Anytime!"),
        say("Simba, my cat, slept on my keyboard all through the incident call.",
            "Simba clearly wanted to help with the incident!",
            "Tarek has a cat called Simba."),
    ),
    session(
        "2026-01-25T14:00",
        say("Sophie and I went to the Berghain queue and didn't get in, classic.",
            "Ha, a Berlin rite of passage, at least you had Sophie with you.",
            "Tarek's girlfriend is Sophie."),
        say("Mit der Vespa bin ich in zehn Minuten im Büro, im Winter ist das aber eisig.",
            "Im Winter auf der Vespa ist wirklich kalt, zieh dich warm an.",
            "Tarek fährt eine Vespa."),
        say("Döner esse ich mindestens zweimal die Woche, der am Hermannplatz ist der beste.",
            "Der Döner am Hermannplatz hat einen guten Ruf!",
            "Tarek isst gern Döner."),
        ask("Wie bekomme ich einen Termin beim Bürgeramt, ohne Wochen zu warten?",
            "Früh morgens auf der Terminseite nachsehen, da werden abgesagte Termine frei, "
            "oder in Randbezirken buchen."),
        say("I play chess online most nights, I'm rated about 1800 on Lichess.",
            "1800 on Lichess is a solid rating!",
            "Tarek plays online chess and is rated about 1800."),
    ),
    session(
        "2026-02-08T11:20",
        say("Sami hat die Zusage bekommen, mein Bruder studiert ab Herbst Maschinenbau in "
            "Aachen.",
            "Glückwunsch an Sami, Aachen ist eine tolle Uni für Maschinenbau!",
            "Tareks Bruder Sami studiert Maschinenbau in Aachen."),
        say("Bei Nüssen muss ich höllisch aufpassen, ich habe eine Erdnussallergie und trage "
            "immer einen Pen bei mir.",
            "Gut, dass du den Notfall-Pen immer dabeihast.",
            "Tarek hat eine Erdnussallergie."),
        say("Mum's kibbeh is the one thing I miss most about living at home.",
            "Homemade kibbeh is hard to beat.",
            "Tarek's favourite food is his mother's kibbeh."),
        say("Meine Mutter lebt in Hamburg, ich fahre jeden zweiten Monat hoch.",
            "Schön, dass du sie in Hamburg regelmäßig besuchst.",
            "Tareks Mutter lebt in Hamburg."),
        ask("What's a good gift for my mum's sixtieth?",
            "A weekend trip together, a framed family photo book or a cooking class for two."),
    ),
    session(
        "2026-02-27T19:40",
        say("I picked up the oud again, my grandfather taught me when I was a kid.",
            "What a lovely connection to your grandfather, enjoy playing the oud.",
            "Tarek plays the oud."),
        say("Jeden Morgen jogge ich übers Tempelhofer Feld, das ist meine Therapie.",
            "Das Tempelhofer Feld ist perfekt zum Laufen.",
            "Tarek joggt morgens auf dem Tempelhofer Feld."),
        say("Started Dutch on Duolingo because half my team is from Amsterdam.",
            "Goed bezig! Learning Dutch will help with the team.",
            "Tarek is learning Dutch."),
        say("Ohne Brille sehe ich gar nichts, ich bin stark kurzsichtig.",
            "Dann immer eine Ersatzbrille dabeihaben!",
            "Tarek ist stark kurzsichtig und trägt eine Brille."),
        ask("Welche Laufschuhe sind gut für Asphalt?",
            "Gut gedämpfte Neutralschuhe, zum Beispiel von Asics, Brooks oder Hoka."),
    ),
    session(
        "2026-03-20T21:30",
        say("Sophie and I split up. I've met someone, Mira, she's an architect.",
            "Sorry about Sophie, and happy for you and Mira.",
            "Tarek broke up with Sophie; his new girlfriend is Mira, an architect."),
        say("Mira und ich ziehen nach Potsdam, wir haben eine Wohnung mit Garten gefunden.",
            "Eine Wohnung mit Garten in Potsdam, wie schön!",
            "Tarek zieht mit Mira nach Potsdam."),
        say("Sold the Vespa, I'm commuting with a used Tesla Model 3 now that we're in Potsdam.",
            "A Model 3 makes the Potsdam commute easy.",
            "Tarek sold his Vespa and now drives a Tesla Model 3."),
        say("I went vegetarian last month, so no more döner for me.",
            "Good luck with the vegetarian life!",
            "Tarek is vegetarian now."),
        ask("Can you suggest some Syrian vegetarian dishes?",
            "Mujaddara, fattoush, baba ghanoush, muhammara and vegetarian kibbeh with pumpkin."),
    ),
    session(
        "2026-04-14T18:00",
        say("Last day at N26 on Friday, I'm joining Zalando as a staff engineer.",
            "Congratulations on the staff engineer role at Zalando!",
            "Tarek left N26 and now works as a staff engineer at Zalando."),
        say("Jonah has been my best friend since we met at university in Aachen.",
            "Friends from university are the best.",
            "Jonah is Tarek's best friend."),
        say("Fayrouz läuft bei mir jeden Morgen, ihre Stimme erinnert mich an zu Hause.",
            "Fayrouz am Morgen ist wunderschön.",
            "Tareks Lieblingssängerin ist Fayrouz."),
        say("I grew up in Damascus and came to Germany when I was fourteen.",
            "That's a big move at fourteen.",
            "Tarek grew up in Damascus."),
        say("Donnerstags spiele ich Basketball in der Halle in Kreuzberg.",
            "Basketball ist ein super Ausgleich.",
            "Tarek spielt donnerstags Basketball."),
        say("My coffee has to have cardamom in it, like at home.",
            "Cardamom coffee is delicious.",
            "Tarek drinks his coffee with cardamom."),
        say("Unser großer Traum ist eine Reise nach Island, wir sparen schon.",
            "Island ist traumhaft, viel Erfolg beim Sparen!",
            "Tarek spart für eine Reise nach Island."),
        say("Mein Geburtstag ist am 21. Mai, Mira plant schon was.",
            "Wie schön, dass Mira etwas plant!",
            "Tarek hat am 21. Mai Geburtstag."),
    ),
), (
    q("Which board game do I play on the internet?", "chess"),
    q("Wo studiert mein Bruder?", "Aachen"),
    q("What's my pet called?", "Simba"),
    q("Was darf ich auf keinen Fall essen?", "Erdnussallergie", "Nüssen"),
    q("Which string instrument do I play?", "oud"),
    q("Wann werde ich ein Jahr älter?", "21. Mai"),
    q("What's the dish I miss most?", "kibbeh"),
    q("Wo gehe ich laufen?", "Tempelhofer"),
    q("What language am I picking up?", "Dutch"),
    q("Brauche ich eine Sehhilfe?", "kurzsichtig", "Brille"),
    q("Who's Tarek's closest mate?", "Jonah"),
    q("Welche Sängerin höre ich am liebsten?", "Fayrouz"),
    q("Where was I raised?", "Damascus"),
    q("Welchen Mannschaftssport treibe ich?", "Basketball"),
    q("How do I like my coffee?", "cardamom"),
    q("Wohin möchte ich reisen?", "Island"),
    q("Wo lebt meine Mutter?", "Hamburg"),
    q("Wie heißt mein Bruder?", "Sami"),
    q("How good am I at chess?", "1800"),
    q("What kind of animal is Simba?", "cat"),
    never("Do I have children?"),
    never("Welche Blutgruppe habe ich?"),
    never("Which football club do I support?"),
    never("Spiele ich Tennis?"),
    never("Have I ever been to Japan?"),
    cross("Wie heißt meine Katze?", "Simba"),
    cross("Welches Instrument spiele ich?", "oud"),
    cross("Where does my mother live?", "Hamburg"),
    cross("What am I allergic to?", "Erdnussallergie", "Nüssen"),
    changed("Where do I work?", "Zalando", "N26"),
    changed("Wo wohne ich jetzt?", "Potsdam", "Neukölln"),
    changed("Who am I dating?", "Mira", "Sophie"),
    changed("What vehicle do I get around with?", "Model 3", "Vespa"),
    changed("Do I eat meat?", "vegetarian", "Döner"),
))


HALVES: dict[str, tuple[Persona, ...]] = {
    "tune": (MAYA, JONAS, LENA),
    "held-out": (ETHAN, SABINE, TAREK),
}
"""The personas of each half: tune on ``"tune"``, report ``"held-out"``."""
