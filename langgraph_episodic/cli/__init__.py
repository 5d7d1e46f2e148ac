"""The ``langgraph-episodic`` command line: store maintenance (stats, search, export, import,
forget, sweep) and the learning demo. Entry point: :func:`langgraph_episodic.cli.main.main`."""
