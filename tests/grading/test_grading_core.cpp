// The grading core (checker/core/grading/): result names, finding and staging a submission's
// step files, secret seeds, points in the manifest, the policy screen of missing includes, and
// the instructor's formats (Gradescope's validated against the schema in docs/grading/).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "grading/formats.h"
#include "grading/result.h"
#include "grading/seeds.h"
#include "grading/submission.h"
#include "grading_support.h"
#include "manifest.h"
#include "policy.h"
#include "text.h"

using Catch::Matchers::ContainsSubstring;
using namespace cudalings;
using namespace cudalings::grading;
using namespace grading_test;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("result names come from the submission paths and never collide", "[grading]") {
    CHECK(result_names({"/s/alice", "/s/bob"}) == std::vector<std::string>{"alice", "bob"});
    CHECK(result_names({"/s/alice/"}) == std::vector<std::string>{"alice"});
    // Folders of the same name in two sections keep their section.
    CHECK(result_names({"/c/sec1/alice", "/c/sec2/alice"}) ==
          std::vector<std::string>{"sec1_alice", "sec2_alice"});
    // Odd characters, hidden names and the batch's own file names are made safe.
    auto odd = result_names({"/s/a b", "/s/a_b", "/s/.hidden", "/s/summary", "/s/ö"});
    std::set<std::string> unique(odd.begin(), odd.end());
    CHECK(unique.size() == odd.size());
    for (const auto& n : odd) {
        CHECK(n.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                  "-_.") == std::string::npos);
        CHECK(n[0] != '.');
        CHECK(n != "summary");
    }
    // The same list gives the same names (shards agree).
    CHECK(result_names({"/s/a b", "/s/a_b"}) == result_names({"/s/a b", "/s/a_b"}));
}

TEST_CASE("a step file is found in each layout; links, odd files and huge files are refused",
          "[grading]") {
    TempDir dir("locate");
    Manifest m = load_manifest(std::string(CUDALINGS_SOURCE_DIR));
    const LessonInfo& lesson = m.lessons.at(0);
    const StepInfo& step = lesson.steps.at(0);
    const std::string file = step.id + ".cu";
    auto make = [&](const std::string& sub, const std::string& rel) {
        fs::create_directories(fs::path(dir / sub) / fs::path(rel).parent_path());
        std::ofstream(fs::path(dir / sub) / rel) << "// a step\n";
    };
    make("course", "lessons/" + lesson.id + "/" + file);
    make("folders", lesson.id + "/" + file);
    make("loose", file);
    CHECK(locate_step_file(dir / "course", lesson, step).relative ==
          "lessons/" + lesson.id + "/" + file);
    CHECK(locate_step_file(dir / "folders", lesson, step).relative == lesson.id + "/" + file);
    auto loose = locate_step_file(dir / "loose", lesson, step);
    CHECK(loose.status == StepFile::Status::Found);
    CHECK(loose.relative == file);
    auto missing = locate_step_file(dir / "nothing", lesson, step);
    CHECK(missing.status == StepFile::Status::Missing);
    CHECK_THAT(missing.why, ContainsSubstring("not submitted"));

    fs::create_directories(dir / "link");
    fs::create_symlink(std::string(CUDALINGS_SOURCE_DIR) + "/solutions/" + lesson.id + "/" + file,
                       fs::path(dir / "link") / file);
    auto link = locate_step_file(dir / "link", lesson, step);
    CHECK(link.status == StepFile::Status::Refused);
    CHECK_THAT(link.why, ContainsSubstring("symbolic link"));
    // A linked folder on the way is a link too.
    fs::create_directories(dir / "linked_dir");
    fs::create_directory_symlink(std::string(CUDALINGS_SOURCE_DIR) + "/solutions",
                                 dir / "linked_dir/lessons");
    CHECK(locate_step_file(dir / "linked_dir", lesson, step).status == StepFile::Status::Refused);
    fs::create_directories(dir / "fifo");
    REQUIRE(::mkfifo((fs::path(dir / "fifo") / file).c_str(), 0600) == 0);
    CHECK(locate_step_file(dir / "fifo", lesson, step).status == StepFile::Status::Refused);
    fs::create_directories(dir / "huge");
    std::ofstream(fs::path(dir / "huge") / file) << std::string(kMaxStepFileBytes + 1, '/');
    auto huge = locate_step_file(dir / "huge", lesson, step);
    CHECK(huge.status == StepFile::Status::Refused);
    CHECK_THAT(huge.why, ContainsSubstring("larger than"));
}

TEST_CASE("the graded copy: the student's step files and the instructor's headers only",
          "[grading]") {
    TempDir dir("stage");
    const std::string source = CUDALINGS_SOURCE_DIR;
    Manifest m = load_manifest(source);
    // The student changed the header and added a file of their own: neither is used.
    auto sub = sample_submission(dir.path(), "student", "untouched");
    std::ofstream(sub + "/lessons/01_vector_add/vector_add.cuh") << "#include <cub/cub.cuh>\n";
    std::ofstream(sub + "/lessons/01_vector_add/helpers.cuh") << "// mine\n";
    std::ofstream(sub + "/course.json") << "{}";
    std::vector<StepRef> steps{{0, 0}};
    std::vector<StepFile> files{locate_step_file(sub, m.lessons[0], m.lessons[0].steps[0])};
    std::string error;
    REQUIRE(stage_course(source, dir / "copy", m, steps, files, error));
    const std::string lesson = dir / "copy/lessons/01_vector_add";
    CHECK(read_text(lesson + "/vector_add.cuh") ==
          read_text(source + "/lessons/01_vector_add/vector_add.cuh"));
    CHECK(read_text(lesson + "/01_one_thread_per_element.cu") ==
          read_text(sub + "/lessons/01_vector_add/01_one_thread_per_element.cu"));
    CHECK_FALSE(fs::exists(lesson + "/helpers.cuh"));
    CHECK_FALSE(fs::exists(lesson + "/02_grid_stride_loop.cu"));
    CHECK_FALSE(fs::exists(dir / "copy/course.json"));
    CHECK_FALSE(fs::exists(dir / "copy/solutions"));
    CHECK(fs::exists(dir / "copy/lessons/common/cuda_check.cuh"));
    // The fingerprint of the contract changes with a header.
    CHECK(course_fingerprint(source) == course_fingerprint(source));
}

TEST_CASE("the submission folder itself: a link or a folder of the grader's is refused",
          "[grading]") {
    TempDir dir("submission_folder");
    fs::create_directories(dir / "course/solutions/01_vector_add");
    fs::create_directories(dir / "out");
    fs::create_directories(dir / "subs/alice");
    fs::create_directory_symlink(dir / "course/solutions", dir / "subs/mallory");
    // A link higher up is the grader's own layout: resolved, then judged by where it leads.
    fs::create_directory_symlink(dir / "course", dir / "course-link");
    std::ofstream(dir / "subs/file") << "x";
    const std::vector<GuardedDir> guarded{{dir / "course", "the course being graded"},
                                          {dir / "out", "the grader's output folder"},
                                          {dir / "not-made-yet", "the work folder"}};
    CHECK(refuse_submission_folder(dir / "subs/alice", guarded).empty());
    CHECK_THAT(refuse_submission_folder(dir / "subs/mallory", guarded),
               ContainsSubstring("symbolic link"));
    CHECK_THAT(refuse_submission_folder(dir / "subs/file", guarded),
               ContainsSubstring("not a folder"));
    const std::string inside = refuse_submission_folder(dir / "course/solutions", guarded);
    CHECK_THAT(inside, ContainsSubstring("inside the course being graded"));
    CHECK_THAT(inside, !ContainsSubstring(dir.path()));  // no path of the grader's
    CHECK_THAT(refuse_submission_folder(dir / "course-link/solutions/01_vector_add", guarded),
               ContainsSubstring("inside the course being graded"));
    CHECK_THAT(refuse_submission_folder(dir / "course", guarded),
               ContainsSubstring("is the course being graded"));
    CHECK_THAT(refuse_submission_folder(dir / "out", guarded), ContainsSubstring("output folder"));
    CHECK_THAT(refuse_submission_folder(dir / "subs/nobody", guarded),
               ContainsSubstring("cannot be read"));
}

TEST_CASE("texts are made valid UTF-8; a result is always written", "[grading]") {
    const std::string replacement = "\xEF\xBF\xBD";
    CHECK(valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") ==
          "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
    CHECK(valid_utf8("caf\xE9 au lait") == "caf" + replacement + " au lait");      // Latin-1
    CHECK(valid_utf8("\xC0\xAF") == replacement + replacement);                    // overlong '/'
    CHECK(valid_utf8("\xED\xA0\x80") == replacement + replacement + replacement);  // surrogate
    CHECK(valid_utf8("\xF4\x90\x80\x80").find("\xF4") == std::string::npos);       // > U+10FFFF
    CHECK(valid_utf8("cut \xE2\x82") == "cut " + replacement + replacement);       // cut short
    CHECK(valid_utf8(std::string("nul\0byte", 8)) == std::string("nul\0byte", 8));
    CHECK(is_valid_utf8(valid_utf8("\xFF\xFE\x80 tail")));
    // A result holding bytes from everywhere: every string (and key) made valid, then written.
    json result{{"submission", "/subs/jos\xE9"},
                {"results", json::array({{{"reason", "error: \xE9t\xE9"}, {"n", 1}}})},
                {"k\xFF", "v"}};
    bool repaired = true;
    CHECK_THROWS(result.dump());
    std::string text = dump_json(result, 2, &repaired);
    CHECK(repaired);  // written anyway, and said
    CHECK(is_valid_utf8(text));
    make_valid_utf8(result);
    CHECK_NOTHROW(result.dump());
    CHECK(result["submission"] == "/subs/jos" + replacement);
    CHECK(result["results"][0]["reason"] == "error: " + replacement + "t" + replacement);
    CHECK(result["results"][0]["n"] == 1);
    CHECK(result.contains("k" + replacement));
    dump_json(result, 2, &repaired);
    CHECK_FALSE(repaired);
}

TEST_CASE("secret seeds: 32 hex digits, per step, round and file, never the key itself",
          "[grading]") {
    unsigned char key[16], other[16];
    REQUIRE(parse_secret("  00112233445566778899aabbccddeeff\n", key));
    REQUIRE(parse_secret("ffeeddccbbaa99887766554433221100", other));
    CHECK_FALSE(parse_secret("0011", key));
    CHECK_FALSE(parse_secret("zz112233445566778899aabbccddeeff", other));
    REQUIRE(parse_secret("00112233445566778899aabbccddeeff", key));
    auto seed = derived_seed(key, "01_vector_add/01_one", 1, "file");
    CHECK(seed == derived_seed(key, "01_vector_add/01_one", 1, "file"));
    CHECK(seed != derived_seed(other, "01_vector_add/01_one", 1, "file"));
    CHECK(seed != derived_seed(key, "01_vector_add/02_two", 1, "file"));
    CHECK(seed != derived_seed(key, "01_vector_add/01_one", 2, "file"));
    CHECK(seed != derived_seed(key, "01_vector_add/01_one", 1, "file "));
    auto source = secret_source(key);
    CHECK(source.mode_name() == "secret");
    CHECK(source.fingerprint.size() == 16);
    CHECK(source.fingerprint != secret_fingerprint(other));
    CHECK_THAT(source.fingerprint, !ContainsSubstring("0011223344"));
    CHECK(new_secret().size() == 32);
    CHECK(new_secret() != new_secret());
}

TEST_CASE("points and visibility of a step come from the manifest, with defaults", "[grading]") {
    const char* text = R"({"lessons": [{"id": "01_a", "problem": "s", "steps": [
        {"id": "01_x"}, {"id": "02_y", "points": 2.5, "visibility": "after_due_date"}]}]})";
    Manifest m = parse_manifest(text);
    CHECK(m.lessons[0].steps[0].points == 1);
    CHECK(m.lessons[0].steps[0].visibility == "visible");
    CHECK(m.lessons[0].steps[1].points == 2.5);
    CHECK(m.lessons[0].steps[1].visibility == "after_due_date");
    CHECK_THROWS_WITH(
        parse_manifest(
            R"({"lessons": [{"id": "a", "problem": "s", "steps": [{"id": "x", "points": -1}]}]})"),
        ContainsSubstring("points"));
    CHECK_THROWS_WITH(
        parse_manifest(
            R"({"lessons": [{"id": "a", "problem": "s", "steps": [{"id": "x", "visibility": "sometimes"}]}]})"),
        ContainsSubstring("visibility"));
}

TEST_CASE("an include of the solutions that is not there is still rejected", "[grading]") {
    PolicyRules rules;
    rules.forbidden_dirs = {"/g/copy/solutions", "/g/course"};
    const std::string include_dirs_text =
        "/g/copy/lessons/01_vector_add/01_one.cu:7:10: fatal error: "
        "../../solutions/01_vector_add/02_grid_stride_loop.cu: No such file or directory\n";
    auto v = screen_missing_includes(include_dirs_text, {"/g/copy/lessons/01_vector_add"}, rules);
    REQUIRE(v);
    CHECK(v->rule == "no-foreign-files");
    // By absolute path, into the instructor's course.
    CHECK(
        screen_missing_includes("/g/copy/x.cu:1:10: fatal error: /g/course/solutions/a.cu: No "
                                "such file or directory\n",
                                {}, rules));
    // A header that simply is not there is a compile error, not a violation.
    CHECK_FALSE(screen_missing_includes(
        "/g/copy/lessons/01_vector_add/01_one.cu:3:10: fatal error: helpers.cuh: No such file or "
        "directory\n",
        {"/g/copy/lessons/01_vector_add"}, rules));
}

namespace {

// A result as a worker writes it: one passing timed step, one wrong, one not submitted.
json sample_result() {
    json timing{{"learner", {{"median_us", 812.34}}}, {"reference", {{"median_us", 790.0}}}};
    return json{{"format", kResultFormat},
                {"version", kFormatVersion},
                {"tool", "cudalings test"},
                {"submission", "/subs/<alice & bob>"},
                {"name", "alice"},
                {"round", 1},
                {"seconds", 12.25},
                {"emulated", false},
                {"sandbox", "bubblewrap"},
                {"seed", {{"mode", "secret"}, {"fingerprint", "0123456789abcdef"}}},
                {"score", 2.5},
                {"max_score", 4.5},
                {"passed", 1},
                {"failed", 2},
                {"skipped", 0},
                {"results", json::array({json{{"step", "01_vector_add/01_one"},
                                              {"title", "One"},
                                              {"verdict", "PASS"},
                                              {"reason", ""},
                                              {"points", 2.5},
                                              {"max_points", 2.5},
                                              {"visibility", "visible"},
                                              {"output", "PASS"},
                                              {"seconds", 1.5},
                                              {"timing", timing}},
                                         json{{"step", "01_vector_add/02_two"},
                                              {"title", "Two"},
                                              {"verdict", "WRONG"},
                                              {"reason", "n=33: values, \"quoted\""},
                                              {"points", 0.0},
                                              {"max_points", 1.0},
                                              {"visibility", "after_due_date"},
                                              {"output", "WRONG <details>"},
                                              {"seconds", 2.0},
                                              {"timing", nullptr}},
                                         json{{"step", "02_reduce/01_three"},
                                              {"title", "Three"},
                                              {"verdict", "COMPILE_ERROR"},
                                              {"reason", "not submitted"},
                                              {"points", 0.0},
                                              {"max_points", 1.0},
                                              {"visibility", "hidden"},
                                              {"output", "not submitted"},
                                              {"seconds", 0.0},
                                              {"timing", nullptr}}})}};
}

// Writes `j` and validates it against the Gradescope schema; SKIPs without the validator.
void check_against_schema(const json& j, bool expect_valid) {
    TempDir dir("schema");
    std::ofstream(dir / "results.json") << j.dump(2);
    std::string message;
    int code = validate_json(CUDALINGS_GRADESCOPE_SCHEMA, dir / "results.json", &message);
    if (code == 77) SKIP("python3-jsonschema is not installed: " + message);
    INFO(message);
    CHECK(code == (expect_valid ? 0 : 1));
}

}  // namespace

TEST_CASE("gradescope: score, tests, status, visibility, leaderboard", "[grading]") {
    auto g = gradescope_results(sample_result());
    CHECK(g["score"] == 2.5);
    CHECK(g["execution_time"] == 13);
    REQUIRE(g["tests"].size() == 3);
    CHECK(g["tests"][0]["status"] == "passed");
    CHECK(g["tests"][0]["max_score"] == 2.5);
    CHECK(g["tests"][0]["number"] == "1.1");
    CHECK(g["tests"][1]["status"] == "failed");
    CHECK(g["tests"][1]["score"] == 0.0);
    CHECK(g["tests"][1]["visibility"] == "after_due_date");
    CHECK(g["tests"][2]["visibility"] == "hidden");
    CHECK(g["tests"][2]["number"] == "2.1");
    REQUIRE(g["leaderboard"].size() == 1);  // the timed step that passed
    CHECK(g["leaderboard"][0]["order"] == "asc");
    CHECK(g["leaderboard"][0]["value"] == 812.3);
    CHECK(g["extra_data"]["seed"]["fingerprint"] == "0123456789abcdef");
    check_against_schema(g, true);
}

TEST_CASE("gradescope: a grader failure is said, and scores nothing", "[grading]") {
    json failed{{"format", kResultFormat},
                {"version", kFormatVersion},
                {"name", "x"},
                {"error", "the sandbox failed"},
                {"results", json::array()}};
    add_totals(failed);
    auto g = gradescope_results(failed);
    CHECK(g["score"] == 0);
    CHECK_THAT(g["output"].get<std::string>(), ContainsSubstring("through no fault of yours"));
    check_against_schema(g, true);
}

TEST_CASE("the schema refuses what Gradescope would not understand", "[grading]") {
    auto g = gradescope_results(sample_result());
    g["tests"][0]["status"] = "ok";
    check_against_schema(g, false);
    auto h = gradescope_results(sample_result());
    h["tests"][0]["visibilty"] = "visible";  // misspelt
    check_against_schema(h, false);
    json no_score{{"tests", json::array({json{{"name", "x"}}})}};
    check_against_schema(no_score, false);
}

TEST_CASE("junit, csv and the class summary", "[grading]") {
    std::vector<json> results{sample_result()};
    auto xml = junit_xml(results);
    CHECK_THAT(xml, ContainsSubstring("<testsuites name=\"cudalings\" tests=\"3\" failures=\"2\""));
    CHECK_THAT(xml,
               ContainsSubstring("<failure message=\"WRONG: n=33: values, &quot;quoted&quot;\""));
    CHECK_THAT(xml, ContainsSubstring("&lt;alice &amp; bob&gt;"));
    CHECK_THAT(xml, !ContainsSubstring("<alice"));
    auto csv = grades_csv(results);
    CHECK_THAT(csv, ContainsSubstring("name,submission,round,score,max_score"));
    CHECK_THAT(csv, ContainsSubstring("alice,/subs/<alice & bob>,1,2.5,4.5,1,2,0,no,,PASS,WRONG,"
                                      "COMPILE_ERROR\r\n"));
    CHECK(csv_line({"a", "b,c", "d\"e"}) == "a,\"b,c\",\"d\"\"e\"\r\n");
    auto summary = class_summary_csv(results);
    CHECK_THAT(summary, ContainsSubstring("alice,1,01_vector_add/01_one,PASS,2.5,2.5,812.34,790,"));
    CHECK_THAT(summary, ContainsSubstring("\"n=33: values, \"\"quoted\"\"\""));
    auto r = sample_result();
    r["name"] = "<script>alert(1)</script>";
    auto html = class_summary_html({r});
    CHECK_THAT(html, ContainsSubstring("<svg"));
    CHECK_THAT(html, ContainsSubstring("&lt;script&gt;"));
    CHECK_THAT(html, !ContainsSubstring("<script>"));
    CHECK_THAT(html, ContainsSubstring("reference: 790.0 µs"));
}
