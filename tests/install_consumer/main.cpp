// A program outside levelhist's tree, built against the installed package
// (find_package(levelhist CONFIG) or pkg-config levelhist) or against the
// source tree as a subproject; scripts/check_install.sh builds and runs it.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <levelhist/levelhist.hpp>

int main() {
  std::vector<std::uint8_t> bytes(3000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i % 3);
  const levelhist::Histogram h = levelhist::histogram<std::uint8_t>(bytes);
  // Even bins: the edge arithmetic of the inline BinIndexer::slot must agree with
  // the library's (the FMA rule travels with the target and levelhist.pc).
  const levelhist::Plan plan(levelhist::Request::counts(levelhist::SampleType::f64, levelhist::Binning::even(10, 0.0, 1.0)));
  std::vector<double> x;
  for (int i = 0; i <= 10; ++i) x.push_back(i * 0.1);  // 0.1 * 3 and friends land on edges after rounding
  levelhist::Histogram g(plan.request().binning);
  plan.fill(g, levelhist::Input::array(x.data(), x.size()));
  const levelhist::BinIndexer ix = levelhist::make_indexer(plan.request().binning);
  bool same = true;
  for (std::size_t i = 0; i < x.size(); ++i) {
    levelhist::Histogram one(plan.request().binning);
    plan.fill(one, levelhist::Input::array(&x[i], 1));
    same = same && one.slots()[ix.slot(x[i])] == 1;
  }
  const bool ok = h.count(0) == 1000 && h.count(2) == 1000 && h.total() == 3000 && g.total() == 11 &&
                  g.overflow() == 1 && same;
  std::printf("levelhist %s, strategy %s: %s\n", levelhist::version(), plan.strategy().name, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
