// nfchain.click — FastClick's counterpart of nfpark's `firewall,lb,counter` (ACL=1) and
// `lb,counter` (ACL=0) chains, written for nfpark's peer bench (scripts/peers/fastclick.py;
// after ../shared/peers/fastclick/b2_nfchain.click, the configuration of the earlier stored
// figures). One thread; the trace (nfpark's generator: 100k flows, SLF 1, 1500 B) is loaded
// into mbufs once and replayed LOOPS times from memory, so no I/O is measured on either side.
//   Classifier (IPv4) -> CheckIPHeader -> ACL (NFPARK_ACL: the firewall's own rules as an IPFilter,
//   prepended by scripts/peers/fastclick.py) -> FlowIPManager_DPDK (5-tuple flow table, rte_hash)
//   -> FlowIPLoadBalancer (per-flow backend) -> FlowCounter -> AverageCounter -> Discard
// Parameters: TRACE, LOOPS, ACL (1: with the rules; 0: a pass-through), CAP (flow table
// capacity), NB (mbufs: the trace's packets fit).
// Prints `RESULT count=N time_s=S flows=F denied=D nonip=X badip=Y`.
define($TRACE trace.pcap, $LOOPS 10, $ACL 1, $CAP 262144, $NB 262143)

DPDKInfo(NB_MBUF $NB)

FromDump($TRACE, STOP false, TIMING false)
  -> rp :: ReplayUnqueue(STOP $LOOPS, QUICK_CLONE false, BURST 32)
  -> cls :: Classifier(12/0800, -)
  -> chk :: CheckIPHeader(OFFSET 14, CHECKSUM false)
  -> aclsw :: Switch($ACL)
aclsw[0] -> join :: Null;
aclsw[1] -> acl :: NFPARK_ACL;
acl[0] -> join;
acl[1] -> denied :: Counter -> Discard;
join
  -> fm :: FlowIPManager_DPDK(CAPACITY $CAP, TIMEOUT 0, VERBOSE 0)
  -> lb :: FlowIPLoadBalancer(VIP 172.16.0.1, DST 192.168.100.1, DST 192.168.100.2, DST 192.168.100.3, DST 192.168.100.4)
  -> fc :: FlowCounter
  -> ac :: AverageCounter
  -> Discard;

cls[1] -> nonip :: Counter -> Discard;
chk[1] -> badip :: Counter -> Discard;

DriverManager(wait,
  print "RESULT count=$(ac.count) time_s=$(ac.time) flows=$(fm.count) denied=$(denied.count) nonip=$(nonip.count) badip=$(badip.count)");
