"""The hot path (pick, complete, cancel, report) as plain CPython methods: the same parameters,
keywords and defaults as before, Python-style argument errors, errors from the core through the
one translator, and Pick objects that stay correct when their memory is reused."""
from __future__ import annotations

import gc
import inspect
import sys

import pytest

import weighted
from weighted import _weighted

HOT = ("pick", "complete", "cancel", "report")


def totals(engine, endpoint):
    for ep in engine.snapshot()["services"][0]["endpoints"]:
        if ep["id"] == endpoint:
            return ep["totals"]
    raise AssertionError(endpoint)


def test_hot_methods_are_called_without_pybind11_dispatch():
    # Method descriptors: the interpreter calls them with no bound-method object or argument
    # tuple (docs/python.md, "Performance"). The other methods stay pybind11 functions.
    for name in HOT:
        assert type(_weighted.Service.__dict__[name]).__name__ == "method_descriptor", name
    assert type(_weighted.Service.__dict__["report_batch"]).__name__ != "method_descriptor"


def test_signatures_are_unchanged():
    sig = {name: str(inspect.signature(getattr(weighted.Service, name))) for name in HOT}
    assert sig == {
        "pick": "(self, /)",
        "complete": "(self, /, pick, latency_ms, outcome=0)",
        "cancel": "(self, /, pick)",
        "report": "(self, /, endpoint, latency_ms, outcome=0)",
    }
    assert "Chooses an endpoint" in weighted.Service.pick.__doc__


def test_keywords_defaults_and_outcome_forms(engine, svc):
    svc.complete(pick=svc.pick(), latency_ms=3.0, outcome="timeout")
    svc.complete(svc.pick(), 3.0, outcome=weighted.Outcome.HTTP_5XX)
    svc.complete(svc.pick(), latency_ms=3)  # default outcome: success
    svc.report(endpoint="a", latency_ms=1.0, outcome=2)
    svc.report(svc.key("a"), 1.0)
    svc.report("a", latency_ms=1.0, outcome="business_error")
    svc.cancel(pick=svc.pick())
    svc.cancel(svc.pick())
    counted = [totals(engine, e) for e in ("a", "b", "c")]
    assert sum(t["timeout"] for t in counted) == 2
    assert sum(t["http_5xx"] for t in counted) == 1
    assert sum(t["success"] for t in counted) == 2
    assert sum(t["business_error"] for t in counted) == 1
    assert all(ep["inflight"] == 0 for ep in engine.snapshot()["services"][0]["endpoints"])


class _Floaty:
    def __float__(self):
        return 2.5


class _Indexy:
    def __index__(self):
        return 2


@pytest.mark.parametrize("latency", [2.5, 2, True, _Floaty(), _Indexy()])
def test_latency_accepts_what_float_accepts_without_parsing(svc, latency):
    svc.report("a", latency)
    svc.complete(svc.pick(), latency)


@pytest.mark.parametrize("call,message", [
    (lambda s: s.pick(1), r"takes no arguments"),
    (lambda s: s.complete(s.pick()), r"complete\(\) missing required argument 'latency_ms'"),
    (lambda s: s.cancel(), r"cancel\(\) missing required argument 'pick'"),
    (lambda s: s.report("a", 1.0, 0, 1), r"report\(\) takes at most 3 arguments \(4 given\)"),
    (lambda s: s.report("a", 1.0, outcom=0), r"unexpected keyword argument 'outcom'"),
    (lambda s: s.report("a", 1.0, latency_ms=2.0), r"multiple values for argument 'latency_ms'"),
    (lambda s: s.report("a", "1.0"), r"latency_ms must be a number, not str"),
    (lambda s: s.complete(s.pick(), None), r"latency_ms must be a number, not NoneType"),
    (lambda s: s.report("a", 1.0, 2.5), r"outcome must be a weighted.Outcome"),
    (lambda s: s.report(1.5, 1.0), r"endpoint must be an id \(str\) or a key \(int\)"),
    (lambda s: s.complete("a", 1.0), r"expected a weighted.Pick, got str"),
    (lambda s: s.cancel(pick=None), r"expected a weighted.Pick, got NoneType"),
])
def test_bad_arguments_are_type_errors_and_record_nothing(engine, svc, call, message):
    before = engine.snapshot()
    with pytest.raises(TypeError, match=message):
        call(svc)
    after = engine.snapshot()
    assert [ep["totals"] for ep in after["services"][0]["endpoints"]] == \
        [ep["totals"] for ep in before["services"][0]["endpoints"]]


def test_core_errors_still_come_through_the_one_translator(svc):
    with pytest.raises(weighted.InvalidArgumentError, match="latency_ms must be finite"):
        svc.report("a", float("nan"))
    with pytest.raises(weighted.InvalidArgumentError, match="got 99"):
        svc.complete(svc.pick(), 1.0, 99)
    with pytest.raises(weighted.NotFoundError, match='no endpoint "zz"'):
        svc.report("zz", 1.0)
    with pytest.raises(weighted.InvalidArgumentError, match="NUL byte at offset 1"):
        svc.report("a\0b", 1.0)
    with pytest.raises(weighted.InvalidArgumentError, match=r"in \[0, 2\*\*64\)"):
        svc.report(-1, 1.0)
    # Not valid UTF-8, so no endpoint can have this id (was a RuntimeError from pybind11's cast).
    with pytest.raises(UnicodeEncodeError):
        svc.report("a\udcff", 1.0)


def test_an_instance_whose_init_never_ran_raises_instead_of_crashing():
    for cls in (_weighted.Service, weighted.Service):
        raw = cls.__new__(cls)
        with pytest.raises(TypeError, match=r"__init__\(\) was not called"):
            raw.pick()
        with pytest.raises(TypeError, match=r"__init__\(\) was not called"):
            raw.report("a", 1.0)


def test_a_method_refuses_a_self_of_another_type(engine):
    with pytest.raises(TypeError, match="doesn't apply to a 'Engine' object"):
        _weighted.Service.pick(engine)


def test_python_side_multiple_inheritance_takes_pybind11s_path():
    # Two pybind11 bases give the instance pybind11's non-simple layout.
    class Both(_weighted.Engine, _weighted.Service):
        def __init__(self):
            _weighted.Engine.__init__(self, "{}", _weighted.CLOCK_MANUAL, False)
            _weighted.Service.__init__(self, self, "both")

    both = Both()
    both._set_endpoints([("q", 1.0)])
    p = both.pick()
    assert p.endpoint == "q"
    both.complete(p, 1.0)
    both.report("q", 1.0)
    both.close()


def test_reused_picks_carry_their_own_values(engine):
    svc = engine.service("many")
    ids = [f"e{i}" for i in range(20)]
    svc.set_endpoints({i: 1 + n for n, i in enumerate(ids)})
    held = [svc.pick() for _ in range(300)]  # more than the free list holds
    for p in held:
        assert p.endpoint == ids[p.index] and p.epoch == 1 and p.tracked
    del held
    gc.collect()
    svc.set_endpoints({i: 1 for i in reversed(ids)})  # epoch 2, new positions
    for _ in range(300):
        p = svc.pick()
        assert p.epoch == 2 and p.endpoint == list(reversed(ids))[p.index]
        assert p.key == svc.key(p.endpoint)
        svc.cancel(p)


def test_pick_and_drop_leaks_no_references(svc):
    probe = svc.pick()
    endpoint = probe.endpoint
    svc.cancel(probe)
    del probe
    before = sys.getrefcount(endpoint)
    for _ in range(10_000):
        svc.cancel(svc.pick())
    assert sys.getrefcount(endpoint) == before


def test_call_paths_after_the_context_manager_rewrite(engine, svc):
    def total(kind):
        return sum(totals(engine, e)[kind] for e in ("a", "b", "c"))

    with svc.call() as c:  # plain exit: success, the block's wall time
        pass
    assert total("success") == 1
    with pytest.raises(ValueError):
        with svc.call() as c:
            c.set_outcome("business_error")  # an explicit outcome wins over the classifier
            raise ValueError
    assert total("business_error") == 1
    with pytest.raises(TimeoutError):
        with svc.call() as c:
            raise TimeoutError
    assert total("timeout") == 1
    with pytest.raises(ValueError):
        with svc.call() as c:
            c.cancel()  # cancelled, even with an exception: nothing recorded
            raise ValueError
    with svc.call() as c:
        c.latency_ms = 7.5
        c.set_http_status(502)
    assert total("http_5xx") == 1
    # The endpoint leaves the set during the call: counted stale by the core, not raised.
    with svc.call() as c:
        svc.set_endpoints({e: 100 for e in "abc" if e != c.endpoint})
    with svc.call() as c:
        svc.set_endpoints({e: 100 for e in "abc" if e != c.endpoint})
        c.cancel()
    assert engine.snapshot()["services"][0]["stale_reports"] >= 1
    assert sum(ep["inflight"] for ep in engine.snapshot()["services"][0]["endpoints"]) == 0


def test_a_lost_tracked_pick_expires_and_flags_show_only_the_documented_bits(engine):
    svc = engine.service("lost")
    svc.set_endpoints({"a": 1})
    lost = svc.pick()
    assert lost.tracked
    inflight = lambda: engine.snapshot()["services"][-1]["endpoints"][0]["inflight"]
    assert inflight() == 1
    engine.advance(5)  # one controller cycle: still in flight
    assert inflight() == 1
    engine.advance(5)  # the second cycle after the pick: its count expires
    assert inflight() == 0
    svc.cancel(lost)  # finishing it late takes nothing from newer picks
    fresh = svc.pick()
    assert fresh.flags == weighted_flags_tracked(), "picked in cycle 2: its cycle is in the ticket"
    assert "flags=4)" in repr(fresh)
    assert inflight() == 1
    svc.cancel(fresh)
    assert inflight() == 0


def weighted_flags_tracked() -> int:
    return 1 << 2  # WT_PICK_TRACKED; the engine's cycle rides in wt_pick.ticket, never in flags
