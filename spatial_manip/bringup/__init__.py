"""Starting the stack: graph descriptions (config/graphs), the pip-only launcher, the goal client,
and the commands that run nodes in this process (`record`, `replay`, `camera-bench`).

Bringup sits above the nodes: it imports them; nodes and the core never import bringup.
"""
