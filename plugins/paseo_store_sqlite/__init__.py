"""The ``sqlite`` store driver: every record in one SQLite database, ``$PASEO_HOME/paseo.db``.

Chosen with ``"storage": {"driver": "sqlite"}`` in ``config.json``; ``paseo store migrate`` copies
an existing home's records into it (and back). Each record is stored whole as its
``dump_record`` JSON, so unknown fields survive, beside indexed copies of the fields that listings
filter and sort on. See :mod:`paseo_store_sqlite._database` for the connection rules and
:mod:`paseo_store_sqlite._migrations` for the schema.
"""

from paseo_store_sqlite.store import DATABASE_FILE, SqliteStore

__all__ = ["DATABASE_FILE", "SqliteStore"]
