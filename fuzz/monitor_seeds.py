#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_monitor (fuzz/corpus/monitor/): small valid state files laid
out as core/src/export/state_format.h describes, with tiny slots so that libFuzzer's mutations
reach every field. Run it again after the format changes:  python3 fuzz/monitor_seeds.py"""
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


def state_file(snapshots, points, events, *, state=1, snap_slot=512, hist_slot=256,
               hist_slots=3, ev_slot=256, ev_slots=4) -> bytes:
    header_bytes = 448
    snap_off = [header_bytes, header_bytes + snap_slot]
    hist_off = header_bytes + 2 * snap_slot
    ev_off = hist_off + hist_slot * hist_slots
    size = ev_off + ev_slot * ev_slots
    head = struct.pack("<8s4IQ2QQ3Q3Qqq2Q264s5Q", b"WTSTATE\0", 1, 0, header_bytes, 0x01020304,
                       size, snap_off[0], snap_off[1], snap_slot, hist_off, hist_slot, hist_slots,
                       ev_off, ev_slot, ev_slots, 999999, 1_700_000_000_000_000_000, 20100, 5000,
                       b"orders", state, len(snapshots), len(points), len(events),
                       1_700_000_005_000_000_000)
    assert len(head) == 440
    body = bytearray(head.ljust(header_bytes, b"\0"))
    snap_slots = [b"\0" * snap_slot, b"\0" * snap_slot]
    for n, text in enumerate(snapshots, 1):
        snap_slots[(n - 1) % 2] = slot(n, text.encode(), snap_slot)
    hist = [b"\0" * hist_slot] * hist_slots
    for n, text in enumerate(points, 1):
        hist[(n - 1) % hist_slots] = slot(n, text.encode(), hist_slot)
    ev = [b"\0" * ev_slot] * ev_slots
    for n, text in enumerate(events, 1):
        ev[(n - 1) % ev_slots] = slot(n, text.encode(), ev_slot)
    body += b"".join(snap_slots) + b"".join(hist) + b"".join(ev)
    assert len(body) == size
    return bytes(body)


def main() -> None:
    out = pathlib.Path(__file__).parent / "corpus" / "monitor"
    out.mkdir(parents=True, exist_ok=True)
    snap = json.dumps({"version": 20100, "time_ns": 5000000000, "services": [
        {"name": "orders", "endpoints": [{"id": "a", "state": "healthy", "weight": 100}]}]})
    point = json.dumps({"n": 1, "time_ns": 5000000000, "columns": ["id", "state", "weight"],
                        "services": [{"name": "orders", "endpoints": [["a", "healthy", 100]]}]})
    event = json.dumps({"n": 1, "type": "isolated", "service": "orders", "endpoint": "a",
                        "reason": {"penalty": 1}})
    seeds = {
        "empty": state_file([], [], []),
        "one-of-each": state_file([snap], [point], [event]),
        "wrapped": state_file([snap, snap, snap], [point] * 5, [event] * 7),
        "closed": state_file([snap], [point, point], [event], state=2),
    }
    for name, data in seeds.items():
        (out / name).write_bytes(data)
    print(f"wrote {len(seeds)} seeds to {out}")


if __name__ == "__main__":
    main()
