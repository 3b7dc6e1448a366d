#include "audio_in.h"

#include <stdlib.h>

#include "adapter.h"
#include "encoder.h"
#include "frontend.h"

ti_status audio_in_run(pass_ctx *p, float **rows) {
    const int64_t L = p->s->inputs.pcm_len, F = audio_frames(L), R = audio_rows(L);
    *rows = NULL;
    float *features = malloc((size_t)F * A_NMEL * sizeof(float));
    float *encoded = malloc((size_t)R * A_ED * sizeof(float));
    float *out = malloc((size_t)R * A_AD_HIDDEN * sizeof(float));
    ti_status status = TI_OK;
    if (features == NULL || encoded == NULL || out == NULL)
        status = err_fail(&p->err, TI_ERR_OUT_OF_MEMORY, "pass %u: out of memory for audio in (F = %lld)", p->index,
                         (long long)F);
    if (status == TI_OK) status = frontend_run(p, features);
    if (status == TI_OK) status = encoder_run(p, features, encoded);
    if (status == TI_OK) status = adapter_run(p, encoded, out);
    free(features);
    free(encoded);
    if (status == TI_OK)
        *rows = out;
    else
        free(out);
    return status;
}
