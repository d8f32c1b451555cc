#include "ranks/startup.hpp"

#include "deck/deck.hpp"
#include "support/console.hpp"
#include "support/environment.hpp"
#include "support/hash.hpp"
#include "ranks/comm.hpp"
#include "ranks/watchdog.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>

namespace portalab {
namespace {

using Clock = std::chrono::steady_clock;

// Tags of the agreement's messages on the world (collectives and the
// experiments' communicators never match them).
constexpr int word_tag = 4801;  // each rank to rank 0: its state
constexpr int verdict_tag =
    4802;                       // rank 0 to each rank: go, the reason not to, or "send your plan"
constexpr int plan_tag = 4803;  // the first rank that differs to rank 0: its plan
const std::string send_plan = "?";

// Rank 0's word of a rank that cannot go on does not wait: a rank sending
// its plan, or rank 0 its verdict, is known to be there.
constexpr std::chrono::seconds reply_time{10};
// The others wait this much past the deadline for rank 0's verdict, so that
// rank 0, which knows which ranks are missing, is the one that says it.
constexpr std::chrono::seconds grace{5};

struct Word {
  int code = 0;
  std::uint64_t hash = 0;
  std::string given, error;
};

std::uint64_t plan_hash(const std::vector<std::string>& plan) {
  std::string all;
  for (const auto& line : plan) all += line + '\n';
  return fnv1a64(all);
}

std::string to_text(const Word& w) {
  return fmt::format("{} {:016x} {}\n", w.code, w.hash, w.given.size()) + w.given + w.error;
}

Word word_of(const std::string& text) {
  Word w;
  std::istringstream in(text);
  std::size_t given_size = 0;
  in >> w.code >> std::hex >> w.hash >> std::dec >> given_size;
  const std::size_t start = text.find('\n') + 1;
  w.given = text.substr(start, given_size);
  w.error = text.substr(start + given_size);
  return w;
}

std::string rank_list(const std::vector<int>& ranks) {
  return fmt::format("{}{}", ranks.size() == 1 ? "rank " : "ranks ", fmt::join(ranks, ", "));
}

// Ends every rank: a rank is missing, so no verdict can be shared.
[[noreturn]] void give_up(const Comm& world, const std::string& why) {
  print_to(stderr,
           "portalab: rank {} of {}: {}; ending every rank. PORTALAB_STARTUP_TIMEOUT_S "
           "sets the limit\n",
           world.rank(), world.size(), why);
  std::fflush(stderr);
  abort_world(3);  // the driver's exit code for the unexpected
}

// How long a rank has waited, in words.
std::string waited(double limit) { return fmt::format("within {:g} s of starting", limit); }

std::string verdict_text(const StartupVerdict& v) {
  return fmt::format("{} {}\n{}", v.code, v.alike ? 1 : 0, v.message);
}

StartupVerdict verdict_of(const std::string& text) {
  StartupVerdict v;
  int alike = 0;
  std::istringstream(text) >> v.code >> alike;
  v.alike = alike != 0;
  v.message = text.substr(text.find('\n') + 1);
  return v;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Rank 0: every rank's word in, the verdict out (asking the first rank that
// differs for its plan).
StartupVerdict judge(const Comm& world, const std::vector<Word>& words,
                     const std::vector<std::string>& plan, Clock::time_point later) {
  const int n = world.size();
  std::vector<int> failed, differ;
  for (int r = 0; r < n; ++r) {
    if (words[r].code != 0)
      failed.push_back(r);
    else if (words[r].hash != words[0].hash)
      differ.push_back(r);
  }
  StartupVerdict v;
  if (!failed.empty()) {
    const Word& first = words[failed.front()];
    v.code = first.code;
    v.alike = static_cast<int>(failed.size()) == n &&
              std::all_of(words.begin(), words.end(), [&](const Word& w) {
                return w.code == first.code && w.error == first.error;
              });
    if (v.alike) {
      v.message = first.error;
      return v;
    }
    const std::vector<int> others(failed.begin() + 1, failed.end());
    v.message = fmt::format(
        "rank {} of {} cannot start: {}{}; nothing ran", failed.front(), n, first.error,
        others.empty() ? std::string() : fmt::format(" ({} cannot either)", rank_list(others)));
    return v;
  }
  if (differ.empty()) return v;
  // A rank whose hash differs is asked for its plan; the words it sent say
  // it is there, and waiting for rank 0.
  const int r = differ.front();
  if (!world.send_by(send_plan, r, verdict_tag, later))
    give_up(world, fmt::format("rank {} did not take rank 0's request for its plan", r));
  int from = r;
  std::string theirs;
  if (!world.receive_by(r, plan_tag, later, from, theirs))
    give_up(world, fmt::format("rank {} did not send its plan", r));
  const std::vector<int> others(differ.begin() + 1, differ.end());
  v.code = 2;  // bad input: the job was given different things to run
  v.message = fmt::format(
      "ranks disagree on what to run: rank {} ({}) and rank 0 ({}) differ first at {}{}; nothing "
      "ran: give every rank the same deck, options and portalab",
      r, words[r].given, words[0].given, plan_difference(plan, 0, lines_of(theirs), r),
      others.empty() ? std::string()
                     : fmt::format(" ({} differ from rank 0 too)", rank_list(others)));
  return v;
}

}  // namespace

Clock::time_point startup_began() {
  static const Clock::time_point began = Clock::now();
  return began;
}

double default_startup_timeout() {
  auto number = [](std::initializer_list<const char*> names) -> long {
    for (const char* n : names)
      if (const char* v = std::getenv(n)) return whole_number(v).value_or(-1);
    return -1;
  };
  // Open MPI's mpirun, then MPICH's Hydra, then srun's step.
  bool one_node = false;
  if (const long size = number({"OMPI_COMM_WORLD_SIZE"}); size > 0)
    one_node = number({"OMPI_COMM_WORLD_LOCAL_SIZE"}) == size;
  else if (const long size = number({"PMI_SIZE"}); size > 0 && number({"MPI_LOCALNRANKS"}) > 0)
    one_node = number({"MPI_LOCALNRANKS"}) == size;
  else
    one_node = number({"SLURM_STEP_NUM_NODES"}) == 1;
  return one_node ? 5 : 30;
}

double startup_timeout_seconds() {
  return seconds_from_environment("PORTALAB_STARTUP_TIMEOUT_S", default_startup_timeout(),
                                  "waits for every rank however long it takes");
}

std::string plan_difference(const std::vector<std::string>& mine, int my_rank,
                            const std::vector<std::string>& theirs, int their_rank) {
  std::size_t i = 0;
  while (i < mine.size() && i < theirs.size() && mine[i] == theirs[i]) ++i;
  if (i == mine.size() && i == theirs.size()) return {};
  // "key: value" lines: the key once, each rank's value under it.
  auto key_of = [&](const std::vector<std::string>& lines) -> std::string {
    if (i >= lines.size()) return {};
    const auto colon = lines[i].find(": ");
    return colon == std::string::npos ? std::string() : lines[i].substr(0, colon);
  };
  // The key both lines have (or the one line there is); none: whole lines.
  const std::string my_key = key_of(mine), their_key = key_of(theirs);
  const std::string key = i >= mine.size()      ? their_key
                          : i >= theirs.size()  ? my_key
                          : my_key == their_key ? my_key
                                                : std::string();
  auto value = [&](const std::vector<std::string>& lines) -> std::string {
    if (i >= lines.size()) return "nothing";
    return fmt::format("'{}'", key.empty() ? lines[i] : lines[i].substr(key.size() + 2));
  };
  return fmt::format("{}: rank {} {}, rank {} {}",
                     key.empty() ? fmt::format("line {}", i + 1) : key, their_rank, value(theirs),
                     my_rank, value(mine));
}

StartupVerdict agree_at_startup(const Comm& world, const StartupState& mine) {
  const int n = world.size();
  if (n == 1) {
    StartupVerdict v{mine.code, mine.error, true};
    return v;
  }
  double limit = default_startup_timeout();
  try {
    limit = startup_timeout_seconds();
  } catch (const InputError&) {  // the driver makes it this rank's error
  }
  const bool bounded = limit > 0;
  const auto after = [&](Clock::time_point from, Clock::duration d) {
    return bounded ? from + d : Clock::time_point::max();
  };
  const auto deadline = after(startup_began(),
                              std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(bounded ? limit : 0)));
  const Word me{mine.code, plan_hash(mine.plan), mine.given, mine.error};
  // For the tests: PORTALAB_FAULT=startup_stall:R holds rank R here, as a
  // rank stuck before the agreement (a hung file system) would be.
  if (const char* fault = std::getenv("PORTALAB_FAULT");
      fault && std::string_view(fault) == fmt::format("startup_stall:{}", world.rank()))
    std::this_thread::sleep_for(std::chrono::hours(1));

  if (world.rank() == 0) {
    std::vector<Word> words(static_cast<std::size_t>(n));
    std::vector<bool> came(static_cast<std::size_t>(n), false);
    words[0] = me;
    came[0] = true;
    for (int arrived = 1; arrived < n;) {
      int from = 0;
      std::string text;
      if (!world.receive_by(Comm::any_rank, word_tag, deadline, from, text)) {
        std::vector<int> missing;
        for (int r = 0; r < n; ++r)
          if (!came[r]) missing.push_back(r);
        give_up(world, fmt::format("{} of {} did not reach the start-up agreement {} (exited, "
                                   "or hangs before it: see its output)",
                                   rank_list(missing), n, waited(limit)));
      }
      if (!came[from]) ++arrived;
      came[from] = true;
      words[from] = word_of(text);
    }
    const StartupVerdict v = judge(world, words, mine.plan, after(Clock::now(), reply_time));
    for (int r = 1; r < n; ++r)
      if (!world.send_by(verdict_text(v), r, verdict_tag, after(Clock::now(), reply_time)))
        give_up(world, fmt::format("rank {} did not take the start-up verdict", r));
    return v;
  }

  const auto wait_for_zero = after(deadline, grace);
  if (!world.send_by(to_text(me), 0, word_tag, wait_for_zero))
    give_up(world, fmt::format("rank 0 did not take this rank's start-up word {}", waited(limit)));
  for (auto until = wait_for_zero;;) {
    int from = 0;
    std::string text;
    if (!world.receive_by(0, verdict_tag, until, from, text))
      give_up(world, fmt::format("no start-up verdict from rank 0 {}: rank 0, or another rank, "
                                 "did not reach the start-up agreement (see their output)",
                                 waited(limit)));
    if (text != send_plan) return verdict_of(text);
    std::string plan;
    for (const auto& line : mine.plan) plan += line + '\n';
    until = after(Clock::now(), reply_time);
    if (!world.send_by(plan, 0, plan_tag, until))
      give_up(world, "rank 0 did not take this rank's plan");
  }
}

}  // namespace portalab
