// Attributes for per-packet code: keep the common case of a hot path in one piece (no calls,
// few registers spilled) and move its rare branches out of line.
//
//   NFPARK_HOT_INLINE  always inlined into its caller (a per-packet step of a burst loop)
//   NFPARK_COLD        never inlined, laid out away from hot code (eviction, errors, slow paths)
//   prefetch_line(p)   brings p's cache line toward L1 (a hint that is never optimised out);
//                      prefetch_line_w(p) for a line about to be written. Use these, not
//                      __builtin_prefetch, which GCC may delete (below)
//
// Measured on the parking switch's split + merge (bench/dp/switch_bench): letting the compiler
// decide left the common case spread over five calls; see docs/performance.md §1.
#pragma once

#if defined(__GNUC__)
#define NFPARK_HOT_INLINE [[gnu::always_inline]] inline
#define NFPARK_COLD [[gnu::noinline, gnu::cold]]
#else
#define NFPARK_HOT_INLINE inline
#define NFPARK_COLD
#endif

namespace nfpark {
// __builtin_prefetch does not count as an effect: GCC 12 found a function made only of
// prefetches "pure" and deleted the calls to it (an empty QueueMem hint, docs/sim.md §9). An
// asm statement is kept wherever it is.
inline void prefetch_line(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}
// The same for a line about to be written (prefetchw where the target has it).
inline void prefetch_line_w(const void* p) {
#if defined(__x86_64__) && defined(__PRFCHW__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#elif defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1);
#endif
}
}  // namespace nfpark
