"""Where packets go: a tool-audit server's ``POST /v1/packets`` (standard library only) or
Kafka (confluent-kafka, imported when a Kafka transport is created)."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional, Sequence, Tuple

Message = Tuple[str, str]  # (key, packet JSON)

# Sending the same body again cannot fix the others (400 malformed, 401/403 credentials, 413 …).
_RETRYABLE_STATUS = {408, 425, 429}


class DeliveryError(Exception):
    """A batch was not delivered; ``retryable`` says whether sending it again may work."""

    def __init__(self, message: str, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class HttpTransport:
    """Posts batches as NDJSON to ``{url}/v1/packets``. A 200 means every packet is durable or
    was rejected for good (quarantined there): rejections are counted, never resent."""

    def __init__(self, url: str, api_key: Optional[str] = None, timeout_s: float = 10.0) -> None:
        self.endpoint = url.rstrip("/") + "/v1/packets"
        self.headers = {"content-type": "application/x-ndjson"}
        if api_key:
            self.headers["authorization"] = f"Bearer {api_key}"
        self.timeout_s = timeout_s

    def send(self, batch: Sequence[Message]) -> int:
        """Delivers a batch; returns how many packets the server rejected."""
        body = "\n".join(value for _, value in batch).encode("utf-8")
        req = urllib.request.Request(self.endpoint, data=body, headers=self.headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as res:
                text = res.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as err:
            detail = err.read().decode("utf-8", "replace")[:300]
            retryable = err.code >= 500 or err.code in _RETRYABLE_STATUS
            raise DeliveryError(f"POST {self.endpoint} answered {err.code}: {detail}", retryable) from err
        except (urllib.error.URLError, OSError) as err:
            raise DeliveryError(f"POST {self.endpoint} failed: {err}", True) from err
        try:
            results = json.loads(text).get("results", [])
        except (ValueError, AttributeError):
            return 0
        return sum(1 for r in results if isinstance(r, dict) and r.get("status") == "rejected")

    def close(self) -> None:
        pass


class KafkaTransport:
    """Produces to the packet topic with acks from all in-sync replicas (idempotent producer),
    keyed by task_id (else call_id) so a task's packets stay in one partition, in order."""

    def __init__(self, brokers: str, topic: str = "tool_audit.packets", timeout_s: float = 30.0, config: Optional[Dict[str, Any]] = None) -> None:
        from confluent_kafka import Producer  # only when Kafka is used

        self.topic = topic
        self.timeout_s = timeout_s
        conf: Dict[str, Any] = {
            "bootstrap.servers": brokers,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 5,
            "message.timeout.ms": int(timeout_s * 1000),
            "client.id": "tool-audit-emit-python",
        }
        conf.update(config or {})
        self.producer = Producer(conf)

    def send(self, batch: Sequence[Message]) -> int:
        errors: List[str] = []

        def report(err: Any, _msg: Any) -> None:
            if err is not None:
                errors.append(str(err))

        try:
            for key, value in batch:
                while True:
                    try:
                        self.producer.produce(self.topic, value=value.encode("utf-8"), key=key.encode("utf-8"), on_delivery=report)
                        break
                    except BufferError:
                        self.producer.poll(0.05)  # librdkafka's own queue is full: let it drain
        except Exception as err:  # KafkaException: broker or configuration trouble
            raise DeliveryError(f"Kafka produce failed: {err}", True) from err
        remaining = self.producer.flush(self.timeout_s)
        if remaining or errors:
            # The whole batch is sent again: identical packets are de-duplicated at ingest (I1).
            raise DeliveryError(f"Kafka did not acknowledge {remaining or len(errors)} packet(s): {errors[:3]}", True)
        return 0

    def close(self) -> None:
        self.producer.flush(1.0)


class MemoryTransport:
    """Keeps what it is sent (tests, benchmarks)."""

    def __init__(self) -> None:
        self.messages: List[Message] = []

    def send(self, batch: Sequence[Message]) -> int:
        self.messages.extend(batch)
        return 0

    def close(self) -> None:
        pass
