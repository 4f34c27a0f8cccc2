#!/usr/bin/env python3
"""Writes docs/performance.md from one `make bench` run: Google Benchmark JSON (the core),
JMH JSON (Java) and pytest-benchmark JSON (Python). Medians only; ratios are taken between
results of the same run; every issue-6 target is reported as met or missed, with the margin.

Missing inputs (a suite that was skipped) are reported as such, never invented.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
from datetime import datetime, timezone

SIZES = [3, 100, 1000, 10000]


# ---------------------------------------------------------------------------------------------
# inputs


def load(path):
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def core_results(doc):
    """{run_name: {"real": ns, "cpu": ns, "rate": items/s, counters...}} from the medians."""
    out = {}
    if not doc:
        return out
    for b in doc["benchmarks"]:
        agg = b.get("aggregate_name")
        if b.get("run_type") == "aggregate" and agg != "median":
            continue
        name = b["run_name"]
        if name in out and b.get("run_type") != "aggregate":
            continue
        unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        r = {"real": b["real_time"] * unit, "cpu": b["cpu_time"] * unit}
        for k, v in b.items():
            if isinstance(v, (int, float)) and k not in ("real_time", "cpu_time", "iterations",
                                                          "repetitions", "repetition_index",
                                                          "threads", "family_index",
                                                          "per_family_instance_index"):
                r[k] = v
        out[name] = r
    return out


def jmh_results(doc):
    """{"method@param": {"median": ns, "p50": ns or None, "mode": ...}}."""
    out = {}
    if not doc:
        return out
    for b in doc:
        method = b["benchmark"].rsplit(".", 1)[1]
        params = b.get("params") or {}
        key = method + ("@" + params["instances"] if "instances" in params else "")
        pm = b["primaryMetric"]
        raw = [x for fork in pm.get("rawData", []) for x in fork]
        median = statistics.median(raw) if raw else pm["score"]
        p50 = (pm.get("scorePercentiles") or {}).get("50.0")
        # CpuTimeProfiler (java/weighted-bench) adds the benchmark thread's CPU time per op.
        cpu = (b.get("secondaryMetrics") or {}).get("cpu.ns/op")
        out[key] = {"median": p50 if b["mode"] == "sample" and p50 is not None else median,
                    "mode": b["mode"], "unit": pm["scoreUnit"], "score": pm["score"],
                    "cpu": cpu["score"] if cpu else None}
    return out


# The Python suite times report_batch per call of BATCH entries (tests/python/bench/test_bench.py)
def py_results(doc):
    """name -> (median ns per operation, the name of its baseline): tests/python/bench/conftest.py
    puts the operations per call and the baseline in each benchmark's extra_info."""
    out = {}
    if not doc:
        return out
    for b in doc["benchmarks"]:
        extra = b.get("extra_info", {})
        out[b["name"]] = (b["stats"]["median"] * 1e9 / extra.get("per_call", 1),
                          extra.get("baseline", "test_baseline_random_choices"))
    return out


# ---------------------------------------------------------------------------------------------
# the previous page: a suite not run this time keeps what the last page said of it


class Previous:
    """docs/performance.md as the last run wrote it: its run line, its target rows by label and
    its Java and Python sections, for a run that measured only some suites (e.g. the C++ suite
    alone after a change to the core)."""

    def __init__(self, path):
        text = open(path).read() if path and os.path.exists(path) else ""
        m = re.search(r"^on (.*?)\. Every figure", text, re.M)
        self.when = m.group(1) if m else None
        self.rows = {}
        targets = self.section(text, "## Targets")
        for line in targets.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| ") and len(cells) == 5 and not cells[0].startswith("target"):
                self.rows[cells[0]] = cells
        self.java = self.section(text, "## Java (JMH)")
        self.python = self.section(text, "## Python (pytest-benchmark)")
        # Kept once already: the figures are still from the run that measured them.
        first = (self.java or self.python or "\n").splitlines()[0]
        m = re.match(r"Not run this time; kept from the run of (.*):$", first)
        if m:
            self.when = m.group(1)

    @staticmethod
    def section(text, heading):
        """The body under `heading`, up to the next heading of the same level."""
        at = text.find("\n" + heading + "\n")
        if at < 0:
            return ""
        body = text[at + len(heading) + 2:]
        end = body.find("\n## ")
        return (body if end < 0 else body[:end]).strip()

    def kept(self):
        return f"kept from the run of {self.when}" if self.when else "kept from the previous page"


# ---------------------------------------------------------------------------------------------
# the machine


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception:  # noqa: BLE001 - best effort description
        return ""


def machine(core_doc):
    cpu = sh("lscpu | sed -n 's/^Model name:[ \t]*//p' | head -1") or platform.processor()
    hyper = sh("lscpu | sed -n 's/^Hypervisor vendor:[ \t]*//p'") or "none reported"
    caches = ", ".join(sh("lscpu | grep -E '^L[123]' | tr -s ' '").splitlines())
    mem = sh("free -g | awk '/Mem:/{print $2}'")
    gbench = sh("dpkg-query -W -f='${Version}' libbenchmark-dev")
    jdk = sh("java -version 2>&1 | head -1")
    cxx = sh("c++ --version | head -1")
    ctx = (core_doc or {}).get("context", {})
    mhz = f", {ctx['mhz_per_cpu']} MHz" if ctx.get("mhz_per_cpu") else ""
    return [
        f"- CPU: {cpu}, `nproc` = {sh('nproc')}{mhz}; hypervisor: {hyper}",
        f"- Caches: {caches}",
        f"- Memory: {mem} GiB; kernel {platform.release()}",
        f"- Compiler: {cxx}; build type RelWithDebInfo (-O2 -g), preset `release`",
        f"- Google Benchmark {gbench}; {jdk}; Python {platform.python_version()}",
    ]


# ---------------------------------------------------------------------------------------------
# report


def fmt_ns(x):
    if x is None:
        return "-"
    if x >= 1e6:
        return f"{x / 1e6:.2f} ms"
    if x >= 1e4:
        return f"{x / 1e3:.1f} us"
    return f"{x:.1f} ns"


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "-"


def name(bm, n, threads):
    return f"{bm}/endpoints:{n}/real_time/threads:{threads}"


def verdict(value, bar, at_most=True):
    if value is None:
        return "not measured", ""
    met = value <= bar if at_most else value >= bar
    margin = (value / bar - 1) * 100
    if met:
        return "**met**", f"{abs(margin):.0f}% {'under' if at_most else 'over'} the bar"
    return "**missed**", f"{abs(margin):.0f}% {'over' if at_most else 'under'} the bar"


def load_aware_tables(core, w):
    """The default (load-aware) pick + report beside the load-aware references of the same run,
    and each one's thread scaling (items/s with T threads over items/s with 1)."""
    def get(bm, n, t, field="real"):
        r = core.get(name(bm, n, t))
        return r.get(field) if r else None
    threads = sorted({int(k.rsplit("threads:", 1)[1]) for k in core if "/threads:" in k})
    refs = (("BM_PickReport_P2cPeakEwma", "P2C peak-EWMA"), ("BM_PickReport_EnvoyLeastRequest", "Envoy least-request"))
    if get("BM_PickReport_EngineLoadAware", 3, 1) is None:
        return
    w("### Default (load-aware) pick + report against the load-aware references")
    w("")
    w("Wall-clock median (CPU median in parentheses); ratios divide CPU medians.")
    w("")
    w("| endpoints | threads | engine | " + " | ".join(r[1] for r in refs) + " | " +
      " | ".join(f"engine/{r[1]}" for r in refs) + " |")
    w("|---|---|---|" + "---|" * (2 * len(refs)))
    for t in threads:
        for n in SIZES:
            ev, ec = get("BM_PickReport_EngineLoadAware", n, t), get("BM_PickReport_EngineLoadAware", n, t, "cpu")
            if ev is None:
                continue
            cells = [f"{fmt_ns(get(b, n, t))} ({fmt_ns(get(b, n, t, 'cpu'))})" if get(b, n, t) else "-" for b, _ in refs]
            ratios = [ratio(ec, get(b, n, t, "cpu")) for b, _ in refs]
            w(f"| {n} | {t} | {fmt_ns(ev)} ({fmt_ns(ec)}) | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    w("")
    w("Thread scaling, items/s with T threads / items/s with 1 (wall):")
    w("")
    w("| benchmark | endpoints | " + " | ".join(f"{t} threads" for t in threads) + " |")
    w("|---|---|" + "---|" * len(threads))
    for bm in ("BM_PickReport_EngineLoadAware", "BM_PickReport_Engine", "BM_PickReport_P2cPeakEwma",
               "BM_PickReport_EnvoyLeastRequest", "BM_PickReport_Edf"):
        for n in SIZES:
            one = core.get(name(bm, n, 1))
            if not one or not one.get("items_per_second"):
                continue
            cells = []
            for t in threads:
                r = core.get(name(bm, n, t))
                cells.append(f"{r['items_per_second'] / one['items_per_second']:.2f}x" if r else "-")
            w(f"| `{bm}` | {n} | " + " | ".join(cells) + " |")
    w("")


def not_run(w, section: str, prev) -> None:
    """A suite that did not run: its section of the previous page (marked as kept), or a line
    saying it was not measured."""
    if section:
        if not section.startswith("Not run this time"):
            w(f"Not run this time; {prev.kept()}:")
            w("")
        w(section)
    else:
        w("Not measured in this run (the suite was skipped or failed; see the make output).")
    w("")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--core")
    ap.add_argument("--jmh")
    ap.add_argument("--python")
    ap.add_argument("--log")
    ap.add_argument("--notes", default=os.path.join(os.path.dirname(__file__), "performance_notes.md"))
    # Measured by hand with their own commands (the load report, the state file, the default
    # mode's hot path): kept in this file and placed after the core tables, so a run of
    # `make bench` rewrites the tables without dropping them.
    ap.add_argument("--sections", default=os.path.join(os.path.dirname(__file__), "performance_sections.md"))
    ap.add_argument("--command", default="make bench")
    # The page as it stands: a suite this run did not measure (its JSON missing) keeps its
    # section and its target rows from there, marked as kept, instead of "not measured".
    ap.add_argument("--previous")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    core_doc = load(a.core)
    core = core_results(core_doc)
    jmh = jmh_results(load(a.jmh))
    py = py_results(load(a.python))
    log = open(a.log).read().strip().splitlines() if a.log and os.path.exists(a.log) else []
    prev = Previous(a.previous)

    def get(bm, n, t, field="real"):
        r = core.get(name(bm, n, t))
        return r.get(field) if r else None

    md = []
    w = md.append
    w("# Performance")
    w("")
    w("Written by `benchmarks/report.py` from one run of")
    w("")
    w(f"    {a.command}")
    w("")
    w(f"on {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}. Every figure is a median; every ratio")
    w("divides two results of the same run. Method: `benchmarks/core_bench.cc` (Google Benchmark,")
    w("the engine through its C API as a caller links `libweighted.so`), `java/weighted-bench` (JMH),")
    w("`tests/python/bench` (pytest-benchmark). Raw JSON: `build/bench/`.")
    kept = [name for name, ran, old in (("Java", jmh, prev.java), ("Python", py, prev.python))
            if not ran and old]
    if kept:
        w(f"This run measured without the {' and '.join(kept)} suite{'s' if len(kept) > 1 else ''}: "
          f"{' and '.join(kept)} figures and target rows are {prev.kept()}.")
    w("")
    w("## Machine")
    w("")
    md.extend(machine(core_doc))
    if log:
        w(f"- Run log (UTC, `/proc/loadavg` 1/5/15 min): {'; '.join(log)}")
    w("")
    w("The machine is shared: other jobs (compilers, test suites) ran during the measurement, so")
    w("wall-clock times include time the benchmark thread spent waiting for a core. The C++ table")
    w("therefore gives both the wall-clock median and the CPU-time median (time the thread actually")
    w("ran); a load average above `nproc` in the run log means wall times are inflated.")
    w("")

    # ---- targets ----
    w("## Targets")
    w("")
    w("| target | bar | measured (wall) | measured (CPU) | verdict |")
    w("|---|---|---|---|---|")

    def row(label, bar_text, wall, cpu, bar, at_most=True, unit=fmt_ns):
        if wall is None and cpu is None and label in prev.rows:
            cells = list(prev.rows[label])
            if "kept from" not in cells[4]:
                cells[4] = f"{cells[4]} ({prev.kept()})"
            w("| " + " | ".join(cells) + " |")
            return
        v, margin = verdict(wall, bar, at_most)
        vc, marginc = verdict(cpu, bar, at_most) if cpu is not None else ("", "")
        cpu_text = f"{unit(cpu)} ({vc.strip('*')}{', ' + marginc if marginc else ''})" if cpu is not None else "-"
        w(f"| {label} | {bar_text} | {unit(wall)} | {cpu_text} | {v}{': ' + margin if margin else ''} |")

    row("core pick, 1 000 endpoints", "<= 25 ns", get("BM_Pick_Engine", 1000, 1),
        get("BM_Pick_Engine", 1000, 1, "cpu"), 25)
    row("core pick, 10 000 endpoints", "<= 40 ns", get("BM_Pick_Engine", 10000, 1),
        get("BM_Pick_Engine", 10000, 1, "cpu"), 40)
    row("core report, 1 000 endpoints", "<= 30 ns", get("BM_Report_Engine", 1000, 1),
        get("BM_Report_Engine", 1000, 1, "cpu"), 30)
    row("core report, 10 000 endpoints", "<= 30 ns", get("BM_Report_Engine", 10000, 1),
        get("BM_Report_Engine", 10000, 1, "cpu"), 30)
    for n in SIZES:
        one = core.get(name("BM_Pick_Engine", n, 1))
        two = core.get(name("BM_Pick_Engine", n, 2))
        if one and two:
            wall = two["items_per_second"] / one["items_per_second"]
            # CPU-normalised: per-pick CPU cost with 2 threads vs 1 (cpu_time sums both threads).
            cpu = 2 * one["cpu"] / two["cpu"] if two["cpu"] else None
            row(f"2-thread / 1-thread pick rate, {n} endpoints", ">= 1.7x", wall, cpu, 1.7,
                at_most=False, unit=lambda x: "-" if x is None else f"{x:.2f}x")
    for n in SIZES:
        la, la_cpu = get("BM_PickReport_EngineLoadAware", n, 1), get("BM_PickReport_EngineLoadAware", n, 1, "cpu")
        bar = 80 if n >= 10000 else 40
        row(f"default (load-aware) pick + report, {n} endpoints", f"<= {bar} ns", la, la_cpu, bar)
        ref, ref_cpu = get("BM_PickReport_P2cPeakEwma", n, 1), get("BM_PickReport_P2cPeakEwma", n, 1, "cpu")
        row(f"load-aware pick + report / P2C peak-EWMA, {n} endpoints", "<= 1.5x",
            la / ref if la and ref else None, la_cpu / ref_cpu if la_cpu and ref_cpu else None, 1.5,
            unit=lambda x: "-" if x is None else f"{x:.2f}x")
    one = core.get(name("BM_PickReport_EngineLoadAware", 3, 1))
    two = core.get(name("BM_PickReport_EngineLoadAware", 3, 2))
    if one and two:
        row("2-thread / 1-thread load-aware pick + report rate, 3 endpoints", ">= 1.7x",
            two["items_per_second"] / one["items_per_second"],
            2 * one["cpu"] / two["cpu"] if two["cpu"] else None, 1.7, at_most=False,
            unit=lambda x: "-" if x is None else f"{x:.2f}x")
    snap = core.get("BM_SnapshotJson/endpoints:100000")
    if snap:
        row("snapshot JSON, 100 000 endpoints", "<= 100 ms", snap["real"], snap["cpu"], 100e6)
    cyc = core.get("BM_Cycle_Engine/endpoints:10000/reports:20/iterations:10/manual_time")
    idle = core.get("BM_Cycle_Engine/endpoints:10000/reports:0/iterations:10/manual_time")
    for label, r in (("controller cycle, 10 000 endpoints, 20 reports each", cyc),
                     ("controller cycle, 10 000 endpoints, idle", idle)):
        if r:
            row(label, "<= 2 ms", r["real"], r.get("cpu_ms", 0) * 1e6, 2e6)
    mem = core.get("BM_Memory/endpoints:10000/reports:20/iterations:1")
    if mem:
        v, margin = verdict(mem["bytes_per_endpoint"], 2048)
        w(f"| state per endpoint, 10 000 endpoints, steady (20 reports/cycle) | <= 2 KiB | "
          f"{mem['bytes_per_endpoint']:.0f} B | - | {v}: {margin} |")
    mem200 = core.get("BM_Memory/endpoints:10000/reports:200/iterations:1")
    if mem200:
        v, margin = verdict(mem200["bytes_per_endpoint"], 2048)
        w(f"| state per endpoint, 10 000 endpoints, steady (200 reports/cycle) | <= 2 KiB | "
          f"{mem200['bytes_per_endpoint']:.0f} B | - | {v}: {margin} |")
    jni = jmh.get("pickAndComplete")
    row("JNI pick + report (pickAndComplete, p50)", "<= 150 ns", jni["median"] if jni else None, None, 150)
    def cpu_ratio(a, b):
        return a["cpu"] / b["cpu"] if a and b and a.get("cpu") and b.get("cpu") else None

    for weighted, rr_name, what in (
            ("weightedChoose", "roundRobinChoose", "Flux.just supplier"),
            ("weightedDefaultChoose", "roundRobinChoose", "Flux.just supplier, default (load-aware) config"),
            ("weightedChooseDeferred", "roundRobinChooseDeferred", "Flux.defer supplier")):
        for n in ("3", "20"):
            wc = jmh.get(f"{weighted}@{n}")
            rr = jmh.get(f"{rr_name}@{n}")
            row(f"Spring choose() / RoundRobinLoadBalancer, {n} instances, {what}", "<= 1.2x",
                wc["median"] / rr["median"] if wc and rr else None, cpu_ratio(wc, rr), 1.2,
                unit=lambda x: "-" if x is None else f"{x:.2f}x")
    row("Python pick", "<= 300 ns", py.get("test_pick", (None,))[0], None, 300)
    w("")
    w("Verdicts read the wall-clock median, as the targets are stated; the CPU column says")
    w("whether the code itself meets the bar when the machine's other load is taken out. For the")
    w("2-thread rows, wall = items/s with 2 threads / items/s with 1; CPU = 2 x (CPU ns per pick,")
    w("1 thread) / (CPU ns per pick, 2 threads), which shows contention (shared cache lines make")
    w("each pick cost more CPU) but not time-sharing of the cores with other jobs.")
    w("")

    # ---- core tables ----
    if core:
        w("## Core (C API): engine vs nginx smooth WRR (mutex) and Envoy EDF")
        w("")
        w("Wall-clock median per operation (CPU-time median in parentheses). With 2 threads the wall")
        w("time is wall time / operations of both threads (the inverse of throughput) and the CPU time is")
        w("CPU of both threads / operations. Ratios divide CPU-time medians (on this shared machine the")
        w("wall ratios mostly compare how long each benchmark waited for a core); < 1: the engine is")
        w("faster. SWRR is shared by the threads behind one mutex (nginx with a `zone`); EDF is one per")
        w("thread (Envoy gives each worker its own balancer). `report` for SWRR is nginx's")
        w("`free_peer` bookkeeping under the lock; for EDF pick+report adds an atomic per-host counter.")
        w("")
        w("| operation | endpoints | threads | engine | nginx SWRR | Envoy EDF | engine/SWRR | engine/EDF |")
        w("|---|---|---|---|---|---|---|---|")
        for op, e, s, d in (("pick", "BM_Pick_Engine", "BM_Pick_Swrr", "BM_Pick_Edf"),
                            ("report", "BM_Report_Engine", "BM_Report_Swrr", None),
                            ("pick+report", "BM_PickReport_Engine", "BM_PickReport_Swrr", "BM_PickReport_Edf"),
                            ("pick+report, load_aware", "BM_PickReport_EngineLoadAware", "BM_PickReport_Swrr",
                             "BM_PickReport_Edf")):
            for t in (1, 2):
                for n in SIZES:
                    ev, sv = get(e, n, t), get(s, n, t)
                    dv = get(d, n, t) if d else None
                    if ev is None:
                        continue
                    ec, sc = get(e, n, t, "cpu"), get(s, n, t, "cpu")
                    dc = get(d, n, t, "cpu") if d else None

                    def cell(wall, cpu):
                        return "-" if wall is None else f"{fmt_ns(wall)} ({fmt_ns(cpu)})"
                    w(f"| {op} | {n} | {t} | {cell(ev, ec)} | {cell(sv, sc)} | {cell(dv, dc)} | "
                      f"{ratio(ec, sc)} | {ratio(ec, dc)} |")
        w("")
        w("### Controller cycle, exposition, memory")
        w("")
        w("| benchmark | wall median | CPU | detail |")
        w("|---|---|---|---|")
        for k, r in core.items():
            if k.startswith("BM_Cycle"):
                w(f"| `{k}` | {fmt_ns(r['real'])} | {fmt_ns(r.get('cpu_ms', 0) * 1e6)} (cycle thread) | |")
            elif k.startswith(("BM_SnapshotJson", "BM_Prometheus")):
                # ns_per_endpoint is an inverted rate: Google Benchmark writes seconds per endpoint.
                w(f"| `{k}` | {fmt_ns(r['real'])} | {fmt_ns(r['cpu'])} | {r.get('bytes', 0) / 1024:.0f} KiB of text, "
                  f"{r.get('ns_per_endpoint', 0) * 1e9:.0f} ns of CPU per endpoint |")
            elif k.startswith("BM_Memory"):
                w(f"| `{k}` | - | - | {r['bytes_per_endpoint']:.0f} B per endpoint in steady state, "
                  f"{r['bytes_per_endpoint_idle']:.0f} B right after set_endpoints |")
        w("")
    else:
        w("## Core\n\nNot measured in this run.\n")

    if core:
        load_aware_tables(core, w)
    if a.sections and os.path.exists(a.sections):
        w(open(a.sections).read().rstrip())
        w("")

    # ---- Java ----
    w("## Java (JMH)")
    w("")
    if jmh:
        w("| benchmark | mode | median | CPU per op |")
        w("|---|---|---|---|")
        for k, r in sorted(jmh.items()):
            cpu = f"{r['cpu']:.1f} ns" if r.get("cpu") else "-"
            w(f"| `{k}` | {r['mode']} | {r['median']:.1f} {r['unit']} | {cpu} |")
        w("")
        for n in ("3", "20"):
            wc, rr, rnd = (jmh.get(f"{m}@{n}") for m in ("weightedChoose", "roundRobinChoose", "randomChoose"))
            if wc and rr and rnd:
                w(f"- {n} instances: weighted / RoundRobin = {wc['median'] / rr['median']:.2f}, "
                  f"weighted / Random = {wc['median'] / rnd['median']:.2f}")
            wm, sw = jmh.get(f"weightedChooseMetadataWeights@{n}"), jmh.get(f"springWeightedSupplierChoose@{n}")
            if wm and sw:
                w(f"- {n} instances, weights from metadata: weighted / Spring's WeightedServiceInstanceListSupplier "
                  f"+ RoundRobin = {wm['median'] / sw['median']:.2f}")
        wr, rr, wrt = jmh.get("weightedRule"), jmh.get("roundRobinRule"), jmh.get("weightedResponseTimeRule")
        if wr and rr and wrt:
            w(f"- Ribbon: weighted rule / RoundRobinRule = {wr['median'] / rr['median']:.2f}, "
              f"/ WeightedResponseTimeRule = {wr['median'] / wrt['median']:.2f}")
        w("")
    else:
        not_run(w, prev.java, prev)

    # ---- Python ----
    w("## Python (pytest-benchmark)")
    w("")
    if py:
        w("| benchmark | median per operation | / its pure-Python baseline | baseline |")
        w("|---|---|---|---|")
        for k, (v, base) in sorted(py.items()):
            b = py.get(base) if base else None
            w(f"| `{k}` | {fmt_ns(v)} | {ratio(v, b[0]) if b else '-'} | {f'`{base}`' if base else '(a baseline)'} |")
        w("")
    else:
        not_run(w, prev.python, prev)

    if a.notes and os.path.exists(a.notes):
        w(open(a.notes).read().rstrip())
        w("")

    with open(a.out, "w") as f:
        f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
