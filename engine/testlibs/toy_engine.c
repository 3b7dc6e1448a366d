/* A well-behaved three-boundary engine (see toy_engine.h): the host tests' control case. */
#include "toy_engine.h"
