"""The agent port as this transport uses it: typed values into the JSON the translations read.

Agent work goes through ``SessionHandle.agents`` (:mod:`paseo_hookspecs.agents`, with the
session's access); its records, requests and events are pydantic models. The projections
(:mod:`paseo_tswire.projection`, :mod:`paseo_tswire.translate`, :mod:`paseo_tswire.timeline`)
read their JSON form — ``model_dump(mode="json", by_alias=True)``, exactly what ``/ws`` puts on
the wire — so one translation serves the port's values and the session's answers alike. That
is a conversion into dicts, no encoding: each outbound frame is still encoded once.
"""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.errors import PaseoError
from pydantic import BaseModel

from paseo_tswire.bridge import RpcFailure

Failure = (RpcFailure, PaseoError)
"""What a daemon call raises, by the way it took: an answer of the session (``RpcFailure``)
or a port error. Both carry ``code``, ``message`` and ``data``."""


def as_json(model: BaseModel) -> dict[str, Any]:
    """``model`` as ``/ws`` sends it."""
    return model.model_dump(mode="json", by_alias=True)
