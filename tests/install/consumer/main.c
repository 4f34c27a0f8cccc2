#include <stdio.h>
#include <weighted/weighted.h>

int main(void) {
  wt_engine* e;
  if (wt_engine_create("{}", 2, WT_CLOCK_MANUAL, &e) != WT_OK) return 1;
  wt_engine_destroy(e);
  printf("consumer linked weighted %s\n", wt_version_string());
  return wt_version_number() / 10000 == WT_VERSION_MAJOR ? 0 : 1;
}
