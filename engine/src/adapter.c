#include "adapter.h"

#include "audio_kernels.h"
#include "records.h"

ti_status adapter_run(pass_ctx *p, const float *encoded, float *rows) {
    const audio_weights *w = &p->s->weights.audio;
    const int64_t R = audio_rows(p->s->inputs.pcm_len);
    for (int64_t t = 0; t < R; t++) {
        float normed[A_ED], hidden[A_AD_HIDDEN];
        ak_layernorm(encoded + t * A_ED, w->ad_norm_w, w->ad_norm_b, normed, A_ED);
        ak_linear(w->ad_l1_w, w->ad_l1_b, normed, hidden, A_AD_HIDDEN, A_ED);
        for (int i = 0; i < A_AD_HIDDEN; i++) hidden[i] = ak_gelu_erf(hidden[i]);
        ak_linear(w->ad_l2_w, w->ad_l2_b, hidden, rows + t * A_AD_HIDDEN, A_AD_HIDDEN, A_AD_HIDDEN);
    }
    ti_status status = rec_boundary(p, p->cat->audio.ad[AD_OUT], rows);
    int32_t valid = (int32_t)R;
    if (status == TI_OK) status = rec_boundary(p, p->cat->audio.ad[AD_VALID_ROWS], &valid);
    return status;
}
