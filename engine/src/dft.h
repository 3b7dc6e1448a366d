/*
 * Direct O(N^2) DFTs of part 2: the 512-point power spectrum of the frontend and the 1280-point
 * inverse real DFT of the detokenizer's ISTFT. Twiddles cos/sin(2 pi j / N) are computed once per
 * process in double and stored as float (read-only afterwards); the sums run in float32 in
 * index order.
 */
#ifndef TI_DFT_H
#define TI_DFT_H

/* power[k] = Re^2 + Im^2 of X[k] = sum_n frame[n] e^{-2 pi i k n / 512}, k = 0..256. */
void dft_power512(const float *frame, float *power);

/*
 * out[n] = (1/1280) (Re S_0 + (-1)^n Re S_640 + 2 sum_{k=1..639} Re(S_k e^{2 pi i k n / 1280})),
 * n = 0..1279, for S interleaved (re, im) complex values S_0..S_640 (the imaginary parts of S_0
 * and S_640 are ignored, as irfft does).
 */
void dft_irfft1280(const float *spectrum, float *out);

#endif
