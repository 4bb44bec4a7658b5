// The new shapes on a GPU (gpu_segments, gpu_joint, gpu_weighted_exact, and
// auto's choice): every result checked slot for slot against cpu_serial (the
// reference), through the host path (Plan::fill) and through device memory
// (Plan::run, clearing and accumulating, the workspace left zero), on
// adversarial inputs: constant data, one hot bin, empty segments, segments of
// one sample, segments that straddle the kernels' work items, tiles that do
// not divide the frame, misaligned columns, NaN and infinite weights.
// Deterministic sums must be bit-identical to the reference's.
#include <gtest/gtest.h>

#if !LEVELHIST_HAVE_CUDA

TEST(GpuShapes, NeedACudaBuild) { GTEST_SKIP() << "this build has no CUDA backend (LEVELHIST_CUDA=OFF or no nvcc)"; }

#else

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "gpu_test_support.hpp"
#include "scoped_support.hpp"

namespace levelhist::test {
namespace {

Options on_cuda(const char* strategy = "auto") {
  Options o;
  o.strategy = strategy;
  o.backend = BackendChoice::cuda;
  return o;
}
Options reference() {
  Options o;
  o.strategy = "cpu_serial";
  o.backend = BackendChoice::cpu;
  return o;
}

template <class T>
std::vector<T> noise(std::size_t n, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(d(rng));
  return v;
}

// Host memory copied to the device at an offset of `shift` bytes (misalignment).
struct OnDevice {
  DeviceBytes bytes;
  unsigned char* at = nullptr;
  OnDevice(const void* host, std::size_t n, std::size_t shift = 0) : bytes(n + shift + 16) {
    at = bytes.get() + shift;
    if (n) LEVELHIST_TEST_CUDA(cudaMemcpy(at, host, n, cudaMemcpyHostToDevice));
  }
};

// Runs `plan` on device copies of `input`'s arrays (the pointers replaced by
// the caller's device ones) into 8-byte output values: once clearing (over
// garbage), once accumulating; checks the workspace is left zero. Returns the
// cleared result and expects the accumulated one to be twice it (counts).
std::vector<std::uint64_t> run_on_device(const Plan& plan, const Input& device_input, bool doubles = false) {
  const std::uint64_t values = plan.request().output_slots();
  const std::size_t ws = plan.workspace_bytes(std::max<std::uint64_t>(device_input.n, 1) * 4 + (1 << 20));
  DeviceBytes workspace(std::max<std::size_t>(ws, 256)), out(values * 8);
  LEVELHIST_TEST_CUDA(cudaMemset(workspace.get(), 0, workspace.size()));
  LEVELHIST_TEST_CUDA(cudaMemset(out.get(), 0x5A, out.size()));  // garbage the first call must clear
  plan.run(device_input, out.get(), /*accumulate=*/false, workspace.get(), workspace.size());
  std::vector<std::uint64_t> first(values), second(values);
  LEVELHIST_TEST_CUDA(cudaMemcpy(first.data(), out.get(), values * 8, cudaMemcpyDeviceToHost));
  plan.run(device_input, out.get(), /*accumulate=*/true, workspace.get(), workspace.size());
  LEVELHIST_TEST_CUDA(cudaMemcpy(second.data(), out.get(), values * 8, cudaMemcpyDeviceToHost));
  std::vector<unsigned char> ws_after(workspace.size());
  LEVELHIST_TEST_CUDA(cudaMemcpy(ws_after.data(), workspace.get(), ws_after.size(), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::all_of(ws_after.begin(), ws_after.end(), [](unsigned char c) { return c == 0; }))
      << "the workspace was not left zero";
  for (std::uint64_t i = 0; i < values && !doubles; ++i) EXPECT_EQ(second[i], 2 * first[i]) << "slot " << i;
  return first;
}

std::vector<std::uint64_t> reference_slots(const Request& r, const Input& host_input) {
  std::vector<std::uint64_t> out(r.output_slots(), 0);
  Plan(r, reference()).fill_slots(out.data(), host_input, false);
  return out;
}

const char* const kBatchStrategies[] = {"gpu_segments", "auto"};

// ---- batches -------------------------------------------------------------------------

template <class T>
void check_segments(const Request& r, const std::vector<T>& x, const std::vector<std::uint64_t>& offsets,
                    const std::string& what) {
  Input host = r.batch.kind == BatchKind::offsets ? Input::segments(x.data(), x.size(), offsets.data())
                                                 : Input::array(x.data(), x.size());
  const std::vector<std::uint64_t> want = reference_slots(r, host);
  for (const char* s : kBatchStrategies) {
    const Plan plan(r, on_cuda(s));
    EXPECT_STREQ(plan.strategy().name, "gpu_segments");
    std::vector<std::uint64_t> got(r.output_slots(), 0);
    plan.fill_slots(got.data(), host, false);
    ASSERT_EQ(got, want) << s << " host path, " << what;
    for (std::size_t shift : {0, 1}) {
      OnDevice dx(x.data(), x.size() * sizeof(T), shift);
      OnDevice doff(offsets.data(), offsets.size() * 8);
      Input dev = host;
      dev.samples = dx.at;
      if (host.offsets) dev.offsets = reinterpret_cast<const std::uint64_t*>(doff.at);
      ASSERT_EQ(run_on_device(plan, dev), want) << s << " device, shift " << shift << ", " << what;
    }
  }
}

// 8-bit samples are counted by blocks in lane columns (ByteColumns) or in one
// copy per warp with LEVELHIST_SEGMENT_BYTE_COLUMNS=0 (WarpCopies), and short
// segments of 256 one-value bins a warp a segment (LEVELHIST_SEGMENT_WARPS=1
// takes that path for segments up to 64 KiB, =0 never, unset up to 4 KiB,
// by offsets on average with the longer ones listed for the grid):
// the batch tests run all three and the default choice.
struct ByteLayout {
  const char* name;
  const char* byte_columns;  // LEVELHIST_SEGMENT_BYTE_COLUMNS
  const char* segment_warps; // LEVELHIST_SEGMENT_WARPS
};
const ByteLayout kByteLayouts[] = {{"byte columns", "1", "0"},
                                    {"warp copies", "0", "0"},
                                    {"a warp a segment", "1", "1"},
                                    {"the default choice", "", ""}};

// Sets a layout's knobs for as long as it lives.
struct ScopedByteLayout {
  ScopedEnv columns, warps;
  explicit ScopedByteLayout(const ByteLayout& l)
      : columns("LEVELHIST_SEGMENT_BYTE_COLUMNS", l.byte_columns), warps("LEVELHIST_SEGMENT_WARPS", l.segment_warps) {}
};

TEST(GpuShapes, EqualSegmentsAroundTheWorkItems) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning bytes = Binning::per_value(SampleType::u8);
  for (const ByteLayout& layout : kByteLayouts) {
    const ScopedByteLayout knobs(layout);
    const std::string how = std::string(", ") + layout.name;
    // Items are 16 KiB: lengths that divide it, straddle it, and exceed it.
    for (std::uint64_t length : {1u, 7u, 4096u, 16383u, 16384u, 16385u, 100000u}) {
      const std::uint64_t segments = std::max<std::uint64_t>(3, (std::uint64_t{3} << 20) / length / 8);
      std::vector<std::uint8_t> x = noise<std::uint8_t>(segments * length, length, 0, 256);
      std::fill(x.begin(), x.begin() + std::min<std::size_t>(x.size(), 3 * length), 77);  // constant segments first
      check_segments(Request::segments(SampleType::u8, bytes, segments), x, {}, "length " + std::to_string(length) + how);
    }
    // 8-bit samples whose values share slots, with flows: even bins (the
    // slots' sums of a flush) and explicit edges (a cell table beside the columns).
    std::vector<std::int8_t> s8 = noise<std::int8_t>(40 * 70001, 3, -128, 128);
    std::fill(s8.begin() + 70001, s8.begin() + 3 * 70001, std::int8_t{-128});
    check_segments(Request::segments(SampleType::i8, Binning::even(10, -100, 100), 40), s8, {}, "i8 even" + how);
    // Signed bytes one bin a value: slot x + 128, not the byte's bits (the
    // warp-a-segment path counts unsigned bytes only), in short segments.
    std::vector<std::int8_t> s8short = noise<std::int8_t>(1000 * 4000, 4, -128, 128);
    std::fill(s8short.begin(), s8short.begin() + 8000, std::int8_t{-128});
    check_segments(Request::segments(SampleType::i8, Binning::per_value(SampleType::i8), 1000), s8short, {},
                   "i8 one bin a value, 4000-byte segments" + how);
    std::vector<std::uint8_t> u8 = noise<std::uint8_t>(300 * 4096, 5, 0, 256);
    check_segments(Request::segments(SampleType::u8, Binning::explicit_edges({3, 50, 51, 200, 255}), 300), u8, {},
                   "u8 edges" + how);
    // Segments of whole 16-byte vectors (an item's loads at once): 1001 of 1 KiB,
    // so the last item holds 9 of its 16; 256 bytes, the shortest that way; 240, one vector less.
    for (std::uint64_t length : {1024u, 256u, 240u}) {
      std::vector<std::uint8_t> v = noise<std::uint8_t>(1001 * length, length + 1, 0, 256);
      std::fill(v.begin() + length, v.begin() + 2 * length, std::uint8_t{255});
      check_segments(Request::segments(SampleType::u8, bytes, 1001), v, {}, "whole vectors " + std::to_string(length) + how);
      check_segments(Request::segments(SampleType::u8, Binning::even(7, 10, 250), 1001), v, {},
                     "whole vectors, even bins " + std::to_string(length) + how);
    }
  }
  const Binning floats = Binning::explicit_edges({-1, -0.5, 0, 0.001, 0.5, 2});  // a cell table
  std::vector<float> f = noise<float>(64 * 5000, 9, -2, 3);
  f[17] = std::nanf("");
  check_segments(Request::segments(SampleType::f32, floats, 64), f, {}, "f32 edges");
  std::vector<std::uint16_t> none;
  check_segments(Request::segments(SampleType::u16, Binning::even(10, 0, 65536), 5), none, {}, "no samples");
}

TEST(GpuShapes, SegmentsByOffsets) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning b = Binning::even(64, 0, 65536);
  std::vector<std::uint16_t> x = noise<std::uint16_t>(200000, 4, 0, 65536);
  std::fill(x.begin() + 50000, x.begin() + 120000, 31000);  // a one-hot stretch across several items
  // Empty segments (first, inside, last, beyond the samples), single samples,
  // segments inside one item, straddling two, spanning many; a first offset above 0.
  std::vector<std::uint64_t> offsets = {5, 5, 6, 7, 8191, 8192, 8193, 8200, 30000, 30001, 150000, 150000, 199999,
                                        200000, 200000};
  check_segments(Request::segments_by_offsets(SampleType::u16, b, offsets.size() - 1), x, offsets, "mixed");
  // Many small segments of random lengths, 0 to 40.
  std::mt19937 rng(2);
  std::vector<std::uint64_t> small = {0};
  while (small.back() < x.size()) small.push_back(std::min<std::uint64_t>(x.size(), small.back() + rng() % 41));
  check_segments(Request::segments_by_offsets(SampleType::u16, b, small.size() - 1), x, small, "small");
  // Bytes, every layout: the same offsets over 400000 bytes, and random lengths of 0 to 40000.
  std::vector<std::uint8_t> bytes = noise<std::uint8_t>(400000, 6, 0, 256);
  std::fill(bytes.begin() + 16000, bytes.begin() + 90000, std::uint8_t{200});
  std::vector<std::uint64_t> wide = {0};
  while (wide.back() < bytes.size()) wide.push_back(std::min<std::uint64_t>(bytes.size(), wide.back() + rng() % 40001));
  // Bytes whose count is no multiple of 16 (the last item ends inside a
  // vector), in segments of 0 to 40 (hundreds an item: more than an item reads
  // the bounds of at once) ending at the last byte.
  std::vector<std::uint8_t> odd = noise<std::uint8_t>(100005, 7, 0, 256);
  std::fill(odd.begin() + 30000, odd.begin() + 31000, std::uint8_t{0});
  std::vector<std::uint64_t> tiny = {0};
  while (tiny.back() < odd.size()) tiny.push_back(std::min<std::uint64_t>(odd.size(), tiny.back() + rng() % 41));
  // Long segments among many short ones (about 2 KiB on average, so a warp a
  // segment by default): the ones over 64 KiB go back to the whole grid, one
  // of exactly 64 KiB stays with its warp, one is constant.
  std::vector<std::uint8_t> mixed = noise<std::uint8_t>(std::size_t{5} << 20, 8, 0, 256);
  std::vector<std::uint64_t> long_short = {0};
  for (std::uint64_t length : {65537u, 65536u, 300000u, 2000000u, 65600u}) {
    for (int k = 0; k < 300; ++k) long_short.push_back(long_short.back() + rng() % 2049);
    if (length == 300000u) std::fill(mixed.begin() + long_short.back(), mixed.begin() + long_short.back() + length, 3);
    long_short.push_back(long_short.back() + length);
  }
  while (long_short.back() < mixed.size())
    long_short.push_back(std::min<std::uint64_t>(mixed.size(), long_short.back() + rng() % 2049));
  for (const ByteLayout& layout : kByteLayouts) {
    const ScopedByteLayout knobs(layout);
    const std::string how = std::string(", ") + layout.name;
    const Binning u8 = Binning::per_value(SampleType::u8);
    check_segments(Request::segments_by_offsets(SampleType::u8, u8, long_short.size() - 1), mixed, long_short,
                   "u8 long among short" + how);
    check_segments(Request::segments_by_offsets(SampleType::u8, u8, offsets.size() - 1), bytes, offsets, "u8 mixed" + how);
    check_segments(Request::segments_by_offsets(SampleType::u8, u8, wide.size() - 1), bytes, wide, "u8 wide" + how);
    check_segments(Request::segments_by_offsets(SampleType::u8, u8, tiny.size() - 1), odd, tiny, "u8 tiny" + how);
    check_segments(Request::segments_by_offsets(SampleType::u8, Binning::even(9, 20, 240), wide.size() - 1), bytes, wide,
                   "u8 wide, even bins" + how);
    check_segments(Request::segments_by_offsets(SampleType::u8, Binning::even(9, 20, 240), tiny.size() - 1), odd, tiny,
                   "u8 tiny, even bins" + how);
  }
}

// Device offsets are the caller's to keep in order (the host path checks them;
// the device path cannot without a pass of its own). Out of order, the counts
// are unspecified, but every read stays inside the input and every write
// inside the output: a segment met in an item it does not reach is skipped (it
// once gave a sample count below zero: a read far past the input). The call
// must finish without a fault, and the next one, on sorted offsets, count right.
TEST(GpuShapes, SegmentsByOffsetsOutOfOrderStayInside) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning u8 = Binning::per_value(SampleType::u8);
  const std::size_t n = std::size_t{24} << 20;  // items enough that every block takes several in a row
  const std::vector<std::uint8_t> x = noise<std::uint8_t>(n, 15, 0, 256);
  std::mt19937_64 rng(16);
  std::vector<std::uint64_t> shuffled(4001);
  for (auto& o : shuffled) o = rng() % (n + 1000);  // some past the end
  std::vector<std::uint64_t> sorted = shuffled;
  std::sort(sorted.begin(), sorted.end());
  const Request r = Request::segments_by_offsets(SampleType::u8, u8, shuffled.size() - 1);
  const std::vector<std::uint64_t> want = reference_slots(r, Input::segments(x.data(), n, sorted.data()));
  for (const ByteLayout& layout : kByteLayouts) {
    const ScopedByteLayout knobs(layout);
    const Plan plan(r, on_cuda("gpu_segments"));
    for (std::size_t shift : {0, 1}) {
      const std::string what = std::string(layout.name) + ", shift " + std::to_string(shift);
      OnDevice dx(x.data(), n, shift), bad(shuffled.data(), shuffled.size() * 8), good(sorted.data(), sorted.size() * 8);
      DeviceBytes out(r.output_slots() * 8);
      DeviceBytes workspace(std::max<std::size_t>(plan.workspace_bytes(n * 4 + (1 << 20)), 256));
      LEVELHIST_TEST_CUDA(cudaMemset(workspace.get(), 0, workspace.size()));
      Input in = Input::segments(x.data(), n, sorted.data());
      in.samples = dx.at;
      in.offsets = reinterpret_cast<const std::uint64_t*>(bad.at);
      ASSERT_NO_THROW(plan.run(in, out.get(), false, workspace.get(), workspace.size())) << what;
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
      in.offsets = reinterpret_cast<const std::uint64_t*>(good.at);
      plan.run(in, out.get(), false, workspace.get(), workspace.size());
      std::vector<std::uint64_t> got(r.output_slots());
      LEVELHIST_TEST_CUDA(cudaMemcpy(got.data(), out.get(), got.size() * 8, cudaMemcpyDeviceToHost));
      ASSERT_EQ(got, want) << what;
    }
  }
}

template <class T>
void check_tiles(const Binning& b, int w, int h, int pad, unsigned rows, unsigned cols, std::uint64_t seed,
                 const std::string& how) {
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  const std::uint64_t pitch = w + pad;  // in samples
  std::vector<T> img(pitch * h, static_cast<T>(0xEE));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img[y * pitch + x] = y < h / 2 ? T{9} : static_cast<T>(rng());
  const Request r = Request::tiles(sample_type_of<T>(), b, rows, cols);
  const Input host = Input::image(img.data(), w, h, pitch * sizeof(T));
  const std::vector<std::uint64_t> want = reference_slots(r, host);
  const std::string what = std::to_string(w) + "x" + std::to_string(h) + " pitch " + std::to_string(pitch) + how;
  for (const char* s : kBatchStrategies) {
    const Plan plan(r, on_cuda(s));
    std::vector<std::uint64_t> got(r.output_slots(), 0);
    plan.fill_slots(got.data(), host, false);
    ASSERT_EQ(got, want) << s << " host " << what;
    OnDevice d(img.data(), img.size() * sizeof(T));
    ASSERT_EQ(run_on_device(plan, Input::image(d.at, w, h, pitch * sizeof(T))), want) << s << " device " << what;
  }
}

TEST(GpuShapes, TilesThatDivideAndDoNot) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning b = Binning::per_value(SampleType::u8);
  // Tiles of one band, of many bands (width 16 KiB and more: one row per band),
  // and empty tiles; pitches that are multiples of 16 bytes (a band's rows
  // read as one range) and that are not (row by row).
  for (const ByteLayout& layout : kByteLayouts) {
    const ScopedByteLayout knobs(layout);
    const std::string how = std::string(", ") + layout.name;
    for (auto [w, h, pad, rows, cols] : {std::tuple{640, 480, 0, 8, 8}, std::tuple{1001, 333, 7, 7, 3},
                                         std::tuple{5, 9, 0, 4, 4}, std::tuple{40000, 9, 3, 2, 1},
                                         std::tuple{3000, 2000, 0, 1, 1}, std::tuple{2048, 600, 0, 3, 8},
                                         std::tuple{77, 5000, 3, 5, 1}}) {
      check_tiles<std::uint8_t>(b, w, h, pad, rows, cols, 8, how);
    }
    check_tiles<std::int8_t>(Binning::even(7, -50, 90), 1000, 700, 8, 3, 4, 9, how);
  }
  // Wider samples: rows of 16-bit pixels whose pitch is a multiple of 16 bytes, and one that is not.
  check_tiles<std::uint16_t>(Binning::even(4096, 0, 65536), 1200, 900, 8, 4, 4, 10, "");
  check_tiles<std::uint16_t>(Binning::even(4096, 0, 65536), 1201, 900, 0, 4, 4, 11, "");
}

// Inputs of thousands of work items, so that every block takes several in a
// row: a long segment or a tile is written out when the block leaves it (or
// its range of items ends), segments by offsets straddle the items of two blocks.
TEST(GpuShapes, BatchesOfManyItemsABlock) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning u8 = Binning::per_value(SampleType::u8);
  const std::size_t n = std::size_t{48} << 20;
  std::vector<std::uint8_t> x = noise<std::uint8_t>(n, 12, 0, 256);
  std::fill(x.begin() + (5 << 20), x.begin() + (9 << 20), std::uint8_t{3});
  std::mt19937_64 rng(13);
  std::vector<std::uint64_t> offsets = {0};
  while (offsets.back() < n) {  // lengths 0 to 40000, runs of empty segments, now and then a long one
    const std::uint64_t r = rng() % 100;
    const std::uint64_t len = r < 10 ? 0 : r < 12 ? 300000 + rng() % 100000 : rng() % 40001;
    offsets.push_back(std::min<std::uint64_t>(n, offsets.back() + len));
  }
  for (const ByteLayout& layout : kByteLayouts) {
    const ScopedByteLayout knobs(layout);
    const std::string how = std::string(", ") + layout.name;
    const std::vector<std::uint8_t> whole(x.begin(), x.begin() + n / 100000 * 100000);
    check_segments(Request::segments(SampleType::u8, u8, n / 100000), whole, {}, "equal segments of 100000" + how);
    check_segments(Request::segments_by_offsets(SampleType::u8, u8, offsets.size() - 1), x, offsets, "offsets" + how);
    check_segments(Request::segments(SampleType::u8, u8, n / 4096), x, {}, "equal segments of 4096" + how);
    // A block a tile column (the default) and tile by tile: 1024 x 512 tiles
    // (32 bands of 16 rows each), and 7 x 5 tiles of 1171 x 820 that do not
    // divide the image (bands of 13 rows, the last one shorter; 7 columns do
    // not divide the resident blocks).
    for (const char* groups : {"1", "0"}) {
      ScopedEnv order("LEVELHIST_TILE_COLUMN_GROUPS", groups);
      const std::string tiles_how = how + ", column groups " + groups;
      check_tiles<std::uint8_t>(u8, 8192, 4096, 0, 8, 8, 14, tiles_how);
      check_tiles<std::uint8_t>(u8, 8193, 4100, 15, 5, 7, 15, tiles_how);
    }
  }
  // The byte columns with the next item's loads in flight (the default) and
  // without: equal segments of whole vectors (two an item), parts of long
  // segments (the last part of each shorter), and tile columns whose bands
  // are whole vectors, a tile's last band shorter than the others (8 x 8
  // tiles of 1024 x 513: bands of 16 rows, the last of one; the last tile row
  // 509 rows) and rows padded to a 16-byte pitch (tiles of 1024 x 500: the
  // last band 4 rows).
  for (const char* pipeline : {"1", "0"}) {
    ScopedEnv knob("LEVELHIST_SEGMENT_PIPELINE", pipeline);
    const std::string how = std::string(", pipeline ") + pipeline;
    check_segments(Request::segments(SampleType::u8, u8, n / 8192), x, {}, "equal segments of 8192" + how);
    const std::vector<std::uint8_t> whole(x.begin(), x.begin() + n / 100000 * 100000);
    check_segments(Request::segments(SampleType::u8, u8, n / 100000), whole, {}, "equal segments of 100000" + how);
    check_tiles<std::uint8_t>(u8, 8192, 4100, 0, 8, 8, 16, how);
    check_tiles<std::uint8_t>(u8, 4096, 3000, 16, 6, 4, 17, how);
    check_tiles<std::uint8_t>(u8, 4096, 2048, 0, 4, 4, 18, how);
  }
}

// ---- N-d -------------------------------------------------------------------------------

template <class T>
void check_joint(const std::vector<Binning>& axes, const std::vector<std::vector<T>>& columns, const std::string& what) {
  const unsigned k = static_cast<unsigned>(axes.size());
  const std::size_t n = columns[0].size();
  std::vector<T> interleaved(n * k);
  for (std::size_t i = 0; i < n; ++i)
    for (unsigned a = 0; a < k; ++a) interleaved[i * k + a] = columns[a][i];
  const Request r = Request::joint(sample_type_of<T>(), axes);
  const std::vector<std::uint64_t> want = reference_slots(r, Input::array(interleaved.data(), n));
  for (const char* s : {"gpu_joint", "auto"}) {
    const Plan plan(r, on_cuda(s));
    EXPECT_STREQ(plan.strategy().name, "gpu_joint");
    HistogramNd host(axes);
    plan.fill(host, Input::array(interleaved.data(), n));
    ASSERT_TRUE(std::equal(want.begin(), want.end(), host.slots().begin())) << s << " host interleaved, " << what;
    // Host columns, one array per axis (as `levelhist joint` passes two images).
    HistogramNd host_columns(axes);
    Input cols;
    cols.n = n;
    for (unsigned a = 0; a < k; ++a) cols.columns[a] = columns[a].data();
    cols.samples = cols.columns[0];
    plan.fill(host_columns, cols);
    ASSERT_TRUE(std::equal(want.begin(), want.end(), host_columns.slots().begin())) << s << " host columns, " << what;
    // Points side by side at a 16-byte boundary, one and several points past
    // one (2-D: the points before it counted apart), off a point's size, and
    // off the sample size (the unaligned loads).
    for (std::size_t shift : {std::size_t{0}, sizeof(T), 2 * sizeof(T), 6 * sizeof(T), std::size_t{1}}) {
      OnDevice di(interleaved.data(), interleaved.size() * sizeof(T), shift);
      ASSERT_EQ(run_on_device(plan, Input::array(di.at, n)), want)
          << s << " device interleaved, shift " << shift << ", " << what;
    }
    for (std::size_t shift : {std::size_t{0}, sizeof(T), std::size_t{1}}) {  // 16-byte aligned (vector loads), aligned to T, misaligned
      std::vector<std::unique_ptr<OnDevice>> dc;
      Input in;
      in.n = n;
      for (unsigned a = 0; a < k; ++a) dc.push_back(std::make_unique<OnDevice>(columns[a].data(), n * sizeof(T), shift));
      for (unsigned a = 0; a < k; ++a) in.columns[a] = dc[a]->at;
      in.samples = in.columns[0];
      ASSERT_EQ(run_on_device(plan, in), want) << s << " device columns, shift " << shift << ", " << what;
    }
  }
}

TEST(GpuShapes, JointOfTwoImagesAndTwoDFloats) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning u8 = Binning::per_value(SampleType::u8);
  const std::size_t n = (std::size_t{1} << 20) + 13;
  std::vector<std::uint8_t> a = noise<std::uint8_t>(n, 1, 0, 256), b = noise<std::uint8_t>(n, 2, 0, 256);
  check_joint<std::uint8_t>({u8, u8}, {a, b}, "u8 noise (16-bit counters)");
  check_joint<std::uint8_t>({u8, u8}, {std::vector<std::uint8_t>(n, 200), std::vector<std::uint8_t>(n, 3)}, "constant");
  // 67^3 slots fit neither way: parts of 32-bit counters, a block per part of each chunk.
  const Binning by4 = Binning::even(64, 0, 256);
  check_joint<std::uint8_t>({by4, by4, by4}, {a, b, noise<std::uint8_t>(n, 10, 0, 256)}, "u8 64^3 (parts)");
  std::vector<float> x = noise<float>(n, 3, -0.1, 1.1), y = noise<float>(n, 4, -0.1, 1.1);
  x[5] = std::nanf(""), y[9] = INFINITY;
  const Binning hundred = Binning::even(100, 0, 1);
  check_joint<float>({hundred, hundred}, {x, y}, "f32 100 x 100");
  check_joint<float>({hundred, Binning::explicit_edges({0, 0.25, 0.3, 1})}, {x, y}, "f32 even x edges");
  check_joint<std::int16_t>({Binning::even(8, -100, 100), Binning::even(9, 0, 90), Binning::even(4, -4, 4)},
                            {noise<std::int16_t>(70001, 5, -120, 120), noise<std::int16_t>(70001, 6, -10, 100),
                             noise<std::int16_t>(70001, 7, -5, 5)},
                            "i16 3-D");
  check_joint<float>({hundred, hundred}, {std::vector<float>(1, 0.5f), std::vector<float>(1, 0.5f)}, "one point");
  check_joint<float>({hundred, hundred}, {std::vector<float>(3, 0.25f), std::vector<float>(3, 0.75f)}, "three points");
  // Constants on an edge (0.3 and 0.37 of 100 bins over [0, 1)), and samples
  // next to every edge: the near-edge comparison with the edges' thresholds.
  check_joint<float>({hundred, hundred}, {std::vector<float>(n, 0.3f), std::vector<float>(n, 0.37f)},
                     "f32 constants on edges");
  std::vector<float> ex(n), ey(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float edge = static_cast<float>(static_cast<double>(i % 101) / 100.0);
    ex[i] = std::nextafter(edge, i % 3 == 0 ? -1.0f : 2.0f);
    ey[i] = i % 3 == 2 ? std::nextafter(edge, -1.0f) : edge;
  }
  check_joint<float>({hundred, Binning::even(100, 0, 1, true, EdgeRounding::f32)}, {ex, ey}, "f32 next to the edges");
  // Runs of equal points (a thread maps a point equal to its last one once),
  // broken by NaN (never equal to itself), -0 against +0 and one coordinate.
  std::vector<float> rx(n), ry(n);
  std::mt19937_64 rng(19);
  for (std::size_t i = 0; i < n;) {
    const std::size_t len = 1 + rng() % 40;
    const float vx = rng() % 9 == 0 ? std::nanf("") : rng() % 9 == 1 ? (rng() % 2 ? -0.0f : 0.0f)
                                                                     : static_cast<float>(rng() % 101) / 100.0f;
    const float vy = static_cast<float>(rng() % 7) / 10.0f;
    for (std::size_t k = 0; k < len && i < n; ++k, ++i) rx[i] = vx, ry[i] = k % 17 == 16 ? 0.35f : vy;
  }
  check_joint<float>({hundred, hundred}, {rx, ry}, "f32 runs of equal points");
  // Points the two float guesses do not decide (a coordinate next to an edge,
  // outside the range, NaN), in turn with each other and with points they do:
  // the 2-D even path remembers the last undecided point and its slot.
  const float turns[][2] = {{0.3f, 0.3f}, {0.3f, 0.555f}, {0.555f, 0.3f}, {0.555f, 0.555f}, {-0.0f, 0.0f},
                            {0.0f, -0.0f}, {1.0f, 0.5f}, {0.5f, 1.0f}, {-0.5f, 0.3f}, {std::nanf(""), 0.3f},
                            {0.3f, 2.0f}, {std::nextafter(0.3f, 0.0f), 0.3f}};
  std::vector<float> tx(n), ty(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t t = (i * 7 + i / 5) % std::size(turns);
    tx[i] = turns[t][0], ty[i] = turns[t][1];
  }
  check_joint<float>({hundred, hundred}, {tx, ty}, "f32 undecided points in turn");
  check_joint<float>({hundred, Binning::even(100, 0, 1, true)}, {tx, ty}, "f32 undecided points, last bin closed");
  check_joint<float>({hundred, hundred, Binning::explicit_edges({0, 0.3, 1})}, {rx, ry, ry},
                     "f32 3-D runs (generic map)");
  check_joint<double>({hundred, Binning::even(7, -0.1, 1.1)},
                      {noise<double>(70001, 15, -0.2, 1.2), noise<double>(70001, 16, -0.2, 1.2)}, "f64 2-D");
  check_joint<std::uint16_t>({Binning::even(300, 0, 60000), Binning::even(256, 0, 256)},
                             {noise<std::uint16_t>(200003, 17, 0, 65536), noise<std::uint16_t>(200003, 18, 0, 300)},
                             "u16 2-D with flows");
  // Two small images whose size is no multiple of the device allocations' 256-byte rounding.
  check_joint<std::uint8_t>({u8, u8}, {noise<std::uint8_t>(851, 8, 0, 256), noise<std::uint8_t>(851, 9, 0, 256)},
                            "u8 37 x 23 images");
}

// The 256 x 256 histogram of two u8 images fits shared memory only with 16-bit
// counters, two to a word: a half is moved to the output at the barrier after
// the chunk (3 x 2^14 points) in which it passed 2^14; a drain list of one
// entry makes every such barrier scan all halves instead. Cases: a constant
// image (one half takes every point); two adjacent slots in turn (both halves
// of one word); one slot taking every 16th point among noise (3072 points a
// chunk: it passes 2^14 within a few chunks of a block, beside halves that do
// not); a slot taking one point in 100003 among noise (left to the end).
TEST(GpuShapes, JointSixteenBitCountersDrainExactly) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning u8 = Binning::per_value(SampleType::u8);
  const std::size_t n = (std::size_t{16} << 20) + 5;  // every block takes several chunks
  std::vector<std::uint8_t> a(n, 7), b(n), c(n, 3), d(n), e(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(9 + i % 2);  // slots 7 * 259 + 9 and + 10: one word
  std::mt19937_64 rng(23);
  for (std::size_t i = 0; i < n; ++i) {
    d[i] = i % 16 == 0 ? 200 : static_cast<std::uint8_t>(rng());
    e[i] = i % 100003 == 0 ? 255 : static_cast<std::uint8_t>(rng() % 255);
  }
  // The raw pairs' layout (two byte columns at 16-byte boundaries: the
  // default) puts pairs (7, 8) and (7, 9) in one word; 7 with 9 or 10, as above,
  // in two. Every vector of f holds both, so none is one pair (a run).
  std::vector<std::uint8_t> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<std::uint8_t>(8 + (i * 7 / 3) % 2);
  // Byte pairs (the default) with either end (float sums in the workspace
  // folded by a second kernel, the default; each block's 64-bit atomics: float
  // end 0), and joint_kernel (byte pairs 0). run_on_device checks that the
  // fold leaves the workspace zero; the host path's second call in check_joint
  // would count a dirty one's sums again.
  const char* const kernels[][2] = {{"1", "1"}, {"1", "0"}, {"0", "1"}};
  for (const auto& [pairs, float_end] : kernels) {
    ScopedEnv kernel("LEVELHIST_JOINT_BYTE_PAIRS", pairs);
    ScopedEnv end("LEVELHIST_JOINT_FLOAT_END", float_end);
    for (const char* list : {"", "1"}) {
      ScopedEnv drain("LEVELHIST_JOINT_DRAIN_LIST", list);
      const std::string what = std::string("drain list ") + (*list ? list : "default") + ", byte pairs " + pairs +
                               ", float end " + float_end;
      check_joint<std::uint8_t>({u8, u8}, {a, c}, "constant, " + what);
      check_joint<std::uint8_t>({u8, u8}, {a, b}, "two slots of one word in turn, " + what);
      check_joint<std::uint8_t>({u8, u8}, {a, f}, "two halves of one raw pair's word, " + what);
      check_joint<std::uint8_t>({u8, u8}, {d, d}, "one slot every 16th point, noise between, " + what);
      check_joint<std::uint8_t>({u8, u8}, {e, e}, "a rare slot beside noise, " + what);
    }
  }
  // Other maps of byte columns that take the 16-bit counters (raw pairs mapped
  // when they leave shared memory): signed bytes one bin a value, and 250 even
  // bins with the values 250-255 past the last (the overflow slot).
  const std::size_t m = (std::size_t{3} << 20) + 7;
  const Binning i8 = Binning::per_value(SampleType::i8), by250 = Binning::even(250, 0, 250);
  std::vector<std::int8_t> sa = noise<std::int8_t>(m, 24, -128, 128), sb = noise<std::int8_t>(m, 25, -128, 128);
  std::fill(sa.begin() + 1000, sa.begin() + 200000, std::int8_t{-3});
  std::fill(sb.begin() + 1000, sb.begin() + 200000, std::int8_t{100});
  check_joint<std::int8_t>({i8, i8}, {sa, sb}, "i8 one bin a value");
  std::vector<std::uint8_t> ua = noise<std::uint8_t>(m, 26, 0, 256), ub = noise<std::uint8_t>(m, 27, 0, 256);
  check_joint<std::uint8_t>({by250, by250}, {ua, ub}, "u8 250 even bins, flows");
}

// Byte pairs whose 16-byte vectors take at most two values a column are
// counted by class (four popcounts), carried by each thread while its vectors
// hold the same four pairs and summed over the warp at the chunk's end where
// its lanes agree: random 0 / 255 masks (every class passes 2^14 in a
// block, so drains come from the class adds), masks whose first byte is the
// high value as often as the low, one column of two values beside one
// constant or noisy, vectors of {0, 255} beside vectors of {1, 2} (the warp's
// lanes disagree: each adds its own classes), three values (not two), and
// signed bytes; with the path and without it (two values 0: by pair).
TEST(GpuShapes, JointTwoValuesAColumn) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  const Binning u8 = Binning::per_value(SampleType::u8);
  const std::size_t n = (std::size_t{16} << 20) + 5, m = (std::size_t{3} << 20) + 7;
  std::mt19937_64 rng(41);
  auto pick = [&](std::size_t count, std::initializer_list<std::uint8_t> values) {
    std::vector<std::uint8_t> v(count);
    for (auto& x : v) x = values.begin()[rng() % values.size()];
    return v;
  };
  const std::vector<std::uint8_t> ma = pick(n, {0, 255}), mb = pick(n, {0, 255});
  const std::vector<std::uint8_t> ta = pick(m, {3, 200}), tb = pick(m, {201, 2}), three = pick(m, {0, 1, 2});
  const std::vector<std::uint8_t> constant(m, 77), noisy = noise<std::uint8_t>(m, 42, 0, 256);
  std::vector<std::uint8_t> ka(m), kb(m);  // {0, 255} and {1, 2} by 16-byte vector
  for (std::size_t i = 0; i < m; ++i) {
    const bool odd = (i / 16) % 2 != 0;
    ka[i] = odd ? static_cast<std::uint8_t>(1 + rng() % 2) : (rng() % 2 ? 255 : 0);
    kb[i] = (i / 48) % 2 ? static_cast<std::uint8_t>(1 + rng() % 2) : (rng() % 2 ? 255 : 0);
  }
  // The path with its skip after a failing vector (the default), with every
  // vector tested (skip 0), and without the path.
  const char* const paths[][2] = {{"1", ""}, {"1", "0"}, {"0", ""}};
  for (const auto& [two, skip] : paths) {
    ScopedEnv path("LEVELHIST_JOINT_TWO_VALUES", two);
    ScopedEnv skipping("LEVELHIST_JOINT_TWO_VALUES_SKIP", skip);
    const std::string how = std::string(", two values ") + two + (*skip ? std::string(", skip ") + skip : "");
    check_joint<std::uint8_t>({u8, u8}, {ma, mb}, "random masks" + how);
    check_joint<std::uint8_t>({u8, u8}, {ta, tb}, "masks of 3 / 200 and 201 / 2" + how);
    check_joint<std::uint8_t>({u8, u8}, {ta, constant}, "two values beside a constant" + how);
    check_joint<std::uint8_t>({u8, u8}, {noisy, ta}, "noise beside two values" + how);
    check_joint<std::uint8_t>({u8, u8}, {ka, kb}, "lanes of other values" + how);
    check_joint<std::uint8_t>({u8, u8}, {three, ta}, "three values" + how);
  }
  std::vector<std::int8_t> sa(m), sb(m);
  for (std::size_t i = 0; i < m; ++i) {
    sa[i] = rng() % 2 ? std::int8_t{-128} : std::int8_t{127};
    sb[i] = rng() % 2 ? std::int8_t{-1} : std::int8_t{0};
  }
  const Binning i8 = Binning::per_value(SampleType::i8);
  check_joint<std::int8_t>({i8, i8}, {sa, sb}, "signed masks");
}

// ---- deterministic weights ----------------------------------------------------------------

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 8) == 0;
}

template <class W>
void check_exact(const Binning& bins, const std::vector<float>& x, const std::vector<W>& w, bool squares,
                 const std::string& what) {
  Request r = Request::weighted(SampleType::f32, sample_type_of<W>(), bins);
  r.deterministic = true;
  r.weight_squares = squares;
  std::vector<double> want(r.output_slots(), 0.0);
  Plan(r, reference()).fill_slots(want.data(), Input::array(x.data(), x.size(), w.data()), false);
  for (const char* s : {"gpu_weighted_exact", "auto"}) {
    const Plan plan(r, on_cuda(s));
    EXPECT_STREQ(plan.strategy().name, "gpu_weighted_exact");
    std::vector<double> got(r.output_slots(), 0.0);
    plan.fill_slots(got.data(), Input::array(x.data(), x.size(), w.data()), false);
    ASSERT_TRUE(same_bits(got, want)) << s << " host, " << what;
    // Samples and weights at their allocation's start, off a 16-byte boundary
    // (the heads and tails of both kernels), and weights off their own size
    // (the unaligned loads).
    const std::pair<std::size_t, std::size_t> shifts[] = {{0, 0}, {4, sizeof(W)}, {4, 1}};
    for (const auto& [x_shift, w_shift] : shifts) {
      OnDevice dx(x.data(), x.size() * 4, x_shift), dw(w.data(), w.size() * sizeof(W), w_shift);
      const std::vector<std::uint64_t> bits = run_on_device(plan, Input::array(dx.at, x.size(), dw.at), true);
      std::vector<double> dev(bits.size());
      std::memcpy(dev.data(), bits.data(), bits.size() * 8);
      ASSERT_TRUE(same_bits(dev, want)) << s << " device, shifts " << x_shift << " / " << w_shift << ", " << what;
    }
  }
}

void check_deterministic_cases() {
  const std::size_t n = 3000017;
  std::vector<float> x = noise<float>(n, 11, -0.1, 1.1);
  std::mt19937_64 rng(12);
  std::vector<double> w(n);
  for (double& v : w) v = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), static_cast<int>(rng() % 50) - 25);
  check_exact(Binning::even(256, 0, 1), x, w, true, "f64 weights over 15 decades");
  std::vector<float> wf = noise<float>(n, 13, -3, 3);
  wf[7] = INFINITY, wf[8] = -INFINITY, wf[9] = std::nanf("");
  check_exact(Binning::explicit_edges({0, 0.1, 0.5, 0.9, 1}), x, wf, false, "f32 weights with specials");
  std::vector<float> constant(n, 0.25f);
  std::vector<float> ones(n, 1.5f);
  check_exact(Binning::even(10, 0, 1), constant, ones, true, "one hot slot");
  check_exact(Binning::even(10, 0, 1), std::vector<float>(), std::vector<float>(), false, "no samples");
  // The largest |weight| first, then last (the bound's head and tail), above
  // 2^16 times the others: a bound that missed it would round them all otherwise.
  for (const std::size_t at : {std::size_t{0}, std::size_t{1}, n - 1}) {
    std::vector<float> peak = noise<float>(n, 14, -1, 1);
    peak[at] = -3.0e6f;
    check_exact(Binning::even(64, 0, 1), x, peak, false, "the largest weight at " + std::to_string(at));
  }
}

TEST(GpuShapes, DeterministicSumsAreTheReferencesBitForBit) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  // Each case's plans are new: their first call has no guess of the bound (it
  // is found, then counted), the later ones guess it right. Speculation off,
  // the bound is found by a pass of its own before the counting, as for calls
  // of several pieces.
  const char* const settings[][4] = {
      // LEVELHIST_WEIGHTED_COLUMNS (16 copies of each sum for 4-byte samples with f32 weights, then one),
      // LEVELHIST_WEIGHTED_LARGE_CALL_BYTES (with one copy: the small calls' tuning, then the large calls'),
      // LEVELHIST_EXACT_SPLIT_ADDS (shared 64-bit adds as two 32-bit ones, then as one),
      // LEVELHIST_EXACT_SPECULATE
      {"", "", "", ""},   {"", "", "0", ""},  {"", "", "", "0"},   {"0", "", "", ""},
      {"0", "", "0", ""}, {"0", "0", "", ""}, {"0", "0", "0", ""}, {"0", "0", "", "0"}};
  for (const auto& [columns, large, split, speculate] : settings) {
    ScopedEnv copies("LEVELHIST_WEIGHTED_COLUMNS", columns);
    ScopedEnv tuning("LEVELHIST_WEIGHTED_LARGE_CALL_BYTES", large);
    ScopedEnv adds("LEVELHIST_EXACT_SPLIT_ADDS", split);
    ScopedEnv guess("LEVELHIST_EXACT_SPECULATE", speculate);
    SCOPED_TRACE(std::string("LEVELHIST_WEIGHTED_COLUMNS=") + columns + ", LEVELHIST_WEIGHTED_LARGE_CALL_BYTES=" +
                 large + ", LEVELHIST_EXACT_SPLIT_ADDS=" + split + ", LEVELHIST_EXACT_SPECULATE=" + speculate);
    check_deterministic_cases();
  }
}

// Weights of n samples whose largest |weight| is about `scale` (0: all zero;
// NaN: only non-finite weights, whose bound is 0 too).
std::vector<float> scaled_weights(std::size_t n, std::uint64_t seed, float scale) {
  std::vector<float> w = noise<float>(n, seed, -1, 1);
  for (std::size_t i = 0; i < n; ++i) w[i] = scale != scale ? (i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY) : w[i] * scale;
  return w;
}

// One plan, one workspace, calls whose largest weights keep, raise, lower and
// lose their binary exponent: the guess from the last call is right, wrong
// both ways, absent, and each call's sums are still the reference's bit for bit.
TEST(GpuShapes, DeterministicSumsWhateverTheLastCallsBound) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  Request r = Request::weighted(SampleType::f32, SampleType::f32, Binning::even(64, 0, 1));
  r.deterministic = true;
  r.weight_squares = true;
  const Plan plan(r, on_cuda("gpu_weighted_exact"));
  const std::size_t n = (std::size_t{1} << 20) + 3;
  const std::vector<float> x = noise<float>(n, 31, -0.05, 1.05);
  const std::uint64_t values = r.output_slots();
  DeviceBytes workspace(std::max<std::size_t>(plan.workspace_bytes(n), 256)), out(values * 8);
  LEVELHIST_TEST_CUDA(cudaMemset(workspace.get(), 0, workspace.size()));
  OnDevice dx(x.data(), n * 4);
  const float scales[] = {1, 1, 0.75f, 3, 3, 0.001f, 1e30f, 0, 1, NAN, 1, 1, 2.5e-38f, 1};
  int call = 0;
  for (const float scale : scales) {
    const std::vector<float> w = scaled_weights(n, 40 + call, scale);
    std::vector<double> want(values, 0.0);
    Plan(r, reference()).fill_slots(want.data(), Input::array(x.data(), n, w.data()), false);
    OnDevice dw(w.data(), n * 4);
    plan.run(Input::array(dx.at, n, dw.at), out.get(), /*accumulate=*/false, workspace.get(), workspace.size());
    std::vector<double> got(values);
    LEVELHIST_TEST_CUDA(cudaMemcpy(got.data(), out.get(), values * 8, cudaMemcpyDeviceToHost));
    ASSERT_TRUE(same_bits(got, want)) << "call " << call << ", weights scaled by " << scale;
    if (call % 4 == 3) {  // a host call between: the same plan and guess, its own workspace
      std::vector<double> host(values, 0.0);
      plan.fill_slots(host.data(), Input::array(x.data(), n, w.data()), false);
      ASSERT_TRUE(same_bits(host, want)) << "host call after " << call;
    }
    ++call;
  }
  std::vector<unsigned char> ws_after(workspace.size());
  LEVELHIST_TEST_CUDA(cudaMemcpy(ws_after.data(), workspace.get(), ws_after.size(), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::all_of(ws_after.begin(), ws_after.end(), [](unsigned char c) { return c == 0; }))
      << "the workspace was not left zero";
}

// Two threads call one plan at once on their own streams and workspaces with
// weights of different exponents, so each moves the guess the other's blocks
// may read mid-call: every result is still the reference's.
TEST(GpuShapes, DeterministicSumsFromTwoStreamsAtOnce) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  Request r = Request::weighted(SampleType::f32, SampleType::f32, Binning::even(256, 0, 1));
  r.deterministic = true;
  const Plan plan(r, on_cuda("gpu_weighted_exact"));
  const std::size_t n = std::size_t{3} << 20;
  const std::vector<float> x = noise<float>(n, 51, 0, 1);
  const std::uint64_t values = r.output_slots();
  std::vector<std::string> failures(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      cudaStream_t stream = nullptr;
      if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        failures[t] = "no stream";
        return;
      }
      // Everything that can throw (the reference, the device memory, the
      // calls) inside: an exception must not cross the thread's end.
      try {
        const std::vector<float> w = scaled_weights(n, 52 + t, t == 0 ? 1.0f : 1000.0f);
        std::vector<double> want(values, 0.0);
        Plan(r, reference()).fill_slots(want.data(), Input::array(x.data(), n, w.data()), false);
        DeviceBytes workspace(std::max<std::size_t>(plan.workspace_bytes(n), 256)), out(values * 8);
        LEVELHIST_TEST_CUDA(cudaMemset(workspace.get(), 0, workspace.size()));
        OnDevice dx(x.data(), n * 4), dw(w.data(), n * 4);
        std::vector<double> got(values);
        for (int call = 0; call < 40 && failures[t].empty(); ++call) {
          plan.run(Input::array(dx.at, n, dw.at), out.get(), false, workspace.get(), workspace.size(), stream);
          LEVELHIST_TEST_CUDA(cudaMemcpyAsync(got.data(), out.get(), values * 8, cudaMemcpyDeviceToHost, stream));
          LEVELHIST_TEST_CUDA(cudaStreamSynchronize(stream));
          if (!same_bits(got, want)) failures[t] = "call " + std::to_string(call) + " differs from the reference";
        }
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
      cudaStreamDestroy(stream);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

TEST(GpuShapes, SquaresWithoutDeterminismGoToTheExactKernel) {
  LEVELHIST_SKIP_WITHOUT_GPU();
  Request r = Request::weighted(SampleType::f32, SampleType::f32, Binning::even(32, 0, 1));
  r.weight_squares = true;
  const Plan plan(r, on_cuda());
  EXPECT_STREQ(plan.strategy().name, "gpu_weighted_exact");
  std::vector<float> x = noise<float>(100000, 21, 0, 1), w = noise<float>(100000, 22, 0, 2);
  std::vector<WeightedHistogram> got(2, WeightedHistogram(r.binning)), want(2, WeightedHistogram(r.binning));
  plan.fill(got, Input::array(x.data(), x.size(), w.data()));
  Plan(r, reference()).fill(want, Input::array(x.data(), x.size(), w.data()));
  for (int h = 0; h < 2; ++h)
    for (std::uint64_t s = 0; s < r.binning.slots(); ++s)
      EXPECT_NEAR(got[h].slots()[s], want[h].slots()[s], 1e-9 * (1 + std::fabs(want[h].slots()[s]))) << h << " " << s;
}

}  // namespace
}  // namespace levelhist::test

#endif  // LEVELHIST_HAVE_CUDA
