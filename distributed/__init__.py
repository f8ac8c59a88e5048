"""The distributed runtime: Engram's pure processors on Apache Kafka with faust-streaming.

- `topics`: names and specs derived from the topic catalogue (prefix, generation);
- `admin`: idempotent topic creation with the confluent-kafka AdminClient;
- `producer`: the chat platform's SDK (`TurnProducer.record_turn`);
- `tracking`: what a keyed state has applied, stored with the state;
- `runner`: the transport-free stage runner (decode, dedupe, process, encode);
- `app`: the faust agents and tables, and the commit order;
- `worker`: `engram worker`; `readback`: reading topics back, lag, folds;
- `replay`: rebuilding a generation from the beginning of the turns topic.

Only `topics` and `tracking` import without the `kafka` extra installed.
"""
