// weighted._weighted.Monitor: wt_monitor_* (a state file written by another process's engine).
// The reads copy a file's worth of text, so they run without the GIL; a monitor is closed once,
// and a call racing close() is refused rather than handed a freed handle.
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "binding.h"

namespace wtpy {
namespace {

class Monitor {
 public:
  explicit Monitor(const std::string& path) {
    py::gil_scoped_release nogil;
    Check(wt_monitor_open(path.c_str(), &m_));
  }
  ~Monitor() { Close(); }

  void Close() {
    std::unique_lock lock(mu_);  // waits for running reads
    wt_monitor_close(m_);
    m_ = nullptr;
  }
  bool closed() {
    std::shared_lock lock(mu_);
    return m_ == nullptr;
  }

  template <typename Fn> py::str Text(Fn&& fn) {
    char* out = nullptr;
    size_t len = 0;
    {
      py::gil_scoped_release nogil;
      std::shared_lock lock(mu_);
      if (!m_) ThrowClosed("monitor");
      Check(fn(m_, &out, &len));
    }
    std::unique_ptr<char, void (*)(void*)> owned(out, &wt_free);
    return py::str(out, len);
  }

  py::str Snapshot() {
    return Text([](wt_monitor* m, char** o, size_t* n) { return wt_monitor_snapshot_json(m, o, n); });
  }
  py::str History(uint64_t since, size_t max) {
    return Text([&](wt_monitor* m, char** o, size_t* n) {
      return wt_monitor_history_json(m, since, max, o, n);
    });
  }
  py::str Events(uint64_t cursor, size_t max) {
    return Text([&](wt_monitor* m, char** o, size_t* n) {
      return wt_monitor_events_json(m, cursor, max, o, n);
    });
  }
  py::str Info() {
    return Text([](wt_monitor* m, char** o, size_t* n) { return wt_monitor_info_json(m, o, n); });
  }

 private:
  std::shared_mutex mu_;
  wt_monitor* m_ = nullptr;
};

}  // namespace

void RegisterMonitor(py::module_& m) {
  py::class_<Monitor>(m, "Monitor", "wt_monitor: a read-only view of a state file. Use weighted.attach().")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("close", Method(&Monitor::Close))
      .def_property_readonly("closed", Method(&Monitor::closed))
      .def("_snapshot_json", Method(&Monitor::Snapshot))
      .def("_history_json", Method(&Monitor::History), py::arg("since"), py::arg("max"))
      .def("_events_json", Method(&Monitor::Events), py::arg("cursor"), py::arg("max"))
      .def("_info_json", Method(&Monitor::Info));
}

}  // namespace wtpy
