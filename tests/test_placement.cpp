// Each rank's share of its node's CPUs and its threads' places in it
// (ranks/placement.hpp), on fakes: CPU lists, cores, a sysfs tree. The
// launcher's side runs in tests/mpi/test_placement.py.
#include "ranks/placement.hpp"

#include "ranks/comm.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace portalab {
namespace {

// Two hardware threads a core: CPUs c and c + half share a core.
std::function<int(int)> smt(int cpus) {
  return [cpus](int c) { return c % (cpus / 2); };
}
int no_smt(int c) { return c; }

CpuSet range(int a, int b) {
  CpuSet s;
  for (int c = a; c <= b; ++c) s.push_back(c);
  return s;
}

TEST(Placement, ParsesCpuLists) {
  EXPECT_EQ(parse_cpu_list("0-3,8"), (CpuSet{0, 1, 2, 3, 8}));
  EXPECT_EQ(parse_cpu_list("5\n"), (CpuSet{5}));
  EXPECT_EQ(parse_cpu_list("2,0-1"), (CpuSet{0, 1, 2}));
  EXPECT_TRUE(parse_cpu_list("").empty());
  EXPECT_TRUE(parse_cpu_list("3-1").empty());
  EXPECT_TRUE(parse_cpu_list("a").empty());
}

TEST(Placement, RanksGivenTheWholeNodeSplitItByCores) {
  // 4 ranks, unbound (mpirun --bind-to none), 16 cores of 2 threads each.
  std::vector<RankCpus> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back({r, range(0, 31), {}, false});
  const NodeShares s = node_shares(ranks, smt(32));
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_TRUE(s.shared.empty());
  EXPECT_EQ(s.shares[0], (CpuSet{0, 1, 2, 3, 16, 17, 18, 19}));
  EXPECT_EQ(s.shares[3], (CpuSet{12, 13, 14, 15, 28, 29, 30, 31}));
}

TEST(Placement, TheOverlappingPlacementOfTheIssueIsSplit) {
  // mpirun -np 2 --bind-to none -x OMP_PROC_BIND=spread -x OMP_PLACES=threads
  // on the 2-core CI host: both ranks given CPUs 0-1, both binding.
  const NodeShares s = node_shares({{0, {0, 1}, {}, true}, {1, {0, 1}, {}, true}}, no_smt);
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.shares[0], CpuSet{0});
  EXPECT_EQ(s.shares[1], CpuSet{1});
}

TEST(Placement, RanksTheLauncherBoundKeepTheirCpus) {
  const NodeShares s = node_shares({{0, {0}, {}, true}, {1, {1}, {}, true}}, no_smt);
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.shares[0], CpuSet{0});
  EXPECT_EQ(s.shares[1], CpuSet{1});
}

TEST(Placement, CpusOfTheLauncherThatOverlapAreAnError) {
  const NodeShares s = node_shares({{0, {0, 1}, {}, false}, {1, {1, 2}, {}, false}}, no_smt);
  EXPECT_NE(s.error.find("rank 0 may run on CPUs 0-1 and rank 1 on CPUs 1-2"), std::string::npos)
      << s.error;
  EXPECT_NE(s.error.find("--bind-to"), std::string::npos) << s.error;
  EXPECT_NE(s.error.find("--cpu-bind"), std::string::npos) << s.error;
}

TEST(Placement, MoreRanksThanCpusShareUnlessTheUserBinds) {
  std::vector<RankCpus> ranks{{0, {0, 1}, {}, false},
                              {1, {0, 1}, {}, false},
                              {2, {0, 1}, {}, false}};
  NodeShares s = node_shares(ranks, no_smt);
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_NE(s.shared.find("ranks 0, 1, 2 share CPUs 0-1"), std::string::npos) << s.shared;
  EXPECT_EQ(s.shares[2], CpuSet{0});
  ranks[1].binds = true;
  s = node_shares(ranks, no_smt);
  EXPECT_NE(s.error.find("ranks 0, 1, 2 may run on CPUs 0-1 only"), std::string::npos) << s.error;
  EXPECT_NE(s.error.find("unset OMP_PROC_BIND and OMP_PLACES"), std::string::npos) << s.error;
}

TEST(Placement, EachRankOnTheNumaNodeOfItsGpu) {
  // Two sockets (0-7, 8-15); GPUs 0 and 1 near socket 1, 2 and 3 near socket 0.
  std::vector<RankCpus> ranks;
  const CpuSet s0 = range(0, 7), s1 = range(8, 15);
  for (int r = 0; r < 4; ++r) ranks.push_back({r, range(0, 15), r < 2 ? s1 : s0, false});
  NodeShares s = node_shares(ranks, no_smt);
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.shares[0], range(8, 11));
  EXPECT_EQ(s.shares[1], range(12, 15));
  EXPECT_EQ(s.shares[2], range(0, 3));
  EXPECT_EQ(s.shares[3], range(4, 7));
  // A rank whose GPU does not say: the node split in order.
  ranks[3].gpu_cpus.clear();
  s = node_shares(ranks, no_smt);
  EXPECT_EQ(s.shares[0], range(0, 3));
  EXPECT_EQ(s.shares[3], range(12, 15));
  // A NUMA node with fewer cores than its ranks: split in order too.
  for (auto& r : ranks) r.gpu_cpus = {0};
  s = node_shares(ranks, no_smt);
  EXPECT_EQ(s.shares[1], range(4, 7));
}

TEST(Placement, ThreadsByThePolicy) {
  const CpuSet share = range(0, 7);
  auto places = [&](const char* bind, const char* kind, int threads) {
    std::vector<std::string> out;
    for (const auto& p : thread_places(share, threads, bind, kind, smt(8)))
      out.push_back(cpu_list_text(p));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(places("spread", "threads", 4), (V{"0", "2", "4", "6"}));
  EXPECT_EQ(places("close", "threads", 3), (V{"0", "1", "2"}));
  EXPECT_EQ(places("spread", "cores", 2), (V{"0,4", "2,6"}));
  EXPECT_EQ(places("master", "threads", 2), (V{"0", "0"}));
  EXPECT_EQ(places("false", "threads", 2), (V{"0-7", "0-7"}));
  EXPECT_EQ(places("spread,close", "sockets", 2), (V{"0-7", "0-7"}));
  EXPECT_EQ(places("close", "threads", 16)[15], "7");
}

TEST(Placement, ReadsTheGpusCpusFromSysfs) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "portalab_fake_sys";
  fs::remove_all(root);
  const fs::path dev = root / "bus/pci/devices/0000:3b:00.0";
  fs::create_directories(dev);
  fs::create_directories(root / "devices/system/node/node1");
  fs::create_directories(root / "devices/system/cpu/cpu5/topology");
  std::ofstream(dev / "numa_node") << "1\n";
  std::ofstream(root / "devices/system/node/node1/cpulist") << "8-15\n";
  std::ofstream(root / "devices/system/cpu/cpu5/topology/thread_siblings_list") << "1,5\n";
  // CUDA writes the bus id with an 8-digit domain, in capitals.
  EXPECT_EQ(pci_numa_node("00000000:3B:00.0", root.string()), 1);
  EXPECT_EQ(pci_local_cpus("00000000:3B:00.0", root.string()), range(8, 15));
  std::ofstream(dev / "local_cpulist") << "8-11\n";
  EXPECT_EQ(pci_local_cpus("0000:3b:00.0", root.string()), range(8, 11));
  EXPECT_EQ(pci_numa_node("0000:af:00.0", root.string()), -1);
  EXPECT_TRUE(pci_local_cpus("0000:af:00.0", root.string()).empty());
  EXPECT_EQ(cpu_core(5, root.string()), 1);
  EXPECT_EQ(cpu_core(6, root.string()), 6);
  std::ofstream(dev / "numa_node") << "-1\n";
  fs::remove_all(root);
}

}  // namespace
}  // namespace portalab
