"""Pure builders of the packets one invocation produces (SPEC §1, §2).

args_hash is ``sha256(json.dumps(args, sort_keys=True))`` computed by the standard library
itself, and the packet carries exactly that text as its args, so the server recomputes the same
hash byte for byte (numbers as Python wrote them).
"""
from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, Optional

ORCHESTRATORS = ("websocket", "kernel", "gateway", "scheduler")
STATUSES = ("success", "timeout", "error", "rate_limited", "invalid_input")
MAX_NAME = 256
MAX_ERROR = 65_536
SAMPLE_CHARS = 500

# tool-smith's Error Contract categories → the status enum (as emit/result.ts maps them).
_CATEGORY_STATUS = {"rate_limit": "rate_limited", "validation_error": "invalid_input", "timeout": "timeout"}


def status_of_category(category: Any) -> str:
    """The status an error category is recorded with; anything unknown is ``error``."""
    return _CATEGORY_STATUS.get(category, "error") if isinstance(category, str) else "error"


def canonical_args(args: Dict[str, Any]) -> str:
    """``json.dumps(args, sort_keys=True)``: the canonical args of SPEC §2.

    A value json cannot write (a datetime, a set) is written as its ``str()``, and NaN or
    infinity (not JSON) as a string, so a tool call is never lost to its arguments.
    """
    try:
        return json.dumps(args, sort_keys=True, allow_nan=False, default=str)
    except (ValueError, TypeError):
        return json.dumps(_sanitize(args), sort_keys=True, allow_nan=False, default=str)


def _sanitize(v: Any) -> Any:
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return str(v)
    if isinstance(v, dict):
        return {str(k): _sanitize(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_sanitize(x) for x in v]
    return v


def args_hash(canonical: str) -> str:
    """SHA-256 (lowercase hex) of the canonical args' UTF-8 bytes."""
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass
class Outcome:
    """How a call ended, in the shape the packets need."""

    status: str
    error: Optional[str]
    result_summary: Dict[str, Any] = field(default_factory=dict)
    cost_usd: Optional[float] = None
    tokens_used: Optional[Dict[str, int]] = None
    # Present only on success with non-empty content: (text, content_type).
    content: Optional[tuple] = None


@dataclass
class Record:
    """Everything known about one finished invocation."""

    call_id: str
    task_id: Optional[str]
    tool_id: str
    agent_id: str
    orchestrator: str
    instance_id: str
    args_json: str
    duration_ms: float
    created_at_ms: int
    outcome: Outcome
    # The wire approval ({approved_by, approved_at, reference?}) the call ran under, if any.
    approval: Optional[Dict[str, str]] = None


def wire_approval(approval: Any) -> Dict[str, str]:
    """The packet's approval from ``{"approved_by", "approved_at", "reference"?}``; ``approved_at``
    is an aware datetime or an ISO-8601 string with an offset. Raises ValueError naming what is wrong."""
    if not isinstance(approval, dict) or not set(approval) <= {"approved_by", "approved_at", "reference"}:
        raise ValueError("approval must be a dict with approved_by, approved_at and optionally reference")
    by, at, ref = approval.get("approved_by"), approval.get("approved_at"), approval.get("reference")
    if not (isinstance(by, str) and 1 <= len(by) <= MAX_NAME):
        raise ValueError(f"approval.approved_by must be a string of 1 to {MAX_NAME} characters; got {by!r}")
    if isinstance(at, str):
        try:
            at = datetime.fromisoformat(at.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"approval.approved_at is not an ISO-8601 timestamp: {at!r}") from None
    if not isinstance(at, datetime) or at.tzinfo is None:
        raise ValueError("approval.approved_at must be a timezone-aware datetime or an ISO-8601 string with an offset")
    out = {"approved_by": by, "approved_at": iso_ms(int(at.timestamp() * 1000))}
    if ref is not None:
        if not (isinstance(ref, str) and 1 <= len(ref) <= 2048):
            raise ValueError("approval.reference must be a string of 1 to 2048 characters")
        out["reference"] = ref
    return out


def iso_ms(epoch_ms: int) -> str:
    """UTC ISO-8601 with milliseconds and ``Z``, as created_at is stored."""
    dt = datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


def encode_tool_call(rec: Record, redactor: Any = None) -> str:
    """The tool_call packet of a record, as JSON text; with a redactor (_redact.py), its secrets out."""
    o = rec.outcome
    error = None if o.status == "success" else (o.error or o.status)[:MAX_ERROR]
    args_json, summary = rec.args_json, _object(o.result_summary)
    if redactor is not None:
        args, red_summary, changed = redactor.call(rec.tool_id, json.loads(args_json), summary)
        if changed:
            args_json, summary = canonical_args(args), red_summary
        if error is not None:
            error = redactor.text(error)
    invocation = {
        "call_id": rec.call_id,
        "task_id": rec.task_id,
        "tool_id": rec.tool_id,
        "agent_id": rec.agent_id,
        "orchestrator": rec.orchestrator,
        "instance_id": rec.instance_id,
        "args_hash": args_hash(args_json),
        "status": o.status,
        "duration_ms": max(0, int(round(rec.duration_ms))),
        "result_summary": summary,
        "error": error,
        "cost_usd": o.cost_usd,
        "tokens_used": o.tokens_used,
        "created_at": iso_ms(rec.created_at_ms),
    }
    if rec.approval:
        invocation["approval"] = rec.approval
    head = json.dumps(invocation, default=str)
    # The args go in as the canonical text itself: what was hashed is what is sent.
    return '{"type": "tool_call", "call_id": "%s", "invocation": %s, "args": %s}}' % (rec.call_id, head[:-1], args_json)


def encode_output_artifact(rec: Record, redactor: Any = None) -> Optional[str]:
    """The output_artifact packet of a successful record with content, else None."""
    if rec.outcome.status != "success" or not rec.outcome.content:
        return None
    text, content_type = rec.outcome.content
    if redactor is not None and content_type == "json":
        # JSON content stays JSON: redacted as a value, written as JSON.stringify would.
        try:
            value, changed = redactor.json_value(json.loads(text))
            if changed:
                text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        except ValueError:
            text = redactor.text(text)
    elif redactor is not None:
        text = redactor.text(text)
    output = {
        "output_id": str(uuid.uuid4()),
        "call_id": rec.call_id,
        "tool_id": rec.tool_id,
        "content_type": content_type,
        "content_hash": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "size_bytes": len(text.encode("utf-8")),
        "sample": text[:SAMPLE_CHARS],
        "created_at": iso_ms(rec.created_at_ms),
    }
    return json.dumps({"type": "output_artifact", "output": output, "content": text})


def _object(v: Any) -> Dict[str, Any]:
    if isinstance(v, dict):
        try:
            json.dumps(v, default=str, allow_nan=False)
            return v
        except (ValueError, TypeError):
            return _sanitize(v)
    return {} if v is None else {"value": v}
