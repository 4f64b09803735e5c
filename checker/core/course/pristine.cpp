#include "pristine.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "course.h"
#include "hash.h"
#include "text.h"

namespace fs = std::filesystem;

namespace cudalings {
namespace {

bool is_lesson_source(const fs::path& p) {
    const auto ext = p.extension().string();
    return ext == ".cu" || ext == ".cuh" || ext == ".h" || ext == ".hpp";
}

bool is_step_file(const std::string& path) {
    const auto name = fs::path(path).filename().string();
    return name.size() > 3 && std::isdigit(static_cast<unsigned char>(name[0])) &&
           std::isdigit(static_cast<unsigned char>(name[1])) && name[2] == '_' &&
           fs::path(name).extension() == ".cu";
}

std::string stamp_now() { return local_time_now("%Y%m%d-%H%M%S"); }

}  // namespace

std::string pristine_root(const std::string& tool_dir) {
    const fs::path dir = fs::path(tool_dir) / "pristine";
    std::error_code ec;
    if (fs::exists(dir / kManifestName, ec) && fs::is_directory(dir / "lessons", ec))
        return dir.string();
    return {};
}

bool pristine_covers(const std::string& pristine, const Manifest& m) {
    if (pristine.empty()) return false;
    std::error_code ec;
    for (const auto& lesson : m.lessons)
        if (!fs::is_directory(fs::path(pristine) / "lessons" / lesson.id, ec)) return false;
    return true;
}

std::vector<std::string> unverified_lesson_files(const std::string& pristine) {
    std::vector<std::string> files;
    std::ifstream in(fs::path(pristine) / "unverified.txt");
    std::string line;
    while (std::getline(in, line))
        if (!line.empty()) files.push_back(line);
    return files;
}

std::vector<ChangedFile> changed_lesson_files(const std::string& root,
                                              const std::string& pristine) {
    std::vector<ChangedFile> changed;
    const fs::path base = fs::path(pristine) / "lessons";
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(base, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
        if (!it->is_regular_file(ec) || !is_lesson_source(it->path())) continue;
        const std::string rel = fs::relative(it->path(), base, ec).generic_string();
        const fs::path working = fs::path(root) / "lessons" / rel;
        ChangedFile c{rel, !fs::exists(working, ec), is_step_file(rel)};
        if (c.missing) {
            changed.push_back(c);
            continue;
        }
        bool a = false, b = false;
        if (read_file(it->path().string(), &a) != read_file(working.string(), &b) || !a || !b)
            changed.push_back(c);
    }
    std::sort(changed.begin(), changed.end(),
              [](const ChangedFile& x, const ChangedFile& y) { return x.path < y.path; });
    return changed;
}

bool restore_lesson_file(const std::string& root, const std::string& pristine,
                         const std::string& path, const std::string& backup_dir,
                         std::string& backup, std::string& error) {
    backup.clear();
    const fs::path source = fs::path(pristine) / "lessons" / path;
    const fs::path target = fs::path(root) / "lessons" / path;
    bool ok = false;
    const std::string original = read_file(source.string(), &ok);
    if (!ok) {
        error = "the course's version of lessons/" + path + " is not in " + pristine;
        return false;
    }
    std::error_code ec;
    if (fs::exists(target, ec)) {
        if (!make_dirs(backup_dir)) {
            error = "cannot create " + backup_dir + " (" + std::strerror(errno) + ")";
            return false;
        }
        const std::string flat = fs::path(path).parent_path().filename().string() + "__" +
                                 fs::path(path).filename().string();
        backup = (fs::path(backup_dir) / (stamp_now() + "-" + flat)).string();
        fs::copy_file(target, backup, fs::copy_options::overwrite_existing, ec);
        if (ec) {
            error = "cannot keep a copy in " + backup + " (" + ec.message() + ")";
            backup.clear();
            return false;
        }
    }
    make_dirs(target.parent_path().string());
    if (!write_file_atomic(target.string(), original)) {
        error = "cannot write " + target.string() + " (" + std::strerror(errno) + ")";
        return false;
    }
    return true;
}

}  // namespace cudalings
