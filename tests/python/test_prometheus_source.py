"""The engine's Prometheus source against a real Prometheus server (Debian's package) scraping
real backends (processes exporting their pool use with prometheus-client), all started and
stopped here: the series reach the endpoints as server-reported values, and a Prometheus outage
mid-run makes the source stale (event, snapshot, last error) without stopping picks or cycles,
then fresh again when the server is back."""
from __future__ import annotations

import json
import shutil
import textwrap

import weighted
from helpers import endpoint_view
from servers import free_port, python_server, running, wait_until

# make test installs it (mk/python.mk names the Debian package).
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"

BACKEND = textwrap.dedent('''
    import sys, threading
    from prometheus_client import Gauge, start_http_server

    Gauge("app_thread_pool_utilization", "busy request threads over the maximum").set(
        float(sys.argv[2]))
    Gauge("app_cpu_utilization", "process CPU over the CPUs it may use").set(float(sys.argv[3]))
    start_http_server(int(sys.argv[1]), addr="127.0.0.1")
    threading.Event().wait()  # serve until the test stops the process
''')


def _prometheus(tmp_path, port, targets):
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(json.dumps({  # YAML is a superset of JSON
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [{"job_name": "backends", "scrape_interval": "1s",
                            "static_configs": [{"targets": targets}]}]}))
    return [PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"]


def _first(engine, event_type):
    return next((e for e in engine.events() if e.type == event_type), None)


def test_prometheus_source_feeds_endpoints_and_survives_an_outage(tmp_path):
    (tmp_path / "backend.py").write_text(BACKEND)
    ports = [free_port(), free_port()]
    figures = {ports[0]: ("0.9", "0.3"), ports[1]: ("0.1", "1.5")}  # 1.5 CPUs: counted as 1
    backends = []
    engine = None
    try:
        for p in ports:
            backends.append(python_server(str(tmp_path), ["backend.py", str(p), *figures[p]], p))
        ids = [f"127.0.0.1:{p}" for p in ports]
        prom_port = free_port()
        argv = _prometheus(tmp_path, prom_port, ids)
        log = str(tmp_path / "prometheus.log")
        with running(argv, prom_port, log=log) as prom:
            engine = weighted.Engine.from_dict({
                "seed": 1, "controller": {"interval_ms": 100},
                "sources": {"prometheus": {
                    "url": f"http://127.0.0.1:{prom_port}", "interval_ms": 200,
                    "timeout_ms": 200, "stale_ms": 1000, "label": "instance",
                    "queries": {"thread_pool": "app_thread_pool_utilization",
                                "cpu": "app_cpu_utilization"}}}}, clock="real")
            svc = engine.service("api")
            svc.set_endpoints({i: 1 for i in ids})

            def server_figures(i):
                return endpoint_view(engine, "api", i)["window"]["server_resources"]
            # Prometheus scrapes every second; the source polls it every 200 ms.
            wait_until(lambda: server_figures(ids[0])["thread_pool"] == 0.9
                       and server_figures(ids[1])["thread_pool"] == 0.1, 60,
                       "both backends' pool use in the engine")
            assert server_figures(ids[1])["cpu"] == 1.0
            assert endpoint_view(engine, "api", ids[0])["window"]["resource_origin"][
                "thread_pool"] == "server"
            src = engine.snapshot()["sources"][0]
            assert src["state"] == "fresh" and src["last_error"] is None, src
            assert src["matched"] == 4 and src["age_ms"] < 1000, src

            prom.stop()  # the outage
            stale = wait_until(lambda: _first(engine, weighted.EventType.SOURCE_STALE), 30,
                               "the source_stale event")
            why = stale.reason  # the core's JSON, parsed
            assert why["source"] == "prometheus" and why["age_ms"] >= 1000, why
            src = engine.snapshot()["sources"][0]
            assert src["state"] == "stale" and "query" in src["last_error"], src
            # Picks and cycles go on while the source fails.
            for _ in range(1000):
                svc.complete(svc.pick(), 5.0)

            def window_requests():
                return sum(endpoint_view(engine, "api", i)["window"]["requests"] for i in ids)
            wait_until(lambda: window_requests() >= 1000, 10,
                       "a controller cycle during the outage to take the requests in")

        with running(argv, prom_port, log=log):
            fresh = wait_until(lambda: _first(engine, weighted.EventType.SOURCE_FRESH), 60,
                               "the source_fresh event")
            assert fresh.reason["source"] == "prometheus"
            src = engine.snapshot()["sources"][0]
            assert src["state"] == "fresh" and src["last_error"] is None, src
    finally:
        if engine is not None:
            engine.close()
        for b in backends:
            b.stop()


COUNTING_BACKEND = textwrap.dedent('''
    import sys, threading, time
    from prometheus_client import Counter, start_http_server

    # What a server's own request metrics count over every client: `fail` of each 100 answers
    # are 5xx, at 100 requests per second.
    requests = Counter("app_requests", "answered requests", ["code"])
    fail = int(sys.argv[2])
    start_http_server(int(sys.argv[1]), addr="127.0.0.1")
    while True:
        requests.labels("500").inc(fail)
        requests.labels("200").inc(100 - fail)
        time.sleep(1.0)
''')

FLEET_ERROR_RATE = ('sum by (instance) (rate(app_requests_total{code=~"5.."}[4s]))'
                    ' / sum by (instance) (rate(app_requests_total[4s]))')


def test_prometheus_source_reads_the_fleets_error_rate(tmp_path):
    """The error_rate query (a fleet-wide sum by instance over the servers' own counters)
    reaches each endpoint as window.server_error_rate, though this client sent it nothing."""
    (tmp_path / "backend.py").write_text(COUNTING_BACKEND)
    ports = [free_port(), free_port()]
    failing = {ports[0]: 15, ports[1]: 0}
    backends = []
    engine = None
    try:
        for p in ports:
            backends.append(python_server(str(tmp_path), ["backend.py", str(p), str(failing[p])], p))
        ids = [f"127.0.0.1:{p}" for p in ports]
        prom_port = free_port()
        with running(_prometheus(tmp_path, prom_port, ids), prom_port,
                     log=str(tmp_path / "prometheus.log")):
            engine = weighted.Engine.from_dict({
                "seed": 1, "controller": {"interval_ms": 100},
                "sources": {"prometheus": {
                    "url": f"http://127.0.0.1:{prom_port}", "interval_ms": 200,
                    "timeout_ms": 200, "label": "instance",
                    "queries": {"error_rate": FLEET_ERROR_RATE}}}}, clock="real")
            svc = engine.service("api")
            svc.set_endpoints({i: 1 for i in ids})

            def rates():
                return [endpoint_view(engine, "api", i)["window"]["server_error_rate"]
                        for i in ids]
            # rate() needs two scrapes in its range: a few seconds after Prometheus starts.
            wait_until(lambda: all(r is not None for r in rates()), 60,
                       "both backends' error rates in the engine")
            sick, healthy = rates()
            assert abs(sick - 0.15) < 1e-9 and healthy == 0.0, (sick, healthy)
            src = engine.snapshot()["sources"][0]
            assert src["state"] == "fresh" and src["matched"] == 2, src
            # The client's own window saw nothing: the figure is the servers' alone.
            assert endpoint_view(engine, "api", ids[0])["window"]["requests"] == 0
    finally:
        if engine is not None:
            engine.close()
        for b in backends:
            b.stop()
