// What ranks compare before a run (ranks/startup.hpp) and the limits that
// bound their waiting: the start-up timeout and the watchdog, with the
// deck's watchdog_s. The agreement itself runs under mpirun
// (tests/mpi/test_startup.py).
#include "deck/deck.hpp"
#include "experiment/experiment.hpp"
#include "engine/expand.hpp"
#include "ranks/comm.hpp"
#include "ranks/startup.hpp"
#include "ranks/watchdog.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace portalab {
namespace {

// Sets an environment variable for one test, and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (m_old)
      setenv(m_name, m_old->c_str(), 1);
    else
      unsetenv(m_name);
  }

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

std::vector<std::string> plan_of(const std::string& deck_text) {
  return entry_lines(expand(parse_deck(deck_text, "d.toml", catalog()), global_registry(), 2));
}

TEST(Startup, PlansOfTheSameRunAreTheSame) {
  const std::string deck = "spaces = [\"Serial\"]\n[vector_poly]\nsizes = [1000, 2000]\n";
  EXPECT_EQ(plan_of(deck), plan_of("# a comment\n" + deck));
  EXPECT_EQ(plan_difference(plan_of(deck), 0, plan_of(deck), 1), "");
}

TEST(Startup, TheFirstDifferingEntryIsNamedWithBothValues) {
  const auto mine = plan_of("spaces = [\"Serial\"]\n[vector_poly]\nsizes = [1000, 2000]\n");
  const auto theirs = plan_of("spaces = [\"Serial\"]\n[vector_poly]\nsizes = [1000, 3000]\n");
  const std::string d = plan_difference(mine, 0, theirs, 2);
  const auto first = mine.size() / 2;  // the entries of n=1000 come first and agree
  EXPECT_EQ(d.rfind("entry " + std::to_string(first + 1) + ": rank 2 'vector_poly", 0), 0u) << d;
  EXPECT_NE(d.find("n=3000"), std::string::npos) << d;
  EXPECT_NE(d.find(", rank 0 'vector_poly"), std::string::npos) << d;
  EXPECT_NE(d.find("n=2000"), std::string::npos) << d;
}

TEST(Startup, RepetitionsAndParametersAreInThePlan) {
  const std::string deck = "spaces = [\"Serial\"]\n[copy_overlap]\nsizes = [1000]\n";
  const auto d = plan_difference(plan_of(deck), 0, plan_of(deck + "reps = 7\n"), 1);
  EXPECT_NE(d.find("reps=7 "), std::string::npos) << d;
  EXPECT_NE(d.find("chunks="), std::string::npos) << d;
  const auto p = plan_difference(plan_of(deck), 0, plan_of(deck + "chunks = 2\n"), 1);
  EXPECT_NE(p.find("chunks=2"), std::string::npos) << p;
}

TEST(Startup, AKeyLineIsSaidByItsKeyAndAMissingLineAsNothing) {
  EXPECT_EQ(plan_difference({"spaces: Serial", "entry 1: a"}, 0, {"spaces: Serial,OpenMP"}, 1),
            "spaces: rank 1 'Serial,OpenMP', rank 0 'Serial'");
  EXPECT_EQ(plan_difference({"command: run", "entry 1: a"}, 0, {"command: run"}, 1),
            "entry 1: rank 1 nothing, rank 0 'a'");
  EXPECT_EQ(plan_difference({"command: run"}, 0, {"other"}, 1),
            "line 1: rank 1 'other', rank 0 'command: run'");
}

TEST(Startup, OneRankAgreesWithItselfAndKeepsItsError) {
  Comm alone;
  EXPECT_EQ(agree_at_startup(alone, {0, "", "", {"command: run"}}).code, 0);
  const StartupVerdict v = agree_at_startup(alone, {2, "d.toml:3:1: bad", "", {}});
  EXPECT_EQ(v.code, 2);
  EXPECT_EQ(v.message, "d.toml:3:1: bad");
}

TEST(Startup, TimeoutFromTheEnvironmentOrTheLaunchersNodes) {
  {
    ScopedEnv t("PORTALAB_STARTUP_TIMEOUT_S", "12.5");
    EXPECT_EQ(startup_timeout_seconds(), 12.5);
  }
  {
    ScopedEnv t("PORTALAB_STARTUP_TIMEOUT_S", "0");
    EXPECT_EQ(startup_timeout_seconds(), 0);
  }
  for (const char* bad : {"soon", "-1", "5s", "nan"}) {
    ScopedEnv t("PORTALAB_STARTUP_TIMEOUT_S", bad);
    EXPECT_THROW(startup_timeout_seconds(), InputError) << bad;
  }
  ScopedEnv t("PORTALAB_STARTUP_TIMEOUT_S", nullptr);
  ScopedEnv size("OMPI_COMM_WORLD_SIZE", "4"), pmi("PMI_SIZE", nullptr),
      nodes("SLURM_STEP_NUM_NODES", nullptr);
  {
    ScopedEnv local("OMPI_COMM_WORLD_LOCAL_SIZE", "4");
    EXPECT_EQ(startup_timeout_seconds(), 5);  // every rank on this node
  }
  {
    ScopedEnv local("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
    EXPECT_EQ(startup_timeout_seconds(), 30);  // two nodes
  }
  ScopedEnv no_size("OMPI_COMM_WORLD_SIZE", nullptr);
  {
    ScopedEnv one("SLURM_STEP_NUM_NODES", "1");
    EXPECT_EQ(startup_timeout_seconds(), 5);
  }
  EXPECT_EQ(startup_timeout_seconds(), 30);  // nothing says: as across nodes
}

TEST(Startup, WatchdogFromTheEnvironmentElseTheDeckElseTheDefault) {
  const Deck raised = parse_deck("watchdog_s = 3600\n[vector_poly]\n", "d.toml", catalog());
  ASSERT_TRUE(raised.watchdog_s);
  EXPECT_EQ(*raised.watchdog_s, 3600);
  EXPECT_FALSE(parse_deck("[vector_poly]\n", "d.toml", catalog()).watchdog_s);
  {
    ScopedEnv w("PORTALAB_WATCHDOG_S", nullptr);
    EXPECT_EQ(watchdog_seconds(raised.watchdog_s), 3600);
    EXPECT_EQ(watchdog_seconds(), default_watchdog_s);
  }
  ScopedEnv w("PORTALAB_WATCHDOG_S", "20");
  EXPECT_EQ(watchdog_seconds(raised.watchdog_s), 20);
  try {
    parse_deck("watchdog_s = \"long\"\n[vector_poly]\n", "d.toml", catalog());
    FAIL() << "a watchdog_s that is no integer was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("d.toml:1:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("watchdog_s"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace portalab
