/* A perfectly good shared library that is not a trace-inspector engine: no ti_ symbols. */
#include <stdint.h>

__attribute__((visibility("default"))) uint32_t not_an_engine_answer(void) { return 42u; }
