/* The network's forward pass, one copy per instruction set (bgbot/players/_contact.c includes
 * this file once for each, with FORWARD(name) naming its functions, FORWARD_TARGET its target
 * attribute, VEC the vector of VEC_N floats it computes with (GCC's vector extension: one
 * register), MAC(acc, v, r) / MAC_ONE(acc, v, r) giving acc + v * r of VECs / floats with one
 * rounding (a fused multiply-add, so every copy computes the same values bit for bit), and the
 * work a pass keeps in registers: COLUMNS of a 128-wide layer's outputs (a multiple of VEC_N
 * dividing 128) for PASS_BOARDS boards (dividing BLOCK) at once). It undefines them at its
 * end. */

static inline __attribute__((always_inline)) FORWARD_TARGET void
FORWARD(boards)(const MlpObject *m, int boards, const float *x, const unsigned char *allowed,
               double *out)
{
    float buffers[2][BLOCK][MAX_WIDTH];
    const float *in[BLOCK];
    for (int b = 0; b < boards; b++)
        in[b] = x + (size_t)b * N_INPUTS;
    float (*act)[MAX_WIDTH] = buffers[0];
    for (int layer = 0; layer <= m->n_layers; layer++) {
        int n_in = m->width[layer], n_out = m->width[layer + 1];
        const float *w = m->weights[layer];
        /* The live inputs, listed without a branch: which ReLUs are zero is not predictable,
         * and a branch per input mispredicts often. A zero of either sign is dead (as
         * `v == 0.0f`, without its NaN test). */
        int live[MAX_WIDTH > N_INPUTS ? MAX_WIDTH : N_INPUTS], n_live = 0;
        for (int i = 0; i < n_in; i++) {
            uint32_t any = 0;
            for (int b = 0; b < boards; b++) {
                uint32_t bits;
                memcpy(&bits, in[b] + i, sizeof bits);
                any |= bits << 1;
            }
            live[n_live] = i;
            n_live += any != 0;
        }
        if (n_out == FAST_WIDTH) {
            /* The same sums as the general loop, held in vector registers across the inputs,
             * COLUMNS of the layer's outputs at a time (as many as the registers hold) */
            for (int c0 = 0; c0 < FAST_WIDTH; c0 += COLUMNS) {
                VEC acc[BLOCK][COLUMNS / VEC_N];
                for (int b = 0; b < boards; b++)
                    memcpy(acc[b], m->bias[layer] + c0, sizeof acc[b]);
                for (int k = 0; k < n_live; k++) {
                    int i = live[k];
                    VEC v[BLOCK];
                    for (int b = 0; b < boards; b++)
                        v[b] = in[b][i] + (VEC){0};
                    const float *row = w + (size_t)i * FAST_WIDTH + c0;
                    for (int q = 0; q < COLUMNS / VEC_N; q++) {
                        VEC r;
                        memcpy(&r, row + q * VEC_N, sizeof r);
                        for (int b = 0; b < boards; b++)
                            acc[b][q] = MAC(acc[b][q], v[b], r);
                    }
                }
                for (int b = 0; b < boards; b++)
                    memcpy(act[b] + c0, acc[b], sizeof acc[b]);
            }
        } else
            for (int b = 0; b < boards; b++) {
                float *restrict sums = act[b];
                memcpy(sums, m->bias[layer], sizeof(float) * (size_t)n_out);
                for (int k = 0; k < n_live; k++) {
                    int i = live[k];
                    float v = in[b][i];
                    const float *restrict row = w + (size_t)i * (size_t)n_out;
                    for (int j = 0; j < n_out; j++)
                        sums[j] = MAC_ONE(sums[j], v, row[j]);
                }
            }
        if (layer < m->n_layers)
            for (int b = 0; b < boards; b++)
                for (int j = 0; j < n_out; j++)
                    act[b][j] = act[b][j] > 0.0f ? act[b][j] : 0.0f;
        for (int b = 0; b < boards; b++)
            in[b] = act[b];
        act = act == buffers[0] ? buffers[1] : buffers[0];
    }
    for (int b = 0; b < boards; b++) { /* in[b] holds board b's six logits */
        const float *logits = in[b];
        const unsigned char *mask = allowed + (size_t)b * N_OUTCOMES;
        double top = -1e300, total = 0.0, e[N_OUTCOMES];
        for (int k = 0; k < N_OUTCOMES; k++)
            if (mask[k] && logits[k] > top)
                top = logits[k];
        for (int k = 0; k < N_OUTCOMES; k++) {
            e[k] = mask[k] ? exp((double)logits[k] - top) : 0.0;
            total += e[k];
        }
        for (int k = 0; k < N_OUTCOMES; k++)
            out[(size_t)b * N_OUTCOMES + k] = e[k] / total;
    }
}

/* One board, and BLOCK boards. */
static FORWARD_TARGET void FORWARD(one)(const MlpObject *m, const float *x,
                                        const unsigned char *allowed, double *out)
{
    FORWARD(boards)(m, 1, x, allowed, out);
}

static FORWARD_TARGET void FORWARD(block)(const MlpObject *m, const float *x,
                                          const unsigned char *allowed, double *out)
{
    for (int b = 0; b < BLOCK; b += PASS_BOARDS) /* PASS_BOARDS divides BLOCK */
        FORWARD(boards)(m, PASS_BOARDS, x + (size_t)b * N_INPUTS, allowed + (size_t)b * N_OUTCOMES,
                        out + (size_t)b * N_OUTCOMES);
}

#undef FORWARD
#undef FORWARD_TARGET
#undef VEC
#undef VEC_N
#undef COLUMNS
#undef PASS_BOARDS
#undef MAC
#undef MAC_ONE
