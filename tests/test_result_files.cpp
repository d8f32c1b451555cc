// ResultFiles: the journal holds every update, the full files parse at every
// moment and hold a prefix of it, finish() leaves the two files alone, and
// a folder that cannot be written, or that another run writes into, is
// refused with the system's reason.
#include "results/result_files.hpp"

#include "results/provenance.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <span>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using portalab::OutputError;
using portalab::Result;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The rows the journal records, each update replacing rows from its "first".
std::vector<nlohmann::json> journal_rows(const fs::path& dir) {
  std::ifstream in(dir / "results.jsonl");
  std::string line;
  EXPECT_TRUE(std::getline(in, line));
  EXPECT_TRUE(nlohmann::json::parse(line).contains("provenance"));
  std::vector<nlohmann::json> rows;
  while (std::getline(in, line)) {
    const auto update = nlohmann::json::parse(line);  // every line whole
    rows.resize(update["first"].get<std::size_t>());
    for (const auto& r : update["rows"]) rows.push_back(r);
  }
  return rows;
}

Result row(std::size_t n) {
  Result r;
  r.experiment = "vector_poly";
  r.variant = "fused";
  r.space = "Serial";
  r.dtype = "float64";
  r.n = n;
  r.status = portalab::Status::pass;
  r.reps = 3;  // a measured row ran its repetitions (the schema holds it to one at least)
  r.total.median = r.kernel.median = 0.5 + n;
  return r;
}

// A run's provenance and summary as portalab writes them: the files these
// tests leave are validated against schema/ (results.schema, tests/CMakeLists.txt).
nlohmann::json provenance() { return portalab::collect_provenance(nullptr, {"test"}); }
nlohmann::json summary(std::size_t entries) { return {{"entries", entries}}; }

std::vector<fs::path> temporaries(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".tmp") || name.rfind(".portalab-probe", 0) == 0) found.push_back(e.path());
  }
  return found;
}

class ResultFileWriter : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::path(PORTALAB_TEST_FILES_DIR) /
          ("portalab_result_files_" +
           std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
  }
  // The folder is left for results.schema to validate; SetUp empties it.
  fs::path dir;
};

TEST_F(ResultFileWriter, JournalHoldsEveryEntryAndFullFilesAPrefixOfIt) {
  std::vector<Result> rows;
  portalab::ResultFiles files(dir.string(), provenance());
  // Before any entry: files of no entry, so none of an earlier run is read.
  EXPECT_EQ(nlohmann::json::parse(read(dir / "results.json"))["results"].size(), 0u);
  for (std::size_t i = 0; i < 100; ++i) {
    rows.push_back(row(i));
    files.append(std::span(rows).last(1), {{"entries", rows.size()}});
    const auto journal = journal_rows(dir);
    ASSERT_EQ(journal.size(), rows.size());
    EXPECT_EQ(journal.back()["n"], i);
    const auto doc = nlohmann::json::parse(read(dir / "results.json"));
    ASSERT_LE(doc["results"].size(), journal.size());
    ASSERT_GE(2 * doc["results"].size(), journal.size());  // rewritten as the rows double
    for (std::size_t k = 0; k < doc["results"].size(); ++k)
      EXPECT_EQ(doc["results"][k], journal[k]);
    EXPECT_EQ(doc["provenance"]["command"], nlohmann::json::array({"test"}));
  }
  files.finish({{"entries", rows.size()}});
  EXPECT_FALSE(fs::exists(dir / "results.jsonl"));
  const auto doc = nlohmann::json::parse(read(dir / "results.json"));
  ASSERT_EQ(doc["results"].size(), rows.size());
  EXPECT_EQ(doc["summary"]["entries"], rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) EXPECT_EQ(doc["results"][k]["n"], k);
  const std::string csv = read(dir / "results.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<long>(rows.size() + 1));
  EXPECT_TRUE(temporaries(dir).empty());
}

TEST_F(ResultFileWriter, EveryJournalLineCarriesOnFromTheRowsBeforeIt) {
  std::vector<Result> rows{row(1), row(2), row(3), row(4)};
  portalab::ResultFiles files(dir.string(), provenance());
  files.append(std::span(rows).first(1), summary(1));
  files.append({}, summary(1));
  files.append(std::span(rows).subspan(1), summary(rows.size()));
  std::ifstream in(dir / "results.jsonl");
  std::string line;
  std::getline(in, line);  // the provenance
  std::vector<std::size_t> firsts;
  while (std::getline(in, line)) firsts.push_back(nlohmann::json::parse(line)["first"]);
  EXPECT_EQ(firsts, (std::vector<std::size_t>{0, 1, 1}));
  files.finish(summary(rows.size()));
  const auto doc = nlohmann::json::parse(read(dir / "results.json"));
  ASSERT_EQ(doc["results"].size(), rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) EXPECT_EQ(doc["results"][k]["n"], k + 1);
}

TEST_F(ResultFileWriter, TextThatIsNotUtf8IsWrittenReplaced) {
  std::vector<Result> rows{row(1)};
  rows[0].note = "library said \xff\xfe";
  auto from_a_path = provenance();
  from_a_path["deck"] = {{"path", "\xc3("}, {"hash", ""}};
  portalab::ResultFiles files(dir.string(), from_a_path);
  files.append(rows, summary(rows.size()));
  files.finish(summary(rows.size()));
  const auto doc = nlohmann::json::parse(read(dir / "results.json"));
  EXPECT_EQ(doc["results"][0]["note"].get<std::string>().rfind("library said ", 0), 0u);
  EXPECT_NE(read(dir / "results.csv").find("library said \xef\xbf\xbd"),
            std::string::npos);  // U+FFFD
}

TEST_F(ResultFileWriter, ASecondRunIntoTheFolderIsRefusedWhileTheFirstWrites) {
  std::vector<Result> rows{row(1)};
  {
    portalab::ResultFiles first(dir.string(), provenance());
    try {
      portalab::ResultFiles second(dir.string(), provenance());
      FAIL() << "a second writer was let in";
    } catch (const OutputError& e) {
      EXPECT_NE(std::string(e.what()).find("another portalab run"), std::string::npos) << e.what();
    }
    EXPECT_THROW(portalab::check_output_dir(dir.string()), OutputError);
    first.append(rows, summary(rows.size()));  // unharmed
    first.finish(summary(rows.size()));
  }
  portalab::ResultFiles later(dir.string(), provenance());  // once it is done
  EXPECT_TRUE(temporaries(dir).empty());
}

TEST_F(ResultFileWriter, AFolderThatCannotBeWrittenSaysWhy) {
  fs::create_directories(dir);
  std::ofstream(dir / "a_file") << "x";
  const std::string under_a_file = (dir / "a_file" / "out").string();
  try {
    portalab::ResultFiles files(under_a_file, provenance());
    FAIL() << "no error";
  } catch (const OutputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(under_a_file), std::string::npos) << m;
    EXPECT_NE(m.find(std::strerror(ENOTDIR)), std::string::npos) << m;
  }
  try {
    portalab::write_file_atomically((dir / "missing" / "cal.json").string(), "{}");
    FAIL() << "no error";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOENT)), std::string::npos) << e.what();
  }
  EXPECT_THROW(portalab::check_output_file(dir.string()), OutputError);  // a folder, not a file
  EXPECT_TRUE(temporaries(dir).empty());
}

TEST_F(ResultFileWriter, ConcurrentAtomicWritesUseNamesOfTheirOwn) {
  // Two writers of one file (calibrate --out twice): each rename is whole.
  fs::create_directories(dir);
  const std::string path = (dir / "cal.json").string();
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i)
        portalab::write_file_atomically(path, std::string(1000 + t, 'a' + t));
    });
  for (auto& w : writers) w.join();
  const std::string text = read(path);
  ASSERT_GE(text.size(), 1000u);
  EXPECT_EQ(text, std::string(text.size(), text[0]));  // one writer's, not a mix
  EXPECT_TRUE(temporaries(dir).empty());
}

// Hostile places, in a folder of their own (results.schema validates the
// folders above, and would follow the links planted here).
class HostileFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("portalab_hostile_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root);
    victim = root / "victim.txt";
    std::ofstream(victim) << "another user's file\n";
  }
  void TearDown() override { fs::remove_all(root); }
  std::string message_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const OutputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no OutputError";
    return {};
  }
  fs::path root, victim;
};

TEST_F(HostileFolder, AnythingButARegularFileAtAResultFileIsRefusedAndNotFollowed) {
  const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> kinds{
      {"is a symbolic link (to '" + victim.string() + "')",
       [&](const fs::path& p) { fs::create_symlink(victim, p); }},
      {"is a symbolic link", [&](const fs::path& p) { fs::create_symlink(root / "gone", p); }},
      {"is a named pipe (FIFO)",
       [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); }},
      {"is a folder", [](const fs::path& p) { fs::create_directory(p); }}};
  for (const char* name : {"results.jsonl", "results.json", "results.csv"})
    for (const auto& [said, make] : kinds) {
      SCOPED_TRACE(std::string(name) + " " + said);
      const fs::path out = root / "out";
      fs::remove_all(out);
      fs::create_directories(out);
      make(out / name);
      for (const auto& m :
           {message_of([&] { portalab::check_output_dir(out.string()); }),
            message_of([&] { portalab::ResultFiles f(out.string(), provenance()); })}) {
        EXPECT_NE(m.find((out / name).string() + " " + said), std::string::npos) << m;
        EXPECT_NE(m.find("remove it or choose another path"), std::string::npos) << m;
      }
      EXPECT_EQ(read(victim), "another user's file\n");
      EXPECT_FALSE(fs::exists(root / "gone"));
      for (const char* other : {"results.jsonl", "results.json", "results.csv"})
        if (std::string(other) != name) {
          EXPECT_FALSE(fs::exists(out / other)) << other;
        }
    }
}

TEST_F(HostileFolder, AFileWrittenAloneIsNeverWrittenThroughALinkOrIntoAPipe) {
  const fs::path cal = root / "cal.json";
  fs::create_symlink(victim, cal);
  for (const auto& m : {message_of([&] { portalab::check_output_file(cal.string()); }),
                        message_of([&] { portalab::write_file_atomically(cal.string(), "{}"); })})
    EXPECT_NE(m.find(cal.string() + " is a symbolic link"), std::string::npos) << m;
  EXPECT_EQ(read(victim), "another user's file\n");
  fs::remove(cal);
  ASSERT_EQ(::mkfifo(cal.c_str(), 0644), 0);
  EXPECT_NE(message_of([&] {
              portalab::write_file_atomically(cal.string(), "{}");
            }).find("is a named pipe (FIFO)"),
            std::string::npos);
  EXPECT_TRUE(temporaries(root).empty());
}

TEST_F(HostileFolder, AnEarlierRunsFilesAreMovedAsideNeverReplaced) {
  const fs::path out = root / "out";
  std::vector<Result> rows{row(1), row(2)};
  {
    portalab::ResultFiles first(out.string(), provenance());
    EXPECT_EQ(first.moved_aside(), "");
    first.append(rows, summary(rows.size()));
    first.finish(summary(rows.size()));
  }
  const std::string finished = read(out / "results.json");
  {
    // A second run, killed: its journal stays.
    portalab::ResultFiles second(out.string(), provenance());
    EXPECT_NE(second.moved_aside().find("results.json, results.csv) moved to " +
                                        (out / "previous-").string()),
              std::string::npos)
        << second.moved_aside();
    second.append({rows.data(), 1}, summary(1));
  }
  const std::string journal = read(out / "results.jsonl");
  portalab::ResultFiles third(out.string(), provenance());
  EXPECT_NE(third.moved_aside().find("its journal says it did not finish"), std::string::npos)
      << third.moved_aside();
  std::vector<fs::path> aside;
  for (const auto& e : fs::directory_iterator(out))
    if (e.path().filename().string().rfind("previous-", 0) == 0) aside.push_back(e.path());
  std::sort(aside.begin(), aside.end());
  ASSERT_EQ(aside.size(), 2u);  // in the order they ran (-2 after a name of the same second)
  EXPECT_EQ(read(aside[0] / "results.json"), finished);
  EXPECT_EQ(read(aside[1] / "results.jsonl"), journal);
  EXPECT_EQ(journal_rows(aside[1]).size(), 1u);
  EXPECT_TRUE(temporaries(out).empty());
}

TEST_F(HostileFolder, AFolderSwappedForALinkMidRunIsNotFollowed) {
  const fs::path out = root / "out", elsewhere = root / "elsewhere", moved = root / "moved";
  fs::create_directories(elsewhere);
  std::vector<Result> rows{row(1)};
  portalab::ResultFiles files(out.string(), provenance());
  fs::rename(out, moved);
  fs::create_directory_symlink(elsewhere, out);
  files.append(rows, summary(1));
  files.finish(summary(1));
  EXPECT_TRUE(fs::is_empty(elsewhere));
  EXPECT_EQ(nlohmann::json::parse(read(moved / "results.json"))["results"].size(), 1u);
}

}  // namespace
