"""Bad input: each case raises a precise exception carrying the core's message, and leaves the
engine's state exactly as it was (the snapshot is unchanged)."""
from __future__ import annotations

import math

import pytest

import weighted
from weighted import _errors


@pytest.mark.parametrize("status,cls,name", [
    (1, weighted.InvalidArgumentError, "WT_ERR_INVALID_ARGUMENT"),
    (2, weighted.ConfigParseError, "WT_ERR_CONFIG_PARSE"),
    (3, weighted.ConfigInvalidError, "WT_ERR_CONFIG_INVALID"),
    (4, weighted.NotFoundError, "WT_ERR_NOT_FOUND"),
    (5, weighted.ConfigFileError, "WT_ERR_IO"),
    (6, weighted.NoEndpointError, "WT_ERR_NO_ENDPOINT"),
    (7, weighted.LimitError, "WT_ERR_LIMIT"),
    (8, weighted.WrongClockError, "WT_ERR_WRONG_CLOCK"),
    (9, weighted.StaleEndpointError, "WT_ERR_STALE"),
    (10, weighted.OutOfMemoryError, "WT_ERR_NO_MEMORY"),
    (11, weighted.DuplicateEndpointError, "WT_ERR_DUPLICATE"),
    (99, weighted.InternalError, "WT_ERR_INTERNAL"),
    (-1, weighted.ClosedError, "CLOSED"),
])
def test_every_status_maps_to_one_class(status, cls, name):
    exc = _errors.from_status(status, "the message")
    assert type(exc) is cls and isinstance(exc, weighted.WeightedError)
    assert (exc.status, exc.status_name, str(exc)) == (status, name, "the message")
    if status >= 0:
        assert weighted._weighted.status_name(status) == name
    assert issubclass(weighted.ConfigParseError, weighted.ConfigError)
    assert issubclass(weighted.ConfigInvalidError, weighted.ConfigError)


def test_unknown_status_is_the_base_class():
    exc = _errors.from_status(1234, "new")
    assert type(exc) is weighted.WeightedError and exc.status_name == "WT_UNKNOWN_STATUS"


@pytest.fixture
def setup():
    e = weighted.Engine.from_dict({"seed": 3, "limits": {"max_endpoints_per_service": 4,
                                                         "max_services": 3}}, clock="manual")
    s = e.service("orders")
    s.set_endpoints({"a": 100, "b": 100})
    for _ in range(5):
        s.report("a", 10.0, "success")
    e.advance(5)
    list(e.events())
    yield e, s
    e.close()


_long = "x" * 257

# (name, call(engine, service), exception class, regex on the core's message)
CASES = [
    ("endpoint weight zero", lambda e, s: s.set_endpoints({"a": 0}),
     weighted.InvalidArgumentError, r"specs\[0\]\.base_weight .*got 0"),
    ("endpoint weight negative", lambda e, s: s.set_endpoints({"a": -1}),
     weighted.InvalidArgumentError, r"base_weight .*got -1"),
    ("endpoint weight NaN", lambda e, s: s.set_endpoints({"a": math.nan}),
     weighted.InvalidArgumentError, r"base_weight .*nan"),
    ("endpoint weight inf", lambda e, s: s.set_endpoints({"a": math.inf}),
     weighted.InvalidArgumentError, r"base_weight .*inf"),
    ("endpoint id empty", lambda e, s: s.set_endpoints({"": 1}),
     weighted.InvalidArgumentError, r"id must be 1\.\.256 bytes, got 0"),
    ("endpoint id too long", lambda e, s: s.set_endpoints({_long: 1}),
     weighted.InvalidArgumentError, r"id must be 1\.\.256 bytes, got 257"),
    ("duplicate endpoint ids", lambda e, s: s.set_endpoints([("a", 1), ("a", 2)]),
     weighted.DuplicateEndpointError, r'"a" appears twice'),
    ("too many endpoints", lambda e, s: s.set_endpoints(list("abcde")),
     weighted.LimitError, r"max_endpoints_per_service"),
    ("service name empty", lambda e, s: e.service(""),
     weighted.InvalidArgumentError, r"name must be 1\.\.256 bytes, got 0"),
    ("service name too long", lambda e, s: e.service(_long),
     weighted.InvalidArgumentError, r"name must be 1\.\.256 bytes, got 257"),
    ("too many services", lambda e, s: [e.service(n) for n in ("s2", "s3", "s4")],
     weighted.LimitError, r"max_services"),
    ("pick on an empty service", lambda e, s: e.service("empty").pick(),
     weighted.NoEndpointError, r'service "empty" has no endpoints'),
    ("report unknown endpoint id", lambda e, s: s.report("zz", 1.0),
     weighted.NotFoundError, r'no endpoint "zz" in service "orders"'),
    ("report negative latency", lambda e, s: s.report("a", -1.0),
     weighted.InvalidArgumentError, r"latency_ms must be finite .*got -1"),
    ("report NaN latency", lambda e, s: s.report("a", math.nan),
     weighted.InvalidArgumentError, r"latency_ms .*got nan"),
    ("report infinite latency", lambda e, s: s.report("a", math.inf),
     weighted.InvalidArgumentError, r"latency_ms .*got inf"),
    ("report absurd latency", lambda e, s: s.report("a", 1e12),
     weighted.InvalidArgumentError, r"limits\.max_latency_ms"),
    ("report outcome out of range", lambda e, s: s.report("a", 1.0, 9),
     weighted.InvalidArgumentError, r"outcome must be a wt_outcome \(0\.\.4\), got 9"),
    ("report outcome bad name", lambda e, s: s.report("a", 1.0, "meh"),
     weighted.InvalidArgumentError, r"'meh' is not one of success"),
    ("resource above 1", lambda e, s: s.report_resources("a", cpu=1.5),
     weighted.InvalidArgumentError, r"cpu must be a fraction in \[0, 1\], got 1\.5"),
    ("resource negative", lambda e, s: s.report_resources("a", memory=-0.1),
     weighted.InvalidArgumentError, r"memory must be a fraction"),
    ("resource NaN", lambda e, s: s.report_resources("a", thread_pool=math.nan),
     weighted.InvalidArgumentError, r"thread_pool must be a fraction"),
    ("resources for unknown endpoint", lambda e, s: s.report_resources("zz", cpu=0.5),
     weighted.NotFoundError, r'"zz"'),
    ("advance backwards", lambda e, s: e.advance(-1),
     weighted.InvalidArgumentError, r"delta_ns must be >= 0"),
    ("advance NaN", lambda e, s: e.advance(math.nan),
     weighted.InvalidArgumentError, r"finite"),
    ("reload malformed JSON", lambda e, s: e.reload('{"window": '),
     weighted.ConfigParseError, r"line 1, column \d+"),
    ("reload unknown key", lambda e, s: e.reload({"window": {"lenght_ms": 5}}),
     weighted.ConfigInvalidError, r"/window/lenght_ms: unknown key"),
    ("reload wrong type", lambda e, s: e.reload({"controller": {"interval_ms": "5s"}}),
     weighted.ConfigInvalidError, r"/controller/interval_ms: must be an integer"),
    ("reload out of range", lambda e, s: e.reload({"controller": {"max_step": 2}}),
     weighted.ConfigInvalidError, r"/controller/max_step: must be in"),
    ("reload NaN", lambda e, s: e.reload({"panic": {"threshold": math.nan}}),
     weighted.ConfigParseError, r"line 1"),
    ("reload missing file", lambda e, s: e.reload_from_file("/nonexistent/weighted.json"),
     weighted.ConfigFileError, r"/nonexistent/weighted.json"),
    ("batch with a bad entry", lambda e, s: s.report_batch(["a", "a"], [1.0, -5.0]),
     weighted.InvalidArgumentError, r"entry 1: .*latency_ms"),
    ("batch with an unknown id", lambda e, s: s.report_batch(["a", "zz"], [1.0, 1.0]),
     weighted.NotFoundError, r'"zz"'),
    ("NUL in an endpoint id", lambda e, s: s.set_endpoints({"a\x00evil": 1}),
     weighted.InvalidArgumentError, r"endpoint id contains a NUL byte at offset 1"),
    ("NUL in a reported id", lambda e, s: s.report("a\x00", 1.0),
     weighted.InvalidArgumentError, r"endpoint id contains a NUL byte at offset 1"),
    ("NUL in a service name", lambda e, s: e.service("orders\x00x"),
     weighted.InvalidArgumentError, r"service name contains a NUL byte at offset 6"),
    ("NUL in a config path", lambda e, s: e.reload_from_file("/tmp/x\x00.json"),
     weighted.InvalidArgumentError, r"config path contains a NUL byte"),
    ("negative endpoint key", lambda e, s: s.report(-1, 1.0),
     weighted.InvalidArgumentError, r"endpoint key must be an int in \[0, 2\*\*64\), got -1"),
    ("endpoint key too large", lambda e, s: s.report_batch([2 ** 64], [1.0]),
     weighted.InvalidArgumentError, r"endpoint key must be an int"),
    ("batch lengths differ", lambda e, s: s.report_batch(["a", "b"], [1.0]),
     weighted.InvalidArgumentError, r"2 endpoints but 1 latencies"),
]


@pytest.mark.parametrize("name,call,cls,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_precisely_and_changes_nothing(setup, name, call, cls, message):
    engine, svc = setup
    before = engine.snapshot()
    if name.startswith("batch with a"):
        # The one documented partial case: valid entries are recorded, the bad one is not.
        with pytest.raises(cls, match=message) as info:
            call(engine, svc)
        assert info.value.entry_statuses == [0, cls.status] and info.value.recorded == 1
        after = engine.snapshot()
        a_before = before["services"][0]["endpoints"][0]["totals"]["success"]
        assert after["services"][0]["endpoints"][0]["totals"]["success"] == a_before + 1
        return
    with pytest.raises(cls, match=message) as info:
        call(engine, svc)
    assert info.value.message and info.value.status_name.startswith(("WT_ERR", "CLOSED"))
    after = engine.snapshot()
    # "empty" / "s2".. services may have been created before the failing call; ignore them.
    after["services"] = [x for x in after["services"] if x["name"] in ("orders",)]
    before["services"] = [x for x in before["services"] if x["name"] in ("orders",)]
    assert after == before
    assert list(engine.events()) == []


@pytest.mark.parametrize("config,cls,message", [
    ('{"a":', weighted.ConfigParseError, r"line 1, column 6"),
    ("[1]", weighted.ConfigInvalidError, r"must be an object"),
    ({"profile": "fast"}, weighted.ConfigInvalidError, r"/profile"),
    ({"bogus": 1}, weighted.ConfigInvalidError, r"/bogus: unknown key"),
    ({"rules": [{"metric": "latency_p42", "threshold": 1, "penalty": 0.1}]},
     weighted.ConfigInvalidError, r"/rules/0/metric"),
    ({"seed": math.inf}, weighted.ConfigParseError, r"line 1"),
])
def test_invalid_configs_are_refused_everywhere(config, cls, message):
    with pytest.raises(cls, match=message):
        weighted.validate_config(config)
    with pytest.raises(cls, match=message):
        weighted.Engine(config, clock="manual")


def test_oversized_config_is_a_limit_error():
    text = '{"profile": "default", "$schema": "' + "x" * (2 << 20) + '"}'
    with pytest.raises(weighted.LimitError, match="max_config_bytes|bytes"):
        weighted.validate_config(text)


def test_missing_config_file():
    with pytest.raises(weighted.ConfigFileError, match="nonexistent") as info:
        weighted.Engine.from_file("/nonexistent/weighted.json")
    assert isinstance(info.value, OSError)


def test_wrong_clock_and_clock_name():
    with weighted.Engine(clock="real") as e:
        with pytest.raises(weighted.WrongClockError, match="real clock"):
            e.advance(1)
    with pytest.raises(weighted.InvalidArgumentError, match="'real' or 'manual'"):
        weighted.Engine(clock="wall")


def test_wrong_argument_types_are_type_errors(setup):
    engine, svc = setup
    with pytest.raises(TypeError):
        svc.report(1.5, 1.0)
    with pytest.raises(TypeError):
        svc.report("a", 1.0, 2.5)
    with pytest.raises(TypeError):
        weighted.Engine(42)


def test_report_on_a_removed_endpoint_is_stale_and_counted(setup):
    engine, svc = setup
    key_b = svc.key("b")
    svc.set_endpoints({"a": 100})
    with pytest.raises(weighted.StaleEndpointError, match="not in service"):
        svc.report(key_b, 1.0)
    with pytest.raises(weighted.NotFoundError):
        svc.key("b")
    assert engine.snapshot()["services"][0]["stale_reports"] == 1


def test_use_after_close_raises_and_never_crashes(setup):
    engine, svc = setup
    p = svc.pick()
    engine.close()
    engine.close()  # twice is fine
    assert engine.closed and svc.closed
    for call in (svc.pick, lambda: svc.complete(p, 1.0), lambda: svc.report("a", 1.0),
                 lambda: svc.report_batch(["a"], [1.0]), lambda: svc.set_endpoints(["a"]),
                 lambda: svc.report_resources("a", cpu=0.1), lambda: svc.key("a"),
                 engine.snapshot, engine.prometheus, lambda: engine.advance(1), engine.now,
                 lambda: engine.service("orders"), lambda: engine.reload({}),
                 lambda: list(engine.events()), lambda: engine.on_event(print), engine.run_cycle):
        with pytest.raises(weighted.ClosedError, match="closed"):
            call()


def test_closing_from_inside_a_callback_is_refused(setup):
    engine, svc = setup
    errors = []

    def close_me(event):
        try:
            engine.close()
        except weighted.WeightedError as e:
            errors.append(e)
    engine.on_event(close_me)
    engine.reload({})  # emits config_reloaded inside the call
    engine.run_cycle()
    assert errors and "inside the engine's own event callback" in str(errors[0])
    assert not engine.closed
