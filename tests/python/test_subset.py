"""Subsetting from Python: the client id the package passes (given, or this process's own),
the subset in the snapshot, picks inside it, and refusals that say what is wrong."""
from __future__ import annotations

import os
import socket

import pytest

import weighted

ENDPOINTS = {f"10.0.0.{i}:8080": 100 for i in range(1, 41)}
SUBSET = {"seed": 3, "subset": {"mode": "fixed", "size": 4}}


def _members(engine):
    eps = engine.snapshot()["services"][0]["endpoints"]
    return {e["id"] for e in eps if e["in_subset"]}


def _engine(**kw):
    engine = weighted.Engine.from_dict(SUBSET, clock="manual", **kw)
    engine.service("orders").set_endpoints(ENDPOINTS)
    return engine


def test_the_client_id_chooses_the_subset_and_picks_stay_in_it():
    with _engine(client_id="orders-client-1") as a, _engine(client_id="orders-client-1") as b, \
            _engine(client_id="orders-client-2") as c:
        assert len(_members(a)) == 4
        assert _members(a) == _members(b)
        assert _members(a) != _members(c)
        svc = a.service("orders")
        ids = list(ENDPOINTS)
        picked = set()
        for _ in range(400):
            p = svc.pick()
            picked.add(ids[p.index])
            svc.complete(p, 5.0)
        assert picked == _members(a)
        assert a.snapshot()["services"][0]["subset"] == {"size": 4, "of": 40}


def test_the_default_client_id_is_this_process(monkeypatch):
    monkeypatch.delenv("WEIGHTED_CLIENT_ID", raising=False)
    assert weighted.default_client_id() == f"{socket.gethostname()}:{os.getpid()}"
    with _engine() as mine, _engine(client_id=weighted.default_client_id()) as same:
        assert _members(mine) == _members(same)
    monkeypatch.setenv("WEIGHTED_CLIENT_ID", "pod-7")
    with _engine() as env, _engine(client_id="pod-7") as same:
        assert _members(env) == _members(same)


def test_a_config_with_its_own_client_id_keeps_it():
    cfg = {"subset": {"mode": "fixed", "size": 4, "client_id": "from-config"}}
    with weighted.Engine.from_dict(cfg, clock="manual") as e, _engine(client_id="from-config") as f:
        e.service("orders").set_endpoints(ENDPOINTS)
        assert _members(e) == _members(f)


def test_a_reload_keeps_the_client_id():
    with _engine(client_id="c-1") as e, _engine(client_id="c-1") as ref:
        e.reload({"subset": {"mode": "fixed", "size": 6}})
        assert len(_members(e)) == 6
        assert _members(ref) <= _members(e)  # rendezvous: the 6 best include the 4 best


def test_bad_input_is_refused_precisely():
    with pytest.raises(TypeError, match="client_id must be a str, not int"):
        weighted.Engine.from_dict(SUBSET, clock="manual", client_id=5)
    with pytest.raises(weighted.ConfigInvalidError, match="/subset/client_id"):
        weighted.Engine.from_dict(SUBSET, clock="manual", client_id="")
    with pytest.raises(weighted.ConfigInvalidError, match="/subset/services"):
        weighted.Engine.from_dict({"subset": {"services": "a,,b"}}, clock="manual")


def test_a_fleet_place_from_the_environment_makes_an_even_aperture(monkeypatch):
    # Ten clients of 40 endpoints with 4 each: the aperture hands every endpoint to one client.
    monkeypatch.setenv("WEIGHTED_CLIENT_COUNT", "10")
    seen = []
    for i in range(10):
        monkeypatch.setenv("WEIGHTED_CLIENT_INDEX", str(i))
        assert weighted.fleet_place() == {"client_index": i, "client_count": 10}
        with _engine() as e:
            seen.extend(_members(e))
            assert len(_members(e)) == 4
    assert len(seen) == 40 and set(seen) == set(ENDPOINTS)
    # The document's own place wins over the environment's.
    cfg = {"seed": 3, "subset": {"mode": "fixed", "size": 4, "client_count": 10, "client_index": 0}}
    monkeypatch.setenv("WEIGHTED_CLIENT_INDEX", "5")
    with weighted.Engine.from_dict(cfg, clock="manual") as own, _engine() as env:
        own.service("orders").set_endpoints(ENDPOINTS)
        assert _members(own) != _members(env)
        monkeypatch.setenv("WEIGHTED_CLIENT_INDEX", "0")
        with _engine() as zero:
            assert _members(own) == _members(zero)


@pytest.mark.parametrize("var,value,what", [
    ("WEIGHTED_CLIENT_INDEX", "three", "WEIGHTED_CLIENT_INDEX='three': not a whole number"),
    ("WEIGHTED_CLIENT_COUNT", "-2", "WEIGHTED_CLIENT_COUNT='-2': not a whole number"),
    ("WEIGHTED_CLIENT_INDEX", "12", "subset.client_index (12) is not below subset.client_count (10)"),
    ("WEIGHTED_CLIENT_INDEX", "", "WEIGHTED_CLIENT_COUNT is set but WEIGHTED_CLIENT_INDEX is not"),
])
def test_a_bad_fleet_place_is_refused_naming_it(monkeypatch, var, value, what):
    monkeypatch.setenv("WEIGHTED_CLIENT_COUNT", "10")
    monkeypatch.setenv("WEIGHTED_CLIENT_INDEX", "1")
    monkeypatch.setenv(var, value)
    with pytest.raises(weighted.ConfigInvalidError, match=what.replace("(", r"\(").replace(")", r"\)")):
        weighted.Engine.from_dict(SUBSET, clock="manual")


def test_a_bad_fleet_place_does_not_matter_without_a_subset(monkeypatch):
    monkeypatch.setenv("WEIGHTED_CLIENT_INDEX", "three")
    with weighted.Engine.from_dict({"seed": 3}, clock="manual") as e:
        e.service("orders").set_endpoints(ENDPOINTS)
        assert len(_members(e)) == len(ENDPOINTS)
