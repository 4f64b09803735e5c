#include "history.h"

#include <filesystem>

#include "course.h"
#include "hash.h"

namespace fs = std::filesystem;

namespace cudalings {
namespace {

std::map<std::string, nlohmann::json> load_dir(const fs::path& dir, bool nested) {
    std::map<std::string, nlohmann::json> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
        if (it->path().extension() != ".json") continue;
        bool ok = false;
        const std::string text = read_file(it->path().string(), &ok);
        if (!ok) continue;
        try {
            auto j = nlohmann::json::parse(text);
            const std::string stem = it->path().stem().string();
            const std::string key =
                nested ? it->path().parent_path().filename().string() + "/" + stem : stem;
            out[key] = std::move(j);
        } catch (const std::exception&) {
            // A damaged record is skipped: the next check of that step writes it again.
        }
    }
    return out;
}

}  // namespace

bool record_result(const std::string& state_dir, const StepReport& report) {
    const fs::path file = fs::path(state_dir) / "results" / (report.step + ".json");
    return make_dirs(file.parent_path().string()) &&
           write_file_atomic(file.string(), to_json(report).dump() + "\n");
}

bool record_staircase(const std::string& state_dir, const Staircase& staircase) {
    const fs::path file = fs::path(state_dir) / "staircases" / (staircase.lesson + ".json");
    return make_dirs(file.parent_path().string()) &&
           write_file_atomic(file.string(), to_json(staircase).dump() + "\n");
}

bool record_explained(const std::string& state_dir, const StepReport& report) {
    const nlohmann::json j = to_json(report);
    if (!j.contains("access")) return true;
    const fs::path file = fs::path(state_dir) / "explained" / (report.step + ".json");
    const nlohmann::json record{{"step", report.step}, {"access", j["access"]}};
    return make_dirs(file.parent_path().string()) &&
           write_file_atomic(file.string(), record.dump() + "\n");
}

bool record_current_step(const std::string& state_dir, const std::string& step) {
    const fs::path file = fs::path(state_dir) / "current-step.json";
    const nlohmann::json record{{"step", step}};
    return make_dirs(state_dir) && write_file_atomic(file.string(), record.dump() + "\n");
}

std::string load_current_step(const std::string& state_dir) {
    bool ok = false;
    const std::string text = read_file((fs::path(state_dir) / "current-step.json").string(), &ok);
    if (!ok) return {};
    try {
        return nlohmann::json::parse(text).value("step", std::string());
    } catch (const std::exception&) {
        return {};  // a damaged record: as if none was kept
    }
}

std::optional<nlohmann::json> load_result(const std::string& state_dir, const std::string& step) {
    bool ok = false;
    const std::string text =
        read_file((fs::path(state_dir) / "results" / (step + ".json")).string(), &ok);
    if (!ok) return std::nullopt;
    try {
        return nlohmann::json::parse(text);
    } catch (const std::exception&) {
        return std::nullopt;  // a damaged record: as if none was kept
    }
}

std::map<std::string, nlohmann::json> load_results(const std::string& state_dir) {
    return load_dir(fs::path(state_dir) / "results", true);
}

std::map<std::string, nlohmann::json> load_staircases(const std::string& state_dir) {
    return load_dir(fs::path(state_dir) / "staircases", false);
}

std::map<std::string, nlohmann::json> load_explained(const std::string& state_dir) {
    return load_dir(fs::path(state_dir) / "explained", true);
}

}  // namespace cudalings
