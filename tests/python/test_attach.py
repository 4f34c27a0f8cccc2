"""weighted.attach(): another process's engine read through its state file, with real processes.

The writer (state_writer.py) runs in a child process on the manual clock and does one controller
cycle per command, so each assertion knows exactly how many cycles the file holds."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import weighted

HERE = os.path.dirname(__file__)


class Writer:
    """The child process and its command pipe."""

    def __init__(self, path, name="orders-service"):
        self.path = str(path)
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "state_writer.py"), self.path, name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("ready "), line
        self.pid = int(line.split()[1])

    def send(self, cmd):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        assert answer and not answer.startswith("unknown"), answer
        return answer

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for f in (self.proc.stdin, self.proc.stdout):
            f.close()


@pytest.fixture
def writer(tmp_path):
    w = Writer(tmp_path / "orders.state")
    yield w
    w.stop()


def _endpoints(snapshot, service="orders"):
    for s in snapshot["services"]:
        if s["name"] == service:
            return {e["id"]: e for e in s["endpoints"]}
    raise AssertionError(f"no service {service!r} in {snapshot}")


def test_a_view_reads_what_the_other_process_published(writer):
    for _ in range(3):
        writer.send("cycle")
    with weighted.attach(writer.path) as view:
        info = view.info()
        assert (info["service"], info["pid"], info["state"]) == ("orders-service", writer.pid,
                                                                  "running")
        assert info["writer_alive"] is True and info["history_points"] == 3
        eps = _endpoints(view.snapshot())
        assert eps["a"]["state"] == "isolated" and eps["a"]["effective_weight"] == 0
        assert eps["b"]["state"] == "healthy" and eps["b"]["effective_weight"] > 0
        assert view.snapshot()["time_ns"] == 15 * 10**9

        history = view.history()
        assert [p["n"] for p in history["points"]] == [1, 2, 3]
        assert [p["time_ns"] for p in history["points"]] == [5e9, 10e9, 15e9]
        assert history["next"] == 3
        rows = view.history_rows()
        assert {(r["n"], r["id"]) for r in rows} == {(n, e) for n in (1, 2, 3) for e in "abc"}
        assert {r["state"] for r in rows if r["id"] == "a"} == {"isolated"}
        # The last point's shares are the snapshot's: expected, and measured in the last cycle.
        snap = {e["id"]: e for e in view.snapshot()["services"][0]["endpoints"]}
        for r in (r for r in rows if r["n"] == 3):
            assert r["share"] == snap[r["id"]]["share"]["expected"]
            assert r["measured"] == snap[r["id"]]["share"]["last_cycle"]

        events = view.events()
        types = [(e["type"], e["endpoint"]) for e in events["events"]]
        assert types[:3] == [("endpoint_added", x) for x in "abc"]
        assert ("isolated", "a") in types
        isolated = next(e for e in events["events"] if e["type"] == "isolated")
        assert {r["metric"] for r in isolated["reason"]["rules"]} >= {"error_rate"}
        assert events["lost"] == 0 and events["reset"] is False


def test_cursors_return_only_what_is_new(writer):
    writer.send("cycle")
    with weighted.attach(writer.path) as view:
        h = view.history()
        e = view.events()
        assert [p["n"] for p in h["points"]] == [1]
        writer.send("healthy")
        writer.send("healthy")
        newer = view.history(since=h["next"])
        assert [p["n"] for p in newer["points"]] == [2, 3]
        assert [p["n"] for p in view.history(max_points=1)["points"]] == [3]
        assert view.history(since=newer["next"])["points"] == []
        after = view.events(cursor=e["next"])
        assert all(ev["n"] > e["next"] for ev in after["events"])
        assert view.events(cursor=after["next"])["events"] == []


def test_a_closed_writer_and_a_killed_one_leave_their_last_state(tmp_path):
    closing = Writer(tmp_path / "closing.state")
    killed = Writer(tmp_path / "killed.state")
    try:
        closing.send("cycle")
        assert closing.send("close") == "closed"
        closing.proc.wait(timeout=10)
        killed.send("cycle")
        killed.send("cycle")
        os.kill(killed.pid, signal.SIGKILL)
        killed.proc.wait(timeout=10)

        with weighted.attach(closing.path) as view:
            assert view.info()["state"] == "closed"
            assert _endpoints(view.snapshot())["a"]["state"] == "isolated"
        with weighted.attach(killed.path) as view:
            info = view.info()
            # The file still says running; its pid is gone: the reader says so.
            assert (info["state"], info["writer_alive"]) == ("gone", False)
            assert info["history_points"] == 2 and info["last_write_unix_ms"] > 0
            assert view.snapshot()["time_ns"] == 10 * 10**9
    finally:
        closing.stop()
        killed.stop()


def test_what_is_not_a_state_file_is_refused_precisely(tmp_path):
    with pytest.raises(weighted.ConfigFileError, match="missing.state"):
        weighted.attach(tmp_path / "missing.state")
    junk = tmp_path / "junk.state"
    junk.write_bytes(b"not a state file at all" * 300)
    with pytest.raises(weighted.StateFileFormatError, match="magic"):
        weighted.attach(junk)
    short = tmp_path / "short.state"
    short.write_bytes(b"WTSTATE\0")
    with pytest.raises(weighted.StateFileFormatError):
        weighted.attach(short)


def test_a_truncated_file_under_an_open_view_is_an_error_not_a_crash(writer, tmp_path):
    writer.send("cycle")
    with weighted.attach(writer.path) as view:
        assert view.snapshot()
        copy = tmp_path / "copy.state"
        copy.write_bytes(open(writer.path, "rb").read())
    with weighted.attach(copy) as view:
        os.truncate(copy, 8192)
        with pytest.raises(weighted.StateFileFormatError):
            view.snapshot()


def test_a_closed_view_refuses_calls(writer):
    view = weighted.attach(writer.path)
    view.close()
    view.close()  # twice is fine
    assert view.closed and "closed" in repr(view)
    with pytest.raises(weighted.ClosedError):
        view.snapshot()


def test_find_state_files_lists_only_state_files_newest_first(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "sub").mkdir()
    first = Writer(tmp_path / "first.state", "first-service")
    second = Writer(tmp_path / "second.state", "second-service")
    try:
        first.send("cycle")
        # The files' write times are in milliseconds: let the wall clock pass first's.
        with weighted.attach(first.path) as view:
            written = view.info()["last_write_unix_ms"]
        while time.time_ns() // 10**6 <= written + 1:
            time.sleep(0.001)
        second.send("cycle")
        found = weighted.find_state_files(tmp_path)
        assert [os.path.basename(p) for p, _ in found] == ["second.state", "first.state"]
        assert [info["service"] for _, info in found] == ["second-service", "first-service"]
    finally:
        first.stop()
        second.stop()


def test_readers_in_threads_while_the_writer_runs(writer):
    # The binding reads without the GIL; concurrent reads of one view are serialised in the core.
    errors = []
    stop = threading.Event()
    with weighted.attach(writer.path) as view:
        def read():
            try:
                while not stop.is_set():
                    snap = view.snapshot()
                    assert set(_endpoints(snap)) == {"a", "b", "c"}
                    view.history(max_points=5)
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)
        threads = [threading.Thread(target=read) for _ in range(3)]
        for t in threads:
            t.start()
        for _ in range(20):
            writer.send("cycle")
        stop.set()
        for t in threads:
            t.join(timeout=30)
        assert errors == []
        assert view.info()["history_points"] == 20
