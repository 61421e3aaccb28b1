"""The wire protocol: JSON-RPC 2.0 over a transport, sessions and trust, the kernel's methods.

Kept import-light on purpose: :mod:`paseo.rpc.address` and :mod:`paseo.rpc.errors` are used by
the client and the CLI's fast paths, which must not pull in asyncio, websockets or pydantic.
"""
