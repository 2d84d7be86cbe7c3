"""JSON text inside a string, read the way the TypeScript side reads it (a lossless parse that keeps
each number's literal), and numbers written back as JavaScript's String() writes them: what the
redaction walk (``_redact.py``) needs to judge and rewrite JSON held in a string alike in both
languages.
"""
from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any, Callable


class _Float(float):
    """A float read from JSON text inside a string, with its literal: the TypeScript side keeps
    those numbers as written (a lossless parse), and json.dumps writes the value as repr(float)."""

    literal = ""


class _Int(int):
    """An integer read from JSON text inside a string, with its literal (see _Float)."""

    literal = ""


def _literal(kind: Any) -> Callable[[str], Any]:
    def make(text: str) -> Any:
        n = kind(text)
        n.literal = text
        return n

    return make


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_JSON_START = re.compile(r"[ \t\n\r]*[\[{]")


def _json_inside(s: str) -> Any:
    """The array or object a string holds as JSON text (an MCP result's text block, OpenAI's
    ``arguments``), numbers with their literals; None for any other string."""
    if len(s) < 2 or not _JSON_START.match(s):
        return None
    try:
        return json.loads(s, parse_float=_literal(_Float), parse_int=_literal(_Int), parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None


def _number_text(v: Any) -> str:
    """A number as JavaScript's String() writes one that JSON.parse read (ints exactly; floats by repr)."""
    if isinstance(v, (_Float, _Int)):
        return v.literal
    if isinstance(v, int):
        return str(v)
    if not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    r = repr(v)
    # An integral float below 1e21: JavaScript writes its shortest digits then zeros (1.2345678901234568e20
    # is 123456789012345680000), not the binary value's exact digits that int() gives.
    if v == int(v) and abs(v) < 1e21:
        return str(int(Decimal(r)))
    return r.replace("e+0", "e+").replace("e-0", "e-") if "e" in r else r
