"""The demo's SIMULATED world: a stream of coding tasks and a grader with hidden success rates.

Nothing here is a real LLM run. Each task has a category and a complexity; each category has a
hidden best strategy that succeeds most of the time, while the other strategies succeed far
less often, so an agent that knows nothing (a fresh memory) succeeds about a third of the time
and has everything to learn. Whether an attempt succeeds is decided by the task's own random
draw against the hidden rate of the strategy used, so every policy facing the same task gets
the same draw (common random numbers): a fair comparison of memory and the baselines.

Everything follows from the seed: the hidden rates, and task ``i`` of the stream (drawn from
its own seeded generator, so a second demo run continues the stream exactly).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from ..episodic import (
    STRATEGY_POOL,
    Episode,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)

CATEGORIES: tuple[TaskCategory, ...] = tuple(
    c for c in TaskCategory if c is not TaskCategory.UNKNOWN
)
STRATEGIES: tuple[str, ...] = tuple(STRATEGY_POOL)

BEST_RATE = (0.80, 0.92)
"""Range of the hidden success rate of each category's best strategy."""
OTHER_RATE = (0.05, 0.35)
"""Range of the hidden success rates of the other strategies: a wrong choice mostly fails, so
what memory learns shows in its success (a strategy drawn at random succeeds about 1 time in 3)."""
COMPLEXITY_PENALTY = 0.2
"""How much harder a task of complexity 1 is than one of complexity 0.5 (and easier at 0)."""
TESTS_PER_TASK = 5

_SUBJECTS = (
    "date parser", "session cache", "login flow", "billing job", "CSV export", "job scheduler",
    "search index", "upload handler", "config loader", "rate limiter", "email renderer",
    "payment webhook",
)
_TEMPLATES: dict[TaskCategory, tuple[str, ...]] = {
    TaskCategory.CODE_GENERATION: (
        "Write a new {s} module with a small public API",
        "Implement the {s} from the spec in the ticket",
    ),
    TaskCategory.DEBUGGING: (
        "Find and fix the crash in the {s}",
        "The {s} returns wrong results on empty input; fix it",
    ),
    TaskCategory.REFACTORING: (
        "Refactor the {s} into smaller functions without changing behaviour",
        "Remove the duplicated code in the {s}",
    ),
    TaskCategory.TESTING: (
        "Add unit tests for the edge cases of the {s}",
        "Raise the test coverage of the {s} to 90%",
    ),
    TaskCategory.ARCHITECTURE: (
        "Design how the {s} should be split into services",
        "Propose a plugin interface for the {s}",
    ),
}


@dataclass(frozen=True)
class SimTask:
    """Task ``index`` of the stream and its random draw (success when draw < success rate)."""

    index: int
    task: TaskDescription
    draw: float


@dataclass(frozen=True)
class World:
    """The hidden truth of one seed: each category's success rate per strategy."""

    seed: int
    rates: dict[TaskCategory, dict[str, float]]

    @classmethod
    def from_seed(cls, seed: int) -> World:
        """The world of ``seed``: one hidden best strategy per category."""
        rng = random.Random(f"world:{seed}")
        rates: dict[TaskCategory, dict[str, float]] = {}
        for category in CATEGORIES:
            best = rng.choice(STRATEGIES)
            rates[category] = {
                s: rng.uniform(*BEST_RATE) if s == best else rng.uniform(*OTHER_RATE)
                for s in STRATEGIES
            }
        return cls(seed, rates)

    def best(self, category: TaskCategory) -> str:
        """The hidden best strategy of ``category``."""
        return max(self.rates[category], key=lambda s: self.rates[category][s])

    def success_probability(self, task: TaskDescription, strategy: str) -> float:
        """Chance that ``strategy`` solves ``task`` (0 for a strategy outside the pool)."""
        base = self.rates[task.category].get(strategy, 0.0)
        return min(0.98, max(0.02, base - COMPLEXITY_PENALTY * (task.complexity - 0.5)))

    def task(self, index: int) -> SimTask:
        """Task ``index`` of the stream (the same for every run with this seed)."""
        rng = random.Random(f"task:{self.seed}:{index}")
        category = rng.choice(CATEGORIES)
        text = rng.choice(_TEMPLATES[category]).format(s=rng.choice(_SUBJECTS))
        return SimTask(index, TaskDescription(text, category, round(rng.random(), 2)), rng.random())

    def random_strategy(self, index: int) -> str:
        """The strategy an agent without memory picks for task ``index``: one drawn at random
        (seeded, so every run and every report draws the same)."""
        return random.Random(f"random:{self.seed}:{index}").choice(STRATEGIES)

    def best_single_strategy(self, sims: Iterable[SimTask]) -> str:
        """The one strategy that, used on every task of ``sims``, succeeds most often: chosen
        with hindsight, on the very draws it is scored on (a baseline no agent could beat by
        picking one strategy in advance). Ties go to the strategy listed first."""
        played = list(sims)
        wins = {
            s: sum(sim.draw < self.success_probability(sim.task, s) for sim in played)
            for s in STRATEGIES
        }
        return max(STRATEGIES, key=lambda s: wins[s])

    def attempt(self, sim: SimTask, strategy: str) -> Attempt:
        """``strategy`` played on ``sim``, graded (:meth:`grade`)."""
        return Attempt(sim, strategy, *self.grade(sim, strategy))

    def grade(self, sim: SimTask, strategy: str) -> tuple[Feedback, OutcomeStatus]:
        """The simulated test run of ``strategy`` on ``sim``: all tests pass, or none."""
        if sim.draw < self.success_probability(sim.task, strategy):
            message = f"all {TESTS_PER_TASK} tests pass"
            return Feedback(1.0, message, TESTS_PER_TASK, TESTS_PER_TASK), OutcomeStatus.SUCCESS
        return Feedback(0.0, "the tests fail", 0, TESTS_PER_TASK), OutcomeStatus.FAILURE


def simulated_answer(sim: SimTask, strategy: str, instruction: str) -> str:
    """The text the simulated solver answers with (clearly marked as simulated)."""
    return (
        f"[simulated solver] Task {sim.index}: {sim.task.description}. "
        f"Worked with the {strategy} strategy ({instruction.split('.')[0].lower()})."
    )


@dataclass(frozen=True)
class Attempt:
    """One task as played by one policy."""

    sim: SimTask
    strategy: str
    feedback: Feedback
    outcome: OutcomeStatus

    def episode(self, label: str) -> Episode:
        """As an (unstored) ``Episode``, for learning curves."""
        return Episode(
            episode_id=f"{label}-{self.sim.index}",
            task=self.sim.task,
            solution="",
            feedback=self.feedback,
            outcome=self.outcome,
            strategy_used=self.strategy,
        )
