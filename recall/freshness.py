"""How fresh a recall is: whether what it read already holds every write of the user made before it.

The embedded runtime applies a write before `record` returns, so its recalls are always current. On
the distributed runtime a write travels Kafka, the processor stages and the projector before Weaviate
holds it (`docs/distributed.md`); there a recall checks, before it reads, how far the user's Kafka
partition has got (`engram.distributed.freshness`) and reports it here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Freshness:
    """What the recall's reads reflect of the user's writes."""

    runtime: Literal["embedded", "distributed"]
    current: bool
    """Every write of this user that was acknowledged before the recall began is in what it read."""
    behind: int | None
    """Records of the user's partition not yet applied by the stage or projector that reads them when the
    recall began (other users of the partition count too); 0 when current, None when it could not be told."""
    partition: int | None = None
    """The user's Kafka partition (distributed only)."""
    checked_ms: float = 0.0
    """What telling it cost the recall."""


CURRENT = Freshness("embedded", True, 0)
"""An embedded recall: the log and the projection are updated together."""
