/* An otherwise valid engine that speaks ABI version 2: the host must refuse it. */
#define TOY_ENGINE_NAME "abi2"
#define TOY_ABI_VERSION_VALUE 2u
#include "toy_engine.h"
