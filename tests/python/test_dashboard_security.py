"""Dashboard security edge cases (the dashboard item of the security audit, docs/reliability.md
"Security"), beside test_dashboard.py: which addresses count as loopback, that every non-loopback
address needs allow_remote AND a token, and that the token guards every data path while the
static page, which carries no data, stays public."""
from __future__ import annotations

import urllib.error
import urllib.request

import pytest

import weighted
from weighted import dashboard

TOKEN = "0123456789abcdef-token"


@pytest.fixture
def engine():
    e = weighted.Engine.from_dict({"seed": 1}, clock="manual")
    e.service("orders").set_endpoints({"secret-host:8080": 1})
    yield e
    e.close()


def status_of(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_addresses_need_nothing(host):
    dashboard.check_bind(host, allow_remote=False, token=None)


@pytest.mark.parametrize("host", ["", "0.0.0.0", "::", "10.0.0.7", "192.168.1.1", "example.com",
                                  "127.0.0.1.nip.io", "::ffff:10.0.0.1"])
def test_every_other_address_needs_allow_remote_and_a_token(host):
    with pytest.raises(ValueError, match="allow_remote"):
        dashboard.check_bind(host, allow_remote=False, token=TOKEN)
    with pytest.raises(ValueError, match="token"):
        dashboard.check_bind(host, allow_remote=True, token=None)
    with pytest.raises(ValueError, match="at least 16"):
        dashboard.check_bind(host, allow_remote=True, token="x" * 15)
    dashboard.check_bind(host, allow_remote=True, token=TOKEN)


def test_the_default_bind_is_loopback(engine):
    with dashboard.Dashboard(dashboard.LiveSource(engine), port=0) as d:
        assert d.host == "127.0.0.1"


def test_the_token_guards_every_data_path_but_not_the_page(engine):
    with dashboard.Dashboard(dashboard.LiveSource(engine), port=0, token=TOKEN) as d:
        base = f"http://127.0.0.1:{d.port}"
        for path in ("/", "/index.html", "/app.js", "/style.css"):
            code, body = status_of(base + path)
            assert code == 200 and b"secret-host" not in body
        wrong = "0123456789abcdef-tokeX"  # same length, one character off
        for path in ("/api/state", "/metrics", "/api/state?token=" + wrong, "/nope"):
            code, body = status_of(base + path)
            assert code == 401 and b"secret-host" not in body, path
        code, _ = status_of(base + "/api/state", {"Authorization": "Bearer " + wrong})
        assert code == 401
        code, body = status_of(base + "/api/state", {"Authorization": "Bearer " + TOKEN})
        assert code == 200 and b"secret-host" in body
        code, body = status_of(base + "/metrics?token=" + TOKEN)
        assert code == 200 and b"secret-host" in body


def test_paths_outside_the_static_map_are_not_served(engine):
    with dashboard.Dashboard(dashboard.LiveSource(engine), port=0) as d:
        base = f"http://127.0.0.1:{d.port}"
        for path in ("/../../../etc/passwd", "/static/../__init__.py", "/%2e%2e/%2e%2e/etc/passwd",
                     "/__init__.py"):
            code, body = status_of(base + path)
            assert code == 404 and b"root:" not in body and b"import" not in body, path


def test_data_responses_forbid_sniffing_caching_and_foreign_scripts(engine):
    with dashboard.Dashboard(dashboard.LiveSource(engine), port=0) as d:
        req = urllib.request.Request(f"http://127.0.0.1:{d.port}/api/state")
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.headers["X-Content-Type-Options"] == "nosniff"
            assert r.headers["Cache-Control"] == "no-store"
            assert "script-src 'self'" in r.headers["Content-Security-Policy"]


@pytest.mark.parametrize("host_header,expected", [
    ("attacker.example", 403), ("attacker.example:8765", 403), ("127.0.0.1.nip.io", 403),
    ("10.0.0.7", 403), ("127.0.0.1", 200), ("localhost:1234", 200), ("[::1]:1234", 200)])
def test_without_a_token_only_loopback_host_names_are_answered(engine, host_header, expected):
    # DNS rebinding: a foreign name resolving to 127.0.0.1 reaches the socket, not the data.
    with dashboard.Dashboard(dashboard.LiveSource(engine), port=0) as d:
        for path in ("/", "/api/state"):
            code, body = status_of(f"http://127.0.0.1:{d.port}{path}", {"Host": host_header})
            assert code == expected, (path, body)
            assert (b"secret-host" in body) == (expected == 200 and path == "/api/state")


def test_with_a_token_any_host_name_is_answered(engine):
    with dashboard.Dashboard(dashboard.LiveSource(engine), port=0, token=TOKEN) as d:
        code, body = status_of(f"http://127.0.0.1:{d.port}/api/state?token={TOKEN}",
                               {"Host": "dashboard.internal.example"})
        assert code == 200 and b"secret-host" in body
