"""The distributed stage runner with a cipher (no broker): same derivations, no plain text in records or states."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from engram.core.crypto import FieldCipher
from engram.core.keystore import MemoryKeyStore
from engram.distributed.app import dead_letter_owner, stages_for
from engram.distributed.erasure import open_state, prefix_of, seal_state
from engram.distributed.runner import StageRunner
from engram.distributed.tracking import TYPE_HEADER, Applied, Entry, Origin, decode_entry, encode_entry
from engram.runtime.context import default_context
from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.codec import decode, encode
from engram.schemas.events import TurnRecorded
from engram.streams.consolidate import UserMemories
from tests.distributed.helpers import edge_events, mismatch, reference
from tests.distributed.test_runner import NS, SimKafka


@dataclass
class SealedKafka(SimKafka):
    cipher: FieldCipher = field(default_factory=lambda: FieldCipher(MemoryKeyStore()))

    def runners(self) -> list[StageRunner]:
        stages = stages_for("processors")
        return [StageRunner(s.processor, default_context(), NS, dead_letter_owner(stages, s), cipher=self.cipher)
                for s in stages]

    def derived(self) -> dict[str, Event]:
        found: dict[str, Event] = {}
        for topic, parts in self.logs.items():
            if topic in (NS.topic(t.TURNS), NS.topic(t.COMMANDS)):
                continue
            for record in (r for part in parts for r in part):
                event = decode(record.value or b"", self.cipher)
                found.setdefault(event.event_id, event)
        return found


def _feed(sim: SealedKafka, events: list[Event]) -> None:
    for event in events:
        sim.append(NS.topic(t.topic_for(event.type)), event.partition_key.encode(), encode(event, sim.cipher),
                   [(TYPE_HEADER, event.type.encode())])


def _texts(events: list[Event]) -> set[bytes]:
    """Distinctive pieces of what the users said (words of 6+ letters)."""
    words = {w for e in events if isinstance(e, TurnRecorded) for w in e.content.split() if len(w) >= 6}
    return {w.encode() for w in words if w.isalpha()}


def test_sealed_records_and_states_derive_the_same_and_hold_no_plain_text() -> None:
    events = edge_events(5, 150)
    sim = SealedKafka(random.Random(5), crash_rate=0.1)
    _feed(sim, events)
    sim.run()
    assert mismatch(reference(events), sim.derived()) == ""
    texts = _texts(events)
    assert texts
    for parts in sim.logs.values():
        for record in (r for part in parts for r in part):
            assert not [w for w in texts if w in (record.value or b"")], record.topic
    for table in sim.tables.values():
        for key, value in table.items():
            assert not [w for w in texts if w in value], key


def test_a_state_sealed_under_a_destroyed_key_reads_as_no_state_with_its_marks() -> None:
    cipher = FieldCipher(MemoryKeyStore())
    applied = Applied()
    applied.record(Origin("turns:0", (3,)), "e1")
    raw = encode_entry(Entry(applied, UserMemories()), cipher, b"acme/alice")
    assert b"memories" not in raw.partition(b"\n")[2]
    back = decode_entry(raw, UserMemories, cipher, b"acme/alice")
    assert back.state == UserMemories() and back.applied == applied
    assert decode_entry(raw, UserMemories, cipher, b"acme/bob").state is None  # bound to its table key
    cipher.forget_owner("acme", "alice")
    gone = decode_entry(raw, UserMemories, cipher, b"acme/alice")
    assert gone.state is None and gone.applied == applied
    assert seal_state(None, b"k", b'{"a":1}') == b'{"a":1}' and open_state(None, b"k", b'{"a":1}') == b'{"a":1}'


def test_the_prefix_of_a_topic_names_its_key_store() -> None:
    assert prefix_of("test-1.engram.turns") == "test-1."
    assert prefix_of("engram.memory-changes.g2") == ""
    assert prefix_of("a.engram.commands.g10") == "a."
    assert prefix_of("a.engram-processors-consolidate-state-changelog") is None


def test_blind_terms_are_one_to_one_per_key_and_hold_no_word() -> None:
    from engram.core.crypto import blind_terms, index_key

    tenant_a, tenant_b = index_key(b"m" * 32, "weaviate||t1"), index_key(b"m" * 32, "weaviate||t2")
    words = ["zorblax", "tea", "green", "tea"]
    blind = blind_terms(tenant_a, words)
    assert blind[1] == blind[3] and len(set(blind)) == 3  # same word, same token: BM25 counts are unchanged
    assert not any(w in b for w in words for b in blind)
    assert blind_terms(tenant_b, words) != blind and blind_terms(tenant_a, words) == blind
