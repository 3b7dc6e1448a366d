/* A valid engine whose prefill forks a child that sleeps 30 s holding the host's descriptors. */
#define TOY_ENGINE_NAME "fork-linger"
#define TOY_FAULT TOY_FAULT_FORK_LINGER
#define TOY_FAULT_AFTER 2
#include "toy_engine.h"
