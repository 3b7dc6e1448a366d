/* A valid engine that emits toy.embed of decode pass 1 from a thread of its own (created and joined inside ti_decode). */
#define TOY_ENGINE_NAME "foreign-thread"
#define TOY_FAULT TOY_FAULT_FOREIGN_THREAD
#define TOY_FAULT_AFTER 1
#include "toy_engine.h"
