#include "protocol.h"

namespace cudalings {

void to_json(nlohmann::json& j, const Verdict& v) { j = std::string(name(v)); }

void from_json(const nlohmann::json& j, Verdict& v) {
    if (!j.is_string() || !parse_verdict(j.get<std::string>(), v)) v = Verdict::InternalError;
}

}  // namespace cudalings
