"""Paseo: a self-hosted daemon that supervises AI coding agents, and the ``paseo`` CLI.

Keep this module free of imports: ``paseo --version`` reads ``__version__`` from here.
"""

__version__ = "0.1.0"
