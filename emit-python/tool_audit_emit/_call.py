"""One call of a wrapped tool (what ``audit.call`` yields and ``@audit.tool`` makes): its
budget check, its record once it ends, and how it runs — its arguments bound by name, its
deadline kept on an event loop or a daemon thread. The emitter (``_emitter.py``) creates calls
and records what they hand it.
"""
from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional

from ._budget import BudgetDeniedError
from ._packets import Outcome, canonical_args, wire_approval
from ._result import failure_outcome, read_result

if TYPE_CHECKING:
    from ._emitter import AuditEmitter

_task: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("tool_audit_task", default=None)
_log = logging.getLogger("tool_audit_emit")


class EmitterTimeoutError(TimeoutError):
    """Raised by a wrapped call that outlived its ``timeout_s`` (recorded with status timeout)."""

    def __init__(self, tool_id: str, call_id: str, timeout_s: float) -> None:
        super().__init__(f"{tool_id} timed out after {timeout_s} s")
        self.tool_id, self.call_id, self.timeout_s = tool_id, call_id, timeout_s


class Call:
    """One recorded call (what ``audit.call`` yields). ``set_result`` says what the tool
    returned; leaving the block by an exception records the exception instead."""

    def __init__(self, emitter: "AuditEmitter", tool_id: str, args: Dict[str, Any], task_id: Optional[str], agent_id: Optional[str], approval: Optional[Dict[str, Any]] = None) -> None:
        self._emitter = emitter
        # Judged before the tool runs: a malformed approval is the caller's bug (ValueError).
        self.approval = wire_approval(approval) if approval is not None else None
        self.call_id = str(uuid.uuid4())
        self.tool_id = tool_id
        self.task_id = task_id or _task.get() or None
        self.agent_id = agent_id or emitter.agent_id
        # Snapshot now: the tool (or the caller) may change args before the packet is built.
        self.args_json = canonical_args(args if isinstance(args, dict) else {"value": args})
        self._args = args
        self._result: Any = None
        self._start = time.perf_counter()
        self._done = False

    def admit(self) -> None:
        """With the emitter's ``budget`` option: asks before the tool runs. A deny raises
        :class:`BudgetDeniedError` and nothing is recorded; a warn is logged."""
        budget = self._emitter._budget
        if budget is None:
            return
        d = budget.check(self.agent_id, self.tool_id, self.task_id, self.call_id, self._args)
        if d["decision"] == "deny":
            self._done = True  # the tool did not run: no record
            raise BudgetDeniedError(self.tool_id, self.call_id, d)
        if d["decision"] == "warn":
            _log.warning("budget warning for %s (call %s): %s", self.tool_id, self.call_id, [b.get("budget_id") for b in d["budgets"]] or d.get("reason"))
        self._start = time.perf_counter()  # the call's time starts when the tool may run

    async def admit_async(self) -> None:
        """:meth:`admit` for async tools: the check blocks on HTTP for at most its timeout, off the event loop."""
        if self._emitter._budget is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.admit)

    def set_result(self, value: Any) -> None:
        self._result = value

    def finish(self, outcome: Optional[Outcome] = None) -> None:
        """Records the call once (the result set, or the given outcome)."""
        if self._done:
            return
        self._done = True
        duration_ms = (time.perf_counter() - self._start) * 1000
        try:
            self._emitter._record(self, outcome or read_result(self._result), duration_ms)
        except Exception:  # only a hostile value gets here; the tool call must not suffer for it
            pass

    def __enter__(self) -> "Call":
        self.admit()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        self.finish(failure_outcome(exc) if exc is not None else None)
        return False  # the exception, if any, goes on unchanged

    async def __aenter__(self) -> "Call":
        await self.admit_async()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        return self.__exit__(exc_type, exc, tb)


def _bound_args(sig: inspect.Signature, a: Any, kw: Any) -> Dict[str, Any]:
    try:
        bound = sig.bind_partial(*a, **kw)
    except TypeError:
        return {"args": list(a), **kw}  # the call itself will raise the same TypeError
    out: Dict[str, Any] = {}
    for name, value in bound.arguments.items():
        param = sig.parameters[name]
        if name in ("self", "cls") and param.kind == param.POSITIONAL_OR_KEYWORD:
            continue
        if param.kind == param.VAR_KEYWORD:
            out.update(value)
        elif param.kind == param.VAR_POSITIONAL:
            out[name] = list(value)
        else:
            out[name] = value
    return out


async def _await_with_deadline(pending: Any, timeout_s: Optional[float], call: Call) -> Any:
    """Awaits the tool; past timeout_s cancels it and raises EmitterTimeoutError. A TimeoutError
    the tool raises itself goes through unchanged (recorded as timeout by failure_outcome)."""
    if timeout_s is None:
        return await pending
    task = asyncio.ensure_future(pending)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        call.finish(Outcome("timeout", f"{call.tool_id} timed out after {timeout_s} s"))
        raise EmitterTimeoutError(call.tool_id, call.call_id, timeout_s)
    return task.result()


def _with_deadline(fn: Callable[..., Any], a: Any, kw: Any, timeout_s: float, call: Call) -> Any:
    box: Dict[str, Any] = {}
    done = threading.Event()
    ctx = contextvars.copy_context()

    def target() -> None:
        try:
            box["value"] = ctx.run(fn, *a, **kw)
        except BaseException as err:  # re-raised on the caller's thread
            box["error"] = err
        done.set()

    threading.Thread(target=target, name=f"tool-audit-{call.tool_id}", daemon=True).start()
    if not done.wait(timeout_s):
        call.finish(Outcome("timeout", f"{call.tool_id} timed out after {timeout_s} s"))
        raise EmitterTimeoutError(call.tool_id, call.call_id, timeout_s)
    if "error" in box:
        raise box["error"]
    return box["value"]
