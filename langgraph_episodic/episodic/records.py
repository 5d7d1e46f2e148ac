"""Episode records: what an agent did on one task and how it went.

All records are frozen dataclasses, validated on construction, and convert to and from a
JSON-safe dict (:meth:`Episode.to_dict` / :meth:`Episode.from_dict`) that is stored as a
LangGraph store item's value. The dict carries ``schema_version`` and a few top-level scalar
fields (``text``, ``category``, ``outcome``, ``reward``, ``timestamp``, ``strategy_used``) so a
store can embed the task text and filter on the rest. The round trip is exact.

>>> episode = Episode(
...     episode_id="ep-1",
...     task=TaskDescription("Fix the off-by-one in paginate()", TaskCategory.DEBUGGING, 0.4),
...     solution="Use range(0, n, size) instead of range(1, n, size).",
...     feedback=Feedback(reward=0.9, message="all tests pass", tests_passed=4, tests_total=4),
...     outcome=OutcomeStatus.SUCCESS,
...     timestamp=1_700_000_000.0,
...     strategy_used="iterative",
... )
>>> Episode.from_dict(episode.to_dict()) == episode
True
>>> episode.feedback.pass_rate
1.0
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any

from ..errors import Error, InvalidTypeError, InvalidValueError

SCHEMA_VERSION = 1
"""Version of the dict layout written by :meth:`Episode.to_dict`."""


class OutcomeStatus(str, Enum):
    """How an episode ended. Its outcome score in replay is 1.0, 0.5 and 0.0 respectively."""

    SUCCESS = "success"
    PARTIAL = "partial"
    FAILURE = "failure"


class TaskCategory(str, Enum):
    """The kind of task; episodes are filtered and profiled by category."""

    CODE_GENERATION = "code_generation"
    DEBUGGING = "debugging"
    REFACTORING = "refactoring"
    TESTING = "testing"
    ARCHITECTURE = "architecture"
    UNKNOWN = "unknown"


class EpisodeSchemaError(Error, ValueError):
    """A stored dict is not an episode this version can read (wrong or missing fields)."""


def as_enum(cls: type[Enum], value: Any, name: str) -> Any:
    if isinstance(value, cls):
        return value
    try:
        return cls(value)
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in cls)
        raise InvalidValueError(f"{name} must be one of {allowed}; got {value!r}.") from None


def require(ok: bool, problem: str) -> None:
    """Raise ``InvalidValueError(problem)`` unless ``ok``."""
    if not ok:
        raise InvalidValueError(problem)


def _unit_float(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTypeError(f"{name} must be a number in [0, 1]; got {type(value).__name__}.")
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise InvalidValueError(f"{name} must be a finite number in [0, 1]; got {value!r}.")
    return number


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be a non-negative integer; got {value!r}.")
    if value < 0:
        raise InvalidValueError(f"{name} must be a non-negative integer; got {value!r}.")
    return value


def _text(value: Any, name: str, *, allow_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be a string; got {type(value).__name__}.")
    if not allow_empty and not value.strip():
        raise InvalidValueError(f"{name} must be a non-empty string.")
    return value


@dataclass(frozen=True)
class TaskDescription:
    """A task as the agent received it.

    ``category`` may be given as a :class:`TaskCategory` or its string value; ``complexity`` is a
    finite number in [0, 1] (0 trivial, 1 very hard). The description must not be blank.
    """

    description: str
    category: TaskCategory = TaskCategory.UNKNOWN
    complexity: float = 0.5

    def __post_init__(self) -> None:
        _text(self.description, "TaskDescription.description", allow_empty=False)
        object.__setattr__(
            self, "category", as_enum(TaskCategory, self.category, "TaskDescription.category")
        )
        object.__setattr__(
            self, "complexity", _unit_float(self.complexity, "TaskDescription.complexity")
        )

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict; :meth:`from_dict` reverses it."""
        return {
            "description": self.description,
            "category": self.category.value,
            "complexity": self.complexity,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskDescription:
        """Rebuild a task from :meth:`to_dict` output (validated again)."""
        return cls(**{f.name: _field(data, f.name, "task") for f in fields(cls)})


@dataclass(frozen=True)
class Feedback:
    """What the environment said about a solution.

    ``reward`` is a finite number in [0, 1]; counts are non-negative with
    ``tests_passed <= tests_total``.
    """

    reward: float
    message: str = ""
    tests_passed: int = 0
    tests_total: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "reward", _unit_float(self.reward, "Feedback.reward"))
        _text(self.message, "Feedback.message")
        passed = _count(self.tests_passed, "Feedback.tests_passed")
        total = _count(self.tests_total, "Feedback.tests_total")
        if passed > total:
            raise InvalidValueError(
                f"Feedback.tests_passed ({passed}) cannot exceed tests_total ({total})."
            )

    @property
    def pass_rate(self) -> float:
        """``tests_passed / tests_total``, or 0.0 when no tests ran."""
        return self.tests_passed / self.tests_total if self.tests_total else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict; :meth:`from_dict` reverses it."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Feedback:
        """Rebuild feedback from :meth:`to_dict` output (validated again)."""
        return cls(**{f.name: _field(data, f.name, "feedback") for f in fields(cls)})


@dataclass(frozen=True)
class Episode:
    """One attempt at one task: the task, the solution, the feedback and the outcome.

    Episodes are immutable: once recorded under an ``episode_id`` they are never changed.
    ``timestamp`` is seconds since the Unix epoch (as from ``time.time()``); it drives the
    recency part of replay priority. Use :meth:`Episode.new` to fill the id and the time.
    """

    episode_id: str
    task: TaskDescription
    solution: str
    feedback: Feedback
    outcome: OutcomeStatus
    timestamp: float = 0.0
    iterations: int = 1
    strategy_used: str = "default"

    def __post_init__(self) -> None:
        _text(self.episode_id, "Episode.episode_id", allow_empty=False)
        if not isinstance(self.task, TaskDescription):
            raise InvalidTypeError(
                f"Episode.task must be a TaskDescription; got {type(self.task).__name__}. "
                "Wrap the text: TaskDescription('...')."
            )
        if not isinstance(self.feedback, Feedback):
            raise InvalidTypeError(
                f"Episode.feedback must be a Feedback; got {type(self.feedback).__name__}."
            )
        _text(self.solution, "Episode.solution")
        object.__setattr__(self, "outcome", as_enum(OutcomeStatus, self.outcome, "Episode.outcome"))
        ts = self.timestamp
        if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not math.isfinite(ts):
            raise InvalidValueError(f"Episode.timestamp must be a finite number; got {ts!r}.")
        object.__setattr__(self, "timestamp", float(ts))
        _count(self.iterations, "Episode.iterations")
        _text(self.strategy_used, "Episode.strategy_used", allow_empty=False)

    @classmethod
    def new(
        cls,
        task: TaskDescription,
        solution: str,
        feedback: Feedback,
        outcome: OutcomeStatus | str,
        *,
        strategy_used: str = "default",
        iterations: int = 1,
        timestamp: float | None = None,
        episode_id: str | None = None,
    ) -> Episode:
        """Build an episode with a fresh random id and the current time unless given."""
        return cls(episode_id or uuid.uuid4().hex, task, solution, feedback,
                   as_enum(OutcomeStatus, outcome, "Episode.outcome"),
                   time.time() if timestamp is None else timestamp, iterations, strategy_used)

    @property
    def category(self) -> TaskCategory:
        """The task's category (shortcut for ``episode.task.category``)."""
        return self.task.category

    @property
    def reward(self) -> float:
        """The feedback's reward (shortcut for ``episode.feedback.reward``)."""
        return self.feedback.reward

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-safe dict stored as the item's value.

        Top-level ``text`` (the task description) is the field to embed; ``category``,
        ``outcome``, ``reward``, ``timestamp`` and ``strategy_used`` are plain scalars so stores
        can filter on them.
        """
        return {
            "schema_version": SCHEMA_VERSION,
            "episode_id": self.episode_id,
            "text": self.task.description,
            "category": self.task.category.value,
            "outcome": self.outcome.value,
            "reward": self.feedback.reward,
            "timestamp": self.timestamp,
            "strategy_used": self.strategy_used,
            "iterations": self.iterations,
            "solution": self.solution,
            "task": self.task.to_dict(),
            "feedback": self.feedback.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Episode:
        """Rebuild an episode from :meth:`to_dict` output.

        Raises:
            EpisodeSchemaError: the dict has no or a newer ``schema_version``, or misses fields.
            ValueError, TypeError: a field holds an invalid value.
        """
        if not isinstance(data, Mapping):
            raise EpisodeSchemaError(f"An episode dict is expected; got {type(data).__name__}.")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            hint = (
                "Upgrade langgraph-episodic to read it."
                if isinstance(version, int) and version > SCHEMA_VERSION
                else "Was it written by EpisodicMemory? Store episodes with Episode.to_dict()."
            )
            raise EpisodeSchemaError(
                f"Unsupported episode schema_version {version!r} (this version reads "
                f"{SCHEMA_VERSION}). {hint}"
            )
        task = _field(data, "task")
        feedback = _field(data, "feedback")
        if not isinstance(task, Mapping) or not isinstance(feedback, Mapping):
            raise EpisodeSchemaError("Episode fields 'task' and 'feedback' must be dicts.")
        return cls(
            episode_id=_field(data, "episode_id"),
            task=TaskDescription.from_dict(task),
            solution=_field(data, "solution"),
            feedback=Feedback.from_dict(feedback),
            outcome=_field(data, "outcome"),
            timestamp=_field(data, "timestamp"),
            iterations=_field(data, "iterations"),
            strategy_used=_field(data, "strategy_used"),
        )


def outcome_score(outcome: OutcomeStatus) -> float:
    """Return 1.0 for success, 0.5 for partial and 0.0 for failure."""
    return _OUTCOME_SCORES[OutcomeStatus(outcome)]


_OUTCOME_SCORES = dict(zip(OutcomeStatus, (1.0, 0.5, 0.0), strict=True))


def success_and_reward(episodes: Sequence[Episode]) -> tuple[float, float]:
    """The share of full successes among ``episodes`` and average reward (0.0, 0.0 for none)."""
    n = len(episodes)
    if not n:
        return 0.0, 0.0
    return (sum(e.outcome is OutcomeStatus.SUCCESS for e in episodes) / n,
            sum(e.feedback.reward for e in episodes) / n)


def _field(data: Mapping[str, Any], name: str, what: str = "episode") -> Any:
    try:
        return data[name]
    except KeyError:
        raise EpisodeSchemaError(
            f"The {what} dict has no {name!r} field; it was not written by to_dict()."
        ) from None
