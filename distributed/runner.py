"""The transport-free half of a distributed stage: Kafka records in, records and state writes out.

`StageRunner.run_batch` decodes each record (upcasting old versions), puts
derived records back into origin order (`engram.distributed.chain`: a record
whose predecessor has not arrived is held back), skips what the key's state
has already applied, calls the pure processor, links the outputs of L0 inputs
into their chains, and
returns the derived records and the new table values. It does no I/O and
holds no business logic; the faust adapter (`engram.distributed.app`) only
moves its results in the commit order. Bad input becomes a `DeadLettered`
record and the batch moves on.
"""

from __future__ import annotations

import base64
import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from engram.core.crypto import FieldCipher
from engram.schemas.base import Event, Identifier, derive_id
from engram.schemas.codec import EventDecodeError, decode, encode
from engram.schemas.events import DeadLettered
from engram.schemas.topics import CATALOGUE, LEGACY_TOPICS, TOPIC_OF_TYPE, topic_for
from engram.streams.harness import dead_letter
from engram.streams.processor import Processor, ProcessorContext

from .chain import ChainGate, ChainLinks, link_header
from .governor import partition_of
from .progress import Gap, Progress
from .records import BatchResult, Inbound, Outbound, StateWrite
from .topics import Namespace
from .tracking import (
    DEFAULT_RECENT_IDS, ORIGIN_HEADER, TYPE_HEADER, Applied, Entry, Origin, decode_entry, encode_entry,
    origin_of,
)

log = logging.getLogger("engram.distributed.runner")

_IDENTIFIER: TypeAdapter[str] = TypeAdapter(Identifier)
_PARTITIONS = {topic.name: topic.partitions for topic in CATALOGUE}
DeadLetterOwner = Callable[[str, str | None], bool]
"""(catalogue topic, event type or None if unknown) -> True if this stage dead-letters such records."""


@dataclass
class _Slot:
    """A key's state during one batch, with what is needed to rebuild it if the processor fails."""

    key: bytes
    partition: int
    base: bytes | None
    entry: Entry[Any]
    history: list[tuple[Origin, Event]] = field(default_factory=list)


@dataclass
class _Batch:
    """What one `run_batch` call accumulates: results, key slots, progress and its chain gates and links."""

    store: Mapping[bytes, bytes]
    progress: Progress
    result: BatchResult = field(default_factory=BatchResult)
    slots: dict[bytes, _Slot] = field(default_factory=dict)
    gates: dict[tuple[str, int], ChainGate] = field(default_factory=dict)
    links: dict[tuple[str, int], ChainLinks] = field(default_factory=dict)

    def gate(self, record: Inbound) -> ChainGate:
        tp = (record.topic, record.partition)
        gate = self.gates.get(tp)
        if gate is None:
            gate = self.gates[tp] = ChainGate(self.progress.meta(*tp))
        return gate

    def link(self, record: Inbound) -> ChainLinks:
        tp = (record.topic, record.partition)
        links = self.links.get(tp)
        if links is None:
            links = self.links[tp] = ChainLinks(self.progress.meta(*tp))
        return links


class DecodeCache:
    """Decoded records by (topic, partition, offset), shared by the stages of one worker (turns are read by two).

    Events are frozen, so sharing one decoded object between stages is safe; bounded, oldest dropped first.
    """

    def __init__(self, size: int = 50_000, cipher: FieldCipher | None = None) -> None:
        self.size = size
        self.cipher = cipher
        self._items: dict[tuple[str, int, int], tuple[bytes, Event | EventDecodeError]] = {}

    def decode(self, record: Inbound) -> Event | EventDecodeError:
        key = (record.topic, record.partition, record.offset)
        value = record.value if record.value is not None else b""
        found = self._items.get(key)
        if found is not None and found[0] == value:
            return found[1]
        try:
            event: Event | EventDecodeError = decode(value, self.cipher)
        except EventDecodeError as exc:
            event = exc
        self._items[key] = (value, event)
        if len(self._items) > self.size:
            del self._items[next(iter(self._items))]
        return event


class StageRunner:
    """Runs one pure processor over batches of records; the runner of the distributed runtime."""

    def __init__(self, processor: Processor, ctx: ProcessorContext, ns: Namespace,  # type: ignore[type-arg]
                 owns_dead_letter: DeadLetterOwner, recent_ids: int = DEFAULT_RECENT_IDS,
                 cache_size: int = 20_000, decoded: DecodeCache | None = None,
                 cipher: FieldCipher | None = None) -> None:
        self.processor = processor
        self.cipher = cipher
        """Seals outputs and states under the owners' keys (`engram.distributed.erasure`); None: plain."""
        self.decoded = decoded or DecodeCache(cipher=cipher)
        self.ctx = ctx
        self.ns = ns
        self.owns_dead_letter = owns_dead_letter
        self.recent_ids = recent_ids
        self.cache_size = cache_size
        self.counters: Counter[str] = Counter()
        self._cache: dict[bytes, tuple[bytes, Entry[Any]]] = {}
        self._partitions: dict[tuple[bytes, int], int] = {}

    @property
    def stateful(self) -> bool:
        return self.processor.state_type is not None

    def gaps(self, records: Sequence[Inbound], store: Mapping[bytes, bytes]) -> list[Gap]:
        """Records faust did not deliver before these (read them back and pass them as `filled`)."""
        return Progress(store).gaps(records)

    def tail_gaps(self, store: Mapping[bytes, bytes], ends: Mapping[tuple[str, int], int]) -> list[Gap]:
        """Given idle partitions' end offsets: the records after the progress that never arrived."""
        return Progress(store).tail_gaps(ends)

    def run_batch(self, records: Sequence[Inbound], store: Mapping[bytes, bytes],
                  filled: Mapping[tuple[str, int], Sequence[Inbound]] | None = None) -> BatchResult:
        """Handle records in order; `store` is the table (key -> value) as of the batch start.

        Records below the stage's progress are skipped; `filled` holds read-back gaps. The
        result's writes are the changed states, then the new progress (the order they must land in).
        """
        batch = _Batch(store, Progress(store))
        result, handled = batch.result, 0
        for record in batch.progress.ordered(records, filled or {}):
            handled += 1
            origin = self._origin(record)
            for ready in batch.gate(record).admit(record, origin):
                self._one(ready, self._origin(ready) if ready is not record else origin, batch)
        result.counts["behind_progress"] += len(records) + sum(map(len, (filled or {}).values())) - handled
        for slot in batch.slots.values():
            self._write(slot, result)
        for (topic, partition), gate in batch.gates.items():
            if gate.newly_held:
                result.counts["held_back"] += gate.newly_held
            if gate.changed:
                gate.store()
                batch.progress.touch(topic, partition)
        result.writes.extend(batch.progress.writes())
        self.counters.update(result.counts)
        return result

    @staticmethod
    def _origin(record: Inbound) -> Origin:
        return origin_of(record.topic, record.partition, record.offset, record.headers)

    # -- one record -----------------------------------------------------------------
    def _one(self, record: Inbound, origin: Origin, batch: _Batch) -> None:
        result = batch.result
        event = self._decode(record, batch)
        if event is None:
            return
        key = self.processor.state_key(event)
        if key is None:
            outputs = self._stateless(event, result)
        else:
            slot = self._slot(key.encode(), record.partition, batch.store, batch.slots)
            if slot.entry.applied.seen(origin, event.event_id):
                result.counts["replayed"] += 1
                return
            outputs = self._stateful(slot, origin, event, result)
        result.counts["processed"] += 1
        self._emit(outputs, origin, record, batch)

    def _decode(self, record: Inbound, batch: _Batch) -> Event | None:
        """The record's event, or None when it is not this stage's (or is bad: then maybe dead-lettered)."""
        result = batch.result
        topic = self.ns.catalogue_name(record.topic) or record.topic
        hinted = record.header(TYPE_HEADER)
        hinted_type = hinted.decode(errors="replace") if hinted is not None else None
        if TOPIC_OF_TYPE.get(hinted_type or "") == topic and hinted_type not in self.processor.consumes:
            result.counts["ignored"] += 1
            return None
        event = self.decoded.decode(record)
        if isinstance(event, EventDecodeError):
            self._reject(record, topic, None, str(event), batch)
            return None
        problem = _misplaced(event, topic, record.key)
        if problem is not None:
            self._reject(record, topic, event.type, problem, batch)
            return None
        if event.type not in self.processor.consumes:
            result.counts["ignored"] += 1
            return None
        return event

    def _stateless(self, event: Event, result: BatchResult) -> list[Event]:
        try:
            _, outputs = self.processor.process(None, event, self.ctx)
        except Exception as exc:  # noqa: BLE001 - a processor bug must not block the partition
            return self._failed(event, exc, result)
        return outputs

    def _stateful(self, slot: _Slot, origin: Origin, event: Event, result: BatchResult) -> list[Event]:
        try:
            state, outputs = self.processor.process(slot.entry.state, event, self.ctx)
        except Exception as exc:  # noqa: BLE001 - rebuild the key's state without this event
            self._rebuild(slot)
            return self._failed(event, exc, result)
        slot.entry.state = state
        slot.entry.applied.record(origin, event.event_id, self.recent_ids)
        slot.history.append((origin, event))
        return outputs

    def _failed(self, event: Event, exc: Exception, result: BatchResult) -> list[Event]:
        log.exception("processor %s failed on %s", self.processor.name, event.event_id)
        result.counts["dead_lettered"] += 1
        return [dead_letter(self.processor.name, event, exc)]

    # -- state ------------------------------------------------------------------------
    def _slot(self, key: bytes, partition: int, store: Mapping[bytes, bytes], slots: dict[bytes, _Slot]) -> _Slot:
        slot = slots.get(key)
        if slot is None:
            base = store.get(key)
            slot = slots[key] = _Slot(key, partition, base, self._load(key, base))
        return slot

    def _load(self, key: bytes, raw: bytes | None) -> Entry[Any]:
        """The live entry for a stored value: the cached objects if the value is the one we wrote."""
        cached = self._cache.pop(key, None)
        if cached is not None and cached[0] is raw:
            return cached[1]
        if raw is None:
            return Entry(Applied(), None)
        state_type: type[BaseModel] = self.processor.state_type  # type: ignore[assignment]
        return decode_entry(raw, state_type, self.cipher, key)

    def _rebuild(self, slot: _Slot) -> None:
        """After a processor failure the state may be half-changed: redo this batch's events on the stored one."""
        self._cache.pop(slot.key, None)
        state_type: type[BaseModel] = self.processor.state_type  # type: ignore[assignment]
        slot.entry = (decode_entry(slot.base, state_type, self.cipher, slot.key) if slot.base is not None
                      else Entry(Applied(), None))
        for origin, event in slot.history:
            slot.entry.state, _ = self.processor.process(slot.entry.state, event, self.ctx)
            slot.entry.applied.record(origin, event.event_id, self.recent_ids)

    def _write(self, slot: _Slot, result: BatchResult) -> None:
        if not slot.history:
            if slot.base is not None:
                self._remember(slot.key, slot.base, slot.entry)
            return
        raw = encode_entry(slot.entry, self.cipher, slot.key)
        result.writes.append(StateWrite(slot.key, slot.partition, raw))
        self._remember(slot.key, raw, slot.entry)

    def _remember(self, key: bytes, raw: bytes, entry: Entry[Any]) -> None:
        self._cache[key] = (raw, entry)
        if len(self._cache) > self.cache_size:
            del self._cache[next(iter(self._cache))]

    # -- outputs --------------------------------------------------------------------------
    def _emit(self, outputs: list[Event], origin: Origin, record: Inbound, batch: _Batch) -> None:
        for index, event in enumerate(outputs):
            batch.result.outputs.append(self._outbound(event, origin.child(index), record, batch))
            batch.result.counts[f"out.{event.type}"] += 1

    def _outbound(self, event: Event, origin: Origin, record: Inbound, batch: _Batch) -> Outbound:
        """The record of a derived event; outputs of an L0 record are linked into their chain (`chain`)."""
        catalogue = topic_for(event.type)
        topic, key = self.ns.topic(catalogue), event.partition_key.encode()
        headers = [(ORIGIN_HEADER, origin.header()), (TYPE_HEADER, event.type.encode())]
        if origin.tp != f"{record.topic}:{record.partition}":
            return Outbound(topic, key, encode(event, self.cipher), headers)
        partition = self._partition(key, _PARTITIONS[catalogue])
        headers.append(link_header(batch.link(record).link(f"{topic}:{partition}", origin.position)))
        return Outbound(topic, key, encode(event, self.cipher), headers, partition)

    def _partition(self, key: bytes, partitions: int) -> int:
        """The keyed partitioner's choice, cached (murmur2 in Python costs tens of µs; keys are users)."""
        found = self._partitions.get((key, partitions))
        if found is None:
            if len(self._partitions) >= self.cache_size * 5:
                self._partitions.clear()
            found = self._partitions[(key, partitions)] = partition_of(key, partitions)
        return found

    def _reject(self, record: Inbound, topic: str, event_type: str | None, reason: str, batch: _Batch) -> None:
        if not self.owns_dead_letter(topic, event_type):
            batch.result.counts["skipped_bad"] += 1
            return
        letter = bad_record_letter(record, topic, self.processor.name, reason)
        origin = Origin(f"{record.topic}:{record.partition}", (record.offset,))
        batch.result.outputs.append(self._outbound(letter, origin, record, batch))
        batch.result.counts["dead_lettered"] += 1


def _misplaced(event: Event, topic: str, key: bytes | None) -> str | None:
    """Why a well-formed event cannot be processed here, if it cannot."""
    if TOPIC_OF_TYPE.get(event.type) != topic and topic not in LEGACY_TOPICS.get(event.type, ()):
        return f"{event.type} does not belong on topic {topic}"
    if key is not None and key != event.partition_key.encode():
        return f"record key {key[:200]!r} is not the event's tenant/user {event.partition_key!r}"
    return None


def bad_record_letter(record: Inbound, topic: str, stage: str, reason: str) -> DeadLettered:
    """A dead letter for a record that could not be used, with its original bytes."""
    raw = record.value or b""
    try:
        text, note = raw.decode("utf-8"), ""
    except UnicodeDecodeError:
        text, note = base64.b64encode(raw).decode(), " (raw is base64: not valid UTF-8)"
    tenant, user = _owner(record.key)
    when = datetime.fromtimestamp(record.timestamp, timezone.utc) if record.timestamp else datetime(
        1970, 1, 1, tzinfo=timezone.utc)
    return DeadLettered(
        event_id=derive_id(f"{record.topic}/{record.partition}/{record.offset}", stage, "dead-letter"),
        occurred_at=when, tenant_id=tenant, user_id=user, source_topic=topic,
        reason=f"{stage}: {reason}{note}"[:2000], raw=text,
    )


def _owner(key: bytes | None) -> tuple[str, str]:
    """Tenant and user from a record key, when it is a valid `tenant/user`."""
    parts = (key or b"").decode(errors="replace").split("/")
    try:
        if len(parts) == 2:
            return _IDENTIFIER.validate_python(parts[0]), _IDENTIFIER.validate_python(parts[1])
    except ValidationError:
        pass
    return "unknown", "unknown"
