// Python values into C API arguments: strings, keys, outcomes, and the quoting of caller-given
// names in the binding's own messages. A value of the wrong Python type is a TypeError naming the
// call and the argument; a value the C API would cut or misread (a NUL inside a string, a key
// beyond 64 bits, an outcome name the library does not know) is InvalidArgumentError through
// the one translator (errors.cc), like the core's own refusals.
#include <cstring>
#include <string>
#include <string_view>

#include "binding.h"

namespace wtpy {

namespace {
// More than the C API will ever define; bounds the walk over wt_outcome_name().
constexpr int kMaxOutcomes = 64;
// Enough of a value to recognise it; a message must not carry a megabyte of it.
constexpr size_t kMaxReprChars = 80;
}  // namespace

std::string Escaped(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string Quoted(std::string_view s) { return '"' + Escaped(s) + '"'; }

std::string ShortRepr(py::handle obj) {
  // repr() escapes control characters and surrogates itself, and is always encodable.
  std::string r = py::repr(obj).cast<std::string>();
  if (r.size() > kMaxReprChars) {
    size_t cut = kMaxReprChars;
    while (cut > 0 && (static_cast<unsigned char>(r[cut]) & 0xC0) == 0x80) --cut;  // whole chars
    r.resize(cut);
    r += "...";
  }
  return r;
}

Text TextArg(py::handle obj, const char* fn, const char* arg) {
  PyObject* o = obj.ptr();
  if (PyUnicode_Check(o)) [[likely]] {
    Py_ssize_t len = 0;
    const char* data = PyUnicode_AsUTF8AndSize(o, &len);
    if (data != nullptr) [[likely]] return {data, static_cast<size_t>(len)};
    // Only a lone surrogate has no UTF-8 form; say where it is.
    py::error_already_set cause;
    Py_ssize_t at = 0;
    if (PyErr_GivenExceptionMatches(cause.type().ptr(), PyExc_UnicodeEncodeError)) {
      PyUnicodeEncodeError_GetStart(cause.value().ptr(), &at);
    }
    throw py::type_error(std::string(fn) + ": " + arg +
                         " must be valid Unicode (it is sent as UTF-8): " + ShortRepr(obj) +
                         " has a lone surrogate at index " + std::to_string(at));
  }
  if (PyBytes_Check(o)) {
    return {PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o))};
  }
  throw py::type_error(std::string(fn) + ": " + arg + " must be a str, not " +
                       Py_TYPE(o)->tp_name);
}

int ToOutcome(py::handle outcome) {
  // A bool is an int to Python, but True as "HTTP 5xx" is a bug in the caller, not an outcome.
  if (PyLong_Check(outcome.ptr()) && !PyBool_Check(outcome.ptr())) {
    long v = PyLong_AsLong(outcome.ptr());
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (v < INT32_MIN || v > INT32_MAX) {
      throw Error{WT_ERR_INVALID_ARGUMENT, "outcome " + std::to_string(v) + " is out of range", {}, 0};
    }
    return static_cast<int>(v);  // the core checks the range and names a bad value
  }
  if (PyUnicode_Check(outcome.ptr())) {
    const Text name = TextArg(outcome, "outcome", "the name");
    const std::string_view wanted(name.data, name.size);
    // The loaded library's names, so an outcome newer than this binding is accepted too.
    std::string known;
    for (int i = 0; i < kMaxOutcomes; ++i) {
      const char* n = wt_outcome_name(i);
      if (n == nullptr) break;
      if (wanted == n) return i;
      if (!known.empty()) known += ", ";
      known += n;
    }
    throw Error{WT_ERR_INVALID_ARGUMENT,
                "outcome '" + Escaped(wanted) + "' is not one of " + known, {}, 0};
  }
  throw py::type_error("outcome must be a weighted.Outcome, an int or its name, not " +
                       std::string(Py_TYPE(outcome.ptr())->tp_name));
}

const char* CString(const char* data, size_t len, const char* what) {
  const void* nul = std::memchr(data, '\0', len);
  if (nul != nullptr) [[unlikely]] {
    const size_t at = static_cast<const char*>(nul) - data;
    throw Error{WT_ERR_INVALID_ARGUMENT,
                std::string(what) + " contains a NUL byte at offset " + std::to_string(at), {}, 0};
  }
  return data;
}

const char* CString(const std::string& s, const char* what) {
  return CString(s.c_str(), s.size(), what);
}

uint64_t ToKey(py::handle key) {
  unsigned long long v = PyLong_AsUnsignedLongLong(key.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw Error{WT_ERR_INVALID_ARGUMENT,
                "endpoint key must be an int in [0, 2**64), got " + ShortRepr(key), {}, 0};
  }
  return static_cast<uint64_t>(v);
}

}  // namespace wtpy
