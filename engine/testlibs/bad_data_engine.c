/* A valid ABI-1 engine whose second record of decode pass 1 (toy.mix) points its data at
 * unmapped memory: the host faults while copying it, inside the record callback. The host must
 * survive it, name pass 1 and toy.mix (received, never stored), and keep the records before it. */
#define TOY_ENGINE_NAME "bad-data"
#define TOY_FAULT TOY_FAULT_BAD_DATA
#define TOY_FAULT_AFTER 2
#include "toy_engine.h"
