// Internal error type: a wt_status code plus a message. Functions inside the core return Status
// instead of throwing across module lines; the C API turns it into the thread-local message.
#pragma once

#include <string>
#include <utility>

#include "weighted/weighted.h"

namespace weighted {

class Status {
 public:
  Status() = default;
  Status(wt_status code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == WT_OK; }
  wt_status code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  wt_status code_ = WT_OK;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {WT_ERR_INVALID_ARGUMENT, std::move(m)}; }
inline Status NotFound(std::string m) { return {WT_ERR_NOT_FOUND, std::move(m)}; }

}  // namespace weighted
