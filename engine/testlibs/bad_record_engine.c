/* A valid engine whose toy.mix of decode pass 1 (a strided record) breaks the record contract in
 * the way TOY_BAD_RECORD (environment) names: pass_index, pass_kind, name, null_name, dtype, rank,
 * null_shape, extent, stride, huge_stride, huge_shape, byte_length, data, duplicate. The host must stop the pass and name
 * the violation (tests/engine-host/record-contract.test.ts). */
#define TOY_ENGINE_NAME "bad-record"
#define TOY_FAULT TOY_FAULT_BAD_RECORD
#define TOY_FAULT_AFTER 2
#include "toy_engine.h"
