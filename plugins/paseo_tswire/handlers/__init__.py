"""Handlers of inbound session messages, one module per room; :mod:`paseo_tswire.dispatch`
maps each message ``type`` to one."""
