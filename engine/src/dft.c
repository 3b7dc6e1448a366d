#include "dft.h"

#include <math.h>
#include <pthread.h>

#include "audio_model.h"

static float g_cos512[A_NFFT], g_sin512[A_NFFT];
static float g_cos1280[A_ISTFT_N], g_sin1280[A_ISTFT_N];
static pthread_once_t g_tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void) {
    const double two_pi = 6.283185307179586476925286766559;
    for (int j = 0; j < A_NFFT; j++) {
        g_cos512[j] = (float)cos(two_pi * (double)j / (double)A_NFFT);
        g_sin512[j] = (float)sin(two_pi * (double)j / (double)A_NFFT);
    }
    for (int j = 0; j < A_ISTFT_N; j++) {
        g_cos1280[j] = (float)cos(two_pi * (double)j / (double)A_ISTFT_N);
        g_sin1280[j] = (float)sin(two_pi * (double)j / (double)A_ISTFT_N);
    }
}

static void tables(void) { pthread_once(&g_tables_once, build_tables); }

void dft_power512(const float *frame, float *power) {
    tables();
    for (int k = 0; k < A_NBINS; k++) {
        float re = 0.0f, im = 0.0f;
        int idx = 0; /* k * n mod 512 */
        for (int n = 0; n < A_NFFT; n++) {
            re += frame[n] * g_cos512[idx];
            im -= frame[n] * g_sin512[idx];
            idx = (idx + k) & (A_NFFT - 1);
        }
        power[k] = re * re + im * im;
    }
}

void dft_irfft1280(const float *spectrum, float *out) {
    tables();
    const int last = A_ISTFT_N / 2; /* 640 */
    for (int n = 0; n < A_ISTFT_N; n++) {
        float acc = 0.0f;
        int idx = n; /* k * n mod 1280, from k = 1 */
        for (int k = 1; k < last; k++) {
            acc += spectrum[2 * k] * g_cos1280[idx] - spectrum[2 * k + 1] * g_sin1280[idx];
            idx += n;
            if (idx >= A_ISTFT_N) idx -= A_ISTFT_N;
        }
        float nyquist = (n & 1) ? -spectrum[2 * last] : spectrum[2 * last];
        out[n] = (spectrum[0] + nyquist + 2.0f * acc) / (float)A_ISTFT_N;
    }
}
