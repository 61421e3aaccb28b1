"""The built-in ``claude`` provider: Claude Code's CLI in its stream-json control mode.

Registered through the ``paseo`` entry point ``claude`` like any third-party plugin. One
``claude -p --input-format stream-json --output-format stream-json`` process per session stays
alive across turns; permission prompts arrive over stdio (``--permission-prompt-tool stdio``).
"""
