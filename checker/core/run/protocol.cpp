#include "protocol.h"

namespace cudalings {

void to_json(nlohmann::json& j, const Verdict& v) { j = std::string(name(v)); }

void from_json(const nlohmann::json& j, Verdict& v) {
    if (!j.is_string() || !parse_verdict(j.get<std::string>(), v)) v = Verdict::InternalError;
}

const char* name(Marker m) {
    switch (m) {
        case Marker::StepLoading:
            return "step_loading";
        case Marker::StepLoaded:
            return "step_loaded";
        case Marker::CallStart:
            return "call_start";
        case Marker::CallEnd:
            return "call_end";
        case Marker::TimingStart:
            return "timing_start";
        case Marker::Tick:
            return "tick";
        case Marker::Done:
            return "done";
    }
    return "?";
}

const char* name(Message m) {
    switch (m) {
        case Message::LoadError:
            return "load_error";
        case Message::InternalError:
            return "internal_error";
        case Message::UsageError:
            return "usage_error";
        case Message::Warning:
            return "warning";
        case Message::Note:
            return "note";
    }
    return "?";
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
