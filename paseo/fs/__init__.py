"""Durable file primitives shared by the kernel and the built-in plugins."""

from paseo.fs.atomic import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    fsync_directory,
    read_json,
)

__all__ = [
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "fsync_directory",
    "read_json",
]
