"""The ``json`` store driver: the TypeScript Paseo ``$PASEO_HOME`` layout, indexed in memory.

Layout (exactly the data model's, so a home written by TypeScript Paseo loads): one file per
agent in ``agents/{sanitized-cwd}/{agentId}.json``, per schedule in ``schedules/{id}.json``, per
helper process in ``runtime/managed-processes/{id}.json``; whole-file collections
``projects/projects.json``, ``projects/workspaces.json``, ``projects/workspace-labels.json``,
``push-tokens.json`` and ``plugins/sources.json``; the label transaction marker
``projects/workspace-labels.transaction.json``. Python Paseo adds ``timelines/{agentId}.jsonl``
(append-only, one timeline entry per line) and the trash's cleanup queue
``trash/cleanup/{itemId}.json`` with its sweep marker ``trash/sweep.json`` (see
:mod:`paseo_store_json._trash`; open finishes a purge a crash interrupted).

**Memory holds an index, disk the records.** :meth:`JsonStore.open` reads and validates every
schedule, helper process and cleanup record file (bytes plus pydantic's ``model_validate_json``,
so a damaged file is quarantined at open); agents' rows come from the durable index file
(:mod:`paseo_store_json._index_file`: only its hot rows before serving) and their records are
read after open, beside the serving store, to check it (:mod:`paseo_store_json._keeper`;
listings wait or say partial until then). It keeps, per record, only a compact index row
(:mod:`paseo_store_json._index`: sort key, file, the fields listings filter on, and the ids per
status and label so a selective listing walks only those; :mod:`paseo_store_json._bulk` is the
open's bulk read). Full records
are read from their files on demand (a listing page in one worker-thread pass) and the most
recently used ones are kept in a cache bounded by count; the small whole-file collections stay
in memory whole. Only timelines are loaded per agent on first use; then only their index (seq
and line offset of each entry) stays, plus the newest entries of the recently used ones within a
bound in bytes (``_timeline.CACHE_TIMELINE_BYTES``). Callers always get private copies. A
record file found damaged when read on demand is quarantined then, like at open.

**Write path.** Each mutation takes its collection's lock (one per file-backed collection, one
per id for agents, schedules, helper processes and timelines), validates the result strictly
(``InvalidParams``), checks uniqueness and compare-and-set conditions under the lock, writes in a
worker thread (temp file in the target directory, fsync, rename, fsync the directory), and only
then publishes to memory. A failed write raises ``StorageError`` with memory and disk still at
the previous version. A mutation runs as its own task, so cancelling the caller cannot leave a
write on disk that memory never saw; :meth:`JsonStore.close` waits for in-flight writes.
Timeline appends are the exception to the worker thread: they are written on the loop (into
the page cache, which a killed daemon keeps; one ``write`` into a file kept open, see
:class:`FileOps`) and fsync-ed by a background group commit that ``close`` waits for (see
:mod:`paseo_store_json._timeline`).

**Recovery at open**, before anything is served: leftover temp files are deleted; a label
transaction marker is settled (``prepared`` rolls back to its before-images, ``committed`` is
only removed, never replayed; an unreadable marker refuses to open); a torn trailing timeline
line is cut. A record file that is not valid JSON or fails the schema is moved to
``{home}/quarantine/{relative path}.{UTC timestamp}``, logged and listed in
:attr:`JsonStore.quarantined`, and the rest loads. For a whole-file collection whose JSON is
valid but some entries are not (or repeat an id), the valid entries load and the file is left
untouched for now, but the original is first *copied* to quarantine: the next write of that
collection rewrites it without the invalid entries, and by then a durable copy exists. Of two
agent files claiming one id, the one at its canonical path (else the newer) is kept and the
other quarantined. When ``projects.json`` itself goes to quarantine, each workspace whose
project record went with it gets a project rebuilt from its workspaces (written at once), so
intact workspaces stay listed instead of hiding as orphans. See :mod:`paseo_store_json._labels`
for the label compound commit and the freeze.
"""

from __future__ import annotations

from paseo_store_json._files import FileOps
from paseo_store_json._store import JsonStore

__all__ = ["FileOps", "JsonStore"]
