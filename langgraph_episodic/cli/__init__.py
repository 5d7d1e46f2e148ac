"""The ``langgraph-episodic`` command line; entry point :func:`langgraph_episodic.cli.main.main`."""
