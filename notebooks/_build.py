"""Generate the walkthrough notebooks from the cell texts below.

The ``.ipynb`` files are written by this script, without outputs, so they are easy to review and
to change: edit the cells here, run ``python notebooks/_build.py``, commit both. Every notebook is
executed offline by ``tests/docs/test_notebooks.py``; ``python notebooks/_build.py --check`` fails
when a committed notebook differs from what this script writes.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

Cell = tuple[str, str]


def md(text: str) -> Cell:
    """A markdown cell."""
    return ("markdown", textwrap.dedent(text).strip())


def code(text: str) -> Cell:
    """A code cell."""
    return ("code", textwrap.dedent(text).strip())


# --------------------------------------------------------------------------------------------
# 1. Quickstart
# --------------------------------------------------------------------------------------------

QUICKSTART = [
    md(
        """
        # 1 · Quickstart: a Chroma store for LangGraph

        **What this notebook shows:** `ChromaStore`, a LangGraph `BaseStore` on an embedded Chroma
        database, used (1) directly — put, get, semantic search, filters, namespaces — and
        (2) inside a LangGraph graph, where nodes read and write it through the runtime; then
        (3) items that expire (TTL) and (4) that everything survives a restart.

        It runs offline: the embedding model (all-MiniLM-L6-v2) ships inside a Python package.
        Loading it takes a few seconds the first time.
        """
    ),
    code(
        """
        import tempfile
        from pathlib import Path

        from langgraph_episodic import ChromaStore

        workdir = Path(tempfile.mkdtemp(prefix="episodic-quickstart-"))
        # In your app: ChromaStore.persistent() keeps everything in ./.episodic
        store = ChromaStore.persistent(workdir / "store")
        store
        """
    ),
    md(
        """
        ## Put and get

        Items live in **namespaces** (tuples of labels, e.g. one per user) under a **key**; the
        value is a JSON-like dict. The store stamps `created_at` and `updated_at`.
        """
    ),
    code(
        """
        alice = ("users", "alice")
        store.put(alice, "coffee", {"text": "Alice drinks her espresso without sugar", "kind": "preference", "priority": 2})
        store.put(alice, "editor", {"text": "Alice writes Python in Neovim", "kind": "preference", "priority": 1})
        store.put(alice, "deadline", {"text": "The billing migration is due on Friday", "kind": "task", "priority": 3})
        store.put(("users", "alice2"), "coffee", {"text": "Alice2 only drinks green tea", "kind": "preference", "priority": 1})

        item = store.get(alice, "coffee")
        print(item.value["text"], "| created", item.created_at.isoformat(timespec="seconds"))
        """
    ),
    md(
        """
        ## Semantic search

        `search(namespace_prefix, query=...)` ranks by meaning, not only by shared words: the
        question below shares no word with the answer. Scores are higher for better matches (the
        default hybrid mode fuses meaning and keywords; `search_mode="dense"` gives plain cosine
        similarity).
        """
    ),
    code(
        """
        results = store.search(alice, query="How does she take her coffee?", limit=3)
        for r in results:
            print(f"{r.score:.3f}  {r.key:<9} {r.value['text']}")
        assert results[0].key == "coffee"
        """
    ),
    md(
        """
        ## Filters

        `filter` matches value fields exactly or with `$eq $ne $gt $gte $lt $lte`; several keys
        are ANDed. It combines with a query.
        """
    ),
    code(
        """
        preferences = store.search(alice, filter={"kind": "preference"})
        urgent = store.search(alice, filter={"priority": {"$gte": 2}})
        urgent_tasks = store.search(alice, query="what is due soon?", filter={"kind": "task", "priority": {"$gt": 2}})
        print("preferences:", sorted(r.key for r in preferences))
        print("priority >= 2:", sorted(r.key for r in urgent))
        print("urgent tasks:", [r.key for r in urgent_tasks])
        assert sorted(r.key for r in preferences) == ["coffee", "editor"]
        """
    ),
    md(
        """
        ## Namespaces match whole labels

        A search under `("users", "alice")` never sees `("users", "alice2")`: namespaces are
        compared label by label, so one user cannot read another's items by a prefix trick.
        """
    ),
    code(
        """
        print(store.list_namespaces(prefix=("users",)))
        seen = {tuple(r.namespace) for r in store.search(alice, query="tea", limit=10)}
        print("namespaces seen from alice:", seen)
        assert seen == {alice}
        """
    ),
    md(
        """
        ## The store in a graph

        Compile a graph with `store=...` and every node can reach it through its `runtime`. The
        user id comes from `config["configurable"]`, never from the model or the message text.
        This node remembers every statement and answers questions from memory.
        """
    ),
    code(
        """
        import uuid

        from langchain_core.messages import AIMessage
        from langgraph.graph import START, MessagesState, StateGraph
        from langgraph.runtime import Runtime


        def remember_or_answer(state: MessagesState, config, runtime: Runtime) -> dict:
            user = config["configurable"]["user_id"]
            namespace = ("memories", user)
            text = state["messages"][-1].content
            if text.rstrip().endswith("?"):
                hits = runtime.store.search(namespace, query=text, limit=1)
                answer = hits[0].value["text"] if hits else "I don't know yet."
                return {"messages": [AIMessage(f"From memory: {answer}")]}
            runtime.store.put(namespace, str(uuid.uuid4()), {"text": text})
            return {"messages": [AIMessage("Noted.")]}


        builder = StateGraph(MessagesState)
        builder.add_node("memory", remember_or_answer)
        builder.add_edge(START, "memory")
        graph = builder.compile(store=store)

        config = {"configurable": {"user_id": "bob"}}
        for text in ["My dog is called Rex.", "I deploy on Kubernetes.", "What is the name of my pet?"]:
            reply = graph.invoke({"messages": [("user", text)]}, config)["messages"][-1].content
            print(f"{text:<30} -> {reply}")
        assert "Rex" in reply

        other = graph.invoke({"messages": [("user", "What is the name of my pet?")]}, {"configurable": {"user_id": "carol"}})
        print("carol asks the same:", other["messages"][-1].content)
        """
    ),
    md(
        """
        ## Time to live (TTL)

        With `ttl={"default_ttl": minutes}` items expire; `put(..., ttl=...)` overrides it per
        item. Expired items are never returned, even before `sweep_ttl()` deletes them (a
        background sweeper can do that with `sweep_interval_minutes`). Here an item lives for
        one second.
        """
    ),
    code(
        """
        import time

        sessions = ChromaStore.persistent(workdir / "store", collection="sessions", ttl={"default_ttl": 60})
        sessions.put(("sessions", "alice"), "cart", {"text": "2 books in the cart"})             # 60 minutes
        sessions.put(("sessions", "alice"), "otp", {"text": "one-time code 481516"}, ttl=1 / 60)  # 1 second
        print("now:", sorted(r.key for r in sessions.search(("sessions", "alice"))))
        time.sleep(1.5)
        print("after 1.5 s:", sorted(r.key for r in sessions.search(("sessions", "alice"))))
        print("swept:", sessions.sweep_ttl(), "expired item(s)")
        assert sessions.get(("sessions", "alice"), "otp") is None
        """
    ),
    md(
        """
        ## Persistence

        Close the store and open the same folder again: items and vectors are still there.
        """
    ),
    code(
        """
        store.close()
        reopened = ChromaStore.persistent(workdir / "store")
        print([r.key for r in reopened.search(alice, query="coffee", limit=1)])
        reopened.close()
        sessions.close()
        """
    ),
    md(
        """
        **Next:** notebook 2 records agent runs as *episodes* and replays the ones that matter;
        notebook 5 runs the same code against a Chroma server.
        """
    ),
]


# --------------------------------------------------------------------------------------------
# 2. Experience replay
# --------------------------------------------------------------------------------------------

REPLAY = [
    md(
        """
        # 2 · Experience replay: episodes that teach the agent

        **What this notebook shows:** how an agent's past runs become **episodes**, how the memory
        decides which of them matter for a new task (**replay priority** from similarity,
        recency, reward and outcome, with every component visible), the **replay prompt** the
        agent gets, **skill profiles** per task category, **strategy selection** from experience
        (a greedy rule and an exploring Thompson-sampling policy), and **learning curves** of a
        simulated agent with and without memory, with plots.

        It uses the deterministic `HashEmbeddings` (word overlap, instant) and a fixed clock, so
        every number below is reproducible.
        """
    ),
    code(
        """
        %matplotlib inline
        import random

        import matplotlib.pyplot as plt

        from langgraph_episodic import (
            ChromaStore, Episode, EpisodicMemory, Feedback, HashEmbeddings, OutcomeStatus,
            TaskCategory, TaskDescription,
        )

        NOW = 1_700_000_000.0          # a fixed "now" (epoch seconds) for reproducible recency
        HOUR, DAY = 3600.0, 86400.0

        store = ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})
        memory = EpisodicMemory.for_user(store, "alice", clock=lambda: NOW)
        memory.namespace
        """
    ),
    md(
        """
        ## Episodes

        An `Episode` is one run of the agent: the task (description, category, complexity), the
        solution, feedback (a reward in [0, 1], optionally test counts), the outcome and the
        strategy used. Records are frozen and validated; each is stored as a JSON-safe dict.
        """
    ),
    code(
        """
        task = TaskDescription("Fix the crash in the date parser on empty input", TaskCategory.DEBUGGING, complexity=0.4)
        episode = Episode(
            "ep-000", task, solution="Return None for empty strings before parsing",
            feedback=Feedback(0.9, "all tests pass", tests_passed=12, tests_total=12),
            outcome=OutcomeStatus.SUCCESS, timestamp=NOW - 2 * HOUR, strategy_used="defensive",
        )
        print(episode.to_dict())
        assert Episode.from_dict(episode.to_dict()) == episode

        try:
            Feedback(reward=1.5)
        except ValueError as exc:
            print("rejected:", exc)
        """
    ),
    code(
        """
        S, P, F = OutcomeStatus.SUCCESS, OutcomeStatus.PARTIAL, OutcomeStatus.FAILURE
        history = [  # description, category, complexity, strategy, outcome, reward, age
            ("Fix the crash in the date parser on empty input", TaskCategory.DEBUGGING, 0.4, "defensive", S, 0.9, 2 * HOUR),
            ("Fix the timezone bug in the date parser", TaskCategory.DEBUGGING, 0.6, "iterative", P, 0.5, 3 * DAY),
            ("The date parser fails on leap years; fix it", TaskCategory.DEBUGGING, 0.5, "conservative", F, 0.1, 1 * DAY),
            ("Add tests for the edge cases of the date parser", TaskCategory.TESTING, 0.3, "example_driven", S, 0.8, 5 * HOUR),
            ("Refactor the billing job into smaller functions", TaskCategory.REFACTORING, 0.7, "iterative", S, 0.85, 7 * DAY),
            ("Design the plugin interface of the exporter", TaskCategory.ARCHITECTURE, 0.9, "exploratory", F, 0.2, 12 * HOUR),
            ("Fix the off-by-one error in the pagination helper", TaskCategory.DEBUGGING, 0.3, "defensive", S, 0.95, 30 * DAY),
        ]
        for i, (text, category, complexity, strategy, outcome, reward, age) in enumerate(history):
            memory.record(Episode(
                f"ep-{i:03d}", TaskDescription(text, category, complexity), solution=f"(solution of: {text})",
                feedback=Feedback(reward, "tests pass" if outcome is S else "tests fail"),
                outcome=outcome, timestamp=NOW - age, strategy_used=strategy,
            ))
        print(memory.count(), "episodes;", "short-term window:", [e.episode_id for e in memory.short_term()])
        """
    ),
    md(
        """
        ## Recency: exponential decay with a half-life

        An episode's recency weight halves every `half_life` seconds (one day by default). A
        `floor` keeps old but excellent experience from vanishing completely.
        """
    ),
    code(
        """
        from langgraph_episodic import decay_factor

        for label, age in [("0 h", 0), ("12 h", 12 * HOUR), ("1 day", DAY), ("2 days", 2 * DAY), ("1 week", 7 * DAY)]:
            print(f"{label:>7}: {decay_factor(NOW - age, NOW):.3f}")

        days = [d / 10 for d in range(0, 71)]
        fig, ax = plt.subplots(figsize=(7, 3))
        for half_life in (0.5, 1, 3):
            ax.plot(days, [decay_factor(NOW - d * DAY, NOW, half_life * DAY) for d in days], label=f"half-life {half_life} d")
        ax.plot(days, [decay_factor(NOW - d * DAY, NOW, DAY, floor=0.2) for d in days], "--", label="1 d, floor 0.2")
        ax.set_xlabel("age (days)")
        ax.set_ylabel("recency weight")
        ax.legend()
        plt.show()
        """
    ),
    md(
        """
        ## Recall: priority, and why

        `recall` finds `top_k × candidate_factor` candidates by similarity, then ranks them by
        **priority** = weighted sum of similarity, recency, reward and an outcome score
        (success 1, partial 0.5, failure 0). Every result carries its components, so you can see
        why an episode ranks where it does.
        """
    ),
    code(
        """
        query = TaskDescription("The date parser crashes on an empty string", TaskCategory.DEBUGGING, 0.4)
        results = memory.recall(query, top_k=4)
        print(f"{'priority':>8} {'simil.':>6} {'recency':>7} {'reward':>6} {'outcome':>7}  {'strategy':<14} task")
        for r in results:
            c = r.components
            print(f"{r.priority:8.2f} {c.similarity:6.2f} {c.recency:7.2f} {c.reward:6.2f} {c.outcome:7.2f}  {r.episode.strategy_used:<14} {r.episode.task.description}")
        print("weights used:", results[0].components.weights)
        assert results[0].episode.episode_id == "ep-000"
        """
    ),
    md(
        """
        The weights follow the memory's size: a young memory leans on similarity, a mature one on
        recency (recent episodes say most about the agent's current skill). Pass your own
        `ReplayWeights` to change the ranking, e.g. to favour what happened lately:
        """
    ),
    code(
        """
        from langgraph_episodic import ReplayWeights, weights_for_size

        for n in (5, 50, 500):
            print(f"{n:>4} episodes ->", weights_for_size(n))

        lately = ReplayWeights(similarity=0.2, recency=0.6, reward=0.1, outcome_bonus=0.1)
        print([r.episode.episode_id for r in memory.recall(query, top_k=4, weights=lately)])
        """
    ),
    md(
        """
        ## The replay prompt

        `build_replay_context` aggregates the recalled episodes (strategies used, average reward,
        success rate) and `format_replay_prompt` renders them for the agent, within a character
        budget. Recalled text is fenced and marked as data, not instructions, so an old
        solution cannot smuggle instructions into today's prompt.
        """
    ),
    code(
        """
        from langgraph_episodic import build_replay_context, format_replay_prompt

        print(format_replay_prompt(build_replay_context(results), query, max_chars=1200))
        """
    ),
    md("## Skill profiles: where is the agent strong or weak?"),
    code(
        """
        from langgraph_episodic import identify_weak_skills

        profiles = memory.skill_profiles()
        for category, profile in sorted(profiles.items(), key=lambda kv: kv[0].value):
            per_strategy = {name: f"{s.successes}/{s.attempts}" for name, s in profile.strategies.items()}
            print(f"{category.value:<13} {profile.attempts} attempts, {profile.success_rate:.0%} success  {per_strategy}")
        print("weak categories (< 50%):", [c.value for c in identify_weak_skills(profiles)])
        """
    ),
    md(
        """
        ## Choosing a strategy from experience

        The **greedy** policy reuses a strategy that succeeded on similar tasks (success rate
        > 0.6), gives a weak category the "defensive" strategy, and otherwise falls back on a
        complexity rule. It can lock in on the first strategy that worked. The **Thompson**
        policy samples each strategy's success rate from its record, so it keeps trying
        promising alternatives while mostly choosing the best.
        """
    ),
    code(
        """
        from langgraph_episodic import select_strategy

        choice = select_strategy(query, memory)
        print(f"greedy: {choice.name} ({choice.reason})")
        picks = [select_strategy(query, memory, policy="thompson", rng=random.Random(i)).name for i in range(12)]
        print("thompson, 12 draws:", picks)
        """
    ),
    md(
        """
        ## Learning curves (a SIMULATED agent)

        To see learning we need many episodes, so we simulate them: three task categories, each
        with a hidden best strategy that succeeds 85% of the time (others 30%). The same task
        stream, with the same random draws, is played with no memory (the complexity rule
        alone), with the greedy policy and with the Thompson policy. Each policy gets its own
        memory, here in LangGraph's `InMemoryStore`: the episodic memory works on any store.
        """
    ),
    code(
        """
        from langgraph.store.memory import InMemoryStore

        from langgraph_episodic import complexity_strategy, compute_learning_curve, plot_learning_curve

        hidden_best = {TaskCategory.DEBUGGING: "defensive", TaskCategory.TESTING: "example_driven", TaskCategory.REFACTORING: "conservative"}
        stream_rng = random.Random(0)
        stream = [(stream_rng.choice(list(hidden_best)), stream_rng.random(), stream_rng.random()) for _ in range(150)]


        def play(policy: str) -> list[Episode]:
            mem = EpisodicMemory.for_user(InMemoryStore(index={"dims": 64, "embed": HashEmbeddings(64)}), policy)
            policy_rng = random.Random(1)
            played = []
            for i, (category, complexity, draw) in enumerate(stream):
                task = TaskDescription(f"{category.value} task number {i}", category, complexity)
                now = NOW + i * HOUR
                if policy == "no memory":
                    strategy = complexity_strategy(task)
                else:
                    strategy = select_strategy(task, mem, now, policy=policy, rng=policy_rng).name
                success = draw < (0.85 if strategy == hidden_best[category] else 0.30)
                ep = Episode(f"{i}", task, "(simulated)", Feedback(1.0 if success else 0.0),
                             S if success else F, timestamp=now, strategy_used=strategy)
                mem.record(ep)
                played.append(ep)
            return played


        curves = {policy: compute_learning_curve(play(policy), window=25) for policy in ("no memory", "greedy", "thompson")}
        for policy, curve in curves.items():
            print(f"{policy:<10} rolling success at the end: {curve[-1].rolling_success_rate:.0%}")
        plot_learning_curve(curves, title="Rolling success (window 25), simulated tasks")
        """
    ),
    code(
        """
        assert curves["thompson"][-1].rolling_success_rate > curves["no memory"][-1].rolling_success_rate
        store.close()
        """
    ),
    md(
        """
        **Next:** notebook 3 wires episodic memory into a graph with conversation memory;
        `langgraph-episodic demo` runs the full agent on a longer simulated task stream.
        """
    ),
]


# --------------------------------------------------------------------------------------------
# 3. Conversation memory
# --------------------------------------------------------------------------------------------

CONVERSATION = [
    md(
        """
        # 3 · Conversation memory: window, summary, entities, threads and user facts

        **What this notebook shows:** the memory that keeps a conversation manageable — a
        **sliding window** within a token budget, a running **summary** of older turns, and
        **entities** (people, companies, tools) extracted and remembered per user — plus
        **per-user threads** saved by the SQLite checkpointer (resume a session after a restart;
        two users never see each other's state) and **cross-session user facts**.

        No LLM is needed: without a model the nodes use honest offline fallbacks (an extractive
        summary, a rule-based entity extractor); pass any LangChain chat model to use it instead.
        """
    ),
    code(
        """
        import itertools
        import tempfile
        from pathlib import Path

        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

        from langgraph_episodic import ChromaStore, HashEmbeddings

        workdir = Path(tempfile.mkdtemp(prefix="episodic-conversation-"))
        store = ChromaStore.persistent(workdir / "store", index={"dims": 64, "embed": HashEmbeddings(64)})
        """
    ),
    md(
        """
        ## The sliding window

        `window_messages` keeps the newest messages that fit the budget. The system prompt is
        always kept, the window starts on a human message, and an AI message with tool calls is
        never separated from its tool results. (`sliding_window_node` does the same inside a
        graph, removing the dropped messages from the state.)
        """
    ),
    code(
        """
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
        """
    ),
    md(
        """
        ## A graph with window, summary and entities, in per-user threads

        `build_memory_graph` wires the memory nodes around an agent (here a fake chat model that
        replies from a script). The graph is compiled with the store and a SQLite checkpointer;
        `thread_config(user, session)` gives each session its own thread and tells the nodes
        whose memory to use.
        """
    ),
    code(
        """
        from langgraph_episodic import build_memory_graph, open_checkpointer, thread_config

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
                                       episodes=False, window_tokens=2000)
            monday = thread_config("alice", "monday")
            for text in alice_says:
                state = graph.invoke({"messages": [("user", text)]}, monday)

        print(len(state["messages"]), "messages kept in the thread; the summary covers the rest:")
        print(state["summary"])
        print()
        for name, description in sorted(state["entities"].items()):
            print(f"- {name}: {description}")
        assert "ACME" in state["entities"] and state["summary"]
        """
    ),
    md(
        """
        ## Sessions survive restarts; users stay apart

        The checkpointer keeps every thread on disk. A new process (here: a new graph over the
        same file) lists Alice's sessions and resumes the newest. A new session starts with an
        empty conversation but the entities come back from the store; Bob sees none of it.
        """
    ),
    code(
        """
        from langgraph_episodic import list_sessions, resume_config

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
        """
    ),
    md(
        """
        ## Cross-session user facts

        `UserProfiles` keeps short facts about a user under `("user_profiles", user_id)`: saving
        the same fact twice keeps one, trivia is refused, and `as_prompt` renders them for a
        system prompt in any later session.
        """
    ),
    code(
        """
        from langgraph_episodic import UserProfiles

        profiles = UserProfiles(store)
        profiles.save("alice", "Prefers Python for data analysis")
        profiles.save("alice", "prefers python for   data analysis")  # the same fact: kept once
        profiles.save("alice", "Works in the Berlin office")
        print("refused trivia:", profiles.save("alice", "ok thanks") is None)
        facts = profiles.list("alice")
        print(UserProfiles.as_prompt(facts))
        profiles.delete("alice", facts[0].key)
        print(len(profiles.list("alice")), "fact left;", len(profiles.list("bob")), "for bob")
        store.close()
        """
    ),
]


# --------------------------------------------------------------------------------------------
# 4. Memory tools in an agent
# --------------------------------------------------------------------------------------------

TOOLS = [
    md(
        """
        # 4 · Memory tools in an agent: `memory_speichern` and `memory_abrufen`

        **What this notebook shows:** an agent built with LangChain's `create_agent` that decides
        itself what to remember (`memory_speichern`, "save to memory") and when to look it up
        (`memory_abrufen`, "recall from memory"). The tools find the user from
        `config["configurable"]`, never from the model's arguments, so one user cannot reach
        another's memories. A session saves a fact; a later session (a new thread) recalls it.

        Offline, a small rule-based fake stands in for the tool-calling LLM; the two lines that
        switch to a real model are shown below. The packaged embedding model is used, since
        finding the right memory for a question is the point here.
        """
    ),
    code(
        """
        from langchain_core.language_models import BaseChatModel
        from langchain_core.messages import AIMessage, ToolMessage
        from langchain_core.outputs import ChatGeneration, ChatResult


        class RuleBasedToolCaller(BaseChatModel):
            \"\"\"Offline stand-in for a tool-calling LLM: questions are looked up, statements saved,
            and a tool's answer is passed on to the user.\"\"\"

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
        """
    ),
    md(
        """
        To use a real model instead, replace the last line with these two (any provider that
        supports tool calling; set its API key first):

        ```python
        from langchain.chat_models import init_chat_model
        model = init_chat_model("openai:gpt-4o-mini")
        ```
        """
    ),
    md(
        """
        ## The agent

        `create_agent(model, tools, store=...)` injects the store into the tools. The tools'
        German descriptions tell the model when to save (preferences, personal facts, goals)
        and when not to (small talk, confirmations).
        """
    ),
    code(
        """
        import tempfile
        from pathlib import Path

        from langchain.agents import create_agent
        from langgraph.checkpoint.memory import InMemorySaver

        from langgraph_episodic import ChromaStore, memory_abrufen, memory_speichern, thread_config

        store = ChromaStore.persistent(Path(tempfile.mkdtemp(prefix="episodic-tools-")) / "store")
        agent = create_agent(model, tools=[memory_speichern, memory_abrufen], store=store, checkpointer=InMemorySaver())
        print(memory_speichern.name, "-", memory_speichern.description[:160], "...")


        def say(user: str, session: str, text: str) -> str:
            result = agent.invoke({"messages": [("user", text)]}, thread_config(user, session))
            return result["messages"][-1].content
        """
    ),
    md("## Session 1: Alice tells the agent a few things"),
    code(
        """
        for text in ["Ich trinke meinen Kaffee schwarz, ohne Zucker.", "Mein Lieblingseditor ist Neovim.", "Danke!"]:
            print(f"alice: {text:<48} agent: {say('alice', 'session-1', text)}")
        """
    ),
    md(
        """
        The last message is small talk: the tool's relevance filter refused to store it, and the
        tool said so instead of pretending.

        ## Session 2 (a new thread): the agent recalls
        """
    ),
    code(
        """
        answer = say("alice", "session-2", "Wie trinke ich meinen Kaffee?")
        print("alice: Wie trinke ich meinen Kaffee?\\nagent:", answer)
        assert "schwarz" in answer

        bob = say("bob", "session-1", "Wie trinke ich meinen Kaffee?")
        print("\\nbob:   Wie trinke ich meinen Kaffee?\\nagent:", bob)
        assert "schwarz" not in bob
        """
    ),
    md(
        """
        ## English tools, other namespaces

        `create_memory_tools(locale="en")` gives `save_memory` / `recall_memory` with English
        descriptions; `namespace=`, `k=` and `ttl=` configure where and how long memories live.
        """
    ),
    code(
        """
        from langgraph_episodic import create_memory_tools

        save, recall = create_memory_tools(locale="en", store=store, namespace=("team_notes", "{user_id}"))
        config = {"configurable": {"user_id": "alice"}}
        print(save.invoke({"information": "The release freeze starts on Thursday"}, config))
        print(recall.invoke({"query": "When does the freeze start?"}, config))
        store.close()
        """
    ),
]


# --------------------------------------------------------------------------------------------
# 5. Scaling out
# --------------------------------------------------------------------------------------------

SCALING = [
    md(
        """
        # 5 · Scaling out: a Chroma server and a Postgres checkpointer

        **What this notebook shows:** the same store code running embedded and against a Chroma
        server (`chroma run`) that this notebook starts on 127.0.0.1 and stops at the end;
        several clients sharing one server; async use; moving an embedded store to the server
        with the command line's `export` / `import`; and a Postgres checkpointer for the graph's
        threads **where one is available** (otherwise SQLite, and the notebook says so).

        The deterministic `HashEmbeddings` stand in for the model here: this notebook is about
        where the data lives, not about retrieval quality.
        """
    ),
    code(
        """
        import atexit
        import shutil
        import socket
        import subprocess
        import sys
        import tempfile
        import time
        import urllib.request
        from pathlib import Path

        workdir = Path(tempfile.mkdtemp(prefix="episodic-scaling-"))


        def free_port() -> int:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                return sock.getsockname()[1]


        chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [chroma, "run", "--path", str(workdir / "server-data"), "--host", "127.0.0.1", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        atexit.register(server.terminate)  # stop it even if a later cell fails

        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"chroma run did not start (exit code {server.poll()})")
                time.sleep(0.2)
        print("Chroma server running at", url)
        """
    ),
    md(
        """
        ## The same code, embedded and on the server

        Only the constructor changes: `ChromaStore.persistent(path)` for an embedded database,
        `ChromaStore.http(host, port)` (or `ChromaStore.from_url(url)`) for a server.
        """
    ),
    code(
        """
        from langgraph_episodic import ChromaStore, HashEmbeddings

        index = {"dims": 64, "embed": HashEmbeddings(64)}


        def remember_and_recall(store) -> list[str]:
            ns = ("memories", "alice")
            store.put(ns, "lang", {"text": "Alice writes services in Go"})
            store.put(ns, "db", {"text": "Alice's team runs Postgres 16"})
            store.put(ns, "pet", {"text": "Alice has a cat named Miso"})
            return [r.key for r in store.search(ns, query="which database does the team run", limit=2)]


        embedded = ChromaStore.persistent(workdir / "embedded", index=index)
        on_server = ChromaStore.http("127.0.0.1", port, index=index)
        print("embedded:", remember_and_recall(embedded))
        print("server:  ", remember_and_recall(on_server))
        assert remember_and_recall(embedded) == remember_and_recall(on_server)
        """
    ),
    md(
        """
        ## Many clients, one server

        Every process (or machine) that opens the server sees the same items. Here a second
        client stands in for a second worker process.
        """
    ),
    code(
        """
        worker = ChromaStore.from_url(url, index=index)
        worker.put(("memories", "alice"), "editor", {"text": "Alice uses Helix as her editor"})
        print(on_server.get(("memories", "alice"), "editor").value)
        print("namespaces on the server:", on_server.list_namespaces())
        """
    ),
    md(
        """
        ## Async

        Every method has an `a*` twin (`aput`, `asearch`, ...), so an async graph
        (`graph.ainvoke`) does not block its event loop on the server round trips.
        """
    ),
    code(
        """
        import asyncio


        async def save_many(store, n: int) -> int:
            await asyncio.gather(*(store.aput(("memories", "bob"), f"note-{i}", {"text": f"note number {i}"}) for i in range(n)))
            return len(await store.asearch(("memories", "bob"), limit=100))


        print("bob's notes on the server:", await save_many(on_server, 20))
        """
    ),
    md(
        """
        ## Episodic memory on the server

        Everything built on the store works unchanged, e.g. `EpisodicMemory`.
        """
    ),
    code(
        """
        from langgraph_episodic import Episode, EpisodicMemory, Feedback, OutcomeStatus, TaskCategory, TaskDescription

        memory = EpisodicMemory.for_user(on_server, "alice")
        task = TaskDescription("Fix the timezone bug in the report scheduler", TaskCategory.DEBUGGING, 0.6)
        memory.record(Episode("ep-1", task, "Store times in UTC, convert on display", Feedback(0.9, "all tests pass"), OutcomeStatus.SUCCESS, timestamp=time.time(), strategy_used="defensive"))
        for result in memory.recall("scheduler shows the wrong hour"):
            print(f"{result.priority:.2f}", result.episode.strategy_used, "-", result.episode.task.description)
        """
    ),
    md(
        """
        ## Moving an embedded store to the server

        The command line exports every item as JSON lines (namespace, key, value, timestamps) and
        imports them elsewhere, recomputing the vectors. In a terminal:

        ```
        langgraph-episodic export store.jsonl --path ./.episodic
        langgraph-episodic import store.jsonl --url http://127.0.0.1:8000
        ```

        Here we call the same entry point from Python.
        """
    ),
    code(
        """
        from langgraph_episodic.cli.main import main as cli

        embedded.close()
        dump = workdir / "store.jsonl"
        assert cli(["export", str(dump), "--path", str(workdir / "embedded"), "--embeddings", "hash"]) == 0
        assert cli(["import", str(dump), "--url", url, "--collection", "migrated", "--embeddings", "hash"]) == 0
        assert cli(["stats", "--url", url, "--collection", "migrated"]) == 0
        """
    ),
    md(
        """
        ## A Postgres checkpointer, where one is available

        The graph's threads (its checkpoints) can live in Postgres instead of SQLite:
        `open_checkpointer("postgresql://...")` needs `pip install "langgraph-episodic[postgres]"`
        and a reachable database. Set `LANGGRAPH_EPISODIC_POSTGRES_URL` to use one here; without
        it this cell says why and uses SQLite, which the rest of the code does not notice.
        """
    ),
    code(
        """
        import importlib.util
        import os

        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

        from langgraph_episodic import build_memory_graph, open_checkpointer, thread_config


        def postgres_target() -> tuple[str | None, str]:
            pg_url = os.environ.get("LANGGRAPH_EPISODIC_POSTGRES_URL")
            if not pg_url:
                return None, "LANGGRAPH_EPISODIC_POSTGRES_URL is not set"
            if importlib.util.find_spec("langgraph.checkpoint.postgres") is None:
                return None, "langgraph-checkpoint-postgres is not installed"
            try:
                import psycopg

                psycopg.connect(pg_url, connect_timeout=3).close()
            except Exception as exc:
                return None, f"cannot connect to {pg_url}: {exc}"
            return pg_url, "Postgres is available"


        pg_url, reason = postgres_target()
        if pg_url is None:
            print(f"No Postgres checkpointer here ({reason}); using SQLite instead.")
        target = pg_url or workdir / "checkpoints.sqlite"

        with open_checkpointer(target) as saver:
            llm = GenericFakeChatModel(messages=iter(["Noted: UTC everywhere.", "You asked about UTC."]))
            graph = build_memory_graph(llm, store=on_server, checkpointer=saver, summarize=False)
            config = thread_config("alice", "scaling-demo")
            graph.invoke({"messages": [("user", "Always store timestamps in UTC.")]}, config)
            state = graph.invoke({"messages": [("user", "What did I ask you before?")]}, config)
            print(type(saver).__name__, "holds", len(state["messages"]), "messages of thread", config["configurable"]["thread_id"])
        """
    ),
    md("## Stop the server"),
    code(
        """
        for store in (on_server, worker):
            store.close()
        server.terminate()
        server.wait(timeout=10)
        print("server stopped with exit code", server.returncode)
        """
    ),
]


NOTEBOOKS: dict[str, list[Cell]] = {
    "01_quickstart.ipynb": QUICKSTART,
    "02_experience_replay.ipynb": REPLAY,
    "03_conversation_memory.ipynb": CONVERSATION,
    "04_memory_tools.ipynb": TOOLS,
    "05_scaling_out.ipynb": SCALING,
}


def build(cells: list[Cell]) -> nbformat.NotebookNode:
    """A notebook (nbformat 4, Python 3 kernel, no outputs) from cells."""
    notebook = new_notebook(
        cells=[new_markdown_cell(src) if kind == "markdown" else new_code_cell(src) for kind, src in cells],
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
    )
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index:02d}"  # stable ids: regenerating gives identical files
    return notebook


def render(cells: list[Cell]) -> str:
    """The notebook's file text."""
    return nbformat.writes(build(cells)) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a notebook is out of date")
    args = parser.parse_args(argv)
    stale = []
    for name, cells in NOTEBOOKS.items():
        path = HERE / name
        text = render(cells)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
            print("wrote", path.relative_to(HERE.parent))
    if stale:
        print("out of date (run python notebooks/_build.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
