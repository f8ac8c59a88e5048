"""Forget is erasure, in the embedded runtime.

The runtime seals user text in the log under its owner's data key (see
`engram.core.crypto`); this module finishes what a `ForgetRequested` starts
once its transaction has committed:

- forget everything: the owner's data keys are destroyed, so every sealed text
  of theirs in `engram.db` (and in every copy or backup of it) is unreadable;
  later reads decode those events as shredded;
- every forget: the WAL is checkpointed and truncated, so the deleted
  projection rows (zeroed by `secure_delete`) leave no old page behind;
- every forget: one `ErasureRecorded` event says what was erased (counts, ids,
  when; no content), for analysts.

Keys live in `keys.db` beside `engram.db` (never in the log). Set
`ENGRAM_ENCRYPTION=off` to run without sealing (benchmarks of the overhead).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engram.core.crypto import FieldCipher
from engram.core.erasure import ENCRYPTION_ENV, encryption_enabled, erasure_record  # noqa: F401 - re-exported
from engram.core.keystore import SqliteKeyStore
from engram.core.text_caches import clear_text_caches
from engram.schemas.base import Event
from engram.schemas.events import ErasureRecorded, ForgetRequested, MemoryChanged

from .log import EventLog

KEYS_FILE = "keys.db"


def open_cipher(data_dir: Path | str, enabled: bool | None = None) -> FieldCipher | None:
    """The cipher of one embedded data directory (its key store is `keys.db` beside the log)."""
    path = Path(data_dir) / KEYS_FILE
    if not encryption_enabled(enabled) and not path.exists():
        return None
    return FieldCipher(SqliteKeyStore(path))


@dataclass
class _Pending:
    request: ForgetRequested
    memory_ids: list[str] = field(default_factory=list)


class Eraser:
    """Collects the forgets of a transaction; after it commits, destroys keys and records the erasure."""

    def __init__(self, cipher: FieldCipher | None) -> None:
        self.cipher = cipher
        self._pending: dict[str, _Pending] = {}
        self._committed: dict[str, _Pending] = {}

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def saw(self, event: Event, derived: list[Event]) -> None:
        """Called for every handled event with what a processor derived from it."""
        if not isinstance(event, ForgetRequested):
            return
        entry = self._pending.setdefault(event.event_id, _Pending(event))
        entry.memory_ids.extend(e.memory_id for e in derived
                                if isinstance(e, MemoryChanged) and e.change == "deleted")

    def commit(self) -> None:
        """The transaction committed: its forgets survive a later batch's rollback."""
        self._committed = dict(self._pending)

    def rollback(self) -> None:
        """The transaction failed: drop the forgets it added, keep the committed ones."""
        self._pending = dict(self._committed)

    def recover(self, log: EventLog, handled: int) -> int:
        """Re-queue forgets that committed but whose erasure never completed (a crash in between).

        A forget is complete once its `ErasureRecorded` is in the log; for the
        others the keys are destroyed now, on the next pump. Returns how many.
        """
        done = {e.request_id for _, e in log.scan(types=("ErasureRecorded",)) if isinstance(e, ErasureRecorded)}
        open_ids = []
        for seq, event in log.scan(types=("ForgetRequested",)):
            if seq <= handled and isinstance(event, ForgetRequested) and event.event_id not in done:
                self._pending.setdefault(event.event_id, _Pending(event))
                open_ids.append(event.event_id)
        self._committed = dict(self._pending)
        if open_ids:
            wanted = set(open_ids)
            for _, event in log.scan(types=("MemoryChanged",)):
                if isinstance(event, MemoryChanged) and event.change == "deleted" and wanted & set(event.causation_ids):
                    for cause in wanted & set(event.causation_ids):
                        self._pending[cause].memory_ids.append(event.memory_id)
        return len(open_ids)

    def complete(self) -> list[tuple[ErasureRecorded, ForgetRequested]]:
        """Destroy the keys of everything-forgets; return one erasure record per forget (and the forget)."""
        records = []
        pending, self._pending, self._committed = self._pending, {}, {}
        for entry in pending.values():
            request = entry.request
            keys = 0
            if request.everything and self.cipher is not None:
                keys = self.cipher.forget_owner(request.tenant_id, request.user_id)
            records.append((erasure_record(request, entry.memory_ids, keys), request))
        if records:
            clear_text_caches()
        return records
