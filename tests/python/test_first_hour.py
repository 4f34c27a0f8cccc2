"""What a new user runs into in their first hour: a slow call, a pick finished twice, a huge or
odd config file, arguments of the wrong kind, names with control characters. Each case raises
one precise exception (or none, where the caller's own result must win) and leaves the engine's
counts exactly as the documentation says."""
from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time

import pytest

import weighted
from helpers import endpoint_view


def _service(engine, name="orders", endpoints=("a",)):
    s = engine.service(name)
    s.set_endpoints(list(endpoints))
    return s


def _inflight(engine, endpoint="a"):
    return endpoint_view(engine, "orders", endpoint)["inflight"]


@pytest.fixture
def slow_engine():
    e = weighted.Engine.from_dict({"limits": {"max_latency_ms": 100}}, clock="manual")
    yield e
    e.close()


# -- a call slower than limits.max_latency_ms ---------------------------------------------------

def test_a_call_slower_than_the_latency_limit_is_recorded_at_the_limit(slow_engine):
    s = _service(slow_engine)
    with s.call():
        time.sleep(0.15)
    view = endpoint_view(slow_engine, "orders", "a")
    assert view["totals"]["success"] == 1, "recorded with its own outcome, not turned into an error"
    assert view["inflight"] == 0
    slow_engine.advance(5)  # one controller cycle: the window now holds the call
    p99 = endpoint_view(slow_engine, "orders", "a")["window"]["p99_ms"]
    assert p99 == pytest.approx(100, rel=0.05)


def test_a_slow_call_keeps_the_callers_exception_and_its_classification(slow_engine):
    s = _service(slow_engine)
    with pytest.raises(KeyError, match="mine") as info:
        with s.call():
            time.sleep(0.15)
            raise KeyError("mine")
    assert info.value.__context__ is None and info.value.__cause__ is None
    view = endpoint_view(slow_engine, "orders", "a")
    assert view["totals"]["http_5xx"] == 1 and view["inflight"] == 0


def test_a_slow_tracked_function_returns_its_result(slow_engine):
    s = _service(slow_engine)

    @s.tracked
    def fetch(endpoint):
        time.sleep(0.15)
        return f"from {endpoint}"

    @s.tracked
    async def afetch(endpoint):
        await asyncio.sleep(0.15)
        return f"async from {endpoint}"

    assert fetch() == "from a"
    assert asyncio.run(afetch()) == "async from a"
    view = endpoint_view(slow_engine, "orders", "a")
    assert view["totals"]["success"] == 2 and view["inflight"] == 0


def test_a_measured_latency_above_the_limit_is_clamped_too(slow_engine):
    s = _service(slow_engine)
    with s.call() as call:
        call.latency_ms = 250.0
    assert endpoint_view(slow_engine, "orders", "a")["totals"]["success"] == 1


def test_the_clamp_follows_a_reload_of_the_limit(slow_engine):
    s = _service(slow_engine)
    slow_engine.reload({"limits": {"max_latency_ms": 20}})
    with s.call() as call:
        call.latency_ms = 50.0
    slow_engine.reload({"limits": {"max_latency_ms": 1000}})
    with s.call() as call:
        call.latency_ms = 500.0
    slow_engine.advance(5)
    view = endpoint_view(slow_engine, "orders", "a")
    assert view["totals"]["success"] == 2 and view["window"]["p99_ms"] > 20


def test_a_call_whose_outcome_is_refused_still_releases_its_pick(slow_engine):
    # A caller's own bug (an outcome the engine does not know) is raised when the block itself
    # succeeded, and the pick's in-flight count is given back rather than left to expire.
    s = _service(slow_engine)
    with pytest.raises(weighted.InvalidArgumentError, match="outcome must be a wt_outcome"):
        with s.call() as call:
            call.set_outcome(17)
    assert _inflight(slow_engine) == 0
    # With an exception of its own in flight, that one reaches the caller, not ours.
    with pytest.raises(KeyError):
        with s.call() as call:
            call.set_outcome(17)
            raise KeyError("mine")
    assert _inflight(slow_engine) == 0


# -- a pick is finished once ----------------------------------------------------------------------

def test_a_pick_is_completed_at_most_once(engine):
    s = _service(engine)
    p = s.pick()
    assert not p.finished
    s.complete(p, 1.0)
    assert p.finished
    for again in (lambda: s.complete(p, 1.0), lambda: s.cancel(p)):
        before = engine.snapshot()
        with pytest.raises(weighted.InvalidArgumentError,
                           match=r"this pick of \"a\" was already finished \(complete\)"):
            again()
        assert engine.snapshot() == before
    assert endpoint_view(engine, "orders", "a")["totals"]["success"] == 1


def test_a_cancelled_pick_cannot_be_completed_or_cancelled_again(engine):
    s = _service(engine)
    first, second = s.pick(), s.pick()
    assert _inflight(engine) == 2
    s.cancel(first)
    with pytest.raises(weighted.InvalidArgumentError, match=r"already finished \(cancel\)"):
        s.cancel(first)
    with pytest.raises(weighted.InvalidArgumentError, match=r"already finished \(cancel\)"):
        s.complete(first, 1.0)
    assert _inflight(engine) == 1, "the second pick is still in flight"
    s.complete(second, 1.0)
    assert _inflight(engine) == 0


def test_a_refused_complete_leaves_the_pick_open(engine):
    s = _service(engine)
    p = s.pick()
    with pytest.raises(weighted.InvalidArgumentError, match="latency_ms"):
        s.complete(p, -1.0)
    assert not p.finished
    s.complete(p, 1.0)
    assert endpoint_view(engine, "orders", "a")["totals"]["success"] == 1


def test_a_pick_whose_endpoint_left_is_finished_by_its_stale_complete(engine):
    s = _service(engine, endpoints=("a", "b"))
    p = s.pick()
    s.set_endpoints(["c"])
    with pytest.raises(weighted.StaleEndpointError):
        s.complete(p, 1.0)
    assert p.finished
    with pytest.raises(weighted.InvalidArgumentError, match="already finished"):
        s.complete(p, 1.0)
    assert engine.snapshot()["services"][0]["stale_reports"] == 1, "counted stale once"


def test_a_with_block_that_finished_its_pick_itself_says_so(engine):
    s = _service(engine)
    with pytest.raises(weighted.InvalidArgumentError, match="already finished"):
        with s.call() as call:
            s.complete(call.pick, 1.0)
    assert endpoint_view(engine, "orders", "a")["totals"]["success"] == 1


# -- config files are read with a bound ---------------------------------------------------------

MAX_BYTES = 1 << 20  # the built-in limits.max_config_bytes


def test_an_oversized_config_file_is_refused_by_every_reader(tmp_path, engine):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * MAX_BYTES + b"{}")
    shape = r'"{}" is more than limits\.max_config_bytes = 1048576 bytes'.format(big)
    with pytest.raises(weighted.LimitError, match="validate_config_file: " + shape):
        weighted.validate_config_file(big)
    with pytest.raises(weighted.LimitError, match="Engine.from_file: " + shape):
        weighted.Engine.from_file(big, clock="manual")
    with pytest.raises(weighted.LimitError, match="reload_from_file: " + shape):
        engine.reload_from_file(big)
    exact = tmp_path / "exact.json"
    exact.write_bytes(b" " * (MAX_BYTES - 2) + b"{}")
    weighted.validate_config_file(exact)  # the limit itself is allowed


def test_reload_from_file_reads_with_the_engines_own_limit(tmp_path, engine):
    engine.reload({"limits": {"max_config_bytes": 16384}})
    doc = tmp_path / "doc.json"
    doc.write_bytes(b" " * 16384 + b"{}")
    with pytest.raises(weighted.LimitError, match="limits.max_config_bytes = 16384 bytes"):
        engine.reload_from_file(doc)


def test_an_endless_config_file_is_refused_without_reading_it_whole():
    # In a child whose address space is capped: an unbounded read dies there, not in pytest.
    script = textwrap.dedent("""
        import resource, weighted
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        for call in (lambda: weighted.validate_config_file("/dev/zero"),
                     lambda: weighted.Engine.from_file("/dev/zero", clock="manual")):
            try:
                call()
            except weighted.LimitError as e:
                print(type(e).__name__, e)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        'LimitError validate_config_file: "/dev/zero" is more than limits.max_config_bytes = '
        '1048576 bytes',
        'LimitError Engine.from_file: "/dev/zero" is more than limits.max_config_bytes = '
        '1048576 bytes']


def test_config_file_errors_name_the_file_and_the_call(tmp_path):
    with pytest.raises(weighted.ConfigFileError,
                       match=r'Engine.from_file: cannot open ".*/missing.json": No such file'):
        weighted.Engine.from_file(tmp_path / "missing.json")
    with pytest.raises(weighted.ConfigFileError, match=r"cannot read .*: it is a directory"):
        weighted.validate_config_file(tmp_path)
    with pytest.raises(weighted.InvalidArgumentError, match="config path contains a NUL byte"):
        weighted.validate_config_file("/tmp/x\0.json")


# -- the whole text reaches the core ------------------------------------------------------------

NUL_CONFIG = '{"seed":1}\0{"seed":-1}'


def _nul_entry_points(tmp_path):
    path = tmp_path / "nul.json"
    path.write_bytes(NUL_CONFIG.encode())
    live = weighted.Engine(clock="manual")
    return live, [
        ("Engine(str)", lambda: weighted.Engine(NUL_CONFIG, clock="manual")),
        ("Engine(bytes)", lambda: weighted.Engine(NUL_CONFIG.encode(), clock="manual")),
        ("Engine.from_json", lambda: weighted.Engine.from_json(NUL_CONFIG, clock="manual")),
        ("Engine.from_file", lambda: weighted.Engine.from_file(path, clock="manual")),
        ("validate_config", lambda: weighted.validate_config(NUL_CONFIG)),
        ("validate_config(bytes)", lambda: weighted.validate_config(NUL_CONFIG.encode())),
        ("validate_config_file", lambda: weighted.validate_config_file(path)),
        ("resolve_config", lambda: weighted.resolve_config(NUL_CONFIG)),
        ("reload", lambda: live.reload(NUL_CONFIG)),
        ("reload(bytes)", lambda: live.reload(NUL_CONFIG.encode())),
        ("reload_from_file", lambda: live.reload_from_file(path)),
    ]


def test_a_config_with_bytes_after_a_nul_is_refused_by_every_entry_point(tmp_path):
    live, calls = _nul_entry_points(tmp_path)
    try:
        for name, call in calls:
            with pytest.raises(weighted.ConfigParseError, match="a NUL byte at offset 10"):
                call()
        assert live.snapshot()["profile"] == "default"
    finally:
        live.close()


# -- arguments of the wrong kind ----------------------------------------------------------------

def test_from_file_needs_a_path():
    with pytest.raises(TypeError, match=r"Engine.from_file: path must be a str, bytes or "
                                        r"os.PathLike, not NoneType"):
        weighted.Engine.from_file(None)
    with pytest.raises(TypeError, match="validate_config_file: path must be"):
        weighted.validate_config_file(None)


def test_config_bytes_that_are_not_utf8_are_a_parse_error():
    for call in (lambda: weighted.Engine(b"\xff", clock="manual"),
                 lambda: weighted.validate_config(b'{"$schema": "\xff"}')):
        with pytest.raises(weighted.ConfigParseError, match=r"line 1, column \d+") as info:
            call()
        assert "\\xff" in info.value.message, "the byte is shown, not decoded"


def test_config_text_with_a_lone_surrogate_is_a_parse_error():
    with pytest.raises(weighted.ConfigParseError, match=r"line 1, column \d+: .*ill-formed UTF-8"):
        weighted.validate_config('{"$schema": "\ud800"}')


def test_advance_takes_a_number_of_seconds(engine):
    for bad in ("1", None, [1]):
        with pytest.raises(TypeError, match=r"advance: seconds must be a number \(int or float\)"):
            engine.advance(bad)
    with pytest.raises(weighted.InvalidArgumentError,
                       match=r"advance: seconds must be in \[0, 9223372036\.854775807\] \(the "
                             r"manual clock counts int64 nanoseconds\), got 1000000000000\.0"):
        engine.advance(1e12)
    with pytest.raises(TypeError, match=r"advance_ns: delta_ns must be an int, not float"):
        engine.advance_ns(1.5)
    with pytest.raises(weighted.InvalidArgumentError,
                       match=r"advance_ns: delta_ns must be an int in \[0, 2\*\*63\), got 10{30}"):
        engine.advance_ns(10 ** 30)
    assert engine.now_ns() == 0


def test_a_bool_is_not_an_outcome(engine):
    s = _service(engine)
    before = engine.snapshot()
    for call in (lambda: s.complete(s.pick(), 1.0, True), lambda: s.report("a", 1.0, True),
                 lambda: s.report_batch(["a"], [1.0], True)):
        with pytest.raises(TypeError, match="outcome must be a weighted.Outcome, an int or its "
                                            "name, not bool"):
            call()
    after = engine.snapshot()
    for view in (before, after):
        for ep in view["services"][0]["endpoints"]:
            ep.pop("inflight")  # the refused completes' picks are still in flight
    assert after == before


def test_a_weight_must_be_a_number_and_its_error_names_the_endpoint(engine):
    s = engine.service("orders")
    with pytest.raises(weighted.InvalidArgumentError,
                       match=r'set_endpoints: endpoints\[1\] \("b"\): base_weight must be a '
                             r"number \(int or float\), not the str '100'"):
        s.set_endpoints({"a": 1, "b": "100"})
    with pytest.raises(TypeError, match=r'endpoints\[0\] \("a"\): base_weight must be a number '
                                        r"\(int or float\), not NoneType"):
        s.set_endpoints({"a": None})
    assert engine.snapshot()["services"][0]["endpoints"] == []


def test_report_batch_records_the_valid_entries_around_an_unknown_id(engine):
    s = _service(engine, endpoints=("a", "b"))
    with pytest.raises(weighted.NotFoundError,
                       match=r'entry 1: .*no endpoint "zz" in service "orders"') as info:
        s.report_batch(["a", "zz", "b", "a"], [1.0, 1.0, 1.0, -1.0])
    not_found, invalid = weighted.NotFoundError.status, weighted.InvalidArgumentError.status
    assert info.value.entry_statuses == [0, not_found, 0, invalid]
    assert info.value.recorded == 2
    assert endpoint_view(engine, "orders", "a")["totals"]["success"] == 1
    assert endpoint_view(engine, "orders", "b")["totals"]["success"] == 1


def test_report_batch_refuses_a_bad_outcome_name_for_its_entry_only(engine):
    s = _service(engine, endpoints=("a", "b"))
    with pytest.raises(weighted.InvalidArgumentError,
                       match=r"entry 1: outcome 'bogus' is not one of success") as info:
        s.report_batch(["a", "b", "a"], [1.0, 1.0, 1.0], ["success", "bogus", "timeout"])
    assert info.value.entry_statuses == [0, weighted.InvalidArgumentError.status, 0]
    assert info.value.recorded == 2
    totals = endpoint_view(engine, "orders", "a")["totals"]
    assert totals["success"] == 1 and totals["timeout"] == 1
    assert endpoint_view(engine, "orders", "b")["totals"]["success"] == 0


def test_a_closed_engine_is_not_a_context_manager():
    e = weighted.Engine(clock="manual")
    e.close()
    with pytest.raises(weighted.ClosedError, match="engine is closed"):
        with e:
            pass


@pytest.mark.parametrize("call,cls,message", [
    (lambda e: e.service(None), TypeError, r"Service: name must be a str, not NoneType"),
    (lambda e: e.service(["x"]), TypeError, r"Service: name must be a str, not list"),
    (lambda e: e.service("\ud800"), TypeError,
     r"Service: name must be valid Unicode \(it is sent as UTF-8\): '\\ud800' has a lone "
     r"surrogate at index 0"),
    (lambda e: e.service("orders").key("\ud800"), TypeError,
     r"key: endpoint_id must be valid Unicode .* at index 0"),
    (lambda e: e.service("orders").key(None), TypeError, r"key: endpoint_id must be a str"),
    (lambda e: e.service("orders").endpoint_id(None), TypeError,
     r"endpoint_id: key must be an int, not NoneType"),
    (lambda e: e.service("orders").report_resources(None, cpu=0.5), TypeError,
     r"report_resources: endpoint must be a str, not NoneType"),
    (lambda e: e.service("orders").report_resources("a", cpu="high"), TypeError,
     r"report_resources: cpu must be a number, not str"),
    (lambda e: e.service("orders").report_batch(None, []), TypeError,
     r"report_batch: endpoints must be a sequence"),
    (lambda e: e.service("orders").report_batch(["a"], ["slow"]), TypeError,
     r"report_batch: latencies_ms\[0\] must be a number, not str"),
    (lambda e: e.advance(1e12), weighted.InvalidArgumentError, r"advance: seconds must be in \["),
])
def test_no_pybind11_argument_text_reaches_the_user(engine, call, cls, message):
    engine.service("orders").set_endpoints(["a"])
    with pytest.raises(cls, match=message) as info:
        call(engine)
    assert "incompatible" not in str(info.value) and "Invoked with" not in str(info.value)


# -- caller-given strings in messages are escaped -----------------------------------------------

def test_names_in_messages_are_escaped_not_copied_raw(engine, tmp_path):
    s = engine.service("evil\nWARN forged")
    s.set_endpoints(["a"])
    s.remove()
    with pytest.raises(weighted.ClosedError) as closed:
        s.pick()
    with pytest.raises(weighted.InvalidArgumentError) as outcome:
        engine.service("orders").report("x", 1.0, "bogus\nWARN forged")
    with pytest.raises(weighted.ConfigFileError) as missing:
        weighted.validate_config_file(tmp_path / "a\nWARN forged.json")
    for info in (closed, outcome, missing):
        message = info.value.message
        assert "\n" not in message and "\\nWARN forged" in message, message
    assert closed.value.message.startswith('service "evil\\nWARN forged" is closed')
