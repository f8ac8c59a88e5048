"""The distributed runtime: Engram's pure processors on Apache Kafka with faust-streaming.

- `topics`: names and specs derived from the topic catalogue (prefix, generation);
- `admin`: idempotent topic creation with the confluent-kafka AdminClient (returns once every
  partition has a leader that answers);
- `kafka_retry`: the one retry policy for transient broker errors (leader elections after topic
  creation, coordinators loading, a broker restart): bounded backoff, then `KafkaUnavailable`;
- `offsets`: a consumer group's committed offsets without the AdminClient;
- `producer`: the chat platform's SDK (`TurnProducer.record_turn`);
- `records`, `runner`: the transport-free stage runner (decode, dedupe, process, encode);
- `tracking`: what a keyed state has applied, stored in the same value as the state;
- `progress`, `gapreader`: each stage's own record of what it finished, and reading back
  what faust skipped;
- `sink`: ordered, acknowledged output through confluent-kafka;
- `app`: the faust agents and tables, and the commit order; `worker`: `engram worker`;
- `readback`: reading topics back, progress-based idleness, folds;
- `keystore`, `erasure`: owners' data keys in a compacted topic (wrapped by the master key), sealed
  records and states, and what a forget destroys and records (forget is erasure);
- `replay`: rebuilding a generation from the beginning of the turns topic (`engram replay --kafka`).
"""
