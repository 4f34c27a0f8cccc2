// The references the engine hands back. Each endpoint spec's user pointer is a strong reference
// to the endpoint's id object, and the event callback's slot holds one to the Python callable;
// the engine gives them back through a wt_release_fn once no pick or event can reach them. That
// runs on whichever thread frees the set or the slot: the controller's, or a writer's with the
// GIL released, possibly under the engine's locks. No Python may run there, so the pointer is
// only queued; the binding drops the queue's references whenever it holds the GIL after a call
// that may have freed something (every call without the GIL, set_endpoints, remove, close).
#include <mutex>
#include <vector>

#include "binding.h"

namespace wtpy {
namespace {

struct ReleaseQueue {
  std::mutex mu;
  std::vector<PyObject*> objects;
};

// Never destroyed: a controller thread may still release into it while the process exits.
ReleaseQueue& Queue() {
  static ReleaseQueue* queue = new ReleaseQueue;
  return *queue;
}

}  // namespace

void QueueRelease(void* object) {
  if (object == nullptr) return;
  ReleaseQueue& q = Queue();
  std::lock_guard<std::mutex> lock(q.mu);
  try {
    q.objects.push_back(static_cast<PyObject*>(object));
  } catch (...) {
    // Out of memory: the object leaks, which is better than touching it without the GIL.
  }
}

void DrainReleases() noexcept {
  // At exit the objects may already be torn down; a leak there is harmless.
  if (Finalizing()) return;
  ReleaseQueue& q = Queue();
  std::vector<PyObject*> objects;
  {
    std::lock_guard<std::mutex> lock(q.mu);
    if (q.objects.empty()) return;
    objects.swap(q.objects);
  }
  // Outside the lock: a deallocation may run Python code that calls back into the binding.
  for (PyObject* o : objects) Py_DECREF(o);
}

}  // namespace wtpy
