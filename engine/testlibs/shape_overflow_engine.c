/* A valid engine whose toy.embed of decode pass 1 claims shape [2^33, 2^31]: 2^64 elements, a product that overflows 64 bits. */
#define TOY_ENGINE_NAME "shape-overflow"
#define TOY_FAULT TOY_FAULT_SHAPE_OVERFLOW
#define TOY_FAULT_AFTER 1
#include "toy_engine.h"
