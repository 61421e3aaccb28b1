"""``paseo doctor``: checks of everything a working Paseo needs, each with what it found and
the exact fix.

One module per group of checks (:mod:`.home`, :mod:`.configfile`, :mod:`.listen`,
:mod:`.store`, :mod:`.tools`, :mod:`.providers`, :mod:`.served`, :mod:`.speech`), each a
function from a :class:`~paseo.doctor.model.DoctorContext` to a list of
:class:`~paseo.doctor.model.Check`; :mod:`.runner` runs them in order. Nothing here imports a
plugin at module level: provider plugins are loaded only by the provider checks, and only when
no daemon can answer for them (``paseo --help`` imports none).
"""

from paseo.doctor.model import Check, DoctorContext, Status
from paseo.doctor.runner import run_checks

__all__ = ["Check", "DoctorContext", "Status", "run_checks"]
