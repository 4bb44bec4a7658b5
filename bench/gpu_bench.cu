#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <vector>

#include "cuda/cuda_common.cuh"
#include "gpu_bench.hpp"
#include "gpu_timer.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/levelhist.hpp"
#include "stream_read.hpp"

namespace levelhist::bench {
namespace {

// Inputs smaller than this many times the L2 cache rotate among copies of
// themselves, so that no call finds its input left in L2 by the call before.
constexpr std::uint64_t kRotationOverL2 = 3;
// Where the device does not report its L2 size: larger than any current L2.
constexpr std::uint64_t kUnknownL2Bytes = std::uint64_t{128} << 20;
// cudaMalloc alignment; rotation copies keep it.
constexpr std::uint64_t kAlignment = 256;
// The limit is measured first in every case, after the GPU sat idle while the
// host made, counted and uploaded the data: its longer warm-up is the case's.
constexpr double kCaseWarmupFactor = 3.0;

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

// Device memory that grows on demand and never shrinks. Growing discards the
// contents, and happens only between measurements, never inside one.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);  // no throwing from a destructor; a failure means the context is gone
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // At least `bytes` bytes; when it had to allocate and `zero` is set, zero-filled.
  void reserve(std::uint64_t bytes, bool zero = false) {
    if (bytes <= size_) return;
    if (ptr_) LEVELHIST_CUDA_CHECK(cudaFree(ptr_));
    ptr_ = nullptr;
    size_ = 0;
    LEVELHIST_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    size_ = bytes;
    if (zero) LEVELHIST_CUDA_CHECK(cudaMemset(ptr_, 0, bytes));
  }
  unsigned char* get() const { return static_cast<unsigned char*>(ptr_); }
  std::uint64_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  std::uint64_t size_ = 0;
};

int attribute_or_zero(cudaDeviceAttr attr, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
    cudaGetLastError();  // an attribute this driver lacks is not an error worth stopping for
    return 0;
  }
  return value;
}

DeviceInfo read_device_info(int device) {
  cudaDeviceProp p{};
  LEVELHIST_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceInfo d;
  d.index = device;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = static_cast<std::uint64_t>(p.l2CacheSize);
  d.memory_bytes = p.totalGlobalMem;
  d.memory_bus_bits = p.memoryBusWidth;
  d.sm_clock_mhz = attribute_or_zero(cudaDevAttrClockRate, device) / 1000;
  d.memory_clock_mhz = attribute_or_zero(cudaDevAttrMemoryClockRate, device) / 1000;
  LEVELHIST_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  LEVELHIST_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  return d;
}

std::vector<const Strategy*> select_strategies(const std::vector<std::string>& names) {
  std::string cuda_names;
  for (const Strategy* s : all_strategies())
    if (s->backend == Backend::cuda) cuda_names += (cuda_names.empty() ? "" : ", ") + std::string(s->name);
  for (const std::string& name : names) {
    const Strategy* s = find_strategy(name);
    if (!s)
      throw Error(ErrorKind::usage, "unknown strategy '" + name + "' (CUDA strategies: " +
                                        (cuda_names.empty() ? std::string("none in this build") : cuda_names) + ")");
    if (s->backend != Backend::cuda)
      throw Error(ErrorKind::usage, "'" + name + "' is a CPU strategy; `levelhist bench --cpu` times those");
  }
  std::vector<const Strategy*> chosen;
  for (const Strategy* s : all_strategies()) {
    if (s->backend != Backend::cuda) continue;
    bool wanted = names.empty() || std::find(names.begin(), names.end(), s->name) != names.end() ||
                  std::string(s->name) == kBaselineName;  // every ratio refers to it
    if (wanted) chosen.push_back(s);
  }
  return chosen;
}

std::string slot_name(std::uint64_t slot, const Binning& b) {
  if (slot < b.bins()) return "bin " + std::to_string(slot);
  if (slot == b.underflow_slot()) return "underflow";
  if (slot == b.overflow_slot()) return "overflow";
  return "NaN";
}

// Empty when `got` equals the reference slot for slot; otherwise what differs.
std::string compare_slots(const std::vector<std::uint64_t>& got, const Histogram& expected) {
  auto want = expected.slots();
  std::uint64_t differing = 0, first = 0;
  for (std::uint64_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && differing++ == 0) first = i;
  if (differing == 0) return {};
  return slot_name(first, expected.binning()) + ": expected " + std::to_string(want[first]) + ", got " +
         std::to_string(got[first]) + " (" + std::to_string(differing) + " of " + std::to_string(want.size()) +
         " slots differ)";
}

std::string seconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", seconds);
  return buf;
}

std::string problem_text(SampleType type, const Binning& binning) {
  return std::string(to_string(type)) + ", " + binning.describe();
}

std::string gbps_text(const Measurement& m) {
  if (!m.ok) return "FAILED";
  if (!m.timing) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g%s", m.gbps(), m.timing->fewer_reps ? "*" : "");
  return buf;
}

}  // namespace

struct GpuBench::State {
  BenchOptions options;
  Results results;
  TimingPolicy policy;
  cudaStream_t stream = nullptr;
  std::unique_ptr<GpuTimer> timer;
  std::vector<const Strategy*> strategies;
  std::map<const Strategy*, DeviceBuffer> workspaces;
  DeviceBuffer input;     // the uploaded input
  DeviceBuffer rotation;  // copies of a small input, side by side
  DeviceBuffer slots;     // the output counters every strategy writes
  DeviceBuffer sink;      // the streaming read's never-written result
  SampleType input_type = SampleType::u8;
  std::uint64_t input_n = 0;
  std::uint64_t rotation_bytes = 0;  // kRotationOverL2 x L2
  // Seconds each strategy has spent in each section (checks included), for --section-seconds.
  std::map<std::pair<std::string, std::string>, double> spent_seconds;

  ~State() {
    timer.reset();
    if (stream) cudaStreamDestroy(stream);
  }

  void progress(const std::string& line) const {
    if (!options.quiet) std::fprintf(stderr, "%s\n", line.c_str());
  }

  // The counters as the device holds them now.
  std::vector<std::uint64_t> read_slots(std::uint64_t count) {
    std::vector<std::uint64_t> host(count);
    LEVELHIST_CUDA_CHECK(
        cudaMemcpyAsync(host.data(), slots.get(), count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream));
    LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
  }

  void record_failure(Measurement& m, const std::string& what) {
    m.ok = false;
    m.note = what;
    std::string line = "strategy '" + m.strategy + "', " + m.section + " / " + m.dataset + ", n = " +
                       std::to_string(m.n) + ": " + what;
    results.failures.push_back(line);
    std::fprintf(stderr, "\nlevelhist bench: *** FAILED *** %s\n  (marked FAILED; continuing with the others)\n\n",
                 line.c_str());
  }

  // Times one strategy (or the limit, when `strategy` is null, `expected` unused).
  // A strategy's first call is checked before anything is timed; the last timed
  // call's result is checked again, which catches a workspace left dirty.
  Measurement measure(Measurement m, const Strategy* strategy, const EnqueueCall& enqueue, const Histogram& expected) {
    const std::uint64_t slot_count = expected.binning().slots();
    double& spent = spent_seconds[{m.section, m.strategy}];
    TimingPolicy case_policy = policy;
    case_policy.budget_spent = strategy && spent >= options.section_seconds;
    if (!strategy) case_policy.warmup_ms *= kCaseWarmupFactor;
    const auto start = std::chrono::steady_clock::now();
    struct AddElapsed {  // on every way out, exceptions included
      double& total;
      std::chrono::steady_clock::time_point start;
      ~AddElapsed() { total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
    } add_elapsed{spent, start};
    try {
      if (strategy) LEVELHIST_CUDA_CHECK(cudaMemsetAsync(slots.get(), 0xA5, slot_count * 8, stream));  // poison
      const double first_ms = timer->time_calls(enqueue, 0, 1);
      if (strategy) {
        if (std::string diff = compare_slots(read_slots(slot_count), expected); !diff.empty()) {
          record_failure(m, "wrong result: " + diff);
          return m;
        }
      }
      m.timing = timer->measure(enqueue, 1, first_ms, case_policy);
      if (strategy) {
        if (std::string diff = compare_slots(read_slots(slot_count), expected); !diff.empty())
          record_failure(m, "wrong result after " + std::to_string(m.timing->reps * m.timing->calls_per_sample) +
                                " repeated calls (is the workspace left zeroed?): " + diff);
      }
      if (m.ok && m.timing->fewer_reps)
        m.note = "only " + std::to_string(m.timing->reps) + " timed samples: " +
                 (case_policy.budget_spent
                      ? "this strategy had used up its --section-seconds " + seconds_text(options.section_seconds)
                      : "one call takes " + seconds_text(m.timing->median_ms / 1e3) + " (--case-seconds " +
                            seconds_text(policy.hard_seconds) + ")");
    } catch (const Error& e) {
      record_failure(m, std::string("threw: ") + e.what());
      // A fault (illegal address, trap) poisons the whole context: nothing after it could be trusted.
      if (cudaError_t sticky = cudaDeviceSynchronize(); sticky != cudaSuccess)
        throw Error(ErrorKind::cuda, "the GPU is unusable after strategy '" + m.strategy +
                                         "' failed: " + cudaGetErrorString(sticky) + "; stopping the benchmark");
    }
    return m;
  }
};

GpuBench::GpuBench(const BenchOptions& options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = options;
  int devices = levelhist::cuda::device_count();
  if (options.device >= devices)
    throw Error(ErrorKind::usage, "--device " + std::to_string(options.device) + ": there are " +
                                      std::to_string(devices) + " CUDA devices");
  LEVELHIST_CUDA_CHECK(cudaSetDevice(options.device));
  s.results.device = read_device_info(options.device);
  s.strategies = select_strategies(options.strategies);
  LEVELHIST_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  s.timer = std::make_unique<GpuTimer>(s.stream);
  s.slots.reserve(4096);
  s.sink.reserve(sizeof(unsigned), /*zero=*/true);
  s.rotation_bytes = kRotationOverL2 * (s.results.device.l2_bytes ? s.results.device.l2_bytes : kUnknownL2Bytes);

  s.policy.reps = options.reps;
  s.policy.hard_seconds = options.case_seconds;
  s.policy.soft_seconds = std::min(3.0, 0.3 * options.case_seconds);
  s.policy.warmup_ms = options.quick ? 5.0 : 10.0;

  s.results.strategies.push_back(
      {kDependentLimitName,
       "the limit's read launched as a programmatic dependent launch, as levelhist's byte and shared-histogram "
       "kernels are: its launch overlaps the end of the call before it"});
  for (const Strategy* st : s.strategies) s.results.strategies.push_back({st->name, st->summary});
  const TimingPolicy& p = s.policy;
  char line[1024];
  std::snprintf(line, sizeof line,
                "timing: CUDA events; median of %d samples (at least %d unless marked *), after >= %.0f ms of "
                "warm-up (%.0f ms before a case's first measurement, the limit); a sample is back-to-back calls lasting >= %.1f ms, divided by their number; a case stops "
                "after %d samples once they took %.1f s, and gets fewer samples if %d would take over %.3g s; once "
                "a strategy has spent %.3g s in a section, its slow cases there get %d samples",
                p.reps, std::min(p.min_reps, p.reps), p.warmup_ms, p.warmup_ms * kCaseWarmupFactor, p.min_sample_ms, std::min(p.min_reps, p.reps),
                p.soft_seconds, std::min(p.min_reps, p.reps), p.hard_seconds, options.section_seconds, kFewestReps);
  s.results.settings.push_back(line);
  s.results.settings.push_back(
      "calls: levelhist::Plan::run on device pointers (one plan per strategy and case, made before timing), "
      "accumulate = false, one stream; a workspace per strategy allocated and zeroed once; inputs under " + std::to_string(s.rotation_bytes >> 20) +
      " MiB (3x L2) rotate among copies so no call reads its input from L2");
  s.results.settings.push_back(
      "checked: every strategy's counters equal cpu_parallel's, slot for slot, on its first call (before timing) "
      "and after its last timed call");
  s.results.settings.push_back(std::string("levelhist ") + version() + ", seed " + std::to_string(options.seed) +
                               (options.quick ? ", --quick" : ""));
  if (s.strategies.empty())
    s.progress("levelhist bench: warning: no CUDA strategy in the registry; measuring the limit only");
}

GpuBench::~GpuBench() = default;

const Results& GpuBench::results() const { return state_->results; }
Results& GpuBench::results() { return state_->results; }

bool GpuBench::any_failure() const { return !state_->results.failures.empty(); }

void GpuBench::begin_section(const SectionInfo& section) {
  state_->results.sections.push_back(section);
  state_->progress("== " + section.name + ": " + section.title);
}

void GpuBench::upload(const HostSamples& input) {
  State& s = *state_;
  s.input_n = 0;
  s.input.reserve(std::max<std::uint64_t>(input.bytes(), 1));
  // On the benchmark's own stream and waited for: a pageable cudaMemcpy may return before its DMA
  // lands, and the legacy default stream does not order against a non-blocking stream.
  LEVELHIST_CUDA_CHECK(
      cudaMemcpyAsync(s.input.get(), input.data(), input.bytes(), cudaMemcpyHostToDevice, s.stream));
  LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(s.stream));
  s.input_type = input.type();
  s.input_n = input.size();
}

void GpuBench::run_case(const CaseLabel& label, std::uint64_t n, const Binning& binning, const Histogram& expected) {
  State& s = *state_;
  if (n > s.input_n || !(expected.binning() == binning))
    throw Error(ErrorKind::internal, "run_case: n beyond the uploaded input, or a reference of another binning");
  const SampleType type = s.input_type;
  const std::uint64_t bytes = n * sample_size(type);
  const Problem problem{type, &binning, n};

  // Rotation: a small input is copied side by side until the copies exceed
  // 3x L2; call i reads copy i mod copies, so each call misses in L2 as a
  // caller's fresh data would.
  const std::uint64_t stride = round_up(std::max<std::uint64_t>(bytes, 1), kAlignment);
  const std::uint64_t copies = bytes < s.rotation_bytes ? (s.rotation_bytes + stride - 1) / stride : 1;
  const unsigned char* base = s.input.get();
  if (copies > 1) {
    const std::uint64_t total = copies * stride;
    s.rotation.reserve(total);
    LEVELHIST_CUDA_CHECK(cudaMemcpyAsync(s.rotation.get(), s.input.get(), bytes, cudaMemcpyDeviceToDevice, s.stream));
    for (std::uint64_t filled = stride; filled < total;) {  // doubling: log2(copies) copies, not `copies`
      std::uint64_t chunk = std::min(filled, total - filled);
      LEVELHIST_CUDA_CHECK(
          cudaMemcpyAsync(s.rotation.get() + filled, s.rotation.get(), chunk, cudaMemcpyDeviceToDevice, s.stream));
      filled += chunk;
    }
    LEVELHIST_CUDA_CHECK(cudaStreamSynchronize(s.stream));
    base = s.rotation.get();
  }
  auto input_of_call = [=](std::uint64_t call) { return base + (call % copies) * stride; };

  Measurement proto;
  proto.section = label.section;
  proto.series = label.series;
  proto.x = label.x;
  proto.dataset = label.dataset;
  proto.problem = problem_text(type, binning);
  proto.n = n;
  proto.bytes = bytes;
  proto.input_buffers = static_cast<int>(copies);
  try {
    proto.auto_choice = choose_strategy(problem, Backend::cuda).name;
  } catch (const Error&) {
    proto.auto_choice.clear();  // no CUDA strategy takes it
  }

  s.slots.reserve(binning.slots() * sizeof(std::uint64_t));
  std::string line = "[" + label.section + "] " + label.dataset + ", n = " + std::to_string(n) + ":";

  Measurement limit = proto;
  limit.strategy = kLimitName;
  limit = s.measure(limit, nullptr, [&](std::uint64_t call) {
    stream_read(input_of_call(call), bytes, reinterpret_cast<unsigned*>(s.sink.get()), s.stream);
  }, expected);
  s.results.rows.push_back(limit);
  line += " limit " + gbps_text(limit);
  // The same read as a programmatic dependent launch, as the byte and
  // shared-histogram kernels' calls are: a call's launch overlaps the end of
  // the one before it, which a plain launch waits for (docs/PERFORMANCE.md,
  // change 15).
  Measurement dependent_limit = proto;
  dependent_limit.strategy = kDependentLimitName;
  dependent_limit = s.measure(dependent_limit, nullptr, [&](std::uint64_t call) {
    stream_read(input_of_call(call), bytes, reinterpret_cast<unsigned*>(s.sink.get()), s.stream, /*dependent=*/true);
  }, expected);
  s.results.rows.push_back(dependent_limit);

  for (const Strategy* strategy : s.strategies) {
    if (!strategy_accepts(*strategy, problem)) continue;
    // What a user runs: a plan made once, then Plan::run on device pointers.
    Options options;
    options.strategy = strategy->name;
    options.backend = BackendChoice::cuda;
    const Plan plan(Request::counts(type, binning), options);
    DeviceBuffer& workspace = s.workspaces[strategy];
    workspace.reserve(plan.workspace_bytes(n), /*zero=*/true);  // zeroed once: every call leaves it zero
    Measurement m = proto;
    m.strategy = strategy->name;
    m = s.measure(m, strategy, [&](std::uint64_t call) {
      plan.run(Input::array(input_of_call(call), n), s.slots.get(), /*accumulate=*/false, workspace.get(),
               workspace.size(), s.stream);
    }, expected);
    s.results.rows.push_back(m);
    line += " | " + m.strategy + " " + gbps_text(m);
  }
  s.progress(line);
}

bool GpuBench::reuse_case(const CaseLabel& label, SampleType type, std::uint64_t n, const Binning& binning) {
  State& s = *state_;
  const std::string problem = problem_text(type, binning);
  std::vector<Measurement> earlier;
  for (const Measurement& m : s.results.rows)
    if (m.dataset == label.dataset && m.n == n && m.problem == problem && m.section != label.section &&
        (earlier.empty() || m.section == earlier.front().section))
      earlier.push_back(m);
  for (Measurement m : earlier) {
    m.note = "measured in " + m.section + (m.note.empty() ? "" : "; " + m.note);
    m.section = label.section;
    m.series = label.series;
    m.x = label.x;
    s.results.rows.push_back(std::move(m));
  }
  if (!earlier.empty())
    s.progress("[" + label.section + "] " + label.dataset + ", n = " + std::to_string(n) + ": measured in " +
               earlier.front().section);
  return !earlier.empty();
}

}  // namespace levelhist::bench
