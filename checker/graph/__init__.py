"""The explored state graph: every state and transition as arrays (``explore.py`` over the graph
kernel, ``kernel.py``), recoverability on it (``recover.py``, ``reverse.py``) and its export with
networkx (``export.py``). No click here: the commands are in ``checker/cli/graph.py``."""
