"""``python -m paseo`` is the ``paseo`` command."""

from paseo.cli import entry

entry()
