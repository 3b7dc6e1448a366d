/* An ABI-1 engine whose ti_describe() returns malformed JSON (truncated mid-object). */
#define TOY_ENGINE_NAME "bad-describe"
#define TOY_DESCRIBE_JSON "{\"abi_version\":1,\"engine\":{\"name\":\"bad-describe\",\"version\":"
#include "toy_engine.h"
