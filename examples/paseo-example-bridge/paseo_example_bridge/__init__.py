"""A folder bridged to agents: a third-party Paseo plugin on the agent port alone.

Drop ``NAME.prompt`` into the bridge's folder and an agent starts on it; its replies are written
beside it (``NAME.reply``, and every timeline entry to ``NAME.log``), a permission it asks for
becomes ``NAME.permission.json``, and writing ``allow`` or ``deny`` to ``NAME.answer`` answers
it. It knows agents only through ``DaemonContext.agents`` (``paseo_hookspecs.agents``): the
same port the built-in Hub plugin uses.
"""
