#include "devcheck.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <regex>
#include <set>

#include "emulate.h"
#include "cases.h"
#include "fixtures.h"
#include "generated.h"
#include "hash.h"
#include "profile.h"
#include "verdict.h"

namespace fs = std::filesystem;

namespace cudalings {
namespace {

bool has(const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// The numbered step files (NN_*.cu) of a folder.
std::vector<std::string> step_files(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    static const std::regex numbered(R"(^\d\d_.*\.cu$)");
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (std::regex_match(e.path().filename().string(), numbered))
            out.push_back(e.path().stem().string());
    std::sort(out.begin(), out.end());
    return out;
}

void check_files(const std::string& root, const LessonInfo& lesson,
                 std::vector<DevFinding>& found) {
    std::vector<std::string> listed;
    for (const auto& step : lesson.steps) listed.push_back(step.id);
    for (const char* side : {"lessons", "solutions"}) {
        const fs::path dir = fs::path(root) / side / lesson.id;
        for (const auto& step : lesson.steps)
            if (!fs::is_regular_file(dir / (step.id + ".cu")))
                found.push_back({"files",
                                 std::string(side) + "/" + lesson.id + "/" + step.id + ".cu",
                                 std::string("step ") + step.id + " of the manifest has no " +
                                     (side == std::string("lessons") ? "skeleton" : "solution")});
        for (const auto& file : step_files(dir))
            if (!has(listed, file))
                found.push_back(
                    {"files", std::string(side) + "/" + lesson.id + "/" + file + ".cu",
                     "a step file that checks/" + lesson.id + "/lesson.json does not list"});
    }
}

// One file's header (the keys each reader needs, with values they understand) and, for a patch,
// that it still applies to its base.
void check_fixture(const std::string& root, const LessonInfo* lesson, const Fixture& f,
                   std::vector<DevFinding>& found) {
    auto bad = [&](const std::string& why) { found.push_back({"fixtures", f.rel, why}); };
    if (!f.error.empty()) return bad(f.error);
    const FixtureHeader& h = f.keys;
    for (const auto& key : h.unknown)
        bad("\"" + key +
            ":\" is no key of a fixture's header (checker/core/tools/fixtures.h lists them)");
    bool has_step = false;
    for (const auto& [key, value] : h.keys) {
        Verdict v;
        if ((key == "expect" || key == "emulated" || key == "in-process") &&
            !parse_verdict(value, v)) {
            bad("\"" + key + ": " + value + "\" is not a verdict");
        } else if (key == "needs" && value != "gpu" && value != "cpu") {
            bad("\"needs: " + value + "\" must be gpu or cpu");
        } else if (key == "timing" && value != "yes") {
            bad("\"timing: " + value + "\" must be yes (or absent)");
        } else if (key == "timed" && value != "yes" && value != "only") {
            bad("\"timed: " + value + "\" must be yes or only (or absent)");
        } else if (key == "step" && lesson) {
            has_step = true;
            const auto slash = value.find('/');
            const std::string lesson_part = value.substr(0, slash);
            std::string step = slash == std::string::npos ? "" : value.substr(slash + 1);
            if (step.size() > 3 && step.substr(step.size() - 3) == ".cu")
                step = step.substr(0, step.size() - 3);
            bool exists = lesson_part == lesson->id &&
                          std::any_of(lesson->steps.begin(), lesson->steps.end(),
                                      [&](const StepInfo& s) { return s.id == step; });
            if (!exists) bad("\"step: " + value + "\" is not a step of " + lesson->id);
        }
    }
    if (f.kind == FixtureKind::corpus) {
        if (!has_step) bad("no \"// step: LESSON/STEP.cu\" line");
        if (h.emulated.empty()) bad("no \"// emulated: VERDICT\" line");
    } else if (h.expect.empty()) {
        bad("no \"// expect: VERDICT\" line");
    }
    if (!h.emulated_detail.empty() && h.emulated.empty())
        bad("\"emulated-detail:\" without an \"emulated: VERDICT\" line (nothing runs it)");
    if (!h.emulated_advice.empty() && h.emulated.empty())
        bad("\"emulated-advice:\" without an \"emulated: VERDICT\" line (nothing runs it)");
    const bool names_base = std::any_of(h.keys.begin(), h.keys.end(),
                                        [](const auto& kv) { return kv.first == "base"; });
    if (f.form == FixtureForm::whole) {
        if (names_base) bad("\"base:\" in a whole file (only a patch has a base)");
        return;
    }
    std::string text, why;
    if (!materialise(f, root, &text, &why)) bad(why);
}

void check_fixtures(const std::string& root, const LessonInfo& lesson,
                    std::vector<DevFinding>& found) {
    for (const auto kind : {FixtureKind::fixture, FixtureKind::corpus})
        for (const auto& path : fixture_files(root, kind, lesson.id))
            check_fixture(root, &lesson, read_fixture(path, root), found);
}

void check_links(const std::string& root, const LessonInfo& lesson,
                 std::vector<DevFinding>& found) {
    const fs::path readme = fs::path(root) / "lessons" / lesson.id / "README.md";
    bool ok = false;
    const std::string text = read_file(readme.string(), &ok);
    if (!ok) {
        found.push_back(
            {"links", "lessons/" + lesson.id + "/README.md", "the lesson has no README"});
        return;
    }
    const std::string rel = "lessons/" + lesson.id + "/README.md";
    std::error_code ec;
    const fs::path course = fs::weakly_canonical(fs::path(root), ec);
    static const std::regex link(R"re(\]\(([^)\s]+)(?:\s+"[^"]*")?\)|href="([^"]+)")re");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), link);
         it != std::sregex_iterator(); ++it) {
        std::string target = (*it)[1].matched ? (*it)[1].str() : (*it)[2].str();
        if (target.empty() || target[0] == '#') continue;
        if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) {
            found.push_back({"links", rel, "links outside the course: " + target});
            continue;
        }
        target = target.substr(0, target.find('#'));
        const fs::path resolved = fs::weakly_canonical(readme.parent_path() / target, ec);
        const std::string r = resolved.string(), c = course.string();
        const bool inside =
            r.size() > c.size() && r.compare(0, c.size(), c) == 0 && r[c.size()] == '/';
        if (!inside)
            found.push_back({"links", rel, "links outside the course: " + target});
        else if (!fs::exists(resolved))
            found.push_back({"links", rel, "links to a file that does not exist: " + target});
    }
}

// The lesson's row in the root README's course table: what the learner writes and what the
// lesson teaches (`dev update` writes the table from them).
void check_summary(const LessonInfo& lesson, std::vector<DevFinding>& found) {
    if (lesson.summary_write.empty() || lesson.summary_teaches.empty())
        found.push_back({"summary", "checks/" + lesson.id + "/lesson.json",
                         "no \"summary\": {\"write\": \"...\", \"teaches\": \"...\"} (the "
                         "lesson's row in the root README's course table: what the learner "
                         "writes, what the lesson teaches)"});
}

void check_profile(const LessonInfo& lesson, std::vector<DevFinding>& found) {
    const std::string part = "checks/" + lesson.id + "/lesson.json";
    const auto summary = summary_metrics();
    std::vector<std::string> seen;
    for (const auto& m : lesson.profile_metrics) {
        if (!find_metric(m))
            found.push_back({"profile", part,
                             "profile metric \"" + m +
                                 "\" has no meaning in the course's catalogue "
                                 "(checker/core/run/profile.cpp): add it there with its line"});
        else if (has(summary, m))
            found.push_back({"profile", part,
                             "profile metric \"" + m + "\" is in every profile's summary already"});
        if (has(seen, m))
            found.push_back({"profile", part, "profile metric \"" + m + "\" is listed twice"});
        seen.push_back(m);
    }
}

}  // namespace

std::vector<DevFinding> dev_check(const std::string& root, const Manifest& manifest,
                                  const ChecksLister& list_checks, const std::string& cmake) {
    std::vector<DevFinding> found;
    for (const auto& lesson : manifest.lessons) {
        const std::string part = "checks/" + lesson.id + "/lesson.json";
        check_files(root, lesson, found);
        for (const auto& step : lesson.steps) {
            if (step.hint.empty())
                found.push_back({"hints", part, "step " + step.id + " has no hint"});
            // A step the emulator cannot build must say so, or a learner without a GPU waits
            // on it for ever.
            bool ok = false;
            const std::string solution = read_file(
                (fs::path(root) / "solutions" / lesson.id / (step.id + ".cu")).string(), &ok);
            const std::string blocker = ok ? emulation_blocker(solution) : "";
            if (!blocker.empty() && !step.needs_gpu)
                found.push_back({"gpu", part,
                                 "step " + step.id + " cannot be emulated (its solution: " +
                                     blocker + "): give it \"needs_gpu\": true"});
            // A cut of the emulated values-only case lies between the two emulated sizes.
            if (step.emulated_values_up_to &&
                (step.emulated_values_up_to <= kEmulatedMaxN ||
                 step.emulated_values_up_to > kEmulatedLargeN))
                found.push_back({"emulated", part,
                                 "step " + step.id + ": \"emulated\" values_up_to " +
                                     format_size(step.emulated_values_up_to) +
                                     " must lie above " + format_size(kEmulatedMaxN) +
                                     " and at most at " + format_size(kEmulatedLargeN)});
        }
        const ChecksContents contents = list_checks(lesson);
        if (!contents.error.empty()) {
            found.push_back({"problems", "checks/" + lesson.id + "/checks.cu", contents.error});
        } else {
            for (const auto& step : lesson.steps)
                if (!has(contents.problems, step.problem))
                    found.push_back({"problems", part,
                                     "step " + step.id + " names problem \"" + step.problem +
                                         "\", which the lesson's checks do not define"});
            for (const auto& b : lesson.baselines) {
                if (!has(contents.problems, b.problem))
                    found.push_back({"baselines", part,
                                     "baseline " + b.name + " names problem \"" + b.problem +
                                         "\", which the lesson's checks do not define"});
                else if (std::find(contents.baselines.begin(), contents.baselines.end(),
                                   std::make_pair(b.problem, b.name)) == contents.baselines.end())
                    found.push_back({"baselines", "checks/" + lesson.id + "/baselines.cu",
                                     "no baseline \"" + b.name + "\" of problem \"" + b.problem +
                                         "\" is registered (CUDALINGS_BASELINE)"});
            }
        }
        check_fixtures(root, lesson, found);
        check_links(root, lesson, found);
        check_profile(lesson, found);
        check_summary(lesson, found);
    }
    // The hostile grading submissions belong to no lesson.
    for (const auto& path : fixture_files(root, FixtureKind::hostile))
        check_fixture(root, nullptr, read_fixture(path, root), found);
    for (const auto& [file, message] : stale_generated(root, manifest, cmake))
        found.push_back({"generated", file, message});
    return found;
}

}  // namespace cudalings
