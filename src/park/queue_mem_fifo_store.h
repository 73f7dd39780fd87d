// SoftwareFifoStore: where QueueMem's payloads wait in the software dataplane — the batch
// entries of QueueMemStore themselves (per-queue FIFOs in memory). QueueMem's storage seam
// (docs/sim.md §8): QueueMem<B, S> decides everything (eligibility, slice and queue, idx/id, when
// a batch opens, when it leaves and what each of its packets becomes) and tells S only where the
// payloads physically are:
//   pause(queue)           a batch opened in `queue` (its HEAD): the queue holds it
//   hold(queue, pkt)       a payload joined `queue`'s open batch
//   leave(qm, queue, l, to_out)
//                          the batch of `queue` is released; `l` (QueueMem::Leaving) is one of its
//                          packets, in FIFO order: S calls qm.reconstruct(l, to_out) when that
//                          packet physically leaves
//   resume(queue, slice) -> bool
//                          after the last leave(): the queue may drain (`slice`: the batch's
//                          ordering domain; batches of one slice must drain one after the other
//                          for a flow to keep its order). True: it is empty and free for another
//                          batch now; false: S calls qm.queue_drained(queue) once its last
//                          payload is gone
// Here every call but leave() is a no-op and leave() rebuilds the packet at once: exactly the
// dataplane's behaviour before the seam. The simulator's store (src/sim/queue_mem_program.h)
// keeps payloads in the switch model's paused egress queues instead.
#pragma once
#include <cstdint>

namespace nfpark::park {

struct SoftwareFifoStore {
  void pause(uint32_t) {}
  template <class Handle>
  void hold(uint32_t, Handle) {}
  template <class QM, class Leaving, class Out>
  void leave(QM& qm, uint32_t, const Leaving& l, Out& to_out) {
    qm.reconstruct(l, to_out);
  }
  bool resume(uint32_t, uint32_t) { return true; }
};

}  // namespace nfpark::park
