// `cudalings grade` as an instructor runs it, on any machine: sample submissions graded (on the
// CPU emulator where there is no GPU), result files and exit codes, secret seeds and their
// replay, shards and their merge, several workers, the Gradescope file, new secrets.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "grading_support.h"

using Catch::Matchers::ContainsSubstring;
using namespace grading_test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kSecret = "00112233445566778899aabbccddeeff";

std::vector<std::string> grade_args(std::vector<std::string> args) {
    args.insert(args.begin(), "grade");
    for (const auto& a : sandbox_or_not()) args.push_back(a);
    return args;
}

// Every result in a folder's summary, by its file name, without the parts that change from run
// to run (times, where the work happened).
std::map<std::string, json> comparable_results(const std::string& out) {
    std::map<std::string, json> results;
    for (const auto& line : read_json(out + "/summary.json")["results"]) {
        json r = read_json(out + "/" + line["file"].get<std::string>());
        r.erase("seconds");
        for (auto& s : r["results"]) {
            for (const char* volatile_field :
                 {"seconds", "profile_ms", "compile", "output", "timing"})
                s.erase(volatile_field);
        }
        results[line["file"].get<std::string>()] = r;
    }
    return results;
}

}  // namespace

TEST_CASE("without a GPU, grade emulates: solved PASS, untouched WRONG, broken COMPILE_ERROR",
          "[grade]") {
    if (test_support::gpu_present()) SKIP("a GPU is present: the no-GPU path is covered by CI");
    TempDir dir("grade_emulated");
    sample_submission(dir / "subs", "solved", "solved");
    sample_submission(dir / "subs", "untouched", "untouched");
    sample_submission(dir / "subs", "broken", "broken");
    auto r =
        run_cudalings(grade_args({dir / "subs/solved", dir / "subs/untouched", dir / "subs/broken",
                                  "--step", "1/1", "--out", dir / "out", "--format", "csv,junit"}));
    INFO(r.err);
    CHECK(r.code == 0);  // student failures are data
    auto solved = read_json(dir / "out/solved.json");
    auto untouched = read_json(dir / "out/untouched.json");
    auto broken = read_json(dir / "out/broken.json");
    CHECK(verdicts(solved)["01_vector_add/01_one_thread_per_element"] == "PASS");
    CHECK(verdicts(untouched)["01_vector_add/01_one_thread_per_element"] == "WRONG");
    CHECK(verdicts(broken)["01_vector_add/01_one_thread_per_element"] == "COMPILE_ERROR");
    // Emulated, and every result says so.
    for (const auto& result : {solved, untouched}) {
        CHECK(result["emulated"] == true);
        CHECK_THAT(result["results"][0]["gpu"].get<std::string>(), ContainsSubstring("emulated"));
        CHECK_THAT(result["results"][0]["output"].get<std::string>(),
                   ContainsSubstring("emulated"));
        CHECK(result["version"] == 1);
        CHECK(result["format"] == "cudalings-grade-result");
    }
    CHECK(solved["score"] == 1.0);
    CHECK(untouched["score"] == 0.0);
    // The student's file, by the name it had in the submission (a loose file here).
    CHECK(broken["results"][0]["submitted"] == "01_one_thread_per_element.cu");
    CHECK_THAT(broken["results"][0]["output"].get<std::string>(),
               ContainsSubstring("01_one_thread_per_element.cu:11: error"));
    CHECK_THAT(broken["results"][0]["output"].get<std::string>(), !ContainsSubstring("/work-"));
    CHECK_THAT(read_text(dir / "out/grades.csv"), ContainsSubstring("solved,"));
    CHECK_THAT(read_text(dir / "out/junit.xml"), ContainsSubstring("<testsuite name=\"broken\""));
    CHECK_THAT(read_text(dir / "out/class-summary.html"), ContainsSubstring("<svg"));
    CHECK_THAT(read_text(dir / "out/class-summary.csv"),
               ContainsSubstring("untouched,1,01_vector_add/01_one_thread_per_element,WRONG"));
}

TEST_CASE("result files: unique names, a summary that maps them, exit codes", "[grade]") {
    TempDir dir("grade_names");
    // Two folders named alike in two sections, and one that is not there.
    sample_submission(dir / "sec1", "alice", "empty");
    sample_submission(dir / "sec2", "alice", "broken");
    auto missing = run_cudalings(
        grade_args({dir / "sec1/alice", dir / "nobody", "--out", dir / "out", "--step", "1/1"}));
    CHECK(missing.code == 2);  // the instructor's mistake: nothing is graded
    CHECK_THAT(missing.err, ContainsSubstring("no submission folder"));
    CHECK_FALSE(fs::exists(dir / "out/summary.json"));

    auto r = run_cudalings(grade_args({dir / "sec1/alice", dir / "sec2/alice", "--out", dir / "out",
                                       "--step", "1/1", "--repeat", "2"}));
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.err, ContainsSubstring("[4/4]"));
    for (const char* file : {"sec1_alice.round1.json", "sec1_alice.round2.json",
                             "sec2_alice.round1.json", "sec2_alice.round2.json"})
        CHECK(fs::exists(dir / "out/" + file));
    auto summary = read_json(dir / "out/summary.json");
    CHECK(summary["version"] == 1);
    REQUIRE(summary["results"].size() == 4);
    for (const auto& line : summary["results"]) {
        auto result = read_json(dir / "out/" + line["file"].get<std::string>());
        CHECK(result["submission"] == line["submission"]);
        CHECK(result["round"] == line["round"]);
    }
    // An empty folder is a student who submitted nothing, not a grader failure.
    auto empty = read_json(dir / "out/sec1_alice.round1.json");
    CHECK_FALSE(empty.contains("error"));
    CHECK(verdicts(empty)["01_vector_add/01_one_thread_per_element"] == "COMPILE_ERROR");
    CHECK_THAT(empty["results"][0]["reason"].get<std::string>(),
               ContainsSubstring("not submitted"));
}

TEST_CASE("grade . names the result after the folder", "[grade]") {
    TempDir dir("grade_dot");
    auto sub = sample_submission(dir.path(), "carol", "broken");
    auto r = run_cudalings(grade_args({".", "--root", CUDALINGS_SOURCE_DIR, "--out", dir / "out",
                                       "--step", "1/1", "--format", "gradescope"}),
                           {}, sub);
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(fs::exists(dir / "out/carol.json"));
    CHECK_FALSE(fs::exists(dir / "out/.json"));
    // One submission graded once: Gradescope's results.json, valid against the schema.
    auto g = read_json(dir / "out/results.json");
    CHECK(g["score"] == 0.0);
    std::string message;
    int valid = validate_json(CUDALINGS_GRADESCOPE_SCHEMA, dir / "out/results.json", &message);
    if (valid != 77) {
        INFO(message);
        CHECK(valid == 0);
    }
}

TEST_CASE("secret seeds: recorded as a fingerprint, never printed, replayable", "[grade]") {
    TempDir dir("grade_secret");
    sample_submission(dir / "subs", "a", "broken");
    sample_submission(dir / "subs", "b", "broken");
    // b's file differs from a's by one comment line: its seeds differ too.
    std::ofstream(dir / "subs/b/01_one_thread_per_element.cu", std::ios::app) << "// edited\n";
    std::map<std::string, std::string> env{{"CUDALINGS_SEED", kSecret}};
    auto first = run_cudalings(grade_args({dir / "subs/a", dir / "subs/b", "--out", dir / "one",
                                           "--step", "1/1", "--format", "csv,junit,gradescope"}),
                               env);
    INFO(first.err);
    REQUIRE(first.code == 0);
    auto a = read_json(dir / "one/a.json");
    auto b = read_json(dir / "one/b.json");
    CHECK(a["seed"]["mode"] == "secret");
    CHECK(a["seed"]["fingerprint"].get<std::string>().size() == 16);
    const std::string seed_a = a["results"][0]["seed"];
    CHECK(seed_a != b["results"][0]["seed"].get<std::string>());
    // Never printed, never written.
    CHECK_THAT(first.out + first.err, !ContainsSubstring(kSecret));
    for (const auto& e : fs::directory_iterator(dir / "one"))
        CHECK_THAT(read_text(e.path().string()), !ContainsSubstring(kSecret));
    // Replayed from a seed file: the same seeds for the same files.
    { std::ofstream(dir / "secret") << kSecret << "\n"; }
    auto replay = run_cudalings(grade_args(
        {dir / "subs/a", "--out", dir / "two", "--step", "1/1", "--seed-file", dir / "secret"}));
    INFO(replay.err);
    REQUIRE(replay.code == 0);
    auto again = read_json(dir / "two/a.json");
    CHECK(again["results"][0]["seed"] == seed_a);
    CHECK(again["seed"]["fingerprint"] == a["seed"]["fingerprint"]);
    // Another round, other inputs.
    auto rounds = run_cudalings(
        grade_args({dir / "subs/a", "--out", dir / "three", "--step", "1/1", "--repeat", "2"}),
        env);
    REQUIRE(rounds.code == 0);
    CHECK(read_json(dir / "three/a.round1.json")["results"][0]["seed"] == seed_a);
    CHECK(read_json(dir / "three/a.round2.json")["results"][0]["seed"] != seed_a);
    // A secret and --seed together is a usage error; so is a malformed secret.
    CHECK(
        run_cudalings(grade_args({dir / "subs/a", "--out", dir / "x", "--seed", "12"}), env).code ==
        2);
    CHECK(run_cudalings(grade_args({dir / "subs/a", "--out", dir / "x"}),
                        {{"CUDALINGS_SEED", "not-a-secret"}})
              .code == 2);
}

TEST_CASE("shards and their merge reproduce the unsharded batch", "[grade]") {
    TempDir dir("grade_shards");
    sample_submission(dir / "subs", "solved", "solved");
    sample_submission(dir / "subs", "broken", "broken");
    sample_submission(dir / "subs", "empty", "empty");
    std::vector<std::string> subs{dir / "subs/broken", dir / "subs/empty", dir / "subs/solved"};
    std::map<std::string, std::string> env{{"CUDALINGS_SEED", kSecret}};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = subs;
        args.insert(args.end(), {"--step", "1/1", "--no-time"});
        args.insert(args.end(), extra.begin(), extra.end());
        return run_cudalings(grade_args(args), env);
    };
    auto whole = with({"--out", dir / "whole"});
    INFO(whole.err);
    REQUIRE(whole.code == 0);
    REQUIRE(with({"--out", dir / "s1", "--shard", "1/2"}).code == 0);
    REQUIRE(with({"--out", dir / "s2", "--shard", "2/2"}).code == 0);
    CHECK(read_json(dir / "s1/summary.json")["results"].size() +
              read_json(dir / "s2/summary.json")["results"].size() ==
          3);
    // One shard alone is not the class.
    auto partial = run_cudalings({"grade", "merge", dir / "s1", "--out", dir / "partial"});
    CHECK(partial.code == 3);
    CHECK_THAT(partial.err, ContainsSubstring("shard 2/2 is missing"));
    auto merged = run_cudalings(
        {"grade", "merge", dir / "s2", dir / "s1", "--out", dir / "merged", "--format", "csv"});
    INFO(merged.err);
    REQUIRE(merged.code == 0);
    CHECK(comparable_results(dir / "merged") == comparable_results(dir / "whole"));
    CHECK(fs::exists(dir / "merged/grades.csv"));
    CHECK(fs::exists(dir / "merged/class-summary.html"));
    // A shard of another batch (other seeds) is refused.
    REQUIRE(run_cudalings(
                grade_args({dir / "subs/broken", dir / "subs/empty", dir / "subs/solved", "--step",
                            "1/1", "--no-time", "--out", dir / "other", "--shard", "2/2"}))
                .code == 0);
    auto mixed = run_cudalings({"grade", "merge", dir / "s1", dir / "other", "--out", dir / "m2"});
    CHECK(mixed.code == 2);
    CHECK_THAT(mixed.err, ContainsSubstring("another batch"));
}

TEST_CASE("two workers grade the batch as one does", "[grade]") {
    TempDir dir("grade_jobs");
    sample_submission(dir / "subs", "solved", "solved");
    sample_submission(dir / "subs", "untouched", "untouched");
    sample_submission(dir / "subs", "broken", "broken");
    std::map<std::string, std::string> env{{"CUDALINGS_SEED", kSecret}};
    std::vector<std::string> base{
        dir / "subs/solved", dir / "subs/untouched", dir / "subs/broken", "--step", "1/1",
        "--no-time"};
    auto args = [&](std::vector<std::string> extra) {
        auto a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return grade_args(a);
    };
    auto one = run_cudalings(args({"--out", dir / "one"}), env);
    auto two = run_cudalings(args({"--out", dir / "two", "--jobs", "2"}), env);
    INFO(one.err << two.err);
    REQUIRE(one.code == 0);
    REQUIRE(two.code == 0);
    CHECK(comparable_results(dir / "two") == comparable_results(dir / "one"));
    CHECK(run_cudalings(args({"--out", dir / "x", "--jobs", "2", "--gpus", "0"})).code == 2);
}

TEST_CASE("new-secret writes a private file and never overwrites one", "[grade]") {
    TempDir dir("grade_new_secret");
    auto r = run_cudalings({"grade", "new-secret", dir / "secret"});
    CHECK(r.code == 0);
    std::string secret = read_text(dir / "secret");
    CHECK(secret.size() == 33);  // 32 hex digits and a line break
    CHECK_THAT(r.out, !ContainsSubstring(secret.substr(0, 32)));
    struct stat st {};
    REQUIRE(::stat((dir / "secret").c_str(), &st) == 0);
    CHECK((st.st_mode & 077) == 0);
    CHECK(run_cudalings({"grade", "new-secret", dir / "secret"}).code == 2);
    CHECK(read_text(dir / "secret") == secret);
}

TEST_CASE("grade without a sandbox warns on every run", "[grade]") {
    TempDir dir("grade_no_sandbox");
    sample_submission(dir / "subs", "x", "empty");
    auto r = run_cudalings(
        {"grade", dir / "subs/x", "--out", dir / "out", "--step", "1/1", "--no-sandbox"});
    CHECK(r.code == 0);
    CHECK_THAT(r.err, ContainsSubstring("WARNING: grading without a sandbox"));
    CHECK(read_json(dir / "out/x.json")["sandbox"].is_null());
    // With a bwrap that does not exist, grading refuses.
    auto refused = run_cudalings({"grade", dir / "subs/x", "--out", dir / "out2", "--step", "1/1",
                                  "--bwrap", "/nonexistent/bwrap"});
    CHECK(refused.code == 4);
    CHECK_THAT(refused.err, ContainsSubstring("--no-sandbox"));
    CHECK_FALSE(fs::exists(dir / "out2/x.json"));
    // Without the sandbox's init (or its seccomp filter, in a build without libseccomp), the
    // same: no sandbox, said, nothing graded.
    auto no_init = run_cudalings(
        {"grade", dir / "subs/x", "--out", dir / "out3", "--step", "1/1"},
        {{"CUDALINGS_SANDBOX_INIT", "/nonexistent/cudalings-sandbox-init"}});
    CHECK(no_init.code == 4);
    CHECK_THAT(no_init.err, ContainsSubstring("/nonexistent/cudalings-sandbox-init"));
    CHECK_THAT(no_init.err, ContainsSubstring("--no-sandbox"));
    CHECK_FALSE(fs::exists(dir / "out3/x.json"));
}
