#include "submission.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "course.h"
#include "hash.h"

namespace fs = std::filesystem;

namespace cudalings::grading {
namespace {

// Files the batch writes beside the results: no submission may be named like them.
const std::set<std::string> kReserved{"summary", "results", "junit", "grades", "class-summary"};

std::string safe_name(const std::string& relative) {
    std::string name;
    for (char c : relative) {
        if (c == '/')
            name += '_';
        else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')
            name += c;
        else
            name += '_';
    }
    if (name.empty() || name[0] == '.') name = "_" + name;
    return name;
}

bool is_header(const fs::path& p) {
    auto ext = p.extension().string();
    return ext == ".cuh" || ext == ".h" || ext == ".hpp";
}

// Every header of a lesson folder, sorted.
std::vector<fs::path> headers_of(const fs::path& dir) {
    std::vector<fs::path> headers;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_regular_file(ec) && is_header(e.path())) headers.push_back(e.path());
    std::sort(headers.begin(), headers.end());
    return headers;
}

}  // namespace

std::vector<std::string> result_names(const std::vector<std::string>& submissions) {
    std::vector<fs::path> paths;
    for (const auto& s : submissions) {
        fs::path p = fs::path(s).lexically_normal();
        if (p.has_filename() == false) p = p.parent_path();  // "alice/" -> "alice"
        paths.push_back(p);
    }
    // The common parent of every submission (the parent itself for a single one).
    fs::path common = paths.empty() ? fs::path() : paths.front().parent_path();
    for (const auto& p : paths) {
        while (!common.empty() && common != common.root_path()) {
            auto rel = p.lexically_relative(common);
            if (!rel.empty() && *rel.begin() != "..") break;
            common = common.parent_path();
        }
    }
    std::vector<std::string> names;
    std::map<std::string, int> uses;
    for (const auto& p : paths) {
        std::string relative = p.lexically_relative(common).string();
        if (relative.empty() || relative == ".") relative = p.filename().string();
        names.push_back(safe_name(relative));
        ++uses[names.back()];
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (uses[names[i]] > 1 || kReserved.count(names[i]))
            names[i] += "-" + Hasher().add(paths[i].string()).hex().substr(0, 8);
    }
    return names;
}

StepFile locate_step_file(const std::string& submission, const LessonInfo& lesson,
                          const StepInfo& step) {
    const std::string file = step.id + ".cu";
    const std::vector<std::string> layouts{"lessons/" + lesson.id + "/" + file,
                                           lesson.id + "/" + file, file};
    StepFile result;
    for (const auto& relative : layouts) {
        // Every component is looked at without following links: lessons/ itself may be a link.
        fs::path at = submission;
        bool present = true, linked = false;
        for (const auto& part : fs::path(relative)) {
            at /= part;
            struct stat st {};
            if (::lstat(at.c_str(), &st) != 0) {
                present = false;
                break;
            }
            if (S_ISLNK(st.st_mode)) linked = true;
        }
        if (!present) continue;
        result.relative = relative;
        result.path = at.string();
        struct stat st {};
        ::lstat(at.c_str(), &st);
        if (linked) {
            result.status = StepFile::Status::Refused;
            result.why = relative +
                         " is (or lies in) a symbolic link: a submission's step files "
                         "must be plain files";
        } else if (!S_ISREG(st.st_mode)) {
            result.status = StepFile::Status::Refused;
            result.why = relative + " is not a regular file";
        } else if (static_cast<std::size_t>(st.st_size) > kMaxStepFileBytes) {
            result.status = StepFile::Status::Refused;
            result.why = relative + " is larger than " + std::to_string(kMaxStepFileBytes >> 20) +
                         " MiB: not a step file";
        } else {
            result.status = StepFile::Status::Found;
        }
        return result;
    }
    result.status = StepFile::Status::Missing;
    result.why = "not submitted: the submission has no " + layouts.front() + " (nor " + layouts[1] +
                 " or " + file + ")";
    return result;
}

std::string refuse_submission_folder(const std::string& submission,
                                     const std::vector<GuardedDir>& guarded) {
    struct stat st {};
    if (::lstat(submission.c_str(), &st) != 0) return "the submission folder cannot be read";
    if (S_ISLNK(st.st_mode))
        return "the submission folder is a symbolic link: a submission must be a folder of its "
               "own, not a link to one";
    if (!S_ISDIR(st.st_mode)) return "the submission is not a folder";
    std::error_code ec;
    const fs::path real = fs::canonical(submission, ec);
    if (ec) return "the submission folder cannot be resolved";
    for (const auto& dir : guarded) {
        if (dir.path.empty()) continue;
        std::error_code dir_ec;
        const fs::path theirs = fs::canonical(dir.path, dir_ec);
        if (dir_ec) continue;  // not made yet: nothing can lie inside it
        const fs::path rel = real.lexically_relative(theirs);
        if (!rel.empty() && *rel.begin() != "..")
            return "the submission folder is " + std::string(rel == "." ? "" : "inside ") +
                   dir.label + ": only a folder of the student's own is graded";
    }
    return {};
}

bool stage_course(const std::string& instructor_root, const std::string& root, const Manifest& m,
                  const std::vector<StepRef>& steps, const std::vector<StepFile>& files,
                  std::string& error) {
    std::error_code ec;
    const fs::path lessons = fs::path(root) / "lessons";
    const fs::path theirs = fs::path(instructor_root) / "lessons";
    auto copy_headers = [&](const std::string& lesson) {
        fs::create_directories(lessons / lesson, ec);
        if (ec) return false;
        for (const auto& h : headers_of(theirs / lesson)) {
            fs::copy_file(h, lessons / lesson / h.filename(), ec);
            if (ec) return false;
        }
        return true;
    };
    if (!copy_headers("common")) {
        error = "cannot make the graded copy in " + root + ": " + ec.message();
        return false;
    }
    std::set<std::size_t> done;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const LessonInfo& lesson = m.lessons.at(steps[i].lesson);
        if (done.insert(steps[i].lesson).second && !copy_headers(lesson.id)) {
            error = "cannot copy the headers of " + lesson.id + ": " + ec.message();
            return false;
        }
        if (i >= files.size() || files[i].status != StepFile::Status::Found) continue;
        const fs::path target = lessons / lesson.id / (lesson.steps.at(steps[i].step).id + ".cu");
        // A step file named like a header cannot overwrite it: step files end in .cu.
        bool ok = false;
        std::string text = read_file(files[i].path, &ok);
        if (!ok || !write_file_atomic(target.string(), text)) {
            error = "cannot copy " + files[i].path + " into the graded copy";
            return false;
        }
    }
    return true;
}

std::string course_fingerprint(const std::string& instructor_root) {
    Hasher h;
    h.add_file(instructor_root + "/" + kManifestName);
    std::error_code ec;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(fs::path(instructor_root) / "lessons", ec))
        if (e.is_directory(ec)) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& dir : dirs)
        for (const auto& header : headers_of(dir))
            h.add(header.lexically_relative(instructor_root).string()).add_file(header.string());
    // The lessons' checks: their manifest parts (steps, points), cases and judges.
    std::vector<fs::path> checks;
    for (const auto& e : fs::directory_iterator(fs::path(instructor_root) / "checks", ec))
        if (e.is_directory(ec)) checks.push_back(e.path());
    std::sort(checks.begin(), checks.end());
    for (const auto& dir : checks)
        for (const char* name : {"lesson.json", "checks.cu", "baselines.cu"})
            if (fs::is_regular_file(dir / name, ec))
                h.add((dir / name).lexically_relative(instructor_root).string())
                    .add_file((dir / name).string());
    return h.hex();
}

}  // namespace cudalings::grading
