"""LangChain tools that let an agent decide itself what to remember and when to look it up.

``memory_speichern`` / ``memory_abrufen`` are ready to use with the graph's store;
:func:`create_memory_tools` makes configured pairs (English names with ``locale="en"``), and
:func:`create_vectorstore_memory_tools` binds the same pair to any LangChain ``VectorStore``.
"""

from .memory_tools import (
    DEFAULT_NAMESPACE,
    MemoryStoreMissingError,
    create_memory_tools,
    memory_abrufen,
    memory_speichern,
)
from .texts import ENGLISH, GERMAN, ToolTexts, texts_for
from .vectorstore_tools import create_vectorstore_memory_tools

__all__ = [
    "DEFAULT_NAMESPACE",
    "ENGLISH",
    "GERMAN",
    "MemoryStoreMissingError",
    "ToolTexts",
    "create_memory_tools",
    "create_vectorstore_memory_tools",
    "memory_abrufen",
    "memory_speichern",
    "texts_for",
]
