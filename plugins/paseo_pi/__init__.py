"""The built-in ``pi`` agent provider: the Pi coding agent driven through ``pi --mode rpc``.

Registered through the ``paseo`` entry point ``pi`` like any third-party plugin. See
:mod:`paseo_pi.session` for how Pi's JSON-lines protocol maps onto Paseo's events.
"""
