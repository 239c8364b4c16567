// accuracy_report's global operator new: a block of 2 MiB or more is
// advised to the kernel as transparent huge pages (madvise(MADV_HUGEPAGE))
// before any of it is touched.
//
// A report at real sizes fills arrays of n values for every cell and launch
// (the references, each launch's outputs, the errors). Where the system's
// transparent huge pages are in "madvise" mode (the Linux kernel's
// Documentation/admin-guide/mm/transhuge.rst), memory not advised so comes
// in 4 KiB pages, each a page fault of its own on first touch. glibc's
// malloc maps a block above its mmap threshold (at most 32 MiB) afresh, so
// the advice reaches all of it before its first touch, and the untouched
// pages of a smaller block from the heap; glibc gives the same advice to its
// own mappings when its tunable glibc.malloc.hugetlb=1 is set (glibc manual,
// "Memory Allocation Tunables"). Replacing operator new is the standard's
// own hook for this ([replacement.functions]); the array and nothrow forms
// of new and delete reach these two, the aligned forms keep their own
// allocation and release. Sanitizer builds keep their own allocator.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ULPSCOPE_NO_HUGE_PAGE_NEW
#endif
#endif
#else
#define ULPSCOPE_NO_HUGE_PAGE_NEW
#endif

#ifndef ULPSCOPE_NO_HUGE_PAGE_NEW
#include <sys/mman.h>

namespace {

constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kAdvisedFrom = kHugePage;

// The whole huge pages inside [p, p + n): advice only, so a refusal (no
// THP in this kernel) changes nothing.
void advise_huge_pages(void* p, std::size_t n) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t begin = (at + kHugePage - 1) & ~(kHugePage - 1), end = (at + n) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace

void* operator new(std::size_t n) {
  for (;;) {
    if (void* p = std::malloc(n == 0 ? 1 : n)) {
      if (n >= kAdvisedFrom) advise_huge_pages(p, n);
      return p;
    }
    // [new.delete.single]: call the new-handler until it succeeds or there is none.
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

#endif
