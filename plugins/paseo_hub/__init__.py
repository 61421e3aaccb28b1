"""The Paseo Hub relationship: one opt-in, outbound connection from this daemon to a Paseo Hub.

``paseo hub connect <url> --token <token>`` enrolls the daemon over HTTP(S); the service then
keeps a direct WebSocket to the Hub, runs the executions the Hub dispatches as agents owned by
the relationship, and streams only those agents' events back. See ``docs/hub.md``.

The plugin uses the plugin contract only: it drives and observes agents through the agent
port (``DaemonContext.agents``, :mod:`paseo_hookspecs.agents`); the relationship's policy —
owner scoping, pre-approval of granted tools, resume intents, auto-archive — is all here.
"""
