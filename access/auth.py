"""API keys, principals and the loopback rule.

`ENGRAM_API_KEYS="key1:tenantA,key2:tenantB"` issues keys scoped to one tenant;
`ENGRAM_ADMIN_KEYS="k1,k2"` issues admin keys (any tenant, global operations
such as metrics). With no key at all the service is open but serves loopback
clients only, and refuses to bind anything but a loopback address.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import BadRequest, Forbidden, Unauthorized

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


@dataclass(frozen=True)
class Principal:
    """Who is calling: a tenant-scoped key, an admin key, or a local caller in open mode."""

    name: str
    tenant: str | None = None
    admin: bool = False

    def check_tenant(self, tenant: str) -> None:
        """Refuse any tenant but the key's own (admins and local open-mode callers reach all)."""
        if self.tenant is not None and not self.admin and tenant != self.tenant:
            raise Forbidden("this API key is scoped to another tenant", "forbidden_tenant")

    def check_admin(self) -> None:
        if not self.admin:
            raise Forbidden("this operation needs an admin key", "admin_only")


LOCAL = Principal("local", admin=True)
"""Open mode (no keys configured): a loopback caller may do everything."""


@dataclass(frozen=True)
class KeyRing:
    """The configured keys. Empty means open mode, loopback only."""

    tenant_keys: Mapping[str, str] = field(default_factory=dict)
    admin_keys: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, tenant_keys: str = "", admin_keys: str = "") -> KeyRing:
        keys: dict[str, str] = {}
        for item in filter(None, (part.strip() for part in tenant_keys.split(","))):
            key, sep, tenant = item.rpartition(":")
            if not sep or not key or not tenant:
                raise BadRequest(f"ENGRAM_API_KEYS entries are key:tenant, got {item!r}", "bad_config")
            if key in keys:
                raise BadRequest(f"ENGRAM_API_KEYS names one key twice (for tenants {keys[key]!r} and {tenant!r}): "
                                 "every key must be unique", "bad_config")
            keys[key] = tenant
        admins = frozenset(filter(None, (part.strip() for part in admin_keys.split(","))))
        both = admins.intersection(keys)
        if both:
            raise BadRequest("a key is both in ENGRAM_API_KEYS (one tenant) and ENGRAM_ADMIN_KEYS (all tenants): "
                             "use different keys", "bad_config")
        return cls(keys, admins)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> KeyRing:
        env = os.environ if env is None else env
        return cls.parse(env.get("ENGRAM_API_KEYS", ""), env.get("ENGRAM_ADMIN_KEYS", ""))

    @property
    def open(self) -> bool:
        return not self.tenant_keys and not self.admin_keys

    def principal(self, token: str | None, client_host: str | None) -> Principal:
        """The caller behind a token; open mode admits loopback clients only."""
        if self.open:
            if not is_loopback(client_host):
                raise Forbidden("no API keys are configured: only loopback clients are served", "loopback_only")
            return LOCAL
        if not token:
            raise Unauthorized("missing API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'")
        for key in self.admin_keys:
            if hmac.compare_digest(key.encode(), token.encode()):
                return Principal(f"admin:{key[:4]}…", admin=True)
        for key, tenant in self.tenant_keys.items():
            if hmac.compare_digest(key.encode(), token.encode()):
                return Principal(f"tenant:{tenant}", tenant=tenant)
        raise Unauthorized("unknown API key")


def host_is_loopback(headers: Mapping[str, str]) -> bool:
    """The Host header names a loopback address (what open mode requires, against DNS rebinding)."""
    host = headers.get("host", "")
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    return is_loopback(name)


def token_from_headers(headers: Mapping[str, str]) -> str | None:
    """The bearer token or X-API-Key value of a request, if any."""
    auth = headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return headers.get("x-api-key") or None


def is_loopback(host: str | None) -> bool:
    """True for 127.0.0.0/8, ::1 and the usual localhost names."""
    if not host:
        return False
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, secured: bool, what: str = "the service") -> str:
    """Refuse a non-loopback bind without credentials; return the notice to print at start."""
    if secured:
        return f"{what}: API keys configured; every request must carry one"
    if not is_loopback(host):
        raise BadRequest(f"{what} has no API key configured and would be reachable on {host}: set "
                         "ENGRAM_API_KEYS / ENGRAM_ADMIN_KEYS (or ENGRAM_MCP_TOKEN) or bind to 127.0.0.1",
                         "insecure_bind")
    return f"{what}: no API keys configured (ENGRAM_API_KEYS); serving loopback clients only on {host}"
