# %% [markdown]
# # 1 · Quickstart: a Chroma store for LangGraph
#
# **What this notebook shows:** `ChromaStore`, a LangGraph `BaseStore` on an embedded Chroma
# database, used (1) directly — put, get, semantic search, filters, namespaces — and
# (2) inside a LangGraph graph, where nodes read and write it through their `store` argument; then
# (3) items that expire (TTL) and (4) that everything survives a restart.
#
# It runs offline: the embedding model (all-MiniLM-L6-v2) ships inside a Python package.
# Loading it takes a few seconds the first time.

# %%
import tempfile
from pathlib import Path

from langgraph_episodic import ChromaStore

scratch = tempfile.TemporaryDirectory(prefix="episodic-quickstart-")  # removed at the end
workdir = Path(scratch.name)
# In your app: ChromaStore.persistent() keeps everything in ./.episodic
store = ChromaStore.persistent(workdir / "store")
store

# %% [markdown]
# ## Put and get
#
# Items live in **namespaces** (tuples of labels, e.g. one per user) under a **key**; the
# value is a JSON-like dict. The store stamps `created_at` and `updated_at`.

# %%
alice = ("users", "alice")
store.put(alice, "coffee", {"text": "Alice drinks her espresso without sugar", "kind": "preference", "priority": 2})
store.put(alice, "editor", {"text": "Alice writes Python in Neovim", "kind": "preference", "priority": 1})
store.put(alice, "deadline", {"text": "The billing migration is due on Friday", "kind": "task", "priority": 3})
store.put(("users", "alice2"), "coffee", {"text": "Alice2 only drinks green tea", "kind": "preference", "priority": 1})

item = store.get(alice, "coffee")
assert item is not None
print(item.value["text"], "| created", item.created_at.isoformat(timespec="seconds"))

# %% [markdown]
# ## Semantic search
#
# `search(namespace_prefix, query=...)` ranks by meaning, not only by shared words: the
# question below shares no word with the answer. Scores are higher for better matches (the
# default hybrid mode fuses meaning and keywords; `search_mode="dense"` gives plain cosine
# similarity).

# %%
results = store.search(alice, query="How does she take her coffee?", limit=3)
for r in results:
    print(f"{r.score:.3f}  {r.key:<9} {r.value['text']}")
assert results[0].key == "coffee"

# %% [markdown]
# ## Filters
#
# `filter` matches value fields exactly or with `$eq $ne $gt $gte $lt $lte`; several keys
# are ANDed. It combines with a query.

# %%
preferences = store.search(alice, filter={"kind": "preference"})
urgent = store.search(alice, filter={"priority": {"$gte": 2}})
urgent_tasks = store.search(alice, query="what is due soon?", filter={"kind": "task", "priority": {"$gt": 2}})
print("preferences:", sorted(r.key for r in preferences))
print("priority >= 2:", sorted(r.key for r in urgent))
print("urgent tasks:", [r.key for r in urgent_tasks])
assert sorted(r.key for r in preferences) == ["coffee", "editor"]

# %% [markdown]
# ## Namespaces match whole labels
#
# A search under `("users", "alice")` never sees `("users", "alice2")`: namespaces are
# compared label by label, so one user cannot read another's items by a prefix trick.

# %%
print(store.list_namespaces(prefix=("users",)))
seen = {tuple(r.namespace) for r in store.search(alice, query="tea", limit=10)}
print("namespaces seen from alice:", seen)
assert seen == {alice}

# %% [markdown]
# ## The store in a graph
#
# Compile a graph with `store=...` and every node can take it as its `store` argument. The
# user id comes from `config["configurable"]`, never from the model or the message text.
# This node remembers every statement and answers questions from memory.

# %%
import uuid

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore


def remember_or_answer(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
    user = config["configurable"]["user_id"]
    namespace = ("memories", user)
    text = state["messages"][-1].text
    if text.rstrip().endswith("?"):
        hits = store.search(namespace, query=text, limit=1)
        answer = hits[0].value["text"] if hits else "I don't know yet."
        return {"messages": [AIMessage(f"From memory: {answer}")]}
    store.put(namespace, str(uuid.uuid4()), {"text": text})
    return {"messages": [AIMessage("Noted.")]}


builder = StateGraph(MessagesState)
builder.add_node("memory", remember_or_answer)
builder.add_edge(START, "memory")
graph = builder.compile(store=store)

config: RunnableConfig = {"configurable": {"user_id": "bob"}}
for text in ["My dog is called Rex.", "I deploy on Kubernetes.", "What is the name of my pet?"]:
    reply = graph.invoke({"messages": [("user", text)]}, config)["messages"][-1].content
    print(f"{text:<30} -> {reply}")
assert "Rex" in reply

other = graph.invoke({"messages": [("user", "What is the name of my pet?")]}, {"configurable": {"user_id": "carol"}})
print("carol asks the same:", other["messages"][-1].content)

# %% [markdown]
# ## Time to live (TTL)
#
# With `ttl={"default_ttl": minutes}` items expire; `put(..., ttl=...)` overrides it per
# item. Expired items are never returned, even before `sweep_ttl()` deletes them (a
# background sweeper can do that with `sweep_interval_minutes`). Here an item lives for
# one second.

# %%
import time

sessions = ChromaStore.persistent(workdir / "store", collection="sessions", ttl={"default_ttl": 60})
sessions.put(("sessions", "alice"), "cart", {"text": "2 books in the cart"})             # 60 minutes
sessions.put(("sessions", "alice"), "otp", {"text": "one-time code 481516"}, ttl=1 / 60)  # 1 second
print("now:", sorted(r.key for r in sessions.search(("sessions", "alice"))))
time.sleep(1.5)
print("after 1.5 s:", sorted(r.key for r in sessions.search(("sessions", "alice"))))
print("swept:", sessions.sweep_ttl(), "expired item(s)")
assert sessions.get(("sessions", "alice"), "otp") is None

# %% [markdown]
# ## Persistence
#
# Close the store and open the same folder again: items and vectors are still there.

# %%
store.close()
reopened = ChromaStore.persistent(workdir / "store")
print([r.key for r in reopened.search(alice, query="coffee", limit=1)])
reopened.close()
sessions.close()
scratch.cleanup()  # the notebook's folder goes; nothing is left in the temp dir

# %% [markdown]
# **Next:** notebook 2 records agent runs as *episodes* and replays the ones that matter;
# notebook 5 runs the same code against a Chroma server.
