"""``daemon.redaction`` in config.json: on by default, plus the user's own patterns."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

KIND = re.compile(r"^[A-Za-z0-9_.:-]{1,40}$")


class RedactionPattern(BaseModel):
    """One custom pattern: what it matches is replaced by ``[REDACTED:<name>]``."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    name: str = Field(description="the kind shown in [REDACTED:<name>]")
    regex: str = Field(min_length=1, max_length=2000)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not KIND.match(value):
            raise ValueError("expected 1-40 letters, digits or _.:-")
        return value

    @field_validator("regex")
    @classmethod
    def _regex(cls, value: str) -> str:
        # Compiled as it is used: inside a group of the combined pattern, so a global inline
        # flag that would break the combination (`(?i)` mid-pattern) is refused here, not later.
        try:
            re.compile(f"(?:{value})")
        except re.error as error:
            raise ValueError(
                f"invalid regular expression: {error} (use scoped flags such as (?i:...))"
            ) from None
        if re.compile(f"(?:{value})").match(""):
            raise ValueError("the pattern matches the empty string")
        return value


class RedactionConfig(BaseModel):
    """``daemon.redaction``."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    enabled: bool = Field(True, description="redact timeline entries and log records")
    patterns: list[RedactionPattern] = Field(default_factory=list, max_length=64)
    environment: bool = Field(
        True, description="redact the values of the daemon's own secret environment variables"
    )
