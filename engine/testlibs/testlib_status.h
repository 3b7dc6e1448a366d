/*
 * testlib_status.h — ti_status_string for the test libraries (toy_engine.h and the engines that
 * do not build on it), so each names every status the same way. Included once per library.
 */
#ifndef TESTLIB_STATUS_H
#define TESTLIB_STATUS_H

#include "trace_abi.h"

TI_API const char *ti_status_string(ti_status status) {
    switch (status) {
    case TI_OK: return "TI_OK";
    case TI_ERR_INVALID_ARGUMENT: return "TI_ERR_INVALID_ARGUMENT";
    case TI_ERR_IO: return "TI_ERR_IO";
    case TI_ERR_FORMAT: return "TI_ERR_FORMAT";
    case TI_ERR_STATE: return "TI_ERR_STATE";
    case TI_ERR_UNKNOWN_NAME: return "TI_ERR_UNKNOWN_NAME";
    case TI_ERR_SHAPE: return "TI_ERR_SHAPE";
    case TI_ERR_OUT_OF_MEMORY: return "TI_ERR_OUT_OF_MEMORY";
    case TI_ERR_ABORTED: return "TI_ERR_ABORTED";
    case TI_ERR_INTERNAL: return "TI_ERR_INTERNAL";
    }
    return "TI_ERR_UNKNOWN_STATUS";
}

#endif
