"""``python -m langgraph_mcp``: the ``langgraph-mcp`` command line (see :mod:`langgraph_mcp.cli`)."""

import sys

from langgraph_mcp.cli import main

if __name__ == "__main__":
    sys.exit(main())
