"""A change said in other words ("We got the keys to our place in Brighton" after "I live in
Leeds"), which the rules do not recognise as one, never leaves the older fact first as if it
were current: the recall puts the newer fact on its topic first and marks the older one as
possibly outdated. Facts on other topics are left as they are. Every tool test runs on
InMemoryStore and ChromaStore, sync and async, with an embedder that knows a few topics."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore, SearchItem
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore
from langgraph_episodic.facts.recall import NEIGHBOURS, newer_first, newer_on_topic
from langgraph_episodic.facts.records import FactRecord
from langgraph_episodic.graph.memory_recall import recall_memories_node
from langgraph_episodic.tools import ENGLISH, GERMAN, create_memory_tools
from tests.tools.conftest import Call, bullets

from .conftest import Clock, user

TOPICS = (
    {"live", "leeds", "house", "keys", "brighton", "wohne", "leipzig", "wohnung", "dresden"},
    {"girlfriend", "priya", "seeing", "arjun"},
    {"allergic", "penicillin"},
    {"colour", "green", "blue"},
    {"drive", "ford", "focus", "car", "kia"},
)
"""The words of each topic the test embedder knows; a text's vector counts them per topic."""


class TopicEmbeddings(Embeddings):
    """Vectors by topic: texts on one topic are near, texts on two topics share nothing."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        words = set(re.findall(r"\w+", text.casefold()))
        vector = [float(len(words & topic)) for topic in TOPICS]
        return [*vector, 0.0] if any(vector) else [0.0] * len(TOPICS) + [1.0]


def topic_store(backend: str) -> BaseStore:
    index: Any = {"dims": len(TOPICS) + 1, "embed": TopicEmbeddings()}
    if backend == "memory":
        return InMemoryStore(index=index)
    return ChromaStore.ephemeral(index=index)


def tools(backend: str, clock: Clock, **kwargs: Any) -> Any:
    return create_memory_tools(store=topic_store(backend), clock=clock, min_score=None,
                               should_store=None, **kwargs)


async def test_a_move_in_other_words_leads_and_the_old_home_is_marked(
    backend: str, call: Call, clock: Clock
) -> None:
    save, recall = tools(backend, clock, locale="en")
    for text in ("I live in Leeds.", "I am allergic to penicillin.", "I drive a Ford Focus."):
        await call(save, {"information": text}, user("alice"))
    clock.set(2026, 5, 2)
    said = await call(save, {"information": "We got the keys to our place in Brighton."},
                      user("alice"))
    assert "replaces" not in said  # the rules do not see a move here: both stay current
    found = bullets(await call(recall, {"query": "Where do I live?"}, user("alice")), ENGLISH)
    assert found[0] == "We got the keys to our place in Brighton. (since May 2026)"
    assert found[1] == "I live in Leeds. (since March 2026) (older; may be outdated)"


async def test_a_new_car_in_other_words_is_recalled_before_the_old_one_in_german(
    backend: str, call: Call, clock: Clock
) -> None:
    save, recall = tools(backend, clock)
    await call(save, {"information": "Ich fahre einen Ford Focus."}, user("alice"))
    clock.set(2026, 4, 20)
    await call(save, {"information": "Letzte Woche habe ich den alten gegen einen Kia getauscht."},
               user("alice"))
    found = bullets(await call(recall, {"frage": "Welches Auto fahre ich, Ford oder Kia?"},
                               user("alice")))
    assert found[0].startswith("Letzte Woche habe ich den alten gegen einen Kia getauscht.")
    assert found[1] == f"Ich fahre einen Ford Focus. (seit März 2026) {GERMAN.outdated}"


async def test_a_newer_fact_on_another_topic_marks_nothing(
    backend: str, call: Call, clock: Clock
) -> None:
    save, recall = tools(backend, clock, locale="en")
    await call(save, {"information": "I live in Leeds."}, user("alice"))
    clock.set(2026, 5, 2)
    await call(save, {"information": "My favourite colour is green."}, user("alice"))
    answer = await call(recall, {"query": "Where do I live in Leeds, and my colour?"}, user("alice"))
    assert ENGLISH.outdated not in answer
    assert "I live in Leeds." in answer


async def test_a_past_question_still_marks_and_as_of_answers_by_periods(
    backend: str, call: Call, clock: Clock
) -> None:
    save, recall = tools(backend, clock, locale="en")
    await call(save, {"information": "My girlfriend is called Priya."}, user("alice"))
    clock.set(2026, 6, 1)
    await call(save, {"information": "Arjun and I have been going out for a few weeks."}, user("alice"))
    found = bullets(await call(recall, {"query": "Who is my girlfriend, Priya or Arjun?"},
                               user("alice")), ENGLISH)
    assert found[0].startswith("Arjun and I have been going out for a few weeks.")
    assert found[1].endswith(ENGLISH.outdated)
    then: RunnableConfig = {"configurable": {"user_id": "alice", "as_of": "2026-04-01T00:00:00Z"}}
    assert ENGLISH.outdated not in await call(recall, {"query": "Who is my girlfriend?"}, then)


def _item(key: str, text: str, said: str, slot: str | None = None, score: float = 1.0,
          method: str = "rules") -> SearchItem:
    rec = FactRecord(text=text, lineage=key, valid_from=said, recorded_at=said, slot=slot,
                     method=method)
    moment = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return SearchItem(("memories", "u"), key, rec.to_value(), moment, moment, score=score)


JAN, MAR, MAY = "2026-01-05T00:00:00.000000Z", "2026-03-05T00:00:00.000000Z", "2026-05-05T00:00:00.000000Z"


def test_the_same_slot_needs_no_meaning_and_an_other_slot_never_leads() -> None:
    leeds = _item("a", "I live in Leeds.", JAN, "residence")
    bristol = _item("b", "Bristol is home now.", MAR, "residence")
    job = _item("c", "I work at ACME.", MAY, "work")
    newer = newer_on_topic([leeds], [leeds, bristol, job], {})
    assert newer == {(("memories", "u"), "a"): bristol}
    assert newer_on_topic([leeds], [leeds, job], {(("memories", "u"), "a"): [job]}) == {}
    # A change of a known topic leads no fact that does not name the topic.
    cello, move = _item("d", "I play the cello.", JAN), _item("e", "I moved to Leeds.", MAR,
                                                             "residence")
    assert newer_on_topic([cello], [cello, move], {(("memories", "u"), "d"): [move]}) == {}


def test_an_older_fact_never_leads_and_a_lead_never_pushes_its_fact_out() -> None:
    old, new = _item("a", "I live in Leeds.", JAN), _item("b", "Keys to the Brighton house.", MAR)
    spot_a, spot_b = (("memories", "u"), "a"), (("memories", "u"), "b")
    assert newer_on_topic([new], [old, new], {spot_b: [old]}) == {}
    ordered, outdated = newer_first([old], {spot_a: new}, k=2)
    assert [i.key for i in ordered] == ["b", "a"] and outdated == {spot_a}
    ordered, outdated = newer_first([old], {spot_a: new}, k=1)  # no room for both
    assert [i.key for i in ordered] == ["a"] and outdated == set()



def test_a_later_fact_leads_when_near_and_one_saying_it_changed_first() -> None:
    old, new = _item("a", "I live in Leeds.", JAN), _item("b", "Keys to our new house.", MAR)
    plain = _item("c", "Keys to a house.", MAR)  # says no change
    others = [_item(f"x{i}", f"I like {i}.", JAN) for i in range(NEIGHBOURS)]
    spot_a, spot_b = (("memories", "u"), "a"), (("memories", "u"), "b")
    assert newer_on_topic([old], [old, new], {spot_a: [*others, new]}) == {}  # too far
    assert newer_on_topic([old], [old, new], {}) == {}
    assert newer_on_topic([old], [old, new], {spot_a: [others[0], new]}) == {spot_a: new}
    assert newer_on_topic([old], [old, new], {spot_b: [*others[:-1], old]}) == {spot_a: new}
    # One that does not say it changed leads only from among the older one's 2 nearest, and
    # after one that does.
    assert newer_on_topic([old], [old, plain], {spot_a: [others[0], plain]}) == {spot_a: plain}
    assert newer_on_topic([old], [old, plain], {spot_a: [*others[:2], plain]}) == {}
    assert newer_on_topic([old], [old, plain, new], {spot_a: [plain, new]}) == {spot_a: new}
    # When both answer the question, the older one among the later one's 2 nearest will do.
    spot_c = (("memories", "u"), "c")
    assert newer_on_topic([old], [old, plain], {spot_c: [others[0], old]}) == {}
    assert newer_on_topic([old, plain], [old, plain],
                          {spot_a: others[:2], spot_c: [others[0], old]}) == {spot_a: plain}
    assert newer_on_topic([old, plain], [old, plain],
                          {spot_a: others[:2], spot_c: [*others[:2], old]}) == {}


def test_a_fact_a_model_saved_never_leads() -> None:
    """The model was shown the current facts on its topic and closed what it replaced: what
    it left current it judged still true, so no later fact of its casts doubt on one."""
    old = _item("a", "I live in Leeds.", JAN, "residence")
    for slot in ("residence", None):
        new = _item("b", "We got the keys to our new house now.", MAR, slot, method="model")
        spot_a = (("memories", "u"), "a")
        assert newer_on_topic([old], [old, new], {spot_a: [new]}) == {}
        ruled = _item("b", new.value["text"], MAR, slot)
        assert newer_on_topic([old], [old, ruled], {spot_a: [ruled]}) == {spot_a: ruled}


async def test_the_memory_the_middleware_loads_puts_the_later_fact_on_a_topic_first(
    backend: str, call: Call, clock: Clock
) -> None:
    """What the middleware and the recall node put into the prompt orders a topic's facts as
    the recall tool does: the topic's fact, found by filter, comes with the later fact said
    in other words before it."""
    store = topic_store(backend)
    save, _ = create_memory_tools(store=store, clock=clock, min_score=None, should_store=None)
    await call(save, {"information": "My girlfriend is called Priya."}, user("alice"))
    await call(save, {"information": "I am allergic to penicillin."}, user("alice"))
    clock.set(2026, 6, 1)
    await call(save, {"information": "Arjun and I have been going out for a few weeks."},
               user("alice"))
    node = recall_memories_node(store=store, min_score=None)
    recalled = node.invoke({"messages": [("user", "Who is my girlfriend?")]}, user("alice"))
    texts = [m["value"]["text"] for m in recalled["recalled_memories"]]
    assert texts[:2] == ["Arjun and I have been going out for a few weeks.",
                         "My girlfriend is called Priya."]
