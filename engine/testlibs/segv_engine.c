/* A valid ABI-1 engine (three boundaries) that emits 2 records of decode pass 1, then
 * dereferences NULL: the host must survive it, name pass 1 and toy.mix, and keep the records. */
#define TOY_ENGINE_NAME "segv"
#define TOY_FAULT TOY_FAULT_SEGV
#define TOY_FAULT_AFTER 2
#include "toy_engine.h"
