// The text protocol against replies recorded from stock memcached 1.6.18 (memcached -U, one
// request per datagram, fresh server per test like the recordings). The live comparison is
// tests/e2e/test_kvs_conformance.py; these catch a regression without memcached installed.
#include <gtest/gtest.h>

#include "kvs_fixtures.h"

namespace nfpark::kvs::testing {
namespace {

using V = std::vector<Datagram>;
const Datagram kEmpty = D("", 0, 0);  // memcached's lone header for an empty first response

TEST(Protocol, BasicsAsMemcached) {
  ServerBox b;
  EXPECT_EQ(b.run("version\r\n"), V{D("VERSION 1.6.18\r\n")});
  EXPECT_EQ(b.run("get a\r\n"), V{D("END\r\n")});
  EXPECT_EQ(b.run("set a 5 0 3\r\nabc\r\n"), V{D("STORED\r\n")});
  EXPECT_EQ(b.run("get a b a\r\n"),
            (V{D("VALUE a 5 3\r\nabc\r\n"), D("VALUE a 5 3\r\nabc\r\nEND\r\n")}));
  EXPECT_EQ(b.run("get b a b\r\n"), (V{kEmpty, D("VALUE a 5 3\r\nabc\r\n"), D("END\r\n")}));
  EXPECT_EQ(b.run("gets a\r\n"), V{D("VALUE a 5 3 1\r\nabc\r\nEND\r\n")});
  EXPECT_EQ(b.run("set a 0 0 3\r\nabcd\r\n"),
            (V{D("CLIENT_ERROR bad data chunk\r\n"), D("ERROR\r\n")}));
  EXPECT_EQ(b.run("bogus\r\n"), V{D("ERROR\r\n")});
  EXPECT_EQ(b.run("set a 0 0 3\r\nxyz\r\nget a\r\n"),
            (V{D("STORED\r\n"), D("VALUE a 0 3\r\nxyz\r\nEND\r\n")}));
  EXPECT_EQ(b.run("get\r\n"), V{D("ERROR\r\n")});
  EXPECT_EQ(b.run("get a"), V{});  // no newline: memcached waits, nothing is sent
}

TEST(Protocol, MalformedStorageAndKeysAsMemcached) {
  ServerBox b;
  const std::string k251(251, 'k'), k250(250, 'k');
  const V bad{D("CLIENT_ERROR bad command line format\r\n")};
  const V bad_then_error{D("CLIENT_ERROR bad command line format\r\n"), D("ERROR\r\n")};
  EXPECT_EQ(b.run("get " + k251 + "\r\n"), bad);
  EXPECT_EQ(b.run("set " + k251 + " 0 0 1\r\nx\r\n"), bad_then_error);
  EXPECT_EQ(b.run("delete " + k251 + "\r\n"), bad);
  EXPECT_EQ(b.run("get " + k250 + "\r\n"), V{D("END\r\n")});
  std::string many = "get";
  for (int i = 0; i < 30; ++i) many += " k" + std::to_string(i);
  EXPECT_EQ(b.run(many + "\r\n"), (V{kEmpty, D("END\r\n")}));
  EXPECT_EQ(b.run("set a abc 0 1\r\nx\r\n"), bad_then_error);
  EXPECT_EQ(b.run("set a -1 0 1\r\nx\r\n"), bad_then_error);
  EXPECT_EQ(b.run("set a 4294967295 0 1\r\nx\r\n"), V{D("STORED\r\n")});
  EXPECT_EQ(b.run("set a 4294967296 0 1\r\nx\r\n"), V{D("STORED\r\n")});
  EXPECT_EQ(b.run("get a\r\n"), V{D("VALUE a 0 1\r\nx\r\nEND\r\n")});  // flags wrapped to 0
  EXPECT_EQ(b.run("set a 0 abc 1\r\nx\r\n"), bad_then_error);
  EXPECT_EQ(b.run("set a 0 0 -1\r\nx\r\n"), bad_then_error);
  EXPECT_EQ(b.run("set a 0 0 abc\r\nx\r\n"), bad_then_error);
  EXPECT_EQ(b.run("set a 0 0\r\n"), V{D("ERROR\r\n")});
  EXPECT_EQ(b.run("set a 0 0 1 noreply x\r\nx\r\n"), (V{D("ERROR\r\n"), D("ERROR\r\n")}));
  EXPECT_EQ(b.run("set a 0 0 3 noreply\r\nabc\r\n"), V{});
  EXPECT_EQ(b.run("set a 0 0 3 junk\r\nabc\r\n"), V{D("STORED\r\n")});
  EXPECT_EQ(b.run("set a 0 0 3 noreply\r\nabcd\r\n"), V{D("ERROR\r\n")});
  EXPECT_EQ(b.run("set a 0 0 4294967299\r\nabc\r\nget a\r\n"),
            (V{D("STORED\r\n"), D("VALUE a 0 3\r\nabc\r\nEND\r\n")}));
  EXPECT_EQ(b.run("set a 0 0 +2\r\nab\r\n"), V{D("STORED\r\n")});
  EXPECT_EQ(b.run("set a 0 0 2\t\r\nab\r\n"), V{D("STORED\r\n")});
  EXPECT_EQ(b.run("set a 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24\r\n"),
            V{D("ERROR\r\n")});
}

TEST(Protocol, DeleteAddReplaceExpiryAsMemcached) {
  ServerBox b;
  const V usage{D("CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n")};
  EXPECT_EQ(b.run("set a 4294967296 0 1\r\nx\r\nget a\r\n"),
            (V{D("STORED\r\n"), D("VALUE a 0 1\r\nx\r\nEND\r\n")}));
  EXPECT_EQ(b.run("delete a 0\r\n"), V{D("DELETED\r\n")});
  EXPECT_EQ(b.run("delete a\r\n"), V{D("NOT_FOUND\r\n")});
  EXPECT_EQ(b.run("delete a noreply\r\n"), V{});
  EXPECT_EQ(b.run("delete a 1\r\n"), usage);
  EXPECT_EQ(b.run("delete a 0 noreply\r\n"), V{});
  EXPECT_EQ(b.run("delete a b c\r\n"), usage);
  EXPECT_EQ(b.run("delete\r\n"), V{D("ERROR\r\n")});
  EXPECT_EQ(b.run("add a 0 0 1\r\n1\r\nadd a 0 0 1\r\n2\r\nreplace a 0 0 1\r\n3\r\n"
                  "replace zz 0 0 1\r\n4\r\nget a zz\r\n"),
            (V{D("STORED\r\n"), D("NOT_STORED\r\n"), D("STORED\r\n"), D("NOT_STORED\r\n"),
               D("VALUE a 0 1\r\n3\r\n"), D("END\r\n")}));
  EXPECT_EQ(b.run("set e 0 -1 1\r\nx\r\nget e\r\n"), (V{D("STORED\r\n"), D("END\r\n")}));
  EXPECT_EQ(b.run("set z 0 0 0\r\n\r\nget z\r\n"),
            (V{D("STORED\r\n"), D("VALUE z 0 0\r\n\r\nEND\r\n")}));
  EXPECT_EQ(b.run("GET a\r\n"), V{D("ERROR\r\n")});
  EXPECT_EQ(b.run("  get   a    z  \r\n"),
            (V{D("VALUE a 0 1\r\n3\r\n"), D("VALUE z 0 0\r\n\r\nEND\r\n")}));
  EXPECT_EQ(b.run("\r\n"), V{D("ERROR\r\n")});
  EXPECT_EQ(b.run("\n"), V{D("ERROR\r\n")});
  EXPECT_EQ(b.run("get a\n"), V{D("VALUE a 0 1\r\n3\r\nEND\r\n")});
  EXPECT_EQ(b.run(std::string("get a\0z\r\n", 9)), V{D("VALUE a 0 1\r\n3\r\nEND\r\n")});
  EXPECT_EQ(b.run("ge\rt a\r\n"), V{D("ERROR\r\n")});
}

TEST(Protocol, ExpiryRelativeAndAbsolute) {
  ServerBox b;
  const Nanos t0 = 1'700'000'000 * kSecond;
  EXPECT_EQ(b.run("set r 0 10 1\r\nx\r\n", true, 7, t0), V{D("STORED\r\n")});
  EXPECT_EQ(b.run("get r\r\n", true, 7, t0 + 9 * kSecond), V{D("VALUE r 0 1\r\nx\r\nEND\r\n")});
  EXPECT_EQ(b.run("get r\r\n", true, 7, t0 + 10 * kSecond), V{D("END\r\n")});
  EXPECT_EQ(b.run("set s 0 1700000005 1\r\nx\r\n", true, 7, t0), V{D("STORED\r\n")});
  EXPECT_EQ(b.run("get s\r\n", true, 7, t0 + 4 * kSecond), V{D("VALUE s 0 1\r\nx\r\nEND\r\n")});
  EXPECT_EQ(b.run("get s\r\n", true, 7, t0 + 5 * kSecond), V{D("END\r\n")});
  EXPECT_EQ(b.run("set p 0 1000000000 1\r\nx\r\nget p\r\n", true, 7, t0),
            (V{D("STORED\r\n"), D("END\r\n")}));           // an absolute time in the past
  EXPECT_EQ(b.server.cache().counters().get_expired, 3u);  // r, s and p
}

TEST(Protocol, CasAndCullingAsMemcached) {
  ServerBox b;
  EXPECT_EQ(
      b.run("version\r\nset a 0 0 1\r\n1\r\nget a " + std::string(251, 'k') + " a\r\nversion\r\n"),
      (V{D("CLIENT_ERROR bad command line format\r\n"), D("VERSION 1.6.18\r\n")}));
  EXPECT_EQ(b.run("get a\r\n"), V{D("VALUE a 0 1\r\n1\r\nEND\r\n")});  // stored all the same
  EXPECT_EQ(b.run("gets a\r\n"), V{D("VALUE a 0 1 1\r\n1\r\nEND\r\n")});
  EXPECT_EQ(b.run("cas a 0 0 1 99\r\nq\r\n"), V{D("EXISTS\r\n")});
  EXPECT_EQ(b.run("cas nope 0 0 1 3\r\nq\r\n"), V{D("NOT_FOUND\r\n")});
  EXPECT_EQ(b.run("cas a 0 0 1\r\nq\r\n"), (V{D("ERROR\r\n"), D("ERROR\r\n")}));
  EXPECT_EQ(b.run("cas a 0 0 1 abc\r\nq\r\n"),
            (V{D("CLIENT_ERROR bad command line format\r\n"), D("ERROR\r\n")}));
  EXPECT_EQ(b.run("gets a b a\r\n"),
            (V{D("VALUE a 0 1 1\r\n1\r\n"), D("VALUE a 0 1 1\r\n1\r\nEND\r\n")}));
  EXPECT_EQ(b.run("cas a 7 0 1 1\r\nq\r\ngets a\r\n"),
            (V{D("STORED\r\n"), D("VALUE a 7 1 2\r\nq\r\nEND\r\n")}));
  EXPECT_EQ(b.run("set a 0 0 1 noreply\r\n1\r\nget b b\r\n"), (V{kEmpty, D("END\r\n")}));
  EXPECT_EQ(b.run("bget a\r\n"), V{D("VALUE a 0 1\r\n1\r\nEND\r\n")});
  EXPECT_EQ(b.run("GET / HTTP/1.1\r\n"), V{});
  EXPECT_EQ(b.run("stats\r\n"), V{D("ERROR\r\n")});  // memcached answers; nfpark does not
}

TEST(Protocol, FlushWindowsAsMemcached) {
  ServerBox b;
  auto versions = [](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "version\r\n";
    return s;
  };
  auto expect = [](int n, bool empty) {
    V v(size_t(n), D("VERSION 1.6.18\r\n"));
    if (empty) v.push_back(kEmpty);
    v.push_back(D("END\r\n"));
    return v;
  };
  EXPECT_EQ(b.run("get b\r\nget b b\r\n"), (V{D("END\r\n"), kEmpty, D("END\r\n")}));
  EXPECT_EQ(b.run("set x 0 0 1\r\n1\r\nget b b\r\n"), (V{D("STORED\r\n"), D("END\r\n")}));
  EXPECT_EQ(b.run(versions(22) + "get b b\r\n"), expect(22, false));
  EXPECT_EQ(b.run(versions(20) + "get b b\r\n"), expect(20, false));
  EXPECT_EQ(b.run(versions(21) + "get b b\r\n"), expect(21, true));
  EXPECT_EQ(b.run("version\r\n" + std::string(3000, 'x')), V{});
  std::string keys = "version\r\nget ";
  for (int i = 0; i < 1500; ++i) keys += "k ";
  EXPECT_EQ(b.run(keys), V{D("VERSION 1.6.18\r\n")});
  EXPECT_EQ(b.run("version\r\nGET / HTTP/1.1\r\nversion\r\n"), V{});
  EXPECT_EQ(b.run("quit\r\n"), V{kEmpty});
  EXPECT_EQ(b.run("version\r\nquit\r\nversion\r\n"), V{D("VERSION 1.6.18\r\n")});
  EXPECT_EQ(b.run("quit\r\nversion\r\n"), V{kEmpty});
}

TEST(Protocol, LargeValuesSplitAsMemcached) {
  ServerBox b;
  for (bool zc : {false, true}) {  // copied or zero-copy: the same datagrams
    ServerConfig cfg = ServerBox::defaults();
    cfg.cache.pinned = {"big", "b2", "b3", "p2"};
    ServerBox s(cfg, zc ? 1 << 20 : 0);
    const std::string x(5000, 'x');
    EXPECT_EQ(s.run("set big 0 0 5000\r\n" + x + "\r\n", zc), V{D("STORED\r\n")});
    const std::string stream = "VALUE big 0 5000\r\n" + x + "\r\nEND\r\n";
    ASSERT_EQ(stream.size(), 5025u);
    V want;
    for (uint16_t i = 0; i < 4; ++i) want.push_back(D(stream.substr(i * 1392, 1392), i, 4));
    EXPECT_EQ(s.run("get big\r\n", zc), want);
    const std::string y1370(1370, 'y'), y1371(1371, 'y');
    s.run("set b2 0 0 1370\r\n" + y1370 + "\r\n", zc);
    const std::string b2 = "VALUE b2 0 1370\r\n" + y1370 + "\r\nEND\r\n";
    EXPECT_EQ(s.run("get b2\r\n", zc), (V{D(b2.substr(0, 1392), 0, 2), D("\r\n", 1, 2)}));
    s.run("set b3 0 0 1371\r\n" + y1371 + "\r\n", zc);
    const std::string b3 = "VALUE b3 0 1371\r\n" + y1371 + "\r\n";
    EXPECT_EQ(s.run("get b3 b3\r\n", zc),
              (V{D(b3), D((b3 + "END\r\n").substr(0, 1392), 0, 2), D("D\r\n", 1, 2)}));
    const std::string p2(1024, 'p');  // a power of two: the stable buffer holds the value only
    s.run("set p2 0 0 1024\r\n" + p2 + "\r\n", zc);
    EXPECT_EQ(s.run("get p2\r\n", zc), V{D("VALUE p2 0 1024\r\n" + p2 + "\r\nEND\r\n")});
    EXPECT_EQ(s.run("get p2 p2\r\n", zc), (V{D("VALUE p2 0 1024\r\n" + p2 + "\r\n"),
                                             D("VALUE p2 0 1024\r\n" + p2 + "\r\nEND\r\n")}));
    EXPECT_EQ(s.server.cache().counters().hot_hits, zc ? 7u : 0u);
    EXPECT_EQ(s.server.cache().hot().refs_in_flight(), 0u);
  }
}

TEST(Protocol, WhereMemcachedWouldWaitNfparkAnswersAtOnce) {
  ServerBox b;
  // memcached would read the missing data (and then the next datagram) as the value.
  EXPECT_EQ(b.run("set a 0 0 5\r\nab\r\n"), V{D("CLIENT_ERROR bad data chunk\r\n")});
  EXPECT_EQ(b.run("get a\r\n"), V{D("END\r\n")});  // nothing stuck: the next request is fresh
  // memcached would swallow the next 2000002 bytes of later datagrams.
  EXPECT_EQ(b.run("set a 0 0 1\r\n1\r\nset a 0 0 2000000\r\nabc\r\nget a\r\n"),
            (V{D("STORED\r\n"), D("SERVER_ERROR object too large for cache\r\n")}));
  EXPECT_EQ(b.run("get a\r\n"), V{D("END\r\n")});  // a failed SET unlinks the old value
  const ProtocolCounters& c = b.server.protocol().counters();
  EXPECT_EQ(c.client_errors, 1u);
  EXPECT_EQ(c.server_errors, 1u);
  EXPECT_EQ(c.ignored, 0u);  // each malformed command is counted once
}

TEST(Protocol, FrameHeadersAsMemcached) {
  ServerBox b;
  ByteSink sink(&b.server.cache());
  auto send = [&](std::vector<uint8_t> f) {
    b.server.datagram(f.data(), uint32_t(f.size()), 1, 0, true, sink);
  };
  send(frame(77, "version\r\n", 0, 2));  // multi-datagram: assembled, waiting for the rest
  send(frame(78, "version\r\n", 0, 0));  // no datagram count: dropped
  send({0, 1, 0});                       // too short
  send(frame(79, "", 0, 1));             // header only
  EXPECT_TRUE(sink.got.empty());
  send(frame(80, "version\r\n", 3, 1));  // sequence ignored when the count is 1
  std::vector<uint8_t> f = frame(81, "version\r\n");
  f[7] = 9;  // reserved byte ignored
  send(f);
  ASSERT_EQ(sink.got.size(), 2u);
  EXPECT_EQ(sink.got[0], (Datagram{80, 0, 1, "VERSION 1.6.18\r\n"}));
  EXPECT_EQ(sink.got[1], (Datagram{81, 0, 1, "VERSION 1.6.18\r\n"}));
}

}  // namespace
}  // namespace nfpark::kvs::testing

namespace nfpark::kvs::testing {
namespace {

TEST(Protocol, FirstGetKeyForPrefetching) {
  auto key = [](std::string_view body, uint16_t total = 1) {
    const std::vector<uint8_t> f = frame(1, body, 0, total);
    return std::string(first_get_key(f.data(), uint32_t(f.size())));
  };
  EXPECT_EQ(key("get abc d\r\n"), "abc");
  EXPECT_EQ(key("gets  k1\r\n"), "k1");
  EXPECT_EQ(key("get k"), "k");
  EXPECT_EQ(key("set k 0 0 1\r\nx\r\n"), "");
  EXPECT_EQ(key("get k\r\n", 2), "") << "multi-datagram requests are not peeked";
  EXPECT_EQ(key("get"), "");
}

}  // namespace
}  // namespace nfpark::kvs::testing
