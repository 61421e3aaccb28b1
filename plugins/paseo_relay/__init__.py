"""The relay: a phone or a remote Paseo app reaches this daemon through a relay that only
forwards bytes, end to end encrypted with the daemon's keypair (docs/relay.md).

Wire-compatible with the TypeScript Paseo's Cloudflare relay and its clients: the E2EE framing
(:mod:`paseo_relay.e2ee`), a relay server people can host (``paseo relay serve``), the pairing
offer (``paseo daemon pair``) and the CLI as a relay client (``--host "<offer URL>"``).
"""
