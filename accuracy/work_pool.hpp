#pragma once
// The cores a run may use, as one pool of worker threads (Boost.Asio's
// thread_pool): the CPU models' cells, the references, the permuted copies
// and, on the GPU backend, the model checks of cells whose GPU runs are done,
// while the GPU goes on with the next cell. Only the thread that owns the
// pool waits on its futures, so a task never waits for another.
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <cstdint>
#include <future>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "reference/mpfr_thread_caches.hpp"
#include "reference/usable_cores.hpp"

namespace ulpscope {

class WorkPool {
 public:
  // 0: one thread per core this process may use.
  explicit WorkPool(unsigned threads = 0)
      : threads_(threads ? threads : usable_cores()), pool_(threads_) {}
  ~WorkPool() { pool_.join(); }
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  unsigned threads() const { return threads_; }

  template <class F>
  auto submit(F f) -> std::future<std::invoke_result_t<F>> {
    using R = std::invoke_result_t<F>;
    auto task = std::make_shared<std::packaged_task<R()>>(std::move(f));
    std::future<R> done = task->get_future();
    boost::asio::post(pool_, [task] {
      free_mpfr_caches_at_thread_exit();  // the pool's threads compute references
      (*task)();
    });
    return done;
  }

  // f(begin, end) over [0, count) in about one chunk per thread, each of at
  // least min_part items (single elements are not worth a thread below a few
  // thousand; blocks of work are); returns when every chunk is done,
  // rethrowing the first exception.
  template <class F>
  void for_chunks(std::int64_t count, F f, std::int64_t min_part = 4096) {
    const std::int64_t parts = std::clamp<std::int64_t>(count / std::max<std::int64_t>(min_part, 1), 1, threads_);
    std::vector<std::future<void>> chunks;
    for (std::int64_t k = 0; k < parts; ++k)
      chunks.push_back(submit([&f, b = count * k / parts, e = count * (k + 1) / parts] { f(b, e); }));
    for (auto& c : chunks) c.get();
  }

 private:
  unsigned threads_;
  boost::asio::thread_pool pool_;
};

}  // namespace ulpscope
