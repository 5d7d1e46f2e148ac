"""The running summary, formed after the turn: the thread trims now, the model folds later.

With ``defer=``, a node that compacts the conversation (the sliding window, the summarise node,
the middleware's ``before_model``) decides what leaves exactly as inline
(:func:`~langgraph_episodic.kinds.compaction.plan_compaction`: what stays starts with a human
message and keeps every tool call next to its results), removes it from ``messages`` at once,
and queues it for the worker instead of calling the summary model:

- **In the turn**: the leaving messages go to the queue (:mod:`.pending`, one store write) and
  their first sentences, quoted, join the summary under :data:`PENDING_HEADER`, so the next
  request already has them (no model call, nothing dropped unsummarised).
- **In the worker**: the thread's pending messages of a batch are folded into the model summary
  in one go (:class:`~langgraph_episodic.kinds.summaries.Summarizer`) and written to the store
  under ``("_summary", user, thread)`` with ``through``, the key of the newest turn folded.
- **At the next compaction** (the next turn's window, or the summarise node): the stored
  summary replaces the quoted lines of every turn up to ``through``. The summary stays in the
  system prompt, so the request the provider sees is the system message, then the kept messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, messages_to_dict
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from .._config import configurable, user_id_from
from .._effects import Plan, call
from ..kinds.compaction import Compaction
from ..kinds.summaries import EXTRACTIVE_HEADER, Summarizer, extractive_summary, removal
from .former import Former
from .pending import SUMMARY_KEY, PendingTurn, enqueue, summary_namespace
from .worker import Scheduler

PENDING_HEADER = "Not summarised yet (first sentences quoted):"
"""Header of the lines of messages that left but are not in the model summary yet."""


def compose(formed: str, pending: Sequence[dict[str, Any]]) -> str:
    """The summary the agent sees: the formed summary, then the quoted lines still pending."""
    lines = [line for entry in pending for line in entry.get("lines", ())]
    parts = [formed] if formed else []
    if lines:
        parts.append("\n".join([PENDING_HEADER, *lines]))
    return "\n".join(parts)


def deferred_compaction_update(
    formation: Scheduler, store: BaseStore, former: Former,
    messages: Sequence[BaseMessage], compaction: Compaction, state: dict[str, Any],
    config: RunnableConfig,
) -> Plan[dict[str, Any]]:
    """Plan: the state update of a deferred compaction (see the module docstring)."""
    user_id = user_id_from(config)
    thread_id = str(configurable(config).get("thread_id") or "")
    info = dict(state.get("summary_info") or {})
    deferred = info.get("deferred")
    pending: list[dict[str, Any]] = list(deferred.get("pending", ())) if deferred else []
    formed_text = str(deferred.get("formed", "")) if deferred else ""
    through = str(deferred.get("through", "")) if deferred else ""
    stored = yield call(store.get, store.aget, summary_namespace(user_id, thread_id),
                        SUMMARY_KEY)
    changed = False
    if stored is not None and str(stored.value.get("through", "")) > through:
        through, formed_text = str(stored.value["through"]), str(stored.value.get("text", ""))
        pending = [p for p in pending if str(p["key"]) > through]
        changed = True
    update: dict[str, Any] = {}
    if compaction.leaving:
        base = "" if deferred else str(state.get("summary") or "")  # an inline summary so far
        formation.bind(store, former)
        turn = PendingTurn.of_run(config, user_id,
                                  leaving=tuple(messages_to_dict(compaction.leaving)),
                                  summary_base=base)
        yield from enqueue(store, turn)
        yield call(formation.notify, formation.anotify, user_id)
        if not deferred:
            formed_text = base
        summarizer = former.summarizer or Summarizer()
        quoted = extractive_summary("", compaction.leaving, max_chars=summarizer.max_summary_chars,
                                    token_counter=summarizer.counter)
        pending.append({"key": turn.key, "lines": [
            ln for ln in quoted.splitlines() if ln.strip() and ln != EXTRACTIVE_HEADER]})
        info["summarized_messages"] = int(info.get("summarized_messages", 0)) + len(
            compaction.leaving)
        info["last_summarized_id"] = compaction.leaving[-1].id
        changed = True
    if changed:
        info["method"] = "deferred"
        info["deferred"] = {"formed": formed_text, "through": through, "pending": pending}
        update["summary"] = compose(formed_text, pending)
        update["summary_info"] = info
    removed = removal(messages, compaction)
    if removed:
        update["messages"] = removed
    return update
