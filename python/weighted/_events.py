"""Engine events: the event types of the C ABI, the event record a listener receives, and the
endpoint states events and snapshots name."""
from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Tuple, Union

from . import _weighted


class EventType(enum.IntEnum):
    """``wt_event_type``."""

    WEIGHT_CHANGED = 1
    ISOLATED = 2
    RESTORED = 3
    FORCED_RESTORE = 4  # alert: max isolation time ran out; needs a human
    PANIC_ENTER = 5
    PANIC_EXIT = 6
    ENDPOINT_ADDED = 7
    ENDPOINT_REMOVED = 8
    CONFIG_RELOADED = 9
    SERVICE_REMOVED = 10  # Service.remove(); ``endpoint`` is ""
    SOURCE_STALE = 11  # a metric source (config ``sources``) has failed for its stale_ms
    SOURCE_FRESH = 12  # and has answered again; ``service`` and ``endpoint`` are ""
    BUDGET_MISSED = 13  # the service's error rate over budget.window_ms went above its budget
    BUDGET_MET = 14  # and is back within it; ``endpoint`` is ""
    GUARD = 15  # the capacity guard holds back a different number of cuts; ``endpoint`` is ""
    STATE_CHANGED = 16  # an endpoint's state changed; ``reason`` is the judgement behind it


class EndpointState(str, enum.Enum):
    """``wt_endpoint_state``: the snapshot's ``state`` of an endpoint (docs/algorithm.md).
    ``UNKNOWN`` is what the dashboard shows for an endpoint without evidence
    (``judgement.evidence`` "none"); the engine's own state for it reads healthy or recovering."""

    HEALTHY = "healthy"
    DEGRADED = "degraded"
    ISOLATED = "isolated"
    RECOVERING = "recovering"
    FAILING = "failing"  # failure-rate rules fire: cut, and avoided because it fails
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Event:
    """One engine event. ``reason`` is the core's JSON reason (rules that fired, on which values)."""

    type: Union[EventType, int]
    time_ns: int
    service: str
    endpoint: str
    old_weight: float
    new_weight: float
    reason: Dict[str, Any] = field(default_factory=dict)

    @property
    def time(self) -> float:
        """Engine time in seconds."""
        return self.time_ns / 1e9

    @property
    def name(self) -> str:
        """The core's name: ``"isolated"``, ``"panic_enter"``, ... (``"event_<n>"`` for a type
        the loaded library does not name)."""
        return _weighted.event_type_name(int(self.type)) or f"event_{self.type}"

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.name, "time_ns": self.time_ns, "service": self.service,
                "endpoint": self.endpoint, "old_weight": self.old_weight,
                "new_weight": self.new_weight, "reason": self.reason}

    @classmethod
    def _from_raw(cls, raw: Tuple[int, int, str, str, float, float, str]) -> "Event":
        etype, time_ns, service, endpoint, old_w, new_w, reason_text = raw
        try:
            reason = json.loads(reason_text) if reason_text else {}
        except ValueError:
            reason = {"text": reason_text}
        if not isinstance(reason, dict):
            reason = {"value": reason}
        try:
            etype = EventType(etype)
        except ValueError:
            pass
        return cls(etype, time_ns, service, endpoint, old_w, new_w, reason)
