// cudalings CPU emulator: cooperative_groups/scan.h is part of the emulator's cooperative_groups.h.
#pragma once
#include "../cooperative_groups.h"
