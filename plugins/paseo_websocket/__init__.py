"""The built-in WebSocket transport: JSON-RPC over WebSocket on TCP or a unix socket.

Registered through the ``paseo`` entry point ``websocket`` like any third-party plugin.
"""
