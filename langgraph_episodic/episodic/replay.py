"""Replay: turn recalled episodes into a prompt section an LLM can learn from.

:func:`build_replay_context` aggregates recalled results (strategies used, average reward,
success rate); :func:`format_replay_prompt` renders the task, those aggregates and a bounded
excerpt of each episode within a character budget. Recalled text is data, not instructions:
everything taken from memory sits inside a quoted-data fence (:mod:`langgraph_episodic._fence`).

>>> from langgraph_episodic.episodic.records import (
...     Episode, Feedback, OutcomeStatus, TaskCategory, TaskDescription)
>>> from langgraph_episodic.episodic.priority import PrioritizedResult, compute_priority
>>> task = TaskDescription("Fix flaky login test", TaskCategory.TESTING)
>>> ep = Episode("e1", task, "Mock the clock.", Feedback(0.8, "stable now"),
...              OutcomeStatus.SUCCESS, strategy_used="defensive")
>>> context = build_replay_context([compute_priority(PrioritizedResult(ep, 0.9), 0.0)])
>>> context.strategies, context.success_rate
(('defensive',), 1.0)
>>> prompt = format_replay_prompt(context, task)
>>> BEGIN_MARKER in prompt and "| Mock the clock." in prompt
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._fence import QUOTE as QUOTE  # re-exported: the prefix of every recalled line
from .._fence import begin_marker, data_notice, end_marker, quoted_lines, single_line
from .priority import PrioritizedResult
from .records import TaskDescription, require, success_and_reward

FENCE_LABEL = "RECALLED EPISODES"
BEGIN_MARKER = begin_marker(FENCE_LABEL)
END_MARKER = end_marker(FENCE_LABEL)
DATA_NOTICE = data_notice("recalled episodes")


@dataclass(frozen=True)
class ReplayContext:
    """Aggregates over recalled episodes, plus the episodes themselves (best first).

    ``strategies`` lists each strategy once, in the order first seen. ``average_reward`` and
    ``success_rate`` (share of full successes) are 0.0 when nothing was recalled."""

    results: tuple[PrioritizedResult, ...]
    strategies: tuple[str, ...]
    average_reward: float
    success_rate: float

    @property
    def size(self) -> int:
        return len(self.results)


def build_replay_context(results: Sequence[PrioritizedResult]) -> ReplayContext:
    """Aggregate recalled results into a :class:`ReplayContext` (order kept)."""
    results = tuple(results)
    episodes = [r.episode for r in results]
    success_rate, average_reward = success_and_reward(episodes)
    return ReplayContext(results=results,
                         strategies=tuple(dict.fromkeys(ep.strategy_used for ep in episodes)),
                         average_reward=average_reward, success_rate=success_rate)


def format_replay_prompt(
    context: ReplayContext,
    task: TaskDescription | str,
    *,
    max_chars: int = 2000,
    excerpt_chars: int = 240,
) -> str:
    """Render the replay section of a prompt, at most ``max_chars`` characters long.

    ``max_chars`` must be at least 800. The task and its category, the aggregate lines, then
    per episode its strategy, outcome, reward, feedback message and the first ``excerpt_chars``
    characters of its solution, fenced as quoted data. Episodes that do not fit are dropped
    from the end and a line says how many; when even the header does not fit, the task text is
    shortened.
    """
    require(max_chars >= _MIN_BUDGET,
            f"max_chars={max_chars} is too small for a replay prompt; use at least {_MIN_BUDGET}.")
    require(excerpt_chars >= 0, f"excerpt_chars must be >= 0; got {excerpt_chars}.")
    task = task if isinstance(task, TaskDescription) else TaskDescription(task)

    def header(description: str) -> list[str]:
        return [f"Current task: {single_line(description)}", f"Category: {task.category.value}"]

    if not context.size:
        lines = header(task.description)
        if _size([*lines, _NOTHING]) > max_chars:
            lines = header(_clip(single_line(task.description), max_chars - 200))
        return "\n".join([*lines, _NOTHING])

    aggregates = [
        f"Similar past episodes: {context.size}; average reward {context.average_reward:.2f}; "
        f"success rate {context.success_rate:.0%}.",
        _clip(f"Strategies used before: {', '.join(map(single_line, context.strategies))}.", 160),
    ]
    footer = [DATA_NOTICE, BEGIN_MARKER, *aggregates]
    closing = [END_MARKER]
    lines = header(task.description)
    reserve = 200  # room kept for an episode block or the omission note
    if _size(lines + footer + closing) + reserve > max_chars:
        spare = max_chars - _size(header("") + footer + closing) - reserve
        lines = header(_clip(single_line(task.description), max(3, spare)))

    body: list[str] = []
    omitted = 0
    note_room = len(_OMITTED.format(context.size)) + 1
    for index, result in enumerate(context.results, start=1):
        for excerpt in (excerpt_chars, 0):  # the full block, else one without the solution
            block = _episode_block(index, result, excerpt)
            if _size(lines + footer + body + block + closing) + note_room <= max_chars:
                body += block
                break
        else:
            omitted = context.size - index + 1
            break
    if omitted:
        body.append(_OMITTED.format(omitted))
    return "\n".join(lines + footer + body + closing)


_MIN_BUDGET = 800
_NOTHING = "No similar past episodes were found."
_OMITTED = "({} more episodes omitted to fit the budget.)"


def _size(lines: list[str]) -> int:
    return sum(len(line) for line in lines) + max(0, len(lines) - 1)


def _episode_block(index: int, result: PrioritizedResult, excerpt_chars: int) -> list[str]:
    ep = result.episode
    block = [
        f"Episode {index}: strategy {_clip(single_line(ep.strategy_used), 60)!r}, outcome "
        f"{ep.outcome.value}, reward {ep.feedback.reward:.2f}, priority {result.priority:.2f}",
        "  task:",
        *quoted_lines(_clip(ep.task.description, excerpt_chars or 120)),
    ]
    if ep.feedback.message:
        block += ["  feedback:", *quoted_lines(_clip(ep.feedback.message, excerpt_chars or 120))]
    if excerpt_chars and ep.solution:
        block += ["  solution excerpt:", *quoted_lines(_clip(ep.solution, excerpt_chars))]
    return block


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 3)] + "..."
