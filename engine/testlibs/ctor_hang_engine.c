/* A library whose load-time constructor spins forever: the load never returns. */
#define TOY_ENGINE_NAME "ctor-hang"
#define TOY_FAULT TOY_FAULT_NONE
#define TOY_FAULT_AFTER 2
#define TOY_CONSTRUCTOR_FAULT TOY_CONSTRUCTOR_HANG
#include "toy_engine.h"
