# %% [markdown]
# # 2 · Experience replay: episodes that teach the agent
#
# **What this notebook shows:** how an agent's past runs become **episodes**, how the memory
# decides which of them matter for a new task (**replay priority** from similarity,
# recency, reward and outcome, with every component visible), the **replay prompt** the
# agent gets, **skill profiles** per task category, **strategy selection** from experience
# (a greedy rule and an exploring Thompson-sampling policy), and **learning curves** of a
# simulated agent with and without memory, drawn as SVG.
#
# It uses the deterministic `HashEmbeddings` (word overlap, instant) and a fixed clock, so
# every number below is reproducible.

# %%
import random

from langgraph_episodic import (
    ChromaStore,
    Episode,
    EpisodicMemory,
    Feedback,
    HashEmbeddings,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)

NOW = 1_700_000_000.0          # a fixed "now" (epoch seconds) for reproducible recency
HOUR, DAY = 3600.0, 86400.0

store = ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})
memory = EpisodicMemory.for_user(store, "alice", clock=lambda: NOW)
memory.namespace

# %% [markdown]
# ## Episodes
#
# An `Episode` is one run of the agent: the task (description, category, complexity), the
# solution, feedback (a reward in [0, 1], optionally test counts), the outcome and the
# strategy used. Records are frozen and validated; each is stored as a JSON-safe dict.

# %%
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

# %%
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

# %% [markdown]
# ## Recency: exponential decay with a half-life
#
# An episode's recency weight halves every `half_life` seconds (one day by default). A
# `floor` keeps old but excellent experience from vanishing completely.

# %%
from langgraph_episodic.episodic import decay_factor

print(f"{'age':>7}  half-life 0.5 d   1 d   3 d   1 d, floor 0.2")
for label, age in [("0 h", 0), ("12 h", 12 * HOUR), ("1 day", DAY), ("2 days", 2 * DAY), ("1 week", 7 * DAY)]:
    weights = [decay_factor(NOW - age, NOW, half_life * DAY) for half_life in (0.5, 1, 3)]
    floored = decay_factor(NOW - age, NOW, DAY, floor=0.2)
    print(f"{label:>7}  {weights[0]:15.3f} {weights[1]:5.3f} {weights[2]:5.3f} {floored:16.3f}")

# %% [markdown]
# ## Recall: priority, and why
#
# `recall` finds `top_k × candidate_factor` candidates by similarity, then ranks them by
# **priority** = weighted sum of similarity, recency, reward and an outcome score
# (success 1, partial 0.5, failure 0). Every result carries its components, so you can see
# why an episode ranks where it does.

# %%
query = TaskDescription("The date parser crashes on an empty string", TaskCategory.DEBUGGING, 0.4)
results = memory.recall(query, top_k=4)
print(f"{'priority':>8} {'simil.':>6} {'recency':>7} {'reward':>6} {'outcome':>7}  {'strategy':<14} task")
for r in results:
    c = r.components
    assert c is not None
    print(f"{r.priority:8.2f} {c.similarity:6.2f} {c.recency:7.2f} {c.reward:6.2f} {c.outcome:7.2f}  {r.episode.strategy_used:<14} {r.episode.task.description}")
assert results[0].components is not None
print("weights used:", results[0].components.weights)
assert results[0].episode.episode_id == "ep-000"

# %% [markdown]
# The weights follow the memory's size: a young memory leans on similarity, a mature one on
# recency (recent episodes say most about the agent's current skill). Pass your own
# `ReplayWeights` to change the ranking, e.g. to favour what happened lately:

# %%
from langgraph_episodic.episodic import ReplayWeights, weights_for_size

for n in (5, 50, 500):
    print(f"{n:>4} episodes ->", weights_for_size(n))

lately = ReplayWeights(similarity=0.2, recency=0.6, reward=0.1, outcome_bonus=0.1)
print([r.episode.episode_id for r in memory.recall(query, top_k=4, weights=lately)])

# %% [markdown]
# ## The replay prompt
#
# `build_replay_context` aggregates the recalled episodes (strategies used, average reward,
# success rate) and `format_replay_prompt` renders them for the agent, within a character
# budget. Recalled text is fenced and marked as data, not instructions, so an old
# solution cannot smuggle instructions into today's prompt.

# %%
from langgraph_episodic import build_replay_context, format_replay_prompt

print(format_replay_prompt(build_replay_context(results), query, max_chars=1200))

# %% [markdown]
# ## Skill profiles: where is the agent strong or weak?

# %%
from langgraph_episodic.episodic import identify_weak_skills

profiles = memory.skill_profiles()
for category, profile in sorted(profiles.items(), key=lambda kv: kv[0].value):
    per_strategy = {name: f"{s.successes}/{s.attempts}" for name, s in profile.strategies.items()}
    print(f"{category.value:<13} {profile.attempts} attempts, {profile.success_rate:.0%} success  {per_strategy}")
print("weak categories (< 50%):", [c.value for c in identify_weak_skills(profiles)])

# %% [markdown]
# ## Choosing a strategy from experience
#
# The **Thompson** policy (the default) samples each strategy's success rate from its
# record, so it keeps trying promising alternatives while mostly choosing the best. The
# seed's **greedy** policy (`policy="greedy"`) reuses a strategy that succeeded on similar
# tasks (success rate > 0.6), gives a weak category the "defensive" strategy, and otherwise
# falls back on a complexity rule; it can lock in on the first strategy that worked.
# Without an `rng` a Thompson choice is seeded from the task and the evidence, so the same
# memory gives the same choice; a seeded `random.Random` gives a stream of draws.
#
# Both weigh each past episode (`EvidenceDecay`): by age with the replay priority's decay
# (half-life two days; since the category's last detected change the floor 1.0 keeps
# evidence at full weight, before it evidence fades), and, with `similarity_boost` (off by
# default), more for episodes recalled as similar to the task. `choice.evidence` says which episodes counted, with what
# weight; `decay=None` counts every episode once.

# %%
from langgraph_episodic import select_strategy

choice = select_strategy(query, memory, NOW, policy="greedy")
print(f"greedy: {choice.name} ({choice.reason})")
for weighed in choice.evidence:
    print(f"  {weighed.episode_id}: {weighed.strategy}, score {weighed.score}, weight {weighed.weight:.2f}")
picks = [select_strategy(query, memory, policy="thompson", rng=random.Random(i)).name for i in range(12)]
print("thompson, 12 draws:", picks)

# %% [markdown]
# ## Learning curves (a SIMULATED agent)
#
# To see learning we need many episodes, so we simulate them: three task categories, each
# with a hidden best strategy that succeeds 85% of the time (others 30%). The same task
# stream, with the same random draws, is played with no memory (the complexity rule
# alone), with the greedy policy and with the Thompson policy. Each policy gets its own
# memory, here in LangGraph's `InMemoryStore`: the episodic memory works on any store.

# %%
from langgraph.store.memory import InMemoryStore

from langgraph_episodic.episodic import (
    complexity_strategy,
    compute_learning_curve,
    plot_learning_curve,
)

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
            strategy = select_strategy(task, mem, now, policy="thompson" if policy == "thompson" else "greedy", rng=policy_rng).name
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

# %%
assert curves["thompson"][-1].rolling_success_rate > curves["no memory"][-1].rolling_success_rate

# %% [markdown]
# ## When the world changes
#
# A strategy that worked last month may fail today. After 120 episodes of a new stream the
# hidden best strategy of every category changes. Counting every episode once (`decay=None`, the
# seed's Thompson policy), old successes keep outvoting new failures. With the defaults every
# episode keeps its full weight until the skill profile flags a change (`changed_at`): either
# the category's recent success rate fell far below its history, or the strategy being
# exploited did clearly worse than its own record (a CUSUM on its outcomes; the profile names
# it in `changed_strategy`). Evidence from before the flag then fades with the half-life, so the
# Thompson policy explores again there; its posteriors count each weighted outcome twice
# (`sharpness=2`), so it settles on the new best strategy after fewer tries. The profile also
# estimates when the change began (`change_started`: where the CUSUM last left zero). Opt-in
# settings act after a flag: `EvidenceDecay(forget=True, backdate=True)` and
# `ChangeDetection(alert=0.5)`; on the benchmark they shorten the re-learning after a change
# that hits every category, at a cost on a stable stream (docs/benchmarks.md, "Learning").
# After a flag the Thompson policy first tries once each strategy not tried since the change
# (`retry=True`, the default), the flagged one last.

# %%
from langgraph_episodic.episodic import EvidenceDecay

later_best = {TaskCategory.DEBUGGING: "iterative", TaskCategory.TESTING: "defensive", TaskCategory.REFACTORING: "example_driven"}
drift_rng = random.Random(2)
drift_stream = [(drift_rng.choice(list(hidden_best)), drift_rng.random(), drift_rng.random()) for _ in range(360)]


def play_drift(decay: EvidenceDecay | None) -> tuple[list[Episode], EpisodicMemory]:
    mem = EpisodicMemory.for_user(InMemoryStore(index={"dims": 64, "embed": HashEmbeddings(64)}), "drift")
    policy_rng = random.Random(3)
    played = []
    for i, (category, complexity, draw) in enumerate(drift_stream):
        task = TaskDescription(f"{category.value} task number {i}", category, complexity)
        now = NOW + i * HOUR
        strategy = select_strategy(task, mem, now, policy="thompson", rng=policy_rng, decay=decay).name
        best = (hidden_best if i < 120 else later_best)[category]
        success = draw < (0.85 if strategy == best else 0.30)
        ep = Episode(f"{i}", task, "(simulated)", Feedback(1.0 if success else 0.0),
                     S if success else F, timestamp=now, strategy_used=strategy)
        mem.record(ep)
        played.append(ep)
    return played, mem


def last_third(played: list[Episode]) -> float:
    tail = played[240:]
    return sum(e.outcome is S for e in tail) / len(tail)


counted_once, _ = play_drift(None)
weighted, drift_memory = play_drift(EvidenceDecay())
print(f"success over episodes 241-360: every episode once {last_third(counted_once):.0%}, weighted {last_third(weighted):.0%}")
for category, profile in sorted(drift_memory.skill_profiles().items(), key=lambda kv: kv[0].value):
    when = "-" if profile.changed_at is None else f"episode {int((profile.changed_at - NOW) / HOUR)}"
    began = "" if profile.change_started is None else f", began about episode {int((profile.change_started - NOW) / HOUR)}"
    why = f" ({profile.changed_strategy} dropped)" if profile.changed_strategy else ""
    print(f"{category.value:<12} change flagged at {when}{why}{began}, recent success {profile.recent_success_rate:.0%}")
plot_learning_curve({"every episode once": compute_learning_curve(counted_once, window=25),
                     "weighted (default)": compute_learning_curve(weighted, window=25)},
                    title="Best strategy changes at episode 120 (simulated)")

# %%
assert last_third(weighted) > last_third(counted_once)
flagged = [p for p in drift_memory.skill_profiles().values() if p.changed_at is not None]
assert flagged
for p in flagged:  # the estimated start of a change comes at or before its flag
    assert p.change_started is not None and p.changed_at is not None and p.change_started <= p.changed_at

# %% [markdown]
# ### Why an estimated start can come early
#
# The change happened at episode 120, yet a category's estimate may point dozens of episodes
# earlier. The estimate is where the dropped strategy's CUSUM last stood at zero, and the sum
# is tested against the strategy's own record: after a long winning streak that record is
# high, so one failure lifts the sum more than one success lowers it. A few unlucky failures
# before the change (the best strategy still fails 15% of the time) can keep the sum above
# zero until the real change pushes it over the threshold, and the estimate then dates from
# the first of them. Read it as "the evidence since about here is suspect", an early bound
# rather than the moment of the change. The policy's defaults fade evidence from before the
# flag (`changed_at`), not from this estimate; only the opt-in `EvidenceDecay(backdate=True)`
# uses it. Below, each flagged category's dropped strategy: its record before the estimate,
# then its outcomes (s / f) from the estimate to the flag, with `|` at the real change.

# %%
def episode_number(timestamp: float) -> int:
    return int((timestamp - NOW) / HOUR)


early = []
for category, profile in sorted(drift_memory.skill_profiles().items(), key=lambda kv: kv[0].value):
    if profile.changed_at is None or profile.change_started is None or profile.changed_strategy is None:
        continue
    start, flag = episode_number(profile.change_started), episode_number(profile.changed_at)
    tries = [(int(e.episode_id), e.outcome is S) for e in weighted
             if e.task.category is category and e.strategy_used == profile.changed_strategy]
    record = [won for i, won in tries if i < start]
    first_after = next((i for i, _ in tries if i >= 120), None)
    trail = "".join(("|" if i == first_after else "") + ("s" if won else "f")
                    for i, won in tries if start <= i <= flag)
    print(f"{category.value:<12} {profile.changed_strategy:<15} before episode {start}: "
          f"{sum(record)}/{len(record)} won; then {trail}")
    if start < 120:
        early.append((sum(record) / len(record), [won for i, won in tries if start <= i < 120]))

# %%
for record_rate, unlucky in early:  # an early estimate follows a stretch below the strategy's record
    assert unlucky and sum(unlucky) / len(unlucky) < record_rate
store.close()

# %% [markdown]
# **Next:** notebook 3 wires episodic memory into a graph with conversation memory;
# `langgraph-episodic demo` runs the full agent on a longer simulated task stream.
