/* A library whose load-time constructor dereferences NULL: the load itself crashes (inside dlopen). */
#define TOY_ENGINE_NAME "ctor-segv"
#define TOY_FAULT TOY_FAULT_NONE
#define TOY_FAULT_AFTER 2
#define TOY_CONSTRUCTOR_FAULT TOY_CONSTRUCTOR_SEGV
#include "toy_engine.h"
