#pragma once
// The selecting reducers: max, min, amax (reducer_interface.hpp).
#include "kernels/accumulators/extremum.hpp"
#include "kernels/reducers/reducer_interface.hpp"

namespace ulpscope {

// max, min, amax.
template <Extremum K>
struct ExtremumReducer {
  using Acc = ExtremumOf<K>;
  using value_t = float;
  using State = typename Acc::State;
  using Partial = typename Acc::Partial;
  using Params = NoParams;
  static constexpr int passes = 1;
  ULPSCOPE_HD static State start() { return Acc::start(); }
  ULPSCOPE_HD static Partial identity() { return Acc::identity(); }
  ULPSCOPE_HD static void add(State& st, float x, float, const Params&) { Acc::add(st, Acc::term(x)); }
  ULPSCOPE_HD static Partial partial(const State& st) { return st; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) { Acc::merge(a, b); }
  ULPSCOPE_HD static Finished finish(const Partial& p, const FinishArgs& a, const Params&) {
    Finished f{};
    set_output(f, 0, double(p.v), a);
    return f;
  }
};

}  // namespace ulpscope
