"""Secrets out before a packet leaves the agent's process: the same detectors, rules,
placeholders and JSON walk as the TypeScript ``schemas/secret-detectors.ts``,
``schemas/secret-redaction.ts`` and ``schemas/redaction-policy.ts``, so a secret redacted here,
by the TypeScript emitter, by the MCP gateway or by ingest becomes the same placeholder
``[redacted:<rule>:<first 16 hex of HMAC-SHA-256(key, secret)>]``.

The patterns are written for both engines: ``re.ASCII`` gives JavaScript's ASCII ``\\b``, ``\\d`` and
word characters, and ``\\s`` is spelled out as JavaScript's whitespace (which is Unicode there).
A test runs both over one corpus and compares the results character for character.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ._json_text import _json_inside, _number_text
from ._providers import PROVIDERS

# JavaScript's \s (Unicode white space and line terminators), and its complement.
_WS = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
S = f"[{_WS}]"
NS = f"[^{_WS}]"
# White space but no line terminator (JavaScript's [^\S\n\r\u2028\u2029]).
HS = "[\t\x0b\x0c \xa0\u1680\u2000-\u200a\u202f\u205f\u3000\ufeff]"


def _b64_text(s: str) -> Optional[str]:
    """What Node's Buffer.from(s, 'base64') reads (url-safe letters too, padding optional), as UTF-8."""
    s = s.replace("-", "+").replace("_", "/").rstrip("=")
    s = re.sub(r"[^A-Za-z0-9+/]", "", s)
    s = s[: len(s) - (len(s) % 4 == 1)]
    try:
        return base64.b64decode(s + "=" * (-len(s) % 4)).decode("utf-8", "replace")
    except ValueError:
        return None


def luhn_valid(number: str) -> bool:
    """Luhn checksum of a run of digits (spaces and dashes ignored)."""
    digits = re.sub(r"[ -]", "", number)
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return len(digits) >= 13 and total % 10 == 0


def _jwt(t: str) -> bool:
    text = _b64_text(t[: t.index(".")])
    return text is not None and re.search(f'"alg"{S}*:', text) is not None


def _basic(t: str) -> bool:
    text = _b64_text(t)
    return text is not None and re.fullmatch(f"[^:{_WS}]+:{NS}+", text) is not None


def _bearer(t: str) -> bool:
    return re.search("[0-9]", t) is not None or (re.search("[a-z]", t) is not None and re.search("[A-Z]", t) is not None)


_AUTH_SCHEME = re.compile(r"(?:basic|bearer|digest|token|negotiate|ntlm|hoba|mutual|vapid|scram-sha-\d+|aws4-hmac-sha256)", re.ASCII | re.IGNORECASE)
_SECRET_WORDS = {"password", "passwd", "pwd", "pass", "passphrase", "secret", "token", "apikey", "authorization", "cookie", "credential", "credentials", "privatekey", "accesskey", "secretkey", "clientsecret"}
_SECRET_PAIRS = {"api_key", "access_key", "private_key", "secret_key", "client_secret", "account_key", "signing_key", "encryption_key", "key_data"}
_CURSOR_WORDS = {"page", "next", "continuation", "sync", "pagination", "resume", "cursor"}


def secret_name(name: str) -> bool:
    """Whether a name (key, header, variable, option) says its value is a secret: secretName of secret-detectors.ts."""
    if len(name) > 100:
        return False
    words = [w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()) if w]
    if not words:
        return False
    last = words[-1]
    if last == "token" and len(words) > 1 and words[-2] in _CURSOR_WORDS:
        return False
    return last in _SECRET_WORDS or last.endswith(("password", "passwd", "passphrase", "secret", "apikey")) or (len(words) > 1 and f"{words[-2]}_{last}" in _SECRET_PAIRS)


def is_card_number(digits: str) -> bool:
    """Whether the digits of a JSON number are a card number of a major scheme that passes Luhn."""
    return re.fullmatch(r"(?:4\d{3}|5[1-5]\d{2}|2[2-7]\d{2}|3[47]\d{2}|6(?:011|5\d{2}))\d{9,15}", digits, re.ASCII) is not None and luhn_valid(digits)


_A = re.ASCII
_AI = re.ASCII | re.IGNORECASE

# (rule, pattern, group, check, name group): in the order of secret-detectors.ts, the first claim
# kept; a name group's text must be a secret's name (secret_name).
_BUILT_IN: List[Tuple[str, "re.Pattern[str]", int, Optional[Callable[[str], bool]], Optional[int]]] = [
    ("private_key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----", _A), 0, None, None),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", _A), 0, _jwt, None),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}", _A), 0, None, None),
    # Providers' shapes (_providers.py, generated from secret-providers.ts): before the OpenAI key
    # and Bearer, which would take some of them under a vaguer rule.
    *[(rule, re.compile(pattern, _A), group, None, None) for rule, pattern, group in PROVIDERS],
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", _A), 0, lambda t: re.search("[0-9]", t) is not None and re.search("[A-Za-z]", t[3:]) is not None, None),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", _A), 0, None, None),
    ("aws_secret_key", re.compile(f"aws_secret_access_key[\"']?{S}*[=:]{S}*[\"']?([A-Za-z0-9/+=]{{40}})(?![A-Za-z0-9/+=])", _AI), 1, None, None),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b", _A), 0, None, None),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}", _A), 0, None, None),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", _A), 0, None, None),
    ("stripe_key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b", _A), 0, None, None),
    ("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{34,40}\b", _A), 0, None, None),
    ("sendgrid_key", re.compile(r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", _A), 0, None, None),
    ("azure_storage_key", re.compile(r"\bAccountKey=([A-Za-z0-9+/]{86,88}={0,2})", _A), 1, None, None),
    ("basic_auth", re.compile(f"\\bBasic{S}+([A-Za-z0-9+/]{{8,}}={{0,2}})(?![A-Za-z0-9+/=])", _AI), 1, _basic, None),
    ("bearer_token", re.compile(f"\\bBearer{S}+([A-Za-z0-9._~+/-]{{20,}}=*)", _AI), 1, _bearer, None),
    ("url_password", re.compile(f"\\b[a-z][a-z0-9+.-]*://[^{_WS}:/@]*:([^{_WS}@/]+)@", _AI), 1, None, None),
    ("connection_password", re.compile(f"\\b(?:password|passwd|pwd){S}*[=:]{S}*(?!{S})(\"?)([^{_WS};\"'&,]{{3,}})\\1", _AI), 2, None, None),
    ("netrc_password", re.compile(f"\\bmachine{S}+{NS}+(?:{S}+login{S}+{NS}+)?{S}+password{S}+({NS}+)", _A), 1, None, None),
    ("cli_password", re.compile(f"\\b(?:mysql(?:dump|admin)?|mariadb|(?:docker|podman|helm registry|oras|az) login|sshpass)\\b[^\\n|;&]*?{S}-p[ \\t]*([\"']?)([^{_WS}\"'&;|-][^{_WS}\"'&;|]{{2,}})\\1", _A), 2, None, None),
    ("cli_password", re.compile(f"\\bcurl\\b[^\\n|;&]*?{S}(?:-u|--user)[ \\t]*([\"']?)[^{_WS}:\"']+:([^{_WS}\"'&;|]{{3,}})\\1", _A), 2, None, None),
    ("secret_assignment", re.compile(f"(?<![A-Za-z0-9_.-])([A-Za-z_][A-Za-z0-9_.-]{{0,99}})[\"']?{HS}*[=:]{HS}*([\"']?)([^{_WS}\"'&;|,]{{3,}})\\2", _A), 3, lambda t: _AUTH_SCHEME.fullmatch(t) is None, 1),
    ("secret_assignment", re.compile(f"(?<![A-Za-z0-9_-])--([A-Za-z][A-Za-z0-9-]{{0,99}})(?:=|{S}+)([\"']?)([^{_WS}\"'&;|]{{3,}})\\2", _A), 3, None, 1),
    ("keyword_secret", re.compile(r"\b(?:password|passwd|passphrase|secret|token|api[ _-]?key|access[ _-]?key|credentials?)\b[^\n\r]{0,24}?(?<![A-Za-z0-9+/_=-])([A-Za-z0-9+/_=-]{20,})(?![A-Za-z0-9+/_=-])", _AI), 1, lambda t: re.search("[0-9]", t) is not None and re.search("[A-Za-z]", t) is not None and len(set(t)) >= 10, None),
    ("card_number", re.compile(r"\b(?:4\d{3}|5[1-5]\d{2}|2[2-7]\d{2}|3[47]\d{2}|6(?:011|5\d{2}))(?:[ -]?\d){9,15}\b", _A), 0, luhn_valid, None),
]
_EMAIL = ("email", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b", _A), 0, None, None)

PLACEHOLDER = re.compile(r"\[redacted:([a-z0-9_]+):[0-9a-f]{16}\]")


def secret_mark(key: str, rule: str, secret: str) -> str:
    """The placeholder of a secret: its rule and the first 16 hex digits of HMAC-SHA-256(key, secret)."""
    digest = hmac.new(key.encode("utf-8"), secret.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
    return f"[redacted:{rule}:{digest[:16]}]"


class Redactor:
    """Applies a policy: ``{"key", "email"?, "paths"?: {tool_id or "*": ["args.password", ...]},
    "patterns"?: [{"rule", "pattern", "flags"?}]}`` — the server's REDACTION_* settings."""

    def __init__(self, policy: Dict[str, Any]) -> None:
        key = policy.get("key")
        if not (isinstance(key, str) and len(key) >= 16):
            raise ValueError("redaction key must be a string of at least 16 characters (the server's REDACTION_KEY)")
        self.key = key
        self.paths: Dict[str, Sequence[str]] = dict(policy.get("paths") or {})
        custom = []
        for p in policy.get("patterns") or []:
            flags = re.ASCII | (re.IGNORECASE if "i" in p.get("flags", "") else 0) | (re.MULTILINE if "m" in p.get("flags", "") else 0) | (re.DOTALL if "s" in p.get("flags", "") else 0)
            custom.append((p["rule"], re.compile(p["pattern"], flags), 0, None, None))
        self.detectors = _BUILT_IN + ([_EMAIL] if policy.get("email") else []) + custom

    def _mark(self, rule: str, secret: str) -> str:
        return secret_mark(self.key, rule, secret)

    def find(self, text: str) -> List[Tuple[str, int, int]]:
        """The secrets in text: (rule, start, end), non-overlapping, in text order."""
        hits: List[Tuple[str, int, int]] = []
        marks = [(m.start(), m.end()) for m in PLACEHOLDER.finditer(text)] if "[redacted:" in text else []
        # The escapes \n, \t, \r read as white space of the same length (JSON written into a string).
        view = re.sub(r"\\[ntr]", "  ", text) if "\\" in text else text
        for rule, pattern, group, check, name in self.detectors:
            for m in pattern.finditer(view):
                secret = m.group(group)
                if not secret or (check is not None and not check(secret)):
                    continue
                if name is not None and not (secret_name(m.group(name) or "") and not PLACEHOLDER.fullmatch(secret)):
                    continue
                start, end = m.start(group), m.end(group)
                if not any(start < e and s < end for _, s, e in hits) and not any(start < e and s < end for s, e in marks):
                    hits.append((rule, start, end))
        return sorted(hits, key=lambda h: h[1])

    def text(self, text: str) -> str:
        """text with every secret replaced by its placeholder; a text that holds a JSON array or
        object judged as that JSON (as the walk judges a string)."""
        inner = _json_inside(text)
        if inner is not None:
            return self._inside(text, inner, [], [], [False])
        return self._text(text)

    def _inside(self, text: str, inner: Any, at: List[str], paths: List[List[str]], changed: List[bool]) -> str:
        """JSON text inside a string judged as the JSON it holds, and written back (only when it
        held a secret) as json.dumps writes it: what the TypeScript side writes."""
        found = [False]
        out = self._walk(inner, at, paths, found)
        if not found[0]:
            return text
        changed[0] = True
        return json.dumps(out)

    def _text(self, text: str) -> str:
        out, at = [], 0
        for rule, start, end in self.find(text):
            out.append(text[at:start] + self._mark(rule, text[start:end]))
            at = end
        return "".join(out) + text[at:] if out else text

    def _walk(self, v: Any, at: List[str], paths: List[List[str]], changed: List[bool], secret: bool = False) -> Any:
        if at and any(len(p) == len(at) and all(x == "*" or x == y for x, y in zip(p, at)) for p in paths):
            if not (isinstance(v, str) and PLACEHOLDER.fullmatch(v)):
                changed[0] = True
                return self._mark("path", v if isinstance(v, str) else json.dumps(v, separators=(",", ":"), ensure_ascii=False))
        if isinstance(v, str):
            if secret:
                if v == "" or PLACEHOLDER.fullmatch(v):
                    return v
                changed[0] = True
                return self._mark("secret_name", v)
            inner = _json_inside(v)
            if inner is not None:
                return self._inside(v, inner, at, paths, changed)
            r = self._text(v)
            changed[0] = changed[0] or r != v
            return r
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            text = _number_text(v)
            if secret or is_card_number(text):
                changed[0] = True
                return self._mark("secret_name" if secret else "card_number", text)
            return v
        if isinstance(v, list):
            pair = not secret and len(v) == 2 and isinstance(v[0], str) and secret_name(v[0])
            return [self._walk(x, at + [str(i)], paths, changed, secret or (pair and i == 1)) for i, x in enumerate(v)]
        if isinstance(v, dict):
            named = any(isinstance(v.get(n), str) and secret_name(v[n]) for n in ("name", "key", "header"))
            out = {}
            for k, x in v.items():
                key = self._text(k)
                changed[0] = changed[0] or key != k
                out[key] = self._walk(x, at + [key], paths, changed, secret or secret_name(k) or (named and k == "value"))
            return out
        return v

    def call(self, tool_id: str, args: Any, result_summary: Any) -> Tuple[Any, Any, bool]:
        """(args, result_summary, changed): secrets out, the tool's paths replaced whole."""
        paths = [p.split(".") for p in list(self.paths.get("*", [])) + list(self.paths.get(tool_id, []))]
        changed = [False]
        v = self._walk({"args": args, "result_summary": result_summary}, [], paths, changed)
        return (v["args"], v["result_summary"], True) if changed[0] else (args, result_summary, False)

    def json_value(self, value: Any) -> Tuple[Any, bool]:
        """A JSON value (an output's content) with its secrets out, and whether any was."""
        changed = [False]
        v = self._walk(value, [], [], changed)
        return (v, True) if changed[0] else (value, False)
