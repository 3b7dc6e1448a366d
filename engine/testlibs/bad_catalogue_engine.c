/* An ABI-1 engine whose ti_describe() is well-formed JSON that breaks the schema: the second
 * boundary declares the dtype "f99" and the first input has no shape. The host must name both
 * fields (boundaries[1].dtype, inputs[0].shape). */
#define TOY_ENGINE_NAME "bad-catalogue"
#define TOY_DESCRIBE_JSON                                                                          \
    "{\"abi_version\":1,"                                                                          \
    "\"engine\":{\"name\":\"bad-catalogue\",\"version\":\"0.1.0\",\"build_id\":\"testlib\"},"        \
    "\"model\":{},"                                                                                \
    "\"inputs\":[{\"name\":\"prompt_tokens\",\"dtype\":\"i32\",\"required\":true,\"doc\":\"\"}],"     \
    "\"boundaries\":["                                                                             \
    "{\"name\":\"toy.embed\",\"stage\":\"toy\",\"dtype\":\"f32\",\"shape\":[\"T\",4],"                 \
    "\"emit\":\"every_pass\",\"injectable\":true,\"doc\":\"\"},"                                    \
    "{\"name\":\"toy.mix\",\"stage\":\"toy\",\"dtype\":\"f99\",\"shape\":[\"T\",4],"                   \
    "\"emit\":\"every_pass\",\"injectable\":false,\"doc\":\"\"}],"                                  \
    "\"options\":[]}"
#include "toy_engine.h"
