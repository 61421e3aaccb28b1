"""The built-in ``codex`` agent provider: OpenAI's Codex CLI through ``codex app-server``.

Registered through the ``paseo`` entry point ``codex`` like any third-party plugin. See
:mod:`paseo_codex.session` for how Codex's protocol maps onto Paseo's events.
"""
