// levelhist._levelhist: the Python binding of the library (nanobind).
//
// The module holds what the C++ library does: a Binning (the axis), a Plan
// (a request resolved once; counted many times) and its two entry points,
// fill (host memory, numpy arrays) and run (device pointers and a stream, the
// caller's CuPy array or torch tensor). The Python package (python/levelhist)
// does the rest: numpy's edge arithmetic and argument rules, recognising
// arrays, allocating outputs and workspaces through the array's own library.
// Counting releases the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "levelhist/cuda.hpp"
#include "levelhist/error.hpp"
#include "levelhist/levelhist.hpp"
#include "levelhist/plan.hpp"

namespace nb = nanobind;

namespace {

using levelhist::Binning;
using levelhist::EdgeRounding;
using levelhist::Error;
using levelhist::ErrorKind;
using levelhist::SampleType;

// Host arrays of any dtype: the plan checks that it is the one it counts.
using HostArray = nb::ndarray<nb::c_contig, nb::device::cpu, nb::ro>;
using HostOut = nb::ndarray<nb::c_contig, nb::device::cpu>;
using HostDoubles = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

SampleType parse_type(const std::string& name) {
  if (auto t = levelhist::parse_sample_type(name)) return *t;
  throw Error(ErrorKind::usage, "unknown sample type '" + name + "'", "give u8, i8, u16, i16, i32, u32, f32 or f64");
}

// The sample type of a dtype, if levelhist counts it as it is.
std::optional<SampleType> type_of(nb::dlpack::dtype d) {
  using Code = nb::dlpack::dtype_code;
  const auto code = static_cast<Code>(d.code);
  if (d.lanes != 1) return std::nullopt;
  if (code == Code::UInt && d.bits == 8) return SampleType::u8;
  if (code == Code::Int && d.bits == 8) return SampleType::i8;
  if (code == Code::UInt && d.bits == 16) return SampleType::u16;
  if (code == Code::Int && d.bits == 16) return SampleType::i16;
  if (code == Code::Int && d.bits == 32) return SampleType::i32;
  if (code == Code::UInt && d.bits == 32) return SampleType::u32;
  if (code == Code::Float && d.bits == 32) return SampleType::f32;
  if (code == Code::Float && d.bits == 64) return SampleType::f64;
  return std::nullopt;
}

EdgeRounding parse_rounding(const std::string& name) {
  if (name == "none") return EdgeRounding::none;
  if (name == "f32") return EdgeRounding::f32;
  if (name == "f32_arithmetic") return EdgeRounding::f32_arithmetic;
  throw Error(ErrorKind::usage, "unknown edge rounding '" + name + "'", "give none, f32 or f32_arithmetic");
}

const char* rounding_name(EdgeRounding r) {
  switch (r) {
    case EdgeRounding::none: return "none";
    case EdgeRounding::f32: return "f32";
    case EdgeRounding::f32_arithmetic: return "f32_arithmetic";
  }
  return "none";
}

levelhist::BackendChoice parse_backend(const std::string& name) {
  if (name == "auto") return levelhist::BackendChoice::automatic;
  if (name == "cpu") return levelhist::BackendChoice::cpu;
  if (name == "cuda") return levelhist::BackendChoice::cuda;
  throw Error(ErrorKind::usage, "unknown backend '" + name + "'", "give auto, cpu or cuda");
}

struct PyPlan {
  levelhist::Plan plan;
  SampleType type;
  std::optional<SampleType> weight_type;
};

void check_host_call(const PyPlan& p, const HostArray& samples, const std::optional<HostArray>& weights,
                     const HostOut& out) {
  if (type_of(samples.dtype()) != p.type)
    throw Error(ErrorKind::usage, "the samples are not of the plan's type " + std::string(to_string(p.type)),
                "make a plan for their type");
  if (p.weight_type) {
    if (!weights) throw Error(ErrorKind::usage, "the plan sums weights, and none were given", "pass weights");
    if (type_of(weights->dtype()) != p.weight_type)
      throw Error(ErrorKind::usage, "the weights are not of the plan's weight type " + std::string(to_string(*p.weight_type)),
                  "convert them");
    if (weights->size() != samples.size())
      throw Error(ErrorKind::usage, "one weight per sample is needed: " + std::to_string(samples.size()) +
                                        " samples, " + std::to_string(weights->size()) + " weights",
                  "pass as many weights as samples");
  } else if (weights) {
    throw Error(ErrorKind::usage, "the plan counts, and weights were given", "make a plan with a weight type");
  }
  const auto code = static_cast<nb::dlpack::dtype_code>(out.dtype().code);
  const bool sums_ok = code == nb::dlpack::dtype_code::Float && out.dtype().bits == 64;
  const bool counts_ok = (code == nb::dlpack::dtype_code::Int || code == nb::dlpack::dtype_code::UInt) && out.dtype().bits == 64;
  if ((p.weight_type ? !sums_ok : !counts_ok) || out.size() != p.plan.request().output_slots())
    throw Error(ErrorKind::usage,
                "the output must hold " + std::to_string(p.plan.request().output_slots()) +
                    (p.weight_type ? " float64 sums" : " 64-bit counts"),
                "allocate request's output slots");
}

PyObject* exception_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
    case ErrorKind::input: return PyExc_ValueError;
    case ErrorKind::resource: return PyExc_MemoryError;
    case ErrorKind::unsupported:
    case ErrorKind::cuda:
    case ErrorKind::internal: break;
  }
  return PyExc_RuntimeError;
}

}  // namespace

NB_MODULE(_levelhist, m) {
  m.doc() = "levelhist's C++ library: Binning, Plan (fill host arrays, run device pointers).";
  m.attr("__version__") = LEVELHIST_VERSION;

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(exception_for(e.kind()), (std::string("levelhist: ") + e.what()).c_str());
    }
  });

  nb::class_<Binning>(m, "Binning")
      .def_static(
          "even",
          [](std::uint64_t bins, double lower, double upper, bool last_bin_inclusive, const std::string& rounding) {
            return Binning::even(bins, lower, upper, last_bin_inclusive, parse_rounding(rounding));
          },
          nb::arg("bins"), nb::arg("lower"), nb::arg("upper"), nb::arg("last_bin_inclusive") = true,
          nb::arg("rounding") = "none")
      .def_static(
          "explicit",
          [](HostDoubles edges, bool last_bin_inclusive) {
            return Binning::explicit_edges(std::vector<double>(edges.data(), edges.data() + edges.size()),
                                           last_bin_inclusive);
          },
          nb::arg("edges"), nb::arg("last_bin_inclusive") = true)
      .def_prop_ro("bins", &Binning::bins)
      .def_prop_ro("lower", &Binning::lower)
      .def_prop_ro("upper", &Binning::upper)
      .def_prop_ro("last_bin_inclusive", &Binning::last_bin_inclusive)
      .def_prop_ro("kind", [](const Binning& b) { return b.kind() == levelhist::BinKind::even ? "even" : "edges"; })
      .def_prop_ro("rounding", [](const Binning& b) { return rounding_name(b.rounding()); })
      // Writes the bins + 1 edges, exactly as the bin-index function sees them, into `out` (float64).
      .def(
          "write_edges",
          [](const Binning& b, nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu> out) {
            if (out.size() != b.bins() + 1)
              throw Error(ErrorKind::usage, "the edge array must hold bins + 1 values", "allocate bins + 1 float64");
            const levelhist::BinIndexer ix = levelhist::make_indexer(b);
            double* e = out.data();
            if (b.kind() == levelhist::BinKind::edges) {
              for (std::uint64_t i = 0; i <= b.bins(); ++i) e[i] = b.edge_values()[i];
            } else {
              for (std::uint64_t i = 0; i <= b.bins(); ++i) e[i] = ix.even_edge(i);
            }
          },
          nb::arg("out"))
      .def("__eq__", [](const Binning& a, const Binning& b) { return a == b; })
      .def("__repr__", [](const Binning& b) { return "<levelhist Binning: " + b.describe() + ">"; });

  nb::class_<PyPlan>(m, "Plan")
      .def(
          "__init__",
          [](PyPlan* self, const std::string& type, const Binning& binning, std::optional<std::string> weight_type,
             const std::string& backend, int device, const std::string& strategy, unsigned threads) {
            const SampleType t = parse_type(type);
            levelhist::Request request = weight_type
                                             ? levelhist::Request::weighted(t, parse_type(*weight_type), binning)
                                             : levelhist::Request::counts(t, binning);
            levelhist::Options options;
            options.backend = parse_backend(backend);
            options.device = device;
            options.strategy = strategy;
            options.threads = threads;
            std::optional<SampleType> w;
            if (weight_type) w = parse_type(*weight_type);
            new (self) PyPlan{levelhist::Plan(std::move(request), options), t, w};
          },
          nb::arg("type"), nb::arg("binning"), nb::arg("weight_type").none() = nb::none(), nb::arg("backend") = "auto",
          nb::arg("device") = -1, nb::arg("strategy") = "auto", nb::arg("threads") = 0)
      // N-d points (Request::joint): 2 to 4 axes, one Binning each, axis 0 slowest.
      .def_static(
          "joint",
          [](const std::string& type, const std::vector<Binning>& axes, const std::string& backend, int device,
             const std::string& strategy, unsigned threads) {
            const SampleType t = parse_type(type);
            levelhist::Options options;
            options.backend = parse_backend(backend);
            options.device = device;
            options.strategy = strategy;
            options.threads = threads;
            return PyPlan{levelhist::Plan(levelhist::Request::joint(t, axes), options), t, std::nullopt};
          },
          nb::arg("type"), nb::arg("axes"), nb::arg("backend") = "auto", nb::arg("device") = -1,
          nb::arg("strategy") = "auto", nb::arg("threads") = 0)
      .def_prop_ro("axes", [](const PyPlan& p) { return p.plan.request().axis_count(); })
      .def_prop_ro("type", [](const PyPlan& p) { return std::string(to_string(p.type)); })
      .def_prop_ro("weight_type",
                   [](const PyPlan& p) -> std::optional<std::string> {
                     if (!p.weight_type) return std::nullopt;
                     return std::string(to_string(*p.weight_type));
                   })
      .def_prop_ro("strategy", [](const PyPlan& p) { return std::string(p.plan.strategy().name); })
      .def_prop_ro("backend", [](const PyPlan& p) { return std::string(to_string(p.plan.backend())); })
      .def_prop_ro("device", [](const PyPlan& p) { return p.plan.device(); })
      .def_prop_ro("slots", [](const PyPlan& p) { return p.plan.request().output_slots(); })
      .def_prop_ro("binning", [](const PyPlan& p) { return p.plan.request().binning; })
      // Host memory: adds the counts (or sums) of `samples` into `out`, the
      // request's slots (bins, underflow, overflow, NaN) as 64-bit integers or
      // float64 sums. Any backend (a CUDA plan stages the data to its device).
      .def(
          "fill",
          [](const PyPlan& p, HostArray samples, std::optional<HostArray> weights, HostOut out) {
            check_host_call(p, samples, weights, out);
            const levelhist::Input input =
                levelhist::Input::array(samples.data(), samples.size(), weights ? weights->data() : nullptr);
            void* slots = out.data();
            nb::gil_scoped_release release;
            p.plan.fill_slots(slots, input, /*accumulate=*/true);
          },
          nb::arg("samples"), nb::arg("weights").none(), nb::arg("out"))
      // Host memory, N-d plans: adds the counts of n points into `out` (every
      // slot of every axis, axis 0 slowest), their coordinates in one array
      // per axis (`columns`, n each) or interleaved in one (N, axes) array.
      .def(
          "fill_points",
          [](const PyPlan& p, std::vector<HostArray> columns, HostOut out) {
            const unsigned axes = p.plan.request().axis_count();
            if (axes < 2) throw Error(ErrorKind::usage, "the plan counts one axis", "use fill");
            if (columns.size() != 1 && columns.size() != axes)
              throw Error(ErrorKind::usage,
                          "give one array of interleaved points or one array per axis (" + std::to_string(axes) + ")",
                          "pass the coordinates");
            levelhist::Input input;
            for (const HostArray& c : columns) check_host_call(p, c, std::nullopt, out);
            if (columns.size() == 1) {
              if (columns[0].size() % axes != 0)
                throw Error(ErrorKind::usage, "the interleaved points are not a whole number of points",
                            "pass an (N, " + std::to_string(axes) + ") array");
              input = levelhist::Input::array(columns[0].data(), columns[0].size() / axes);
            } else {
              input.n = columns[0].size();
              for (unsigned a = 0; a < axes; ++a) {
                if (columns[a].size() != input.n)
                  throw Error(ErrorKind::usage, "the axes' arrays differ in length", "pass as many coordinates per axis");
                input.columns[a] = columns[a].data();
              }
              input.samples = input.columns[0];
            }
            void* slots = out.data();
            nb::gil_scoped_release release;
            p.plan.fill_slots(slots, input, /*accumulate=*/true);
          },
          nb::arg("columns"), nb::arg("out"))
      // Device memory, N-d plans: n points at the device addresses `columns`
      // (one per axis, or one of interleaved points), as run.
      .def(
          "run_points",
          [](const PyPlan& p, std::vector<std::uintptr_t> columns, std::uint64_t n, std::uintptr_t out, bool accumulate,
             std::uintptr_t workspace, std::size_t workspace_bytes, std::uintptr_t stream) {
            const unsigned axes = p.plan.request().axis_count();
            if (axes < 2 || (columns.size() != 1 && columns.size() != axes))
              throw Error(ErrorKind::usage, "give one address of interleaved points or one per axis of an N-d plan",
                          "pass the coordinates");
            levelhist::Input input = levelhist::Input::array(reinterpret_cast<const void*>(columns[0]), n);
            if (columns.size() == axes)
              for (unsigned a = 0; a < axes; ++a) input.columns[a] = reinterpret_cast<const void*>(columns[a]);
            nb::gil_scoped_release release;
            p.plan.run(input, reinterpret_cast<void*>(out), accumulate, reinterpret_cast<void*>(workspace),
                       workspace_bytes, reinterpret_cast<void*>(stream));
          },
          nb::arg("columns"), nb::arg("n"), nb::arg("out"), nb::arg("accumulate"), nb::arg("workspace"),
          nb::arg("workspace_bytes"), nb::arg("stream"))
      // Device memory (CUDA plans): counts n samples at device address
      // `samples` (weights at `weights`, 0 for none) into `out` (slots as
      // int64/uint64 counts or float64 sums), clearing it first unless
      // `accumulate`; asynchronous on `stream` (a cudaStream_t as an integer).
      // `workspace`: workspace_bytes(n) bytes of device memory, zero; every call
      // leaves it zero.
      .def(
          "run",
          [](const PyPlan& p, std::uintptr_t samples, std::uint64_t n, std::uintptr_t weights, std::uintptr_t out,
             bool accumulate, std::uintptr_t workspace, std::size_t workspace_bytes, std::uintptr_t stream) {
            if (p.weight_type && !weights && n > 0)
              throw Error(ErrorKind::usage, "the plan sums weights, and none were given", "pass weights");
            const levelhist::Input input = levelhist::Input::array(reinterpret_cast<const void*>(samples), n,
                                                                   reinterpret_cast<const void*>(weights));
            nb::gil_scoped_release release;
            p.plan.run(input, reinterpret_cast<void*>(out), accumulate, reinterpret_cast<void*>(workspace),
                       workspace_bytes, reinterpret_cast<void*>(stream));
          },
          nb::arg("samples"), nb::arg("n"), nb::arg("weights"), nb::arg("out"), nb::arg("accumulate"),
          nb::arg("workspace"), nb::arg("workspace_bytes"), nb::arg("stream"))
      .def(
          "workspace_bytes", [](const PyPlan& p, std::uint64_t n) { return p.plan.workspace_bytes(n); },
          nb::arg("n"));

  m.def("built_with_cuda", &levelhist::built_with_cuda);
  m.def("cuda_available", [] {
    std::string why;
    const bool ok = levelhist::backend_available(levelhist::Backend::cuda, &why);
    return std::make_pair(ok, why);
  });
  m.def("device_count", &levelhist::cuda::device_count);
  m.def("describe_device", &levelhist::cuda::describe_device);
}
