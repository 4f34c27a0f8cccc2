"""Servers' load reports from Python: the sampler's figures on an injected clock, the ASGI
middleware under a real uvicorn and the WSGI one under a real waitress, read back by httpx and
requests clients that feed an engine, and the binding's parse and record calls."""
from __future__ import annotations

import textwrap
import threading
import time

import httpx
import pytest
import requests

import weighted
from weighted.load_report import (HEADER, LoadReportASGI, LoadReportWSGI, LoadSampler,
                                  complete_response, load_report_of)
from helpers import endpoint_view
from servers import free_port, python_server, wait_until


class FakeProcess:
    def __init__(self, cpu=0.25, memory=0.5):
        self.cpu_value, self.memory_value = cpu, memory

    def cpu(self):
        return self.cpu_value

    def memory(self):
        return self.memory_value


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def parse(header):
    e = weighted.Engine.from_dict({}, clock="manual")
    try:
        return e.parse_load_report(header)
    finally:
        e.close()


def test_sampler_refreshes_once_per_interval_with_the_servers_own_rates():
    clock, proc = Clock(), FakeProcess()
    pool = [0.3]
    s = LoadSampler(4, interval_s=1.0, clock=clock, process=proc, connection_pool=lambda: pool[0])
    first = s.header()  # the first response samples
    assert parse(first) == {"cpu": 0.25, "memory": 0.5, "thread_pool": 0.0,
                            "connection_pool": 0.3}
    for status in (200, 200, 503, 200):
        s.begin()
        s.end(status)
    s.begin()
    s.begin()  # two in flight now
    proc.cpu_value, pool[0] = 0.9, 0.8
    clock.t += 0.5
    assert s.header() is first  # not due: the same text, nothing measured
    clock.t += 0.5
    f = parse(s.header())
    assert f["cpu"] == 0.9 and f["connection_pool"] == 0.8
    assert f["thread_pool"] == 0.5  # 2 of 4
    assert f["rps"] == pytest.approx(4.0) and f["eps"] == pytest.approx(1.0)  # over 1 s


def test_sampler_reports_the_pools_peak_between_samples():
    clock = Clock()
    s = LoadSampler(4, interval_s=1.0, clock=clock, process=FakeProcess())
    s.header()
    for _ in range(4):
        s.begin()
    for _ in range(4):
        s.end(200)  # a burst that filled the pool and left before the next sample
    clock.t += 1
    assert parse(s.header())["thread_pool"] == 1.0
    clock.t += 1
    assert parse(s.header())["thread_pool"] == 0.0


def test_sampler_refuses_what_would_make_a_bad_header():
    with pytest.raises(ValueError, match="capacity must be at least 1, got 0"):
        LoadSampler(0)
    with pytest.raises(ValueError, match="'a,b' cannot be a named_metrics name"):
        LoadSampler(1, thread_pool_metric="a,b")


def figures(header):
    """The header's entries as a dict (the binding's parse shows no latency: no C field)."""
    assert header.startswith("TEXT ")
    return {k: float(v) for k, v in (e.split("=") for e in header[5:].split(", "))}


def test_sampler_reports_the_mean_service_time_and_keeps_it_while_idle():
    clock = Clock()
    s = LoadSampler(4, interval_s=1.0, clock=clock, process=FakeProcess())
    assert "named_metrics.latency_ms" not in figures(s.header())  # nothing served yet
    for took in (0.020, 0.040):
        started = s.begin()
        clock.t += took
        s.end(200, started)
    clock.t += 1
    header = s.header()
    assert figures(header)["named_metrics.latency_ms"] == pytest.approx(30.0)
    parse(header)  # the engine takes it (an unknown named metric to the C parse: not refused)
    clock.t += 1  # an idle interval: the last figure stands, the rates go
    f = figures(s.header())
    assert f["named_metrics.latency_ms"] == pytest.approx(30.0) and "rps_fractional" not in f
    started = s.begin()
    clock.t += 0.5
    s.end(503, started)
    clock.t += 1
    assert figures(s.header())["named_metrics.latency_ms"] == pytest.approx(500.0)


def test_sampler_latency_metric_can_be_renamed_or_left_out():
    clock = Clock()
    s = LoadSampler(1, clock=clock, process=FakeProcess(), latency_metric="service_ms")
    s.end(200, s.begin() - 0.01)
    assert figures(s.header())["named_metrics.service_ms"] == pytest.approx(10.0)
    s = LoadSampler(1, clock=clock, process=FakeProcess(), latency_metric=None)
    s.end(200, s.begin() - 0.01)
    assert not any("latency" in k for k in figures(s.header()))
    with pytest.raises(ValueError, match="must differ"):
        LoadSampler(1, latency_metric="thread_pool")
    with pytest.raises(ValueError, match="'a b' cannot be a named_metrics name"):
        LoadSampler(1, latency_metric="a b")


def test_wsgi_middleware_times_a_request_until_its_body_is_closed():
    clock = Clock()
    sampler = LoadSampler(2, clock=clock, process=FakeProcess())

    def app(environ, start_response):
        start_response("200 OK", [])
        return [b"ok"]
    body = LoadReportWSGI(app, sampler=sampler)({"PATH_INFO": "/"}, lambda s, h, e=None: None)
    clock.t += 0.05  # the server sends the body
    body.close()
    clock.t += 1
    assert figures(sampler.header())["named_metrics.latency_ms"] == pytest.approx(50.0)


def test_a_failing_connection_pool_callable_leaves_the_figure_out():
    def broken():
        raise RuntimeError("pool gone")
    s = LoadSampler(1, clock=Clock(), process=FakeProcess(), connection_pool=broken)
    assert "connection_pool" not in parse(s.header())


def test_the_real_process_figures_are_fractions():
    s = LoadSampler(2, interval_s=0.001)
    sum(i * i for i in range(200000))  # some CPU to measure
    time.sleep(0.002)
    f = parse(s.header())
    assert 0.0 <= f["cpu"] <= 1.0 and 0.0 < f["memory"] < 1.0


def test_binding_parse_and_record(engine, svc):
    assert engine.parse_load_report(b"TEXT named_metrics.thread_pool=0.75, rps_fractional=3") == {
        "thread_pool": 0.75, "rps": 3.0}
    with pytest.raises(weighted.BadLoadReportError, match=r"entry 0 \(offset 5\)"):
        engine.parse_load_report("TEXT cpu_utilization=7x")
    svc.report_load("b", "TEXT cpu_utilization=0.5")
    svc.report_load(svc.key("c"), "JSON {\"mem_utilization\": 0.25}")
    assert endpoint_view(engine, "orders", "b")["server_report"]["reports"] == 1
    assert endpoint_view(engine, "orders", "c")["server_report"]["reports"] == 1
    with pytest.raises(weighted.NotFoundError):
        svc.report_load("nobody", "TEXT eps=1")
    p = svc.pick()
    with pytest.raises(weighted.BadLoadReportError):
        svc.complete_with_load(p, 5.0, weighted.Outcome.SUCCESS, "TEXT eps=-1")
    assert p.finished  # the outcome was recorded all the same
    ep = endpoint_view(engine, "orders", p.endpoint)
    assert ep["totals"]["success"] == 1 and ep["server_report"]["malformed"] == 1
    with pytest.raises(TypeError, match="load_report must be a str"):
        svc.complete_with_load(svc.pick(), 5.0, 0, 12)


ASGI_APP = textwrap.dedent('''
    import asyncio
    from weighted.load_report import LoadReportASGI

    held = []

    async def raw(scope, receive, send):
        path, body = scope["path"], b"ok"
        if path == "/hold":
            ev = asyncio.Event()
            held.append(ev)
            await ev.wait()
        elif path == "/release":
            for ev in held:
                ev.set()
            held.clear()
        elif path == "/held":
            body = str(len(held)).encode()
        status = 500 if path == "/fail" else 200
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": body})

    app = LoadReportASGI(raw, max_concurrency=8, interval_s=0.02)
''')

WSGI_APP = textwrap.dedent('''
    import threading
    from weighted.load_report import LoadReportWSGI

    held = []
    lock = threading.Lock()

    def raw(environ, start_response):
        path, body = environ["PATH_INFO"], b"ok"
        if path == "/hold":
            ev = threading.Event()
            with lock:
                held.append(ev)
            ev.wait(60)
        elif path == "/release":
            with lock:
                for ev in held:
                    ev.set()
                held.clear()
        elif path == "/held":
            with lock:
                body = str(len(held)).encode()
        status = "500 Internal Server Error" if path == "/fail" else "200 OK"
        start_response(status, [("Content-Type", "text/plain")])
        return [body]

    app = LoadReportWSGI(raw, threads=8, interval_s=0.02)
''')


def _server(kind, tmp_path):
    port = free_port()
    (tmp_path / f"{kind}_app.py").write_text(ASGI_APP if kind == "asgi" else WSGI_APP)
    if kind == "asgi":
        argv = ["-m", "uvicorn", "asgi_app:app", "--host", "127.0.0.1", "--port", str(port),
                "--limit-concurrency", "8", "--log-level", "warning"]
    else:
        argv = ["-m", "waitress", "--host=127.0.0.1", f"--port={port}", "--threads=8",
                "wsgi_app:app"]
    return python_server(str(tmp_path), argv, port, log=str(tmp_path / f"{kind}.log"))


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_a_real_server_reports_its_busy_pool_and_the_client_records_it(kind, tmp_path):
    server = _server(kind, tmp_path)
    base = f"http://127.0.0.1:{server.port}"
    holders = []
    try:
        for _ in range(3):  # three requests that keep their worker until released
            t = threading.Thread(target=lambda: httpx.get(base + "/hold", timeout=60))
            t.start()
            holders.append(t)
        wait_until(lambda: httpx.get(base + "/held").text == "3", 30, "three held requests")

        # 3 held + the request that reads the header = 4 of 8; the sample is refreshed every
        # 20 ms, so wait for one taken after the holds began.
        def pool_use():
            return parse(httpx.get(base + "/").headers[HEADER]).get("thread_pool")
        wait_until(lambda: pool_use() == 0.5, 30, "thread_pool=0.5 in the header")
        # The requests served so far (the /held polls) timed: the server's own latency.
        assert figures(httpx.get(base + "/").headers[HEADER])["named_metrics.latency_ms"] >= 0

        # The client side: a pick's response recorded with its load report.
        engine = weighted.Engine.from_dict({"seed": 1}, clock="manual")
        svc = engine.service("api")
        endpoint = f"127.0.0.1:{server.port}"
        svc.set_endpoints({endpoint: 1})
        if kind == "asgi":
            with svc.call() as call:
                call.set_response(httpx.get(f"http://{call.endpoint}/"))
        else:
            pick = svc.pick()
            start = time.perf_counter()
            r = requests.get(f"http://{pick.endpoint}/fail")
            complete_response(svc, pick, (time.perf_counter() - start) * 1e3, r)
            assert r.status_code == 500 and load_report_of(r) is not None
        engine.run_cycle()
        ep = endpoint_view(engine, "api", endpoint)
        assert ep["server_report"]["reports"] == 1 and ep["server_report"]["malformed"] == 0
        assert ep["window"]["server_resources"]["thread_pool"] == 0.5
        assert ep["window"]["resource_origin"]["thread_pool"] == "server"
        assert ep["totals"]["success" if kind == "asgi" else "http_5xx"] == 1
        engine.close()

        httpx.get(base + "/release")
        for t in holders:
            t.join(30)
        wait_until(lambda: pool_use() == 0.125, 30, "thread_pool=0.125 after the release")
    finally:
        httpx.get(base + "/release")
        for t in holders:
            t.join(30)
        server.stop()


def test_middlewares_count_a_5xx_as_the_servers_error():
    clock = Clock()
    sampler = LoadSampler(2, clock=clock, process=FakeProcess())

    def app(environ, start_response):
        start_response("503 Service Unavailable", [])
        return [b""]
    wsgi = LoadReportWSGI(app, sampler=sampler)
    seen = {}
    body = wsgi({"PATH_INFO": "/"}, lambda s, h, e=None: seen.update(h))
    assert HEADER in seen
    body.close()
    clock.t += 1
    assert parse(sampler.header())["eps"] == pytest.approx(1.0)
    assert LoadReportASGI(None, sampler=sampler).sampler is sampler
