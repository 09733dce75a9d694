/* The kernels of the heuristic player in C, shared by its two extensions: bgbot.players._contact
 * (what the player runs: the evaluations, the look-ahead, the rollout kernel) and
 * bgbot.players._selfplay (what only training runs: self-play, the screening duels). Both
 * include this header, so there is one source of each kernel (as bgbot/core/_movegen.h is the
 * one move generator).
 *
 * * the contact features of features.py (`feature_vector`: the same order, the same float
 *   operations, so the same values) and the network inputs of network.py (`encode_inputs`);
 * * the position classes of position_class.py (`side_class`), and one evaluation per class
 *   behind `evaluate_on_roll`: a finished game its outcome, a crashed position the crashed
 *   network when the evaluator has one, a contact position the evaluator's own function (the
 *   linear heads or the network), a race outside the bear-off zone the race network or the
 *   race formula of race.py, and what is left (the bear-off database's zone, or races when the
 *   evaluator has neither) a Python call-back;
 * * the 21-roll loops of heuristic.py's look-ahead over the move generator.
 *
 * Numbering as in features.py: each side counts its own points 1..24 from its home, 25 = its bar
 * (index 24 of its 25 counts); a chequer of one side on its point q is on the other side's point
 * 25 - q; bit masks use bit p for own point p.
 *
 * Include <Python.h> before this header. Helpers one of the two modules does not use are
 * MAYBE_UNUSED (_movegen.h's). `KERNELS_VERSION` changes with any structure the two modules
 * share (`EvalBase`): _selfplay refuses a _contact built from another version.
 */

#ifndef BGBOT_KERNELS_H
#define BGBOT_KERNELS_H

#define KERNELS_VERSION 5

#include <math.h>
#include <stdint.h>
#include <string.h>

#define N_POINT 37  /* POINT_FEATURES */
#define N_GLOBAL 13 /* GLOBAL_FEATURES */
#define N_CROSS 17  /* CROSS_FEATURES */
#define N_BLOCK (N_POINT + N_GLOBAL)
#define N_FEATURES (2 * N_BLOCK + N_CROSS + 1)
#define N_HEADS 5
#define N_LOCATIONS 25
#define CHEQUERS 15

/* Indices in POINT_FEATURES after made_1..made_24 (0..23). */
enum {
    F_BLOTS_HOME = 24, F_BLOTS_OUTFIELD, F_BLOTS_BACK, F_STACK_HOME, F_STACK_OUTSIDE, F_PIPS,
    F_BAR, F_BACK, F_OUTSIDE_HOME, F_CROSSOVERS, F_BURIED, F_SPARES_BUILDERS, F_BUILDERS
};

/* ------------------------------------------------------------------------------ bit helpers */

static int popcount64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(x);
#else
    int n = 0;
    while (x) {
        x &= x - 1;
        n++;
    }
    return n;
#endif
}

/* Python's int.bit_length() of a 32-bit value. */
static int bit_length32(uint32_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return x ? 32 - __builtin_clz(x) : 0;
#else
    int n = 0;
    while (x) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

/* ----------------------------------------------------------------------------------- tables */

static uint64_t roll_bit(int a, int b)
{
    return (UINT64_C(1) << ((a - 1) * 6 + (b - 1))) | (UINT64_C(1) << ((b - 1) * 6 + (a - 1)));
}

/* Hitting rolls at each distance (features._hit_rolls): those that always hit, and those that
 * hit when their intermediate points are open: all of `mask` open (doubles), or at least one
 * point of `mask` open (the two orders of a non-double). */
typedef struct {
    uint64_t rolls;
    uint32_t mask;
    int all_open;
} HitCondition;

#define MAX_CONDITIONS 8
static uint64_t hit_direct[N_LOCATIONS];
static HitCondition hit_conditions[N_LOCATIONS][MAX_CONDITIONS];
static int hit_count[N_LOCATIONS];
static unsigned char escapes[4096];
/* Non-double rolls {a, b} (36-bit sets) by the 6-bit set of dice numbers d (bit d - 1) that
 * bring a chequer to a point: either number (`make_one`) or both (`make_two`). */
static uint64_t make_one[64], make_two[64];

static void build_tables(void)
{
    for (int w = 0; w < 64; w++) {
        make_one[w] = make_two[w] = 0;
        for (int a = 1; a <= 6; a++) {
            for (int b = a + 1; b <= 6; b++) {
                int near = (w >> (a - 1)) & 1, far = (w >> (b - 1)) & 1;
                if (near || far)
                    make_one[w] |= roll_bit(a, b);
                if (near && far)
                    make_two[w] |= roll_bit(a, b);
            }
        }
    }
    for (int d = 1; d <= 24; d++) {
        hit_direct[d] = 0;
        hit_count[d] = 0;
        for (int a = 1; a <= 6; a++) {
            for (int b = a; b <= 6; b++) {
                uint64_t rolls = roll_bit(a, b);
                if (a == b) {
                    for (int k = 1; k <= 4; k++) {
                        if (a * k != d)
                            continue;
                        if (k == 1) {
                            hit_direct[d] |= rolls;
                        } else {
                            uint32_t mask = 0;
                            for (int j = 1; j < k; j++)
                                mask |= UINT32_C(1) << (a * j - 1);
                            HitCondition c = {rolls, mask, 1};
                            hit_conditions[d][hit_count[d]++] = c;
                        }
                        break;
                    }
                } else if (d == a || d == b) {
                    hit_direct[d] |= rolls;
                } else if (d == a + b) {
                    HitCondition c = {rolls, (UINT32_C(1) << (a - 1)) | (UINT32_C(1) << (b - 1)),
                                      0};
                    hit_conditions[d][hit_count[d]++] = c;
                }
            }
        }
    }
    for (uint32_t blocked = 0; blocked < 4096; blocked++) {
        int count = 0;
        for (int a = 1; a <= 6; a++) {
            for (int b = 1; b <= 6; b++) {
                int ok;
                if (a == b)
                    ok = !((blocked >> (a - 1)) & 1) && !((blocked >> (2 * a - 1)) & 1);
                else
                    ok = !((blocked >> (a + b - 1)) & 1) &&
                         (!((blocked >> (a - 1)) & 1) || !((blocked >> (b - 1)) & 1));
                count += ok;
            }
        }
        escapes[blocked] = (unsigned char)count;
    }
}

/* Rolls (36-bit set) with which a chequer hits a blot `distance` (1..24) pips ahead; bit t - 1
 * of `blocked` says the point t pips ahead of the hitter is blocked (higher bits are ignored). */
static uint64_t hit_rolls(int distance, uint32_t blocked)
{
    uint64_t rolls = hit_direct[distance];
    const HitCondition *c = hit_conditions[distance];
    for (int i = hit_count[distance]; i > 0; i--, c++) {
        uint32_t closed = blocked & c->mask;
        if (c->all_open ? closed == 0 : closed != c->mask)
            rolls |= c->rolls;
    }
    return rolls;
}

/* ------------------------------------------------------------------------------- one side */

typedef struct {
    uint32_t made;     /* bit p: own point p (1..24) holds two or more chequers */
    uint32_t blots;    /* bit p: own point p (1..24) holds exactly one */
    uint32_t occupied; /* bit p: own point p (1..25) holds a chequer */
    int pips, off, bar, home_made, prime, prime_top, rearmost, back, anchors;
} Side;

#define HOME_MASK UINT32_C(0x7E)
#define ANCHOR_MASK (UINT32_C(0x7E) << 18)

/* features.side_info */
static void side_info(const int *s, Side *o)
{
    uint32_t made = 0, blots = 0, occupied = 0;
    int pips = 0, total = 0, back = 0;
    for (int i = 0; i < N_LOCATIONS; i++) {
        int c = s[i];
        if (!c)
            continue;
        uint32_t bit = UINT32_C(1) << (i + 1);
        occupied |= bit;
        pips += c * (i + 1);
        total += c;
        if (i < 24) {
            if (c >= 2)
                made |= bit;
            else
                blots |= bit;
        }
        if (i >= 18)
            back += c;
    }
    uint32_t run = made, top = 0;
    int length = 0;
    while (run) {
        top = run;
        run &= run << 1;
        length++;
    }
    o->made = made;
    o->blots = blots;
    o->occupied = occupied;
    o->pips = pips;
    o->off = CHEQUERS - total;
    o->bar = s[24];
    o->home_made = popcount64(made & HOME_MASK);
    o->prime = length;
    o->prime_top = made ? bit_length32(top) - 1 : 0;
    o->rearmost = occupied ? bit_length32(occupied) - 1 : 0;
    o->back = back;
    o->anchors = popcount64(made & ANCHOR_MASK);
}

/* features.point_feature_sums: accumulated location by location, as in Python. */
static void point_feature_sums(const int *s, double *out)
{
    memset(out, 0, N_POINT * sizeof(double));
    for (int index = 0; index < N_LOCATIONS; index++) {
        int count = s[index];
        if (!count)
            continue;
        int point = index + 1;
        out[F_PIPS] += (double)(count * point) / 100.0;
        if (index == 24) {
            out[F_BAR] += (double)count;
            out[F_BACK] += (double)count / 5.0;
            out[F_OUTSIDE_HOME] += (double)count / 15.0;
            out[F_CROSSOVERS] += (double)(count * 4) / 30.0;
            continue;
        }
        if (count >= 2)
            out[point - 1] += 1.0;
        else if (point <= 6)
            out[F_BLOTS_HOME] += 1.0;
        else if (point <= 18)
            out[F_BLOTS_OUTFIELD] += 1.0;
        else
            out[F_BLOTS_BACK] += 1.0;
        if (count > 3)
            out[point <= 6 ? F_STACK_HOME : F_STACK_OUTSIDE] += (double)(count - 3) / 3.0;
        if (point >= 19)
            out[F_BACK] += (double)count / 5.0;
        if (point >= 7) {
            out[F_OUTSIDE_HOME] += (double)count / 15.0;
            out[F_CROSSOVERS] += (double)(count * (index / 6)) / 30.0;
        }
        if (point <= 2)
            out[F_BURIED] += (double)count / 5.0;
        if (4 <= point && point <= 11) {
            out[F_BUILDERS] += (double)count / 10.0;
            if (count > 2)
                out[F_SPARES_BUILDERS] += (double)(count - 2) / 5.0;
        }
    }
}

/* features.global_features */
static void global_features(const Side *x, double *out)
{
    int anchors = x->anchors < 2 ? x->anchors : 2;
    out[0] = x->off ? 1.0 : 0.0;
    out[1] = (double)x->off / 15.0;
    out[2] = (double)(x->home_made * x->home_made) / 36.0;
    out[3] = x->home_made >= 5 ? 1.0 : 0.0;
    out[4] = x->prime >= 3 ? 1.0 : 0.0;
    out[5] = x->prime >= 4 ? 1.0 : 0.0;
    out[6] = x->prime >= 5 ? 1.0 : 0.0;
    out[7] = x->prime >= 6 ? 1.0 : 0.0;
    out[8] = x->prime >= 4 ? (double)x->prime_top / 24.0 : 0.0;
    out[9] = (double)x->rearmost / 25.0;
    out[10] = x->bar >= 2 ? 1.0 : 0.0;
    out[11] = anchors >= 1 ? 1.0 : 0.0;
    out[12] = anchors >= 2 ? 1.0 : 0.0;
}

/* ------------------------------------------------------------------------------ both sides */

/* features.shot_masks: rolls with which `shooter` (on roll) hits a blot of `target`, those
 * that can hit two different blots, and the expected pip loss / 25. */
static void shot_masks(const Side *shooter, const Side *target, uint64_t *union_out,
                       uint64_t *double_out, double *loss_out)
{
    uint32_t blots = target->blots;
    uint64_t all = 0, twice = 0;
    double loss = 0.0;
    if (blots) {
        uint32_t blocks = target->made;
        uint32_t shooters = shooter->bar ? UINT32_C(1) << 25 : shooter->occupied;
        while (blots) {
            uint32_t low = blots & (~blots + 1);
            blots ^= low;
            /* The target's blot on its point t is on the shooter's point 25 - t. */
            int blot_point = 26 - bit_length32(low);
            uint64_t rolls = 0;
            uint32_t candidates = (shooters >> (blot_point + 1)) & UINT32_C(0xFFFFFF);
            while (candidates) {
                uint32_t bit = candidates & (~candidates + 1);
                candidates ^= bit;
                int distance = bit_length32(bit); /* the shooter is on blot_point + distance */
                rolls |= hit_rolls(distance, blocks >> (26 - blot_point - distance));
            }
            if (rolls) {
                twice |= all & rolls;
                all |= rolls;
                loss += (double)(popcount64(rolls) * blot_point);
            }
        }
    }
    *union_out = all;
    *double_out = twice;
    *loss_out = loss / (36.0 * 25.0);
}

/* features.escape_rearmost */
static int escape_rearmost(const Side *runner, const Side *blocker)
{
    int q = runner->rearmost;
    if (q < 2 || q >= 26)
        return 36;
    return escapes[(blocker->made >> (26 - q)) & 0xFFF];
}

static double enter_fail(int bar, int closed)
{
    if (bar == 0)
        return 0.0;
    if (bar == 1)
        return (double)(closed * closed) / 36.0;
    return 1.0 - (double)((6 - closed) * (6 - closed)) / 36.0;
}

/* features.cross_features */
static void cross_features(const Side *me, const Side *other, double *out)
{
    uint64_t all, twice, back_all, back_twice;
    double loss, back_loss;
    shot_masks(me, other, &all, &twice, &loss);
    shot_masks(other, me, &back_all, &back_twice, &back_loss);
    double shots = (double)popcount64(all) / 36.0;
    double trap_other = 1.0 - (double)escape_rearmost(other, me) / 36.0;
    double trap_me = 1.0 - (double)escape_rearmost(me, other) / 36.0;
    double lead = (double)(other->pips - me->pips) / 100.0;
    int other_rear = other->rearmost, my_rear = me->rearmost;
    int my_free = other_rear
                      ? popcount64(me->occupied & ((UINT32_C(1) << (25 - other_rear)) - 1))
                      : 0;
    int other_free = my_rear
                         ? popcount64(other->occupied & ((UINT32_C(1) << (25 - my_rear)) - 1))
                         : 0;
    out[0] = shots;
    out[1] = shots * (double)me->home_made / 6.0;
    out[2] = (double)popcount64(twice) / 36.0;
    out[3] = loss;
    out[4] = (double)popcount64(back_all) / 36.0;
    out[5] = trap_other;
    out[6] = trap_other * trap_other;
    out[7] = trap_me;
    out[8] = trap_me * trap_me;
    out[9] = enter_fail(me->bar, other->home_made);
    out[10] = enter_fail(other->bar, me->home_made);
    out[11] = (double)(other->back * me->home_made) / 30.0;
    out[12] = (double)(me->back * other->home_made) / 30.0;
    out[13] = lead;
    out[14] = lead * fabs(lead);
    out[15] = (double)my_free / 15.0;
    out[16] = (double)other_free / 15.0;
}

/* features.feature_vector, from both sides' counts and facts. */
static void feature_vector(const int *mover, const int *opponent, const Side *me,
                           const Side *other, double *f)
{
    point_feature_sums(mover, f);
    global_features(me, f + N_POINT);
    point_feature_sums(opponent, f + N_BLOCK);
    global_features(other, f + N_BLOCK + N_POINT);
    cross_features(me, other, f + 2 * N_BLOCK);
    f[N_FEATURES - 1] = 1.0;
}

#include "_movegen.h"

/* ---------------------------------------------------------------------- network inputs */

/* The network's inputs (network.py's `inputs`, the definition): the contact features of
 * features.py without the bias (N_FEATURES - 1), then a plain board encoding of each side,
 * the player on roll first: per point 1..24 four units (at least 1, 2, 3 chequers, and
 * (n - 3) / 2 beyond 3), the bar / 2 and the chequers off / 15; then features.NET_FEATURES. */
#define N_RAW_SIDE (4 * 24 + 2)
#define N_NET 30 /* features.NET_FEATURES */
#define N_INPUTS (N_FEATURES - 1 + 2 * N_RAW_SIDE + N_NET)
#define N_OUTCOMES 6 /* win single, gammon, backgammon; lose single, gammon, backgammon */
#define MAX_LAYERS 5 /* hidden layers at most */
#define MAX_WIDTH 1024

static void raw_side(const int *s, int off, float *x)
{
    for (int i = 0; i < 24; i++) {
        int n = s[i];
        x[4 * i] = n >= 1 ? 1.0f : 0.0f;
        x[4 * i + 1] = n >= 2 ? 1.0f : 0.0f;
        x[4 * i + 2] = n >= 3 ? 1.0f : 0.0f;
        x[4 * i + 3] = n > 3 ? (float)(n - 3) / 2.0f : 0.0f;
    }
    x[96] = (float)s[24] / 2.0f;
    x[97] = (float)off / 15.0f;
}

#define CONTAIN_FROM 16 /* features.CONTAIN_FROM */

/* features._escape_at */
static int escape_at(int point, uint32_t blocker_made)
{
    return escapes[(blocker_made >> (26 - point)) & 0xFFF];
}

/* features._containment: (contain, acontain) of `runner`'s chequers against `blocker`. */
static void containment(const Side *runner, const Side *blocker, double *contain,
                        double *acontain)
{
    int least = 36, actual = 36;
    for (int point = CONTAIN_FROM; point < 25; point++) {
        int n = escape_at(point, blocker->made);
        if (n < least)
            least = n;
    }
    for (int point = CONTAIN_FROM; point <= runner->rearmost; point++) {
        int n = escape_at(point, blocker->made);
        if (n < actual)
            actual = n;
    }
    *contain = 1.0 - (double)least / 36.0;
    *acontain = 1.0 - (double)actual / 36.0;
}

/* features._mobility */
static double mobility(const int *s, const Side *blocker)
{
    int total = 0;
    for (int index = 6; index < 25; index++)
        if (s[index])
            total += s[index] * escape_at(index + 1, blocker->made) * (index - 5);
    return (double)total / 3600.0;
}

/* features._backgame */
static double backgame(const int *s, const Side *x)
{
    int there = 0;
    for (int index = 18; index < 24; index++)
        there += s[index];
    if (x->anchors >= 2)
        return (double)(there - 3) / 4.0;
    if (x->anchors == 1)
        return (double)there / 8.0;
    return 0.0;
}

/* features._engagement: (contact depth, free pips) of side `s` against `other`. */
static void engagement(const int *s, const Side *other, double *depth_out, double *free_out)
{
    int rear = other->rearmost;
    int edge = rear ? 25 - rear : 25;
    int depth = 0, free_pips = 0;
    for (int index = 0; index < 25; index++) {
        int count = s[index];
        if (!count)
            continue;
        int point = index + 1;
        if (rear && point > edge)
            depth += count * (point - edge);
        else if (point < edge || !rear)
            free_pips += count * point;
    }
    *depth_out = (double)depth / 167.0;
    *free_out = (double)free_pips / 100.0;
}

/* features._timing */
static double timing(const int *s, const Side *other)
{
    int edge = other->rearmost ? 25 - other->rearmost : 25;
    int total = 0;
    for (int index = 0; index < 25; index++) {
        int count = s[index];
        if (!count)
            continue;
        int spare = (index < 24 && count >= 2 && index + 1 > edge) ? count - 2 : count;
        total += spare * index;
    }
    return (double)total / 100.0;
}

/* features._moment2 */
static double moment2(const int *s, const Side *x)
{
    int on_board = CHEQUERS - x->off;
    if (!on_board)
        return 0.0;
    double mean = (double)x->pips / (double)on_board;
    double total = 0.0;
    for (int index = 0; index < 25; index++) {
        int count = s[index];
        if (count && (double)(index + 1) > mean) {
            double d = (double)(index + 1) - mean;
            total += (double)count * d * d;
        }
    }
    return total / ((double)on_board * 100.0);
}

/* features._gap */
static double gap(const Side *x)
{
    int widest = 0, above = x->rearmost;
    for (int point = x->rearmost - 1; point >= 0; point--) {
        if (point == 0 || (x->occupied >> point) & 1) {
            if (above - point > widest)
                widest = above - point;
            above = point;
        }
    }
    return (double)(widest > 6 ? widest - 6 : 0) / 18.0;
}

/* features._support */
static double support(const int *s, const Side *x)
{
    int total = 0;
    for (int index = 6; index < 25; index++)
        if (s[index] && ((x->made >> (index - 5)) & 0x3F))
            total += s[index];
    return (double)total / 15.0;
}

#define MAKE_POINTS 7 /* features.MAKE_POINTS */

/* features._make_rolls, with the side's movable chequers (features._movable) as two bit sets
 * over its points 1..24 (bit p: one or more movable on point p; two or more) and the
 * non-doubles from `make_one` and `make_two`. */
static double make_rolls(const int *s, const Side *other)
{
    uint64_t one = 0, two = 0, rolls = 0;
    for (int point = 2; point <= 24; point++) {
        int n = s[point - 1];
        int movable = n == 1 ? 1 : (n > 2 ? n - 2 : 0);
        if (movable >= 1)
            one |= UINT64_C(1) << point;
        if (movable >= 2)
            two |= UINT64_C(1) << point;
    }
    uint64_t blots = 0, empty = 0; /* bit t: target point t holds a blot, or nothing */
    for (int target = 1; target <= MAKE_POINTS; target++) {
        int here = s[target - 1];
        if (here >= 2 || ((other->made >> (25 - target)) & 1))
            continue;
        int blot = here == 1;
        int window = (int)((one >> (target + 1)) & 0x3F); /* bit d - 1: point target + d */
        rolls |= blot ? make_one[window] : make_two[window];
        if (blot)
            blots |= UINT64_C(1) << target;
        else
            empty |= UINT64_C(1) << target;
    }
    /* Doubles, for every target at once: bit t of `one >> k * a` says whether point t + k * a
     * has a chequer to move (a blot is covered by one chequer coming 1-4 steps of a; an empty
     * point made by two chequers a or 2a away, or one a away with another 2a or 3a away). */
    for (int a = 1; a <= 6; a++) {
        uint64_t s1 = one >> a, s2 = one >> (2 * a), s3 = one >> (3 * a), s4 = one >> (4 * a);
        uint64_t made = (blots & (s1 | s2 | s3 | s4)) |
                        (empty & ((two >> a) | (two >> (2 * a)) | (s1 & (s2 | s3))));
        if (made)
            rolls |= roll_bit(a, a);
    }
    return (double)popcount64(rolls) / 36.0;
}

/* features._trapped */
static double trapped(const int *s, const Side *other)
{
    if (other->prime < 4)
        return 0.0;
    int total = 0;
    for (int index = 24 - other->prime_top + other->prime; index < 25; index++)
        total += s[index];
    return (double)total / 15.0;
}

/* features.net_features */
static void net_features(const int *mover, const int *opponent, const Side *me,
                         const Side *other, double *out)
{
    double contain_other, acontain_other, contain_me, acontain_me;
    double depth_me, free_me, depth_other, free_other;
    containment(other, me, &contain_other, &acontain_other);
    containment(me, other, &contain_me, &acontain_me);
    engagement(mover, other, &depth_me, &free_me);
    engagement(opponent, me, &depth_other, &free_other);
    out[0] = contain_other;
    out[1] = contain_other * contain_other;
    out[2] = acontain_other;
    out[3] = acontain_other * acontain_other;
    out[4] = contain_me;
    out[5] = contain_me * contain_me;
    out[6] = acontain_me;
    out[7] = acontain_me * acontain_me;
    out[8] = mobility(mover, other);
    out[9] = mobility(opponent, me);
    out[10] = backgame(mover, me);
    out[11] = backgame(opponent, other);
    out[12] = depth_me;
    out[13] = depth_other;
    out[14] = free_me;
    out[15] = free_other;
    out[16] = timing(mover, other);
    out[17] = timing(opponent, me);
    out[18] = moment2(mover, me);
    out[19] = moment2(opponent, other);
    out[20] = gap(me);
    out[21] = gap(other);
    out[22] = support(mover, me);
    out[23] = support(opponent, other);
    uint64_t return_union, return_double;
    double return_loss;
    shot_masks(other, me, &return_union, &return_double, &return_loss);
    out[24] = make_rolls(mover, other);
    out[25] = make_rolls(opponent, me);
    out[26] = trapped(mover, other);
    out[27] = trapped(opponent, me);
    out[28] = return_loss;
    out[29] = (double)popcount64(return_double) / 36.0;
}

static void encode_inputs(const int *mover, const int *opponent, const Side *me,
                          const Side *other, float *x)
{
    double f[N_FEATURES];
    feature_vector(mover, opponent, me, other, f);
    for (int i = 0; i < N_FEATURES - 1; i++)
        x[i] = (float)f[i];
    raw_side(mover, me->off, x + N_FEATURES - 1);
    raw_side(opponent, other->off, x + N_FEATURES - 1 + N_RAW_SIDE);
    double extra[N_NET];
    net_features(mover, opponent, me, other, extra);
    for (int i = 0; i < N_NET; i++)
        x[N_FEATURES - 1 + 2 * N_RAW_SIDE + i] = (float)extra[i];
}

/* Which of the six outcomes can still happen (the hard constraints of heuristic-player.md
 * §2.7): a side that has borne a chequer off cannot be gammoned, and one with no chequer on
 * the bar or in the other's home board cannot be backgammoned. */
static void outcome_mask(const Side *me, const Side *other, unsigned char *allowed)
{
    allowed[0] = allowed[3] = 1;
    allowed[1] = other->off == 0;
    allowed[2] = other->off == 0 && other->back > 0;
    allowed[4] = me->off == 0;
    allowed[5] = me->off == 0 && me->back > 0;
}

/* --------------------------------------------------------------------------- position classes */

/* Whether the position is for the contact evaluation: nobody has borne everything off, and
 * some chequer still has to pass one of the other side (Position.is_contact). */
static int is_contact(const Side *me, const Side *other)
{
    return me->off != CHEQUERS && other->off != CHEQUERS && me->rearmost + other->rearmost > 25;
}

/* Both sides have every chequer in their home boards: the bear-off database's zone, where the
 * call-back gives exact chances. */
static int in_bearoff_zone(const Side *me, const Side *other)
{
    return me->rearmost <= 6 && other->rearmost <= 6;
}

#define CRASHED_ACTIVE 6 /* position_class.CRASHED_ACTIVE */

/* position_class.is_crashed of side `s` (its facts `x`): at most CRASHED_ACTIVE of its
 * chequers still working, those in play minus the surplus beyond one chequer on each of its
 * 1- and 2-points. */
static int is_crashed(const int *s, const Side *x)
{
    int surplus = (s[0] > 1 ? s[0] - 1 : 0) + (s[1] > 1 ? s[1] - 1 : 0);
    return CHEQUERS - x->off - surplus <= CRASHED_ACTIVE;
}

/* position_class.PositionClass, in its order. */
enum { CLASS_OVER, CLASS_BEAROFF, CLASS_RACE, CLASS_CRASHED, CLASS_CONTACT, N_CLASSES };

/* position_class.side_class: the class of the board, `mover` on roll. */
static int side_class(const int *mover, const int *opponent, const Side *me, const Side *other)
{
    if (me->off == CHEQUERS || other->off == CHEQUERS)
        return CLASS_OVER;
    if (!is_contact(me, other))
        return in_bearoff_zone(me, other) ? CLASS_BEAROFF : CLASS_RACE;
    return is_crashed(mover, me) || is_crashed(opponent, other) ? CLASS_CRASHED : CLASS_CONTACT;
}

/* The exact outcome of a finished game (by_class.game_outcome), `mover` on roll; 0 if the game
 * is not over. */
static int terminal_chances(const Side *me, const Side *other, double *p)
{
    if (me->off != CHEQUERS && other->off != CHEQUERS)
        return 0;
    int mover_won = me->off == CHEQUERS;
    const Side *loser = mover_won ? other : me;
    double gammon = loser->off == 0 ? 1.0 : 0.0;
    double backgammon = loser->off == 0 && loser->back ? 1.0 : 0.0;
    p[0] = mover_won ? 1.0 : 0.0;
    p[1] = mover_won ? gammon : 0.0;
    p[2] = mover_won ? backgammon : 0.0;
    p[3] = mover_won ? 0.0 : gammon;
    p[4] = mover_won ? 0.0 : backgammon;
    return 1;
}

/* ------------------------------------------------------------------------------ random */

/* The 64-bit finaliser of splitmix64 (bgbot/rollout/dice.py `mix64`). */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* splitmix64: the dice of self-play, screening duels (seeded per game) and rollouts. */
static uint64_t next_random(uint64_t *state)
{
    return mix64(*state += UINT64_C(0x9E3779B97F4A7C15));
}

static int roll_die(uint64_t *state)
{
    return (int)((next_random(state) >> 11) % 6) + 1;
}

/* ------------------------------------------------------------------- the bear-off database */

/* One table of bearoff.py's database (`_Table`), read in place from its Python arrays. */
typedef struct {
    const double *expected;      /* per rank */
    const unsigned char *low;    /* first roll count with a probability */
    const unsigned char *length; /* probabilities stored */
    const uint32_t *offsets;     /* where each distribution starts in `data` */
    const float *data;
} BearoffTable;

#define BEAROFF_POINTS 6
#define BEAROFF_MAX_ROLLS 63 /* longest distribution accepted (bearoff.py stops at 40) */
#define BEAROFF_VIEWS 10
#define PIPS_PER_ROLL (49.0 / 6.0) /* race.py */

/* bearoff.py's `BearoffDatabase` (`c_tables`): its two tables, every roll count to bear off
 * all chequers (`full`) and to bear off the first one (`first`), viewed in place through the
 * buffers of its arrays, held for as long as an evaluator holds the database. */
typedef struct {
    int max_chequers;
    Py_ssize_t positions;
    BearoffTable full, first;
    Py_buffer views[BEAROFF_VIEWS];
} Bearoff;

/* C(n, k), 0 when k > n (bearoff.py `_BINOM`). */
static long bearoff_binomial(int n, int k)
{
    if (k < 0 || k > n)
        return 0;
    long c = 1;
    for (int i = 1; i <= k; i++)
        c = c * (n - k + i) / i;
    return c;
}

/* bearoff.py `rank`: the index of the home board `home` (counts on points 1-6). */
static long bearoff_rank(const int *home)
{
    long total = 0;
    int running = 0;
    for (int k = 0; k < BEAROFF_POINTS; k++) {
        running += home[k];
        total += bearoff_binomial(running + k, k + 1);
    }
    return total;
}

/* The distribution of rank `index` in `t` into d (zeros before its first roll count); its
 * length. */
static int bearoff_distribution(const BearoffTable *t, long index, double *d)
{
    int low = t->low[index], length = t->length[index];
    const float *values = t->data + t->offsets[index];
    for (int n = 0; n < low; n++)
        d[n] = 0.0;
    for (int n = 0; n < length; n++)
        d[low + n] = (double)values[n];
    return low + length;
}

/* bearoff.py `_at_least`: out[n] = P(T >= n) for n = 0..len, exactly 1 up to the first roll
 * count with a probability. */
static void bearoff_at_least(const double *d, int len, double *out)
{
    double running = 0.0;
    out[len] = 0.0;
    for (int n = len - 1; n >= 0; n--) {
        running += d[n];
        out[n] = running;
    }
    int first = 0;
    while (first < len && d[first] == 0.0)
        first++;
    for (int n = 0; n <= first; n++)
        out[n] = 1.0;
}

/* bearoff.py `_win_against`: the sum over n of mine[n] * theirs_at_least[n], in order. */
static double bearoff_win_against(const double *mine, int mine_len, const double *at_least,
                                  int last)
{
    double total = 0.0;
    for (int n = 0; n < mine_len && n < last; n++)
        if (mine[n] != 0.0)
            total += mine[n] * at_least[n];
    return total;
}

/* The home board of a side in the database's zone (every chequer on points 1-6), its chequer
 * count in *count; -1 when a chequer is elsewhere. */
static int bearoff_home(const int *side, int *home, int *count)
{
    int total = 0;
    for (int i = BEAROFF_POINTS; i < N_LOCATIONS; i++)
        if (side[i])
            return -1;
    for (int i = 0; i < BEAROFF_POINTS; i++) {
        home[i] = side[i];
        total += side[i];
    }
    *count = total;
    return 0;
}

/* bearoff.py `BearoffDatabase.probabilities`: the exact chances of `mover` on roll when both
 * sides are in the database; 1 (p untouched) when it does not hold them. */
static int bearoff_chances(const Bearoff *b, const int *mover, const int *opponent, double *p)
{
    int my_home[BEAROFF_POINTS], their_home[BEAROFF_POINTS], my_count, their_count;
    if (bearoff_home(mover, my_home, &my_count) < 0 ||
        bearoff_home(opponent, their_home, &their_count) < 0 || my_count > b->max_chequers ||
        their_count > b->max_chequers)
        return 1;
    double mine[BEAROFF_MAX_ROLLS + 1], theirs[BEAROFF_MAX_ROLLS + 1];
    double theirs_at_least[BEAROFF_MAX_ROLLS + 2], first[BEAROFF_MAX_ROLLS + 1];
    double my_first_after[BEAROFF_MAX_ROLLS + 2], their_first_after[BEAROFF_MAX_ROLLS + 2];
    long my_rank = bearoff_rank(my_home), their_rank = bearoff_rank(their_home);
    int my_len = bearoff_distribution(&b->full, my_rank, mine);
    int their_len = bearoff_distribution(&b->full, their_rank, theirs);
    bearoff_at_least(theirs, their_len, theirs_at_least);
    double win = bearoff_win_against(mine, my_len, theirs_at_least, their_len + 1);
    double win_gammon = 0.0, lose_gammon = 0.0;
    if (their_count == CHEQUERS) { /* I win a gammon if I finish before their first is off */
        int len = bearoff_distribution(&b->first, their_rank, first);
        bearoff_at_least(first, len, their_first_after);
        win_gammon = bearoff_win_against(mine, my_len, their_first_after, len + 1);
    }
    if (my_count == CHEQUERS) { /* they finish at their roll m, my first is off after m */
        int len = bearoff_distribution(&b->first, my_rank, first);
        bearoff_at_least(first, len, my_first_after);
        lose_gammon = bearoff_win_against(theirs, their_len, my_first_after + 1, len);
    }
    win = win < 0.0 ? 0.0 : win > 1.0 ? 1.0 : win;
    p[0] = win;
    p[1] = win_gammon < win ? win_gammon : win;
    p[2] = 0.0;
    p[3] = lose_gammon < 1.0 - win ? lose_gammon : 1.0 - win;
    p[4] = 0.0;
    return 0;
}

/* race.py `effective_pips` with the database: the pips plus the exact wastage of the home
 * board with every chequer still outside on the 6-point; 1 (epc untouched) when the database
 * does not hold that board. */
static int bearoff_epc(const Bearoff *b, const int *side, double *epc)
{
    int home[BEAROFF_POINTS], total = 0;
    long pips = 0, home_pips = 0;
    for (int i = 0; i < N_LOCATIONS; i++) {
        pips += (long)side[i] * (i + 1);
        total += side[i];
    }
    if (total > b->max_chequers)
        return 1;
    for (int i = 0; i < BEAROFF_POINTS; i++)
        home[i] = side[i];
    for (int i = BEAROFF_POINTS; i < N_LOCATIONS; i++)
        home[BEAROFF_POINTS - 1] += side[i];
    for (int i = 0; i < BEAROFF_POINTS; i++)
        home_pips += (long)home[i] * (i + 1);
    double expected = b->full.expected[bearoff_rank(home)];
    *epc = ((double)pips + expected * PIPS_PER_ROLL) - (double)home_pips;
    return 0;
}

/* ------------------------------------------------------------------------- the race formula */

/* One side's facts for the race formula (race.py `RaceSide`), by its counts. */
#define SIDE_CACHE_BITS 14
#define SIDE_CACHE_SIZE (1 << SIDE_CACHE_BITS)
typedef struct {
    uint64_t key[2]; /* 4 bits a location; all ones = empty */
    double epc, home_lag, back_lag;
    int full, back;
} RaceSideFacts;

/* The race formula of race.py (`RaceFormula`) in C: a side's effective pips from the Python
 * call-back `epc` (the bear-off database's wastage), the rest here, operation for operation;
 * each side's facts kept by its counts (the call-back is a function of the side). */
typedef struct {
    PyObject *epc;
    double spread;
    RaceSideFacts *sides; /* SIDE_CACHE_SIZE entries, allocated at the first race */
    int side_count;
} RaceFormula;

static void side_key(const int *side, uint64_t *key)
{
    key[0] = key[1] = 0;
    for (int i = 0; i < N_LOCATIONS; i++)
        key[i / 16] |= (uint64_t)side[i] << (4 * (i % 16));
}

/* Pips a side must move before none of its chequers is above own point `boundary`
 * (race.py `_rolls_beyond`). */
static double rolls_beyond(const int *side, int boundary)
{
    long total = 0;
    for (int i = boundary; i < N_LOCATIONS; i++)
        total += (long)side[i] * (i + 1 - boundary);
    return (double)total;
}

/* The side's race facts, from the cache or computed; NULL on error. */
static const RaceSideFacts *race_side_facts(RaceFormula *f, const Bearoff *b, const int *side)
{
    uint64_t key[2];
    side_key(side, key);
    uint64_t h = mix64(key[0] ^ mix64(key[1]));
    size_t slot = (size_t)(h >> (64 - SIDE_CACHE_BITS));
    if (f->sides == NULL) {
        f->sides = PyMem_Malloc(sizeof(RaceSideFacts) * SIDE_CACHE_SIZE);
        if (f->sides == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        memset(f->sides, 0xFF, sizeof(RaceSideFacts) * SIDE_CACHE_SIZE);
        f->side_count = 0;
    }
    for (;;) {
        RaceSideFacts *entry = &f->sides[slot];
        if (entry->key[0] == UINT64_MAX)
            break;
        if (entry->key[0] == key[0] && entry->key[1] == key[1])
            return entry;
        slot = (slot + 1) & (SIDE_CACHE_SIZE - 1);
    }
    double epc;
    if (b == NULL || bearoff_epc(b, side, &epc) != 0) {
        PyObject *counts = side_tuple(side);
        if (counts == NULL)
            return NULL;
        PyObject *answer = PyObject_CallOneArg(f->epc, counts);
        Py_DECREF(counts);
        if (answer == NULL)
            return NULL;
        epc = PyFloat_AsDouble(answer);
        Py_DECREF(answer);
        if (epc == -1.0 && PyErr_Occurred())
            return NULL;
    }
    if (2 * f->side_count >= SIDE_CACHE_SIZE) { /* half full: start again */
        memset(f->sides, 0xFF, sizeof(RaceSideFacts) * SIDE_CACHE_SIZE);
        f->side_count = 0;
        slot = (size_t)(h >> (64 - SIDE_CACHE_BITS));
    }
    RaceSideFacts *entry = &f->sides[slot];
    entry->key[0] = key[0];
    entry->key[1] = key[1];
    int total = 0, back = 0;
    for (int i = 0; i < N_LOCATIONS; i++) {
        total += side[i];
        if (i >= 18)
            back |= side[i] != 0;
    }
    entry->epc = epc;
    entry->full = total == CHEQUERS;
    entry->home_lag = rolls_beyond(side, 6);
    entry->back = back;
    entry->back_lag = rolls_beyond(side, 18);
    f->side_count++;
    return entry;
}

#define ROLL_VARIANCE_PER_PIP 0.0339

/* race.py `_phi`: the standard normal distribution function. */
static double normal_cdf(double x)
{
    return 0.5 * erfc(-x * (1.0 / sqrt(2.0)));
}

/* race.py `_lag_probability`. */
static double lag_probability(double loser_pips, double loser_extra, double winner_epc,
                              int loser_on_roll)
{
    double mean = loser_pips / PIPS_PER_ROLL + loser_extra - winner_epc / PIPS_PER_ROLL;
    double var = ROLL_VARIANCE_PER_PIP * (loser_pips + winner_epc) + 0.25;
    double threshold = loser_on_roll ? 0.5 : -0.5;
    return normal_cdf((mean - threshold) / sqrt(var));
}

static double clamp(double x, double low, double high)
{
    return x < low ? low : x > high ? high : x;
}

/* race.py `race_chances` (the race formula), `me` on roll, operation for operation. */
static void race_formula(const RaceSideFacts *me, const RaceSideFacts *other, double spread,
                         double *p)
{
    double my_epc = me->epc, other_epc = other->epc;
    double sum = my_epc + other_epc;
    double probit = (other_epc - my_epc + 4.0) / sqrt(sum > 1.0 ? sum : 1.0);
    double win = normal_cdf(probit / spread);
    double win_g = 0.0, win_bg = 0.0, lose_g = 0.0, lose_bg = 0.0;
    if (other->full) {
        win_g = lag_probability(other->home_lag, 1.0, my_epc, 0);
        if (other->back)
            win_bg = lag_probability(other->back_lag, 0.5, my_epc, 0);
    }
    if (me->full) {
        lose_g = lag_probability(me->home_lag, 1.0, other_epc, 1);
        if (me->back)
            lose_bg = lag_probability(me->back_lag, 0.5, other_epc, 1);
    }
    win = clamp(win, 0.0, 1.0);
    double lose = 1.0 - win;
    if (!other->full)
        win_g = win_bg = 0.0;
    else if (!other->back)
        win_bg = 0.0;
    if (!me->full)
        lose_g = lose_bg = 0.0;
    else if (!me->back)
        lose_bg = 0.0;
    win_g = clamp(win_g, 0.0, win);
    win_bg = clamp(win_bg, 0.0, win_g);
    lose_g = clamp(lose_g, 0.0, lose);
    lose_bg = clamp(lose_bg, 0.0, lose_g);
    p[0] = win;
    p[1] = win_g;
    p[2] = win_bg;
    p[3] = lose_g;
    p[4] = lose_bg;
}

/* The race formula's chances of `mover` on roll (a race: no contact, nobody off), the
 * effective pips from the database `b` where it holds them (NULL: none); -1 on error. */
static int formula_chances(RaceFormula *f, const Bearoff *b, const int *mover,
                           const int *opponent, double *p)
{
    const RaceSideFacts *mine = race_side_facts(f, b, mover);
    if (mine == NULL)
        return -1;
    RaceSideFacts copy = *mine; /* the next look-up may start the cache again */
    const RaceSideFacts *theirs = race_side_facts(f, b, opponent);
    if (theirs == NULL)
        return -1;
    race_formula(&copy, theirs, f->spread, p);
    return 0;
}

/* ------------------------------------------------------------------------------ evaluators */

/* An evaluator in C: its own function of a contact position (the five constrained chances of
 * the player on roll, `mover`), and what it uses for the other classes of position. Both
 * evaluator types of _contact (the linear `Net` of `eval=linear` and the network `Mlp`) start
 * with this header, so C code can hold either. */
struct EvalBase;
typedef void (*ContactFn)(const struct EvalBase *self, const int *mover, const int *opponent,
                          const Side *me, const Side *other, double *p);
/* The same for `n` boards at once, from their inputs ([n][N_INPUTS]) and outcome masks
 * ([n][N_OUTCOMES]): `p` gets [n][N_HEADS]. A network reads its weights once for a few boards
 * instead of once for each (they do not fit in the first cache level). */
typedef void (*ContactManyFn)(const struct EvalBase *self, int n, const float *x,
                              const unsigned char *allowed, double *p);
typedef struct EvalBase {
    PyObject_HEAD
    ContactFn contact;
    /* `contact` for many boards (evaluate_many), or NULL. */
    ContactManyFn contact_many;
    /* The network (an Mlp) for races outside the bear-off database's zone, or NULL. */
    struct EvalBase *race_net;
    /* The network (an Mlp) for crashed positions, or NULL: they are contact positions. */
    struct EvalBase *crashed_net;
    /* The race formula for races outside the bear-off zone when there is no race network, or
     * NULL: those races go to the Python call-back too. */
    RaceFormula *formula;
    /* The bear-off database (set_bearoff), or NULL: the bear-off zone goes to the Python
     * call-back, and the race formula asks it for effective pips. */
    Bearoff *bearoff;
} EvalBase;

/* _contact's Net and Mlp types (each module sets them when it is loaded). */
static PyTypeObject *net_type, *mlp_type;

/* The evaluator in `obj` (a Net or an Mlp), or NULL with a TypeError. */
MAYBE_UNUSED static const EvalBase *as_evaluator(PyObject *obj, const char *name)
{
    if (PyObject_TypeCheck(obj, net_type) || PyObject_TypeCheck(obj, mlp_type))
        return (const EvalBase *)obj;
    PyErr_Format(PyExc_TypeError, "%s must be a Net or an Mlp, not %.100s", name,
                 Py_TYPE(obj)->tp_name);
    return NULL;
}

/* Calls race(mover, opponent) (tuples of counts) and reads its five probabilities into p. */
static int call_race(PyObject *race, const int *mover, const int *opponent, double *p)
{
    PyObject *m = side_tuple(mover);
    if (m == NULL)
        return -1;
    PyObject *o = side_tuple(opponent);
    if (o == NULL) {
        Py_DECREF(m);
        return -1;
    }
    PyObject *answer = PyObject_CallFunctionObjArgs(race, m, o, NULL);
    Py_DECREF(m);
    Py_DECREF(o);
    if (answer == NULL)
        return -1;
    /* Probabilities is a tuple subclass, which PySequence_Fast would copy */
    PyObject *seq = PyTuple_Check(answer)
                        ? answer
                        : PySequence_Fast(answer, "race() must return a sequence of 5 floats");
    if (seq != answer)
        Py_DECREF(answer);
    if (seq == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(seq) != N_HEADS) {
        PyErr_Format(PyExc_ValueError, "race() must return 5 probabilities, got %zd",
                     PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return -1;
    }
    for (int h = 0; h < N_HEADS; h++) {
        p[h] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, h)); /* tuples too */
        if (p[h] == -1.0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

/* Answers of the Python call-back remembered by board (a rollout asks the same race boards
 * again and again: the rolls of one turn, from trial to trial); the call-back is a function of
 * the board. */
#define RACE_CACHE_BITS 15
#define RACE_CACHE_SIZE (1 << RACE_CACHE_BITS)
typedef struct {
    uint64_t key[4]; /* the two sides, 4 bits a location; all ones = empty */
    double p[N_HEADS];
} RaceEntry;
typedef struct {
    RaceEntry *entries; /* RACE_CACHE_SIZE of them */
    int count;
} RaceMemo;

static void race_key(const int *mover, const int *opponent, uint64_t *key)
{
    key[0] = key[1] = key[2] = key[3] = 0;
    for (int i = 0; i < N_LOCATIONS; i++) {
        key[i / 16] |= (uint64_t)mover[i] << (4 * (i % 16));
        key[2 + i / 16] |= (uint64_t)opponent[i] << (4 * (i % 16));
    }
}


/* call_race through `memo` (none: NULL). */
static int remembered_race(PyObject *race, RaceMemo *memo, const int *mover, const int *opponent,
                           double *p)
{
    if (memo == NULL)
        return call_race(race, mover, opponent, p);
    uint64_t key[4];
    race_key(mover, opponent, key);
    uint64_t h = mix64(key[0] ^ mix64(key[1] ^ mix64(key[2] ^ mix64(key[3]))));
    size_t slot = (size_t)(h >> (64 - RACE_CACHE_BITS));
    for (;;) {
        RaceEntry *entry = &memo->entries[slot];
        if (entry->key[0] == UINT64_MAX)
            break;
        if (!memcmp(entry->key, key, sizeof key)) {
            memcpy(p, entry->p, sizeof entry->p);
            return 0;
        }
        slot = (slot + 1) & (RACE_CACHE_SIZE - 1);
    }
    if (call_race(race, mover, opponent, p) < 0)
        return -1;
    if (2 * memo->count >= RACE_CACHE_SIZE) { /* half full: start again */
        memset(memo->entries, 0xFF, sizeof(RaceEntry) * RACE_CACHE_SIZE);
        memo->count = 0;
        slot = (size_t)(h >> (64 - RACE_CACHE_BITS));
        while (memo->entries[slot].key[0] != UINT64_MAX)
            slot = (slot + 1) & (RACE_CACHE_SIZE - 1);
    }
    memcpy(memo->entries[slot].key, key, sizeof key);
    memcpy(memo->entries[slot].p, p, sizeof memo->entries[slot].p);
    memo->count++;
    return 0;
}

/* The chances of `mover` on roll, by the class of the board (HeuristicEvaluator.evaluate_sides,
 * evaluator.py's dispatch): a finished game its exact outcome; a crashed position the crashed
 * network (without one, the contact evaluation); a contact position the evaluator's own
 * function; a race outside the bear-off zone the race network, else the race formula; the
 * bear-off zone the database when the evaluator holds it and it holds the position; the rest
 * what race(mover, opponent) says, through `memo` when given. 0, or -1 with a Python error. */
static int evaluate_classified(const EvalBase *e, const int *mover, const int *opponent,
                               const Side *me_, const Side *other_, int kind, PyObject *race,
                               RaceMemo *memo, double *p)
{
    Side me = *me_, other = *other_;
    switch (kind) {
    case CLASS_OVER:
        terminal_chances(&me, &other, p);
        return 0;
    case CLASS_CRASHED:
        if (e->crashed_net != NULL) {
            e->crashed_net->contact(e->crashed_net, mover, opponent, &me, &other, p);
            return 0;
        }
        /* fall through: a crashed position is a contact position */
    case CLASS_CONTACT:
        e->contact(e, mover, opponent, &me, &other, p);
        return 0;
    case CLASS_RACE:
        if (e->race_net != NULL) {
            e->race_net->contact(e->race_net, mover, opponent, &me, &other, p);
            return 0;
        }
        if (e->formula != NULL)
            return formula_chances(e->formula, e->bearoff, mover, opponent, p);
        break; /* the call-back */
    case CLASS_BEAROFF:
        if (e->bearoff != NULL && bearoff_chances(e->bearoff, mover, opponent, p) == 0)
            return 0;
        break; /* not in the database: the call-back */
    default:
        break;
    }
    return remembered_race(race, memo, mover, opponent, p);
}

static int evaluate_by_class(const EvalBase *e, const int *mover, const int *opponent,
                             PyObject *race, RaceMemo *memo, double *p)
{
    Side me, other;
    side_info(mover, &me);
    side_info(opponent, &other);
    return evaluate_classified(e, mover, opponent, &me, &other,
                               side_class(mover, opponent, &me, &other), race, memo, p);
}

/* Boards `evaluate_many` takes at most (`chances_in_order` walks longer lists in pieces; its
 * buffers are on the stack, for a call-back may evaluate again meanwhile). */
#define MANY_BOARDS 32

/* The chances of the boards one turn's plays leave, by the generator's key of a result (the
 * roller's counts and the blots hit: one board, for one board the turn starts from). Different
 * rolls often reach the same board (a tenth of a contact turn's 21 rolls' candidates). */
#define TURN_SLOTS 1024 /* a power of two, over twice a turn's boards */
typedef struct {
    uint64_t lo[TURN_SLOTS], hi[TURN_SLOTS]; /* hi = UINT64_MAX: empty (a key's hi < 2^61) */
    double p[TURN_SLOTS][N_HEADS];
    int count;
} TurnCache;

/* Forget every board: call when the turn's board changes. */
static void turn_cache_clear(TurnCache *c)
{
    memset(c->hi, 0xFF, sizeof c->hi);
    c->count = 0;
}

/* The slot of result `r`'s key: its own, or the empty one where it goes. */
static int turn_cache_slot(const TurnCache *c, const Result *r)
{
    uint64_t h = (r->lo ^ (r->hi * UINT64_C(0x9E3779B97F4A7C15))) * UINT64_C(0xBF58476D1CE4E5B9);
    int slot = (int)(h >> (64 - 10)) & (TURN_SLOTS - 1);
    while (c->hi[slot] != UINT64_MAX && (c->lo[slot] != r->lo || c->hi[slot] != r->hi))
        slot = (slot + 1) & (TURN_SLOTS - 1);
    return slot;
}

/* `evaluate_by_class` of the boards the `n` (at most MANY_BOARDS) results leave, the side to
 * play next on roll (res->opponent first): p[k] the chances of result k's. The contact boards
 * of an evaluator with `contact_many` go to it together, the same values as one by one. With
 * `cache` (the turn's, every result from the same board), a board it holds is not evaluated
 * again, and the others are added while it has room. 0, or -1 with a Python error. */
static int evaluate_many(const EvalBase *e, int n, const Result *results, PyObject *race,
                         RaceMemo *memo, TurnCache *cache, double (*p)[N_HEADS])
{
    float x[MANY_BOARDS][N_INPUTS];
    unsigned char allowed[MANY_BOARDS][N_OUTCOMES];
    double got[MANY_BOARDS][N_HEADS];
    int queued[MANY_BOARDS], count = 0;
    for (int k = 0; k < n; k++) {
        if (cache != NULL) {
            int slot = turn_cache_slot(cache, &results[k]);
            if (cache->hi[slot] != UINT64_MAX) {
                memcpy(p[k], cache->p[slot], sizeof cache->p[slot]);
                continue;
            }
        }
        const int *mover = results[k].opponent, *opponent = results[k].mover;
        Side me, other;
        side_info(mover, &me);
        side_info(opponent, &other);
        int kind = side_class(mover, opponent, &me, &other);
        int network = kind == CLASS_CONTACT || (kind == CLASS_CRASHED && e->crashed_net == NULL);
        if (network && e->contact_many != NULL) {
            encode_inputs(mover, opponent, &me, &other, x[count]);
            outcome_mask(&me, &other, allowed[count]);
            queued[count++] = k;
        } else if (evaluate_classified(e, mover, opponent, &me, &other, kind, race, memo, p[k]) <
                   0)
            return -1;
    }
    if (count > 0) {
        e->contact_many(e, count, &x[0][0], &allowed[0][0], &got[0][0]);
        for (int q = 0; q < count; q++)
            memcpy(p[queued[q]], got[q], sizeof got[q]);
    }
    for (int k = 0; cache != NULL && k < n && 2 * cache->count < TURN_SLOTS; k++) {
        int slot = turn_cache_slot(cache, &results[k]);
        if (cache->hi[slot] == UINT64_MAX) {
            cache->lo[slot] = results[k].lo;
            cache->hi[slot] = results[k].hi;
            memcpy(cache->p[slot], p[k], sizeof cache->p[slot]);
            cache->count++;
        }
    }
    return 0;
}

/* The chances of result k of `n` (`evaluate_many`'s), for a loop that walks the results in
 * order: at every MANY_BOARDS-th it evaluates the next MANY_BOARDS of them into `chunk`. NULL
 * with a Python error. */
static const double *chances_in_order(const EvalBase *e, int n, const Result *results, int k,
                                      PyObject *race, RaceMemo *memo, TurnCache *cache,
                                      double (*chunk)[N_HEADS])
{
    if (k % MANY_BOARDS == 0) {
        int m = n - k < MANY_BOARDS ? n - k : MANY_BOARDS;
        if (evaluate_many(e, m, results + k, race, memo, cache, chunk) < 0)
            return NULL;
    }
    return chunk[k % MANY_BOARDS];
}

/* `evaluate_by_class` without a memo. */
static int evaluate_on_roll(const EvalBase *e, const int *mover, const int *opponent,
                            PyObject *race, double *p)
{
    return evaluate_by_class(e, mover, opponent, race, NULL, p);
}

/* Probabilities.equity, with Python's order of operations. */
static double equity(const double *p)
{
    return 2.0 * p[0] - 1.0 + p[1] - p[3] + p[2] - p[4];
}

/* The same chances seen from the other side (Probabilities.flipped). */
static void flip(const double *p, double *q)
{
    q[0] = 1.0 - p[0];
    q[1] = p[3];
    q[2] = p[4];
    q[3] = p[1];
    q[4] = p[2];
}

static void swap_sides(int *mover, int *opponent)
{
    int t[N_LOCATIONS];
    memcpy(t, mover, sizeof t);
    memcpy(mover, opponent, sizeof t);
    memcpy(opponent, t, sizeof t);
}

/* The 21-roll average of heuristic.py: `roller` rolls against `other`; each play's board is
 * evaluated with `other` on roll. for_roller = 0 (`_one_ply_probs`): the roller minimises the
 * other's equity and the average is the other's chances; 1 (`roll_average`): he maximises his
 * own and the average is his. The first best play in `play_results` order is kept. */
static int roll_loop_with(const EvalBase *e, Generator *g, const int *roller, const int *other,
                          PyObject *race, int for_roller, TurnCache *cache, double *out)
{
    double total[N_HEADS] = {0.0, 0.0, 0.0, 0.0, 0.0};
    double p[N_HEADS], q[N_HEADS], best[N_HEADS] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (int a = 1; a <= 6; a++) {
        for (int b = a; b <= 6; b++) {
            int n = generate(g, roller, other, a, b);
            if (n < 0)
                return -1;
            if (n == 0) { /* no legal play: the roller stands pat */
                if (evaluate_on_roll(e, other, roller, race, p) < 0)
                    return -1;
                if (for_roller)
                    flip(p, best);
                else
                    memcpy(best, p, sizeof p);
            }
            double best_eq = for_roller ? -1e9 : 1e9;
            double chunk[MANY_BOARDS][N_HEADS];
            for (int k = 0; k < n; k++) {
                const double *c = chances_in_order(e, n, g->results, k, race, NULL, cache, chunk);
                if (c == NULL)
                    return -1;
                if (for_roller)
                    flip(c, q);
                else
                    memcpy(q, c, sizeof q);
                double eq = equity(q);
                if (for_roller ? eq > best_eq : eq < best_eq) {
                    memcpy(best, q, sizeof q);
                    best_eq = eq;
                }
            }
            double weight = a == b ? 1.0 : 2.0;
            for (int h = 0; h < N_HEADS; h++)
                total[h] += weight * best[h];
        }
    }
    for (int h = 0; h < N_HEADS; h++)
        out[h] = total[h] / 36.0;
    return 0;
}

/* `roll_loop_with` a cache of the turn's boards (none if there is no memory for it). */
static int roll_loop(const EvalBase *e, Generator *g, const int *roller, const int *other,
                     PyObject *race, int for_roller, double *out)
{
    TurnCache *cache = PyMem_Malloc(sizeof(TurnCache)); /* NULL: evaluate every board */
    if (cache != NULL)
        turn_cache_clear(cache);
    int status = roll_loop_with(e, g, roller, other, race, for_roller, cache, out);
    PyMem_Free(cache);
    return status;
}

/* Two generators, for a search that generates replies while it walks its own candidates;
 * on failure neither is left allocated. */
static int generators_init(Generator *g, Generator *inner)
{
    if (generator_init(g) < 0)
        return -1;
    if (generator_init(inner) < 0) {
        generator_free(g);
        return -1;
    }
    return 0;
}

/* `one_ply` of the board after `mover`'s move, `opponent` to roll, into out (mover's
 * chances); a finished game is its outcome. */
static int one_ply_value(const EvalBase *e, Generator *g, const int *mover, const int *opponent,
                         PyObject *race, double *out)
{
    Side me, other;
    side_info(mover, &me);
    side_info(opponent, &other);
    if (terminal_chances(&me, &other, out))
        return 0;
    return roll_loop(e, g, opponent, mover, race, 0, out);
}

static int check_race(PyObject *race)
{
    if (!PyCallable_Check(race)) {
        PyErr_Format(PyExc_TypeError, "race must be callable, not %.100s",
                     Py_TYPE(race)->tp_name);
        return -1;
    }
    return 0;
}

#endif /* BGBOT_KERNELS_H */
