"""Durable file primitives. They live in the plugin contract (:mod:`paseo_hookspecs.atomic`) so
the built-in store drivers and third-party plugins write files exactly as the kernel does."""

from paseo_hookspecs.atomic import (
    TEMP_SUFFIX,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    create_private_file,
    fsync_directory,
    is_temp_file,
    read_json,
    sweep_temp_files,
    temp_path_for,
)

__all__ = [
    "TEMP_SUFFIX",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "create_private_file",
    "fsync_directory",
    "is_temp_file",
    "read_json",
    "sweep_temp_files",
    "temp_path_for",
]
