#include "manifest.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "hash.h"

namespace cudalings {

namespace {

nlohmann::json parse_json(std::string_view text, const std::string& what) {
    try {
        return nlohmann::json::parse(text);
    } catch (const std::exception& e) {
        throw std::runtime_error(what + " is not valid JSON: " + e.what());
    }
}

PerformanceGoal parse_goal(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object()) throw std::runtime_error(where + ": a goal is an object");
    PerformanceGoal g;
    g.metric = j.value("metric", "");
    g.array = j.value("array", "");
    g.op = j.value("op", "");
    g.says = j.value("says", "");
    g.bytes = j.value("bytes", 16u);
    if (g.metric != "bank-conflicts" && g.metric != "coalesced" && g.metric != "vector-width")
        throw std::runtime_error(where +
                                 ": a goal's \"metric\" is bank-conflicts, coalesced or "
                                 "vector-width");
    if (g.array.empty() || g.says.empty())
        throw std::runtime_error(where + ": a goal needs an \"array\" and what it \"says\"");
    if (!g.op.empty() && g.op != "load" && g.op != "store")
        throw std::runtime_error(where + ": a goal's \"op\" is load or store");
    if (g.metric == "vector-width" && g.bytes != 8 && g.bytes != 16)
        throw std::runtime_error(where + ": a vector-width goal asks for 8 or 16 bytes");
    return g;
}

LessonInfo parse_lesson(const nlohmann::json& jl, const std::vector<std::string>& forbid,
                        const std::string& where) {
    LessonInfo lesson;
    if (!jl.is_object() || !jl.contains("id") || !jl.contains("steps"))
        throw std::runtime_error(where + ": a lesson needs an \"id\" and \"steps\"");
    lesson.id = jl.at("id").get<std::string>();
    lesson.title = jl.value("title", lesson.id);
    lesson.problem = jl.value("problem", "");
    for (const auto& js : jl.at("steps")) {
        StepInfo step;
        step.id = js.at("id").get<std::string>();
        step.title = js.value("title", step.id);
        step.hint = js.value("hint", "");
        step.timed = js.value("timed", true);
        if (js.contains("needs_gpu") && !js.at("needs_gpu").is_boolean())
            throw std::runtime_error(where + ": step " + step.id +
                                     ": \"needs_gpu\" must be true or false");
        step.needs_gpu = js.value("needs_gpu", false);
        if (js.contains("goals")) {
            if (!js.at("goals").is_array())
                throw std::runtime_error(where + ": step " + step.id + ": \"goals\" is a list");
            for (const auto& g : js.at("goals"))
                step.goals.push_back(parse_goal(g, where + ": step " + step.id));
        }
        step.problem = js.value("problem", lesson.problem);
        if (js.contains("timed_size")) {
            step.timed_size = parse_size(js.at("timed_size").get<std::string>());
            if (!step.timed_size)
                throw std::runtime_error(where + ": step " + step.id +
                                         ": timed_size must read like \"2^24\" or \"1000\"");
        }
        if (js.contains("emulated")) {
            const auto& e = js.at("emulated");
            const std::string at = where + ": step " + step.id + ": \"emulated\"";
            if (!e.is_object() || !e.contains("values_up_to") || !e.contains("why") ||
                !e.at("values_up_to").is_string() || !e.at("why").is_string())
                throw std::runtime_error(at + " is {\"values_up_to\": \"2^18+3\", \"why\": \"...\"}");
            step.emulated_values_up_to = parse_size(e.at("values_up_to").get<std::string>());
            step.emulated_values_why = e.at("why").get<std::string>();
            if (!step.emulated_values_up_to || step.emulated_values_why.empty())
                throw std::runtime_error(at + ": values_up_to must read like \"2^18+3\", and "
                                              "why must say why");
        }
        auto allow = js.value("allow", std::vector<std::string>{});
        for (const auto& lib : forbid)
            if (std::find(allow.begin(), allow.end(), lib) == allow.end())
                step.forbid.push_back(lib);
        // Grading: points and visibility (manifest.h), with their defaults.
        step.points = js.value("points", 1.0);
        step.visibility = js.value("visibility", std::string("visible"));
        if (!(step.points >= 0))
            throw std::runtime_error(where + ": step " + step.id +
                                     ": \"points\" must be a number, 0 or more");
        if (step.visibility != "visible" && step.visibility != "hidden" &&
            step.visibility != "after_due_date" && step.visibility != "after_published")
            throw std::runtime_error(where + ": step " + step.id +
                                     ": \"visibility\" must be visible, hidden, after_due_date "
                                     "or after_published");
        if (step.problem.empty())
            throw std::runtime_error(where + ": step " + lesson.id + "/" + step.id +
                                     " has no problem (give one to the lesson or the step)");
        lesson.steps.push_back(step);
    }
    for (const auto& jb : jl.value("baselines", nlohmann::json::array())) {
        BaselineInfo b;
        b.problem = jb.value("problem", lesson.problem);
        b.name = jb.at("name").get<std::string>();
        b.title = jb.value("title", b.name);
        lesson.baselines.push_back(b);
    }
    if (jl.contains("profile")) {
        const auto& jp = jl.at("profile");
        const char* shape = ": \"profile\" must read {\"metrics\": [\"ncu metric name\", ...]}";
        if (!jp.is_object() || !jp.contains("metrics") || !jp.at("metrics").is_array())
            throw std::runtime_error(where + shape);
        for (const auto& m : jp.at("metrics")) {
            if (!m.is_string()) throw std::runtime_error(where + shape);
            lesson.profile_metrics.push_back(m.get<std::string>());
        }
    }
    if (jl.contains("summary")) {
        const auto& js = jl.at("summary");
        const char* shape = ": \"summary\" must read {\"write\": \"...\", \"teaches\": \"...\"}";
        if (!js.is_object()) throw std::runtime_error(where + shape);
        for (const auto& [key, value] : js.items())
            if ((key != "write" && key != "teaches") || !value.is_string())
                throw std::runtime_error(where + shape);
        lesson.summary_write = js.value("write", "");
        lesson.summary_teaches = js.value("teaches", "");
    }
    if (lesson.steps.empty())
        throw std::runtime_error(where + ": lesson " + lesson.id + " has no steps");
    return lesson;
}

}  // namespace

std::uint64_t parse_size(const std::string& text) {
    std::uint64_t value = 0;
    std::size_t i = 0;
    auto number = [&]() {
        std::uint64_t v = 0;
        std::size_t start = i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
            v = v * 10 + static_cast<std::uint64_t>(text[i++] - '0');
        return i > start ? v : ~std::uint64_t{0};
    };
    value = number();
    if (value == ~std::uint64_t{0}) return 0;
    if (i < text.size() && text[i] == '^') {
        ++i;
        const std::uint64_t power = number();
        if (value != 2 || power >= 63) return 0;
        value = std::uint64_t{1} << power;
    }
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
        const char sign = text[i++];
        const std::uint64_t offset = number();
        if (offset == ~std::uint64_t{0}) return 0;
        value = sign == '+' ? value + offset : value - offset;
    }
    return i == text.size() ? value : 0;
}

Manifest parse_manifest(std::string_view text,
                        const std::function<std::string(const std::string&)>& read_part) {
    const nlohmann::json j = parse_json(text, "course.json");
    Manifest m;
    if (!j.contains("lessons") || !j["lessons"].is_array())
        throw std::runtime_error("course.json: \"lessons\" must be an array");
    // Libraries no step may use unless it says "allow": a step that teaches a primitive must
    // not call the library that provides it.
    std::vector<std::string> forbid =
        j.value("forbid", std::vector<std::string>{"cub", "thrust", "cublas"});
    for (const auto& entry : j["lessons"]) {
        if (entry.is_string()) {
            const std::string id = entry.get<std::string>();
            const std::string where = "checks/" + id + "/lesson.json";
            if (!read_part) throw std::runtime_error("course.json: no way to read " + where);
            LessonInfo lesson = parse_lesson(parse_json(read_part(id), where), forbid, where);
            if (lesson.id != id)
                throw std::runtime_error(where + ": its id is \"" + lesson.id + "\", not \"" + id +
                                         "\"");
            m.lessons.push_back(lesson);
        } else {
            m.lessons.push_back(parse_lesson(entry, forbid, "course.json"));
        }
    }
    return m;
}

Manifest load_manifest(const std::string& root) {
    bool ok = false;
    const std::string path = root + "/course.json";
    std::string text = read_file(path, &ok);
    if (!ok) throw std::runtime_error("cannot read " + path);
    return parse_manifest(text, [&](const std::string& id) {
        bool found = false;
        const std::string part = root + "/checks/" + id + "/lesson.json";
        std::string t = read_file(part, &found);
        if (!found) throw std::runtime_error("cannot read " + part);
        return t;
    });
}

namespace {

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
    });
}

// The leading number of "02_reduce" or "2", or -1.
long leading_number(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == 0 || i > 6) return -1;
    return std::stol(std::string(s.substr(0, i)));
}

// Matches "01_vector_add", "01", "1", "vector_add" against a directory-style id.
bool matches_id(std::string_view id, std::string_view text) {
    if (text == id) return true;
    long want = leading_number(text);
    if (all_digits(text)) return want >= 0 && want == leading_number(id);
    // "vector_add" names "01_vector_add"
    auto underscore = id.find('_');
    if (underscore != std::string_view::npos && id.substr(underscore + 1) == text) return true;
    // "02_reduce" also matches when the number and name agree
    return false;
}

std::string_view strip_suffix(std::string_view s, std::string_view suffix) {
    if (s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix)
        return s.substr(0, s.size() - suffix.size());
    return s;
}

}  // namespace

std::optional<std::vector<StepRef>> resolve_steps(const Manifest& m, std::string_view text,
                                                  std::string* error) {
    auto fail = [&](std::string why) -> std::optional<std::vector<StepRef>> {
        if (error) *error = std::move(why);
        return std::nullopt;
    };
    std::string t(text);
    while (!t.empty() && t.back() == '/') t.pop_back();
    if (t.empty()) return fail("no step named");
    // A path: keep the last two components.
    std::string_view view = strip_suffix(t, ".cu");
    std::string lesson_part, step_part;
    auto slash = view.rfind('/');
    if (slash != std::string_view::npos) {
        step_part = std::string(view.substr(slash + 1));
        std::string_view before = view.substr(0, slash);
        auto slash2 = before.rfind('/');
        lesson_part =
            std::string(slash2 == std::string_view::npos ? before : before.substr(slash2 + 1));
    } else if (auto dot = view.find('.'); dot != std::string_view::npos) {
        lesson_part = std::string(view.substr(0, dot));
        step_part = std::string(view.substr(dot + 1));
    } else {
        lesson_part = std::string(view);
    }
    // "lessons/01_vector_add" names the lesson.
    if (lesson_part == "lessons" || lesson_part == "solutions") {
        lesson_part = step_part;
        step_part.clear();
    }
    std::optional<std::size_t> lesson_index;
    for (std::size_t i = 0; i < m.lessons.size(); ++i)
        if (matches_id(m.lessons[i].id, lesson_part)) lesson_index = i;
    if (!lesson_index)
        return fail("no lesson called \"" + lesson_part + "\" (see `cudalings list`)");
    const auto& lesson = m.lessons[*lesson_index];
    std::vector<StepRef> refs;
    if (step_part.empty()) {
        for (std::size_t s = 0; s < lesson.steps.size(); ++s) refs.push_back({*lesson_index, s});
        return refs;
    }
    for (std::size_t s = 0; s < lesson.steps.size(); ++s)
        if (matches_id(lesson.steps[s].id, step_part))
            return std::vector<StepRef>{{*lesson_index, s}};
    return fail("lesson " + lesson.id + " has no step \"" + step_part +
                "\" (see `cudalings list`)");
}

std::string step_name(const Manifest& m, const StepRef& ref) {
    return m.lessons.at(ref.lesson).id + "/" + m.lessons.at(ref.lesson).steps.at(ref.step).id;
}

}  // namespace cudalings
