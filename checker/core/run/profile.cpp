#include "profile.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <regex>
#include <sstream>

#include "hash.h"
#include "text.h"

namespace cudalings {

const std::vector<MetricInfo>& metric_catalogue() {
    static const std::vector<MetricInfo> catalogue{
        // The summary every profile shows.
        {metric::kDuration, "duration", "the kernel's time on the GPU, start to end"},
        {metric::kDramPercent, "DRAM throughput",
         "how busy the GPU's memory was, as a share of its peak: near 90% a kernel is "
         "memory-bound and done"},
        {metric::kDramRate, "DRAM bytes/s", "bytes moved to and from the GPU's memory per second"},
        {metric::kOccupancy, "achieved occupancy",
         "active warps per SM as a share of the most an SM can hold: too few warps cannot hide "
         "memory latency"},
        {metric::kGrid, "grid size", "blocks launched"},
        {metric::kBlock, "block size", "threads per block"},
        // What lessons choose from.
        {"dram__bytes_read.sum", "DRAM bytes read",
         "bytes read from the GPU's memory: compare with what the problem must read"},
        {"dram__bytes_write.sum", "DRAM bytes written",
         "bytes written to the GPU's memory: compare with what the problem must write"},
        {"lts__t_sector_hit_rate.pct", "L2 hit rate",
         "share of L2 sector lookups that found their data in L2 (reuse that never reached "
         "DRAM)"},
        {"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", "global load efficiency",
         "useful bytes per 32-byte sector loaded: 100% when a warp's loads are coalesced"},
        {"smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct", "global store efficiency",
         "useful bytes per 32-byte sector stored: 100% when a warp's stores are coalesced"},
        {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "global load sectors",
         "32-byte sectors global loads asked for (4 per warp request when coalesced floats)"},
        {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "global load requests",
         "warp-wide global load instructions sent to the memory system"},
        {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "shared load bank conflicts",
         "extra cycles shared-memory loads spent because lanes of a warp hit the same bank"},
        {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "shared store bank conflicts",
         "extra cycles shared-memory stores spent because lanes of a warp hit the same bank"},
        {"smsp__thread_inst_executed_per_inst_executed.ratio", "warp execution efficiency",
         "active threads per executed instruction, out of 32: divergence and idle lanes lower it"},
        {"smsp__sass_average_branch_targets_threads_uniform.pct", "uniform branches",
         "share of branches every active thread of the warp took the same way (no divergence)"},
        {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput",
         "how busy the busiest unit of the SMs was, as a share of its peak: high when "
         "compute-bound"},
        {"smsp__inst_executed.sum", "instructions executed",
         "warp instructions executed: fewer for the same work means less overhead"},
        {"smsp__sass_inst_executed_op_shared_ld.sum", "shared load instructions",
         "warp-wide shared-memory load instructions executed"},
        {"smsp__sass_inst_executed_op_global_atom.sum", "global atomics (ATOM)",
         "warp-wide global atomics whose old value is used: each waits for its answer"},
        {"smsp__sass_inst_executed_op_global_red.sum", "global reductions (RED)",
         "warp-wide global atomics whose old value is unused (atomicAdd as a statement): "
         "fire and forget, but they still queue on a contended address"},
        {"smsp__sass_inst_executed_op_shared_atom.sum", "shared atomics",
         "warp-wide atomics on shared memory: privatized counters live here"},
    };
    return catalogue;
}

const MetricInfo* find_metric(std::string_view name) {
    for (const auto& m : metric_catalogue())
        if (m.name == name) return &m;
    return nullptr;
}

bool looks_like_metric(std::string_view name) {
    static const std::regex shape(R"([a-z0-9]+__[a-z0-9_]+(\.[a-z0-9_]+)*)");
    return std::regex_match(name.begin(), name.end(), shape);
}

std::vector<std::string> summary_metrics() {
    return {metric::kDuration,  metric::kDramPercent, metric::kDramRate,
            metric::kOccupancy, metric::kGrid,        metric::kBlock};
}

std::vector<std::string> default_lesson_metrics() {
    return {"lts__t_sector_hit_rate.pct",
            "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
            "smsp__thread_inst_executed_per_inst_executed.ratio"};
}

std::string find_ncu(const std::string& nvcc) {
    if (const char* env = std::getenv("CUDALINGS_NCU"); env && *env)
        return ::access(env, X_OK) == 0 ? std::string(env) : std::string();
    return find_cuda_tool(nvcc, "ncu");
}

std::vector<std::string> ncu_command(const std::string& ncu,
                                     const std::vector<std::string>& metrics,
                                     const std::string& log_file,
                                     const std::vector<std::string>& program) {
    std::string list;
    for (const auto& m : metrics) list += (list.empty() ? "" : ",") + m;
    std::vector<std::string> cmd{ncu,
                                 // never change the GPU's clocks: the profile sees the clocks
                                 // the timing sees
                                 "--clock-control", "none",
                                 // only what runs between cudaProfilerStart and Stop
                                 "--profile-from-start", "off", "--csv", "--page", "raw",
                                 "--print-units", "base", "--metrics", list, "--log-file",
                                 log_file};
    cmd.insert(cmd.end(), program.begin(), program.end());
    return cmd;
}

// ------------------------------------------------------------------ ncu's output

namespace {

// One CSV record (RFC 4180 quoting: "a ""b""" is a "b").
std::vector<std::string> ncu_csv_fields(std::string_view line) {
    std::vector<std::string> fields;
    std::string field;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields.push_back(std::move(field));
            field.clear();
        } else if (c != '\r') {
            field += c;
        }
    }
    fields.push_back(std::move(field));
    return fields;
}

// A value in ncu's number format ("1,048,576", "91.23", "n/a") as a number.
bool ncu_number(std::string text, double& out) {
    std::string digits;
    for (char c : text)
        if (c != ',' && c != ' ') digits += c;
    if (digits.empty()) return false;
    char* end = nullptr;
    out = std::strtod(digits.c_str(), &end);
    return end && *end == '\0' && std::isfinite(out);
}

// The factor from a unit to the base the course reports in: nanoseconds for times, bytes and
// bytes per second for sizes and rates ("usecond" -> 1e3 ns, "Gbyte/second" -> 1e9 B/s).
double ncu_unit_scale(const std::string& unit) {
    if (unit.empty()) return 1;
    const auto slash = unit.find('/');
    const std::string head = unit.substr(0, slash);
    const bool per_time = slash != std::string::npos;
    if (!per_time && (head == "second" || head == "s")) return 1e9;
    if (!per_time && (head == "msecond" || head == "ms")) return 1e6;
    if (!per_time && (head == "usecond" || head == "us")) return 1e3;
    if (head.size() > 4 && head.compare(head.size() - 4, 4, "byte") == 0) {
        switch (head[0]) {
            case 'K':
                return 1e3;
            case 'M':
                return 1e6;
            case 'G':
                return 1e9;
            case 'T':
                return 1e12;
            default:
                return 1;
        }
    }
    return 1;
}

std::string ncu_short_kernel_name(const std::string& name) {
    // "vector_add(const float *, float *, unsigned long)" -> "vector_add", and
    // "void finish<256>(float *)" -> "finish<256>" (a template's return type); templates stay.
    if (name.rfind("void ", 0) == 0) return ncu_short_kernel_name(name.substr(5));
    if (name.empty() || name.back() != ')') return name;
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
        if (name[i] == ')') ++depth;
        if (name[i] == '(' && --depth == 0) {
            std::string head = name.substr(0, i);
            while (!head.empty() && head.back() == ' ') head.pop_back();
            return head.empty() ? name : head;
        }
    }
    return name;
}

}  // namespace

const KernelProfile::Value* KernelProfile::find(std::string_view metric) const {
    for (const auto& v : values)
        if (v.metric == metric) return &v;
    return nullptr;
}

double KernelProfile::number(std::string_view metric, double fallback) const {
    const Value* v = find(metric);
    return v && v->numeric ? v->number : fallback;
}

NcuReport parse_ncu_output(std::string_view text) {
    NcuReport report;
    std::istringstream lines{std::string(text)};
    std::string line;
    std::vector<std::string> header;
    std::vector<std::string> units;
    while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.rfind("==ERROR==", 0) == 0) {
            report.errors.push_back(line);
            continue;
        }
        if (line.rfind("==", 0) == 0) {
            if (line.find("No kernels were profiled") != std::string::npos)
                report.no_kernels = true;
            continue;
        }
        if (line.empty() || line[0] != '"') continue;  // what the step itself printed
        auto fields = ncu_csv_fields(line);
        if (header.empty()) {
            if (!fields.empty() && fields[0] == "ID") header = std::move(fields);
            continue;
        }
        if (fields.size() != header.size()) continue;
        if (fields[0].empty()) {  // the units row
            units = std::move(fields);
            continue;
        }
        KernelProfile k;
        for (std::size_t i = 0; i < header.size(); ++i) {
            const std::string& column = header[i];
            if (column == "Kernel Name" || column == "Function Name") {
                k.full_name = fields[i];
                k.name = ncu_short_kernel_name(fields[i]);
            } else if (column == "Grid Size") {
                k.grid = fields[i];
            } else if (column == "Block Size") {
                k.block = fields[i];
            } else if (column.find("__") != std::string::npos) {
                KernelProfile::Value v;
                v.metric = column;
                v.text = fields[i];
                v.unit = i < units.size() ? units[i] : "";
                v.numeric = ncu_number(v.text, v.number);
                if (v.numeric) v.number *= ncu_unit_scale(v.unit);
                k.values.push_back(std::move(v));
            }
        }
        report.kernels.push_back(std::move(k));
    }
    return report;
}

// ------------------------------------------------------------------ the machine's problems

SetupProblem no_ncu_problem() {
    SetupProblem p;
    const char* env = std::getenv("CUDALINGS_NCU");
    p.what = env && *env ? "CUDALINGS_NCU names " + std::string(env) + ", which is not a program"
                         : "Nsight Compute (ncu) is not installed";
    p.fix =
        "install it with the CUDA Toolkit (the nsight-compute package, e.g. "
        "`apt install cuda-nsight-compute-13-0`) or from developer.nvidia.com/nsight-compute, "
        "or point the checker at it with CUDALINGS_NCU=/path/to/ncu";
    p.anchor = "profile-no-ncu";
    return p;
}

SetupProblem profile_needs_gpu_problem(const std::string& why) {
    SetupProblem p;
    p.what = "profile needs a GPU" + (why.empty() ? std::string() : " (" + why + ")");
    p.fix =
        "without one use `cudalings check --explain`, which shows the emulator's teaching "
        "metrics";
    p.anchor = "profile-no-gpu";
    return p;
}

std::optional<SetupProblem> ncu_setup_problem(std::string_view output) {
    if (output.find("ERR_NVGPUCTRPERM") != std::string_view::npos) {
        SetupProblem p;
        p.what =
            "ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM): the driver "
            "lets only administrators profile";
        p.fix =
            "ask the machine's administrator to allow profiling for every user (the driver "
            "option NVreg_RestrictProfilingToAdminUsers=0, then a reboot), or run cudalings "
            "profile as root on a machine that is yours";
        p.anchor = "profile-permission";
        return p;
    }
    for (std::string_view unsupported :
         {"not supported on this device", "Profiling is not supported", "is not supported by"})
        if (output.find(unsupported) != std::string_view::npos) {
            SetupProblem p;
            p.what = "this ncu cannot profile this GPU";
            p.fix = "install the Nsight Compute that comes with a CUDA Toolkit for this GPU";
            p.anchor = "profile-no-ncu";
            return p;
        }
    return std::nullopt;
}

NcuRun read_ncu_run(const ChildResult& child, const std::string& ncu, const std::string& log_file) {
    NcuRun run;
    if (!child.started) {
        run.setup = cannot_run("ncu", ncu, child.start_error);
        return run;
    }
    bool logged = false;
    const std::string text =
        read_file(log_file, &logged) + "\n" + child.out.head + "\n" + child.err.head;
    run.report = parse_ncu_output(text);
    run.setup = ncu_setup_problem(text);
    return run;
}

// ------------------------------------------------------------------ the learner's view

namespace {

std::string profile_fixed(double v, int digits) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(digits) << v;
    return s.str();
}

std::string profile_duration_text(double ns) {
    if (ns < 0) return "—";
    if (ns >= 1e6) return profile_fixed(ns / 1e6, 2) + " ms";
    if (ns >= 1e3) return profile_fixed(ns / 1e3, 1) + " us";
    return profile_fixed(ns, 0) + " ns";
}

std::string profile_value_text(const KernelProfile::Value* v) {
    if (!v) return "—";
    if (!v->numeric) return v->text.empty() ? "—" : v->text;
    if (v->unit == "%") return profile_fixed(v->number, 1) + "%";
    const double n = v->number;
    const std::string number = n == std::floor(n) && std::fabs(n) < 1e15
                                   ? profile_fixed(n, 0)
                                   : profile_fixed(n, n < 10 ? 2 : 1);
    return v->unit.empty() ? number : number + " " + v->unit;
}

std::string profile_launch_text(const KernelProfile& k, const std::string& text,
                                const char* metric) {
    if (!text.empty()) return text;
    const double n = k.number(metric);
    return n >= 0 ? profile_fixed(n, 0) : "—";
}

}  // namespace

std::string render_profile(const ProfileOutcome& p, bool color) {
    const std::string bold = color ? "\033[1m" : "", dim = color ? "\033[2m" : "",
                      red = color ? "\033[31m" : "", reset = color ? "\033[0m" : "";
    std::ostringstream s;
    s << bold << "profile of " << p.step << reset << " (" << p.file << ")\n";
    s << dim << "ncu --clock-control none on " << (p.gpu.empty() ? "this GPU" : p.gpu)
      << ", one timed call after a warm-up: " << p.call.name
      << (p.call.column.empty() ? "" : " [" + p.call.column + "]") << reset << "\n";
    if (!p.call.verified)
        s << red << "the profiled call's output was wrong (" << p.call.failure.reason
          << "): `cudalings check` says why" << reset << "\n";
    if (p.report.kernels.empty()) s << "the timed call launched no kernel that ncu saw\n";
    std::size_t width = 0;
    for (const auto& m : p.metrics) {
        const MetricInfo* info = find_metric(m);
        width = std::max(width, display_width(info ? info->label : std::string_view(m)));
    }
    width = std::max<std::size_t>(width, 18);
    int index = 0;
    for (const auto& k : p.report.kernels) {
        ++index;
        s << "\n"
          << bold << "kernel " << index << " of " << p.report.kernels.size() << ": " << k.name
          << reset << "  grid " << profile_launch_text(k, k.grid, metric::kGrid) << ", block "
          << profile_launch_text(k, k.block, metric::kBlock) << "\n";
        s << "  " << pad_right("duration", width) << "  "
          << profile_duration_text(k.number(metric::kDuration)) << "\n";
        const double pct = k.number(metric::kDramPercent), rate = k.number(metric::kDramRate);
        s << "  " << pad_right("DRAM throughput", width) << "  "
          << (pct >= 0 ? profile_fixed(pct, 1) + "% of peak" : "—")
          << (rate >= 0 ? ", " + profile_fixed(rate / 1e9, 0) + " GB/s" : "") << "\n";
        const double occupancy = k.number(metric::kOccupancy);
        s << "  " << pad_right("achieved occupancy", width) << "  "
          << (occupancy >= 0 ? profile_fixed(occupancy, 1) + "%" : "—") << "\n";
        for (const auto& m : p.metrics) {
            const MetricInfo* info = find_metric(m);
            s << "  " << pad_right(info ? info->label : std::string_view(m), width) << "  "
              << pad_right(profile_value_text(k.find(m)), 14) << dim
              << (info ? std::string(info->meaning) : std::string("(") + m + ")") << reset << "\n";
        }
    }
    return s.str();
}

nlohmann::json profile_json(const ProfileOutcome& p) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : p.report.kernels) {
        nlohmann::json metrics = nlohmann::json::array();
        for (const auto& m : p.metrics) {
            const MetricInfo* info = find_metric(m);
            const KernelProfile::Value* v = k.find(m);
            nlohmann::json jm{{"name", m},
                              {"label", info ? info->label : ""},
                              {"meaning", info ? info->meaning : ""},
                              {"text", v ? v->text : ""},
                              {"unit", v ? v->unit : ""}};
            jm["value"] = v && v->numeric ? nlohmann::json(v->number) : nlohmann::json();
            metrics.push_back(jm);
        }
        auto number = [&](const char* m) {
            const double v = k.number(m);
            return v >= 0 ? nlohmann::json(v) : nlohmann::json();
        };
        kernels.push_back({{"name", k.name},
                           {"full_name", k.full_name},
                           {"grid", profile_launch_text(k, k.grid, metric::kGrid)},
                           {"block", profile_launch_text(k, k.block, metric::kBlock)},
                           {"duration_ns", number(metric::kDuration)},
                           {"dram_throughput_pct", number(metric::kDramPercent)},
                           {"dram_bytes_per_second", number(metric::kDramRate)},
                           {"achieved_occupancy_pct", number(metric::kOccupancy)},
                           {"metrics", metrics}});
    }
    return {{"step", p.step},
            {"file", p.file},
            {"gpu", p.gpu},
            {"ncu", p.ncu},
            {"case", p.call.name},
            {"column", p.call.column},
            {"size", p.call.size},
            {"verified", p.call.verified},
            {"failure", p.call.verified ? "" : p.call.failure.reason},
            {"kernels", kernels}};
}

}  // namespace cudalings
