"""Hook implementations of the relay plugin."""

from __future__ import annotations
