#pragma once
// work(0) .. work(threads - 1) at once, one a thread (work(0) on the
// caller's), for the references that split into independent parts: the
// lines of a row-wise problem, the chunks of a long scan. Each thread frees
// its MPFR caches when it ends (mpfr_thread_caches.hpp); the first part to
// throw has its exception rethrown here, after every thread has joined.
#include <exception>
#include <thread>
#include <vector>

#include "reference/mpfr_thread_caches.hpp"

namespace ulpscope {

template <class Work>
void on_threads(unsigned threads, Work&& work) {
  std::vector<std::exception_ptr> errors(threads);
  auto run = [&](unsigned t) {
    free_mpfr_caches_at_thread_exit();
    try {
      work(t);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t) workers.emplace_back(run, t);
  run(0);
  for (auto& w : workers) w.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace ulpscope
