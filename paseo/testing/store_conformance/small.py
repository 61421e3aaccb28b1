"""The ``push_tokens``, ``managed_processes`` and ``plugin_sources`` repositories."""

from __future__ import annotations

from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    ManagedProcessRecord,
    dump_record,
)

from paseo.testing.store_conformance.base import StoreSuite, store_test
from paseo.testing.store_conformance.records import (
    _plugin_source,
    managed_process_data,
    plugin_source_data,
)


class PushTokenTests(StoreSuite):
    """The ``push_tokens`` repository."""

    @store_test
    async def test_push_tokens(self, store: Store) -> None:
        tokens = ["ExponentPushToken[aaa]", "ExponentPushToken[bbb]", "ExponentPushToken[ccc]"]
        for token in tokens:
            assert await store.push_tokens.add(token) is True
        assert await store.push_tokens.add(tokens[0]) is False
        assert sorted(await store.push_tokens.list()) == tokens
        assert await store.push_tokens.remove(tokens[1]) is True
        assert await store.push_tokens.remove(tokens[1]) is False
        store = await self.reopen(store)
        assert sorted(await store.push_tokens.list()) == [tokens[0], tokens[2]]


class ManagedProcessTests(StoreSuite):
    """The ``managed_processes`` repository."""

    @store_test
    async def test_managed_processes(self, store: Store) -> None:
        first = managed_process_data()
        second = managed_process_data(pid=777, args=[], metadata={})
        for data in (first, second):
            await store.managed_processes.put(ManagedProcessRecord.model_validate(data))
        replaced = dict(first, pid=999, args=["serve"])
        await store.managed_processes.put(ManagedProcessRecord.model_validate(replaced))
        for _ in range(2):
            got = await store.managed_processes.get(first["id"])
            assert got is not None
            assert dump_record(got) == replaced
            listed = {p.id: dump_record(p) for p in await store.managed_processes.list()}
            assert listed == {first["id"]: replaced, second["id"]: second}
            store = await self.reopen(store)
        assert await store.managed_processes.delete(first["id"]) is True
        assert await store.managed_processes.delete(first["id"]) is False
        assert await store.managed_processes.get(first["id"]) is None
        store = await self.reopen(store)
        assert [p.id for p in await store.managed_processes.list()] == [second["id"]]


class PluginSourceTests(StoreSuite):
    """The ``plugin_sources`` repository."""

    @store_test
    async def test_plugin_sources(self, store: Store) -> None:
        git = plugin_source_data("git")
        npm = plugin_source_data("npm")
        await store.plugin_sources.put("lint", _plugin_source(git))
        await store.plugin_sources.put("fmt", _plugin_source(npm))
        for _ in range(2):
            got = await store.plugin_sources.get("lint")
            assert got is not None
            assert dump_record(got) == git
            listed = {k: dump_record(v) for k, v in (await store.plugin_sources.list()).items()}
            assert listed == {"lint": git, "fmt": npm}
            store = await self.reopen(store)
        await store.plugin_sources.put("lint", _plugin_source(npm))
        assert await store.plugin_sources.delete("fmt") is True
        assert await store.plugin_sources.delete("fmt") is False
        assert await store.plugin_sources.get("fmt") is None
        store = await self.reopen(store)
        listed = {k: dump_record(v) for k, v in (await store.plugin_sources.list()).items()}
        assert listed == {"lint": npm}
