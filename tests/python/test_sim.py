"""weighted.sim and python -m weighted.bench."""
from __future__ import annotations

import json

import pytest

sim = pytest.importorskip("weighted.sim")


def test_run_returns_the_documented_results_and_is_deterministic():
    a = sim.run("seed", policies=["round_robin", "engine_default"], series=False)
    b = sim.run("seed", policies=["round_robin", "engine_default"], series=False)
    assert a == b
    assert a["scenario"]["name"] == "seed" and a["scenario"]["duration_s"] == 120
    assert {"round_robin", "engine_default", "oracle"} <= set(a["summary"])
    row = a["summary"]["engine_default"]
    for key in ("mean_success_tps", "max_error_rate", "recovery_s", "mean_cpu", "p99_ms"):
        assert key in row
    assert "series" not in a
    # The engine keeps errors below plain round-robin in the article's experiment.
    assert row["error_rate"] < a["summary"]["round_robin"]["error_rate"]


def test_run_accepts_a_dict_and_a_seed():
    scenario = json.loads(sim.scenario_path("seed").read_text())
    scenario["duration_s"] = 20
    r = sim.run(scenario, policies=["round_robin"], seed=3)
    assert r["scenario"]["seed"] == 3 and len(r["series"]["round_robin"]["t_s"]) == 20


def test_bad_scenarios_name_the_problem():
    with pytest.raises(sim.ScenarioError, match="duration_s"):
        sim.run({"duration_s": "long", "backends": [{"id": "x"}]})
    with pytest.raises(sim.ScenarioError, match="policy|nope"):
        sim.run("seed", policies=["nope"])
    with pytest.raises(sim.ScenarioError, match="no shipped scenario"):
        sim.scenario_path("nope")


def test_engine_variants_join_the_run():
    variants = sim.engine_variants()
    assert variants and all(name.startswith("engine_") for name in variants)
    assert "engine_variants" not in sim.scenarios() and "seed" in sim.scenarios()
    name = sorted(variants)[0]
    r = sim.run("seed", policies=[name], series=False, engine_configs={name: variants[name]})
    assert name in r["summary"]
    with pytest.raises(sim.ScenarioError, match="/bogus: unknown key"):
        sim.run("seed", policies=["engine_bad"], engine_configs={"engine_bad": {"bogus": 1}})
    with pytest.raises(sim.ScenarioError, match="names start with engine_"):
        sim.run("seed", policies=["round_robin"], engine_configs={"bad_name": {}})


def test_bench_prints_the_table_and_writes_results_and_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from weighted import bench
    scenario = json.loads(sim.scenario_path("seed").read_text())
    scenario["duration_s"] = 40  # the seed scenario's faults start at 30 s
    path = tmp_path / "short.json"
    path.write_text(json.dumps(scenario))
    assert bench.main([str(path), "--policy", "round_robin", "--policy", "engine_default",
                       "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Scenario `seed`, seed 1, 40 s simulated." in out and "round_robin" in out
    results = json.loads((tmp_path / "results.json").read_text())
    assert set(results["summary"]) >= {"round_robin", "engine_default"}
    assert (tmp_path / "table.md").read_text() in out
    assert sorted(p.name for p in tmp_path.glob("*.png"))  # the plots of weighted._plots
    tradeoff = json.loads((tmp_path / "tradeoff" / "results.json").read_text())
    assert set(sim.engine_variants()) <= set(tradeoff["summary"])


def test_bench_reports_a_bad_scenario(tmp_path, capsys):
    from weighted import bench
    bad = tmp_path / "bad.json"
    bad.write_text('{"duration_s": -1}')
    assert bench.main([str(bad), "--out", str(tmp_path), "--no-plots"]) == 2
    assert "weighted.bench:" in capsys.readouterr().err
