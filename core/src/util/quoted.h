// Names and values quoted into error messages. Endpoint ids, service names, paths and config keys
// come from callers; messages go to logs, where a raw newline or quote would let a caller forge
// log lines. Control characters, quotes and backslashes are escaped, the rest of the UTF-8 is
// kept as it is.
#pragma once

#include <string>
#include <string_view>

namespace weighted {

// `s` with \" \\ \n \r \t and \xNN for the other control characters.
inline std::string Escaped(std::string_view s) {
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

// Escaped(s) in double quotes.
inline std::string Quoted(std::string_view s) { return '"' + Escaped(s) + '"'; }

// `s` as a JSON string, for the few texts below the export layer that hold ids (event reasons):
// the same escapes as Escaped() but \u00NN, which JSON reads, for other control characters.
inline std::string JsonQuoted(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  return out + '"';
}

}  // namespace weighted
