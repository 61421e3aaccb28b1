"""Git for the daemon: one process limiter, a subprocess runner that goes through it, in-process
repository fact readers (dulwich) and Git's ref-name rules.

Every Git process the daemon starts passes :class:`~paseo.git.limiter.GitProcessLimiter`; facts
that can be read from files (current branch, remotes, ref values, whether a directory is a
checkout) are read in-process so that refreshing unchanged repositories starts no process.
"""
