"""Consolidation with a chat model: one structured call decides over the shown candidates.

The model sees the new fact and the user's current facts that the store's search found,
numbered ``1..n``; it answers with an action and, for ``same``/``update``/``end``, a number.
It never sees a store key, so it can only name a fact it was shown: a number outside the
list, a missing one, or output that does not parse is treated as ``new`` (the fact is kept,
nothing is closed) and logged as a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from .._effects import Plan, call
from .._model_calls import internal_config, retrying
from ..errors import InvalidTypeError
from .rules import Candidate, Decision

logger = logging.getLogger(__name__)

SHOWN = 50
"""Current facts a model is shown: all of a subject's when it has at most this many (a change
said in other words often shares no word with the fact it replaces, and ranks anywhere among
them), else the nearest this many. About 15 tokens a fact."""

INSTRUCTIONS = (
    "You keep a user's memory of facts current. You get a NEW fact the user stated and the "
    "user's CURRENT facts, numbered. Decide what the new fact is:\n"
    "- same: it states what one current fact already says (other words, same content).\n"
    "- update: it replaces one current fact, which is no longer true (a move, a new job, a "
    "correction, a changed preference).\n"
    "- end: it says one current fact stopped being true, with nothing replacing it (\"I no "
    "longer have a dog\", \"Ich habe gekündigt\").\n"
    "- new: unrelated to all of them, or compatible with them (both stay true).\n"
    "For same, update and end give the number of that current fact; for new give none. "
    "Facts may be German or English."
)


class FactDecision(BaseModel):
    """The model's decision about one new fact."""

    action: Literal["same", "update", "new", "end"] = Field(
        description="same, update, end or new (see the instructions)."
    )
    fact: int | None = Field(
        default=None,
        description="The number of the current fact it confirms, replaces or ends; null for new.",
    )


def prompt(text: str, candidates: Sequence[Candidate]) -> list[Any]:
    """The messages of one decision: the instructions, the new fact and the numbered list."""
    listing = "\n".join(f"{i}. {c.text}" for i, c in enumerate(candidates, start=1))
    return [
        SystemMessage(INSTRUCTIONS),
        HumanMessage(f"NEW fact:\n{text}\n\nCURRENT facts:\n{listing}"),
    ]


class ModelDecider:
    """Decides with one structured model call per new fact that has candidates."""

    method = "model"
    candidates = SHOWN

    def __init__(self, model: BaseChatModel) -> None:
        try:
            # include_raw: an answer that does not parse comes back as data (kept as new), so
            # only failed calls are retried.
            self._structured = retrying(model.with_structured_output(FactDecision,
                                                                     include_raw=True))
        except NotImplementedError as exc:
            raise InvalidTypeError(
                f"{type(model).__name__} does not support structured output. Pass a chat model "
                "with tool calling, or model=None to consolidate facts by rules."
            ) from exc

    def decide(self, text: str, candidates: Sequence[Candidate]) -> Plan[Decision]:
        """Plan: the decision about ``text`` (no call when there are no candidates); ``new``
        (logged) for an answer that does not parse or names no shown fact."""
        if not candidates:
            return Decision("new", None, "no current facts")
        result = yield call(self._structured.invoke, self._structured.ainvoke,
                            prompt(text, candidates), internal_config("fact_consolidation"))
        if isinstance(result, dict) and "parsing_error" in result:
            if result.get("parsing_error") is not None or result.get("parsed") is None:
                logger.warning("fact consolidation: the model's answer did not parse (%s); "
                               "kept as new", result.get("parsing_error"))
                return Decision("new", None, "model output did not parse")
            result = result["parsed"]
        try:
            decision = (result if isinstance(result, FactDecision)
                        else FactDecision.model_validate(result))
        except ValidationError as exc:
            logger.warning("fact consolidation: unusable model output %r (%s); kept as new",
                           result, exc.errors()[:1])
            return Decision("new", None, "model output unusable")
        if decision.action == "new":
            return Decision("new", None, "model: new")
        number = decision.fact
        if number is None or not 1 <= number <= len(candidates):
            logger.warning("fact consolidation: the model named fact %r of %d shown; kept as new",
                           number, len(candidates))
            return Decision("new", None, "model named no shown fact")
        return Decision(decision.action, candidates[number - 1].key, f"model: {decision.action}")
