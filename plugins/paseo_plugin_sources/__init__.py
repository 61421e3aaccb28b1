"""Built-in managed plugin sources: ``git``, ``npm``, ``pypi`` and ``directory``.

Each source fetches a plugin into the fresh directory ``paseo plugins install`` hands it and
never runs the plugin's code: verification and activation are the kernel's job. Registered
through the ``paseo_register_plugin_sources`` hook (see :mod:`paseo_plugin_sources.plugin`).
"""
