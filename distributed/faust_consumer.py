"""A faust App whose Kafka consumer waits at most `fetch_max_wait` seconds per fetch.

faust-streaming creates its aiokafka consumer with `fetch_max_wait_ms=1500`
and no setting to change it. Measured here against Kafka 4.4 (2 workers,
1,500 turns/s): records reached the agents 1.5-2 s after they were produced
while a plain consumer of the same topic saw them after 55 ms, and the
agents and the consumer thread sat mostly idle - each fetch waited out the
full 1.5 s. With 50 ms the records arrive in ~0.1 s and the same two workers
sustain 1,500 turns/s instead of 1,000. The cost is an empty fetch request
every `fetch_max_wait` per broker while a worker is idle.
"""

from __future__ import annotations

from typing import Any

import faust
from faust.transport.drivers import aiokafka as faust_aiokafka

DEFAULT_FETCH_MAX_WAIT = 0.05


def app_with_fetch_wait(app_id: str, fetch_max_wait: float, **config: Any) -> faust.App:
    """A faust.App like `faust.App(app_id, **config)` whose consumer uses `fetch_max_wait` seconds."""
    wait_ms = max(1, int(fetch_max_wait * 1000))

    class ConsumerThread(faust_aiokafka.AIOKafkaConsumerThread):
        def _create_worker_consumer(self, transport: Any) -> Any:
            consumer = super()._create_worker_consumer(transport)
            consumer._fetch_max_wait_ms = wait_ms  # read when the consumer starts its fetcher
            return consumer

    class WaitingConsumer(faust_aiokafka.Consumer):
        def _new_consumer_thread(self) -> faust_aiokafka.AIOKafkaConsumerThread:
            return ConsumerThread(self, loop=self.loop, beacon=self.beacon)

    class Transport(faust_aiokafka.Transport):
        Consumer = WaitingConsumer

    class App(faust.App):
        def _new_transport(self) -> Any:
            return Transport(self.conf.broker_consumer, self)

    return App(app_id, **config)
