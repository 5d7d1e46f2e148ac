"""The Chroma-backed LangGraph store: :class:`ChromaStore` and its building blocks."""
