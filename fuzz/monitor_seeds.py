#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_monitor (fuzz/corpus/monitor/): small valid state files laid
out as core/src/export/state_format.h describes (snapshot slots holding the binary record of
core/src/export/snapshot_record.h), with tiny slots so that libFuzzer's mutations reach every
field. Run it again after the format changes:  python3 fuzz/monitor_seeds.py"""
import json
import pathlib
import struct

M = (1 << 64) - 1


def fingerprint(p: bytes) -> int:
    """state_format::Hash."""
    n = len(p)
    h = (0x9E3779B97F4A7C15 ^ n) & M
    i = 0
    while i + 8 <= n:
        h = ((h ^ int.from_bytes(p[i:i + 8], "little")) * 0xFF51AFD7ED558CCD) & M
        h ^= h >> 32
        i += 8
    h = ((h ^ int.from_bytes(p[i:], "little")) * 0xC4CEB9FE1A85EC53) & M
    return h ^ (h >> 29)


def slot(number: int, payload: bytes, size: int, seq: int = 2) -> bytes:
    body = struct.pack("<4Q", seq, number, len(payload), fingerprint(payload)) + payload
    assert len(body) <= size
    return body.ljust(size, b"\0")


def text(s: str) -> bytes:
    """A record's string: u64 length, the bytes, zeros to a multiple of 8."""
    b = s.encode()
    return struct.pack("<Q", len(b)) + b + b"\0" * (-len(b) % 8)


def endpoint(key: int, index: int, ident: str, state: int, hits) -> bytes:
    """An EndpointRecord, its id and its rule hits (metric, fired, evaluated, value, threshold,
    penalty)."""
    never = -(1 << 63)
    rec = struct.pack("<2Q5dQ5Q4d4d4d2Q2dq4qqdQqddqQ5QQ", key, index,
                      100.0, 100.0, 100.0, 100.0, 0.5,           # base .. penalty
                      60, 50, 10, 0, 0, 0,                         # requests, outcomes
                      10 / 60, 20.0, 35.0, 40.0,                   # error_rate, mean, p95, p99
                      0.5, 0, 0, 0, 0.75, 0, 0, 0,                 # resources, server_resources
                      3, 1, 120.5, 0.25, 4_000_000_000,            # reports, rps, eps, rates_at
                      4_000_000_000, never, never, never,          # server_at
                      2, 0.25, 60, 1, 21.0, 0.1,                   # inflight, share, picker
                      1_000_000_000, 0, 50, 10, 0, 0, 0, len(hits))
    rec += bytes([state, 1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0])
    assert len(rec) == 408
    out = rec + text(ident)
    for metric, fired, evaluated, value, threshold, penalty in hits:
        out += struct.pack("<3d8B", value, threshold, penalty, metric, fired, evaluated,
                           0, 0, 0, 0, 0)
    return out


def record(services, *, sources=(), profile="default", load_aware=1) -> bytes:
    """A snapshot record: services are (name, panic, [endpoint bytes])."""
    out = struct.pack("<QqQQQQQ", 20100, 5_000_000_000, 3, 0, len(sources), 1, load_aware)
    out += text(profile)
    for name, url, st, err in sources:
        out += struct.pack("<4QQq", 7, 1, 3, 2, 1, 250)
        out += text(name) + text(url) + text(st) + text(err) + text("libcurl/8")
    for name, panic, eps in services:
        out += struct.pack("<Q4Q5QQ", 1, 1, panic, 0, 2, 90, 10, 0, 0, 0, len(eps))
        out += text(name) + b"".join(eps)
    return out + struct.pack("<Q", 0)


def state_file(snapshots, points, events, *, state=1, snap_slot=1024, hist_slot=256,
               hist_slots=3, ev_slot=256, ev_slots=4) -> bytes:
    header_bytes = 448
    snap_off = [header_bytes, header_bytes + snap_slot]
    hist_off = header_bytes + 2 * snap_slot
    ev_off = hist_off + hist_slot * hist_slots
    size = ev_off + ev_slot * ev_slots
    head = struct.pack("<8s4IQ2QQ3Q3Qqq2Q264s5Q", b"WTSTATE\0", 2, 0, header_bytes, 0x01020304,
                       size, snap_off[0], snap_off[1], snap_slot, hist_off, hist_slot, hist_slots,
                       ev_off, ev_slot, ev_slots, 999999, 1_700_000_000_000_000_000, 20100, 5000,
                       b"orders", state, len(snapshots), len(points), len(events),
                       1_700_000_005_000_000_000)
    assert len(head) == 440
    body = bytearray(head.ljust(header_bytes, b"\0"))
    snap_slots = [b"\0" * snap_slot, b"\0" * snap_slot]
    for n, rec in enumerate(snapshots, 1):
        snap_slots[(n - 1) % 2] = slot(n, rec, snap_slot)
    hist = [b"\0" * hist_slot] * hist_slots
    for n, p in enumerate(points, 1):
        hist[(n - 1) % hist_slots] = slot(n, p.encode(), hist_slot)
    ev = [b"\0" * ev_slot] * ev_slots
    for n, e in enumerate(events, 1):
        ev[(n - 1) % ev_slots] = slot(n, e.encode(), ev_slot)
    body += b"".join(snap_slots) + b"".join(hist) + b"".join(ev)
    assert len(body) == size
    return bytes(body)


def main() -> None:
    out = pathlib.Path(__file__).parent / "corpus" / "monitor"
    out.mkdir(parents=True, exist_ok=True)
    snap = record([("orders", 0, [endpoint(1, 0, "a", 1, [(0, 1, 1, 40.0, 30.0, 0.3),
                                                          (3, 0, 0, 0.0, 0.01, 0.5)])])])
    # A metric source, two services, an isolated endpoint without rules, a panic.
    rich = record([("orders", 0, [endpoint(1, 0, "a", 2, []), endpoint(2, 1, "b\"c", 0, [])]),
                   ("billing", 1, [endpoint(3, 0, "10.0.0.1:8080", 3, [(8, 1, 1, 0.9, 0.8, 0.2)])])],
                  sources=[("prom", "http://p:9090", "fresh", "")], load_aware=0)
    point = json.dumps({"n": 1, "time_ns": 5000000000, "columns": ["id", "state", "weight"],
                        "services": [{"name": "orders", "endpoints": [["a", "healthy", 100]]}]})
    event = json.dumps({"n": 1, "type": "isolated", "service": "orders", "endpoint": "a",
                        "reason": {"penalty": 1}})
    seeds = {
        "empty": state_file([], [], []),
        "one-of-each": state_file([snap], [point], [event]),
        "wrapped": state_file([snap, snap, snap], [point] * 5, [event] * 7),
        "closed": state_file([snap], [point, point], [event], state=2),
        "rich": state_file([rich], [point], [event], snap_slot=2048),
    }
    for name, data in seeds.items():
        (out / name).write_bytes(data)
    print(f"wrote {len(seeds)} seeds to {out}")


if __name__ == "__main__":
    main()
