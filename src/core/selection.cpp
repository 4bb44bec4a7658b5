// auto's choice: one table. Each row names a class of problems (sample types,
// bins, layout, weights, samples), the compute capabilities it was measured
// on, the strategy to run, and the measurement in docs/BENCHMARKS.md that put
// it there. choose_strategy takes the first row that matches and whose
// strategy accepts the problem (a strategy may still decline, e.g. when its
// shared-memory histogram does not fit this device); rows below a row are
// what the measurements ranked next.
//
// Adding a strategy to auto's choices is a row here, placed by its measurement.
#include <cstdint>
#include <limits>
#include <string>

#include "levelhist/cuda.hpp"
#include "levelhist/error.hpp"
#include "levelhist/strategy.hpp"

namespace levelhist {
namespace {

constexpr unsigned bit(SampleType t) { return 1u << static_cast<unsigned>(t); }
constexpr unsigned kBytes = bit(SampleType::u8) | bit(SampleType::i8);
constexpr unsigned kAnyType = 0xFFu;
constexpr unsigned kWide = kAnyType & ~kBytes;                    // 16-, 32- and 64-bit samples
constexpr unsigned kWideNotF64 = kWide & ~bit(SampleType::f64);
constexpr unsigned kIntKeys = bit(SampleType::u32) | bit(SampleType::i32);
constexpr std::uint64_t kAny = std::numeric_limits<std::uint64_t>::max();

enum class Kinds : std::uint8_t { any, even, edges };
enum class Layouts : std::uint8_t { any, plain, pixels };
enum class Values : std::uint8_t { any, counts, weighted, deterministic };
enum class Shapes : std::uint8_t { any, single, segments, tiles, axes };

struct ProblemClass {
  unsigned types = kAnyType;
  Kinds kinds = Kinds::any;
  std::uint64_t min_bins = 1, max_bins = kAny;
  std::uint64_t max_slots = kAny;
  Layouts layout = Layouts::any;
  Values values = Values::any;
  std::uint64_t min_n = 0, max_n = kAny;  // samples of the call, where the plan knows them (0: unknown)
  Shapes shape = Shapes::any;  // single: one histogram (per channel); segments, tiles: batches; axes: N-d
};

struct Row {
  Backend backend;
  int min_cc, max_cc;  // compute capability, major * 10 + minor; CPU rows: any
  ProblemClass when;
  const char* strategy;
  const char* evidence;
};

constexpr int kAnyCc = 0, kMaxCc = 999;

// The table. CUDA rows were measured on Hopper (sm_90: H200 and H100); the
// library is built for sm_80 and sm_90, and nothing measured elsewhere says to
// choose differently, so the rows hold from sm_80 on.
constexpr Row kTable[] = {
    // ---- CUDA ----
    {Backend::cuda, 80, kMaxCc, {.shape = Shapes::segments}, "gpu_segments",
     "the batch kernel (a block per small segment, the segment split over blocks when large); bench --shapes"},
    {Backend::cuda, 80, kMaxCc, {.shape = Shapes::tiles}, "gpu_segments", "the batch kernel over tiles; bench --shapes"},
    {Backend::cuda, 80, kMaxCc, {.shape = Shapes::axes}, "gpu_joint",
     "the N-d kernel (shared-memory histogram, split in parts that fit); bench --shapes"},
    {Backend::cuda, 80, kMaxCc, {.values = Values::deterministic}, "gpu_weighted_exact",
     "the deterministic weighted kernel (integer quanta in shared memory); bench --shapes"},
    {Backend::cuda, 80, kMaxCc, {.types = kBytes, .layout = Layouts::plain, .values = Values::counts},
     "gpu_lane_columns",
     "BENCHMARKS.md, the 256-bin byte kernel: 95-100% of the read limit on every distribution, H200 and H100"},
    {Backend::cuda, 80, kMaxCc, {.types = kBytes, .layout = Layouts::pixels, .values = Values::counts},
     "gpu_pixel_lane_columns", "BENCHMARKS.md, general histograms: RGBA 4x256 and RGB of RGBA at 90% of the limit"},
    {Backend::cuda, 80, kMaxCc, {.layout = Layouts::plain, .values = Values::weighted}, "gpu_weighted_shared",
     "BENCHMARKS.md, general histograms: f32 + f32 weights, 3x torch.bincount; 2026-11-28: 16 lane copies, 91-92% of "
     "the read limit (H100), loads staged from 64 MiB: 84-85% (H200)"},
    {Backend::cuda, 80, kMaxCc, {.layout = Layouts::plain, .values = Values::weighted}, "gpu_weighted_exact",
     "sums of squares beside the sums (gpu_weighted_shared keeps none): the deterministic kernel"},
    {Backend::cuda, 80, kMaxCc,
     {.types = kWide, .kinds = Kinds::edges, .max_slots = 512, .layout = Layouts::plain, .values = Values::counts},
     "gpu_shared_lanes", "BENCHMARKS.md, general histograms: f32 in 64 uneven edges (cell table + lane columns)"},
    {Backend::cuda, 80, kMaxCc, {.types = kWideNotF64, .layout = Layouts::plain, .values = Values::counts},
     "gpu_shared_swizzle", "BENCHMARKS.md, general histograms: u16 4096 bins and f32 1024 even bins"},
    {Backend::cuda, 80, kMaxCc,
     {.types = kIntKeys, .kinds = Kinds::even, .min_bins = 65537, .layout = Layouts::plain, .values = Values::counts},
     "gpu_partition_count",
     "BENCHMARKS.md, 2026-11-29: u32 keys in 2^20 and 2^24 bins, 1.7-2.2x gpu_bucket_sort at 1 GiB and 1.7-7x at 16 MiB, every distribution"},
    {Backend::cuda, 80, kMaxCc,
     {.types = kIntKeys, .kinds = Kinds::even, .min_bins = 65537, .layout = Layouts::plain, .values = Values::counts},
     "gpu_bucket_sort", "BENCHMARKS.md, general histograms: u32 keys in 2^20 and 2^24 bins (beyond 2^27 bins: gpu_partition_count declines)"},
    {Backend::cuda, 80, kMaxCc, {.types = kWide, .layout = Layouts::plain, .values = Values::counts},
     "gpu_split_bins", "BENCHMARKS.md, general histograms: u16 in 65536 bins (two parts of shared memory)"},
    {Backend::cuda, 80, kMaxCc, {.types = kWide, .layout = Layouts::plain, .values = Values::counts},
     "gpu_block_global",
     "the fallback for bins no shared-memory layout holds (more than 8 parts): per-block copies in global memory"},
    // ---- CPU ----
    {Backend::cpu, kAnyCc, kMaxCc, {.layout = Layouts::plain, .values = Values::counts}, "cpu_parallel",
     "BENCHMARKS.md, CPU: the acceptance run (all cores; AVX-512 byte counter); batches and N-d points too"},
    {Backend::cpu, kAnyCc, kMaxCc, {.layout = Layouts::plain, .values = Values::weighted, .shape = Shapes::single},
     "cpu_parallel", "BENCHMARKS.md, 2026-11-28: weighted sums on the CPU, 3.4x cpu_serial on 2 cores"},
    {Backend::cpu, kAnyCc, kMaxCc, {}, "cpu_serial",
     "the reference loop: the only CPU strategy for pixels with channels (weighted or not)"},
};

std::string type_set(unsigned types) {
  if (types == kAnyType) return "any type";
  if (types == kBytes) return "u8/i8";
  if (types == kWide) return "16/32/64-bit";
  if (types == kWideNotF64) return "16/32-bit, f32";
  if (types == kIntKeys) return "u32/i32";
  std::string out;
  for (SampleType t : kAllSampleTypes) {
    if (!(types & bit(t))) continue;
    if (!out.empty()) out += '/';
    out += to_string(t);
  }
  return out;
}

std::string describe(const ProblemClass& c) {
  std::string out = type_set(c.types);
  if (c.kinds == Kinds::even) out += ", even bins";
  if (c.kinds == Kinds::edges) out += ", explicit edges";
  if (c.min_bins > 1) out += ", > " + std::to_string(c.min_bins - 1) + " bins";
  if (c.max_bins != kAny) out += ", <= " + std::to_string(c.max_bins) + " bins";
  if (c.max_slots != kAny) out += ", <= " + std::to_string(c.max_slots) + " slots";
  if (c.layout == Layouts::plain) out += ", plain array";
  if (c.layout == Layouts::pixels) out += ", pixels";
  if (c.values == Values::counts) out += ", counts";
  if (c.values == Values::weighted) out += ", weighted";
  if (c.values == Values::deterministic) out += ", deterministic weighted";
  if (c.shape == Shapes::single) out += ", one histogram";
  if (c.shape == Shapes::segments) out += ", segments";
  if (c.shape == Shapes::tiles) out += ", tiles";
  if (c.shape == Shapes::axes) out += ", N-d";
  if (c.min_n > 0) out += ", n >= " + std::to_string(c.min_n);
  if (c.max_n != kAny) out += ", n <= " + std::to_string(c.max_n);
  return out;
}

// Empty when the problem is of the class; else the first thing that differs.
std::string mismatch(const ProblemClass& c, const Problem& p) {
  const std::uint64_t bins = p.binning->bins();
  if (!(c.types & bit(p.type))) return std::string(to_string(p.type)) + " samples";
  if (c.kinds == Kinds::even && p.binning->kind() != BinKind::even) return "explicit edges";
  if (c.kinds == Kinds::edges && p.binning->kind() != BinKind::edges) return "even bins";
  if (bins < c.min_bins || bins > c.max_bins || p.binning->slots() > c.max_slots)
    return std::to_string(bins) + " bins";
  if (c.layout == Layouts::plain && !p.layout.is_plain()) return "pixels";
  if (c.layout == Layouts::pixels && p.layout.is_plain()) return "a plain array";
  if (c.values == Values::counts && p.weighted) return "weights";
  if (c.values == Values::weighted && !p.weighted) return "counts";
  if (c.values == Values::deterministic && !(p.weighted && p.deterministic))
    return p.weighted ? "weights summed in double" : "counts";
  const bool segments = p.batch.kind == BatchKind::equal || p.batch.kind == BatchKind::offsets;
  const bool tiles = p.batch.kind == BatchKind::tiles, axes = p.axis_count > 1;
  if (c.shape == Shapes::single && (segments || tiles || axes)) return segments || tiles ? "a batch" : "several axes";
  if (c.shape == Shapes::segments && !segments) return tiles ? "tiles" : "no segments";
  if (c.shape == Shapes::tiles && !tiles) return segments ? "segments" : "no tiles";
  if (c.shape == Shapes::axes && !axes) return "one axis";
  if (p.n != 0 && (p.n < c.min_n || p.n > c.max_n)) return std::to_string(p.n) + " samples";
  return {};
}

int capability_for(Backend backend) { return backend == Backend::cuda ? cuda::compute_capability() : kAnyCc; }

}  // namespace

std::vector<SelectionStep> explain_choice(const Problem& problem, Backend backend) {
  std::vector<SelectionStep> steps;
  const int cc = capability_for(backend);
  bool chosen = false;
  for (const Row& row : kTable) {
    if (row.backend != backend) continue;
    SelectionStep step;
    step.row = describe(row.when);
    if (row.backend == Backend::cuda) step.row += ", sm_" + std::to_string(row.min_cc) + "+";
    step.strategy = row.strategy;
    step.evidence = row.evidence;
    if (chosen) {
      step.why = "an earlier row was chosen";
    } else if (cc < row.min_cc || cc > row.max_cc) {
      step.why = cc == 0 ? "no CUDA device" : "compute capability " + std::to_string(cc) + " is outside the row's";
    } else if (std::string differs = mismatch(row.when, problem); !differs.empty()) {
      step.why = "the problem has " + differs;
    } else {
      step.matched = true;
      const Strategy* s = find_strategy(row.strategy);
      std::string why;
      if (!s) step.why = "not in this build";
      else if (!strategy_accepts(*s, problem, &why)) step.why = "declines: " + why;
      else step.chosen = chosen = true;
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

const Strategy& choose_strategy(const Problem& problem, Backend backend) {
  for (const SelectionStep& step : explain_choice(problem, backend))
    if (step.chosen) return *find_strategy(step.strategy);
  throw Error(ErrorKind::unsupported,
              "no " + std::string(to_string(backend)) + " strategy can count " + std::string(to_string(problem.type)) +
                  " samples into " + problem.binning->describe() + (problem.layout.is_plain() ? "" : " as pixels") +
                  (problem.weighted ? " with weights" : "") + (problem.batch.is_none() ? "" : " in a batch") +
                  (problem.axis_count > 1 ? " on " + std::to_string(problem.axis_count) + " axes" : ""),
              backend == Backend::cuda ? "use the CPU backend" : "", ErrorSubject::backend);
}

}  // namespace levelhist
