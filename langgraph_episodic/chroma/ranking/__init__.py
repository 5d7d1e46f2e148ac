"""Ranking for the store's search: pure functions over a snapshot of the searched scope.

Nothing here reads Chroma or the store's caches; :mod:`..search` gathers the snapshot (vectors,
lexical shards, field values) and checks the ranked candidates against the stored records.
"""
