/* A valid ABI-1 engine that emits 1 record of decode pass 1, then spins forever:
 * the host's watchdog must kill it and report a timeout after toy.embed. */
#define TOY_ENGINE_NAME "hang"
#define TOY_FAULT TOY_FAULT_HANG
#define TOY_FAULT_AFTER 1
#include "toy_engine.h"
