"""The objects the engine holds for Python: each endpoint's id object (the user pointer of its spec,
returned with every pick of it) and the event callback. Picks hand back the caller's own id
object, even while other threads replace the set; every reference the engine took is given back
once no pick can return it (a replaced set, a removed service, a closed engine)."""
from __future__ import annotations

import sys
import threading
import time
import weakref

import pytest

import weighted
from weighted import _weighted


def fresh_ids(tag, n):
    # Built at run time, so not interned: the test's references and the engine's are the only ones.
    return ["".join([tag, "-", str(i)]) for i in range(n)]


def refcounts(objects):
    return [sys.getrefcount(o) for o in objects]


def test_a_pick_racing_set_changes_names_an_endpoint_of_the_set_it_was_picked_from():
    # A real clock: the controller thread frees replaced sets too, without the GIL.
    engine = weighted.Engine.from_dict({"seed": 3, "controller": {"interval_ms": 10}})
    svc = engine.service("churn")
    rounds = 300
    sets = [fresh_ids(f"set{k}", 4 + k % 7) for k in range(rounds + 1)]
    baseline = [refcounts(ids) for ids in sets]
    events = []
    engine.on_event(events.append)  # endpoint events are delivered on the churning thread
    svc.set_endpoints(sets[0])
    first = svc.pick()
    epoch0 = first.epoch
    svc.cancel(first)
    del first
    stop = threading.Event()
    wrong, epochs, errors = [], set(), []

    def churn():
        try:
            for k in range(1, rounds + 1):
                svc.set_endpoints(sets[k])
                time.sleep(0.001)  # let the pickers use this set too, not only race its change
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
        finally:
            stop.set()

    def picker():
        try:
            while not stop.is_set():
                p = svc.pick()
                k = p.epoch - epoch0
                if not (0 <= k <= rounds and p.endpoint is sets[k][p.index]):
                    wrong.append((p.epoch, p.index, p.endpoint))
                epochs.add(p.epoch)
                try:
                    svc.cancel(p)
                except weighted.StaleEndpointError:
                    pass  # the set moved on meanwhile
        except Exception as e:  # pragma: no cover
            errors.append(e)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, so picks land between set changes
    try:
        threads = [threading.Thread(target=churn)] + [threading.Thread(target=picker)
                                                      for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
            assert not t.is_alive()
    finally:
        sys.setswitchinterval(interval)
    assert errors == [] and wrong == []
    assert len(epochs) > 10, "the picks should have seen many sets"
    assert any(e.type == weighted.EventType.ENDPOINT_ADDED for e in events)
    engine.close()
    # Every set's id objects were given back: the last set's at close, the others when replaced.
    assert [refcounts(ids) for ids in sets] == baseline


def test_every_registered_id_object_is_released_after_replace_remove_and_close(engine):
    svc = engine.service("s")
    first, second, third = fresh_ids("first", 5), fresh_ids("second", 3), fresh_ids("third", 4)
    base = {id(o): sys.getrefcount(o) for ids in (first, second, third) for o in ids}

    def extra(ids):
        return [sys.getrefcount(o) - base[id(o)] for o in ids]

    svc.set_endpoints({i: 10 for i in first})
    assert extra(first) == [1] * 5  # the engine's one reference each
    p = svc.pick()
    held = [1] * 5
    held[p.index] = 2  # and the pick's
    assert extra(first) == held
    assert p.endpoint is first[p.index]
    svc.cancel(p)
    del p
    assert extra(first) == [1] * 5
    svc.set_endpoints(second + first[:1])  # replaced: the old set's references are returned
    assert extra(first) == [1, 0, 0, 0, 0] and extra(second) == [1, 1, 1]
    other = engine.service("other")
    other.set_endpoints(third)
    assert extra(third) == [1] * 4
    other.remove()
    assert extra(third) == [0] * 4
    with pytest.raises(weighted.InvalidArgumentError):
        svc.set_endpoints([(second[0], 1), ("bad", -1)])  # refused: the engine keeps nothing
    assert extra(second) == [1, 1, 1]
    engine.close()
    assert extra(first) + extra(second) + extra(third) == [0] * 12


def test_the_event_callable_is_released_when_replaced_and_at_close():
    class Listener:
        def __call__(self, raw):
            pass

    engine = weighted.Engine(clock="manual")
    a, b = Listener(), Listener()
    ref_a, ref_b = weakref.ref(a), weakref.ref(b)
    engine._set_event_callback(a)
    engine._set_event_callback(b)
    del a, b
    assert ref_a() is None and ref_b() is not None
    engine.reload({})  # delivered to b
    engine.close()
    assert ref_b() is None


def test_an_engine_dropped_at_exit_with_sets_and_a_callback_does_not_crash(tmp_path):
    # The interpreter exits while real-clock engines still hold id objects and a callback: the
    # atexit hook closes one, the other is destroyed during finalization (its references leak).
    script = tmp_path / "exit.py"
    script.write_text(
        "import weighted, weighted._engine\n"
        "closed_by_atexit = weighted.Engine.from_dict({'controller': {'interval_ms': 10}})\n"
        "closed_by_atexit.on_event(print)\n"
        "closed_by_atexit.service('s').set_endpoints(['a', 'b'])\n"
        "left = weighted.Engine.from_dict({'controller': {'interval_ms': 10}})\n"
        "left.on_event(lambda e: None)\n"
        "left.service('t').set_endpoints(['c', 'd'])\n"
        "weighted._engine._live_engines.discard(left)  # out of the hook's reach\n"
        "print('done')\n")
    import subprocess
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "done" in run.stdout


# -- Service.remove() -------------------------------------------------------------------------

def test_remove_closes_every_object_of_the_service_and_a_new_one_can_take_its_name(engine, svc):
    twin = weighted.Service(engine, "orders")  # a second Python object for the same service
    p = svc.pick()
    svc.remove()
    assert svc.closed and twin.closed
    for call in (svc.pick, twin.pick, lambda: svc.complete(p, 1.0), lambda: svc.report("a", 1.0),
                 lambda: svc.report_batch(["a"], [1.0]), lambda: svc.set_endpoints(["a"]),
                 lambda: svc.key("a"), lambda: svc.endpoint_id(p.key), svc.remove):
        with pytest.raises(weighted.ClosedError, match='service "orders" is closed: remove'):
            call()
    removed = [e for e in engine.events() if e.type == weighted.EventType.SERVICE_REMOVED]
    assert [(e.service, e.endpoint, e.name) for e in removed] == [("orders", "", "service_removed")]
    assert [s["name"] for s in engine.snapshot()["services"]] == []
    again = engine.service("orders")
    assert again is not svc and not again.closed
    with pytest.raises(weighted.NoEndpointError):
        again.pick()  # a new, empty service
    engine.close()
    with pytest.raises(weighted.ClosedError, match="engine is closed"):
        again.remove()


def test_remove_from_the_engines_own_callback_is_refused_and_another_engines_may_remove(engine):
    # The engine delivers events one at a time: a removal raising its own event from inside a
    # callback would wait for itself.
    svc = engine.service("s")
    other_engine = weighted.Engine(clock="manual")
    elsewhere = other_engine.service("elsewhere")
    elsewhere.set_endpoints(["x"])
    refused = []

    def on_event(event):
        if event.type in (weighted.EventType.ENDPOINT_ADDED, weighted.EventType.CONFIG_RELOADED):
            try:
                svc.remove()
            except weighted.InvalidArgumentError as e:
                refused.append((event.name, str(e)))
            if not elsewhere.closed:
                elsewhere.remove()  # another engine's service: nothing of this engine waits

    engine.on_event(on_event)
    svc.set_endpoints(["a"])  # endpoint_added is delivered inside this call, on this thread
    engine.reload({})
    assert [name for name, _ in refused] == ["endpoint_added", "config_reloaded"]
    assert 'inside the engine\'s own event callback (service "s")' in refused[0][1]
    assert not svc.closed and elsewhere.closed
    assert svc.pick().endpoint == "a"
    other_engine.close()


def test_remove_while_other_threads_use_the_service_raises_closed_and_never_crashes(engine):
    svc = engine.service("busy")
    svc.set_endpoints(["a", "b"])
    started = threading.Barrier(4)
    outcomes = []

    def worker():
        started.wait()
        try:
            while True:
                svc.report_batch(["a"] * 500, [1.0] * 500)
                svc.set_endpoints(["a", "b"])
                svc.cancel(svc.pick())
        except weighted.ClosedError:
            outcomes.append("closed")
        except Exception as e:  # pragma: no cover
            outcomes.append(repr(e))

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    started.wait()
    svc.remove()
    for t in threads:
        t.join(timeout=60)
    assert outcomes == ["closed"] * 3


def test_names_come_from_the_core_and_the_enums_agree_with_it():
    for o in weighted.Outcome:
        assert _weighted.outcome_name(o) == o.name.lower()
    assert _weighted.outcome_name(len(weighted.Outcome)) is None
    for t in weighted.EventType:
        assert _weighted.event_type_name(t) == t.name.lower()
    assert _weighted.event_type_name(0) is None
    assert _weighted.event_type_name(max(weighted.EventType) + 1) is None
    from weighted import _errors
    assert {s: n for s, n in _errors.STATUS_NAMES.items() if s >= 0} == {
        s: _weighted.status_name(s) for s in range(128)
        if _weighted.status_name(s) != "WT_UNKNOWN_STATUS"}
    for status, cls in _errors._CLASSES.items():
        assert (cls.status, cls.status_name) == (status, _errors.STATUS_NAMES[status])
    assert weighted.Event(99, 0, "s", "", 0, 0).name == "event_99"


def _left_by_raising_init(make, error):
    """The object whose __init__ raised, as a debugger or a traceback walker finds it in the
    frame of that __init__."""
    with pytest.raises(error) as info:
        make()
    tb = info.value.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "__init__" and "self" in frame.f_locals:
            return frame.f_locals["self"]
        tb = tb.tb_next
    raise AssertionError("no __init__ frame in the traceback")


def test_an_object_whose_init_raised_raises_typeerror_on_use_instead_of_crashing(engine):
    half_engine = _left_by_raising_init(lambda: weighted.Engine("{bad", clock="manual"),
                                        weighted.ConfigError)
    half_service = _left_by_raising_init(lambda: weighted.Service(engine, ""), weighted.WeightedError)
    not_created = r"__init__\(\) was not called or did not complete"
    for call in (lambda: repr(half_engine), lambda: half_engine.closed, half_engine.now_ns,
                 half_engine.close, lambda: half_service.name, half_service.remove):
        with pytest.raises(TypeError, match=not_created):
            call()
    # The engine the test holds is untouched by the failed Service.
    assert not engine.closed


def test_every_binding_method_refuses_an_instance_never_initialised_and_a_foreign_self(engine):
    for cls, attrs in ((_weighted.Engine, ("closed", "clock_mode")),
                       (_weighted.Service, ("closed", "name")),
                       (_weighted.Monitor, ("closed",))):
        raw = cls.__new__(cls)
        for attr in attrs:
            with pytest.raises(TypeError, match=r"__init__\(\) was not called"):
                getattr(raw, attr)
        with pytest.raises(TypeError):
            raw.close() if hasattr(raw, "close") else raw.remove()
    with pytest.raises(TypeError, match="expected a"):
        _weighted.Service.closed.fget(engine)
