"""Random sequences of SDK calls with good and bad arguments (fixed seeds, manual clock): every
call either succeeds or raises a WeightedError or TypeError; nothing crashes, and the totals in
the snapshot account for exactly the outcomes that were accepted."""
from __future__ import annotations

import math
import random

import pytest

import weighted

IDS = ["a", "b", "c", "d", "e"]
BAD_NUMBERS = [-1.0, math.nan, math.inf, -math.inf, 1e300]


def _value(rng, good):
    return good if rng.random() < 0.8 else rng.choice(BAD_NUMBERS)


@pytest.mark.parametrize("seed", range(5))
def test_random_call_sequences_never_crash_and_reconcile(seed):
    rng = random.Random(seed)
    engine = weighted.Engine.from_dict({"seed": seed + 1}, clock="manual")
    svc = engine.service("s")
    per_endpoint = {}  # outcomes the engine took, per endpoint still in the set
    current = set()
    picks = []
    ok_calls = refused = 0
    for _ in range(1500):
        op = rng.randrange(10)
        try:
            if op == 0:
                chosen = rng.sample(IDS, rng.randint(0, len(IDS)))
                spec = {i: _value(rng, float(rng.randint(1, 100))) for i in chosen}
                svc.set_endpoints(spec)
                current = set(chosen)
                picks.clear()
                per_endpoint = {k: v for k, v in per_endpoint.items() if k in current}
            elif op in (1, 2):
                picks.append(svc.pick())
            elif op == 3 and picks:
                p = picks.pop(rng.randrange(len(picks)))
                svc.complete(p, _value(rng, rng.uniform(0, 50)), rng.randrange(6))
                per_endpoint[p.endpoint] = per_endpoint.get(p.endpoint, 0) + 1
            elif op in (4, 5):
                ep = rng.choice(IDS)
                svc.report(ep, _value(rng, rng.uniform(0, 50)), rng.randrange(6))
                per_endpoint[ep] = per_endpoint.get(ep, 0) + 1
            elif op == 6:
                ep = rng.choice(IDS)
                svc.report_resources(ep, cpu=_value(rng, rng.random()))
            elif op == 7:
                n = rng.randint(1, 20)
                eps = [rng.choice(sorted(current) or IDS) for _ in range(n)]
                lats = [_value(rng, 5.0) for _ in range(n)]
                try:
                    recorded = svc.report_batch(eps, lats, 0)
                    for ep in eps:
                        per_endpoint[ep] = per_endpoint.get(ep, 0) + 1
                    assert recorded == n
                except weighted.WeightedError as e:
                    if e.entry_statuses is None:
                        raise
                    for ep, status in zip(eps, e.entry_statuses):
                        if status == 0:
                            per_endpoint[ep] = per_endpoint.get(ep, 0) + 1
                    raise
            elif op == 8:
                engine.advance(rng.choice([0.0, 0.5, 1.0, 5.0, -1.0]))
            else:
                engine.snapshot()
                engine.prometheus()
                list(engine.events())
            ok_calls += 1
        except (weighted.WeightedError, TypeError):
            refused += 1
    snap = engine.snapshot()
    totals = {ep["id"]: sum(ep["totals"].values()) for ep in snap["services"][0]["endpoints"]}
    assert set(totals) == current
    for ep in current:
        assert totals[ep] == per_endpoint.get(ep, 0), (ep, totals, per_endpoint)
    # Not vacuous: many calls went through, and many were refused.
    assert ok_calls > 300 and refused > 100
    engine.close()
