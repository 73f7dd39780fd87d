// Receiver and Pipe: how packets move between devices in time.
//
// A Receiver takes a packet at the current engine time. A Pipe is a delay line in front of one:
// packets are pushed with the time they come out (`due`, non-decreasing: a link, a pipeline, a
// DMA engine are FIFO), and the pipe keeps one engine event for its head, at its tie (sim/tie.h).
// When it fires it hands the head over and keeps handing over the following packets while their
// own events would come first (Engine::run_inline at the pipe's tie), so back-to-back packets
// cost one event between them, not one each.
#pragma once
#include <cassert>

#include "sim/engine.h"
#include "sim/packet.h"

namespace nfpark::sim {

class Receiver {
 public:
  virtual void receive(Packet* p) = 0;

 protected:
  ~Receiver() = default;
};

class Pipe final : public EventHandler {
 public:
  Pipe(Engine& e, Receiver* out, Rank rank, uint32_t index) : e_(e), out_(out) {
    set_tie(rank, index);
  }
  void set_output(Receiver* out) { out_ = out; }

  void push(Packet* p, Picos due) {
    assert(!tail_ || due >= tail_->due);
    p->due = due;
    p->next = nullptr;
    if (tail_) {
      tail_->next = p;
    } else {
      head_ = p;
      if (!running_) e_.schedule(due, this);
    }
    tail_ = p;
    ++size_;
  }
  size_t size() const { return size_; }
  bool empty() const { return !head_; }
  Picos head_due() const { return head_ ? head_->due : kNever; }

  void on_event(uint64_t) override {
    running_ = true;
    do {
      Packet* p = head_;
      head_ = p->next;
      if (!head_) tail_ = nullptr;
      --size_;
      out_->receive(p);
    } while (head_ && e_.run_inline(head_->due, tie() | kTieSeqMask));
    running_ = false;
    if (head_) e_.schedule(head_->due, this);
  }

 private:
  Engine& e_;
  Receiver* out_;
  Packet* head_ = nullptr;
  Packet* tail_ = nullptr;
  size_t size_ = 0;
  bool running_ = false;
};

}  // namespace nfpark::sim
