#include "course.h"

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "hash.h"

namespace fs = std::filesystem;

namespace cudalings {

std::optional<std::string> find_course_root(const std::string& start) {
    std::error_code ec;
    fs::path dir = fs::weakly_canonical(fs::absolute(start, ec), ec);
    while (true) {
        if (fs::is_regular_file(dir / kManifestName, ec)) return dir.string();
        if (!dir.has_parent_path() || dir.parent_path() == dir) return std::nullopt;
        dir = dir.parent_path();
    }
}

std::string CoursePaths::step_file(const LessonInfo& l, const StepInfo& s, bool solution) const {
    if (solution)
        return (solutions_root.empty() ? root : solutions_root) + "/solutions/" + l.id + "/" +
               s.id + ".cu";
    return root + "/lessons/" + l.id + "/" + s.id + ".cu";
}

std::string CoursePaths::kit_dir() const {
    if (const char* env = std::getenv("CUDALINGS_KIT_DIR")) return env;
#ifdef CUDALINGS_KIT_DIR
    if (::access(CUDALINGS_KIT_DIR "/kit.h", R_OK) == 0) return CUDALINGS_KIT_DIR;
#endif
    return tool_dir + "/kit";
}

Progress::Progress(std::string file) : file_(std::move(file)) {
    bool ok = false;
    std::string text = read_file(file_, &ok);
    if (!ok) return;
    try {
        auto j = nlohmann::json::parse(text);
        for (auto& [step, hash] : j.at("passed").items())
            passed_.emplace_back(step, hash.get<std::string>());
    } catch (const std::exception&) {
        // A damaged progress file is not worth failing a check over: start afresh.
        passed_.clear();
    }
}

bool Progress::passed(const std::string& step) const {
    return std::any_of(passed_.begin(), passed_.end(), [&](auto& p) { return p.first == step; });
}

std::string Progress::passed_hash(const std::string& step) const {
    for (const auto& [name, hash] : passed_)
        if (name == step) return hash;
    return {};
}

void Progress::mark_passed(const std::string& step, const std::string& content_hash) {
    clear(step);
    passed_.emplace_back(step, content_hash);
}

void Progress::clear(const std::string& step) {
    passed_.erase(
        std::remove_if(passed_.begin(), passed_.end(), [&](auto& p) { return p.first == step; }),
        passed_.end());
}

bool Progress::save() const {
    nlohmann::json j;
    j["passed"] = nlohmann::json::object();
    for (const auto& [step, hash] : passed_) j["passed"][step] = hash;
    if (!make_dirs(fs::path(file_).parent_path().string())) return false;
    return write_file_atomic(file_, j.dump(2) + "\n");
}

std::optional<StepRef> next_unfinished(const Manifest& m, const Progress& p, bool gpu,
                                       std::optional<StepRef> after) {
    // The order of the search: after `after`, the rest of its lesson, then the steps of that
    // lesson before it, then the lessons after it, round to the course's start.
    std::vector<StepRef> order;
    const bool known = after && after->lesson < m.lessons.size() &&
                       after->step < m.lessons[after->lesson].steps.size();
    const std::size_t first = known ? after->lesson : 0;
    for (std::size_t k = 0; k < m.lessons.size(); ++k) {
        const std::size_t l = (first + k) % m.lessons.size();
        const std::size_t count = m.lessons[l].steps.size();
        const std::size_t from = known && l == first ? after->step + 1 : 0;
        for (std::size_t j = 0; j < count; ++j) order.push_back({l, (from + j) % count});
    }
    for (const StepRef& ref : order) {
        if (known && ref.lesson == after->lesson && ref.step == after->step) continue;
        const StepInfo& step = m.lessons[ref.lesson].steps[ref.step];
        if (finishable_here(step, gpu) && !p.passed(step_name(m, ref))) return ref;
    }
    return std::nullopt;
}

std::optional<StepRef> step_in_hand(const Manifest& m, const Progress& p, bool gpu,
                                    std::optional<StepRef> current) {
    if (current && current->lesson < m.lessons.size() &&
        current->step < m.lessons[current->lesson].steps.size()) {
        const StepInfo& step = m.lessons[current->lesson].steps[current->step];
        if (finishable_here(step, gpu) && !p.passed(step_name(m, *current))) return current;
        return next_unfinished(m, p, gpu, current);
    }
    return next_unfinished(m, p, gpu);
}

std::optional<StepRef> find_step(const Manifest& m, const std::string& name) {
    for (std::size_t l = 0; l < m.lessons.size(); ++l)
        for (std::size_t s = 0; s < m.lessons[l].steps.size(); ++s)
            if (step_name(m, {l, s}) == name) return StepRef{l, s};
    return std::nullopt;
}

bool make_dirs(const std::string& path) {
    std::error_code ec;
    fs::create_directories(path, ec);
    return fs::is_directory(path, ec);
}

bool write_file_atomic(const std::string& path, const std::string& contents) {
    std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return false;
        out << contents;
        out.flush();
        if (!out) return false;
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return false;
    }
    return true;
}

}  // namespace cudalings
