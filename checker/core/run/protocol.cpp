#include "protocol.h"

namespace cudalings {

void to_json(nlohmann::json& j, const Verdict& v) { j = std::string(name(v)); }

void from_json(const nlohmann::json& j, Verdict& v) {
    if (!j.is_string() || !parse_verdict(j.get<std::string>(), v)) v = Verdict::InternalError;
}

CaseResult ended_around_loading(bool loaded, const std::string& how) {
    CaseResult c;
    c.index = 0;
    c.verdict = Verdict::Crash;
    if (!loaded) {
        c.name = "loading your file";
        c.reason = "your file's code ended the process while it was being loaded: " + how;
        c.detail =
            "code of yours that runs before any call ended it: a constructor or initialiser of a "
            "global or static object, or an __attribute__((constructor)) function (exit(), "
            "abort(), a crash)";
    } else {
        c.name = "right after loading your file";
        c.reason = "your file's code ended the process right after it was loaded: " + how;
        c.detail =
            "the process ended after your file was loaded and before the first call: code of "
            "yours that runs on its own (a thread started by a constructor, an atexit handler) "
            "ended it";
    }
    return c;
}

}  // namespace cudalings
