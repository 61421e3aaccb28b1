"""Secrets kept out of what the daemon stores and sends (docs/redaction.md)."""

from paseo.redaction.redactor import Redactor, build_redactor
from paseo.redaction.settings import RedactionConfig, RedactionPattern

__all__ = ["RedactionConfig", "RedactionPattern", "Redactor", "build_redactor"]
