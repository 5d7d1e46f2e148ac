"""Timelines for ``facts_over_time.py --sets indirect``: changes said in other words.

Each half of each language is one user's timeline: facts that will change, facts that stay
(a lived-in memory: family, health, habits), then each change said the way people say it in
passing, sharing no key word with the fact it changes ("I live in Leeds." -> "We relocated
to Bristol about two months ago."; "Ich arbeite bei Siemens." -> "Mein neuer Chef bei Bosch
..."). Events are ``(day, topic, op, text)`` as in ``_facts_data.py``. ``tune`` is the half
the library may be tuned on; ``held`` is held out: the benchmark's table reports it, with
``tune`` beside it. Written by hand for this benchmark.
"""

from __future__ import annotations

from _facts_data import Event

IndirectSet = tuple[list[Event], dict[str, str], dict[str, str]]
"""Events, a current question per changed topic, a past question per some topics."""


def _timeline(
    changes: list[tuple[str, str, str]], stays: list[str], late: list[str]
) -> list[Event]:
    """The events: the first facts and the facts that stay, interleaved (days 1..), then each
    change (days 40.., 8 apart) with one more lasting fact between two changes."""
    events: list[Event] = []
    first = [(topic, old) for topic, old, _ in changes]
    day = 1
    for i in range(max(len(first), len(stays))):
        if i < len(first):
            events.append((day, first[i][0], "new", first[i][1]))
        if i < len(stays):
            events.append((day, f"stay{i}", "new", stays[i]))
        day += 1
    day = 40
    for i, (topic, _, new) in enumerate(changes):
        events.append((day, topic, "update", new))
        if i < len(late):
            events.append((day + 3, f"late{i}", "new", late[i]))
        day += 8
    return events


EN_TUNE_CHANGES = [
    ("home", "I live in Leeds.", "We relocated to Bristol about two months ago."),
    ("car", "I drive a Ford Focus.", "Last week I traded in my old car for a Kia EV6."),
    ("partner", "My girlfriend is called Priya.", "I've been seeing Arjun for a few weeks now."),
    ("job", "I work as a nurse at St Mary's Hospital.",
     "My new manager at Southmead Hospital is really supportive."),
    ("phone", "I use an iPhone 12.", "My Pixel 8 arrived on Tuesday and replaced my old handset."),
    ("gym", "I go to the gym on Mondays.", "These days I lift weights at PureGym on Wednesday evenings."),
    ("commute", "I take the tram to work.", "Since the spring I cycle to the office."),
    ("instrument", "I am learning the violin.", "My cello teacher says I'm making good progress."),
    ("diet", "I am vegan.", "I started eating fish again in March."),
    ("dentist", "My dentist is Dr Patel.", "I registered with a new dental practice on Gloucester Road."),
    ("bank", "I bank with Barclays.", "All my money sits in a Monzo account these days."),
    ("laptop", "My work laptop is a ThinkPad.", "IT handed me a MacBook Pro for the office last Monday."),
    ("reading", "I'm reading Dune at the moment.", "I finished that sci-fi novel and picked up Piranesi."),
    ("team", "I support Leeds United.", "After the move I started following Bristol City instead."),
]
EN_TUNE_STAYS = [
    "My sister Anna is a pharmacist in York.",
    "I'm allergic to penicillin.",
    "My birthday is on 3 May.",
    "I have two children, Maya and Leo.",
    "My favourite colour is green.",
    "I'm afraid of heights.",
    "I play chess online most evenings.",
    "My mother grew up in Dublin.",
    "I enjoy hiking in the Lake District.",
    "I am left-handed.",
    "I collect vinyl records.",
    "My blood type is O negative.",
    "I speak French and a little German.",
    "I prefer window seats on planes.",
    "My best friend is called Jonas.",
    "I take my coffee black.",
]
EN_TUNE_LATE = [
    "Maya started secondary school this year.",
    "I watch a lot of nature documentaries.",
    "My dad had knee surgery in April.",
    "I am saving up for a trip to Japan.",
    "I volunteer at the library once a month.",
    "I bake sourdough bread at weekends.",
    "My neighbour lends me his lawnmower.",
    "I'm trying to sleep eight hours a night.",
]
EN_TUNE_QUESTIONS = {
    "home": "Where do I live?",
    "car": "What car do I drive?",
    "partner": "Who is my partner?",
    "job": "Where do I work?",
    "phone": "Which phone do I use?",
    "gym": "When do I go to the gym?",
    "commute": "How do I get to work?",
    "instrument": "Which instrument am I learning?",
    "diet": "Am I vegan?",
    "dentist": "Who is my dentist?",
    "bank": "Which bank do I use?",
    "laptop": "What laptop do I use for work?",
    "reading": "What book am I reading?",
    "team": "Which football team do I support?",
}
EN_TUNE_PAST = {
    "home": "Where did I live before?",
    "car": "Which car did I drive before?",
    "job": "Where did I work before?",
    "phone": "Which phone did I use before?",
}

EN_HELD_CHANGES = [
    ("home", "My flat is in Camden.", "We got the keys to our new house in Brighton last month."),
    ("job", "I'm a teacher at Hillside Primary.",
     "My first term lecturing at Sussex University went well."),
    ("car", "I own a Toyota Yaris.", "We got rid of the hatchback and now share my husband's Volvo."),
    ("partner", "I'm dating Tom.", "My fiancé Marco and I are planning a spring wedding."),
    ("doctor", "My GP is Dr Hughes.", "The surgery I'm registered with now assigned me Dr Okafor."),
    ("network", "My mobile contract is with Vodafone.", "I ported my number to Three in January."),
    ("sport", "I play five-a-side football on Tuesdays.",
     "My knee forced me to swap the pitch for the swimming pool."),
    ("language", "I'm learning Spanish on Duolingo.", "My Japanese evening class started in September."),
    ("food", "My favourite food is lasagne.", "Nothing beats a bowl of ramen for me these days."),
    ("commute", "I drive to work.", "I catch the 7:40 train to the office every morning."),
    ("editor", "I code in VS Code.", "Neovim has been my daily tool for programming since the summer."),
    ("broadband", "Our internet provider is BT.", "Virgin Media installed our fibre line on Friday."),
    ("volunteer", "I volunteer at the food bank on Saturdays.",
     "These days my weekends go to helping at the animal shelter."),
    ("coffee", "I drink two cups of coffee a day.",
     "My doctor told me to cut caffeine, so it's herbal tea only."),
]
EN_HELD_STAYS = [
    "My brother Sam is an electrician in Leeds.",
    "I'm allergic to cats.",
    "My birthday is on 12 November.",
    "I have a daughter called Isla.",
    "My favourite colour is navy blue.",
    "I'm scared of spiders.",
    "I do the crossword every Sunday.",
    "My grandparents came from Jamaica.",
    "I love camping in Wales.",
    "I wear glasses for reading.",
    "I collect old maps.",
    "I'm lactose intolerant.",
    "I speak Portuguese fluently.",
    "I always book aisle seats.",
    "My oldest friend is called Ruth.",
    "I sleep badly when it's hot.",
]
EN_HELD_LATE = [
    "Isla learnt to ride a bike this summer.",
    "I listen to true crime podcasts.",
    "My mum moved into a care home in March.",
    "I'm planning a trip to Iceland.",
    "I write short stories in my spare time.",
    "I grow tomatoes on the balcony.",
    "I lent my ladder to the neighbours.",
    "I meditate for ten minutes each morning.",
]
EN_HELD_QUESTIONS = {
    "home": "Where do I live?",
    "job": "Where do I work?",
    "car": "What car do I have?",
    "partner": "Who is my partner?",
    "doctor": "Who is my doctor?",
    "network": "Which mobile network am I with?",
    "sport": "What sport do I do?",
    "language": "Which language am I learning?",
    "food": "What is my favourite food?",
    "commute": "How do I commute to work?",
    "editor": "Which editor do I use for coding?",
    "broadband": "Who is our internet provider?",
    "volunteer": "Where do I volunteer?",
    "coffee": "How much coffee do I drink?",
}
EN_HELD_PAST = {
    "home": "Where did I live before?",
    "job": "Where did I work before?",
    "car": "Which car did I have before?",
    "language": "Which language did I learn before?",
}

DE_TUNE_CHANGES = [
    ("wohnort", "Ich wohne in Leipzig.", "Unsere neue Wohnung in Dresden ist endlich eingerichtet."),
    ("job", "Ich arbeite bei Siemens.", "Mein neuer Chef bei Bosch ist sehr entspannt."),
    ("auto", "Ich fahre einen VW Golf.", "Letzte Woche habe ich mir einen gebrauchten Skoda Octavia geholt."),
    ("partner", "Ich bin mit Jonas zusammen.", "Seit ein paar Wochen treffe ich mich mit Lukas."),
    ("handy", "Ich nutze ein iPhone 12.", "Mein Samsung Galaxy S23 ist seit Dienstag eingerichtet."),
    ("sport", "Ich spiele dienstags Volleyball.", "Wegen meiner Schulter gehe ich stattdessen schwimmen."),
    ("arbeitsweg", "Ich fahre mit der S-Bahn ins Büro.", "Seit dem Frühling radle ich zur Firma."),
    ("instrument", "Ich lerne Geige.", "Meine Cellolehrerin ist mit meinen Fortschritten zufrieden."),
    ("ernaehrung", "Ich bin Veganerin.", "Seit März esse ich wieder Fisch."),
    ("zahnarzt", "Mein Zahnarzt ist Dr. Weber.", "Ich gehe jetzt in eine neue Zahnarztpraxis am Marktplatz."),
    ("bank", "Mein Konto ist bei der Sparkasse.", "Mein Geld liegt inzwischen komplett bei der DKB."),
    ("laptop", "Mein Arbeitslaptop ist ein ThinkPad.", "Die IT hat mir letzten Montag ein MacBook Pro gegeben."),
    ("lesen", "Ich lese gerade Der Schwarm.", "Den Ozean-Thriller habe ich durch, jetzt liegt Kafka am Strand auf dem Nachttisch."),
    ("verein", "Ich bin Fan von Hertha BSC.", "Nach dem Umzug fiebere ich mit Dynamo Dresden mit."),
]
DE_TUNE_STAYS = [
    "Meine Schwester Anna ist Apothekerin in Kassel.",
    "Ich bin allergisch gegen Penicillin.",
    "Mein Geburtstag ist am 3. Mai.",
    "Ich habe zwei Kinder, Mia und Leon.",
    "Meine Lieblingsfarbe ist Grün.",
    "Ich habe Höhenangst.",
    "Ich spiele abends gern Schach im Internet.",
    "Meine Mutter ist in Rostock aufgewachsen.",
    "Ich wandere gern in den Alpen.",
    "Ich bin Linkshänderin.",
    "Ich sammle Schallplatten.",
    "Meine Blutgruppe ist 0 negativ.",
    "Ich spreche Französisch und etwas Italienisch.",
    "Im Flugzeug sitze ich am liebsten am Fenster.",
    "Meine beste Freundin heißt Jana.",
    "Ich trinke meinen Kaffee schwarz.",
]
DE_TUNE_LATE = [
    "Mia ist dieses Jahr aufs Gymnasium gekommen.",
    "Ich schaue gern Naturdokus.",
    "Mein Vater hatte im April eine Knie-OP.",
    "Ich spare für eine Reise nach Japan.",
    "Einmal im Monat helfe ich in der Bücherei aus.",
    "Am Wochenende backe ich Sauerteigbrot.",
    "Der Nachbar leiht mir seinen Rasenmäher.",
    "Ich versuche, acht Stunden pro Nacht zu schlafen.",
]
DE_TUNE_QUESTIONS = {
    "wohnort": "Wo wohne ich?",
    "job": "Wo arbeite ich?",
    "auto": "Was für ein Auto fahre ich?",
    "partner": "Mit wem bin ich zusammen?",
    "handy": "Welches Handy nutze ich?",
    "sport": "Welchen Sport mache ich?",
    "arbeitsweg": "Wie komme ich zur Arbeit?",
    "instrument": "Welches Instrument lerne ich?",
    "ernaehrung": "Bin ich Veganerin?",
    "zahnarzt": "Wer ist mein Zahnarzt?",
    "bank": "Bei welcher Bank bin ich?",
    "laptop": "Welchen Laptop nutze ich bei der Arbeit?",
    "lesen": "Welches Buch lese ich gerade?",
    "verein": "Welchen Fußballverein unterstütze ich?",
}
DE_TUNE_PAST = {
    "wohnort": "Wo habe ich früher gewohnt?",
    "job": "Wo habe ich vorher gearbeitet?",
    "auto": "Welches Auto hatte ich früher?",
    "handy": "Welches Handy hatte ich früher?",
}

DE_HELD_CHANGES = [
    ("wohnort", "Meine Wohnung ist in Köln-Ehrenfeld.",
     "Wir haben letzten Monat die Schlüssel für unser Haus in Bonn bekommen."),
    ("job", "Ich bin Lehrerin an der Grundschule am Park.",
     "Mein erstes Semester als Dozentin an der Uni Bonn lief gut."),
    ("auto", "Ich habe einen Toyota Yaris.",
     "Den Kleinwagen haben wir abgegeben, jetzt teilen wir uns den Volvo meines Mannes."),
    ("partner", "Ich bin mit Tom zusammen.", "Marco und ich planen unsere Hochzeit im Frühling."),
    ("hausarzt", "Meine Hausärztin ist Dr. Huber.", "In der Praxis betreut mich jetzt Dr. Okafor."),
    ("mobilfunk", "Mein Handyvertrag läuft bei Vodafone.", "Im Januar habe ich meine Nummer zu O2 mitgenommen."),
    ("sport", "Ich spiele dienstags Fußball.", "Mein Knie zwingt mich, vom Rasen ins Schwimmbad zu wechseln."),
    ("sprache", "Ich lerne Spanisch mit Duolingo.", "Mein Japanischkurs an der VHS hat im September angefangen."),
    ("essen", "Mein Lieblingsessen ist Lasagne.", "Nichts geht für mich über eine Schüssel Ramen."),
    ("arbeitsweg", "Ich fahre mit dem Auto zur Arbeit.", "Morgens nehme ich den Zug um 7:40 ins Büro."),
    ("editor", "Ich programmiere in VS Code.", "Neovim ist seit dem Sommer mein tägliches Werkzeug beim Coden."),
    ("internet", "Unser Internetanbieter ist die Telekom.",
     "Ein Techniker von 1&1 hat am Freitag unseren Glasfaseranschluss gelegt."),
    ("ehrenamt", "Ich helfe samstags bei der Tafel.",
     "Meine Wochenenden gehören inzwischen dem Tierheim."),
    ("kaffee", "Ich trinke zwei Tassen Kaffee am Tag.",
     "Meine Ärztin hat mir Koffein gestrichen, also gibt es nur noch Kräutertee."),
]
DE_HELD_STAYS = [
    "Mein Bruder Sam ist Elektriker in Essen.",
    "Ich bin allergisch gegen Katzen.",
    "Mein Geburtstag ist am 12. November.",
    "Ich habe eine Tochter namens Isla.",
    "Meine Lieblingsfarbe ist Dunkelblau.",
    "Ich habe Angst vor Spinnen.",
    "Sonntags löse ich das Kreuzworträtsel.",
    "Meine Großeltern kommen aus Polen.",
    "Ich zelte gern an der Ostsee.",
    "Zum Lesen trage ich eine Brille.",
    "Ich sammle alte Landkarten.",
    "Ich vertrage keine Laktose.",
    "Ich spreche fließend Portugiesisch.",
    "Im Flugzeug buche ich immer den Gang.",
    "Meine älteste Freundin heißt Ruth.",
    "Bei Hitze schlafe ich schlecht.",
]
DE_HELD_LATE = [
    "Isla hat diesen Sommer Radfahren gelernt.",
    "Ich höre True-Crime-Podcasts.",
    "Meine Mutter ist im März ins Pflegeheim gezogen.",
    "Ich plane eine Reise nach Island.",
    "In meiner Freizeit schreibe ich Kurzgeschichten.",
    "Auf dem Balkon ziehe ich Tomaten.",
    "Ich habe den Nachbarn meine Leiter geliehen.",
    "Ich meditiere jeden Morgen zehn Minuten.",
]
DE_HELD_QUESTIONS = {
    "wohnort": "Wo wohne ich?",
    "job": "Wo arbeite ich?",
    "auto": "Was für ein Auto habe ich?",
    "partner": "Mit wem bin ich zusammen?",
    "hausarzt": "Wer ist meine Hausärztin?",
    "mobilfunk": "Bei welchem Anbieter ist mein Handyvertrag?",
    "sport": "Welchen Sport mache ich?",
    "sprache": "Welche Sprache lerne ich?",
    "essen": "Was ist mein Lieblingsessen?",
    "arbeitsweg": "Wie komme ich zur Arbeit?",
    "editor": "Mit welchem Editor programmiere ich?",
    "internet": "Wer ist unser Internetanbieter?",
    "ehrenamt": "Wo helfe ich ehrenamtlich?",
    "kaffee": "Wie viel Kaffee trinke ich?",
}
DE_HELD_PAST = {
    "wohnort": "Wo habe ich früher gewohnt?",
    "job": "Wo habe ich vorher gearbeitet?",
    "auto": "Welches Auto hatte ich früher?",
    "sprache": "Welche Sprache habe ich früher gelernt?",
}

INDIRECT: dict[str, dict[str, IndirectSet]] = {
    "en": {
        "tune": (_timeline(EN_TUNE_CHANGES, EN_TUNE_STAYS, EN_TUNE_LATE), EN_TUNE_QUESTIONS, EN_TUNE_PAST),
        "held": (_timeline(EN_HELD_CHANGES, EN_HELD_STAYS, EN_HELD_LATE), EN_HELD_QUESTIONS, EN_HELD_PAST),
    },
    "de": {
        "tune": (_timeline(DE_TUNE_CHANGES, DE_TUNE_STAYS, DE_TUNE_LATE), DE_TUNE_QUESTIONS, DE_TUNE_PAST),
        "held": (_timeline(DE_HELD_CHANGES, DE_HELD_STAYS, DE_HELD_LATE), DE_HELD_QUESTIONS, DE_HELD_PAST),
    },
}
"""Per language, the ``tune`` and the held-out (``held``) half."""
