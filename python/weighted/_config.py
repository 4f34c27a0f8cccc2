"""Config text, config files, and the limits of the config an engine runs with.

Every entry point hands the core the config's whole text with its length, as bytes: the core
then refuses what is not JSON (bad UTF-8, bytes after a NUL) with its own line and column. Files
are read here, never whole: at most ``limits.max_config_bytes + 1`` bytes, as the C API's file
readers do, so ``/dev/zero`` is refused instead of exhausting memory. Reading here, not in the C
call, lets the package know the text an engine runs with, and so its limits (see
:class:`Limits`).
"""
from __future__ import annotations

import json
import os
import socket
import threading
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple, Union

from . import _errors, _weighted

__all__ = ["ConfigLike", "config_bytes", "read_config_file", "validate_config",
           "validate_config_file", "resolve_config", "Limits", "DEFAULT_LIMITS",
           "default_client_id", "with_client_id", "fleet_place"]

ConfigLike = Union[str, bytes, Mapping[str, Any], None]
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

_IO, _INVALID_ARGUMENT, _LIMIT = 5, 1, 7  # wt_status values


def config_bytes(config: ConfigLike) -> bytes:
    """The config as the UTF-8 text the core reads."""
    if config is None:
        return b"{}"
    if isinstance(config, bytes):
        return config
    if isinstance(config, str):
        # A lone surrogate has no UTF-8 form: its bytes go through as they are, and the core
        # refuses them as the bad UTF-8 they are, with a line and column.
        return config.encode("utf-8", "surrogatepass")
    if isinstance(config, Mapping):
        # NaN/inf are written as the non-JSON tokens NaN/Infinity on purpose: the core rejects
        # them with its own message (line and column), as it would from any other language.
        return json.dumps(config).encode("utf-8", "surrogatepass")
    raise TypeError(f"config must be JSON text, bytes or a dict, not {type(config).__name__}")


def default_client_id() -> str:
    """This process's identity for subsetting: ``WEIGHTED_CLIENT_ID`` if set, else
    ``<hostname>:<pid>`` (a pod's hostname is its name; the pid tells apart the workers of one
    host, a gunicorn's say)."""
    return os.environ.get("WEIGHTED_CLIENT_ID") or f"{socket.gethostname()}:{os.getpid()}"


def with_client_id(text: bytes, client_id: Optional[str]) -> bytes:
    """The config with ``subset.client_id`` filled in: ``client_id`` when given, else
    :func:`default_client_id` where the document has a ``subset`` object without one; and,
    where the document's subset has none, this process's place in its fleet
    (:func:`fleet_place`). Text that is not a JSON object goes to the core unchanged, which says
    what is wrong with it."""
    if client_id is not None and not isinstance(client_id, str):
        raise TypeError(f"client_id must be a str, not {type(client_id).__name__}")
    try:
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return text
    if not isinstance(doc, dict):
        return text
    subset = doc.get("subset")
    if client_id is None:
        if not isinstance(subset, dict):
            return text
        if subset.get("client_id"):
            client_id = subset["client_id"]
        else:
            client_id = default_client_id()
    if subset is None:
        subset = doc["subset"] = {}
    if not isinstance(subset, dict):
        return text  # the core refuses a subset that is not an object, naming it
    place = fleet_place()  # read only where a subset uses it: a bad variable elsewhere is moot
    if subset.get("client_id") == client_id and all(k in subset for k in place):
        return text
    subset["client_id"] = client_id
    for key, value in place.items():
        subset.setdefault(key, value)  # the document's own place wins, like its client_id
    return json.dumps(doc).encode("utf-8", "surrogatepass")


_PLACE_VARS = (("client_index", "WEIGHTED_CLIENT_INDEX"), ("client_count", "WEIGHTED_CLIENT_COUNT"))


def fleet_place() -> Dict[str, int]:
    """This process's place in its fleet for the deterministic aperture (``subset.client_index``
    and ``subset.client_count``), from ``WEIGHTED_CLIENT_INDEX`` and ``WEIGHTED_CLIENT_COUNT``
    where set (a StatefulSet's ordinal and replica count); empty where not. The core checks that
    the index is below the count; a value that is not a whole number is refused here, naming the
    variable, since the core would only see a number the variable never held."""
    place: Dict[str, int] = {}
    for key, var in _PLACE_VARS:
        raw = os.environ.get(var, "").strip()
        if not raw:
            continue
        if not (raw.isascii() and raw.isdigit()):
            raise _errors.from_status(
                3, f"{var}={raw!r}: not a whole number >= 0 (it sets subset.{key})")
        place[key] = int(raw)
    if "client_count" in place and "client_index" not in place:
        # Every client of the fleet would take place 0, and so the same endpoints.
        raise _errors.from_status(
            3, "WEIGHTED_CLIENT_COUNT is set but WEIGHTED_CLIENT_INDEX is not: each client "
               "needs its own place (0 to count - 1), or every one would use the same endpoints")
    return place


def _fspath(where: str, path: Any) -> bytes:
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"{where}: path must be a str, bytes or os.PathLike, not "
                        f"{type(path).__name__}")
    return os.fsencode(path)


def read_config_file(where: str, path: PathLike, max_bytes: int) -> bytes:
    """The file's bytes, at most ``max_bytes``; the C API's errors and messages otherwise
    (``WT_ERR_IO`` as :class:`weighted.ConfigFileError`, ``WT_ERR_LIMIT`` as
    :class:`weighted.LimitError`), with ``where`` naming the call."""
    raw = _fspath(where, path)
    name = _weighted.quoted(raw)
    if b"\0" in raw:
        # The C side would cut the path there; the binding refuses it the same way.
        raise _errors.from_status(
            _INVALID_ARGUMENT, f"{where}: config path contains a NUL byte at offset {raw.index(0)}")
    if os.path.isdir(raw):
        raise _errors.from_status(_IO, f"{where}: cannot read {name}: it is a directory")
    try:
        with open(raw, "rb") as f:
            text = f.read(max_bytes + 1)
    except OSError as e:
        raise _errors.from_status(
            _IO, f"{where}: cannot open {name}: {e.strerror or type(e).__name__}") from None
    if len(text) > max_bytes:
        raise _errors.from_status(
            _LIMIT, f"{where}: {name} is more than limits.max_config_bytes = {max_bytes} bytes")
    return text


def validate_config(config: ConfigLike) -> None:
    """Checks a config (JSON text, bytes or a dict) without creating an engine.

    Raises :class:`weighted.ConfigError` (``ConfigParseError`` / ``ConfigInvalidError``) or
    :class:`weighted.LimitError` carrying the core's message.
    """
    _weighted.validate_config(config_bytes(config))


def validate_config_file(path: PathLike) -> None:
    """Reads a config file (at most the built-in ``limits.max_config_bytes``, 1 MiB: more is a
    :class:`weighted.LimitError`) and validates it; :class:`weighted.ConfigFileError` if it
    cannot be read."""
    validate_config(read_config_file("validate_config_file", path,
                                     DEFAULT_LIMITS.max_config_bytes))


def resolve_config(config: ConfigLike) -> Dict[str, Any]:
    """The fully resolved config as a dict: every key present, the profile's defaults filled in."""
    return json.loads(_weighted.resolve_config(config_bytes(config)))


class Limits:
    """The ``limits`` of the config an engine runs with, for what the package checks before a
    call: the latency a tracked call reports (clamped to ``max_latency_ms``) and the most bytes
    ``reload_from_file`` reads (``max_config_bytes``).

    Shared by an engine and its services. While a reload runs, each limit is the lower of the old
    and the new one, so a value checked against it is accepted by the engine under either config.
    """

    __slots__ = ("max_latency_ms", "max_config_bytes", "_lock", "_generation")

    def __init__(self, text: Optional[bytes] = None) -> None:
        self.max_latency_ms, self.max_config_bytes = self._of(text)
        # Guards the bookkeeping only, never a reload itself: a reload raises events, and a
        # callback that waits here for another thread's reload could deadlock with it.
        self._lock = threading.Lock()
        self._generation = 0

    @staticmethod
    def _of(text: Optional[bytes]) -> Tuple[float, int]:
        limits = json.loads(_weighted.resolve_config(text or b"{}"))["limits"]
        return float(limits["max_latency_ms"]), int(limits["max_config_bytes"])

    def _set(self, limits: Tuple[float, int]) -> None:
        self.max_latency_ms, self.max_config_bytes = limits

    def _lower(self, limits: Tuple[float, int]) -> None:
        self._set((min(self.max_latency_ms, limits[0]), min(self.max_config_bytes, limits[1])))

    @contextmanager
    def replacing(self, text: bytes) -> Iterator[None]:
        """Around a reload with ``text``: the new limits once it succeeded, the old ones if not."""
        try:
            new: Optional[Tuple[float, int]] = self._of(text)
        except _errors.WeightedError:
            new = None  # the reload refuses it too, with its own message
        with self._lock:
            self._generation += 1
            mine = self._generation
            old = (self.max_latency_ms, self.max_config_bytes)
            if new is not None:
                self._lower(new)
        ok = False
        try:
            yield
            ok = True
        finally:
            with self._lock:
                if self._generation == mine:
                    self._set(new if ok and new is not None else old)
                elif ok and new is not None:
                    # Another reload began meanwhile (another thread's, or one from an event
                    # callback inside this one), and the engine may have applied either last:
                    # the lower limits hold under both until the next reload.
                    self._lower(new)


DEFAULT_LIMITS = Limits()
