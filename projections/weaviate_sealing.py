"""User text in Weaviate, sealed under the owner's data key (the distributed runtime with encryption on).

A sealed property holds `{"_sealed_text": {"k", "n", "c"}}` (`FieldCipher.seal_bytes`), bound to the
object's collection (with the store's prefix) and uuid, so a ciphertext copied onto another object does
not open. Once the owner's key is destroyed (a forget) the text opens to None and the store treats the
object as absent, while whatever Weaviate flushed to its LSM segments earlier is only ciphertext.
Without a cipher values are stored and read as they are.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from engram.core.crypto import FieldCipher
from engram.core.keystore import owner_of
from engram.schemas.memory import MemoryRecord

from .weaviate_schema import MEMORIES

MARK = "_sealed_text"
_HEAD = '{"' + MARK + '":'


class SealedText:
    """Seals and opens the user-text properties of one store's objects."""

    def __init__(self, cipher: FieldCipher | None, prefix: str) -> None:
        self.cipher = cipher
        self.prefix = prefix

    def _context(self, collection: str, uid: Any) -> bytes:
        return f"weaviate|{self.prefix}{collection}|{uid}".encode()

    def sealed(self, collection: str, uid: str, tenant: str, user: str, props: dict[str, Any],
               name: str) -> dict[str, Any]:
        """`props` with its `name` property sealed (changed in place); as it is without a cipher."""
        if self.cipher is not None:
            box = self.cipher.seal_bytes(owner_of(tenant, user), str(props[name]).encode("utf-8"),
                                         self._context(collection, uid))
            props[name] = orjson.dumps({MARK: box}).decode("ascii")
        return props

    def opened(self, collection: str, obj: Any, name: str) -> str | None:
        """The text of `obj`'s `name` property, or None once its key is destroyed (or it cannot open)."""
        value = obj.properties.get(name)
        if not isinstance(value, str) or not value.startswith(_HEAD):
            return value if isinstance(value, str) else None
        try:
            box = orjson.loads(value).get(MARK)
        except orjson.JSONDecodeError:
            return value
        if not isinstance(box, dict):
            return value
        if self.cipher is None:
            return None
        data = self.cipher.open_bytes(box, self._context(collection, str(obj.uuid)))
        return data.decode("utf-8") if data is not None else None

    def record(self, obj: Any) -> MemoryRecord | None:
        text = self.opened(MEMORIES, obj, "record")
        return MemoryRecord.model_validate_json(text) if text is not None else None

    def records(self, objs: Iterable[Any]) -> list[MemoryRecord]:
        """The memories of `objs` that still open."""
        return [r for r in (self.record(o) for o in objs) if r is not None]
