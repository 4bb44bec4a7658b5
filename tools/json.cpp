#include "json.hpp"

#include <cmath>

#include "format.hpp"

namespace levelhist::cli {
namespace {

bool holds_object(const Json& array) {
  for (const Json& item : array)
    if (item.is_object()) return true;
  return false;
}

void append(std::string& out, const Json& value, int indent) {
  switch (value.type()) {
    case Json::value_t::object: {
      if (value.empty()) {
        out += "{}";
        return;
      }
      const std::string inner(static_cast<std::size_t>(indent + 2), ' ');
      out += "{\n";
      bool first = true;
      for (const auto& [key, member] : value.items()) {
        if (!first) out += ",\n";
        first = false;
        out += inner;
        out += Json(key).dump(-1, ' ', false, Json::error_handler_t::replace);
        out += ": ";
        append(out, member, indent + 2);
      }
      out += "\n" + std::string(static_cast<std::size_t>(indent), ' ') + "}";
      return;
    }
    case Json::value_t::array: {
      if (holds_object(value)) {
        const std::string inner(static_cast<std::size_t>(indent + 2), ' ');
        out += "[\n";
        for (std::size_t i = 0; i < value.size(); ++i) {
          if (i) out += ",\n";
          out += inner;
          append(out, value[i], indent + 2);
        }
        out += "\n" + std::string(static_cast<std::size_t>(indent), ' ') + "]";
        return;
      }
      out += '[';
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (i) out += ", ";
        append(out, value[i], indent);
      }
      out += ']';
      return;
    }
    case Json::value_t::number_float: {
      const double v = value.get<double>();
      out += std::isfinite(v) ? format_number(v) : "null";
      return;
    }
    default:
      // null, booleans, integers and strings: nlohmann's own text.
      out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
  }
}

}  // namespace

Json json_document(std::string_view command) {
  Json doc = Json::object();
  doc["format_version"] = kJsonFormatVersion;
  doc["command"] = std::string(command);
  return doc;
}

std::string json_text(const Json& document) {
  std::string out;
  append(out, document, 0);
  out += '\n';
  return out;
}

}  // namespace levelhist::cli
