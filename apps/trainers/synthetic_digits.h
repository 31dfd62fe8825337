// Learnable synthetic MNIST: seven-segment style digits drawn with jittered
// position, scale, slant, stroke width and wobbly endpoints, an occasional
// missing or stray stroke, and background noise. Each class has a distinct
// stroke pattern, so a small MLP reaches ~90% within one epoch, while the
// jitter and strays keep it from reaching 100%.
#pragma once

#include <cstdint>

#include "idx_file.h"

namespace fg::trainers {

struct SyntheticDigits {
  IdxImages images;  // count x 28 x 28
  IdxLabels labels;  // 0..9, balanced in random order
};

// Deterministic for a given (count, seed) on every platform (own RNG maths).
SyntheticDigits generate_synthetic_digits(uint32_t count, uint64_t seed);

}  // namespace fg::trainers
