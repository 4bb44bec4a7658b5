// What the counting commands share: run options, strategy resolution, errors, outputs.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

#include "cli.hpp"
#include "levelhist/bin_index.hpp"
#include "levelhist/cuda.hpp"

namespace levelhist::cli {
namespace {

constexpr std::uint64_t kMaxThreads = 1024;

}  // namespace

namespace {

// The fix for an error about `subject`, in the CLI's own terms; empty where
// the library's fix serves as it is.
std::string cli_fix(const Error& e) {
  switch (e.subject()) {
    case ErrorSubject::strategy: return "choose another with --strategy, or leave it auto (see 'levelhist list')";
    case ErrorSubject::backend: return e.kind() == ErrorKind::unsupported ? "use --backend cpu or auto" : "";
    case ErrorSubject::binning: return "check --bins, --range and --edges";
    case ErrorSubject::layout: return "check --channels and --active";
    case ErrorSubject::weights: return "check --weights and --weight-type";
    case ErrorSubject::threads: return "use --threads N with a smaller N";
    case ErrorSubject::memory: return "use fewer bins or threads, or free some memory";
    case ErrorSubject::device:
      return e.kind() == ErrorKind::cuda || e.kind() == ErrorKind::resource ? "try --backend cpu" : "";
    case ErrorSubject::axes: return "check --columns, --bins and --range";
    case ErrorSubject::batch:
    case ErrorSubject::workspace:
    case ErrorSubject::data:
    case ErrorSubject::none: break;
  }
  return {};
}

std::string kind_fix(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage: return "see 'levelhist --help'";
    case ErrorKind::input: return "check the input and the bin options";
    case ErrorKind::unsupported: return "choose another with --strategy or --backend (see 'levelhist list')";
    case ErrorKind::cuda: return "try --backend cpu";
    case ErrorKind::resource: return "free some memory, or use fewer bins or threads";
    case ErrorKind::internal: return "please report this bug";
  }
  return {};
}

}  // namespace

[[noreturn]] void rethrow_with_fix(const Error& e) {
  // The fix: the CLI's for the subject, else the error's own (the CLI's own
  // errors have no subject and keep theirs), else the kind's. Applying this
  // twice gives the same error.
  std::string fix = cli_fix(e);
  if (fix.empty()) fix = e.fix();
  if (fix.empty()) fix = kind_fix(e.kind());
  throw Error(e.kind(), e.message(), fix, e.subject());
}

std::vector<double> bin_edges(const Binning& b) {
  if (b.kind() == BinKind::edges) return b.edge_values();
  BinIndexer ix = make_indexer(b);  // the edges exactly as the counting code computes them
  std::vector<double> e(b.bins() + 1);
  for (std::uint64_t i = 0; i <= b.bins(); ++i) e[i] = ix.even_edge(i);
  return e;
}

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (a == b) return true;
  const fs::path ca = fs::weakly_canonical(a, ec);
  if (!ec) {
    const fs::path cb = fs::weakly_canonical(b, ec);
    if (!ec && ca == cb) return true;
  }
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec) && !ec;
}

[[noreturn]] void rethrow_naming(const Error& e, const std::string& name) {
  std::string message = e.message();
  if (message.rfind(name + ": ", 0) == 0) message = quote(name) + message.substr(name.size());
  const Error named(e.kind(), message, e.fix(), e.subject());
  if (!named.fix().empty()) throw named;  // the library's fix for its own file, kept whatever the subject
  rethrow_with_fix(named);
}

void refuse_overwriting_input(const std::string& input, const std::string& output, const std::string& option) {
  if (output == "-") return;
  struct stat out {};
  const bool exists = ::stat(output.c_str(), &out) == 0;
  // Written in place, not replaced: no input's data is lost (sort /dev/null -o /dev/null).
  if (exists && !S_ISREG(out.st_mode) && !S_ISDIR(out.st_mode)) return;
  if (input == "-") {
    struct stat in {};
    if (exists && ::fstat(STDIN_FILENO, &in) == 0 && S_ISREG(in.st_mode) && in.st_dev == out.st_dev &&
        in.st_ino == out.st_ino)
      usage_error(option + " " + quote(output) + " is the file standard input is redirected from, which levelhist "
                  "never overwrites",
                  "name another output file");
    return;
  }
  if (same_file(input, output))
    usage_error(option + " " + quote(output) + " is the input file, which levelhist never overwrites",
                "name another output file");
}

detail::StagedOutput stage_output(const std::string& path, std::span<const std::uint8_t> bytes,
                                  const std::string& option, bool command_prints) {
  const detail::OutputTarget target = path == "-" ? detail::OutputTarget{detail::OutputTarget::Kind::descriptor, "", 1}
                                                  : call_naming(path, [&] { return detail::resolve_output(path); });
  if (target.kind == detail::OutputTarget::Kind::descriptor && target.fd == STDOUT_FILENO) {
    if (command_prints)
      usage_error(option + " " + quote(path) + " is standard output, where the command prints its report",
                  "name a file for " + option);
    // Through write_stdout: a reader that goes away ends levelhist quietly, as for every report.
    write_stdout(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    return {};
  }
  return call_naming(path, [&] { return detail::StagedOutput(path, target, bytes); });
}

void commit_output(detail::StagedOutput& staged) {
  call_naming(staged.path(), [&] { staged.commit(); });
}

void write_stdout_then_commit(std::string_view report, detail::StagedOutput& staged) {
  try {
    write_stdout(report);
  } catch (const BrokenPipe&) {
    commit_output(staged);
    throw;
  }
  commit_output(staged);
}

bool names_standard_output(const std::string& path) {
  if (path == "-") return true;
  const detail::OutputTarget target = call_naming(path, [&] { return detail::resolve_output(path); });
  return target.kind == detail::OutputTarget::Kind::descriptor && target.fd == STDOUT_FILENO;
}

void write_output(const std::string& path, std::span<const std::uint8_t> bytes, const std::string& option) {
  detail::StagedOutput staged = stage_output(path, bytes, option, false);
  commit_output(staged);
}

std::string output_path(const ParsedArgs& p, const std::string& command, const std::string& input) {
  if (p.has("-o") && p.has("--output")) usage_error("-o and --output both name the output", "give one of them");
  std::optional<std::string> out = p.has("-o") ? p.value("-o") : p.value("--output");
  if (!out || out->empty()) usage_error("'" + command + "' needs an output file", "add -o OUT");
  refuse_overwriting_input(input, *out, "-o");
  return *out;
}

std::vector<OptionSpec> run_option_specs() {
  return {{"--format", true}, {"--backend", true}, {"--strategy", true}, {"--threads", true}};
}

std::vector<int> parse_device_list(std::string_view text, int device_count) {
  std::vector<int> devices;
  if (text == "all") {
    for (int d = 0; d < device_count; ++d) devices.push_back(d);
    return devices;  // none without a GPU: the automatic backend then counts on the CPU
  }
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = text.find(',', at);
    const std::string_view item = text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    const int d = static_cast<int>(parse_count("--devices " + quote(text), item, 0, 1023));
    if (d >= device_count)
      input_error("--devices " + quote(text) + ": there is no CUDA device " + std::to_string(d) + " here (" +
                      std::to_string(device_count) + " device" + (device_count == 1 ? "" : "s") + ")",
                  device_count ? "give devices below " + std::to_string(device_count) + ", or all"
                               : "leave --devices out on a machine without a GPU");
    for (int seen : devices)
      if (seen == d)
        input_error("--devices " + quote(text) + " names device " + std::to_string(d) + " twice", "name each device once");
    devices.push_back(d);
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return devices;
}

RunOptions parse_run_options(const ParsedArgs& args) {
  RunOptions r;
  if (auto f = args.value("--format")) r.format = parse_format(*f);
  if (auto b = args.value("--backend")) {
    if (*b == "auto") r.library.backend = BackendChoice::automatic;
    else if (*b == "cpu") r.library.backend = BackendChoice::cpu;
    else if (*b == "cuda") r.library.backend = BackendChoice::cuda;
    else usage_error("unknown backend " + quote(*b), "use --backend auto, cpu or cuda");
  }
  const Strategy* strategy = nullptr;
  if (auto s = args.value("--strategy")) {
    r.library.strategy = *s;
    if (*s != "auto") {
      strategy = find_strategy(*s);
      if (!strategy) usage_error("unknown strategy " + quote(*s), "'levelhist list' shows the strategies of this build");
      if ((r.library.backend == BackendChoice::cpu && strategy->backend != Backend::cpu) ||
          (r.library.backend == BackendChoice::cuda && strategy->backend != Backend::cuda))
        usage_error("strategy " + quote(*s) + " runs on the " + std::string(to_string(strategy->backend)) +
                        " backend, not on the one --backend asks for",
                    "drop --backend or pick a strategy of that backend");
    }
  }
  if (auto t = args.value("--threads"))
    r.library.threads = static_cast<unsigned>(parse_count("--threads", *t, 0, kMaxThreads));
  if (auto d = args.value("--devices")) r.library.devices = parse_device_list(*d, cuda::device_count());
  std::string why;
  if (r.library.backend == BackendChoice::cuda && !backend_available(Backend::cuda, &why))
    input_error("--backend cuda cannot run here: " + why, "use --backend cpu or auto");
  if (strategy && !backend_available(strategy->backend, &why))
    input_error("strategy " + quote(strategy->name) + " cannot run here: " + why,
                "pick a strategy that 'levelhist list' marks as available");
  return r;
}

void count_on_cpu_under_auto(RunOptions& run) {
  if (run.library.backend == BackendChoice::automatic && run.library.strategy == "auto" &&
      run.library.devices.empty())
    run.library.backend = BackendChoice::cpu;
}

void StrategyLog::add(const Strategy& s) {
  for (const std::string& n : names)
    if (n == s.name) return;
  names.emplace_back(s.name);
}

std::string StrategyLog::joined() const {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : "+") + n;
  return out;
}

Plan make_plan(const Request& request, const Options& options) {
  try {
    return Plan(request, options);
  } catch (const Error& e) {
    rethrow_with_fix(e);
  }
}

std::vector<std::string> input_operands(const ParsedArgs& args) {
  if (args.operands.empty()) return {"-"};
  return args.operands;
}

}  // namespace levelhist::cli
