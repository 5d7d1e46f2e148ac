"""``python -m langgraph_episodic``: the same as the ``langgraph-episodic`` command."""

import sys

from .cli.main import main

sys.exit(main())
