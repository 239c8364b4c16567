#include "reference/mpfr_thread_caches.hpp"

#include <mpfr.h>

namespace ulpscope {

namespace {

struct ThreadCaches {
  ~ThreadCaches() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }
};

}  // namespace

void free_mpfr_caches_at_thread_exit() {
  // A thread_local object is destroyed when its thread ends (after its first
  // use in that thread).
  thread_local ThreadCaches caches;
  (void)caches;
}

}  // namespace ulpscope
