/* A valid ABI-1 engine that calls abort() in decode pass 1 after 2 records (SIGABRT). */
#define TOY_ENGINE_NAME "abort"
#define TOY_FAULT TOY_FAULT_ABORT
#define TOY_FAULT_AFTER 2
#include "toy_engine.h"
