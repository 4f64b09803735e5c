#include "runner_process.h"

#include <array>
#include <atomic>
#include <sstream>

#include "cases.h"
#include "hash.h"
#include "protocol.h"

using nlohmann::json;

namespace cudalings {
namespace {

// Every authenticated JSON line the runner sent on its result channel. Each line carries a
// tag (SipHash of its sequence number and text under a key only the runner holds); a line
// without a valid tag in sequence was not written by the runner and is ignored, so nothing
// the learner's code prints can change a verdict.
std::vector<json> parse_events(const std::string& channel, const unsigned char key[16],
                               int* forged = nullptr) {
    std::vector<json> events;
    std::istringstream lines(channel);
    std::string line;
    std::uint64_t sequence = 0;
    while (std::getline(lines, line)) {
        if (line.empty()) continue;
        auto tab = line.rfind('\t');
        if (tab == std::string::npos ||
            line.substr(tab + 1) != line_tag(key, sequence, line.substr(0, tab))) {
            if (forged) ++*forged;
            continue;
        }
        ++sequence;
        try {
            auto j = json::parse(line.substr(0, tab));
            if (j.is_object() && j.contains("event")) events.push_back(std::move(j));
        } catch (const std::exception&) {
        }
    }
    return events;
}

// Whether the runner's last authenticated event so far is "done" (cheap until a line that
// could be it has arrived).
bool said_done(const std::string& channel, const unsigned char key[16]) {
    if (channel.empty() || channel.back() != '\n') return false;
    const auto start = channel.rfind('\n', channel.size() - 2);
    if (channel.find("\"done\"", start == std::string::npos ? 0 : start) == std::string::npos)
        return false;
    const auto events = parse_events(channel, key);
    return !events.empty() && is(events.back().value("event", ""), Marker::Done);
}

}  // namespace

ChildResult run_runner(const std::vector<std::string>& argv, ChildOptions options,
                       std::vector<json>& events, int* forged, const Sandbox* sandbox,
                       const SandboxView& view, bool until_done,
                       const std::function<bool(const json&)>& stop_after) {
    std::array<unsigned char, 16> key;
    random_key(key.data());
    options.result_channel = true;
    options.secret = key_to_hex(key.data());
    if (until_done && !sandbox)
        options.finished = [key](const std::string& channel) {
            return said_done(channel, key.data());
        };
    std::atomic<bool> stop{false};
    if (stop_after) {
        options.cancel = &stop;
        options.on_channel = [key, &stop, &stop_after](const std::string& channel) {
            for (const auto& e : parse_events(channel, key.data()))
                if (stop_after(e)) stop.store(true);
        };
    }
    auto child = run_contained(sandbox, argv, options, view);
    events = parse_events(child.channel.head, key.data(), forged);
    return child;
}

std::string describe_end(const ChildResult& child, double idle_seconds) {
    if (child.timed_out)
        return child.idle_timeout ? "no progress for " + std::to_string(int(idle_seconds)) +
                                        " s: the call never returned or a kernel never ended"
                                  : "the run exceeded its wall-clock limit";
    if (child.signal) return "the process died: " + describe_signal(child.signal);
    return "the process exited (code " + std::to_string(child.exit_code) +
           ") in the middle of the case";
}

int read_runner_events(const std::vector<json>& events, bool first_child, StepReport& report,
                       std::map<int, CaseResult>& cases, int& total, int& next_case,
                       std::string& phase, bool& done) {
    int in_progress = -1;
    double t_cases = -1, t_timing = -1;
    for (const auto& e : events) {
        const std::string kind = e.value("event", "");
        const double t = e.value("t_ms", 0.0);
        if (kind == CasesEvent::kEvent) {
            t_cases = t;
            if (first_child) report.runner_startup_ms = t;
            const auto c = e.get<CasesEvent>();
            total = c.total;
            report.problem = c.problem;
            report.advice_by_verdict = c.advice;
            report.sampled_values = c.sampled_values;
        } else if (kind == CaseStartEvent::kEvent) {
            const auto c = e.get<CaseStartEvent>();
            in_progress = c.index;
            phase = "setup";
            CaseResult r;
            r.index = c.index;
            r.name = c.name;
            r.n = c.n;
            r.size = c.size;
            cases[c.index] = r;
        } else if (is(kind, Marker::StepLoading)) {
            phase = "loading";
        } else if (is(kind, Marker::StepLoaded)) {
            phase = "loaded";
        } else if (is(kind, Marker::CallStart)) {
            phase = "call";
        } else if (is(kind, Marker::CallEnd)) {
            phase = "sync";
        } else if (kind == CaseResult::kEvent) {
            CaseResult r = e.get<CaseResult>();
            if (r.verdict == Verdict::Wrong && r.detail.empty())
                r.detail = describe_mismatches({r.checked ? r.checked : r.n, r.wrong, r.unwritten,
                                                r.first_wrong, r.last_wrong});
            next_case = r.index + 1;
            cases[r.index] = std::move(r);
            in_progress = -1;
        } else if (kind == AbortEvent::kEvent) {
            in_progress = -1;  // a sticky CUDA error: the next process starts fresh
        } else if (is(kind, Marker::TimingStart)) {
            t_timing = t;
            phase = "timing";
        } else if (is(kind, Marker::Tick)) {
            phase = "timing";
        } else if (kind == TimingResult::kEvent) {
            TimingResult r = e.get<TimingResult>();
            report.timing_ms = t - t_timing;
            report.timings.push_back(std::move(r));
        } else if (kind == TimingErrorEvent::kEvent) {
            const auto te = e.get<TimingErrorEvent>();
            report.timing_verdict = Verdict::Crash;
            report.timing_error = te.reason + " — " + te.detail;
            done = true;
        } else if (is(kind, Message::Warning)) {
            // What the runner could not do and went on without (the reference's process did not
            // start: the step is timed alone), said with the report rather than dropped.
            report.notes.push_back(e.get<MessageEvent>().message);
        } else if (is(kind, Message::LoadError)) {
            report.load_error = e.get<MessageEvent>().message;
        } else if (is(kind, Message::InternalError)) {
            report.internal_error = e.get<MessageEvent>().message;
        } else if (is(kind, Marker::Done)) {
            done = true;
            report.runner_done_ms = t;
        }
        if ((is(kind, Marker::TimingStart) || is(kind, Marker::Done)) && t_cases >= 0 &&
            report.cases_ms == 0)
            report.cases_ms = t - t_cases;
    }
    return in_progress;
}

}  // namespace cudalings
