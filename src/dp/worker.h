// Workers: `nfpark run --workers N` (N > 1) — flows sharded over N lcores, each running the
// whole pipeline for its share with nothing shared on the per-packet path.
//
//   lcore 0 (the wire)   feeder -> traffic RX queue shard(flow) ..... writer <- TX queues 0..N-1
//                        (live ports: no wire; see Sharding)
//   lcore 1+q (worker q) traffic queue q -> its SwitchMode -> NF link queue q -> its NfServer
//                        (inline; or, --role switch, the NF process's worker q on memif queue q)
//                        -> NF link queue q -> its SwitchMode -> traffic TX queue q
//
// Sharding: the replay feeder plays a NIC's RSS with a symmetric key (core/shard.h: both
// directions of a flow on one worker; a NAT's replies steered to the worker that owns their
// external port). Live ports (--traffic A+B) have one RX and TX queue pair per worker (af_packet:
// qpairs=N, the kernel's PACKET_FANOUT spread); worker q reads queue q of both and passes what
// the shard gives another worker over a steering ring (dp/steer.h), and sends on its own TX
// queues. Lcore 0 then only watches: a signal, --idle-exit (no frame read by any worker for that
// long: the workers are told to stop together) and the live stats line / telemetry.
// Each worker owns its SwitchMode (its store share: run/worker_config.h), its NfServer (NF
// chain, Reframer, faults), its queue views of every port (Port::queue: own counters, own TX
// backlog) and its SwitchLoop, which ends on its own once the wire says the input is all on its
// ring and its share has settled. The wire's lcore then settles what is left (SwitchLoop::
// finish per worker), and the result is the sum of the workers' parts (run/result_sum.h), with
// per-worker packets under ports."worker<q>.*".
// Memif NF link: the wire's lcore waits for the peer, then holds the ControlGate for the run
// (Port::wait_peer); the NF process serves queue q with its worker q (run_nf_workers).
// Reframer box ([reframe] placement = "box"): one per worker, on lcore N + 1 + q, in front of
// worker q's NF server (dp/reframe_box.h); 2N + 1 lcores then.
// Lcores: N + 1 (EAL floats them over the CPUs it may use when there are fewer: eal.h); the
// wire sleeps 20 µs whenever nothing moved, so it takes little from the workers.
#pragma once
#include <string>

#include "dp/run_config.h"
#include "run/budget.h"
#include "trace/pcap_reader.h"
#include "trace/pcap_writer.h"

namespace nfpark::dp {

// The switch (one process, or --role switch) over cfg.workers lcores, replaying `reader` (or on
// the live ports of cfg.traffic_ports).
// Returns 0, 1 (run failed) or 2 (bad configuration found late), as runner.h's run().
int run_switch_workers(const RunConfig& cfg, trace::TraceReader& reader, trace::PcapWriter* writer,
                       const run::Budget& budget, RunResult& res, std::string& err);

}  // namespace nfpark::dp
