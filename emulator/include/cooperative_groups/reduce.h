// cudalings CPU emulator: cooperative_groups/reduce.h is part of the emulator's cooperative_groups.h.
#pragma once
#include "../cooperative_groups.h"
