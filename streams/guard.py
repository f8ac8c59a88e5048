"""The guard: the single write path every candidate passes.

Order matters and is fixed:

1. whitelist  - the type must be a `MemoryType` (raw proposals are validated here);
2. importance - scored on the ORIGINAL text, before anything is masked, so a
   phone number still counts as an explicit personal fact;
3. PII        - every detected span is replaced by a placeholder; each hit is
   audited with a keyed digest of the span (HMAC under the guard's audit key,
   a per-tenant secret) or no digest at all, never the span itself nor a bare
   hash of it (a bare hash of a phone number is the phone number);
4. emptiness  - a candidate that is nothing but a label and a placeholder
   ("用户的电话是[PHONE]") is rejected;
5. assistant  - assistant candidates need an assistant type AND a
   confirmation signal in the source text.

The guard is pure: it returns accepted candidates and audit records, and the
caller turns the audits into `GuardFired` events.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias, cast

from pydantic import ValidationError

from engram.core.config import GuardConfig
from engram.core.pii import PLACEHOLDER_RE, Redaction, audit_digest, find_pii, redact
from engram.schemas.events import GuardAction
from engram.schemas.memory import SINGLE_VALUED_SLOTS, Candidate, MemoryType, Role

from .filters import has_decision_signal
from .rules.common import shorten


@dataclass(frozen=True, slots=True)
class Audit:
    """One guard rule that fired. `original_sha256` is a keyed digest of the original ("" without a key)."""

    rule: str
    action: GuardAction
    original_sha256: str
    memory_type: str = ""
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Admitted:
    """A candidate that passed the guard (already redacted) and its importance."""

    candidate: Candidate
    importance: float


@dataclass(frozen=True, slots=True)
class GuardResult:
    """What the guard made of one message's candidates: the admitted ones and every audit."""

    accepted: tuple[Admitted, ...]
    audits: tuple[Audit, ...]
    rejected: int = 0


Proposal: TypeAlias = Candidate | Mapping[str, object]
"""A typed candidate, or a raw one (LLM output, an API write) still to be whitelisted."""

_BASE_IMPORTANCE: dict[MemoryType, float] = {
    MemoryType.USER_PROFILE: 0.7,
    MemoryType.USER_CONSTRAINT: 0.65,
    MemoryType.USER_GOAL: 0.6,
    MemoryType.USER_PREFERENCE: 0.55,
    MemoryType.USER_FACT: 0.45,
    MemoryType.ASSISTANT_DECISION: 0.6,
    MemoryType.ASSISTANT_CONSTRAINT: 0.6,
    MemoryType.ASSISTANT_PLAN: 0.5,
    MemoryType.ASSISTANT_ACTION: 0.4,
}
# Substring checks: much faster than one big case-insensitive alternation on every candidate.
_PERSISTENT = ("以后", "今后", "永远", "一直", "总是", "每次", "始终", "长期",
               " always", " never", "from now on", " forever", "every time", "going forward")
_EMPHASIS = ("一定", "务必", "重要", "必须", "千万", "记住", "关键",
             " must", "important", "critical", "essential", "remember", "crucial")


def _mentions(padded_lower: str, markers: tuple[str, ...]) -> bool:
    for marker in markers:
        if marker in padded_lower:
            return True
    return False


_LABELS = re.compile(
    r"用户|我的|我|的|电话号码|电话|手机号码|手机号|手机|号码|联系方式|邮箱|电子邮件|邮件|密码|口令|身份证号|身份证|"
    r"银行卡号|银行卡|卡号|账号|密钥|令牌|是|为|叫|\b(?:user's|user|my|mine|phone|mobile|cell|tel|number|"
    r"email|e-mail|mail|address|password|pwd|passcode|is|are|was|card|bank|credit|debit|id|key|api|token|"
    r"secret|the|of|a|an|contact|and|me|at)\b|[\W_]+",
    re.IGNORECASE,
)


def score_importance(
    memory_type: MemoryType, text: str, attribute: str | None = None, confidence: float = 1.0,
    personal_data: bool | None = None,
) -> float:
    """Deterministic 0..1 importance of a statement, from its type and its wording.

    `personal_data` says whether the text holds personal data; it is detected
    when not given. Pass the ORIGINAL text: a masked number no longer counts.
    """
    score = _BASE_IMPORTANCE[memory_type]
    padded = f" {text.lower()}"
    if _mentions(padded, _PERSISTENT):
        score += 0.1
    if _mentions(padded, _EMPHASIS):
        score += 0.1
    if personal_data if personal_data is not None else bool(find_pii(text)):
        score += 0.15
    if attribute and f"{memory_type.value}.{attribute}" in SINGLE_VALUED_SLOTS:
        score += 0.1
    length = len(text)
    score += 0.05 if length >= 12 else (-0.1 if length < 4 else 0.0)
    score *= 0.6 + 0.4 * confidence
    return round(min(1.0, max(0.0, score)), 3)


_TYPE_VALUES = frozenset(t.value for t in MemoryType)


class Guard:
    """Applies the guard rules, in order, to the candidates of one source message.

    `audit_key` keys the digests in the audits (HMAC-SHA256); without it audits carry none.
    """

    def __init__(self, config: GuardConfig | None = None, audit_key: bytes | None = None) -> None:
        self._config = config or GuardConfig()
        self._key = audit_key

    def _sha(self, text: str) -> str:
        return audit_digest(text, self._key)

    def check(self, proposals: Sequence[Proposal], role: Role, source_text: str) -> GuardResult:
        """Guard the candidates extracted from `source_text`, a message sent by `role`."""
        accepted: list[Admitted] = []
        audits: list[Audit] = []
        confirmed: bool | None = None
        for proposal in proposals:
            if role == "assistant" and confirmed is None:
                confirmed = has_decision_signal(source_text)
            admitted = self._one(proposal, role, bool(confirmed), audits)
            if admitted is not None:
                accepted.append(admitted)
        return GuardResult(tuple(accepted), tuple(audits), len(proposals) - len(accepted))

    def _one(self, proposal: Proposal, role: Role, confirmed: bool, audits: list[Audit]) -> Admitted | None:
        candidate = _whitelist(proposal, audits, self._sha)
        if candidate is None:
            return None
        # One scan over content and labels; the common case finds nothing and stops here.
        labels = (candidate.topic or "", *candidate.entities, *candidate.keywords)
        any_pii = bool(find_pii("\n".join((candidate.content, *labels))))
        redaction = redact(candidate.content, self._key) if any_pii else Redaction(candidate.content, ())
        importance = score_importance(
            candidate.type, candidate.content, candidate.attribute, candidate.confidence,
            personal_data=redaction.changed,
        )
        if importance < self._config.min_importance:
            audits.append(Audit("importance.low", "rejected", self._sha(candidate.content), candidate.type.value,
                                f"importance={importance}"))
            return None
        cleaned = self._redact(candidate, redaction, importance, any_pii, audits)
        if cleaned is None or not _role_allows(cleaned, role, confirmed, audits, self._sha):
            return None
        return Admitted(cleaned, importance)

    def _redact(
        self, candidate: Candidate, redaction: Redaction, importance: float, any_pii: bool,
        audits: list[Audit],
    ) -> Candidate | None:
        kind = candidate.type.value
        seen: set[tuple[str, str]] = set()
        for hit in redaction.hits:
            seen.add((hit.rule, candidate.content[hit.start : hit.end]))
            audits.append(Audit(hit.rule, "redacted", hit.digest, kind, f"field=content importance={importance}"))
        content = redaction.text
        if not content.strip() or (redaction.changed and not _meaningful(content)):
            rule = "empty_after_redaction" if redaction.changed else "empty"
            audits.append(Audit(rule, "rejected", self._sha(candidate.content), kind, f"importance={importance}"))
            return None
        if redaction.changed:
            secrets = tuple(candidate.content[h.start : h.end].lower() for h in redaction.hits)
            update = _labels_kept_in(candidate, content, secrets)
        elif any_pii:
            update = _redact_labels(candidate, seen, audits, self._key)
        else:
            update = {}
        if len(content) > self._config.max_content_chars:
            content = shorten(content, self._config.max_content_chars)
        if content != candidate.content:
            update["content"] = content
        return candidate.model_copy(update=update) if update else candidate


def _whitelist(proposal: Proposal, audits: list[Audit], _sha: Callable[[str], str]) -> Candidate | None:
    if isinstance(proposal, Candidate):
        return proposal
    if not isinstance(proposal, Mapping):
        audits.append(Audit("whitelist.invalid", "rejected", _sha(repr(proposal)), "", "not a candidate"))
        return None
    raw = cast(Mapping[str, object], proposal)
    raw_type = str(raw.get("type", ""))
    content = str(raw.get("content", ""))
    if raw_type not in _TYPE_VALUES:
        detail = f"type {raw_type[:40]!r} is not in the memory type whitelist"
        audits.append(Audit("whitelist.type", "rejected", _sha(content), raw_type[:64], detail))
        return None
    try:
        return Candidate.model_validate(dict(proposal))
    except ValidationError as exc:
        fields = ",".join(sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]}))
        audits.append(Audit("whitelist.invalid", "rejected", _sha(content), raw_type, f"invalid fields: {fields}"))
        return None


def _meaningful(redacted: str) -> bool:
    """Anything left beyond placeholders and the labels that introduced them."""
    rest = _LABELS.sub("", PLACEHOLDER_RE.sub("", redacted))
    return len(rest) >= 2


def _labels_kept_in(candidate: Candidate, redacted: str, secrets: tuple[str, ...]) -> dict[str, object]:
    """After content redaction keep only labels still present in the redacted content.

    Out of context a label may no longer look like a secret ("A00000" without
    "密码是"), so a label is trusted only if the scrubbed content still contains
    it and it shares no text with a removed span.
    """
    low = redacted.lower()

    def kept(value: str) -> bool:
        value = value.lower()
        return bool(value) and value in low and not PLACEHOLDER_RE.search(value) and not any(
            secret in value or (len(value) > 3 and value in secret) for secret in secrets
        )

    topic = candidate.topic if candidate.topic and kept(candidate.topic) else None
    return {
        "topic": topic,
        "entities": tuple(e for e in candidate.entities if kept(e)),
        "keywords": tuple(k for k in candidate.keywords if kept(k)),
    }


def _redact_labels(candidate: Candidate, seen: set[tuple[str, str]], audits: list[Audit],
                   key: bytes | None) -> dict[str, object]:
    """Redact PII found only in topic, entities or keywords; audit each new hit."""
    fields = (candidate.topic or "", *candidate.entities, *candidate.keywords)
    kind = candidate.type.value
    cleaned: list[str] = []
    for value in fields:
        result = redact(value, key)
        for hit in result.hits:
            if (hit.rule, value[hit.start : hit.end]) not in seen:
                seen.add((hit.rule, value[hit.start : hit.end]))
                audits.append(Audit(hit.rule, "redacted", hit.digest, kind, "field=labels"))
        cleaned.append(result.text if _meaningful(result.text) or not result.changed else "")
    topic, n_entities = cleaned[0] or None, len(candidate.entities)
    entities = tuple(e for e in cleaned[1 : 1 + n_entities] if e)
    keywords = tuple(k for k in cleaned[1 + n_entities :] if k)
    return {"topic": topic, "entities": entities, "keywords": keywords}


def _role_allows(candidate: Candidate, role: Role, confirmed: bool, audits: list[Audit],
                 _sha: Callable[[str], str]) -> bool:
    kind = candidate.type.value
    if role == "user":
        if candidate.type.is_assistant:
            audits.append(Audit("user.assistant_type", "rejected", _sha(candidate.content), kind,
                                "assistant memory types come only from assistant messages"))
            return False
        return True
    if not candidate.type.is_assistant:
        audits.append(Audit("assistant.type", "rejected", _sha(candidate.content), kind,
                            "assistant messages may only yield assistant memory types"))
        return False
    if not confirmed:
        audits.append(Audit("assistant.no_confirmation", "rejected", _sha(candidate.content), kind,
                            "source text carries no confirmation signal"))
        return False
    return True
