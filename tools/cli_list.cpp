// `levelhist list`: every strategy in the registry and whether it runs here.
#include <algorithm>

#include "cli.hpp"
#include "levelhist/cuda.hpp"

namespace levelhist::cli {

const char* const kListHelp =
    "Usage: levelhist list [--format table|csv|json]\n"
    "List every strategy compiled into this build (the registry): its name, backend,\n"
    "whether it can run on this machine (and why not), what it is, and the source\n"
    "document it comes from. Give a name to --strategy of 'count' or 'text'.\n"
    "\n"
    "  --format F        table (default), csv (name,backend,available,reason,summary,source)\n"
    "                    or json\n"
    "  -h, --help        show this help\n";

int run_list(const std::vector<std::string>& args) {
  ParsedArgs p = parse_args("list", args, {{"--format", true}});
  if (p.help) {
    write_stdout(kListHelp);
    return 0;
  }
  Format format = Format::table;
  if (auto f = p.value("--format")) format = parse_format(*f);
  if (!p.operands.empty())
    usage_error("'list' takes no arguments, got " + quote(p.operands[0]), "run just 'levelhist list'");

  struct Row {
    const Strategy* s;
    bool available;
    std::string reason;
  };
  std::vector<Row> rows;
  for (const Strategy* s : all_strategies()) {
    std::string why;
    bool ok = backend_available(s->backend, &why);
    rows.push_back({s, ok, ok ? std::string() : why});
  }

  std::string out;
  if (format == Format::csv) {
    out = "name,backend,available,reason,summary,source\n";
    for (const Row& r : rows)
      out += csv_field(r.s->name) + "," + std::string(to_string(r.s->backend)) + "," + (r.available ? "yes" : "no") +
             "," + csv_field(r.reason) + "," + csv_field(r.s->summary) + "," + csv_field(r.s->source) + "\n";
  } else if (format == Format::json) {
    out = "{\n  \"command\": \"list\",\n";
    out += "  \"built_with_cuda\": " + std::string(built_with_cuda() ? "true" : "false") + ",\n";
    out += "  \"device\": " + json_string(cuda::describe_device()) + ",\n";
    out += "  \"strategies\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out += i ? ",\n" : "\n";
      out += "    {\"name\": " + json_string(r.s->name) + ", \"backend\": " + json_string(to_string(r.s->backend)) +
             ", \"available\": " + (r.available ? "true" : "false") + ", \"reason\": " +
             (r.available ? std::string("null") : json_string(r.reason)) + ", \"summary\": " +
             json_string(r.s->summary) + ", \"source\": " + json_string(r.s->source) + "}";
    }
    out += rows.empty() ? "]\n}\n" : "\n  ]\n}\n";
  } else {
    std::size_t name_w = 4, backend_w = 7;
    for (const Row& r : rows) name_w = std::max(name_w, std::string(r.s->name).size());
    auto line = [&](const std::string& name, const std::string& backend, const std::string& avail,
                    const std::string& summary) {
      std::string l = name;
      l.append(name_w - name.size() + 2, ' ');
      l += backend;
      l.append(backend_w - backend.size() + 2, ' ');
      l += avail;
      l.append(std::max<std::size_t>(2, 11 - avail.size()), ' ');
      return l + summary + "\n";
    };
    out += line("NAME", "BACKEND", "AVAILABLE", "SUMMARY");
    for (const Row& r : rows) {
      out += line(r.s->name, std::string(to_string(r.s->backend)), r.available ? "yes" : "no", r.s->summary);
      out += std::string(name_w + backend_w + 4 + 11, ' ') + "source: " + r.s->source + "\n";
    }
    // Why a backend cannot run, once per backend.
    for (Backend b : {Backend::cpu, Backend::cuda}) {
      std::string why;
      bool listed = std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return r.s->backend == b; });
      if (listed && !backend_available(b, &why)) out += "\n" + std::string(to_string(b)) + " strategies cannot run here: " + why + "\n";
    }
    if (!built_with_cuda()) out += "\nThis build has no CUDA backend: its CUDA strategies are not compiled in.\n";
  }
  write_stdout(out);
  return 0;
}

}  // namespace levelhist::cli
