"""App tokens: stored as digests in a 0600 file, re-read when it changes, granting a remote
session (never local, even from this machine), refused once revoked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from paseo.home.app_tokens import MAX_NAME, AppTokenError, AppTokens
from paseo.rpc.guard import PasswordGuard
from paseo.rpc.trust import Authenticator


def test_a_token_is_kept_as_a_digest_in_a_private_file(tmp_path: Path) -> None:
    store = AppTokens(tmp_path / "app-tokens.json")
    token, secret = store.create("laptop")
    text = (tmp_path / "app-tokens.json").read_text()
    assert secret not in text
    assert (tmp_path / "app-tokens.json").stat().st_mode & 0o777 == 0o600
    assert json.loads(text)["tokens"][0]["id"] == token.id
    assert store.verify(secret) == token
    assert store.verify(secret + "x") is None
    assert store.verify("not-a-token") is None


def test_changes_by_another_process_count_at_once(tmp_path: Path) -> None:
    daemon = AppTokens(tmp_path / "app-tokens.json")
    cli = AppTokens(tmp_path / "app-tokens.json")
    assert daemon.verify("paseo_app_x") is None  # read once: no file
    token, secret = cli.create("phone")
    assert daemon.verify(secret) == token
    cli.revoke("phone")
    assert daemon.verify(secret) is None


def test_bad_names_duplicates_and_unknown_tokens_are_refused(tmp_path: Path) -> None:
    store = AppTokens(tmp_path / "app-tokens.json")
    store.create("one")
    for name in ("", "x" * (MAX_NAME + 1), "bad\x1b[2J", "one"):
        with pytest.raises(AppTokenError):
            store.create(name)
    with pytest.raises(AppTokenError, match="no app token"):
        store.revoke("two")


def test_an_unreadable_file_grants_nothing(tmp_path: Path) -> None:
    path = tmp_path / "app-tokens.json"
    store = AppTokens(path)
    _token, secret = store.create("one")
    path.write_text("{not json")
    assert store.verify(secret) is None


def test_a_token_grants_a_remote_session_even_from_this_machine(tmp_path: Path) -> None:
    store = AppTokens(tmp_path / "app-tokens.json")
    _token, secret = store.create("browser")
    auth = Authenticator("local-secret", None, PasswordGuard(), store)

    async def kinds() -> list[str | None]:
        return [
            await auth.authenticate(secret, local=True, peer="127.0.0.1"),
            await auth.authenticate(secret, local=False, peer="203.0.113.9"),
            await auth.authenticate("local-secret", local=True, peer="127.0.0.1"),
            await auth.authenticate("paseo_app_guess", local=False, peer="203.0.113.9"),
        ]

    assert asyncio.run(kinds()) == ["remote", "remote", "local", None]
