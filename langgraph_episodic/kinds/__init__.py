"""The memory kinds a turn writes and reads, below the graph nodes, the middleware and the
deferred formation that all run them: entities (:mod:`.entities`, found by
:mod:`.entity_rules` without a model), episodes (:mod:`.episodes`), the conversation's summary
(:mod:`.summaries`, planned by :mod:`.compaction`), the remembered turns (:mod:`.turns`), and
where each user's data lives (:mod:`.namespaces`).

Each module holds the writer and its records; the node factories that wrap them live in
:mod:`langgraph_episodic.graph`.
"""
