/* Exercises every function of the public header from plain C99 (RocksDB's db/c_test.c). The
 * header itself must compile cleanly as C with -pedantic -Werror: this file is built that way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weighted/weighted.h"

static int failures = 0;
#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__,    \
              __LINE__, #cond, wt_last_error());                                \
      ++failures;                                                               \
    }                                                                           \
  } while (0)

static int events_seen = 0;
static void on_event(void* user, const wt_event* ev) {
  (void)user;
  if (ev->size >= sizeof(wt_event) && ev->type > 0 && ev->service != NULL) ++events_seen;
}

/* Counts releases of the user pointers below (each points at its own counter). */
static void release_counter(void* user) { ++*(int*)user; }
static void pin_counter(void* ctx, void* user) {
  (void)user;
  ++*(int*)ctx;
}

int main(void) {
  const char* cfg = "{\"seed\": 3, \"picker\": {\"mode\": \"weighted\"}, \"rules\": [{\"metric\": "
                    "\"error_rate\", \"threshold\": 0.01, \"penalty\": 1.0}]}";
  wt_engine* e = NULL;
  wt_service* s = NULL;
  wt_pick pick = WT_PICK_INIT;
  wt_event ev = WT_EVENT_INIT;
  int has = 0, i;
  int released[3] = {0, 0, 0}, callback_released = 0, pins = 0;
  char* text = NULL;
  char id[64];
  size_t len = 0, recorded = 0;
  uint64_t key = 0;
  uint64_t epoch = 0, keys[3] = {0, 0, 0};
  int64_t now = 0;
  wt_resources res = WT_RESOURCES_INIT;
  wt_load_report load = WT_LOAD_REPORT_INIT;
  const char* header = "TEXT cpu_utilization=0.4, named_metrics.thread_pool=0.5, eps=1";
  wt_report batch[2] = {WT_REPORT_INIT, WT_REPORT_INIT};
  wt_endpoint_spec eps[3] = {WT_ENDPOINT_SPEC_INIT, WT_ENDPOINT_SPEC_INIT, WT_ENDPOINT_SPEC_INIT};
  wt_endpoints_options options = WT_ENDPOINTS_OPTIONS_INIT;

  CHECK(wt_version_number() == WT_VERSION_NUMBER);
  CHECK(strcmp(wt_version_string(), "2.3.0") == 0);
  CHECK(strcmp(wt_status_name(WT_ERR_CONFIG_PARSE), "WT_ERR_CONFIG_PARSE") == 0);
  CHECK(strcmp(wt_outcome_name(WT_OUTCOME_HTTP_5XX), "http_5xx") == 0);
  CHECK(wt_outcome_name(WT_OUTCOME_COUNT) == NULL);
  CHECK(strcmp(wt_event_type_name(WT_EVENT_ISOLATED), "isolated") == 0);
  CHECK(wt_event_type_name(0) == NULL);
  CHECK(wt_config_validate(cfg, strlen(cfg)) == WT_OK);
  CHECK(wt_config_validate("{\"nope\": 1}", 11) == WT_ERR_CONFIG_INVALID);
  CHECK(strstr(wt_last_error(), "nope") != NULL);
  CHECK(wt_config_resolve(cfg, strlen(cfg), &text) == WT_OK && strstr(text, "\"profile\"") != NULL);
  wt_free(text);

  CHECK(wt_engine_create(cfg, strlen(cfg), WT_CLOCK_MANUAL, &e) == WT_OK);
  CHECK(wt_engine_set_event_callback(e, on_event, &callback_released, release_counter) == WT_OK);
  CHECK(wt_engine_service(e, "orders", &s) == WT_OK);
  eps[0].id = "a"; eps[0].base_weight = 1; eps[0].user = &released[0];
  eps[1].id = "b"; eps[1].base_weight = 1; eps[1].user = &released[1];
  eps[2].id = "c"; eps[2].base_weight = 2; eps[2].user = &released[2];
  options.release_user = release_counter;
  CHECK(wt_service_set_endpoints(s, eps, 3, &options, keys, NULL) == WT_OK);
  CHECK(wt_service_endpoint_key(s, "b", &key) == WT_OK && key == keys[1]);

  for (i = 0; i < 1000; ++i) {
    CHECK(wt_engine_advance(e, 5000000) == WT_OK); /* 5 ms */
    CHECK(wt_service_pick(s, &pick) == WT_OK);
    CHECK(pick.index < 3 && pick.epoch == 1 && pick.user == &released[pick.index]);
    CHECK(wt_service_complete(s, &pick, 10.0, pick.index == 0 ? WT_OUTCOME_HTTP_5XX
                                                               : WT_OUTCOME_SUCCESS) == WT_OK);
  }
  CHECK(wt_engine_now(e, &now) == WT_OK && now == 5000000000LL);
  CHECK(events_seen > 0);
  CHECK(wt_engine_poll_event(e, &ev, &has) == WT_OK && has == 1);
  CHECK(ev.type == WT_EVENT_ENDPOINT_ADDED && strcmp(ev.endpoint, "a") == 0);

  res.present = WT_RES_CPU | WT_RES_MEMORY;  /* size: WT_RESOURCES_INIT */
  res.cpu = 0.5; res.memory = 0.25; res.thread_pool = 0; res.connection_pool = 0;
  CHECK(wt_service_report_resources(s, "b", &res) == WT_OK);
  CHECK(wt_service_report(s, "b", 3.0, WT_OUTCOME_SUCCESS) == WT_OK);
  CHECK(wt_service_report(s, "b", NAN, WT_OUTCOME_SUCCESS) == WT_ERR_INVALID_ARGUMENT);
  CHECK(wt_service_endpoint_key(s, "c", &key) == WT_OK);
  CHECK(wt_service_endpoint_id(s, key, id, sizeof id, &len) == WT_OK && strcmp(id, "c") == 0);
  CHECK(wt_service_report_key(s, key, 1.0, WT_OUTCOME_TIMEOUT) == WT_OK);
  batch[0].key = key; batch[0].latency_ms = 2; batch[0].outcome = 0;
  batch[1].key = key; batch[1].latency_ms = 2; batch[1].outcome = 0;
  CHECK(wt_service_report_batch(s, batch, 2, &recorded) == WT_OK && recorded == 2);
  /* 2.1: a server's load report, parsed alone, with a completion, and by key. */
  CHECK(wt_engine_parse_load_report(e, header, strlen(header), &load) == WT_OK);
  CHECK(load.present == (WT_RES_CPU | WT_RES_THREAD_POOL | WT_LOAD_EPS) && load.cpu == 0.4);
  CHECK(wt_engine_parse_load_report(e, "TEXT x=1", 8, &load) == WT_ERR_BAD_LOAD_REPORT);
  CHECK(strstr(wt_last_error(), "\"x\" is not a field") != NULL);
  CHECK(strcmp(wt_status_name(WT_ERR_BAD_LOAD_REPORT), "WT_ERR_BAD_LOAD_REPORT") == 0);
  CHECK(wt_service_pick(s, &pick) == WT_OK);
  CHECK(wt_service_complete_with_load(s, &pick, 4.0, WT_OUTCOME_SUCCESS, header,
                                      strlen(header)) == WT_OK);
  CHECK(wt_service_report_load_key(s, key, header, strlen(header)) == WT_OK);
  CHECK(strcmp(wt_event_type_name(WT_EVENT_SOURCE_STALE), "source_stale") == 0);
  CHECK(wt_service_pick_pinned(s, &pick, pin_counter, &pins) == WT_OK && pins == 1);
  CHECK(wt_service_cancel(s, &pick) == WT_OK);
  CHECK(released[0] + released[1] + released[2] == 0); /* the set is still in force */
  CHECK(wt_service_set_endpoints(s, eps, 3, NULL, NULL, &epoch) == WT_OK && epoch == 2);
  CHECK(released[0] == 1 && released[1] == 1 && released[2] == 1); /* the first set's, once */
  CHECK(wt_service_pick(s, &pick) == WT_OK && pick.epoch == epoch);
  CHECK(wt_service_cancel(s, &pick) == WT_OK);
  pick.size = 8; /* a struct that is too small is refused, not overrun */
  CHECK(wt_service_pick(s, &pick) == WT_ERR_INVALID_ARGUMENT);
  pick.size = sizeof pick;
  CHECK(wt_engine_run_cycle(e) == WT_OK);

  CHECK(wt_engine_snapshot_json(e, &text, &len) == WT_OK && len == strlen(text));
  CHECK(strstr(text, "\"isolated\"") != NULL); /* "a" answered only 5xx */
  wt_free(text);
  /* 2.2: one service's part, one endpoint's part. */
  CHECK(wt_service_snapshot_json(s, NULL, &text, &len) == WT_OK && len == strlen(text));
  CHECK(strstr(text, "\"id\":\"b\"") != NULL && strstr(text, "\"id\":\"c\"") != NULL);
  wt_free(text);
  CHECK(wt_service_snapshot_json(s, "c", &text, &len) == WT_OK);
  CHECK(strstr(text, "\"id\":\"c\"") != NULL && strstr(text, "\"id\":\"b\"") == NULL);
  wt_free(text);
  CHECK(wt_service_snapshot_json(s, "nope", &text, &len) == WT_ERR_NOT_FOUND);
  CHECK(wt_engine_prometheus(e, &text, NULL) == WT_OK);
  CHECK(strstr(text, "weighted_endpoint_weight{service=\"orders\",endpoint=\"c\"}") != NULL);
  wt_free(text);

  CHECK(wt_engine_reload(e, "{\"profile\": \"article\"}", 22) == WT_OK);
  CHECK(wt_engine_reload(e, "{\"profile\": 1}", 14) == WT_ERR_CONFIG_INVALID);
  CHECK(wt_engine_reload_from_file(e, "/nonexistent.json") == WT_ERR_IO);
  CHECK(wt_outcome_from_http_status(502) == WT_OUTCOME_HTTP_5XX);
  CHECK(wt_service_remove(s) == WT_OK);
  CHECK(wt_engine_poll_event(e, &ev, &has) == WT_OK);
  CHECK(wt_engine_set_event_callback(e, NULL, NULL, NULL) == WT_OK);
  CHECK(callback_released == 1);
  wt_engine_destroy(e);
  wt_engine_destroy(NULL);
  CHECK(wt_engine_create_from_file("/nonexistent.json", WT_CLOCK_REAL, &e) == WT_ERR_IO);

  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("c_test: all checks passed\n");
  return 0;
}
