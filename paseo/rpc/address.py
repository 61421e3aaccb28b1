"""Listen and connect addresses, as the kernel's client and CLI fast paths import them.

The parser is part of the plugin contract (:mod:`paseo_hookspecs.address`, standard library
only) because transports parse ``daemon.listen`` themselves; this module is its kernel-side name.
"""

from paseo_hookspecs.address import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    WS_PATH,
    Address,
    AddressError,
    is_loopback_host,
    parse_address,
)

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "WS_PATH",
    "Address",
    "AddressError",
    "is_loopback_host",
    "parse_address",
]
