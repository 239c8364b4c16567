#pragma once
// MPFR built with thread-local storage keeps caches per thread (its constants
// such as log 2 and pi, its pool of integers), and a thread must free its own
// before it ends: "You should call this function before terminating a thread,
// even if you did not call mpfr_const_* functions directly" (MPFR manual,
// mpfr_free_cache). Otherwise every worker thread that computed a reference
// leaks them.

namespace ulpscope {

// Frees this thread's MPFR caches when it ends. Call it first in a thread
// that may use MPFR; calling it again in the same thread does nothing more.
void free_mpfr_caches_at_thread_exit();

}  // namespace ulpscope
