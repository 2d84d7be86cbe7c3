"""What a tool returns, read into an Outcome — the same table as emit/result.ts.

| the tool returns | status | output_artifact content | result_summary |
|---|---|---|---|
| ``{"status": "error", "error_category", "message", "retryable"?, "metadata"?}`` | by category | none | metadata + error_category, retryable |
| ``{"status": "success", "result", "metadata"?}`` | success | ``result`` | metadata |
| a string | success | the string (``text``) | ``{}`` |
| ``None`` / ``""`` | success | none | ``{}`` |
| any other value | success | ``json.dumps(value)`` (``json``) | ``{}`` |

Categories: rate_limit → rate_limited, validation_error → invalid_input, timeout → timeout,
anything else → error. A tool that raises is recorded as ``error`` — or ``timeout`` when what it
raised is a ``TimeoutError`` (Python's own timeouts are; ``asyncio.TimeoutError`` and
``socket.timeout`` are the same class since 3.11), or by its ``error_category`` attribute when it
carries one (tool-smith's ToolError).
"""
from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass
from typing import Any, Dict, Optional

from ._packets import Outcome, status_of_category

_UNSET = object()


@dataclass
class AuditResult:
    """A tool's value plus what the audit record should say beyond it (cost, tokens …)."""

    value: Any
    content: Any = _UNSET
    content_type: Optional[str] = None
    result_summary: Optional[Dict[str, Any]] = None
    cost_usd: Optional[float] = None
    tokens_used: Optional[Dict[str, int]] = None


def audit_result(value: Any, **details: Any) -> AuditResult:
    """Returns ``value`` to the caller and records ``details`` (content, content_type,
    result_summary, cost_usd, tokens_used) with it."""
    return AuditResult(value, **details)


def caller_value(returned: Any) -> Any:
    return returned.value if isinstance(returned, AuditResult) else returned


def read_result(returned: Any) -> Outcome:
    """The outcome to record for what a tool returned."""
    details = returned if isinstance(returned, AuditResult) else AuditResult(returned)
    value = details.value
    if isinstance(value, dict) and value.get("status") == "error":
        summary = dict(value["metadata"]) if isinstance(value.get("metadata"), dict) else {}
        summary["error_category"] = value.get("error_category")
        if isinstance(value.get("retryable"), bool):
            summary["retryable"] = value["retryable"]
        message = value.get("message") if isinstance(value.get("message"), str) and value.get("message") else None
        outcome = Outcome(status_of_category(value.get("error_category")), message or str(value.get("error_category") or "error"))
        outcome.result_summary = details.result_summary if details.result_summary is not None else summary
    else:
        envelope = isinstance(value, dict) and value.get("status") == "success" and "result" in value
        data = details.content if details.content is not _UNSET else (value["result"] if envelope else value)
        metadata = value.get("metadata") if envelope and isinstance(value.get("metadata"), dict) else None
        summary = details.result_summary if details.result_summary is not None else metadata
        outcome = Outcome("success", None, summary or {}, content=_content(data, details.content_type))
    outcome.cost_usd = _cost(details.cost_usd)
    outcome.tokens_used = _tokens(details.tokens_used)
    return outcome


def failure_outcome(err: BaseException) -> Outcome:
    """The outcome of a tool that raised."""
    category = getattr(err, "error_category", None)
    if category is not None:
        status = status_of_category(category)
    elif isinstance(err, (TimeoutError, asyncio.TimeoutError)):
        status = "timeout"
    else:
        status = "error"
    message = str(err) or type(err).__name__
    return Outcome(status, message)


def _content(data: Any, content_type: Optional[str]) -> Optional[tuple]:
    if data is None:
        return None
    if isinstance(data, str):
        # size_bytes must be > 0 (I7): an empty result is no artifact.
        return (data, content_type or "text") if data else None
    try:
        text = json.dumps(data, allow_nan=False, default=str)
    except (ValueError, TypeError):
        return None
    return (text, "json")


def _cost(c: Any) -> Optional[float]:
    if isinstance(c, bool) or not isinstance(c, (int, float)):
        return None
    return float(c) if math.isfinite(c) and c >= 0 else None


def _tokens(t: Any) -> Optional[Dict[str, int]]:
    if not isinstance(t, dict):
        return None
    return {str(k): v for k, v in t.items() if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**53}
