"""How a call ended: the outcome enum, HTTP status checks and the default exception mapping."""
from __future__ import annotations

import enum
from typing import Any, Callable, Dict, Union

from . import _errors, _weighted


class Outcome(enum.IntEnum):
    """How a call ended (``wt_outcome``). Strings such as ``"timeout"`` (the core's names,
    ``weighted._weighted.outcome_name``) are accepted too."""

    SUCCESS = 0
    HTTP_5XX = 1
    TIMEOUT = 2
    CONNECT_ERROR = 3
    BUSINESS_ERROR = 4

    @classmethod
    def from_http_status(cls, http_status: int) -> "Outcome":
        """500..599 is HTTP_5XX, any other status (100..599) SUCCESS (a 4xx is the caller's
        fault). A status that is not an int (``"500"``, ``500.0``, ``True``) is a TypeError and
        one outside 100..599 an InvalidArgumentError: either would be recorded as a success."""
        return cls(_weighted.outcome_from_http_status(_http_status(http_status)))


def _http_status(value: Any, where: str = "http_status") -> int:
    # int() would take "500", 500.9 and True, and the core maps every non-5xx number to success:
    # a status read from the wrong field would count as a healthy answer.
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where} must be an int (an HTTP status code), not {type(value).__name__}")
    if not 100 <= value <= 599:
        raise _errors.InvalidArgumentError(
            f"{where} must be an HTTP status code in 100..599, got {value}")
    return int(value)


# The core's spelling of each outcome; the breaker's string outcomes resolve through it.
_OUTCOMES_BY_NAME: Dict[str, Outcome] = {_weighted.outcome_name(o): o for o in Outcome}


def classify_exception(exc: BaseException) -> Outcome:
    """The default mapping of an exception raised by a tracked call to an :class:`Outcome`.

    ``TimeoutError`` (``socket.timeout``, ``asyncio.TimeoutError``) is TIMEOUT;
    ``ConnectionError`` (refused, reset, aborted) is CONNECT_ERROR; an exception carrying an HTTP
    status (``.status_code``, ``.status``, ``.code`` or ``.response.status_code``) maps through
    :meth:`Outcome.from_http_status` (so a 4xx counts as SUCCESS: the caller's fault); anything
    else is HTTP_5XX. Pass ``classify=`` to :meth:`Service.call` or :meth:`Service.tracked` to
    change it.
    """
    if isinstance(exc, TimeoutError):
        return Outcome.TIMEOUT
    if isinstance(exc, ConnectionError):
        return Outcome.CONNECT_ERROR
    status = None
    for holder in (exc, getattr(exc, "response", None)):
        if holder is None:
            continue
        for attr in ("status_code", "status", "code"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and 100 <= value <= 599:
                status = value
                break
        if status is not None:
            break
    if status is not None:
        return Outcome.from_http_status(status)
    return Outcome.HTTP_5XX


Classifier = Callable[[BaseException], Union[Outcome, int, str]]
