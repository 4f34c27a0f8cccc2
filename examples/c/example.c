/* The README's C example, compiled and run by the tests: pick, report, look. */
#include <stdio.h>
#include <weighted/weighted.h>

int main(void) {
  wt_engine* engine;
  wt_service* svc;
  wt_endpoint_spec eps[] = {{"10.0.0.1:8080", 100}, {"10.0.0.2:8080", 100}};
  if (wt_engine_create("{}", 2, WT_CLOCK_REAL, &engine) != WT_OK) return fprintf(stderr, "%s\n", wt_last_error()), 1;
  wt_engine_service(engine, "orders", &svc);
  wt_service_set_endpoints(svc, eps, 2);
  for (int i = 0; i < 1000; ++i) {
    wt_pick pick;
    wt_service_pick(svc, &pick);                                      /* choose an endpoint */
    wt_service_complete(svc, &pick, 12.5, wt_outcome_from_http_status(200)); /* report it */
  }
  char* json;
  wt_engine_snapshot_json(engine, &json, NULL);
  printf("%.200s...\n", json);
  wt_free(json);
  wt_engine_destroy(engine);
  return 0;
}
