"""The bounded in-memory queue and its background sender thread. ``push`` is O(1), never waits
and never raises, whatever the sink is doing; packets are serialized by the sender, one batch
at a time. A failed batch is retried as a whole before anything behind it, so a task's packets
reach the sink in the order they were pushed. When full, the new packet is dropped and counted.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

from ._transports import DeliveryError

log = logging.getLogger("tool_audit_emit")


class PacketBuffer:
    """Bounded queue + background sender in front of a transport.

    Counters: enqueued = delivered + rejected + dropped + buffered, always.
    """

    def __init__(
        self,
        transport: Any,
        encode: Callable[[Any], str],
        max_buffered: int = 10_000,
        max_batch: int = 500,
        linger_s: float = 0.05,
        retry_base_s: float = 0.1,
        retry_max_s: float = 10.0,
        max_attempts: Optional[int] = None,
    ) -> None:
        self._transport = transport
        self._encode = encode
        self._max_buffered = max_buffered
        self._max_batch = max_batch
        self._linger_s = linger_s
        self._retry_base_s = retry_base_s
        self._retry_max_s = retry_max_s
        self._max_attempts = max_attempts
        self._queue: Deque[Tuple[str, Any]] = deque()
        self._cond = threading.Condition()
        self._in_flight = 0
        self._flushing = 0
        self._closed = False
        self._halted = False
        self._counts = {"enqueued": 0, "delivered": 0, "rejected": 0, "dropped": 0, "failed_batches": 0}
        self._thread = threading.Thread(target=self._run, name="tool-audit-emit", daemon=True)
        self._thread.start()

    def push(self, key: str, item: Any) -> None:
        with self._cond:
            self._counts["enqueued"] += 1
            if self._closed or len(self._queue) + self._in_flight >= self._max_buffered:
                self._counts["dropped"] += 1
                return
            self._queue.append((key, item))
            if len(self._queue) == 1 or len(self._queue) >= self._max_batch:
                self._cond.notify_all()

    def stats(self) -> Dict[str, int]:
        with self._cond:
            return dict(self._counts, buffered=len(self._queue) + self._in_flight)

    def flush(self, timeout_s: float = 5.0) -> bool:
        """Waits until everything queued was sent (or given up); True when it all went before the deadline."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            self._flushing += 1
            self._cond.notify_all()
            try:
                while self._queue or self._in_flight:
                    left = deadline - time.monotonic()
                    if left <= 0 or self._halted:
                        return False
                    self._cond.wait(left)
                return True
            finally:
                self._flushing -= 1

    def close(self, timeout_s: float = 5.0) -> None:
        """Flushes (bounded by the deadline), then stops; what is still held counts as dropped."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
        self.flush(timeout_s)
        with self._cond:
            self._halted = True
            self._counts["dropped"] += len(self._queue) + self._in_flight
            self._queue.clear()
            self._in_flight = 0
            self._cond.notify_all()
        try:
            self._transport.close()
        except Exception as err:  # never into the caller's shutdown
            log.warning("tool-audit transport close failed: %s", err)

    def _take(self) -> Optional[List[Tuple[str, Any]]]:
        with self._cond:
            while not self._queue and not self._halted:
                self._cond.wait()
            if self._halted:
                return None
            # Let a lone packet wait a little for company, unless someone is flushing.
            if len(self._queue) < self._max_batch and not self._flushing and not self._closed:
                self._cond.wait(self._linger_s)
            batch = [self._queue.popleft() for _ in range(min(self._max_batch, len(self._queue)))]
            self._in_flight = len(batch)
            return batch

    def _run(self) -> None:
        while True:
            batch = self._take()
            if batch is None:
                return
            messages = []
            bad = 0
            for key, item in batch:
                try:
                    messages.append((key, self._encode(item)))
                except Exception as err:  # a hostile value; the rest of the batch goes on
                    bad += 1
                    log.warning("tool-audit packet not serializable: %s", err)
            delivered, rejected, dropped = self._deliver(messages)
            with self._cond:
                if not self._halted:
                    self._counts["delivered"] += delivered
                    self._counts["rejected"] += rejected
                    self._counts["dropped"] += dropped + bad
                    self._in_flight = 0
                self._cond.notify_all()

    def _deliver(self, messages: List[Tuple[str, str]]) -> Tuple[int, int, int]:
        attempts = 0
        while messages:
            try:
                rejected = self._transport.send(messages)
                return len(messages) - rejected, rejected, 0
            except Exception as err:
                attempts += 1
                retryable = err.retryable if isinstance(err, DeliveryError) else False
                with self._cond:
                    self._counts["failed_batches"] += 1
                if not retryable or (self._max_attempts and attempts >= self._max_attempts):
                    log.warning("tool-audit batch of %d given up: %s", len(messages), err)
                    return 0, 0, len(messages)
                delay = min(self._retry_max_s, self._retry_base_s * 2 ** (attempts - 1))
                with self._cond:
                    if self._halted:
                        return 0, 0, 0
                    self._cond.wait(delay)
                    if self._halted:
                        return 0, 0, 0
        return 0, 0, 0
