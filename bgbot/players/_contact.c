/* bgbot.players._contact: the heuristic evaluator's contact features and five-head net in C.
 *
 * An optional speed-up of bgbot/players/evaluator.py (HeuristicEvaluator.evaluate_sides, contact
 * positions). The definition is bgbot/players/features.py: `features()` here returns exactly its
 * `feature_vector` (same order, same float operations, so the same values), and the tests compare
 * the two. When this module is not built, the evaluator runs the pure-Python code instead.
 *
 * It also holds the 1-ply look-ahead of heuristic.py (`Net.one_ply`, `Net.roll_average`): a
 * move generator that follows core/position.py's `_generate` step for step (`legal_plays`
 * exposes it, for the player's 0-ply choice and the tests) and the 21-roll loops, with races left to a Python call-back (the
 * evaluator's race model and bear-off database). Both give the Python loops' results exactly.
 *
 * Numbering as in features.py: each side counts its own points 1..24 from its home, 25 = its bar
 * (index 24 of its 25 counts); a chequer of one side on its point q is on the other side's point
 * 25 - q; bit masks use bit p for own point p.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

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

static void build_tables(void)
{
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

/* ------------------------------------------------------------------------- argument parsing */

/* One side's 25 counts from a sequence of ints 0..15 (at most 15 in all). */
static int parse_side(PyObject *obj, const char *name, int *out)
{
    if (!PySequence_Check(obj) || PyUnicode_Check(obj) || PyBytes_Check(obj) ||
        PyByteArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a sequence of 25 ints, not %.100s", name,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *seq = PySequence_Fast(obj, "side must be a sequence");
    if (seq == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n != N_LOCATIONS) {
        PyErr_Format(PyExc_ValueError, "%s must have 25 counts (points 1..24 and the bar), got %zd",
                     name, n);
        Py_DECREF(seq);
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    int total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = items[i];
        long value;
        if (PyLong_Check(item)) {
            int overflow;
            value = PyLong_AsLongAndOverflow(item, &overflow);
            if (overflow)
                value = -1;
        } else if (PyFloat_Check(item) || !PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s[%zd] must be an int, not %.100s", name, i,
                         Py_TYPE(item)->tp_name);
            Py_DECREF(seq);
            return -1;
        } else {
            PyObject *index = PyNumber_Index(item);
            if (index == NULL) {
                Py_DECREF(seq);
                return -1;
            }
            int overflow;
            value = PyLong_AsLongAndOverflow(index, &overflow);
            Py_DECREF(index);
            if (overflow)
                value = -1;
        }
        if (value == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (value < 0 || value > CHEQUERS) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] must be a count 0..15, got %S", name, i, item);
            Py_DECREF(seq);
            return -1;
        }
        out[i] = (int)value;
        total += (int)value;
    }
    Py_DECREF(seq);
    if (total > CHEQUERS) {
        PyErr_Format(PyExc_ValueError, "%s has %d chequers on the board, more than 15", name, total);
        return -1;
    }
    return 0;
}

static int parse_position(PyObject *const *args, Py_ssize_t nargs, const char *function,
                          int *mover, int *opponent)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "%s() takes 2 arguments (mover, opponent), got %zd",
                     function, nargs);
        return -1;
    }
    if (parse_side(args[0], "mover", mover) < 0 || parse_side(args[1], "opponent", opponent) < 0)
        return -1;
    return 0;
}

/* --------------------------------------------------------------------------- move generator */

/* The distinct resulting boards of the legal plays of a roll: core/position.py's `_generate`
 * (the definition, which agrees with gnubg) step for step, so that the results come in the same
 * order as `Position.play_results` (its dict keeps first insertion order) and a player that
 * keeps the first best result picks the same one. Indices as there: 0..23 = own points 1..24,
 * 24 = bar, target -1 = borne off; the opponent's point of own index t is its index 23 - t. */

typedef struct {
    int source, target, hit;
} Move;

typedef struct {
    int mover[N_LOCATIONS];    /* the roller's counts after the play */
    int opponent[N_LOCATIONS]; /* the other side's counts after it (its hit chequers on its bar) */
    uint64_t lo, hi;           /* the dedup key: mover counts (4 bits each) and hit mask */
    int used, first;           /* dice used (all of them when the game ends), first die */
    int n_steps;               /* the play `_generate` keeps for this board: its steps */
    Move steps[4];
} Result;

typedef struct {
    Result *results;
    int count, capacity;
    int32_t *slots; /* open addressing: result index + 1, 0 = empty */
    int n_slots;    /* a power of two, at least twice `count` */
    /* the board while walking */
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    int on_board, outside; /* chequers on the board, chequers outside the home board (bar too) */
    uint32_t hit_mask;     /* bit t: a blot was hit on own index t */
    int full;              /* dice in the roll: 2, or 4 for doubles */
    int depth;             /* the steps made so far (`_generate`'s `steps`) */
    Move steps[4];
} Generator;

static int generator_init(Generator *g)
{
    g->count = 0;
    g->capacity = 256;
    g->n_slots = 1024;
    g->results = PyMem_Malloc(sizeof(Result) * (size_t)g->capacity);
    g->slots = PyMem_Calloc((size_t)g->n_slots, sizeof(int32_t));
    if (g->results == NULL || g->slots == NULL) {
        PyMem_Free(g->results);
        PyMem_Free(g->slots);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void generator_free(Generator *g)
{
    PyMem_Free(g->results);
    PyMem_Free(g->slots);
}

static uint32_t key_hash(uint64_t lo, uint64_t hi)
{
    uint64_t h = (lo ^ (hi * UINT64_C(0x9E3779B97F4A7C15))) * UINT64_C(0xBF58476D1CE4E5B9);
    return (uint32_t)(h >> 32);
}

static int find_slot(const Generator *g, uint64_t lo, uint64_t hi)
{
    int mask = g->n_slots - 1;
    int i = (int)(key_hash(lo, hi) & (uint32_t)mask);
    for (;;) {
        int32_t at = g->slots[i];
        if (at == 0)
            return i;
        const Result *r = &g->results[at - 1];
        if (r->lo == lo && r->hi == hi)
            return i;
        i = (i + 1) & mask;
    }
}

/* Room for one more result (grows the arrays; the table stays at most half full). */
static int generator_reserve(Generator *g)
{
    if (g->count == g->capacity) {
        int capacity = 2 * g->capacity;
        Result *grown = PyMem_Realloc(g->results, sizeof(Result) * (size_t)capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        g->results = grown;
        g->capacity = capacity;
    }
    if (2 * (g->count + 1) > g->n_slots) {
        int n_slots = 2 * g->n_slots;
        int32_t *slots = PyMem_Calloc((size_t)n_slots, sizeof(int32_t));
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        PyMem_Free(g->slots);
        g->slots = slots;
        g->n_slots = n_slots;
        for (int k = 0; k < g->count; k++)
            g->slots[find_slot(g, g->results[k].lo, g->results[k].hi)] = k + 1;
    }
    return 0;
}

/* `_generate`'s record(): the current board was reached using `used` dice, the first being
 * `first_die`, by the steps made so far. `insert_only` is its inlined fourth step of doubles (a
 * known key is not updated). As there, a known board takes the new play (steps, dice) when
 * it uses more dice, or as many with a higher first die. */
static int record(Generator *g, int used, int first_die, int insert_only)
{
    if (!g->on_board)
        used = g->full;
    uint64_t lo = 0, hi = 0;
    for (int i = 0; i < 16; i++)
        lo |= (uint64_t)g->mover[i] << (4 * i);
    for (int i = 16; i < N_LOCATIONS; i++)
        hi |= (uint64_t)g->mover[i] << (4 * (i - 16));
    hi |= (uint64_t)g->hit_mask << 36;
    int slot = find_slot(g, lo, hi);
    if (g->slots[slot]) {
        Result *known = &g->results[g->slots[slot] - 1];
        if (insert_only)
            return 0;
        if (known->used < used || (known->used == used && first_die > known->first)) {
            known->used = used;
            known->first = first_die;
            known->n_steps = g->depth;
            memcpy(known->steps, g->steps, sizeof(Move) * (size_t)g->depth);
        }
        return 0;
    }
    if (generator_reserve(g) < 0)
        return -1;
    slot = find_slot(g, lo, hi); /* the table may have been rebuilt */
    Result *r = &g->results[g->count++];
    memcpy(r->mover, g->mover, sizeof r->mover);
    memcpy(r->opponent, g->opponent, sizeof r->opponent);
    r->lo = lo;
    r->hi = hi;
    r->used = used;
    r->first = first_die;
    r->n_steps = g->depth;
    memcpy(r->steps, g->steps, sizeof(Move) * (size_t)g->depth);
    g->slots[slot] = g->count;
    return 0;
}

/* `_generate`'s moves_for(): the legal single steps with `die` from sources <= `limit`, in its
 * order (highest source first). */
static int moves_for(const Generator *g, int die, int limit, Move *out)
{
    const int *mover = g->mover, *opponent = g->opponent;
    int n = 0;
    if (!g->on_board)
        return 0;
    if (mover[24]) {
        if (limit < 24)
            return 0;
        int target = 24 - die;
        int count = opponent[23 - target];
        if (count >= 2)
            return 0;
        out[0].source = 24;
        out[0].target = target;
        out[0].hit = count == 1;
        return 1;
    }
    if (g->outside) {
        int shift = 23 + die;
        for (int i = limit < 23 ? limit : 23; i >= die; i--) {
            if (mover[i] && opponent[shift - i] < 2) {
                out[n].source = i;
                out[n].target = i - die;
                out[n].hit = opponent[shift - i] == 1;
                n++;
            }
        }
        return n;
    }
    /* All at home (R15/R16): exact bear-offs, and from the highest point with a larger die. */
    int highest = 5;
    while (highest >= 0 && !mover[highest])
        highest--;
    for (int i = limit < highest ? limit : highest; i >= 0; i--) {
        if (!mover[i])
            continue;
        int target = i - die;
        if (target >= 0) {
            int count = opponent[23 - target];
            if (count < 2) {
                out[n].source = i;
                out[n].target = target;
                out[n].hit = count == 1;
                n++;
            }
        } else if (target == -1 || i == highest) {
            out[n].source = i;
            out[n].target = -1;
            out[n].hit = 0;
            n++;
        }
    }
    return n;
}

static void push(Generator *g, const Move *m)
{
    g->steps[g->depth++] = *m;
    g->mover[m->source]--;
    if (m->target >= 0) {
        g->mover[m->target]++;
        if (m->hit) {
            g->opponent[23 - m->target] = 0;
            g->opponent[24]++;
            g->hit_mask |= UINT32_C(1) << m->target;
        }
        if (m->source >= 6 && m->target < 6)
            g->outside--;
    } else {
        g->on_board--;
    }
}

static void pop(Generator *g, const Move *m)
{
    g->depth--;
    g->mover[m->source]++;
    if (m->target >= 0) {
        g->mover[m->target]--;
        if (m->hit) {
            g->opponent[23 - m->target] = 1;
            g->opponent[24]--;
            g->hit_mask &= ~(UINT32_C(1) << m->target);
        }
        if (m->source >= 6 && m->target < 6)
            g->outside++;
    } else {
        g->on_board++;
    }
}

/* `_generate`'s walk() for doubles: sources in non-increasing order. */
static int walk(Generator *g, int die, int depth, int limit)
{
    Move moves[N_LOCATIONS];
    int n = moves_for(g, die, limit, moves);
    if (!n)
        return depth ? record(g, depth, die, 0) : 0;
    for (int k = 0; k < n; k++) {
        push(g, &moves[k]);
        int status = depth < 3 ? walk(g, die, depth + 1, moves[k].source)
                               : record(g, 4, die, 1);
        pop(g, &moves[k]);
        if (status < 0)
            return -1;
    }
    return 0;
}

/* Fill g->results with every board `_generate` records for (d1, d2) from `mover` on roll
 * against `opponent`, then keep the legal ones (max-dice and higher-die rules) in order; returns
 * their number, or -1 with an exception set. */
static int generate(Generator *g, const int *mover, const int *opponent, int d1, int d2)
{
    memcpy(g->mover, mover, sizeof g->mover);
    memcpy(g->opponent, opponent, sizeof g->opponent);
    g->on_board = g->outside = 0;
    for (int i = 0; i < N_LOCATIONS; i++) {
        g->on_board += mover[i];
        if (i >= 6)
            g->outside += mover[i];
    }
    g->hit_mask = 0;
    g->depth = 0;
    g->full = d1 == d2 ? 4 : 2;
    g->count = 0;
    memset(g->slots, 0, sizeof(int32_t) * (size_t)g->n_slots);
    if (d1 == d2) {
        if (walk(g, d1, 0, 24) < 0)
            return -1;
    } else {
        int order[2][2] = {{d1, d2}, {d2, d1}};
        for (int o = 0; o < 2; o++) {
            int first = order[o][0], second = order[o][1];
            Move moves[N_LOCATIONS], follow[N_LOCATIONS];
            int n = moves_for(g, first, 24, moves);
            for (int k = 0; k < n; k++) {
                push(g, &moves[k]);
                int m = moves_for(g, second, 24, follow);
                int status = 0;
                if (!m)
                    status = record(g, 1, first, 0);
                for (int j = 0; j < m && status == 0; j++) {
                    push(g, &follow[j]);
                    status = record(g, 2, first, 0);
                    pop(g, &follow[j]);
                }
                pop(g, &moves[k]);
                if (status < 0)
                    return -1;
            }
        }
    }
    if (!g->count)
        return 0;
    int best = 0, high = d1 > d2 ? d1 : d2, higher_only = 0;
    for (int k = 0; k < g->count; k++)
        if (g->results[k].used > best)
            best = g->results[k].used;
    if (best == 1 && d1 != d2)
        for (int k = 0; k < g->count; k++)
            if (g->results[k].used == 1 && g->results[k].first == high)
                higher_only = 1;
    int kept = 0;
    for (int k = 0; k < g->count; k++) {
        const Result *r = &g->results[k];
        if (r->used != best || (higher_only && r->first != high))
            continue;
        if (kept != k)
            g->results[kept] = *r;
        kept++;
    }
    g->count = kept; /* the table is stale now: `generate` clears it on the next call */
    return kept;
}

/* A legal board: no point (1..24) holds chequers of both sides. */
static int check_board(const int *mover, const int *opponent)
{
    for (int i = 0; i < 24; i++) {
        if (mover[i] && opponent[23 - i]) {
            PyErr_Format(PyExc_ValueError,
                         "point %d (mover's numbering) holds chequers of both sides", i + 1);
            return -1;
        }
    }
    return 0;
}

/* A die: an int 1..6. */
static int parse_die(PyObject *obj, const char *name, int *out)
{
    if (PyFloat_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", name,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t value = PyNumber_AsSsize_t(obj, NULL);
    if (value == -1 && PyErr_Occurred())
        return -1;
    if (value < 1 || value > 6) {
        PyErr_Format(PyExc_ValueError, "%s must be 1..6, got %zd", name, value);
        return -1;
    }
    *out = (int)value;
    return 0;
}

static PyObject *side_tuple(const int *side)
{
    PyObject *tuple = PyTuple_New(N_LOCATIONS);
    if (tuple == NULL)
        return NULL;
    for (int i = 0; i < N_LOCATIONS; i++) {
        PyObject *value = PyLong_FromLong(side[i]); /* small ints: cached, cannot fail */
        if (value == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, i, value);
    }
    return tuple;
}

/* Each step (from_point, to_point, hit) as `legal_plays` returns it, made once and shared
 * (tuples are immutable): step_cache[source][target + 1][hit], own indices as in Move. */
static PyObject *step_cache[N_LOCATIONS][N_LOCATIONS][2];

static PyObject *step_tuple(const Move *m)
{
    PyObject **slot = &step_cache[m->source][m->target + 1][m->hit ? 1 : 0];
    if (*slot == NULL) {
        PyObject *hit = m->hit ? Py_True : Py_False;
        Py_INCREF(hit);
        *slot = Py_BuildValue("(iiN)", m->source + 1, m->target + 1, hit);
        if (*slot == NULL)
            return NULL;
    }
    Py_INCREF(*slot);
    return *slot;
}

/* The steps of a result's play as a tuple of step tuples. */
static PyObject *steps_tuple(const Result *r)
{
    PyObject *steps = PyTuple_New(r->n_steps);
    if (steps == NULL)
        return NULL;
    for (int i = 0; i < r->n_steps; i++) {
        PyObject *step = step_tuple(&r->steps[i]);
        if (step == NULL) {
            Py_DECREF(steps);
            return NULL;
        }
        PyTuple_SET_ITEM(steps, i, step);
    }
    return steps;
}

/* legal_plays(mover, opponent, d1, d2): each distinct resulting board with its play. */
static PyObject *contact_legal_plays(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS], d1, d2;
    Generator g;
    (void)module;
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError,
                     "legal_plays() takes 4 arguments (mover, opponent, d1, d2), got %zd", nargs);
        return NULL;
    }
    if (parse_side(args[0], "mover", mover) < 0 || parse_side(args[1], "opponent", opponent) < 0 ||
        check_board(mover, opponent) < 0 || parse_die(args[2], "d1", &d1) < 0 ||
        parse_die(args[3], "d2", &d2) < 0)
        return NULL;
    if (generator_init(&g) < 0)
        return NULL;
    PyObject *list = NULL, *unhit = NULL; /* the opponent's counts when no blot was hit */
    int n = generate(&g, mover, opponent, d1, d2);
    if (n >= 0)
        list = PyList_New(n);
    for (int k = 0; list != NULL && k < n; k++) {
        const Result *r = &g.results[k];
        PyObject *after;
        if (r->hi >> 36) { /* a hit: the opponent's side changed */
            after = side_tuple(r->opponent);
        } else {
            if (unhit == NULL)
                unhit = side_tuple(r->opponent);
            after = unhit;
            Py_XINCREF(after);
        }
        PyObject *item = after == NULL ? NULL
                                       : Py_BuildValue("(NNN)", steps_tuple(r),
                                                       side_tuple(r->mover), after);
        if (item == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, item);
    }
    Py_XDECREF(unhit);
    generator_free(&g);
    return list;
}

/* ------------------------------------------------------------------------------- features() */

static PyObject *contact_features(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    Side me, other;
    double f[N_FEATURES];
    (void)module;
    if (parse_position(args, nargs, "features", mover, opponent) < 0)
        return NULL;
    side_info(mover, &me);
    side_info(opponent, &other);
    feature_vector(mover, opponent, &me, &other, f);
    PyObject *list = PyList_New(N_FEATURES);
    if (list == NULL)
        return NULL;
    for (int i = 0; i < N_FEATURES; i++) {
        PyObject *value = PyFloat_FromDouble(f[i]);
        if (value == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, value);
    }
    return list;
}

/* ------------------------------------------------------------------------------------- Net */

typedef struct {
    PyObject_HEAD
    double weights[N_HEADS][N_FEATURES];
    /* point_logits[r][i][n][h]: head h's weighted POINT_FEATURES of n chequers on location i,
     * for the side on roll (r = 0) or the other (r = 1). The point features are sums over
     * locations (point_feature_sums), so the logits are too: `fast_logits` adds these up
     * instead of building the feature vector. */
    double point_logits[2][N_LOCATIONS][CHEQUERS + 1][N_HEADS];
} NetObject;

static void build_point_logits(NetObject *self)
{
    int side[N_LOCATIONS];
    double f[N_POINT];
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < N_LOCATIONS; i++) {
            for (int n = 0; n <= CHEQUERS; n++) {
                memset(side, 0, sizeof side);
                side[i] = n;
                point_feature_sums(side, f);
                for (int h = 0; h < N_HEADS; h++) {
                    const double *w = self->weights[h] + r * N_BLOCK;
                    double sum = 0.0;
                    for (int k = 0; k < N_POINT; k++)
                        sum += w[k] * f[k];
                    self->point_logits[r][i][n][h] = sum;
                }
            }
        }
    }
}

static int Net_init(NetObject *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"weights", NULL};
    PyObject *weights;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Net", keywords, &weights))
        return -1;
    PyObject *heads = PySequence_Fast(weights, "weights must be a sequence of 5 sequences");
    if (heads == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(heads) != N_HEADS) {
        PyErr_Format(PyExc_ValueError, "weights must have 5 heads, got %zd",
                     PySequence_Fast_GET_SIZE(heads));
        Py_DECREF(heads);
        return -1;
    }
    double parsed[N_HEADS][N_FEATURES];
    for (int h = 0; h < N_HEADS; h++) {
        PyObject *head = PySequence_Fast(PySequence_Fast_GET_ITEM(heads, h),
                                         "each head's weights must be a sequence of floats");
        if (head == NULL) {
            Py_DECREF(heads);
            return -1;
        }
        if (PySequence_Fast_GET_SIZE(head) != N_FEATURES) {
            PyErr_Format(PyExc_ValueError, "head %d must have %d weights, got %zd", h, N_FEATURES,
                         PySequence_Fast_GET_SIZE(head));
            Py_DECREF(head);
            Py_DECREF(heads);
            return -1;
        }
        for (int i = 0; i < N_FEATURES; i++) {
            double w = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(head, i));
            if (w == -1.0 && PyErr_Occurred()) {
                Py_DECREF(head);
                Py_DECREF(heads);
                return -1;
            }
            parsed[h][i] = w;
        }
        Py_DECREF(head);
    }
    Py_DECREF(heads);
    memcpy(self->weights, parsed, sizeof parsed);
    build_point_logits(self);
    return 0;
}

/* The five logits, weights . feature_vector(mover, opponent), summed in another order (the
 * point features' share from the tables, then the global and cross features): equal to
 * the dot product with `feature_vector` up to rounding (about 1e-15), five times faster. */
static void fast_logits(const NetObject *self, const int *mover, const int *opponent,
                        const Side *me, const Side *other, double *z)
{
    double mine[N_GLOBAL], theirs[N_GLOBAL], cross[N_CROSS];
    global_features(me, mine);
    global_features(other, theirs);
    cross_features(me, other, cross);
    for (int h = 0; h < N_HEADS; h++)
        z[h] = self->weights[h][N_FEATURES - 1]; /* the bias (its feature is 1) */
    for (int i = 0; i < N_LOCATIONS; i++) {
        if (mover[i]) {
            const double *t = self->point_logits[0][i][mover[i]];
            for (int h = 0; h < N_HEADS; h++)
                z[h] += t[h];
        }
        if (opponent[i]) {
            const double *t = self->point_logits[1][i][opponent[i]];
            for (int h = 0; h < N_HEADS; h++)
                z[h] += t[h];
        }
    }
    for (int h = 0; h < N_HEADS; h++) {
        const double *w = self->weights[h];
        double sum = z[h];
        for (int k = 0; k < N_GLOBAL; k++)
            sum += w[N_POINT + k] * mine[k] + w[N_BLOCK + N_POINT + k] * theirs[k];
        for (int k = 0; k < N_CROSS; k++)
            sum += w[2 * N_BLOCK + k] * cross[k];
        z[h] = sum;
    }
}

static PyObject *tuple5(const double *v)
{
    PyObject *tuple = PyTuple_New(N_HEADS);
    if (tuple == NULL)
        return NULL;
    for (int h = 0; h < N_HEADS; h++) {
        PyObject *value = PyFloat_FromDouble(v[h]);
        if (value == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, h, value);
    }
    return tuple;
}

static PyObject *Net_logits(NetObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    Side me, other;
    double z[N_HEADS];
    if (parse_position(args, nargs, "logits", mover, opponent) < 0)
        return NULL;
    side_info(mover, &me);
    side_info(opponent, &other);
    fast_logits(self, mover, opponent, &me, &other, z);
    return tuple5(z);
}

static double sigmoid(double z)
{
    return 1.0 / (1.0 + exp(-z));
}

/* The constrained probabilities of HeuristicEvaluator.evaluate_sides for a contact position
 * (the caller has checked that it is one), `mover` on roll. */
static void contact_probabilities(const NetObject *self, const int *mover, const int *opponent,
                                  const Side *me, const Side *other, double *p)
{
    double z[N_HEADS];
    double s;
    fast_logits(self, mover, opponent, me, other, z);
    p[0] = z[0] > -700.0 ? sigmoid(z[0]) : 0.0;
    p[1] = p[2] = p[3] = p[4] = 0.0;
    if (!other->off && z[1] > -700.0) {
        s = sigmoid(z[1]);
        p[1] = p[0] < s ? p[0] : s;
        if (other->back && z[2] > -700.0) {
            s = sigmoid(z[2]);
            p[2] = p[1] < s ? p[1] : s;
        }
    }
    if (!me->off && z[3] > -700.0) {
        double lose = 1.0 - p[0];
        s = sigmoid(z[3]);
        p[3] = lose < s ? lose : s;
        if (me->back && z[4] > -700.0) {
            s = sigmoid(z[4]);
            p[4] = p[3] < s ? p[3] : s;
        }
    }
}

/* Whether the position is for the contact net: nobody has borne everything off, and some
 * chequer still has to pass one of the other side (Position.is_contact). */
static int is_contact(const Side *me, const Side *other)
{
    return me->off != CHEQUERS && other->off != CHEQUERS && me->rearmost + other->rearmost > 25;
}

/* HeuristicEvaluator.evaluate_sides for a contact position; None when that must not use the net
 * (a side has borne everything off, or there is no contact). */
static PyObject *Net_contact(NetObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    Side me, other;
    double p[N_HEADS];
    if (parse_position(args, nargs, "contact", mover, opponent) < 0)
        return NULL;
    side_info(mover, &me);
    side_info(opponent, &other);
    if (!is_contact(&me, &other))
        Py_RETURN_NONE;
    contact_probabilities(self, mover, opponent, &me, &other, p);
    return tuple5(p);
}

/* ---------------------------------------------------------------------------- look-ahead */

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

/* HeuristicEvaluator.evaluate_sides(mover, opponent) with the compiled net: `mover` on roll.
 * A finished game gets its exact outcome (evaluator._terminal), a contact position the net, a
 * race what race(mover, opponent) says. */
static int evaluate_on_roll(const NetObject *self, const int *mover, const int *opponent,
                            PyObject *race, double *p)
{
    Side me, other;
    side_info(mover, &me);
    side_info(opponent, &other);
    if (me.off == CHEQUERS || other.off == CHEQUERS) {
        int mover_won = me.off == CHEQUERS;
        const Side *loser = mover_won ? &other : &me;
        double gammon = loser->off == 0 ? 1.0 : 0.0;
        double backgammon = loser->off == 0 && loser->back ? 1.0 : 0.0;
        p[0] = mover_won ? 1.0 : 0.0;
        p[1] = mover_won ? gammon : 0.0;
        p[2] = mover_won ? backgammon : 0.0;
        p[3] = mover_won ? 0.0 : gammon;
        p[4] = mover_won ? 0.0 : backgammon;
        return 0;
    }
    if (is_contact(&me, &other)) {
        contact_probabilities(self, mover, opponent, &me, &other, p);
        return 0;
    }
    return call_race(race, mover, opponent, p);
}

/* Probabilities.equity, with Python's order of operations. */
static double equity(const double *p)
{
    return 2.0 * p[0] - 1.0 + p[1] - p[3] + p[2] - p[4];
}

/* The 21-roll average of heuristic.py: `roller` rolls against `other`; each play's board is
 * evaluated with `other` on roll. for_roller = 0 (`_one_ply_probs`): the roller minimises the
 * other's equity and the average is the other's chances; 1 (`roll_average`): he maximises his
 * own and the average is his. The first best play in `play_results` order is kept. */
static void flip(const double *p, double *q)
{
    q[0] = 1.0 - p[0];
    q[1] = p[3];
    q[2] = p[4];
    q[3] = p[1];
    q[4] = p[2];
}

static int roll_loop(const NetObject *self, Generator *g, const int *roller, const int *other,
                     PyObject *race, int for_roller, double *out)
{
    double total[N_HEADS] = {0.0, 0.0, 0.0, 0.0, 0.0};
    double p[N_HEADS], q[N_HEADS], best[N_HEADS] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (int a = 1; a <= 6; a++) {
        for (int b = a; b <= 6; b++) {
            int n = generate(g, roller, other, a, b);
            if (n < 0)
                return -1;
            if (n == 0) { /* no legal play: the roller stands pat */
                if (evaluate_on_roll(self, other, roller, race, p) < 0)
                    return -1;
                if (for_roller)
                    flip(p, best);
                else
                    memcpy(best, p, sizeof p);
            }
            double best_eq = for_roller ? -1e9 : 1e9;
            for (int k = 0; k < n; k++) {
                const Result *r = &g->results[k];
                if (evaluate_on_roll(self, r->opponent, r->mover, race, p) < 0)
                    return -1;
                if (for_roller)
                    flip(p, q);
                else
                    memcpy(q, p, sizeof p);
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

static PyObject *look_ahead(NetObject *self, PyObject *const *args, Py_ssize_t nargs,
                            const char *name, int for_roller)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    double out[N_HEADS];
    Generator g;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes 3 arguments (mover, opponent, race), got %zd", name, nargs);
        return NULL;
    }
    if (parse_side(args[0], "mover", mover) < 0 || parse_side(args[1], "opponent", opponent) < 0 ||
        check_board(mover, opponent) < 0)
        return NULL;
    if (!PyCallable_Check(args[2])) {
        PyErr_Format(PyExc_TypeError, "race must be callable, not %.100s",
                     Py_TYPE(args[2])->tp_name);
        return NULL;
    }
    if (!for_roller) {
        Side me, other;
        side_info(mover, &me);
        side_info(opponent, &other);
        if (me.off == CHEQUERS || other.off == CHEQUERS) { /* the game is over */
            if (evaluate_on_roll(self, mover, opponent, args[2], out) < 0)
                return NULL;
            return tuple5(out);
        }
    }
    if (generator_init(&g) < 0)
        return NULL;
    int status = for_roller ? roll_loop(self, &g, mover, opponent, args[2], 1, out)
                            : roll_loop(self, &g, opponent, mover, args[2], 0, out);
    generator_free(&g);
    return status < 0 ? NULL : tuple5(out);
}

/* heuristic.HeuristicPlayer._one_ply_probs(after) with every reply evaluated. */
static PyObject *Net_one_ply(NetObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return look_ahead(self, args, nargs, "one_ply", 0);
}

/* heuristic.roll_average(evaluator, position) with every play evaluated. */
static PyObject *Net_roll_average(NetObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return look_ahead(self, args, nargs, "roll_average", 1);
}

/* Pickling (evaluators travel to worker processes): Net(weights) again. */
static PyObject *Net_reduce(NetObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *heads = PyList_New(N_HEADS);
    if (heads == NULL)
        return NULL;
    for (int h = 0; h < N_HEADS; h++) {
        PyObject *head = PyList_New(N_FEATURES);
        if (head == NULL) {
            Py_DECREF(heads);
            return NULL;
        }
        PyList_SET_ITEM(heads, h, head);
        for (int i = 0; i < N_FEATURES; i++) {
            PyObject *value = PyFloat_FromDouble(self->weights[h][i]);
            if (value == NULL) {
                Py_DECREF(heads);
                return NULL;
            }
            PyList_SET_ITEM(head, i, value);
        }
    }
    return Py_BuildValue("O(N)", (PyObject *)Py_TYPE(self), heads);
}

static PyMethodDef Net_methods[] = {
    {"__reduce__", (PyCFunction)Net_reduce, METH_NOARGS, "Pickle support: Net(weights)."},
    {"logits", (PyCFunction)(void (*)(void))Net_logits, METH_FASTCALL,
     "logits(mover, opponent) -> the five heads' logits (weights . features)."},
    {"contact", (PyCFunction)(void (*)(void))Net_contact, METH_FASTCALL,
     "contact(mover, opponent) -> the five constrained probabilities for the player on roll, "
     "or None when the position is not for the contact net (no contact, or a side is off)."},
    {"one_ply", (PyCFunction)(void (*)(void))Net_one_ply, METH_FASTCALL,
     "one_ply(mover, opponent, race) -> the chances of `mover`, who has just moved, averaged "
     "over the 21 rolls of `opponent`, each answered by the reply that minimises mover's "
     "cubeless equity (HeuristicPlayer._one_ply_probs with every reply evaluated); race(m, o) "
     "gives the chances of m on roll in a race."},
    {"roll_average", (PyCFunction)(void (*)(void))Net_roll_average, METH_FASTCALL,
     "roll_average(mover, opponent, race) -> the chances of `mover`, on roll, averaged over "
     "his 21 rolls, each played to his best cubeless equity (heuristic.roll_average with every "
     "play evaluated); race as for one_ply."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject NetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bgbot.players._contact.Net",
    .tp_basicsize = sizeof(NetObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Net(weights): the five contact heads (evaluator.HEADS order), each a sequence of "
              "N_FEATURES weights in FEATURE_NAMES order.",
    .tp_methods = Net_methods,
    .tp_init = (initproc)Net_init,
    .tp_new = PyType_GenericNew,
};

/* ---------------------------------------------------------------------------------- module */

static PyMethodDef module_methods[] = {
    {"features", (PyCFunction)(void (*)(void))contact_features, METH_FASTCALL,
     "features(mover, opponent) -> features.feature_vector(mover, opponent) (FEATURE_NAMES "
     "order); mover is on roll."},
    {"legal_plays", (PyCFunction)(void (*)(void))contact_legal_plays, METH_FASTCALL,
     "legal_plays(mover, opponent, d1, d2) -> [(steps, mover after, opponent after), ...]: "
     "the distinct boards after the legal plays of the roll, in Position.play_results order, "
     "each with the play play_results pairs with it, as a tuple of (from_point, to_point, hit) "
     "steps in the mover's numbering (25 = bar, 0 = off)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef contact_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "bgbot.players._contact",
    .m_doc = "The heuristic evaluator's contact features and five-head net in C (optional; "
             "bgbot/players/features.py is the definition).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__contact(void)
{
    build_tables();
    if (PyType_Ready(&NetType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&contact_module);
    if (module == NULL)
        return NULL;
    Py_INCREF(&NetType);
    if (PyModule_AddObject(module, "Net", (PyObject *)&NetType) < 0) {
        Py_DECREF(&NetType);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "N_FEATURES", N_FEATURES) < 0 ||
        PyModule_AddIntConstant(module, "N_HEADS", N_HEADS) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
