"""The shared JSON config from Python: validation, resolution and round trips."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import weighted

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples" / "config").glob("*.json"))


def test_resolve_fills_every_default_and_round_trips():
    resolved = weighted.resolve_config({})
    assert resolved["profile"] == "default"
    assert {"controller", "window", "rules", "isolation", "panic", "limits"} <= set(resolved)
    assert weighted.resolve_config(resolved) == resolved
    assert weighted.resolve_config(json.dumps(resolved)) == resolved
    weighted.validate_config(resolved)
    with weighted.Engine.from_dict(resolved, clock="manual") as e:
        assert e.snapshot()["profile"] == "default"


def test_default_rules_are_the_articles():
    rules = {r["metric"]: r for r in weighted.resolve_config({})["rules"]}
    assert rules["error_rate"]["penalty"] == 0.5 and rules["error_rate"]["threshold"] == 0.01
    assert rules["cpu"]["penalty"] == 0.2 and rules["cpu"]["threshold"] == 0.8
    assert rules["latency_p99"]["penalty"] == 0.3


def test_profiles_differ_and_overrides_stick():
    article = weighted.resolve_config({"profile": "article"})
    default = weighted.resolve_config({"profile": "default"})
    assert article != default and article["profile"] == "article"
    tuned = weighted.resolve_config({"profile": "article", "controller": {"interval_ms": 1000}})
    assert tuned["controller"]["interval_ms"] == 1000
    assert weighted.resolve_config(tuned) == tuned


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_configs_load_from_file_text_and_dict(path):
    weighted.validate_config_file(path)
    text = path.read_text()
    with weighted.Engine.from_file(path, clock="manual") as a, \
            weighted.Engine.from_json(text, clock="manual") as b, \
            weighted.Engine.from_dict(json.loads(text), clock="manual") as c:
        assert a.snapshot()["profile"] == b.snapshot()["profile"] == c.snapshot()["profile"]


def test_examples_exist():
    assert EXAMPLES, "examples/config/*.json"


def test_validate_reports_the_cores_message(tmp_path):
    with pytest.raises(weighted.ConfigError) as info:
        weighted.validate_config({"window": {"min_requests": -1}})
    assert info.value.message.startswith("/window/min_requests")
    assert str(info.value) == info.value.message
    bad = tmp_path / "bad.json"
    bad.write_text('{"controller": {"interval_ms": 5000,}}')
    with pytest.raises(weighted.ConfigParseError, match="line 1, column"):
        weighted.validate_config_file(bad)
    with pytest.raises(weighted.ConfigParseError, match="line 1, column"):
        weighted.Engine.from_file(bad)
    with pytest.raises(weighted.ConfigFileError):
        weighted.validate_config_file(tmp_path / "missing.json")
