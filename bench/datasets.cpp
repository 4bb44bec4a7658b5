#include "datasets.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <thread>

#include "levelhist/error.hpp"

namespace levelhist::bench {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough to make
// test data; seeded per chunk so chunks can be generated independently.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

// Generators work in chunks of this many bytes, each seeded by its index, so a
// buffer's contents never depend on how many threads wrote it.
constexpr std::uint64_t kChunkBytes = std::uint64_t{1} << 20;

SplitMix64 chunk_rng(std::uint64_t seed, std::uint64_t chunk) {
  SplitMix64 mix{seed ^ (chunk * 0xD1B54A32D192ED03ull)};
  return SplitMix64{mix.next()};
}

// Calls body(begin, end) over [0, count) in blocks of `block`, on every core.
// 1 GiB of random bytes takes a second on one core: a waste of the lead's time.
void parallel_for(std::uint64_t count, std::uint64_t block,
                  const std::function<void(std::uint64_t begin, std::uint64_t end)>& body) {
  const std::uint64_t blocks = (count + block - 1) / block;
  const unsigned threads =
      static_cast<unsigned>(std::min<std::uint64_t>(std::max(1u, std::thread::hardware_concurrency()), blocks));
  std::atomic<std::uint64_t> next{0};
  auto work = [&] {
    for (std::uint64_t b; (b = next.fetch_add(1)) < blocks;) body(b * block, std::min(count, (b + 1) * block));
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

// Fills every byte chunk by chunk: body(rng of the chunk, first byte index, chunk).
void fill_chunks(HostSamples& out, std::uint64_t seed,
                 const std::function<void(SplitMix64&, std::uint64_t, std::span<unsigned char>)>& body) {
  unsigned char* data = out.data();
  parallel_for(out.bytes(), kChunkBytes, [&](std::uint64_t begin, std::uint64_t end) {
    SplitMix64 rng = chunk_rng(seed, begin / kChunkBytes);
    body(rng, begin, {data + begin, end - begin});
  });
}

void fill_random_bits(SplitMix64& rng, std::span<unsigned char> bytes) {
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t r = rng.next();
    std::memcpy(bytes.data() + i, &r, 8);
  }
  if (i < bytes.size()) {
    std::uint64_t r = rng.next();
    std::memcpy(bytes.data() + i, &r, bytes.size() - i);
  }
}

template <class T>
void fill_unit_interval(SplitMix64& rng, std::span<unsigned char> bytes) {
  constexpr int kMantissa = std::numeric_limits<T>::digits;  // 24 or 53 random bits: exact in T
  for (std::size_t i = 0; i + sizeof(T) <= bytes.size(); i += sizeof(T)) {
    T v = static_cast<T>(rng.next() >> (64 - kMantissa)) * static_cast<T>(std::ldexp(1.0, -kMantissa));
    std::memcpy(bytes.data() + i, &v, sizeof(T));
  }
}

std::uint64_t exact_square_root(std::uint64_t n) {
  auto r = static_cast<std::uint64_t>(std::llround(std::sqrt(static_cast<double>(n))));
  while (r * r > n) --r;
  while ((r + 1) * (r + 1) <= n) ++r;
  return r * r == n ? r : 0;
}

}  // namespace

HostSamples::HostSamples(SampleType type, std::uint64_t n)
    : type_(type), n_(n), data_(std::make_unique_for_overwrite<unsigned char[]>(std::max<std::uint64_t>(bytes(), 1))) {}

HostSamples Dataset::make(std::uint64_t n) const {
  HostSamples out(type, n);
  fill(out);
  return out;
}

Dataset zeros(SampleType type) {
  return {"zeros", type, [](HostSamples& out) {
            unsigned char* data = out.data();
            parallel_for(out.bytes(), kChunkBytes,
                         [&](std::uint64_t begin, std::uint64_t end) { std::memset(data + begin, 0, end - begin); });
          }};
}

Dataset uniform(SampleType type, std::uint64_t seed) {
  return {"uniform", type, [type, seed](HostSamples& out) {
            fill_chunks(out, seed, [type](SplitMix64& rng, std::uint64_t, std::span<unsigned char> bytes) {
              if (type == SampleType::f32) fill_unit_interval<float>(rng, bytes);
              else if (type == SampleType::f64) fill_unit_interval<double>(rng, bytes);
              else fill_random_bits(rng, bytes);
            });
          }};
}

Dataset linear_bytes() {
  return {"linear", SampleType::u8, [](HostSamples& out) {
            fill_chunks(out, 0, [](SplitMix64&, std::uint64_t first, std::span<unsigned char> bytes) {
              for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(first + i);
            });
          }};
}

Dataset distinct_bytes(unsigned count, std::uint64_t seed) {
  if (count < 1 || count > 256)
    throw Error(ErrorKind::usage, "the number of distinct byte values must be 1..256, not " + std::to_string(count));
  // The values: a seeded Fisher-Yates shuffle of 0..255, first `count` kept.
  std::vector<unsigned char> values(256);
  std::iota(values.begin(), values.end(), 0);
  SplitMix64 rng{seed};
  for (unsigned i = 255; i > 0; --i) std::swap(values[i], values[rng.next() % (i + 1)]);
  values.resize(count);
  return {std::to_string(count) + " distinct", SampleType::u8, [values, seed](HostSamples& out) {
            const std::uint64_t k = values.size();
            fill_chunks(out, seed, [&](SplitMix64& rng, std::uint64_t, std::span<unsigned char> bytes) {
              // Two samples per 64-bit draw; (r32 * k) >> 32 maps 32 random bits onto 0..k-1.
              for (std::size_t i = 0; i < bytes.size(); i += 2) {
                std::uint64_t r = rng.next();
                bytes[i] = values[((r & 0xFFFFFFFFu) * k) >> 32];
                if (i + 1 < bytes.size()) bytes[i + 1] = values[((r >> 32) * k) >> 32];
              }
            });
          }};
}

Image read_pgm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::input, "cannot open " + path);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& what) { return Error(ErrorKind::input, path + ": not a readable PGM: " + what); };

  std::size_t pos = 0;
  // The next header token; whitespace and '#' comments (to the end of the line) separate tokens.
  auto token = [&]() -> std::string {
    while (pos < file.size()) {
      if (file[pos] == '#') {
        while (pos < file.size() && file[pos] != '\n') ++pos;
      } else if (std::isspace(static_cast<unsigned char>(file[pos]))) {
        ++pos;
      } else {
        break;
      }
    }
    std::size_t start = pos;
    while (pos < file.size() && !std::isspace(static_cast<unsigned char>(file[pos])) && file[pos] != '#') ++pos;
    return file.substr(start, pos - start);
  };
  auto number = [&](const char* what) -> unsigned {
    std::string t = token();
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 9)
      throw bad(std::string("bad ") + what + " '" + t + "'");
    return static_cast<unsigned>(std::stoul(t));
  };

  if (token() != "P5") throw bad("only binary grayscale PGM (magic P5) is supported");
  Image img;
  img.width = number("width");
  img.height = number("height");
  unsigned maxval = number("maxval");
  if (img.width == 0 || img.height == 0) throw bad("zero width or height");
  if (maxval == 0 || maxval > 255) throw bad("maxval " + std::to_string(maxval) + " (only 8-bit images, maxval <= 255)");
  ++pos;  // exactly one whitespace byte separates the header from the raster
  const std::uint64_t pixels = std::uint64_t{img.width} * img.height;
  if (pos > file.size() || file.size() - pos < pixels)
    throw bad("the raster is truncated (" + std::to_string(pixels) + " bytes expected)");
  img.pixels.assign(file.begin() + static_cast<std::ptrdiff_t>(pos),
                    file.begin() + static_cast<std::ptrdiff_t>(pos + pixels));
  img.name = std::filesystem::path(path).filename().string();
  return img;
}

Image smooth_synthetic_image(unsigned width, unsigned height, std::uint64_t seed) {
  struct Blob {
    double cx, cy, sigma, amplitude;
  };
  SplitMix64 rng{seed};
  auto unit = [&] { return static_cast<double>(rng.next() >> 11) * 0x1p-53; };
  std::vector<Blob> blobs(6);
  for (Blob& b : blobs) {
    b.cx = unit() * width;
    b.cy = unit() * height;
    b.sigma = (0.06 + 0.2 * unit()) * std::max(width, height);
    b.amplitude = (unit() < 0.5 ? -1.0 : 1.0) * (30.0 + 60.0 * unit());
  }
  Image img{"synthetic", width, height, std::vector<std::uint8_t>(std::size_t{width} * height)};
  for (unsigned y = 0; y < height; ++y)
    for (unsigned x = 0; x < width; ++x) {
      double v = 40.0 + 150.0 * (double(x) / width + double(y) / height) / 2.0;
      for (const Blob& b : blobs) {
        double dx = x - b.cx, dy = y - b.cy;
        v += b.amplitude * std::exp(-(dx * dx + dy * dy) / (2.0 * b.sigma * b.sigma));
      }
      img.pixels[std::size_t{y} * width + x] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
    }
  return img;
}

Dataset tiled_image(const Image& image) {
  return {image.name, SampleType::u8, [image](HostSamples& out) {
            const std::uint64_t side = exact_square_root(out.size());
            if (side == 0)
              throw Error(ErrorKind::internal, "a tiled image needs a square number of pixels, not " +
                                                   std::to_string(out.size()));
            unsigned char* data = out.data();
            parallel_for(side, 64, [&](std::uint64_t row_begin, std::uint64_t row_end) {
              for (std::uint64_t y = row_begin; y < row_end; ++y) {
                const std::uint8_t* src = image.pixels.data() + (y % image.height) * image.width;
                unsigned char* row = data + y * side;
                for (std::uint64_t x = 0; x < side; x += image.width)
                  std::memcpy(row + x, src, std::min<std::uint64_t>(image.width, side - x));
              }
            });
          }};
}

std::string find_data_dir(const std::string& override_dir) {
  namespace fs = std::filesystem;
  constexpr const char* kProbe = "coins.pgm";
  if (!override_dir.empty()) {
    if (fs::exists(fs::path(override_dir) / kProbe)) return override_dir;
    throw Error(ErrorKind::input, "--data " + override_dir + ": no " + kProbe + " there");
  }
  std::vector<fs::path> tried;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) tried.push_back(exe.parent_path() / ".." / "bench" / "data");
  // The source tree this file was compiled from (CMake passes absolute paths).
  tried.push_back(fs::path(__FILE__).parent_path() / "data");
  std::string list;
  for (const fs::path& dir : tried) {
    if (fs::exists(dir / kProbe, ec)) return dir.lexically_normal().string();
    list += (list.empty() ? "" : ", ") + dir.lexically_normal().string();
  }
  throw Error(ErrorKind::input, std::string("cannot find the benchmark images (") + kProbe + ") in " + list +
                                    "; pass --data DIR");
}

}  // namespace levelhist::bench
