// The course's bad (and unusual) submissions, read one way: the fixtures
// (checks/NN_topic/fixtures/*.cu), the emulator's corpus (checks/NN_topic/corpus/*.cu) and the
// hostile grading submissions (tests/grading/hostile*/*.cu).
//
// A file starts with its header: the leading block of `//` lines. Its keys are lines
// `// key: value` anywhere in that block:
//   expect            the verdict on a GPU                  reason           a substring of it
//   step              lesson/NN_step.cu it replaces         flags            extra check flags
//   emulated          the verdict under the CPU emulator    needs            gpu (default) | cpu
//   emulated-detail   in the first failing case, emulated   timing           yes: graded timed
//   emulated-advice   in the step's advice, emulated        base             see below
//   setup, in-process, timed, reason-emulated               (hostile submissions; timed:
//   in-process-emulated, in-process-timed                    yes also timed, only timed alone;
//                                                            in-process-*: that verdict there)
// A `// word: ...` line before the header's first blank `//` line whose word is no key is kept
// as an unknown key (`dev check` reports it); further down such lines are prose.
//
// What follows the header is the body, in one of two forms:
//   whole   the rest of the file, as the checker compiles it
//   patch   a unified diff (`--- BASE`, `+++ FIXTURE`, `@@` hunks) against the BASE'S BODY: the
//           base file (`// base: solutions/NN_x/MM_y.cu`, else solutions/<step>) without its own
//           leading `//` block, so that the solution's prose can change under it. The `---` line
//           names the base.
// A fixture's text, materialised, is its own header (without `base:` lines) and then its body,
// patched: byte for byte the file the fixture was before it became a patch, so every line number
// a fixture's assertions name holds.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cudalings {

enum class FixtureKind { fixture, corpus, hostile };
enum class FixtureForm { whole, patch };
const char* to_string(FixtureKind kind);
const char* to_string(FixtureForm form);
bool parse_fixture_kind(const std::string& text, FixtureKind& kind);

struct FixtureHeader {
    std::string expect, emulated, emulated_detail, emulated_advice, reason, reason_emulated;
    std::string step;  // "lesson/NN_step.cu"; the lesson's first step when the header has none
    bool step_defaulted = false;
    std::string base;  // relative to the course root: `base:`, else solutions/<step>
    std::string flags_text, needs, timing, setup, in_process, timed;
    // A hostile submission's verdict in the runner's own process where it differs from
    // `in_process`: under the emulator, and graded timed (on a GPU, the reference loaded).
    std::string in_process_emulated, in_process_timed;
    std::vector<std::string> flags;  // flags_text, split at spaces
    // Every known key's line, in order (a key given twice is there twice; the fields above hold
    // its last value).
    std::vector<std::pair<std::string, std::string>> keys;
    std::vector<std::string> unknown;  // keys no reader knows, before the first blank `//` line
};

struct Fixture {
    std::string path;  // as given
    std::string rel;   // relative to the course root where it lies under it, else the path
    std::string name;  // the file's name without .cu
    std::string lesson;
    FixtureKind kind = FixtureKind::fixture;
    FixtureForm form = FixtureForm::whole;
    std::string text;    // the file as stored
    std::string header;  // its leading `//` block, verbatim
    std::string body;    // the rest: the whole body, or the patch
    FixtureHeader keys;
    std::string error;  // the file could not be read
};

// The one reader of a fixture, corpus or hostile file. `root` is the course root (for the default
// step and the relative path); empty: the one the path lies in (checks/L/fixtures/F.cu,
// checks/L/corpus/F.cu, tests/grading/DIR/F.cu), if any.
Fixture read_fixture(const std::string& path, const std::string& root = "");
// The same for text that is not in a file (tests; `dev fixtures --rediff`).
Fixture parse_fixture(const std::string& path, const std::string& text, const std::string& root);

// The course root a fixture's path lies in, from its place; "" when it has none of those places.
std::string fixture_course_root(const std::string& path);

// The file a fixture stands for: the stored text of a whole fixture, the header and the patched
// base of a patch. False, with `why` naming the hunk and the first line that differs, when the
// patch does not apply.
bool materialise(const Fixture& fixture, const std::string& root, std::string* text,
                 std::string* why);

// The body of a file (what follows its leading `//` block) and the number of lines of that block.
std::string file_body(const std::string& text, int* header_lines = nullptr);

// A strict unified diff: context and removed lines must match exactly; a hunk may sit at an
// offset from where it says; no fuzz. `base_name` names the base in messages; `base_first_line`
// is the base text's first line's number in the file it comes from.
bool apply_patch(const std::string& base, const std::string& patch, const std::string& base_name,
                 int base_first_line, std::string* out, std::string* why);
// A unified diff, 3 lines of context, of `before` into `after` (what apply_patch applies), with
// `--- from_label` and `+++ to_label`; "" when they are the same.
std::string unified_diff(const std::string& before, const std::string& after,
                         const std::string& from_label, const std::string& to_label);

// A fixture rewritten as a patch of its base: its header (with `base:` where `base` is not the
// step's solution) and the diff of `edited`'s body against the base's body. `edited` is the whole
// file as the fixture should materialise (its own header lines are taken from it). False, with
// `why`, when the base cannot be read or the result would not materialise to `edited`.
bool rediff_fixture(const std::string& fixture_path, const std::string& edited,
                    const std::string& root, const std::string& base, std::string* text,
                    std::string* why);

// Every file of a kind under `root`, sorted: checks/*/fixtures/*.cu (fixture),
// checks/*/corpus/*.cu (corpus), tests/grading/hostile{,_split}/*.cu (hostile);
// with `lesson`, only that lesson's (in place of the *).
std::vector<std::string> fixture_files(const std::string& root, FixtureKind kind,
                                       const std::string& lesson = "");

// `cudalings dev fixtures`: every file of `kinds` whose path (relative to the root) holds one of
// `filters` (all when none), each with its header read and, for a patch, materialised; with
// `write_dir`, each file's text written to write_dir/<its path in the course>.
struct ListedFixture {
    Fixture fixture;
    std::string file;  // where its text was written ("" without write_dir)
};
struct FixtureListing {
    std::vector<ListedFixture> fixtures;
    std::vector<std::pair<std::string, std::string>> errors;  // (path, what is wrong)
};
FixtureListing list_fixtures(const std::string& root, const std::vector<FixtureKind>& kinds,
                             const std::vector<std::string>& filters,
                             const std::string& write_dir = "");
// {"fixtures": [{"path", "name", "lesson", "kind", "form", "step", "base", "expect", "emulated",
// "reason", "reason_emulated", "emulated_detail", "emulated_advice", "flags": [...], "needs",
// "timing", "setup", "in_process", "timed", "file"?}], "errors": [{"path", "message"}]}
nlohmann::json to_json(const FixtureListing& listing);

}  // namespace cudalings
