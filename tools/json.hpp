// levelhist CLI: the JSON outputs, built as nlohmann::json documents (one
// JSON library for every command, and for the tests that read them) and
// printed in one layout.
//
//   Json doc = json_document("count");        // {"format_version": 2, "command": "count"}
//   doc["counts"] = counts;                    // any nlohmann::json value
//   write_stdout(json_text(doc));
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace levelhist::cli {

// Members keep the order they were added in (the documented field order).
using Json = nlohmann::ordered_json;

// The version of every JSON document's layout (docs/CLI.md, "Output format
// versions"): raised when a field is removed or changes its meaning; new
// fields may appear without a raise.
inline constexpr int kJsonFormatVersion = 2;

// A new document of `command`: {"format_version": 2, "command": command}.
Json json_document(std::string_view command);

// A document as text: objects one member per line, indented by two spaces
// per level; arrays that hold no object on one line ("counts": [5, 5, 0]);
// numbers that read back exactly, integers without a fraction (format_number:
// 0.1, 256, 1e+300); NaN and infinities as null (JSON has neither); strings
// escaped by nlohmann, invalid UTF-8 replaced by U+FFFD, so the text is
// always valid JSON. Ends with a newline.
std::string json_text(const Json& document);

}  // namespace levelhist::cli
