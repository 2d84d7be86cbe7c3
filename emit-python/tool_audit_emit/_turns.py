"""A model turn and an agent run as an agent records them: the model_turn packet (its JSON Schema is
schemas/json/model-turn-packet.schema.json), checked here by the rules ingest judges it by, so a
bad turn is reported to the caller's log rather than quarantined."""

import json
import math
import uuid
from typing import Any, Dict, List, Optional

from ._packets import MAX_NAME, iso_ms

MAX_ERROR = 65_536
# Characters a turn's messages may hold (schemas/vocabulary.ts MAX_MESSAGES).
MAX_MESSAGES = 1_048_576


def _count(value: Any, field: str) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{field} must be a whole number >= 0 or None; got {value!r}")
    return value


def _text(value: Any, field: str, nullable: bool = False) -> Optional[str]:
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_NAME:
        raise ValueError(f"{field} must be a string of 1 to {MAX_NAME} characters; got {value!r}")
    return value


def encode_model_turn(
    *,
    task_id: str,
    agent_id: str,
    model: str,
    duration_ms: float,
    created_ms: int,
    turn_id: Optional[str] = None,
    provider: Optional[str] = None,
    input_tokens: Optional[int] = None,
    output_tokens: Optional[int] = None,
    cached_input_tokens: Optional[int] = None,
    cost_usd: Optional[float] = None,
    status: Optional[str] = None,
    error: Optional[str] = None,
    requested_tool_calls: Optional[List[Dict[str, Any]]] = None,
    messages: Any = None,
    redact: Any = None,
) -> Dict[str, Any]:
    """The packet of a turn; ValueError naming the field when it cannot be one. ``messages``: any
    JSON value (or JSON text) kept with the turn, redacted, cut at MAX_MESSAGES characters."""
    status = status or ("error" if error else "success")
    if status not in ("success", "error"):
        raise ValueError(f"status must be 'success' or 'error'; got {status!r}")
    if cost_usd is not None and (isinstance(cost_usd, bool) or not isinstance(cost_usd, (int, float)) or not math.isfinite(cost_usd) or cost_usd < 0):
        raise ValueError(f"cost_usd must be a number >= 0 or None; got {cost_usd!r}")
    if isinstance(duration_ms, bool) or not isinstance(duration_ms, (int, float)) or not math.isfinite(duration_ms):
        raise ValueError(f"duration_ms must be a finite number; got {duration_ms!r}")
    failure = None if status == "success" else (error or "error")
    if failure is not None and redact is not None:
        failure = redact(failure)
    asked = []
    for q in requested_tool_calls or []:
        if not isinstance(q, dict):
            raise ValueError(f"requested_tool_calls holds {{'id', 'tool_id'}} objects; got {q!r}")
        asked.append({"id": _text(q.get("id"), "requested_tool_calls[].id", nullable=True), "tool_id": _text(q.get("tool_id"), "requested_tool_calls[].tool_id")})
    said: Dict[str, str] = {}
    if messages is not None:
        text = messages if isinstance(messages, str) else json.dumps(messages, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        said["messages"] = (redact(text) if redact is not None else text)[:MAX_MESSAGES]
    return {
        "type": "model_turn",
        "turn": {
            "turn_id": str(uuid.UUID(turn_id)) if turn_id else str(uuid.uuid4()),
            "task_id": _text(task_id, "task_id"),
            "agent_id": _text(agent_id, "agent_id"),
            "model": _text(model, "model"),
            "provider": _text(provider, "provider", nullable=True),
            "input_tokens": _count(input_tokens, "input_tokens"),
            "output_tokens": _count(output_tokens, "output_tokens"),
            "cached_input_tokens": _count(cached_input_tokens, "cached_input_tokens"),
            "cost_usd": cost_usd,
            "cost_source": None if cost_usd is None else "reported",
            "duration_ms": max(0, round(duration_ms)),
            "status": status,
            "error": None if failure is None else failure[:MAX_ERROR],
            "requested_tool_calls": asked,
            "trace_id": None,
            "span_id": None,
            "created_at": iso_ms(created_ms),
            **said,
        },
    }


def turn_json(packet: Dict[str, Any]) -> str:
    """The packet's wire text."""
    return json.dumps(packet, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_agent_run(
    *,
    task_id: str,
    agent_id: str,
    name: str,
    duration_ms: float,
    created_ms: int,
    run_id: Optional[str] = None,
    status: Optional[str] = None,
    error: Optional[str] = None,
    redact: Any = None,
) -> Dict[str, Any]:
    """The agent_run packet of one run of the agent over a task (its JSON Schema is
    schemas/json/agent-run-packet.schema.json): what the server names the task after. Name and
    error go through ``redact``. ValueError naming the field when it cannot be a packet."""
    status = status or ("error" if error else "success")
    if status not in ("success", "error"):
        raise ValueError(f"status must be 'success' or 'error'; got {status!r}")
    if isinstance(duration_ms, bool) or not isinstance(duration_ms, (int, float)) or not math.isfinite(duration_ms) or duration_ms < 0:
        raise ValueError(f"duration_ms must be a finite number >= 0; got {duration_ms!r}")
    label = _text(name, "name")
    failure = None if status == "success" else (error or "error")
    if redact is not None:
        label = redact(label)
        failure = None if failure is None else redact(failure)
    return {
        "type": "agent_run",
        "run": {
            "run_id": str(uuid.UUID(run_id)) if run_id else str(uuid.uuid4()),
            "task_id": _text(task_id, "task_id"),
            "agent_id": _text(agent_id, "agent_id"),
            "name": label,
            "duration_ms": round(duration_ms),
            "status": status,
            "error": None if failure is None else failure[:MAX_ERROR],
            "trace_id": None,
            "span_id": None,
            "parent_span_id": None,
            "created_at": iso_ms(created_ms),
        },
    }
