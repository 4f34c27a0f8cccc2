/* The first-hour C program (docs/first-hour-c.md shows it whole; a test keeps that copy equal to
 * this file): an engine from the config file named on the command line (every default without
 * one), one service, picks and their outcomes, the snapshot. CTest builds it and runs it with no
 * config, with examples/config/default.json, and with a missing file. */
#include <stdio.h>
#include <weighted/weighted.h>

/* Every call that can fail returns a wt_status; wt_last_error() says what, where and why. */
static int fail(const char* what, wt_status status) {
  fprintf(stderr, "%s: %s: %s\n", what, wt_status_name(status), wt_last_error());
  return 1;
}

int main(int argc, char** argv) {
  wt_engine* engine;
  wt_service* svc;
  wt_status st;
  char* json;
  int i;
  wt_endpoint_spec eps[2] = {WT_ENDPOINT_SPEC_INIT, WT_ENDPOINT_SPEC_INIT};
  eps[0].id = "10.0.0.1:8080", eps[0].base_weight = 100;
  eps[1].id = "10.0.0.2:8080", eps[1].base_weight = 100;

  st = argc > 1 ? wt_engine_create_from_file(argv[1], WT_CLOCK_REAL, &engine)
                : wt_engine_create("{}", 2, WT_CLOCK_REAL, &engine);
  if (st != WT_OK) return fail("create", st);
  if ((st = wt_engine_service(engine, "orders", &svc)) != WT_OK) return fail("service", st);
  st = wt_service_set_endpoints(svc, eps, 2, NULL, NULL, NULL); /* from discovery */
  if (st != WT_OK) return fail("endpoints", st);
  for (i = 0; i < 1000; ++i) {
    wt_pick pick = WT_PICK_INIT;
    if ((st = wt_service_pick(svc, &pick)) != WT_OK) return fail("pick", st);
    /* ... send the request to eps[pick.index].id, time it ... */
    st = wt_service_complete(svc, &pick, 12.5, wt_outcome_from_http_status(200)); /* once */
    if (st != WT_OK) return fail("complete", st);
  }
  if ((st = wt_engine_snapshot_json(engine, &json, NULL)) != WT_OK) return fail("snapshot", st);
  printf("%s\n", json);
  wt_free(json);
  wt_engine_destroy(engine);
  return 0;
}
