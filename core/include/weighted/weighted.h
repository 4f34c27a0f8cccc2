/*
 * weighted: a health-aware, dynamically weighted load-balancing engine.
 *
 * This is the one stable door into the engine. It is C99: no C++ type, no exception and no
 * ownership that the caller cannot see crosses it.
 *
 * Conventions that hold for every function below unless its comment says otherwise:
 *   - Naming is wt_<object>_<verb>.
 *   - Every entry point returns a wt_status, except the ones that cannot fail, which say what
 *     they return instead: wt_version_number, wt_version_string, wt_last_error, wt_status_name,
 *     wt_outcome_name, wt_event_type_name, wt_free, wt_outcome_from_http_status and
 *     wt_engine_destroy. WT_OK is 0; other values are pinned forever (they are never renumbered,
 *     new ones are only appended).
 *   - On failure, wt_last_error() returns a message for the calling thread naming what was wrong,
 *     where (a JSON path, a line and column, an argument name) and why. The state of every object
 *     is exactly as it was before the failing call.
 *   - Out-parameters are written only on WT_OK.
 *   - Memory returned through a char** is owned by the caller and released with wt_free().
 *   - Thread safety: every function may be called concurrently from any thread on the same
 *     engine, except wt_engine_destroy(), which must be the last call on an engine and must not
 *     race with any other call on it.
 *   - Units: latencies are milliseconds as double; times are nanoseconds as int64_t on the
 *     engine's clock; resource levels are fractions in [0, 1]; weights are non-negative doubles
 *     in the caller's own scale (discovery metadata: 1, 100, ...).
 *
 * Compatibility: how this header grows without breaking programs built against it.
 *   - Within a major version, nothing is removed or changed: functions keep their signatures,
 *     enum values, status codes and flag bits keep their numbers, struct fields keep their
 *     offsets. A minor version only adds: functions, enum values, status codes, flag bits, and
 *     fields at the end of the structs that carry a size.
 *   - Every struct that crosses the boundary and may gain fields has `uint32_t size` as its first
 *     member. The caller sets it to the sizeof it was compiled with, through the struct's
 *     WT_<NAME>_INIT initialiser; the library reads and writes only the fields that fit in
 *     `size`, and fields a smaller struct lacks take their defaults. A `size` smaller than the
 *     struct's first published size is refused (WT_ERR_INVALID_ARGUMENT). An array of such
 *     structs is laid out with the elements' `size` as its stride, so every element carries the
 *     same size, a multiple of the struct's alignment (as sizeof always is). Structs the
 *     library hands out (wt_event in a callback) carry the library's size: read only the fields
 *     your header knows.
 *   - No field or bit is the library's private business except where it is named so
 *     (wt_pick.ticket): pass those back as they came.
 *   - Bindings check wt_version_number() at load and refuse a library of another major version,
 *     or an older minor version than they were built with (it may lack what they call).
 */
#ifndef WEIGHTED_WEIGHTED_H
#define WEIGHTED_WEIGHTED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  if defined(WT_BUILDING_LIBRARY)
#    define WT_API __declspec(dllexport)
#  else
#    define WT_API __declspec(dllimport)
#  endif
#else
#  define WT_API __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------------------------------------
 * Version
 * ------------------------------------------------------------------------------------------- */

#define WT_VERSION_MAJOR 2
#define WT_VERSION_MINOR 3
#define WT_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH (see "Compatibility" above). 2.0 made the structs sized,
 * moved the engine's pick bits out of the flags into wt_pick.ticket, returned keys and user
 * pointers from endpoint sets, and added service removal and the callback release hook.
 * 2.1 added the state file (export.state_file) and the monitor that reads it (wt_monitor_*),
 * WT_ERR_FORMAT, servers' load reports (wt_load_report and the calls that take a header), the
 * status WT_ERR_BAD_LOAD_REPORT and the metric-source events.
 * 2.2 added wt_service_snapshot_json (one service's or one endpoint's part of the snapshot) and
 * the capacity guard's event (WT_EVENT_GUARD).
 * 2.3 added the endpoint states (wt_endpoint_state, with "failing") and their change event
 * (WT_EVENT_STATE_CHANGED). */
#define WT_VERSION_NUMBER (WT_VERSION_MAJOR * 10000 + WT_VERSION_MINOR * 100 + WT_VERSION_PATCH)

/* The version of the library actually loaded, as WT_VERSION_NUMBER computes it. */
WT_API uint32_t wt_version_number(void);
/* The same as "MAJOR.MINOR.PATCH". Static storage; never free it. */
WT_API const char* wt_version_string(void);

/* ---------------------------------------------------------------------------------------------
 * Status codes and errors
 * ------------------------------------------------------------------------------------------- */

typedef enum wt_status {
  WT_OK = 0,
  WT_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, NaN, a negative or absurd value, a bad enum */
  WT_ERR_CONFIG_PARSE = 2,     /* the config is not JSON; the message gives line and column */
  WT_ERR_CONFIG_INVALID = 3,   /* JSON, but a key is unknown or a value has the wrong type or
                                  range; the message gives the JSON path */
  WT_ERR_NOT_FOUND = 4,        /* an unknown service or endpoint id */
  WT_ERR_IO = 5,               /* a config file could not be read */
  WT_ERR_NO_ENDPOINT = 6,      /* pick on a service whose endpoint set is empty */
  WT_ERR_LIMIT = 7,            /* a configured limit (config size, services, endpoints) */
  WT_ERR_WRONG_CLOCK = 8,      /* a manual-clock call on a real-clock engine, or the reverse */
  WT_ERR_STALE = 9,            /* an endpoint key that is not in the service's current set
                                  (removed since the pick, or never issued); a report on it
                                  is counted as stale, not lost */
  WT_ERR_NO_MEMORY = 10,
  WT_ERR_DUPLICATE = 11,       /* the same endpoint id twice in one endpoint set */
  WT_ERR_FORMAT = 12,          /* 2.1: a state file this library does not understand (another
                                  format version, a bad magic, sizes or contents that do not
                                  fit); the message says which check failed */
  WT_ERR_BAD_LOAD_REPORT = 13, /* 2.1: a server's load report header is malformed; the message
                                  says which entry, at which offset, and why */
  WT_ERR_INTERNAL = 99         /* a bug: please report it with the message */
} wt_status;

/* The calling thread's message for its last failed call; "" when the last call succeeded.
 * Owned by the library; valid until the calling thread's next call into the library. */
WT_API const char* wt_last_error(void);
/* A stable name such as "WT_ERR_CONFIG_INVALID"; "WT_UNKNOWN_STATUS" for other values. */
WT_API const char* wt_status_name(int status);
/* The spelling snapshots, Prometheus labels and the bindings use for an outcome ("success",
 * "http_5xx", "timeout", "connect_error", "business_error") or an event type ("weight_changed",
 * "isolated", ...); NULL for a value that is none. Static storage; never free it. */
WT_API const char* wt_outcome_name(int outcome);
WT_API const char* wt_event_type_name(int type);
/* Releases memory that the library returned through a char**. Accepts NULL. The caller may not
 * use it afterwards; the library may keep one large block (a snapshot of tens of thousands of
 * endpoints, 32 MiB or more) for its next snapshot, its pages left for the kernel to reclaim. */
WT_API void wt_free(void* p);

/* ---------------------------------------------------------------------------------------------
 * Config
 *
 * The config is one JSON document shared by C, Java and Python (see docs/config.md and
 * docs/config.schema.json). Every key is optional; absent keys take the default of the chosen
 * "profile" ("default" or "article").
 * ------------------------------------------------------------------------------------------- */

/* Checks a config without creating anything. `len` is the byte length of `json` (it need not be
 * NUL-terminated). Returns WT_OK, WT_ERR_CONFIG_PARSE, WT_ERR_CONFIG_INVALID or WT_ERR_LIMIT. */
WT_API wt_status wt_config_validate(const char* json, size_t len);

/* Writes the fully resolved config (every key, defaults filled in) as JSON to *out_json. */
WT_API wt_status wt_config_resolve(const char* json, size_t len, char** out_json);

/* ---------------------------------------------------------------------------------------------
 * Engine
 * ------------------------------------------------------------------------------------------- */

typedef struct wt_engine wt_engine;
typedef struct wt_service wt_service;

typedef enum wt_clock_mode {
  /* The engine reads a monotonic clock and runs its controller on a thread of its own. */
  WT_CLOCK_REAL = 0,
  /* Time starts at 0 and moves only through wt_engine_advance(); the controller cycles that fall
   * due run inside that call, on the caller's thread. With the same config, calls and seed the
   * engine then behaves identically from run to run: tests and the simulator use this. */
  WT_CLOCK_MANUAL = 1
} wt_clock_mode;

/* Creates an engine from config JSON text. On success *out owns a new engine. */
WT_API wt_status wt_engine_create(const char* json, size_t len, int clock_mode, wt_engine** out);
/* The same, reading the config from a file. */
WT_API wt_status wt_engine_create_from_file(const char* path, int clock_mode, wt_engine** out);
/* Stops the controller, frees every service and endpoint. Accepts NULL. Must not race with any
 * other call on the same engine; every wt_service* of this engine is invalid afterwards. */
WT_API void wt_engine_destroy(wt_engine* engine);

/* Replaces the config at run time. An invalid config is rejected with its message and the old
 * one stays in force, as is one whose limits the engine already exceeds (more services than
 * limits.max_services, or a set larger than limits.max_endpoints_per_service: WT_ERR_LIMIT).
 * Endpoint state (windows, weights, isolation) is kept across a reload. */
WT_API wt_status wt_engine_reload(wt_engine* engine, const char* json, size_t len);
WT_API wt_status wt_engine_reload_from_file(wt_engine* engine, const char* path);

/* The engine's current time in nanoseconds (monotonic; 0 at creation in manual mode). */
WT_API wt_status wt_engine_now(wt_engine* engine, int64_t* out_ns);

/* Manual clock only: moves time forward by `delta_ns` (>= 0) and runs, in order and at their
 * exact times, every controller cycle that falls due. Event callbacks run on this thread. A
 * delta over which more than 1 000 000 cycles fall due is refused (WT_ERR_INVALID_ARGUMENT,
 * nothing runs): advance in steps. */
WT_API wt_status wt_engine_advance(wt_engine* engine, int64_t delta_ns);

/* Runs one controller cycle now, whatever the clock mode (for tools and tests). */
WT_API wt_status wt_engine_run_cycle(wt_engine* engine);

/* Looks up a service by name, creating it (with no endpoints) if it does not exist yet.
 * The handle is owned by the engine and stays valid until wt_service_remove() or
 * wt_engine_destroy(). Names are 1..256 bytes of UTF-8. */
WT_API wt_status wt_engine_service(wt_engine* engine, const char* name, wt_service** out);

/* Removes a service from its engine: it leaves snapshots and exports, its endpoints and their
 * state are dropped, its endpoint sets' user pointers are released (wt_endpoints_options), and a
 * WT_EVENT_SERVICE_REMOVED event is raised. The handle is invalid once this returns: like
 * wt_engine_destroy() for the engine, it must not race with other calls on the same handle
 * (calls on other services may run meanwhile). A later wt_engine_service() with the same name
 * creates a new, empty service. */
WT_API wt_status wt_service_remove(wt_service* service);

/* ---------------------------------------------------------------------------------------------
 * Endpoints (discovery updates)
 * ------------------------------------------------------------------------------------------- */

typedef struct wt_endpoint_spec {
  uint32_t size;      /* sizeof(wt_endpoint_spec): WT_ENDPOINT_SPEC_INIT sets it */
  const char* id;     /* unique in the set, 1..256 bytes of UTF-8; e.g. "10.0.0.7:8080" */
  double base_weight; /* > 0 and finite; from discovery metadata */
  void* user;         /* the caller's own, returned in wt_pick.user by picks of this endpoint made
                         from this set (e.g. the caller's object for the endpoint); may be NULL */
} wt_endpoint_spec;
#define WT_ENDPOINT_SPEC_INIT {sizeof(wt_endpoint_spec), NULL, 0.0, NULL}

/* Called once for each non-NULL user pointer of an installed endpoint set, once no pick can
 * return it any more: after a later set replaced the set and every pick that read it has
 * returned, or at wt_service_remove() / wt_engine_destroy(). It runs on whichever thread frees
 * the set (the controller's, a writer's), possibly while the engine holds internal locks: it must
 * not call into the library. */
typedef void (*wt_release_fn)(void* user);

typedef struct wt_endpoints_options {
  uint32_t size;              /* sizeof(wt_endpoints_options): WT_ENDPOINTS_OPTIONS_INIT */
  wt_release_fn release_user; /* NULL: the engine never releases the specs' user pointers, and
                                 the caller keeps them valid while picks may return them */
} wt_endpoints_options;
#define WT_ENDPOINTS_OPTIONS_INIT {sizeof(wt_endpoints_options), NULL}

/* Replaces the service's endpoint set. Endpoints whose id stays keep all their state (windows,
 * weight, isolation) and take the new base weight; removed ones are dropped (reports on them
 * then return WT_ERR_STALE); new ones start in slow start, except in a service's first
 * non-empty set. An empty set is allowed: picks then return WT_ERR_NO_ENDPOINT.
 * The position of each spec in `specs` is the `index` that wt_pick reports. `options` may be
 * NULL (no release). On success, when not NULL: out_keys[i] receives the key the engine assigned
 * to specs[i] (`count` entries; the key of an endpoint that stays is the one it had), and
 * *out_epoch the epoch of the set installed (the `epoch` of picks from it), exact even when other
 * callers set endpoints meanwhile. On failure the engine keeps none of the user pointers. */
WT_API wt_status wt_service_set_endpoints(wt_service* service, const wt_endpoint_spec* specs,
                                          size_t count, const wt_endpoints_options* options,
                                          uint64_t* out_keys, uint64_t* out_epoch);

/* The key of an endpoint by id (for wt_service_report_key). */
WT_API wt_status wt_service_endpoint_key(wt_service* service, const char* id, uint64_t* out_key);

/* Copies the id of the endpoint with `key` into buf (NUL-terminated). *out_len receives the id's
 * length without the NUL (at most 256); if cap is too small nothing is copied and
 * WT_ERR_INVALID_ARGUMENT is returned with *out_len set. */
WT_API wt_status wt_service_endpoint_id(wt_service* service, uint64_t key, char* buf, size_t cap,
                                        size_t* out_len);

/* ---------------------------------------------------------------------------------------------
 * Pick and report (the hot path: no global lock; safe from any number of threads)
 * ------------------------------------------------------------------------------------------- */

enum {
  WT_PICK_PROBE = 1u << 0,   /* the endpoint is half-isolated; this request is a probe */
  WT_PICK_PANIC = 1u << 1,   /* the service is in panic: plain round-robin over all endpoints */
  WT_PICK_TRACKED = 1u << 2  /* an in-flight count was taken: finish with complete or cancel.
                              * A count not finished by the start of the second controller
                              * cycle after the pick expires, so a pick that is lost (never
                              * completed nor cancelled) skews load-aware picks for one to two
                              * controller.interval_ms at most, and needs no finalizer. */
};

typedef struct wt_pick {
  uint32_t size;   /* in: sizeof(wt_pick), set by WT_PICK_INIT */
  uint32_t flags;  /* WT_PICK_* bits */
  uint64_t key;    /* the endpoint, for wt_service_complete(); stable while it stays in the set */
  uint64_t epoch;  /* which endpoint set `index` refers to (1, 2, ...: see out_epoch) */
  uint32_t index;  /* position of the endpoint in the specs array of that set */
  uint32_t ticket; /* the engine's (which controller cycle counted a tracked pick): pass it back
                      unchanged */
  void* user;      /* the user pointer of the endpoint's spec in that set */
} wt_pick;
#define WT_PICK_INIT {sizeof(wt_pick), 0, 0, 0, 0, 0, NULL}

/* Chooses an endpoint. Returns WT_ERR_NO_ENDPOINT when the set is empty. `out->size` must be set
 * (WT_PICK_INIT). out->user may be released (wt_endpoints_options) as soon as this returns, if
 * another thread replaces the set meanwhile: a caller whose user pointers can be released picks
 * with wt_service_pick_pinned() instead. */
WT_API wt_status wt_service_pick(wt_service* service, wt_pick* out);

/* Called by wt_service_pick_pinned() with the picked endpoint's user pointer (never NULL) while
 * the set it came from cannot be released: take a reference of your own here (an atomic count, a
 * JNI local reference, Py_INCREF). Runs on the calling thread; it must not call into the library. */
typedef void (*wt_pin_fn)(void* ctx, void* user);

/* As wt_service_pick(), and pins out->user with pin(ctx, user) when it is not NULL. pin runs
 * after *out is filled (ctx may point at out to read the pick's epoch, index or flags). */
WT_API wt_status wt_service_pick_pinned(wt_service* service, wt_pick* out, wt_pin_fn pin,
                                        void* ctx);

typedef enum wt_outcome {
  WT_OUTCOME_SUCCESS = 0,
  WT_OUTCOME_HTTP_5XX = 1,      /* the server answered with a 5xx status */
  WT_OUTCOME_TIMEOUT = 2,       /* the request or the connection timed out */
  WT_OUTCOME_CONNECT_ERROR = 3, /* refused, reset, unreachable */
  WT_OUTCOME_BUSINESS_ERROR = 4 /* the call "succeeded" but carried a business error code */
} wt_outcome;
#define WT_OUTCOME_COUNT 5

/* Maps an HTTP status to an outcome: 500..599 is WT_OUTCOME_HTTP_5XX, anything else success
 * (a 4xx is the caller's fault, not the endpoint's). */
WT_API int wt_outcome_from_http_status(int http_status);

/* Finishes a pick (passed back as the pick call wrote it): records the outcome and, if the pick
 * was WT_PICK_TRACKED, releases its in-flight count. `latency_ms` must be finite, >= 0 and at
 * most the config's limits.max_latency_ms. Returns WT_ERR_STALE if the endpoint was removed
 * meanwhile.
 *
 * Each pick is finished at most once: by one wt_service_complete() or one wt_service_cancel()
 * that returns WT_OK or WT_ERR_STALE. After any other status the pick is still unfinished:
 * finish it then (a complete with a valid latency, or a cancel). Copies of a wt_pick are the
 * same pick. The engine does not detect a second finish and does not refuse it; it acts on it as
 * on the first:
 *   - a wt_service_complete() of a finished pick records its outcome all the same: after a
 *     complete, the endpoint's totals, window and error rate count one request twice;
 *   - a second finish of a WT_PICK_TRACKED pick, by either call, takes its in-flight count off
 *     again, as long as the count has not expired (until the second controller cycle after the
 *     pick begins). That count belongs to another request still in flight, so the endpoint looks
 *     less loaded to load-aware picks; the in-flight count read back (snapshots, picks) clamps at
 *     zero, and the error wears off when the counts expire.
 * A binding may refuse the second finish itself: Python's Pick does (InvalidArgumentError,
 * without calling the engine). */
WT_API wt_status wt_service_complete(wt_service* service, const wt_pick* pick, double latency_ms,
                                     int outcome);
/* Finishes a pick without an outcome (the request was never sent). At most once per pick, as
 * wt_service_complete() says: a cancel after a finish takes a tracked pick's in-flight count off
 * again. */
WT_API wt_status wt_service_cancel(wt_service* service, const wt_pick* pick);

/* Records an outcome observed elsewhere (a metrics pipeline, a circuit breaker's event stream):
 * no in-flight count is touched. By endpoint key or by id. */
WT_API wt_status wt_service_report_key(wt_service* service, uint64_t key, double latency_ms,
                                       int outcome);
WT_API wt_status wt_service_report(wt_service* service, const char* endpoint_id,
                                   double latency_ms, int outcome);

typedef struct wt_report {
  uint32_t size;  /* sizeof(wt_report): WT_REPORT_INIT; the array's stride */
  int32_t outcome;
  uint64_t key;
  double latency_ms;
  int32_t status; /* out: the wt_status of this entry */
} wt_report;
#define WT_REPORT_INIT {sizeof(wt_report), 0, 0, 0.0, 0}

/* Records many outcomes at once (as wt_service_report_key each). Returns WT_OK if every entry
 * was recorded, else the first failing entry's status; each entry's own status is written
 * back, and valid entries are recorded even when others fail. Every entry must carry the size
 * of the first (else WT_ERR_INVALID_ARGUMENT, nothing recorded). *out_recorded may be NULL. */
WT_API wt_status wt_service_report_batch(wt_service* service, wt_report* reports, size_t count,
                                         size_t* out_recorded);

enum {
  WT_RES_CPU = 1u << 0,
  WT_RES_MEMORY = 1u << 1,
  WT_RES_THREAD_POOL = 1u << 2,    /* active threads / pool size */
  WT_RES_CONNECTION_POOL = 1u << 3 /* connections in use / pool size */
};

typedef struct wt_resources {
  uint32_t size;    /* sizeof(wt_resources): WT_RESOURCES_INIT */
  uint32_t present; /* WT_RES_* bits: which of the fields below carry a value */
  double cpu;
  double memory;
  double thread_pool;
  double connection_pool;
} wt_resources;
#define WT_RESOURCES_INIT {sizeof(wt_resources), 0, 0.0, 0.0, 0.0, 0.0}

/* Records a resource sample for an endpoint; each present field must be in [0, 1]. Samples are
 * averaged over the sliding window. */
WT_API wt_status wt_service_report_resources(wt_service* service, const char* endpoint_id,
                                             const wt_resources* resources);

/* ---------------------------------------------------------------------------------------------
 * Servers' load reports (2.1)
 *
 * A server that knows its own load says so on each response, in the `endpoint-load-metrics`
 * header gRPC, Envoy and vLLM use over HTTP (ORCA; fields of xds.data.orca.v3.OrcaLoadReport):
 *   TEXT cpu_utilization=0.3, mem_utilization=0.5, rps_fractional=120, eps=2,
 *        named_metrics.thread_pool=0.9
 *   JSON {"cpu_utilization": 0.3, "named_metrics": {"thread_pool": 0.9}}
 * cpu_utilization feeds cpu (capped at 1: ORCA lets it pass a soft limit), mem_utilization
 * memory, and the named_metrics or utilization entries the config names
 * (load_report.thread_pool_metric, load_report.connection_pool_metric) the two pools. Values
 * reported so are the server's: they feed the same window as wt_service_report_resources, and
 * load_report.prefer says which of the two the rules read when both are fresh; one older than
 * load_report.max_age_ms is not used. Pass the header's value only, without its name. A value
 * over 4096 bytes or with more than 64 metrics is refused, so a parse is bounded.
 * ------------------------------------------------------------------------------------------- */

enum {
  WT_LOAD_RPS = 1u << 4, /* wt_load_report.rps carries a value (beside the WT_RES_* bits) */
  WT_LOAD_EPS = 1u << 5  /* wt_load_report.eps carries a value */
};

typedef struct wt_load_report {
  uint32_t size;    /* sizeof(wt_load_report): WT_LOAD_REPORT_INIT */
  uint32_t present; /* WT_RES_* and WT_LOAD_* bits: which fields below carry a value */
  double cpu;       /* fractions in [0, 1] */
  double memory;
  double thread_pool;
  double connection_pool;
  double rps;       /* the server's own requests per second (rps_fractional, else rps) */
  double eps;       /* and errors per second */
} wt_load_report;
#define WT_LOAD_REPORT_INIT {sizeof(wt_load_report), 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}

/* Parses a header value under the engine's config (which named metrics are the pools and the
 * server's latency, load_report.latency_metric) without recording anything, accepting exactly
 * what recording accepts: the latency is checked (milliseconds within limits.max_latency_ms)
 * though this struct has no field for it. WT_ERR_BAD_LOAD_REPORT names the entry, its byte
 * offset and the reason. */
WT_API wt_status wt_engine_parse_load_report(wt_engine* engine, const char* header, size_t len,
                                             wt_load_report* out);

/* wt_service_complete() and, when `header` is not NULL and `len` > 0, the response's load report
 * recorded for the same endpoint: one call per response. A malformed report is counted (the
 * snapshot's bad_load_reports) and returns WT_ERR_BAD_LOAD_REPORT with its message; the pick is
 * finished and its outcome recorded all the same (the one exception to "state as it was": the
 * outcome is what the caller observed, the report only what the server said). Any other error
 * is complete()'s, and then nothing is recorded. */
WT_API wt_status wt_service_complete_with_load(wt_service* service, const wt_pick* pick,
                                               double latency_ms, int outcome,
                                               const char* header, size_t len);

/* Records a load report for the endpoint with `key` (for a response seen elsewhere). */
WT_API wt_status wt_service_report_load_key(wt_service* service, uint64_t key,
                                            const char* header, size_t len);

/* ---------------------------------------------------------------------------------------------
 * Events
 * ------------------------------------------------------------------------------------------- */

typedef enum wt_event_type {
  WT_EVENT_WEIGHT_CHANGED = 1,
  WT_EVENT_ISOLATED = 2,        /* penalty reached the isolation level: probe traffic only */
  WT_EVENT_RESTORED = 3,        /* healthy probe results: the endpoint left isolation */
  WT_EVENT_FORCED_RESTORE = 4,  /* alert: max isolation time ran out; forced back to a share
                                   of its base weight without healthy probes. Needs a human. */
  WT_EVENT_PANIC_ENTER = 5,     /* every weight fell below the panic threshold */
  WT_EVENT_PANIC_EXIT = 6,
  WT_EVENT_ENDPOINT_ADDED = 7,
  WT_EVENT_ENDPOINT_REMOVED = 8,
  WT_EVENT_CONFIG_RELOADED = 9,
  WT_EVENT_SERVICE_REMOVED = 10, /* wt_service_remove(); `endpoint` is "" */
  /* 2.1: a metric source of the engine's (config `sources`) has had no successful poll for its
   * stale_ms, and the first successful poll after that. `service` and `endpoint` are "";
   * `reason` is {"source": "prometheus", "age_ms": ..., "error": "..."}. */
  WT_EVENT_SOURCE_STALE = 11,
  WT_EVENT_SOURCE_FRESH = 12,
  /* 2.2: the service's error rate over budget.window_ms went above budget.max_error_rate, and
   * the first cycle it was back within it. `endpoint` is ""; `reason` is {"max_error_rate",
   * "observed_error_rate", "window_ms", "results", "failures", "error_cost" (the price the
   * picker now puts on failures), "limited" (true: the price is at budget.max_error_cost, the
   * budget cannot be met and errors are being minimised)}. */
  WT_EVENT_BUDGET_MISSED = 13,
  WT_EVENT_BUDGET_MET = 14,
  /* 2.2: the capacity guard held back some of a cycle's cuts or isolations (the endpoints that
   * keep their traffic could not absorb it), or stopped holding them: raised when the number of
   * endpoints held changes. `endpoint` is ""; `reason` is {"held": n, "endpoints": [ids],
   * "headroom_rps", "moved_rps", "max_utilization"}. */
  WT_EVENT_GUARD = 15,
  /* 2.3: an endpoint's state (wt_endpoint_state) changed in a cycle without an isolation,
   * restore or forced restore (those events say so themselves). `reason` is the judgement, as
   * for WT_EVENT_WEIGHT_CHANGED: {"penalty", "requests", "known", "rules", "share", "picker",
   * "state" (the new one), "evidence" ("window", "held", "none", "last_cycle"), "failing"}. */
  WT_EVENT_STATE_CHANGED = 16
} wt_event_type;

/* 2.3: an endpoint's state, as the snapshot's "state" names it (docs/algorithm.md). An endpoint
 * without enough evidence to judge is not a state of its own: its snapshot says "known": false
 * and "judgement.evidence": "none". */
typedef enum wt_endpoint_state {
  WT_STATE_HEALTHY = 0,     /* no rule fires; weight at base */
  WT_STATE_DEGRADED = 1,    /* latency or resource rules fire: weight cut */
  WT_STATE_ISOLATED = 2,    /* penalty reached 1: probe traffic only */
  WT_STATE_RECOVERING = 3,  /* no rule fires; weight stepping back up to base */
  WT_STATE_FAILING = 4      /* failure-rate rules fire: cut and avoided because it fails */
} wt_endpoint_state;

typedef struct wt_event {
  uint32_t size;         /* callbacks: the library's sizeof(wt_event); polls: set by the caller
                            (WT_EVENT_INIT) */
  int32_t type;          /* wt_event_type */
  int64_t time_ns;
  const char* service;
  const char* endpoint;  /* "" for service- and engine-wide events */
  double old_weight;
  double new_weight;
  const char* reason;    /* JSON object: the rules that fired, on which values */
} wt_event;
#define WT_EVENT_INIT {sizeof(wt_event), 0, 0, NULL, NULL, 0.0, 0.0, NULL}

/* Called for every event, in order: from the controller thread (real clock), from the thread
 * inside wt_engine_advance()/wt_engine_run_cycle() (after the cycles it ran), or from the thread
 * whose wt_service_set_endpoints()/wt_engine_reload() caused the event, or (2.1) from the
 * thread of the metric source whose freshness changed (WT_EVENT_SOURCE_*). It runs after the engine
 * has released its locks, so it may pick, report, advance or reload; events those calls raise are
 * delivered after the running callback returns, in order, on the same thread. It must not call
 * wt_engine_destroy(); wt_engine_set_event_callback() from inside it is refused
 * (WT_ERR_INVALID_ARGUMENT). Calls are serialised on the callback.
 * The event and its strings are valid only during the call. NULL removes the callback.
 * `release` (may be NULL) is called once with `user` after the last call of `fn` with it: when a
 * later wt_engine_set_event_callback() replaces it (after a call running then has returned), or
 * at wt_engine_destroy(). */
typedef void (*wt_event_fn)(void* user, const wt_event* event);
WT_API wt_status wt_engine_set_event_callback(wt_engine* engine, wt_event_fn fn, void* user,
                                              wt_release_fn release);

/* Takes the oldest queued event. `out->size` must be set (WT_EVENT_INIT). Returns WT_OK with
 * *out_has_event = 1 and *out filled, or
 * *out_has_event = 0 when the queue is empty. The strings in *out belong to the calling thread:
 * they stay valid until this thread's next wt_engine_poll_event() on this engine, whatever other
 * threads poll meanwhile (and at most until the engine's destruction). The queue holds
 * events.queue_capacity events; older ones are dropped and counted in the snapshot. */
WT_API wt_status wt_engine_poll_event(wt_engine* engine, wt_event* out, int* out_has_event);

/* ---------------------------------------------------------------------------------------------
 * Observability
 * ------------------------------------------------------------------------------------------- */

/* All state as JSON (weights, targets, penalties with per-rule contributions, states, window
 * statistics, lifetime totals); free *out_json with wt_free(). *out_len may be NULL.
 * Weights, penalties, states and window statistics (resources included) are the controller's
 * view as of its last cycle; lifetime totals and in-flight counts are live. */
WT_API wt_status wt_engine_snapshot_json(wt_engine* engine, char** out_json, size_t* out_len);
/* The same in Prometheus text exposition format 0.0.4. */
WT_API wt_status wt_engine_prometheus(wt_engine* engine, char** out_text, size_t* out_len);
/* 2.2: the snapshot of one service, or of one of its endpoints: the document
 * wt_engine_snapshot_json writes (same keys, same head and sources), with "services" holding only
 * this service and, when endpoint_id is not NULL, its "endpoints" only that endpoint (with its
 * index in the set). Costs what the part costs, not what the engine holds. endpoint_id not in
 * the set: WT_ERR_NOT_FOUND. Free *out_json with wt_free(); *out_len may be NULL. */
WT_API wt_status wt_service_snapshot_json(wt_service* service, const char* endpoint_id,
                                          char** out_json, size_t* out_len);

/* ---------------------------------------------------------------------------------------------
 * Monitor (2.1): read another process's engine through its state file
 *
 * With export.state_file set in its config, an engine publishes its state to that file: the
 * snapshot JSON, one history point per controller cycle and a ring of recent events
 * (docs/state-file.md). A monitor reads it from any process, any number at once; it never
 * blocks the writer and never returns a torn state. Everything in the file is checked before it
 * is used: a truncated, corrupted or hostile file is an error (WT_ERR_FORMAT, the message says
 * which check failed), never a crash. A writer that died leaves its last state readable.
 * Calls on one monitor may come from any thread (they are serialised); every JSON text returned
 * is owned by the caller (wt_free). *out_len may be NULL.
 * ------------------------------------------------------------------------------------------- */

typedef struct wt_monitor wt_monitor;

/* Opens the state file at `path` read-only. WT_ERR_IO: it cannot be opened; WT_ERR_FORMAT: it
 * is not a state file of a format this library reads. The monitor follows the file when the
 * writer replaces it (it grows by renaming a new file over the path). */
WT_API wt_status wt_monitor_open(const char* path, wt_monitor** out);
/* Opens the state file that `engine` itself writes (the path its config gives, placeholders
 * filled in), as wt_monitor_open would: for a service that serves its own file over HTTP.
 * WT_ERR_NOT_FOUND: the engine's config sets no export.state_file. A monitor opened before a
 * reload that moves the file keeps reading the old one (open another). */
WT_API wt_status wt_monitor_open_engine(wt_engine* engine, wt_monitor** out);
/* Accepts NULL. */
WT_API void wt_monitor_close(wt_monitor* monitor);

/* The engine's snapshot as its writer last published it: the text wt_engine_snapshot_json
 * returned in the writer's process. WT_ERR_NOT_FOUND before the writer's first publication. */
WT_API wt_status wt_monitor_snapshot_json(wt_monitor* monitor, char** out_json, size_t* out_len);

/* {"interval_ms": ..., "next": N, "points": [...]}: the history points numbered after `since`
 * (0: every point kept), at most the newest `max_points` of them (0: no limit), oldest first.
 * Each point is {"n", "time_ns", "unix_ms", "columns", "services": [{"name", "panic",
 * "endpoints": [[id, state, weight, share, measured, penalty], ...]}]} (null where the snapshot
 * lacks a field). Pass `next` back as `since` to read only newer points. */
WT_API wt_status wt_monitor_history_json(wt_monitor* monitor, uint64_t since, size_t max_points,
                                         char** out_json, size_t* out_len);

/* {"next": N, "lost": L, "reset": bool, "events": [...]}: the events numbered after `cursor`
 * (0: every event kept), at most `max_events` (0: no limit), oldest first. Each event is
 * {"n", "time_ns", "type", "service", "endpoint", "old_weight", "new_weight", "reason"}. `lost`
 * counts events overwritten in the ring before they were read; `reset` says `cursor` was beyond
 * the file's newest event (a restarted writer) and reading began again from its oldest. */
WT_API wt_status wt_monitor_events_json(wt_monitor* monitor, uint64_t cursor, size_t max_events,
                                        char** out_json, size_t* out_len);

/* {"path", "format", "service", "pid", "state": "running" | "closed" | "gone", "writer_alive",
 * "library_version", "interval_ms", "created_unix_ms", "last_write_unix_ms", "age_ms",
 * "snapshots", "history_points", "history_slots", "events", "event_slots", "file_bytes"}.
 * "gone": the file says running but its pid is not (the writer was killed). */
WT_API wt_status wt_monitor_info_json(wt_monitor* monitor, char** out_json, size_t* out_len);

#ifdef __cplusplus
}
#endif

#endif /* WEIGHTED_WEIGHTED_H */
