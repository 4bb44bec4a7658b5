// levelhist bench --link: host data to the GPU at link speed (link_bench.hpp).
// Built everywhere: without a GPU (or without the CUDA backend) it measures
// the CPU rows and says the GPU rows were skipped.
#include "link_bench.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench.hpp"
#include "levelhist/cuda.hpp"
#include "levelhist/error.hpp"
#include "levelhist/levelhist.hpp"
#include "levelhist/source.hpp"
#include "options.hpp"
#if LEVELHIST_HAVE_CUDA
#include <cuda_runtime.h>
#endif

extern char** environ;

namespace levelhist::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The median of `reps` timings of f (seconds).
double median_seconds(int reps, const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    f();
    t.push_back(seconds_since(start));
  }
  return median(std::move(t));
}

unsigned cores() { return std::max(1u, std::thread::hardware_concurrency()); }

// Runs part(t) for t in [0, threads) on threads of their own.
void on_threads(unsigned threads, const std::function<void(unsigned)>& part) {
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(part, t);
  part(0);
  for (auto& th : pool) th.join();
}

// Random bytes, the same for a seed whatever the threads (SplitMix64 per 8 bytes).
void fill_random(unsigned char* p, std::size_t bytes, std::uint64_t seed) {
  const unsigned threads = cores();
  on_threads(threads, [&](unsigned t) {
    const std::size_t words = bytes / 8;
    for (std::size_t w = words * t / threads; w < words * (t + 1) / threads; ++w) {
      std::uint64_t z = seed + (w + 1) * 0x9E3779B97F4A7C15ULL;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      z ^= z >> 31;
      std::memcpy(p + 8 * w, &z, 8);
    }
  });
  for (std::size_t k = bytes / 8 * 8; k < bytes; ++k) p[k] = static_cast<unsigned char>(k * 131 + seed);
}

// One row of the table: a rate and, where there is one, the limit it is held
// against and the least ratio the goal asks for.
struct Row {
  std::string name;
  double gbps = 0;
  std::string limit_name;
  double limit_gbps = 0;
  double goal = 0;  // 0: none
  std::string note;
};

class Table {
 public:
  void add(Row r) {
    std::fprintf(stderr, "link: %-44s %8.2f GB/s\n", r.name.c_str(), r.gbps);
    rows_.push_back(std::move(r));
  }
  void skip(const std::string& why) { skipped_ = why; }
  std::string markdown() const {
    std::ostringstream o;
    o << "| measurement | GB/s | limit | limit GB/s | ratio | goal | note |\n|---|---:|---|---:|---:|---:|---|\n";
    char buf[512];
    for (const Row& r : rows_) {
      std::string ratio = "", goal = "";
      if (r.limit_gbps > 0) {
        std::snprintf(buf, sizeof buf, "%.2f", r.gbps / r.limit_gbps);
        ratio = buf;
      }
      if (r.goal > 0) {
        std::snprintf(buf, sizeof buf, ">= %.2f %s", r.goal,
                      r.limit_gbps > 0 && r.gbps / r.limit_gbps >= r.goal ? "met" : "NOT met");
        goal = buf;
      }
      char limit[32] = "";
      if (r.limit_gbps > 0) std::snprintf(limit, sizeof limit, "%.2f", r.limit_gbps);
      std::snprintf(buf, sizeof buf, "| %s | %.2f | %s | %s | %s | %s | %s |\n", r.name.c_str(), r.gbps,
                    r.limit_name.c_str(), limit, ratio.c_str(), goal.c_str(), r.note.c_str());
      o << buf;
    }
    if (!skipped_.empty()) o << "\nGPU rows skipped: " << skipped_ << "\n";
    return o.str();
  }

 private:
  std::vector<Row> rows_;
  std::string skipped_;
};

double gbps(double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0; }

[[noreturn]] void mismatch(const std::string& what) {
  throw Error(ErrorKind::internal, "bench --link: " + what + " does not equal the CPU reference",
              "this is a bug in levelhist; report it with the command line");
}

std::vector<std::uint64_t> count_with(const Plan& plan, const Input& in) {
  std::vector<std::uint64_t> out(plan.request().output_slots(), 0);
  plan.fill_slots(out.data(), in, false);
  return out;
}

// ---- the CLI, run as a program -------------------------------------------------------

// Runs `argv` (argv[0] a path), stdin from `stdin_path` ("" = /dev/null),
// returns its stdout; throws when it fails.
std::string run_program(const std::vector<std::string>& argv, const std::string& stdin_path) {
  int out[2];
  if (::pipe(out) != 0) throw Error(ErrorKind::resource, "bench --link: no pipe", "free file descriptors");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, stdin_path.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    throw Error(ErrorKind::input, "bench --link: cannot run " + argv[0] + ": " + std::strerror(rc),
                "build the levelhist CLI next to levelhist-bench, or give --cli PATH");
  }
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(ErrorKind::input, "bench --link: " + argv[0] + " failed (status " + std::to_string(status) + ")",
                "run the command by hand to see its message");
  return text;
}

// The counts column of `count --format csv` (bins, then underflow, overflow, nan).
std::vector<std::uint64_t> csv_counts(const std::string& csv) {
  std::vector<std::uint64_t> counts;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) counts.push_back(std::stoull(line.substr(line.rfind(',') + 1)));
  return counts;
}

std::string default_cli() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "levelhist" : (self.parent_path() / "levelhist").string();
}

// ---- CPU rows ------------------------------------------------------------------------

// Reads every 8-byte word with all cores: the CPU's own limit.
double memory_read_gbps(const unsigned char* p, std::size_t bytes, int reps) {
  std::atomic<std::uint64_t> sink{0};
  const double s = median_seconds(reps, [&] {
    const unsigned threads = cores();
    on_threads(threads, [&](unsigned t) {
      const std::size_t words = bytes / 8;
      std::uint64_t acc = 0;
      for (std::size_t w = words * t / threads; w < words * (t + 1) / threads; ++w) {
        std::uint64_t v;
        std::memcpy(&v, p + 8 * w, 8);
        acc += v;
      }
      sink.fetch_add(acc, std::memory_order_relaxed);
    });
  });
  return gbps(static_cast<double>(bytes), s);
}

// pread of the file by `threads` threads, chunks of `chunk` bytes taken in
// turn, into `dst` (pinned memory on a GPU machine), nothing else.
double file_read_gbps(const std::string& path, unsigned char* dst, std::size_t bytes, unsigned threads,
                      std::size_t chunk, int reps) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::input, "bench --link: cannot open " + path, "check $TMPDIR");
  const double s = median_seconds(reps, [&] {
    std::atomic<std::size_t> next{0};
    on_threads(threads, [&](unsigned) {
      for (std::size_t at; (at = next.fetch_add(chunk)) < bytes;) {
        const std::size_t want = std::min(chunk, bytes - at);
        std::size_t got = 0;
        while (got < want) {
          const ssize_t n = ::pread(fd, dst + at + got, want - got, static_cast<off_t>(at + got));
          if (n <= 0) return;
          got += static_cast<std::size_t>(n);
        }
      }
    });
  });
  ::close(fd);
  return gbps(static_cast<double>(bytes), s);
}

// A program's stdout through a pipe, read by this process: the pipe's limit.
double pipe_read_gbps(const std::string& path, std::size_t bytes, int reps) {
  const double s = median_seconds(reps, [&] {
    int out[2];
    if (::pipe(out) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    std::string cat = "/bin/cat";
    char* args[] = {cat.data(), const_cast<char*>(path.c_str()), nullptr};
    pid_t pid = 0;
    posix_spawn(&pid, cat.c_str(), &fa, nullptr, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    std::vector<char> buf(1 << 20);
    while (::read(out[0], buf.data(), buf.size()) > 0) {
    }
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
  });
  return gbps(static_cast<double>(bytes), s);
}

// Times the CLI on the file (argument) and on a pipe (cat FILE | levelhist
// count -), after checking its counts against `want`.
void cli_rows(Table& table, const LinkOptions& o, const std::string& path, std::size_t bytes,
              const std::vector<std::uint64_t>& want, double file_limit, double pipe_limit,
              const std::string& backend) {
  const std::string cli = o.cli.empty() ? default_cli() : o.cli;
  const std::vector<std::string> on_file = {cli, "count", "--type", "u8", "--format", "csv", "--no-progress",
                                            "--backend", backend, path};
  std::vector<std::string> on_pipe = {"/bin/sh", "-c",
                                      "cat '" + path + "' | '" + cli + "' count --type u8 --format csv --no-progress "
                                      "--backend " + backend + " -"};
  if (csv_counts(run_program(on_file, "")) != want) mismatch("the CLI's count of the file");
  if (csv_counts(run_program(on_pipe, "")) != want) mismatch("the CLI's count of a pipe");
  const double file_s = median_seconds(o.reps, [&] { run_program(on_file, ""); });
  table.add({"CLI count, file (--backend " + backend + ")", gbps(bytes, file_s), "file read (pread)", file_limit, 0,
             "whole process: start, read, count, print"});
  const double pipe_s = median_seconds(o.reps, [&] { run_program(on_pipe, ""); });
  table.add({"CLI count, pipe: cat FILE into it (--backend " + backend + ")", gbps(bytes, pipe_s), "pipe read",
             pipe_limit, 0, "whole process"});
}

#if LEVELHIST_HAVE_CUDA

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error(ErrorKind::cuda, std::string("bench --link: ") + what + ": " + cudaGetErrorString(status),
                "check the GPU (nvidia-smi)");
}

// Pinned host memory owned by the benchmark.
struct PinnedBytes {
  unsigned char* p = nullptr;
  explicit PinnedBytes(std::size_t bytes) { check_cuda(cudaMallocHost(reinterpret_cast<void**>(&p), bytes), "cudaMallocHost"); }
  ~PinnedBytes() { cudaFreeHost(p); }
};
struct DeviceMemory {
  unsigned char* p = nullptr;
  explicit DeviceMemory(std::size_t bytes) { check_cuda(cudaMalloc(reinterpret_cast<void**>(&p), bytes), "cudaMalloc"); }
  ~DeviceMemory() { cudaFree(p); }
};

// cudaMemcpy host -> device of `bytes` from `src`, median.
double copy_gbps(unsigned char* dst, const unsigned char* src, std::size_t bytes, int reps) {
  check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");  // warm
  const double s = median_seconds(reps, [&] { check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy"); });
  return gbps(bytes, s);
}

// `threads` threads memcpy their slices of pageable memory into pinned memory.
double staging_gbps(unsigned char* pinned, const unsigned char* src, std::size_t bytes, unsigned threads, int reps) {
  const double s = median_seconds(reps, [&] {
    on_threads(threads, [&](unsigned t) {
      const std::size_t b = bytes * t / threads, e = bytes * (t + 1) / threads;
      std::memcpy(pinned + b, src + b, e - b);
    });
  });
  return gbps(bytes, s);
}

// The GPU rows; `pageable` holds the data, `path` the same bytes in a file.
void gpu_rows(Table& table, const LinkOptions& o, unsigned char* pageable, std::size_t bytes, const std::string& path,
              const std::vector<std::uint64_t>& want, double cpu_alone) {
  const int reps = o.reps;
  PinnedBytes pinned(bytes);
  DeviceMemory device(bytes);
  std::memcpy(pinned.p, pageable, bytes);

  // The link.
  const double pinned_copy = copy_gbps(device.p, pinned.p, bytes, reps);
  table.add({"cudaMemcpy from pinned memory", pinned_copy, "", 0, 0, std::to_string(bytes >> 20) + " MiB"});
  const double pageable_copy = copy_gbps(device.p, pageable, bytes, reps);
  table.add({"cudaMemcpy from pageable memory", pageable_copy, "pinned copy", pinned_copy, 0, ""});
  // cudaHostRegister of the caller's memory: its cost, then copies from it.
  auto start = Clock::now();
  check_cuda(cudaHostRegister(pageable, bytes, cudaHostRegisterDefault), "cudaHostRegister");
  const double register_s = seconds_since(start);
  const double registered_copy = copy_gbps(device.p, pageable, bytes, reps);
  start = Clock::now();
  check_cuda(cudaHostUnregister(pageable), "cudaHostUnregister");
  const double unregister_s = seconds_since(start);
  table.add({"cudaHostRegister (+ unregister) itself", gbps(bytes, register_s + unregister_s), "", 0, 0,
             "register " + std::to_string(register_s * 1e3).substr(0, 6) + " ms, unregister " +
                 std::to_string(unregister_s * 1e3).substr(0, 6) + " ms"});
  table.add({"cudaMemcpy from registered memory", registered_copy, "pinned copy", pinned_copy, 0, ""});
  const double register_path = gbps(bytes, register_s + unregister_s + bytes / (registered_copy * 1e9));
  table.add({"register, copy once, unregister", register_path, "pinned copy", pinned_copy, 0,
             "what registering the caller's memory per call would give"});
  double best_staging = 0;
  unsigned best_threads = 1;
  for (unsigned t : {1u, 2u, 4u, 8u, 16u, cores()}) {
    if (t > cores()) continue;
    const double r = staging_gbps(pinned.p, pageable, bytes, t, reps);
    if (r > best_staging) best_staging = r, best_threads = t;
  }
  table.add({"staging memcpy pageable -> pinned, best", best_staging, "", 0, 0,
             std::to_string(best_threads) + " threads"});
  // Staging overlapped with the copy can go no faster than either.
  const double pageable_limit = std::max(std::min(best_staging, pinned_copy), register_path);
  table.add({"pageable limit: max(min(staging, copy), register path)", pageable_limit, "", 0, 0, ""});
  double file_read = 0;
  for (unsigned t : {1u, 4u, 8u}) file_read = std::max(file_read, file_read_gbps(path, pinned.p, bytes, t, 16 << 20, reps));
  table.add({"file read: pread by 1-8 threads into pinned memory", file_read, "", 0, 0, "page-cached"});

  // The library.
  const Request r = Request::counts(SampleType::u8, Binning::per_value(SampleType::u8));
  Options cuda;
  cuda.backend = BackendChoice::cuda;
  const Plan gpu(r, cuda);
  if (count_with(gpu, Input::array(pinned.p, bytes)) != want) mismatch("the CUDA plan from pinned memory");
  const double gpu_pinned = gbps(bytes, median_seconds(reps, [&] { count_with(gpu, Input::array(pinned.p, bytes)); }));
  table.add({"GPU alone, pinned source", gpu_pinned, "pinned copy", pinned_copy, 0.90, "copied straight, no staging"});
  if (count_with(gpu, Input::array(pageable, bytes)) != want) mismatch("the CUDA plan from pageable memory");
  const double gpu_pageable =
      gbps(bytes, median_seconds(reps, [&] { count_with(gpu, Input::array(pageable, bytes)); }));
  table.add({"GPU alone, pageable source", gpu_pageable, "pageable limit", pageable_limit, 0.90,
             "default chunk and staging threads"});
  // The staging knobs.
  for (std::size_t chunk : o.chunks)
    for (unsigned threads : {4u, 8u, 16u}) {
      if (threads > cores()) continue;
      ::setenv("LEVELHIST_STAGING_CHUNK_BYTES", std::to_string(chunk).c_str(), 1);
      ::setenv("LEVELHIST_STAGING_THREADS", std::to_string(threads).c_str(), 1);
      if (count_with(gpu, Input::array(pageable, bytes)) != want) mismatch("the CUDA plan with other staging knobs");
      const double rate = gbps(bytes, median_seconds(reps, [&] { count_with(gpu, Input::array(pageable, bytes)); }));
      table.add({"  pageable, chunk " + std::to_string(chunk >> 10) + " KiB, " + std::to_string(threads) + " threads",
                 rate, "pageable limit", pageable_limit, 0, ""});
    }
  ::unsetenv("LEVELHIST_STAGING_CHUNK_BYTES");
  ::unsetenv("LEVELHIST_STAGING_THREADS");
  check_cuda(cudaHostRegister(pageable, bytes, cudaHostRegisterDefault), "cudaHostRegister");
  const bool registered_ok = count_with(gpu, Input::array(pageable, bytes)) == want;
  const double gpu_registered =
      gbps(bytes, median_seconds(reps, [&] { count_with(gpu, Input::array(pageable, bytes)); }));
  check_cuda(cudaHostUnregister(pageable), "cudaHostUnregister");
  if (!registered_ok) mismatch("the CUDA plan from registered memory");
  table.add({"GPU alone, registered source", gpu_registered, "pinned copy", pinned_copy, 0.90, "caller registered it"});
  {
    FileSource check(path);
    std::vector<std::uint64_t> got(r.output_slots(), 0);
    gpu.fill_slots(got.data(), check, false);
    if (got != want) mismatch("the CUDA plan from a file source");
    const double s = median_seconds(reps, [&] {
      FileSource source(path);
      gpu.fill_slots(got.data(), source, false);
    });
    table.add({"GPU alone, FileSource", gbps(bytes, s), "min(file read, pinned copy)", std::min(file_read, pinned_copy),
               0.90, "read straight into the pinned buffers"});
  }

  // CPU and GPU together: an automatic plan; its estimates settle over a few calls.
  const Plan together(r, Options{});
  if (!together.shares_host_calls()) {
    table.add({"together (automatic plan)", 0, "", 0, 0, "this plan does not share host calls (LEVELHIST_HYBRID=0?)"});
  } else {
    // A row of the automatic plan on `src`, after eight warm-up calls (the
    // estimates move 30% of the way per call: 94% after eight).
    auto together_row = [&](const std::string& label, const unsigned char* src, double gpu_alone) {
      for (int k = 0; k < 8; ++k)
        if (count_with(together, Input::array(src, bytes)) != want) mismatch("the automatic plan (" + label + ")");
      const double rate = gbps(bytes, median_seconds(reps, [&] { count_with(together, Input::array(src, bytes)); }));
      const HostSplit split = together.last_host_split();
      char note[200];
      std::snprintf(note, sizeof note, "last split: CPU %.0f%%, GPU %.0f%%; vs the better alone %.2f",
                    100.0 * split.cpu_items / bytes, 100.0 * split.cuda_items / bytes,
                    rate / std::max(cpu_alone, gpu_alone));
      table.add({label, rate, "CPU alone + GPU alone", cpu_alone + gpu_alone, 0, note});
    };
    together_row("together, pageable source", static_cast<const unsigned char*>(pageable), gpu_pageable);
    together_row("together, pinned source", static_cast<const unsigned char*>(pinned.p), gpu_pinned);
    // Pageable memory again with the CPU side on every core beside the
    // staging threads (LEVELHIST_HYBRID_CPU_THREADS): the rule before the
    // default left the staging threads their cores, measured beside it.
    const unsigned staging = std::min(8u, cores());
    if (cores() > staging) {
      ::setenv("LEVELHIST_HYBRID_CPU_THREADS", std::to_string(cores()).c_str(), 1);
      together_row("together, pageable source, CPU side " + std::to_string(cores()) + " threads (all cores)",
                   static_cast<const unsigned char*>(pageable), gpu_pageable);
      ::unsetenv("LEVELHIST_HYBRID_CPU_THREADS");
    }
  }
}

// --devices: several GPUs. Device-resident throughput per GPU and all at
// once; host-resident aggregate against the copies of all GPUs at once; the
// fixed cost of adding 2^24-bin partial histograms from N devices.
void multi_gpu_rows(Table& table, const LinkOptions& o, unsigned char* pageable, std::size_t bytes,
                    const std::vector<std::uint64_t>& want) {
  const int count = cuda::device_count();
  std::vector<int> devices = o.devices;
  if (devices.empty())
    for (int d = 0; d < count; ++d) devices.push_back(d);
  const Request r = Request::counts(SampleType::u8, Binning::per_value(SampleType::u8));
  const int reps = o.reps;
  // Device-resident, one GPU at a time, then all at once.
  struct PerDevice {
    std::unique_ptr<Plan> plan;
    unsigned char* data = nullptr;
    void* out = nullptr;
    void* ws = nullptr;
    std::size_t ws_bytes = 0;
    unsigned char* pinned = nullptr;
  };
  std::vector<PerDevice> per(devices.size());
  PinnedBytes pinned(bytes);
  std::memcpy(pinned.p, pageable, bytes);
  for (std::size_t k = 0; k < devices.size(); ++k) {
    Options one;
    one.backend = BackendChoice::cuda;
    one.device = devices[k];
    per[k].plan = std::make_unique<Plan>(r, one);
    check_cuda(cudaSetDevice(devices[k]), "cudaSetDevice");
    per[k].ws_bytes = std::max<std::size_t>(per[k].plan->workspace_bytes(bytes), 1);
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&per[k].data), bytes), "cudaMalloc");
    check_cuda(cudaMalloc(&per[k].out, r.output_slots() * 8), "cudaMalloc");
    check_cuda(cudaMalloc(&per[k].ws, per[k].ws_bytes), "cudaMalloc");
    check_cuda(cudaMemset(per[k].ws, 0, per[k].ws_bytes), "cudaMemset");
    check_cuda(cudaMemcpy(per[k].data, pageable, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  auto run_device = [&](std::size_t k, int calls) {
    check_cuda(cudaSetDevice(devices[k]), "cudaSetDevice");
    for (int c = 0; c < calls; ++c)
      per[k].plan->run(Input::array(per[k].data, bytes), per[k].out, false, per[k].ws, per[k].ws_bytes);
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  };
  double sum_single = 0;
  for (std::size_t k = 0; k < devices.size(); ++k) {
    run_device(k, 1);
    std::vector<std::uint64_t> got(r.output_slots());
    check_cuda(cudaMemcpy(got.data(), per[k].out, got.size() * 8, cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (got != want) mismatch("device " + std::to_string(devices[k]) + "'s count of device memory");
    const double rate = gbps(10.0 * bytes, median_seconds(reps, [&] { run_device(k, 10); }));
    sum_single += rate;
    table.add({"device " + std::to_string(devices[k]) + ": device-resident count", rate, "", 0, 0, "Plan::run"});
  }
  // All at once: one thread per device, started and bound to its device before
  // the clock runs (a thread's first CUDA call costs far more than a launch),
  // released together by a barrier; the wall time runs to the last device's end.
  const int at_once_reps = std::max(reps, 5);
  std::vector<double> walls;
  std::vector<std::vector<double>> own(devices.size());  // each device's time from its release to its end
  {
    std::barrier go(static_cast<std::ptrdiff_t>(devices.size() + 1));
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < devices.size(); ++k)
      threads.emplace_back([&, k] {
        run_device(k, 1);  // binds the thread to its device, warms it
        for (int rep = 0; rep < at_once_reps; ++rep) {
          go.arrive_and_wait();  // start together
          const auto start = Clock::now();
          run_device(k, 10);
          own[k].push_back(seconds_since(start));
          go.arrive_and_wait();  // all done
        }
      });
    for (int rep = 0; rep < at_once_reps; ++rep) {
      const auto start = Clock::now();  // before the release: the threads' wake-up counts
      go.arrive_and_wait();
      go.arrive_and_wait();
      walls.push_back(seconds_since(start));
    }
    for (auto& t : threads) t.join();
  }
  const double all_device = gbps(10.0 * bytes * devices.size(), median(walls));
  std::string each = "each device at once:";
  for (const auto& times : own) each += " " + std::to_string(static_cast<long>(gbps(10.0 * bytes, median(times))));
  table.add({"all devices at once: device-resident", all_device, "sum of one at a time", sum_single, 0.90, each});
  // Host-resident: the copies of all devices at once, then the plan with the list.
  double sum_copies = 0;
  {
    std::vector<double> rates(devices.size());
    std::vector<std::thread> threads;
    const std::size_t share = bytes / devices.size();
    for (std::size_t k = 0; k < devices.size(); ++k)
      threads.emplace_back([&, k] {
        check_cuda(cudaSetDevice(devices[k]), "cudaSetDevice");
        rates[k] = copy_gbps(per[k].data, pinned.p + k * share, share, reps);
      });
    for (auto& t : threads) t.join();
    for (double x : rates) sum_copies += x;
  }
  table.add({"pinned copies of all devices at once (sum)", sum_copies, "", 0, 0, ""});
  Options listed;
  listed.backend = BackendChoice::cuda;
  listed.devices = devices;
  const Plan multi(r, listed);
  for (const unsigned char* src : {static_cast<const unsigned char*>(pinned.p), static_cast<const unsigned char*>(pageable)}) {
    const bool is_pinned = src == pinned.p;
    if (count_with(multi, Input::array(src, bytes)) != want) mismatch("the plan with a device list");
    const double rate = gbps(bytes, median_seconds(reps, [&] { count_with(multi, Input::array(src, bytes)); }));
    table.add({std::string("device list, host-resident ") + (is_pinned ? "pinned" : "pageable"), rate,
               "sum of copies at once", sum_copies, is_pinned ? 0.90 : 0, std::to_string(devices.size()) + " devices"});
  }
  for (auto& p : per) {
    cudaFree(p.data);
    cudaFree(p.out);
    cudaFree(p.ws);
  }
  // Adding partial histograms of 2^24 bins (128 MiB each): a small call on N devices.
  const Request big = Request::counts(SampleType::u32, Binning::even(1u << 24, 0, 4294967296.0));
  std::vector<std::uint32_t> few(4096);
  for (std::size_t k = 0; k < few.size(); ++k) few[k] = static_cast<std::uint32_t>(k * 2654435761u);
  // A plan of `big` on the first n devices, or a row saying why there is none.
  auto plan_on_first = [&](std::size_t n, const std::string& what) -> std::unique_ptr<Plan> {
    Options o2;
    o2.backend = BackendChoice::cuda;
    o2.devices.assign(devices.begin(), devices.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      return std::make_unique<Plan>(big, o2);
    } catch (const Error& e) {
      table.add({what, 0, "", 0, 0, std::string("skipped: ") + e.what()});
      return nullptr;
    }
  };
  for (std::size_t n = 1; n <= devices.size(); ++n) {
    const std::unique_ptr<Plan> made = plan_on_first(n, "2^24-bin partials");
    if (!made) break;
    const Plan& p = *made;
    std::vector<std::uint64_t> out(big.output_slots(), 0);
    p.fill_slots(out.data(), Input::array(few.data(), few.size()), false);
    const double s = median_seconds(reps, [&] { p.fill_slots(out.data(), Input::array(few.data(), few.size()), false); });
    char note[120];
    std::snprintf(note, sizeof note, "%.2f ms per call", s * 1e3);
    table.add({"2^24-bin partials from " + std::to_string(n) + " device(s): a 4096-sample call", gbps(4096 * 4, s), "", 0,
               0, note});
  }
  // The merge beside the counting: 256 MiB of u32 keys (pinned) into 2^24
  // bins on 1 .. N devices, each device adding a 128 MiB partial; and the
  // count of the same keys resident on one device (Plan::run), which is what
  // the devices share.
  const std::size_t keys = std::size_t{1} << 26;
  PinnedBytes key_bytes(keys * 4);
  {
    auto* k32 = reinterpret_cast<std::uint32_t*>(key_bytes.p);
    for (std::size_t k = 0; k < keys; ++k) k32[k] = static_cast<std::uint32_t>(k * 2654435761u + (k >> 7));
  }
  const Input key_input = Input::array(key_bytes.p, keys);
  std::vector<std::uint64_t> want_keys;
  {
    Options cpu;
    cpu.backend = BackendChoice::cpu;
    want_keys = count_with(Plan(big, cpu), key_input);
  }
  double resident_ms = 0;
  try {
    Options one;
    one.backend = BackendChoice::cuda;
    one.device = devices[0];
    const Plan p(big, one);
    check_cuda(cudaSetDevice(devices[0]), "cudaSetDevice");
    void *d_keys = nullptr, *d_out = nullptr, *d_ws = nullptr;
    const std::size_t ws_bytes = std::max<std::size_t>(p.workspace_bytes(keys), 1);
    check_cuda(cudaMalloc(&d_keys, keys * 4), "cudaMalloc");
    check_cuda(cudaMalloc(&d_out, big.output_slots() * 8), "cudaMalloc");
    check_cuda(cudaMalloc(&d_ws, ws_bytes), "cudaMalloc");
    check_cuda(cudaMemset(d_ws, 0, ws_bytes), "cudaMemset");
    check_cuda(cudaMemcpy(d_keys, key_bytes.p, keys * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    auto once = [&] {
      p.run(Input::array(d_keys, keys), d_out, false, d_ws, ws_bytes);
      check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    };
    once();
    resident_ms = median_seconds(reps, once) * 1e3;
    cudaFree(d_keys);
    cudaFree(d_out);
    cudaFree(d_ws);
    char note[120];
    std::snprintf(note, sizeof note, "%.2f ms per call", resident_ms);
    table.add({"2^24 bins, 256 MiB of u32 keys resident on device " + std::to_string(devices[0]) + " (Plan::run)",
               gbps(keys * 4.0, resident_ms / 1e3), "", 0, 0, note});
  } catch (const Error& e) {
    table.add({"2^24 bins, device-resident", 0, "", 0, 0, std::string("skipped: ") + e.what()});
  }
  for (std::size_t n = 1; n <= devices.size(); ++n) {
    const std::unique_ptr<Plan> made = plan_on_first(n, "2^24 bins, 256 MiB host-resident");
    if (!made) break;
    if (count_with(*made, key_input) != want_keys) mismatch("2^24 bins on a device list");
    std::vector<std::uint64_t> out(big.output_slots(), 0);
    const double s = median_seconds(reps, [&] { made->fill_slots(out.data(), key_input, false); });
    char note[160];
    std::snprintf(note, sizeof note, "%.2f ms per call; the count on one device alone %.2f ms", s * 1e3, resident_ms);
    table.add({"2^24 bins, 256 MiB of pinned u32 keys on " + std::to_string(n) + " device(s)", gbps(keys * 4.0, s), "",
               0, 0, note});
  }
}

#endif  // LEVELHIST_HAVE_CUDA

}  // namespace

int link_bench_main(const std::vector<std::string>& args) {
  Table table;
  std::size_t bytes = 0;
  int reps = 0;
  // The table so far: every row measured before an error is still worth reading.
  auto print = [&] {
    std::cout << "## levelhist bench --link: " << (bytes >> 20) << " MiB of u8, 256 bins, median of " << reps
              << " runs\n\n"
              << table.markdown();
  };
  try {
    const LinkOptions o = parse_link_options(args);
    if (o.help) {
      std::cout << link_help();
      return 0;
    }
    bytes = o.bytes;
    reps = o.reps;
    // The data: random bytes in pageable memory and in a page-cached file.
    std::unique_ptr<unsigned char[]> pageable(new unsigned char[bytes]);
    fill_random(pageable.get(), bytes, 20261126);
    const char* tmp = std::getenv("TMPDIR");
    const fs::path dir = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::path(tmp ? tmp : "/tmp");
    const std::string path = (dir / ("levelhist-link-" + std::to_string(::getpid()) + ".u8")).string();
    struct Remove {
      std::string p;
      ~Remove() { std::remove(p.c_str()); }
    } remove_file{path};
    {
      FILE* f = std::fopen(path.c_str(), "wb");
      if (!f || std::fwrite(pageable.get(), 1, bytes, f) != bytes || std::fclose(f) != 0)
        throw Error(ErrorKind::input, "bench --link: cannot write " + path, "free space in /dev/shm or $TMPDIR");
    }
    const Request r = Request::counts(SampleType::u8, Binning::per_value(SampleType::u8));
    Options serial;
    serial.backend = BackendChoice::cpu;
    serial.strategy = "cpu_serial";
    const std::vector<std::uint64_t> want = count_with(Plan(r, serial), Input::array(pageable.get(), bytes));

    if (o.devices_only) {
#if LEVELHIST_HAVE_CUDA
      if (cuda::device_count() == 0) table.skip("no CUDA GPU (" + cuda::describe_device() + ")");
      else multi_gpu_rows(table, o, pageable.get(), bytes, want);
#else
      table.skip("this levelhist was built without CUDA");
#endif
      print();
      return 0;
    }
    // CPU rows.
    const double memory = memory_read_gbps(pageable.get(), bytes, o.reps);
    table.add({"memory read, all cores", memory, "", 0, 0, std::to_string(cores()) + " threads"});
    Options cpu;
    cpu.backend = BackendChoice::cpu;
    const Plan cpu_plan(r, cpu);
    if (count_with(cpu_plan, Input::array(pageable.get(), bytes)) != want) mismatch("the CPU plan");
    const double cpu_alone =
        gbps(bytes, median_seconds(o.reps, [&] { count_with(cpu_plan, Input::array(pageable.get(), bytes)); }));
    table.add({"CPU alone (auto strategy, all threads)", cpu_alone, "memory read", memory, 0, cpu_plan.strategy().name});
    std::vector<unsigned char> plain_dst(bytes);
    double file_read = 0;
    for (unsigned t : {1u, 4u, 8u}) file_read = std::max(file_read, file_read_gbps(path, plain_dst.data(), bytes, t, 16 << 20, o.reps));
    plain_dst = {};
    table.add({"file read: pread by 1-8 threads", file_read, "", 0, 0, "page-cached, into ordinary memory"});
    const double pipe = pipe_read_gbps(path, bytes, o.reps);
    table.add({"pipe read: cat FILE into this process", pipe, "", 0, 0, ""});
    if (!o.skip_cli) cli_rows(table, o, path, bytes, want, file_read, pipe, "cpu");

    std::string why;
    if (!backend_available(Backend::cuda, &why)) {
      table.skip(why);
    } else if (cuda::device_count() == 0) {
      table.skip("no CUDA GPU (" + cuda::describe_device() + ")");
    } else {
#if LEVELHIST_HAVE_CUDA
      gpu_rows(table, o, pageable.get(), bytes, path, want, cpu_alone);
      if (!o.skip_cli) cli_rows(table, o, path, bytes, want, file_read, pipe, "auto");
      if (o.multi) multi_gpu_rows(table, o, pageable.get(), bytes, want);
#endif
    }
    print();
    return 0;
  } catch (const std::exception& e) {
    if (bytes != 0) print();
    return report_error(e, "levelhist bench --link --help");
  }
}

}  // namespace levelhist::bench
