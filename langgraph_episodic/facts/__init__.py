"""Facts that change: what is true now, what was true before, and since when.

A fact saved by the memory tools is a store item carrying its period (``valid_from``,
``valid_to``) and its place in a lineage of versions; a new fact is consolidated on write
with the user's current ones (same, update, new, or an ending), by rules or by one model call.
See ``docs/facts.md``.
"""

from .consolidate import Clock, FactWriter, Outcome, RuleDecider
from .dates import ResolvedDate, format_date, resolve_date
from .model_decider import FactDecision, ModelDecider
from .phrasing import is_ending
from .recall import (
    acurrent_facts,
    afact_history,
    asks_about_past,
    current_facts,
    describe_history,
    fact_history,
    wording,
)
from .records import CURRENT_FILTER, FactRecord
from .rules import Candidate, Decision, decide_by_rules, slot_of, topic_of_question

__all__ = [
    "CURRENT_FILTER",
    "Candidate",
    "Clock",
    "Decision",
    "FactDecision",
    "FactRecord",
    "FactWriter",
    "ModelDecider",
    "Outcome",
    "ResolvedDate",
    "RuleDecider",
    "acurrent_facts",
    "afact_history",
    "asks_about_past",
    "current_facts",
    "decide_by_rules",
    "describe_history",
    "fact_history",
    "format_date",
    "is_ending",
    "resolve_date",
    "slot_of",
    "topic_of_question",
    "wording",
]
