# The core's layers, lowest first. A file in core/src/<layer>/ includes headers of its own layer
# and of the layers before it in this list, never of one after it, and always by folder
# ("stats/window.h"): a reader can tell from an include where it reaches. Read by
# tests/layers/check_layers.cmake (a CTest test) and by core/src/README.md's table.
set(WT_CORE_LAYERS
  util     # status, clocks, thread-local storage, UTF-8: no knowledge of load balancing
  config   # the JSON config: its keys, defaults, profiles, parsing and writing
  stats    # per-endpoint signals: the hot recorder, histograms, the sliding window
  model    # the judgement: rules, the controller's state machine, the weight plan
  pick     # the scheduler: alias tables, load estimates, the pick itself
  runtime  # engine, services and their membership, the cycle's orchestration, reclamation, events
  export   # read-only views: the JSON snapshot, the Prometheus text
  abi      # the C entry points and the boundary's error model
)
