// levelhist bench --link: how close the host path of a CUDA plan comes to the
// link. One run measures the limits (the host -> device copy from pinned,
// pageable and registered memory, cudaHostRegister's cost, staging memcpy by
// several threads, pread of a page-cached file, a pipe) and levelhist against
// them: the CPU alone, the GPU alone from each kind of memory and from a
// FileSource, both together (an automatic plan), the CLI on a file and on a
// pipe; with --devices, several GPUs. Every result is checked against the CPU
// reference before it is timed. Plain C++, built with or without CUDA: without
// a GPU it prints the CPU rows and says the GPU rows were skipped.
#pragma once
#include <string>
#include <vector>

namespace levelhist::bench {

int link_bench_main(const std::vector<std::string>& args);

}  // namespace levelhist::bench
