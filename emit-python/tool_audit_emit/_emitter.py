"""The audit emitter Python orchestrators wrap tool calls with: a decorator (``@audit.tool``)
and a context manager (``with audit.call(...)``), for sync and async tools. Each call queues
exactly one tool_call packet — plus an output_artifact when it succeeded with content — and
hands back exactly what the tool returned or raised. Hashing, serialization and delivery
happen on the buffer's sender thread; the queue is bounded and flushed at exit.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import inspect
import logging
import threading
import time
import uuid
import weakref
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

from ._budget import BudgetChecker
from ._call import Call, EmitterTimeoutError, _await_with_deadline, _bound_args, _task, _with_deadline
from ._buffer import PacketBuffer
from ._redact import Redactor
from ._packets import MAX_NAME, ORCHESTRATORS, Outcome, Record, encode_output_artifact, encode_tool_call
from ._result import caller_value, failure_outcome
from ._turns import encode_agent_run, encode_model_turn, turn_json
from ._transports import HttpTransport, KafkaTransport

_live: "weakref.WeakSet[AuditEmitter]" = weakref.WeakSet()
_log = logging.getLogger("tool_audit_emit")


def _name(value: Any, field: str) -> str:
    if isinstance(value, str) and 1 <= len(value) <= MAX_NAME:
        return value
    raise ValueError(f"{field} must be a string of 1 to {MAX_NAME} characters; got {value!r}")


class AuditEmitter:
    """Records tool calls; exactly one of ``http``, ``kafka`` and ``transport``."""

    def __init__(
        self,
        orchestrator: str,
        agent_id: str,
        instance_id: Optional[str] = None,
        *,
        http: Optional[Dict[str, Any]] = None,
        kafka: Optional[Dict[str, Any]] = None,
        transport: Any = None,
        max_buffered: int = 10_000,
        max_batch: int = 500,
        linger_s: float = 0.05,
        retry_max_s: float = 10.0,
        max_attempts: Optional[int] = None,
        close_timeout_s: float = 5.0,
        budget: Optional[Dict[str, Any]] = None,
        redaction: Optional[Dict[str, Any]] = None,
    ) -> None:
        if orchestrator not in ORCHESTRATORS:
            raise ValueError(f"orchestrator must be one of {', '.join(ORCHESTRATORS)}; got {orchestrator!r}")
        self.orchestrator = orchestrator
        self.agent_id = _name(agent_id, "agent_id")
        self.instance_id = _name(instance_id or orchestrator, "instance_id")
        if sum(x is not None for x in (http, kafka, transport)) != 1:
            raise ValueError("AuditEmitter needs exactly one of http, kafka or transport")
        if http is not None:
            transport = HttpTransport(**http)
        elif kafka is not None:
            transport = KafkaTransport(**kafka)
        self.close_timeout_s = close_timeout_s
        # budget={"projected_cost_usd": float or fn(args, tool_id), "on_unavailable": "allow"|"deny",
        #         "timeout_s": 0.05, "url"/"api_key": default the http transport's}
        self._budget = BudgetChecker(server=http, **budget) if budget is not None else None
        # redaction={"key": the server's REDACTION_KEY, "email"?, "paths"?, "patterns"?}: secrets
        # leave this process only as placeholders (ValueError at once for a bad policy).
        redactor = Redactor(redaction) if redaction is not None else None
        self._redactor = redactor
        self._buffer = PacketBuffer(transport, lambda item: _encode(item, redactor), max_buffered=max_buffered, max_batch=max_batch, linger_s=linger_s, retry_max_s=retry_max_s, max_attempts=max_attempts)
        self._clock = threading.Lock()
        self._last_ms = 0
        _live.add(self)

    # -- recording -------------------------------------------------------------------------

    def _record(self, call: Call, outcome: Outcome, duration_ms: float) -> None:
        with self._clock:
            # created_at never goes backwards for one instance (I11), even when the wall clock does.
            self._last_ms = max(self._last_ms, int(time.time() * 1000))
            created = self._last_ms
        rec = Record(call.call_id, call.task_id, call.tool_id, call.agent_id, self.orchestrator, self.instance_id, call.args_json, duration_ms, created, outcome, call.approval)
        key = rec.task_id or rec.call_id
        self._buffer.push(key, (rec, False))
        if outcome.content:
            self._buffer.push(key, (rec, True))

    def record_turn(self, task_id: str, model: str, duration_ms: float, **turn: Any) -> Optional[str]:
        """Records a model turn of the agent: ``provider``, ``input_tokens``, ``output_tokens``,
        ``cached_input_tokens``, ``cost_usd`` (else the server prices it), ``status``, ``error``,
        ``requested_tool_calls`` ([{"id", "tool_id"}], the tool calls the model asked for),
        ``messages`` (any JSON value or JSON text, kept with the turn, redacted), ``agent_id``,
        ``turn_id``. Returns its turn_id, or None when it is not a valid turn (logged,
        never raised)."""
        return self._record_encoded(
            task_id, "model turn", ("turn", "turn_id"), lambda created, redact: encode_model_turn(task_id=task_id, model=model, duration_ms=duration_ms, created_ms=created, agent_id=turn.pop("agent_id", None) or self.agent_id, redact=redact, **turn)
        )

    def record_run(self, task_id: str, name: str, duration_ms: float, **run: Any) -> Optional[str]:
        """Records a run of the agent over a task — what the server names the task after (its
        outermost run): ``status``, ``error``, ``agent_id``, ``run_id``. Returns its run_id, or
        None when it is not a valid run (logged, never raised)."""
        return self._record_encoded(
            task_id, "agent run", ("run", "run_id"), lambda created, redact: encode_agent_run(task_id=task_id, name=name, duration_ms=duration_ms, created_ms=created, agent_id=run.pop("agent_id", None) or self.agent_id, redact=redact, **run)
        )

    def _record_encoded(self, task_id: str, what: str, id_at: Tuple[str, str], build: Callable[[int, Any], Dict[str, Any]]) -> Optional[str]:
        """Queues a packet built now (a turn, a run) in its task's partition, in order with the
        task's calls; its id (``packet[id_at[0]][id_at[1]]``), or None when it is not valid (logged)."""
        try:
            with self._clock:
                self._last_ms = max(self._last_ms, int(time.time() * 1000))
                created = self._last_ms
            packet = build(created, self._redactor.text if self._redactor is not None else None)
            text = turn_json(packet)
        except (TypeError, ValueError) as err:
            _log.warning("%s not recorded: %s", what, err)
            return None
        self._buffer.push(task_id, ("encoded", text))
        return str(packet[id_at[0]][id_at[1]])

    # -- the two ways to wrap a tool ---------------------------------------------------------

    def call(
        self, tool_id: str, args: Optional[Dict[str, Any]] = None, *, task_id: Optional[str] = None, agent_id: Optional[str] = None, approval: Optional[Dict[str, Any]] = None
    ) -> Call:
        """A context manager (``with`` or ``async with``) around one tool call. ``approval``
        (``{"approved_by", "approved_at", "reference"?}``) records the human approval the call
        runs under, for a tool whose manifest says requires_approval."""
        return Call(self, tool_id, args or {}, task_id, agent_id, approval)

    def tool(self, tool_id: Optional[str] = None, *, timeout_s: Optional[float] = None, agent_id: Optional[str] = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorates a sync or async tool function. Its bound arguments are the args; the task
        is the one set by ``audit.task(...)``. With ``timeout_s`` a call that outlives it raises
        :class:`EmitterTimeoutError` (async: the tool is cancelled; sync: it runs on a daemon
        thread that is left to finish)."""

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            name = tool_id or fn.__name__
            sig = inspect.signature(fn)
            if inspect.iscoroutinefunction(fn):

                @functools.wraps(fn)
                async def run_async(*a: Any, **kw: Any) -> Any:
                    call = Call(self, name, _bound_args(sig, a, kw), None, agent_id)
                    await call.admit_async()
                    try:
                        result = await _await_with_deadline(fn(*a, **kw), timeout_s, call)
                    except EmitterTimeoutError:
                        raise
                    except BaseException as err:
                        call.finish(failure_outcome(err))
                        raise
                    call.set_result(result)
                    call.finish()
                    return caller_value(result)

                return run_async

            @functools.wraps(fn)
            def run_sync(*a: Any, **kw: Any) -> Any:
                call = Call(self, name, _bound_args(sig, a, kw), None, agent_id)
                call.admit()
                try:
                    result = fn(*a, **kw) if timeout_s is None else _with_deadline(fn, a, kw, timeout_s, call)
                except BaseException as err:
                    call.finish(failure_outcome(err))
                    raise
                call.set_result(result)
                call.finish()
                return caller_value(result)

            return run_sync

        return decorate

    @staticmethod
    @contextlib.contextmanager
    def task(task_id: Optional[str]) -> Iterator[None]:
        """Within the block (and the tasks and coroutines it starts), calls serve ``task_id``."""
        token = _task.set(task_id)
        try:
            yield
        finally:
            _task.reset(token)

    # -- delivery --------------------------------------------------------------------------

    def flush(self, timeout_s: Optional[float] = None) -> bool:
        """Sends everything queued; True when all of it went before the deadline."""
        return self._buffer.flush(self.close_timeout_s if timeout_s is None else timeout_s)

    def close(self, timeout_s: Optional[float] = None) -> None:
        """Flushes (bounded), then closes the sink; later calls still run, unrecorded."""
        self._buffer.close(self.close_timeout_s if timeout_s is None else timeout_s)

    def check_budget(self, tool_id: str, args: Optional[Dict[str, Any]] = None, *, call_id: Optional[str] = None, task_id: Optional[str] = None, agent_id: Optional[str] = None) -> Optional[Dict[str, Any]]:
        """The budget decision for a call about to run elsewhere (a gateway); None without the
        ``budget`` option. Never raises."""
        if self._budget is None:
            return None
        return self._budget.check(agent_id or self.agent_id, tool_id, task_id or _task.get() or None, call_id or str(uuid.uuid4()), args or {})

    def stats(self) -> Dict[str, Any]:
        """enqueued, delivered, rejected, dropped, failed_batches, buffered; with the budget
        option also ``budget``: checks, allowed, warned, denied, fallbacks."""
        out: Dict[str, Any] = dict(self._buffer.stats())
        if self._budget is not None:
            out["budget"] = self._budget.stats()
        return out


def _encode(item: Any, redactor: Optional[Redactor] = None) -> str:
    rec, output = item
    if rec == "encoded":
        return str(output)
    if not output:
        return encode_tool_call(rec, redactor)
    packet = encode_output_artifact(rec, redactor)
    if packet is None:
        raise ValueError("output_artifact queued for a call without content")
    return packet


@atexit.register
def _close_all() -> None:
    """Flush at exit: every live emitter gets its close deadline."""
    for emitter in list(_live):
        emitter.close()
