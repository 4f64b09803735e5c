// The emulator's access pictures (`--explain`): for each access line of a kernel, one warp's
// request as it was — which byte of which array each lane touched, and the 32-byte sectors
// (global memory) or the 32 banks (shared memory) that request needed. The emulator sends
// each as an EmulatorFinding of kind "access" whose detail is a JSON object (docs/emulator.md,
// "Access pictures"); this file reads them and draws them: as text for `check --explain`, as
// SVG for `cudalings report`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "protocol.h"

namespace cudalings {

struct AccessPicture {
    std::string file;  // the access's line
    int line = 0;
    std::string message;    // the emulator's sentence
    std::string case_name;  // the case it was taken in
    bool shared = false, store = false;
    unsigned bytes = 0;  // per lane
    std::string array;
    std::uint64_t array_bytes = 0;
    std::vector<unsigned> block{0, 0, 0};
    unsigned warp = 0, active = 0;
    std::vector<std::optional<long long>> offsets;  // 32 lanes: byte offset in the array
    // global: the sectors touched (byte offsets in the array), each lane's first sector (index
    // in `sectors`), the 128-byte lines, the sectors a coalesced request would need
    std::vector<long long> sectors;
    std::vector<std::optional<unsigned>> lane_sector;
    unsigned lines = 0, ideal_sectors = 0;
    // shared: each lane's first bank, the worst bank's distinct words, the wavefronts
    std::vector<std::optional<unsigned>> banks;
    unsigned degree = 0, wavefronts = 0, ideal_wavefronts = 0;
};

// The pictures of a case, one per access, in line order (findings of another kind, or of an
// unknown format, are skipped; of several launches' pictures of one access, the one with the
// most active lanes, then the most sectors or wavefronts beyond the ideal). The emulator
// already sent each launch's worst request among its widest.
std::vector<AccessPicture> access_pictures(const CaseResult& c);
// A step's pictures: of each access, the picture with the most active lanes among the cases
// that passed, the largest case's where several have as many (a case of 4 columns shows 4
// lanes of a row where a wider one shows the whole warp; a 1×33 matrix's warp is not what a
// lesson means by a row).
std::vector<AccessPicture> step_access_pictures(const std::vector<CaseResult>& cases);
// The case whose teaching output a step shows once (`check --explain` without -v, the report):
// of the cases that passed with the emulator's metrics or pictures (not the largest sizes'
// launches-only case, which has neither), the one whose narrowest picture has the most active
// lanes, the largest of those; null when there is none.
const CaseResult* explained_case(const std::vector<CaseResult>& cases);

// In a step's JSON report ("access") and the state directory, and back.
nlohmann::json to_json(const AccessPicture& p);
AccessPicture access_picture_from_json(const nlohmann::json& j);  // throws on a bad object

// The picture's case by its size, the part of its name before the values' description
// ("255×257" of "255×257, value = row·4096 + column").
std::string case_size(const AccessPicture& p);

// What the picture says, in a few words: "4 sectors = coalesced", "32-way bank conflict".
std::string access_verdict(const AccessPicture& p);
// A few lines for a terminal (at most 80 columns with `indent` up to 8): the line, which warp of
// which case, the lanes, and the sector or bank each lane touched.
std::string access_text(const AccessPicture& p, const std::string& indent);
// One picture as an SVG element: 32 lanes on top, a line from each active lane to the sector or
// bank it touched below, conflicts and excess sectors highlighted, a caption.
std::string access_svg(const AccessPicture& p);

}  // namespace cudalings
