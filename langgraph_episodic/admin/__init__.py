"""What the command line and the inspector both do to a store, over its public API.

Counting (:mod:`.browse`), export and import (:mod:`.transfer`), forgetting a user
(:mod:`.forget`) and the check report (:mod:`.verify`), with the errors a user can fix
(:mod:`.errors`) and the wording of counts (:mod:`.wording`). ``langgraph_episodic.cli`` and
``langgraph_episodic.ui`` both use these; this package imports neither.
"""
