"""Checkpoints and undo: the working tree of an agent's git checkout captured at every turn
boundary, each turn's change shown as a diff, and taken back (or brought back) file by file.

:mod:`~paseo.checkpoints.plumbing` is the git side (temporary indexes, trees, hidden refs),
:mod:`~paseo.checkpoints.service` observes turns through the agent port and answers the
``checkpoint.*`` methods of :mod:`~paseo.checkpoints.rpc`. See ``docs/checkpoints.md``.
"""
