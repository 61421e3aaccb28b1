"""The built-in push plugin: attention notices for clients and Expo push for devices.

Registered through the ``paseo`` entry point ``push`` like any third-party plugin; it imports
only :mod:`paseo_hookspecs` and libraries. See ``docs/push.md``.
"""
