// `levelhist list`: the library's strategies and whether they run here; with
// --why, auto's choice for one problem, row by row through the selection table.
#include <algorithm>

#include "cli.hpp"
#include "json.hpp"
#include "levelhist/cuda.hpp"

namespace levelhist::cli {

const char* const kListHelp =
    "Usage: levelhist list [--format table|csv|json]\n"
    "       levelhist list --why [--type T] [--bins N --range LO:HI | --edges E0,E1,..]\n"
    "                          [--numpy] [--channels N [--active LIST]] [--weight-type T] [--backend B]\n"
    "List the strategies of this build: name, backend, whether it can run on this\n"
    "machine (and why not), what it is, and the work it comes from (docs/REFERENCES.md).\n"
    "Give a name to --strategy of 'count' or 'text'.\n"
    "\n"
    "  --format F        table (default), csv (name,backend,available,reason,summary,source)\n"
    "                    or json\n"
    "  --why             show how 'auto' chooses for one problem: every row of the\n"
    "                    selection table of each backend that can run here, the\n"
    "                    strategy it names, whether it matched, and the measurement\n"
    "                    behind it. The problem is given as to 'count' (default: u8\n"
    "                    samples, one bin per value); --weight-type f32|f64 makes it\n"
    "                    weighted; --backend cpu|cuda shows one backend only.\n"
    "  -h, --help        show this help\n";

namespace {

std::string explain(const ParsedArgs& p) {
  SampleType type = SampleType::u8;
  if (auto t = p.value("--type")) {
    auto parsed = parse_sample_type(*t);
    if (!parsed) usage_error("unknown sample type " + quote(*t), "use --type u8, i8, u16, i16, i32, u32, f32 or f64");
    type = *parsed;
  }
  const Binning binning = binning_of_options(type, p);
  unsigned channels = 1, active = 1;
  if (auto v = p.value("--channels")) {
    channels = static_cast<unsigned>(parse_count("--channels", *v, 1, 4));
    active = (1u << channels) - 1;
    if (auto a = p.value("--active")) active = parse_channel_list(*a, channels);
  } else if (p.has("--active")) {
    usage_error("--active needs --channels", "add --channels N, the channels of a pixel");
  }
  Request request = Request::pixels(type, channels, active, binning);
  if (auto w = p.value("--weight-type")) {
    auto parsed = parse_sample_type(*w);
    if (!parsed || (*parsed != SampleType::f32 && *parsed != SampleType::f64))
      usage_error("unknown weight type " + quote(*w), "use --weight-type f32 or f64");
    request.weight_type = *parsed;
  }
  call_with_fix([&] { request.validate(); });
  Problem problem{request.type, &request.binning, 0, request.layout};
  problem.weighted = request.is_weighted();
  if (request.weight_type) problem.weight_type = *request.weight_type;

  std::vector<Backend> backends;
  const std::optional<std::string> b = p.value("--backend");
  if (b && *b != "auto" && *b != "cpu" && *b != "cuda") usage_error("unknown backend " + quote(*b), "use --backend auto, cpu or cuda");
  if ((!b || *b != "cpu")) backends.push_back(Backend::cuda);
  if ((!b || *b != "cuda")) backends.push_back(Backend::cpu);

  std::string out = "problem: " + std::string(to_string(type)) + " samples, " + binning.describe() +
                    (request.is_pixels() ? ", " + std::to_string(channels) + "-channel pixels" : "") +
                    (request.weight_type ? ", " + std::string(to_string(*request.weight_type)) + " weights" : "") +
                    "\n";
  for (Backend backend : backends) {
    out += "\n" + std::string(to_string(backend)) + ":";
    std::string why;
    if (!backend_available(backend, &why)) {
      out += " cannot run here: " + why + "\n";
      continue;
    }
    if (backend == Backend::cuda) out += " " + cuda::describe_device();
    out += "\n";
    std::string chosen;
    for (const SelectionStep& step : explain_choice(problem, backend)) {
      out += step.chosen ? "  * " : "    ";
      out += step.row + " -> " + step.strategy + (step.chosen ? "  [chosen]" : "  [" + step.why + "]") + "\n";
      out += "      measured: " + step.evidence + "\n";
      if (step.chosen) chosen = step.strategy;
    }
    out += chosen.empty() ? "  no row takes it: auto uses another backend\n" : "  auto's choice: " + chosen + "\n";
  }
  // CPU and GPU together (Plan::shares_host_calls): which backends an automatic plan's host calls use.
  if (!b && !request.is_weighted() && backend_available(Backend::cuda) && cuda::device_count() > 0)
    out += "\nhost memory: an automatic plan that runs on cuda shares each call of 4 MiB or more between\n"
           "the CPU and the GPU where the rates measured in the process say both at once finish first\n"
           "(--backend cpu or cuda: one side)\n";
  return out;
}

}  // namespace

int run_list(const std::vector<std::string>& args) {
  ParsedArgs p = parse_args("list", args,
                            {{"--format", true}, {"--why", false}, {"--type", true}, {"--bins", true}, {"--range", true},
                             {"--edges", true}, {"--numpy", false}, {"--channels", true}, {"--active", true},
                             {"--weight-type", true}, {"--backend", true}});
  if (p.help) {
    write_stdout(kListHelp);
    return 0;
  }
  if (!p.operands.empty())
    usage_error("'list' takes no arguments, got " + quote(p.operands[0]), "run just 'levelhist list'");
  if (p.has("--why")) {
    if (p.has("--format")) usage_error("--why prints a table only", "drop --format");
    write_stdout(explain(p));
    return 0;
  }
  for (const char* option : {"--type", "--bins", "--range", "--edges", "--numpy", "--channels", "--active",
                             "--weight-type", "--backend"})
    if (p.has(option)) usage_error(std::string(option) + " describes a problem for --why", "add --why");
  Format format = Format::table;
  if (auto f = p.value("--format")) format = parse_format(*f);

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
    Json doc = json_document("list");
    doc["built_with_cuda"] = built_with_cuda();
    doc["device"] = cuda::describe_device();
    Json list = Json::array();
    for (const Row& r : rows) {
      Json entry = Json::object();
      entry["name"] = std::string(r.s->name);
      entry["backend"] = std::string(to_string(r.s->backend));
      entry["available"] = r.available;
      entry["reason"] = r.available ? Json(nullptr) : Json(r.reason);
      entry["summary"] = std::string(r.s->summary);
      entry["source"] = std::string(r.s->source);
      list.push_back(std::move(entry));
    }
    doc["strategies"] = std::move(list);
    out = json_text(doc);
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
      if (!listed || backend_available(b, &why)) continue;
      out += '\n';
      out += to_string(b);
      out += " strategies cannot run here: " + why + "\n";
    }
    if (!built_with_cuda()) out += "\nThis build has no CUDA backend: its CUDA strategies are not compiled in.\n";
    out += "\n'levelhist list --why ...' shows how auto chooses for a problem.\n";
  }
  write_stdout(out);
  return 0;
}

}  // namespace levelhist::cli
