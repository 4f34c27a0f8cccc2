/* The README's C example, compiled and run by the tests: pick, report, look. */
#include <stdio.h>
#include <weighted/weighted.h>

static int fail(const char* what) {
  fprintf(stderr, "%s: %s\n", what, wt_last_error());
  return 1;
}

int main(void) {
  wt_engine* engine;
  wt_service* svc;
  wt_endpoint_spec eps[2] = {WT_ENDPOINT_SPEC_INIT, WT_ENDPOINT_SPEC_INIT};
  eps[0].id = "10.0.0.1:8080", eps[0].base_weight = 100;
  eps[1].id = "10.0.0.2:8080", eps[1].base_weight = 100;
  if (wt_engine_create("{}", 2, WT_CLOCK_REAL, &engine) != WT_OK) return fail("create");
  if (wt_engine_service(engine, "orders", &svc) != WT_OK) return fail("service");
  if (wt_service_set_endpoints(svc, eps, 2, NULL, NULL, NULL) != WT_OK) return fail("endpoints");
  for (int i = 0; i < 1000; ++i) {
    wt_pick pick = WT_PICK_INIT;
    if (wt_service_pick(svc, &pick) != WT_OK) return fail("pick");  /* eps[pick.index] */
    /* ... send the request to eps[pick.index].id, time it ... */
    if (wt_service_complete(svc, &pick, 12.5, wt_outcome_from_http_status(200)) != WT_OK) {
      return fail("complete");
    }
  }
  char* json;
  if (wt_engine_snapshot_json(engine, &json, NULL) != WT_OK) return fail("snapshot");
  printf("%.200s...\n", json);
  wt_free(json);
  wt_engine_destroy(engine);
  return 0;
}
