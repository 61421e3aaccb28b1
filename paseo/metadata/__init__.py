"""Generated metadata: titles, branch names, commit messages and change-request text, written by
an internal structured-output agent (see :mod:`paseo.metadata.service`)."""
