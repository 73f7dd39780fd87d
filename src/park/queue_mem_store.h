// QueueMemStore: QUEUE-MEM's bookkeeping — payload queues holding one batch each, slices that
// release their batches in creation order, the header array, and the per-flow summary that says
// whether a flow still has packets waiting. No packet logic: QueueMem (queue_mem.h) decides,
// this remembers. Engine-neutral, a template over the packet handle only.
//
// Theory of operation
//  Queues. Each port has `queues` queues; a free one is taken from the port's free list when a
//  slice opens a batch and returned when that batch is released, so a queue is never reused
//  while it holds a batch (the P4 code's round-robin cursor can come back to a queue still
//  paused; that, not a lost header, is what the paper's recovery then sees).
//  Slices. A flow's packets always go to the same slice (5-tuple hash). A slice keeps its
//  batches in a FIFO (oldest = head, newest = tail, the only one that may be open); a batch is
//  released only from the head, so a flow spread over several batches leaves in order whatever
//  order the batches complete in.
//  Header array. `header_array` entries, the free ones handed out last-freed first (a stack: the
//  P4 code's ring over HEADER_REGISTER_SIZE hands them out in turn, reusing one still in use when
//  it wraps). Last-freed first keeps the few entries in use at a time in cache (QUEUE-MEM at
//  1.4 Tbps: ~4,000 of 94,000 entries, 128 KB of 3 MB); a late header is still told apart by its
//  32-bit id, which never repeats within 2^32 packets. Each entry holds the id its payload was
//  given and, once back, the header packet (or the whole packet, for a queued whole packet).
//  Flows. `flow_seq_[bucket]` is the highest batch sequence number a flow hashing to `bucket`
//  put a packet in. Batch sequence numbers grow with creation and a slice releases in creation
//  order, so a flow has packets waiting iff that number is >= the sequence of its slice's head.
//  Buckets are shared: a collision can only make a flow look waiting when it is not (its next
//  whole packet then queues behind others'), never the reverse.
//  Time-driven work without scans. Open batches are also linked in the order they opened (their
//  opening times never decrease), so the ones due for sealing are a prefix of that list; and
//  every live batch is linked in the order of its last send number (a packet joining a batch
//  is the newest sent, so that batch moves to the end): a slice's head has its slice's smallest
//  last send, so the list's first batch is the oldest head (what loss evidence is pruned to, and
//  the first head a recovery would find), and the heads a recovery can release (last send below
//  a bound) are among the batches of the list's prefix below that bound.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/flow_key.h"
#include "core/hot_path.h"
#include "core/time.h"

namespace nfpark::park {

// Why a batch leaves: all its headers are back, a recovery, or the end of the run.
enum class QueueMemRelease : uint8_t { kComplete, kLost, kDrain };
// One packet of a released batch, as QueueMem's release decided it; the payload store (S) hands
// it back to QueueMem::reconstruct when the packet physically leaves.
template <class Handle>
struct QueueMemLeaving {
  Handle pkt;            // the payload waiting (null: a queued whole packet)
  Handle hdr;            // its header (or the whole packet) back from the NF, or null
  uint32_t bytes;        // the payload's held bytes
  uint16_t pkt_hdr_len;  // the payload's header length (what hdr replaces)
  uint16_t hdr_len;      // hdr's header length (where its tag is)
  bool dropped;          // the NF flagged it "drop"
  bool id_mismatch;      // its idx holds another id: dropped (never; kept as a guard)
  QueueMemRelease why;
};

template <class Handle>
class QueueMemStore {
 public:
  static constexpr uint32_t kNone = ~0u;
  struct Entry {  // one packet of a batch, in arrival order
    Handle pkt;   // the original waiting for its header; null: a whole packet at the NF
    uint32_t idx, id, bytes;
    uint16_t hdr_len;  // the original's header length (what the returned header replaces)
  };
  struct Batch {
    uint32_t count = 0, returned = 0;
    uint32_t next = kNone;  // next batch of the slice (FIFO)
    uint32_t slice = 0;     // global slice index (port * slices + slice)
    bool closed = false;    // full or sealed: complete when returned == count
    Nanos opened = 0, last_sent = 0;
    uint64_t seq = 0;        // creation order, all slices (for the flow summary)
    uint64_t last_send = 0;  // send number of its last packet (loss evidence)
    uint32_t open_prev = kNone, open_next = kNone;  // the open batches, by opening time
    uint32_t send_prev = kNone, send_next = kNone;  // the live batches, by last_send
  };
  struct Slot {         // header-array entry
    uint64_t send = 0;  // send number: packets get increasing numbers as they go to the NF
    uint32_t id = 0;    // id its payload was given; 0 = free
    uint32_t queue = 0;
    Handle hdr;  // the header (or whole packet) back from the NF, or null
    uint16_t hdr_len = 0;
    bool returned = false, dropped = false, whole = false;
  };
  struct Slice {
    uint32_t head = kNone, tail = kNone;
  };

  QueueMemStore(uint8_t ports, uint16_t queues, uint16_t slices, uint16_t batch,
                uint32_t header_array, Handle null)
      : queues_(queues), slices_(slices), batch_(batch), null_(null) {
    batches_.resize(size_t(ports) * queues);
    entries_.resize(batches_.size() * batch);
    slice_.resize(size_t(ports) * slices);
    free_.resize(ports);
    for (uint8_t p = 0; p < ports; ++p)
      for (uint32_t q = queues; q-- > 0;) free_[p].push_back(p * uint32_t(queues) + q);
    slots_.assign(header_array, Slot{0, 0, 0, null, 0, false, false, false});
    free_idx_.resize(header_array);  // a stack: entry 0 on top
    for (uint32_t i = 0; i < header_array; ++i) free_idx_[i] = header_array - 1 - i;
    free_slots_ = header_array;
    uint64_t want = std::max<uint64_t>(1024, 4 * std::min<uint64_t>(entries_.size(), header_array));
    uint32_t n = 1;
    while (n < want && n < (1u << 22)) n <<= 1;
    flow_seq_.assign(n, 0);
    flow_mask_ = n - 1;
  }

  uint32_t slice_index(uint8_t port, uint64_t hash) const {
    return uint32_t(port) * slices_ + uint32_t(hash % slices_);
  }
  uint32_t bucket(uint64_t hash) const { return uint32_t(mix64(hash)) & flow_mask_; }

  // A hint: a packet of slice `s` hashing to `b` comes soon (add() and waiting() will read
  // this). Brings in its flow summary's word (a random one: 4 words a header-array entry) and
  // the slice's head and open batches. Changes nothing.
  void prefetch_add(uint32_t s, uint32_t b) const {
    prefetch_line(&flow_seq_[b]);
    const Slice& sl = slice_[s];
    if (sl.head != kNone) prefetch_line(&batches_[sl.head]);
    if (sl.tail != kNone) prefetch_line(&batches_[sl.tail]);
  }
  // True when a flow of slice `s` hashing to `b` may still have packets waiting.
  bool waiting(uint32_t s, uint32_t b) const {
    const uint32_t h = slice_[s].head;
    return h != kNone && flow_seq_[b] >= batches_[h].seq;
  }
  // True when slice `s` of port `port` can take one more packet (a place in its open batch or
  // a free queue, and a header-array entry).
  bool room(uint32_t s, uint8_t port) const {
    if (!free_slots_) return false;
    const uint32_t t = slice_[s].tail;
    return (t != kNone && !batches_[t].closed) || !free_[port].empty();
  }
  bool room(uint32_t s) const { return room(s, uint8_t(s / slices_)); }
  // Where add() put a packet: its header-array index, its batch's queue, and whether it opened
  // that batch (the caller pauses the queue then): what the caller would otherwise read back.
  struct Added {
    uint32_t idx, queue;
    bool opened;
  };
  // Adds a packet to slice `s`'s open batch (opening one if needed; room(s, port) must hold). The
  // slot gets `id`, send number `send`, `whole`. Inline: once per packet, in QueueMem::split.
  NFPARK_HOT_INLINE Added add(uint32_t s, uint32_t b, Handle pkt, uint32_t id, uint64_t send,
                              uint32_t bytes, uint16_t hdr_len, bool whole, Nanos now) {
    Slice& sl = slice_[s];
    const bool opened = sl.tail == kNone || batches_[sl.tail].closed;
    if (opened) {
      auto& fl = free_[s / slices_];
      const uint32_t q = fl.back();
      fl.pop_back();
      batches_[q] =
          Batch{0, 0, kNone, s, false, now, now, ++batch_seq_, 0, kNone, kNone, kNone, kNone};
      if (sl.tail == kNone)
        sl.head = q;
      else
        batches_[sl.tail].next = q;
      sl.tail = q;
      link_open(q);
    }
    const uint32_t q = sl.tail;
    Batch& bt = batches_[q];
    const uint32_t idx = free_idx_[--free_slots_];  // the entry freed last: still in cache
    slots_[idx] = Slot{send, id, q, null_, 0, false, false, whole};
    entries_[size_t(q) * batch_ + bt.count++] = Entry{pkt, idx, id, bytes, hdr_len};
    bt.last_sent = now;
    bt.last_send = send;
    if (send_tail_ != q) {  // the newest send: to the end of the send order
      if (!opened) unlink_send(q);
      link_send(q);
    }
    if (bt.count == batch_) close(q);
    flow_seq_[b] = std::max(flow_seq_[b], bt.seq);
    return Added{idx, q, opened};
  }

  // Gives every batch `now` as its opening and last sending time (the clock's first reading).
  void restamp(Nanos now) {
    for (auto& sl : slice_)
      for (uint32_t q = sl.head; q != kNone; q = batches_[q].next)
        batches_[q].opened = batches_[q].last_sent = now;
  }
  // Closes slice `s`'s open batch, if any. True if it was open.
  bool seal_tail(uint32_t s) {
    const uint32_t t = slice_[s].tail;
    if (t == kNone || batches_[t].closed) return false;
    close(t);
    return true;
  }
  // The head batch of slice `s` (kNone if empty) and its state.
  uint32_t head(uint32_t s) const { return slice_[s].head; }
  uint32_t tail(uint32_t s) const { return slice_[s].tail; }
  static bool complete(const Batch& b) { return b.closed && b.returned == b.count; }
  // Removes slice `s`'s head batch (after its entries were dealt with) and frees its queue, now
  // or (free_now false: its payloads are still draining) by a later free_queue().
  void pop_head(uint32_t s, bool free_now = true) {
    Slice& sl = slice_[s];
    const uint32_t q = sl.head;
    if (!batches_[q].closed) unlink_open(q);
    sl.head = batches_[q].next;
    if (sl.head == kNone) sl.tail = kNone;
    unlink_send(q);
    batches_[q] = Batch{};
    if (free_now) free_queue(q);
  }
  void free_queue(uint32_t q) { free_[q / queues_].push_back(q); }
  // Returns header-array entry `idx` to the free entries.
  void free_slot(uint32_t idx) {
    slots_[idx] = Slot{0, 0, 0, null_, 0, false, false, false};
    free_idx_[free_slots_++] = idx;
  }

  // The open batch that opened first (kNone: none), and the one that opened after q.
  uint32_t first_open() const { return open_head_; }
  uint32_t next_open(uint32_t q) const { return batches_[q].open_next; }
  // The smallest last send number of the slices' head batches; UINT64_MAX when all are empty.
  // The smallest last send number of the slices' head batches (UINT64_MAX: none).
  uint64_t oldest_head_send() const {
    return send_head_ == kNone ? UINT64_MAX : batches_[send_head_].last_send;
  }
  // The live batches in last-send order (first_sent(), then next_sent(q)): every head whose
  // last send is below a bound is in the prefix of batches below it.
  uint32_t first_sent() const { return send_head_; }
  uint32_t next_sent(uint32_t q) const { return batches_[q].send_next; }

  Batch& batch(uint32_t q) { return batches_[q]; }
  const Batch& batch(uint32_t q) const { return batches_[q]; }
  Entry& entry(uint32_t q, uint32_t i) { return entries_[size_t(q) * batch_ + i]; }
  Slot& slot(uint32_t idx) { return slots_[idx]; }
  uint32_t slots() const { return uint32_t(slots_.size()); }
  uint32_t slices() const { return uint32_t(slice_.size()); }
  uint32_t slices_per_port() const { return slices_; }
  uint32_t queue_port(uint32_t q) const { return q / queues_; }
  // Queues holding a batch (PAUSED, in the paper's words).
  uint32_t busy_queues() const {
    size_t free = 0;
    for (auto& f : free_) free += f.size();
    return uint32_t(batches_.size() - free);
  }

 private:
  void close(uint32_t q) {
    batches_[q].closed = true;
    unlink_open(q);
  }
  // The open order and the send order are two intrusive lists over batches_, each through its
  // own pair of links.
  template <uint32_t Batch::*Prev, uint32_t Batch::*Next>
  void append(uint32_t& head, uint32_t& tail, uint32_t q) {
    batches_[q].*Prev = tail;
    batches_[q].*Next = kNone;
    if (tail == kNone)
      head = q;
    else
      batches_[tail].*Next = q;
    tail = q;
  }
  template <uint32_t Batch::*Prev, uint32_t Batch::*Next>
  void unlink(uint32_t& head, uint32_t& tail, uint32_t q) {
    Batch& b = batches_[q];
    if (b.*Prev == kNone)
      head = b.*Next;
    else
      batches_[b.*Prev].*Next = b.*Next;
    if (b.*Next == kNone)
      tail = b.*Prev;
    else
      batches_[b.*Next].*Prev = b.*Prev;
    b.*Prev = b.*Next = kNone;
  }
  void link_open(uint32_t q) {
    append<&Batch::open_prev, &Batch::open_next>(open_head_, open_tail_, q);
  }
  void link_send(uint32_t q) {
    append<&Batch::send_prev, &Batch::send_next>(send_head_, send_tail_, q);
  }
  void unlink_open(uint32_t q) {
    unlink<&Batch::open_prev, &Batch::open_next>(open_head_, open_tail_, q);
  }
  void unlink_send(uint32_t q) {
    unlink<&Batch::send_prev, &Batch::send_next>(send_head_, send_tail_, q);
  }

  uint32_t queues_, slices_, batch_;
  Handle null_;
  std::vector<Batch> batches_;               // [port * queues + q]
  std::vector<Entry> entries_;               // [queue * batch + i]: each queue's FIFO
  std::vector<Slice> slice_;                 // [port * slices + slice]
  std::vector<std::vector<uint32_t>> free_;  // per port: free queues (a stack)
  std::vector<Slot> slots_;                  // the header array
  std::vector<uint32_t> free_idx_;           // free header-array entries, a stack (LIFO)
  uint32_t free_slots_ = 0;
  std::vector<uint64_t> flow_seq_;  // flow summary (see above)
  uint32_t flow_mask_ = 0;
  uint64_t batch_seq_ = 0;
  uint32_t open_head_ = kNone, open_tail_ = kNone;  // open batches, by opening time
  uint32_t send_head_ = kNone, send_tail_ = kNone;  // live batches, by last send
};

}  // namespace nfpark::park
