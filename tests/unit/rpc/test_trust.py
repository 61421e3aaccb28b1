"""Host, Origin and proxy checks, and authentication."""

from __future__ import annotations

import asyncio

import pytest

from paseo.rpc.guard import PasswordGuard
from paseo.rpc.trust import AccessPolicy, Authenticator, hash_password, is_local_client


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("localhost", True),
        ("localhost:6767", True),
        ("app.localhost:80", True),
        ("127.0.0.1:6767", True),
        ("[::1]:6767", True),
        ("192.168.1.20", True),
        ("evil.example", False),
        ("localhost.evil.example", False),
        ("", False),
        (None, False),
        ("box.example:6767", True),
        ("a.dev.example", True),
        ("dev.example", False),
    ],
)
def test_host_allowlist(host: str | None, allowed: bool) -> None:
    policy = AccessPolicy(hostnames=["box.example", "*.dev.example"])
    assert policy.host_allowed(host) is allowed


def test_any_host_when_true() -> None:
    assert AccessPolicy(hostnames=True).host_allowed("anything.example")


def test_origins() -> None:
    policy = AccessPolicy(allowed_origins=["https://app.example/"])
    assert policy.origin_allowed(None, "localhost")
    assert policy.origin_allowed("https://APP.example", "localhost")
    assert not policy.origin_allowed("https://evil.example", "localhost:6767")
    assert not policy.origin_allowed("null", "localhost")
    assert policy.origin_allowed("http://localhost:6767", "localhost:6767")  # same origin
    assert AccessPolicy(allowed_origins=["*"]).origin_allowed("https://x.example", None)


def test_forwarded_for_only_from_trusted_proxies() -> None:
    default = AccessPolicy()
    assert default.client_address("127.0.0.1", "203.0.113.5") == "203.0.113.5"
    assert default.client_address("198.51.100.7", "127.0.0.1") == "198.51.100.7"
    chain = AccessPolicy(trusted_proxies=["loopback", "10.0.0.0/8"])
    assert chain.client_address("127.0.0.1", "203.0.113.5, 10.1.2.3") == "203.0.113.5"
    assert AccessPolicy(trusted_proxies=[]).client_address("127.0.0.1", "203.0.113.5") == (
        "127.0.0.1"
    )


def test_local_client() -> None:
    assert is_local_client(unix_socket=True, client_address=None)
    assert is_local_client(unix_socket=False, client_address="127.0.0.1")
    assert is_local_client(unix_socket=False, client_address="::ffff:127.0.0.1")
    assert not is_local_client(unix_socket=False, client_address="203.0.113.5")
    assert not is_local_client(unix_socket=False, client_address=None)


def test_authenticator() -> None:
    hashed = hash_password("s3cret-password")
    guard = PasswordGuard()
    auth = Authenticator("local-token", hashed, guard)

    async def kinds() -> list[str | None]:
        return [
            await auth.authenticate(token, local=local, peer="203.0.113.5")
            for token, local in [
                ("local-token", True),
                ("local-token", False),
                ("s3cret-password", False),
                ("s3cret-password", True),
                ("wrong", True),
                (None, True),
            ]
        ]

    try:
        assert asyncio.run(kinds()) == ["local", None, "remote", "remote", None, None]
        without_password = Authenticator("local-token", None, guard)
        assert (
            asyncio.run(without_password.authenticate("anything", local=False, peer="p"))
            is None
        )
        broken = Authenticator("t", "not-a-bcrypt-hash", guard)
        assert asyncio.run(broken.authenticate("x", local=False, peer="p")) is None
    finally:
        guard.close()


def test_localhost_names_are_forwarded_only_on_a_loopback_listener() -> None:
    # A relayed connection needs no credential: on a LAN listener a remote client could send
    # ``Host: web.app.localhost`` by hand, so there the name must be configured.
    assert AccessPolicy().forward_allowed("web.app.localhost:6767")
    lan = AccessPolicy(loopback_listener=False)
    assert lan.host_allowed("web.app.localhost:6767")  # the RPC endpoint still answers it
    assert not lan.forward_allowed("web.app.localhost:6767")
    assert not lan.forward_allowed("localhost")
    assert lan.forward_allowed("box.example") is False  # not allowed at all
    assert AccessPolicy(hostnames=[".localhost"], loopback_listener=False).forward_allowed(
        "web.app.localhost"
    )
    assert AccessPolicy(hostnames=["web.app.localhost"], loopback_listener=False).forward_allowed(
        "web.app.localhost:1"
    )
    anything = AccessPolicy(hostnames=True, loopback_listener=False)
    assert anything.forward_allowed("web.app.localhost")


def test_the_listener_decides_whether_localhost_names_are_forwarded() -> None:
    from paseo.rpc.server import _listens_on_loopback

    assert _listens_on_loopback("127.0.0.1:6767")
    assert _listens_on_loopback("[::1]:6767")
    assert _listens_on_loopback("unix:///tmp/paseo.sock")
    assert not _listens_on_loopback("0.0.0.0:6767")
    assert not _listens_on_loopback("192.168.1.20:6767")
    assert not _listens_on_loopback("not an address")
