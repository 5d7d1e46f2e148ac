# %% [markdown]
# # 3 · Conversation memory: window, summary, entities, threads and user facts
#
# **What this notebook shows:** the memory that keeps a conversation manageable — a
# **sliding window** within a token budget, a running **summary** of older turns, and
# **entities** (people, companies, tools) extracted and remembered per user — plus
# **per-user threads** saved by the SQLite checkpointer (resume a session after a restart;
# two users never see each other's state) and **cross-session user facts**.
#
# No LLM is needed: without a model the nodes use honest offline fallbacks (an extractive
# summary, a rule-based entity extractor); pass any LangChain chat model to use it instead.

# %%
import itertools
import tempfile
from pathlib import Path

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_episodic import ChromaStore, HashEmbeddings

scratch = tempfile.TemporaryDirectory(prefix="episodic-conversation-")  # removed at the end
workdir = Path(scratch.name)
store = ChromaStore.persistent(workdir / "store", index={"dims": 64, "embed": HashEmbeddings(64)})

# %% [markdown]
# ## The sliding window
#
# `window_messages` keeps the newest messages that fit the budget. The system prompt is
# always kept, the window starts on a human message, and an AI message with tool calls is
# never separated from its tool results. (`sliding_window_node` does the same inside a
# graph, removing the dropped messages from the state.)

# %%
from langgraph_episodic.graph import window_messages

conversation = [
    SystemMessage("You are a helpful assistant."),
    HumanMessage("Hi, I'm Alice and I work at ACME."),
    AIMessage("Hello Alice! How can I help?"),
    HumanMessage("What's the weather in Berlin?"),
    AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Berlin"}, "id": "call-1"}]),
    ToolMessage("12 degrees, cloudy", tool_call_id="call-1"),
    AIMessage("It is 12 degrees and cloudy in Berlin."),
    HumanMessage("And tomorrow?"),
]
for budget in (200, 100, 50):
    kept = window_messages(conversation, max_tokens=budget)
    print(f"budget {budget:>4}: {[type(m).__name__.replace('Message', '') for m in kept]}")

# %% [markdown]
# ## A graph with window, summary and entities, in per-user threads
#
# `build_memory_graph` wires the memory nodes around an agent (here a fake chat model that
# replies from a script). The graph is compiled with the store and a SQLite checkpointer;
# `thread_config(user, session)` gives each session its own thread and tells the nodes
# whose memory to use.

# %%
from langgraph_episodic import WindowOptions, build_memory_graph, open_checkpointer, thread_config

replies = itertools.cycle(["Noted.", "Good to know.", "Thanks, I'll remember that.", "Understood."])
alice_says = [
    "I work at ACME in Berlin.",
    "My manager is Dana Scully.",
    "We deploy everything with Kubernetes.",
    "Our main database is Postgres.",
    "I am learning Rust in my spare time.",
    "Next week I present the roadmap to the board.",
]

with open_checkpointer(workdir / "checkpoints.sqlite") as saver:
    graph = build_memory_graph(GenericFakeChatModel(messages=replies), store=store, checkpointer=saver,
                               episodes=False, window=WindowOptions(max_tokens=2000))
    monday = thread_config("alice", "monday")
    for text in alice_says:
        state = graph.invoke({"messages": [("user", text)]}, monday)

print(len(state["messages"]), "messages kept in the thread; the summary covers the rest:")
print(state["summary"])
print()
for name, description in sorted(state["entities"].items()):
    print(f"- {name}: {description}")
assert "ACME" in state["entities"] and state["summary"]

# %% [markdown]
# ## Sessions survive restarts; users stay apart
#
# The checkpointer keeps every thread on disk. A new process (here: a new graph over the
# same file) lists Alice's sessions and resumes the newest. A new session starts with an
# empty conversation but the entities come back from the store; Bob sees none of it.

# %%
from langgraph_episodic.graph import list_sessions, resume_config

with open_checkpointer(workdir / "checkpoints.sqlite") as saver:
    graph = build_memory_graph(GenericFakeChatModel(messages=replies), store=store, checkpointer=saver,
                               episodes=False)
    print("alice's sessions:", [s.session_id for s in list_sessions(saver, "alice")])
    resumed = graph.get_state(resume_config(saver, "alice"))
    print("resumed the monday thread with", len(resumed.values["messages"]), "messages")

    tuesday = graph.invoke({"messages": [("user", "Where do I work?")]}, thread_config("alice", "tuesday"))
    print("new session, remembered entities:", sorted(tuesday["entities"]))
    bob = graph.invoke({"messages": [("user", "Hello, I'm Bob.")]}, thread_config("bob", "monday"))
    print("bob's entities:", sorted(bob.get("entities", {})))
    print("bob's sessions:", [s.session_id for s in list_sessions(saver, "bob")])
assert "ACME" in tuesday["entities"] and "ACME" not in bob.get("entities", {})

# %% [markdown]
# ## Cross-session user facts
#
# `UserProfiles` keeps short facts about a user under `("user_profiles", user_id)`: saving
# the same fact twice keeps one, trivia is refused, and `as_prompt` renders them for a
# system prompt in any later session.

# %%
from langgraph_episodic.graph import UserProfiles

profiles = UserProfiles(store)
profiles.save("alice", "Prefers Python for data analysis")
profiles.save("alice", "prefers python for   data analysis")  # the same fact: kept once
profiles.save("alice", "Works in the Berlin office")
print("refused trivia:", profiles.save("alice", "ok thanks") is None)
facts = profiles.list("alice")
print(UserProfiles.as_prompt(facts))
profiles.delete("alice", facts[0].key)
print(len(profiles.list("alice")), "fact left;", len(profiles.list("bob")), "for bob")

# %% [markdown]
# ## Memory for `create_agent`: `EpisodicMemoryMiddleware`
#
# Agents built with LangChain's `create_agent` take memory as middleware. Before each model
# call `EpisodicMemoryMiddleware` trims and summarises (whole turns leave, folded into the
# running summary first; the request always starts with the user's message), and it adds the
# summary, the user's entities, profile facts and saved memories to the system message. After
# the agent it extracts entities. The user id comes from the run's config (or context), never
# from the model. Here a scripted chat model plays the agent; session 2 remembers session 1.

# %%
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_episodic import EpisodicMemoryMiddleware

seen_prompts: list[str] = []


def scripted_agent(messages: list[BaseMessage]) -> str:
    seen_prompts.append(str(messages[0].content))  # the system message the model received
    return "ACME in Berlin, as you told me." if "Where" in str(messages[-1].content) else "Noted."


class ScriptedChat(GenericFakeChatModel):
    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(scripted_agent(messages)))])


agent = create_agent(
    ScriptedChat(messages=iter([])),
    tools=[],
    system_prompt="You are a helpful assistant.",
    middleware=[EpisodicMemoryMiddleware(store=store, trigger=("messages", 6), keep=("messages", 2))],
    store=store,
    checkpointer=InMemorySaver(),
)
for text in ["I am Carol and I work at ACME.", "We use LangGraph for our agents.", "I live in Berlin."]:
    agent.invoke({"messages": [("user", text)]}, thread_config("carol", "session-1"))

answer = agent.invoke({"messages": [("user", "Where do I work?")]}, thread_config("carol", "session-2"))
print(answer["messages"][-1].content)
print(seen_prompts[-1])
assert "ACME" in seen_prompts[-1] and len(answer["messages"]) == 2  # a new thread, remembered
store.close()
scratch.cleanup()  # the notebook's folder goes; nothing is left in the temp dir
