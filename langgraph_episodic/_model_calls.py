"""Internal model calls (summaries, entity extraction): retried, and kept out of the user's stream.

Every model call the memory makes for itself runs with :func:`internal_config`: LangGraph's
``TAG_NOSTREAM`` tag (``stream_mode="messages"`` skips it, as it skips LangChain's
``SummarizationMiddleware``'s calls) and LangChain's internal-call metadata. :func:`retrying`
wraps a runnable to try three times, as ``SummarizationMiddleware`` does.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware.internal_call_transformer import internal_call_metadata
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.constants import TAG_NOSTREAM

INTERNAL_SOURCE = "langgraph_episodic"
"""``metadata["lc_source"]`` of the memory's own model calls."""

ATTEMPTS = 3
"""How often an internal model call is tried before its error is raised."""


def internal_config(purpose: str) -> RunnableConfig:
    """The config of an internal model call (``purpose``: e.g. ``"summary"``)."""
    return {
        "tags": [TAG_NOSTREAM, f"episodic:{purpose}"],
        "metadata": {"lc_source": INTERNAL_SOURCE, "episodic_purpose": purpose,
                     **internal_call_metadata()},
        "run_name": f"episodic_{purpose}",
    }


def retrying(runnable: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """``runnable`` tried up to :data:`ATTEMPTS` times (exponential backoff with jitter)."""
    return runnable.with_retry(stop_after_attempt=ATTEMPTS, wait_exponential_jitter=True)
