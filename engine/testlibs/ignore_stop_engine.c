/* A valid engine that, in decode pass 1, emits a boundary outside its catalogue, ignores the host's request to stop and returns TI_OK. */
#define TOY_ENGINE_NAME "ignore-stop"
#define TOY_FAULT TOY_FAULT_IGNORE_STOP
#define TOY_FAULT_AFTER 2
#include "toy_engine.h"
