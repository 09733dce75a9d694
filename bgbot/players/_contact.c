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

#include "_movegen.h"

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

/* ------------------------------------------------------------------------- evaluators */

/* What the look-ahead and self-play need of an evaluator: the five constrained chances of the
 * player on roll (`mover`) in a contact position. Both evaluator types (the linear `Net` of
 * `eval=linear` and the network `Mlp`) start with this header, so C code can hold either. */
struct EvalBase;
typedef void (*ContactFn)(const struct EvalBase *self, const int *mover, const int *opponent,
                          const Side *me, const Side *other, double *p);
typedef struct EvalBase {
    PyObject_HEAD
    ContactFn contact;
    /* The race network (an Mlp) for races outside the bear-off database's zone, or NULL: then
     * every race goes to the Python call-back (the race model). */
    struct EvalBase *race_net;
} EvalBase;

static PyTypeObject NetType;
static PyTypeObject MlpType;

/* The evaluator in `obj` (a Net or an Mlp), or NULL with a TypeError. */
static const EvalBase *as_evaluator(PyObject *obj, const char *name)
{
    if (PyObject_TypeCheck(obj, &NetType) || PyObject_TypeCheck(obj, &MlpType))
        return (const EvalBase *)obj;
    PyErr_Format(PyExc_TypeError, "%s must be a Net or an Mlp, not %.100s", name,
                 Py_TYPE(obj)->tp_name);
    return NULL;
}

/* set_race_network(mlp or None): the network for races outside the bear-off zone. */
static PyObject *eval_set_race_network(PyObject *self, PyObject *arg)
{
    EvalBase *e = (EvalBase *)self;
    if (arg != Py_None && !PyObject_TypeCheck(arg, &MlpType)) {
        PyErr_Format(PyExc_TypeError, "the race network must be an Mlp or None, not %.100s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    if (arg == self || (arg != Py_None && ((EvalBase *)arg)->race_net != NULL)) {
        PyErr_SetString(PyExc_ValueError,
                        "a race network must be another network without a race network");
        return NULL;
    }
    EvalBase *old = e->race_net;
    if (arg != Py_None) {
        Py_INCREF(arg);
        e->race_net = (EvalBase *)arg;
    } else {
        e->race_net = NULL;
    }
    Py_XDECREF((PyObject *)old);
    Py_RETURN_NONE;
}

static PyObject *eval_race_network(PyObject *self, void *closure)
{
    (void)closure;
    PyObject *race = (PyObject *)((EvalBase *)self)->race_net;
    if (race == NULL)
        Py_RETURN_NONE;
    Py_INCREF(race);
    return race;
}

static PyGetSetDef eval_getset[] = {
    {"race_network", eval_race_network, NULL,
     "The network for races outside the bear-off zone (set_race_network), or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

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

/* Whether the position is for the contact evaluation: nobody has borne everything off, and
 * some chequer still has to pass one of the other side (Position.is_contact). */
static int is_contact(const Side *me, const Side *other)
{
    return me->off != CHEQUERS && other->off != CHEQUERS && me->rearmost + other->rearmost > 25;
}

/* evaluate_sides for a contact position; None when the position is not for the contact
 * evaluation (a side has borne everything off, or there is no contact). */
static PyObject *eval_contact(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
    const EvalBase *e = (const EvalBase *)self;
    e->contact(e, mover, opponent, &me, &other, p);
    return tuple5(p);
}

/* ------------------------------------------------------------------------ Net (linear) */

typedef struct {
    EvalBase base;
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

static void net_contact(const EvalBase *base, const int *mover, const int *opponent,
                        const Side *me, const Side *other, double *p);

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
    self->base.contact = net_contact;
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

/* The constrained probabilities of HeuristicEvaluator.evaluate_sides (linear heads) for a
 * contact position (the caller has checked that it is one), `mover` on roll. */
static void net_contact(const EvalBase *base, const int *mover, const int *opponent,
                        const Side *me, const Side *other, double *p)
{
    const NetObject *self = (const NetObject *)base;
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
    PyObject *race = self->base.race_net ? (PyObject *)self->base.race_net : Py_None;
    return Py_BuildValue("O(N)O", (PyObject *)Py_TYPE(self), heads, race);
}

/* __setstate__(race network): what __reduce__ gave besides the weights. */
static PyObject *eval_setstate(PyObject *self, PyObject *state)
{
    return eval_set_race_network(self, state);
}

static void Net_dealloc(NetObject *self)
{
    Py_CLEAR(self->base.race_net);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ------------------------------------------------------------------- Mlp (the network) */

/* The network's inputs (network.py's `inputs`, the definition): the contact features of
 * features.py without the bias (N_FEATURES - 1), then a plain board encoding of each side,
 * the player on roll first: per point 1..24 four units (at least 1, 2, 3 chequers, and
 * (n - 3) / 2 beyond 3), the bar / 2 and the chequers off / 15. */
#define N_RAW_SIDE (4 * 24 + 2)
#define N_INPUTS (N_FEATURES - 1 + 2 * N_RAW_SIDE)
#define N_OUTCOMES 6 /* win single, gammon, backgammon; lose single, gammon, backgammon */
#define MAX_LAYERS 3 /* hidden layers at most */
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

static void encode_inputs(const int *mover, const int *opponent, const Side *me,
                          const Side *other, float *x)
{
    double f[N_FEATURES];
    feature_vector(mover, opponent, me, other, f);
    for (int i = 0; i < N_FEATURES - 1; i++)
        x[i] = (float)f[i];
    raw_side(mover, me->off, x + N_FEATURES - 1);
    raw_side(opponent, other->off, x + N_FEATURES - 1 + N_RAW_SIDE);
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

typedef struct {
    EvalBase base;
    int n_layers;                /* hidden layers */
    int width[MAX_LAYERS + 2];   /* width[0] = N_INPUTS, then the hidden layers, then 6 */
    float *weights[MAX_LAYERS + 1]; /* layer k: [width[k]][width[k + 1]], input-major */
    float *bias[MAX_LAYERS + 1];
    PyObject *blob;              /* the bytes the weights were read from (for pickling) */
} MlpObject;

/* Six outcome probabilities of the network for the inputs x, the impossible outcomes
 * (allowed[k] = 0) given no probability. Hidden units are ReLUs; the first layer skips zero
 * inputs (most of the board encoding is zero). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
/* Built twice, for AVX2 and for any x86-64, the one the CPU runs chosen at load: the same
 * operations element by element (no FMA: "avx2" does not allow it), eight floats at a time
 * instead of four, so the same results bit for bit. */
__attribute__((target_clones("avx2", "default")))
#endif
static void mlp_forward(const MlpObject *m, const float *x, const unsigned char *allowed,
                        double *out)
{
    float a[MAX_WIDTH], b[MAX_WIDTH];
    const float *in = x;
    float *act = a;
    for (int layer = 0; layer <= m->n_layers; layer++) {
        int n_in = m->width[layer], n_out = m->width[layer + 1];
        const float *w = m->weights[layer];
        memcpy(act, m->bias[layer], sizeof(float) * (size_t)n_out);
        for (int i = 0; i < n_in; i++) {
            float v = in[i];
            if (v == 0.0f)
                continue;
            const float *row = w + (size_t)i * (size_t)n_out;
            for (int j = 0; j < n_out; j++)
                act[j] += v * row[j];
        }
        if (layer < m->n_layers)
            for (int j = 0; j < n_out; j++)
                act[j] = act[j] > 0.0f ? act[j] : 0.0f;
        in = act;
        act = act == a ? b : a;
    }
    /* `in` holds the six logits */
    double top = -1e300, total = 0.0, e[N_OUTCOMES];
    for (int k = 0; k < N_OUTCOMES; k++)
        if (allowed[k] && in[k] > top)
            top = in[k];
    for (int k = 0; k < N_OUTCOMES; k++) {
        e[k] = allowed[k] ? exp((double)in[k] - top) : 0.0;
        total += e[k];
    }
    for (int k = 0; k < N_OUTCOMES; k++)
        out[k] = e[k] / total;
}

/* The five chances (gnubg's order) from the six outcome probabilities. */
static void chances_from_outcomes(const double *o, double *p)
{
    p[2] = o[2];
    p[1] = o[1] + o[2];
    p[0] = o[0] + p[1];
    p[4] = o[5];
    p[3] = o[4] + o[5];
}

static void mlp_contact(const EvalBase *base, const int *mover, const int *opponent,
                        const Side *me, const Side *other, double *p)
{
    const MlpObject *self = (const MlpObject *)base;
    float x[N_INPUTS];
    unsigned char allowed[N_OUTCOMES];
    double o[N_OUTCOMES];
    encode_inputs(mover, opponent, me, other, x);
    outcome_mask(me, other, allowed);
    mlp_forward(self, x, allowed, o);
    chances_from_outcomes(o, p);
}

static void Mlp_free_arrays(MlpObject *self)
{
    for (int k = 0; k <= MAX_LAYERS; k++) {
        PyMem_Free(self->weights[k]);
        PyMem_Free(self->bias[k]);
        self->weights[k] = self->bias[k] = NULL;
    }
}

static void Mlp_dealloc(MlpObject *self)
{
    Mlp_free_arrays(self);
    Py_CLEAR(self->base.race_net);
    Py_XDECREF(self->blob);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Mlp(weights, hidden): `weights` a bytes-like of little-endian float32, layer by layer the
 * input-major weight matrix then the biases; `hidden` the widths of the hidden layers. */
static int Mlp_init(MlpObject *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"weights", "hidden", NULL};
    PyObject *blob, *hidden;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:Mlp", keywords, &blob, &hidden))
        return -1;
    PyObject *widths = PySequence_Fast(hidden, "hidden must be a sequence of layer widths");
    if (widths == NULL)
        return -1;
    Py_ssize_t n_layers = PySequence_Fast_GET_SIZE(widths);
    if (n_layers < 1 || n_layers > MAX_LAYERS) {
        PyErr_Format(PyExc_ValueError, "an Mlp has 1 to %d hidden layers, got %zd", MAX_LAYERS,
                     n_layers);
        Py_DECREF(widths);
        return -1;
    }
    int width[MAX_LAYERS + 2];
    width[0] = N_INPUTS;
    for (Py_ssize_t k = 0; k < n_layers; k++) {
        long w = PyLong_AsLong(PySequence_Fast_GET_ITEM(widths, k));
        if (w == -1 && PyErr_Occurred()) {
            Py_DECREF(widths);
            return -1;
        }
        if (w < 1 || w > MAX_WIDTH) {
            PyErr_Format(PyExc_ValueError, "hidden layer %zd: width %ld is not 1..%d", k, w,
                         MAX_WIDTH);
            Py_DECREF(widths);
            return -1;
        }
        width[k + 1] = (int)w;
    }
    Py_DECREF(widths);
    width[n_layers + 1] = N_OUTCOMES;
    Py_buffer view;
    if (PyObject_GetBuffer(blob, &view, PyBUF_SIMPLE) < 0)
        return -1;
    Py_ssize_t expected = 0;
    for (Py_ssize_t k = 0; k <= n_layers; k++)
        expected += (Py_ssize_t)width[k] * width[k + 1] + width[k + 1];
    if (view.len != expected * (Py_ssize_t)sizeof(float)) {
        PyErr_Format(PyExc_ValueError,
                     "weights: %zd bytes for %zd float32 parameters were expected, got %zd",
                     expected * (Py_ssize_t)sizeof(float), expected, view.len);
        PyBuffer_Release(&view);
        return -1;
    }
    Mlp_free_arrays(self);
    const unsigned char *at = view.buf;
    for (Py_ssize_t k = 0; k <= n_layers; k++) {
        size_t nw = (size_t)width[k] * (size_t)width[k + 1], nb = (size_t)width[k + 1];
        self->weights[k] = PyMem_Malloc(nw * sizeof(float));
        self->bias[k] = PyMem_Malloc(nb * sizeof(float));
        if (self->weights[k] == NULL || self->bias[k] == NULL) {
            PyBuffer_Release(&view);
            PyErr_NoMemory();
            return -1;
        }
        memcpy(self->weights[k], at, nw * sizeof(float));
        at += nw * sizeof(float);
        memcpy(self->bias[k], at, nb * sizeof(float));
        at += nb * sizeof(float);
    }
    PyObject *copy = PyBytes_FromStringAndSize(view.buf, view.len);
    PyBuffer_Release(&view);
    if (copy == NULL)
        return -1;
    self->n_layers = (int)n_layers;
    memcpy(self->width, width, sizeof width);
    Py_XSETREF(self->blob, copy);
    self->base.contact = mlp_contact;
    return 0;
}

static PyObject *Mlp_reduce(MlpObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *hidden = PyTuple_New(self->n_layers);
    if (hidden == NULL)
        return NULL;
    for (int k = 0; k < self->n_layers; k++)
        PyTuple_SET_ITEM(hidden, k, PyLong_FromLong(self->width[k + 1]));
    PyObject *blob = self->blob != NULL ? self->blob : Py_None;
    PyObject *race = self->base.race_net ? (PyObject *)self->base.race_net : Py_None;
    return Py_BuildValue("O(ON)O", (PyObject *)Py_TYPE(self), blob, hidden, race);
}

/* outcomes(mover, opponent) -> the six outcome probabilities (for tests and training). */
static PyObject *Mlp_outcomes(MlpObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    Side me, other;
    float x[N_INPUTS];
    unsigned char allowed[N_OUTCOMES];
    double o[N_OUTCOMES];
    if (parse_position(args, nargs, "outcomes", mover, opponent) < 0)
        return NULL;
    side_info(mover, &me);
    side_info(opponent, &other);
    encode_inputs(mover, opponent, &me, &other, x);
    outcome_mask(&me, &other, allowed);
    mlp_forward(self, x, allowed, o);
    PyObject *tuple = PyTuple_New(N_OUTCOMES);
    for (int k = 0; tuple != NULL && k < N_OUTCOMES; k++)
        PyTuple_SET_ITEM(tuple, k, PyFloat_FromDouble(o[k]));
    return tuple;
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

/* Both sides have every chequer in their home boards: the bear-off database's zone, where the
 * call-back gives exact chances. */
static int in_bearoff_zone(const Side *me, const Side *other)
{
    return me->rearmost <= 6 && other->rearmost <= 6;
}

/* The exact outcome of a finished game (evaluator._terminal), `mover` on roll; 0 if the game
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

/* HeuristicEvaluator.evaluate_sides(mover, opponent): `mover` on roll. A finished game gets its
 * exact outcome, a contact position the evaluator, a race what race(mover, opponent) says. */
static int evaluate_on_roll(const EvalBase *e, const int *mover, const int *opponent,
                            PyObject *race, double *p)
{
    Side me, other;
    side_info(mover, &me);
    side_info(opponent, &other);
    if (terminal_chances(&me, &other, p))
        return 0;
    if (is_contact(&me, &other)) {
        e->contact(e, mover, opponent, &me, &other, p);
        return 0;
    }
    if (e->race_net != NULL && !in_bearoff_zone(&me, &other)) {
        e->race_net->contact(e->race_net, mover, opponent, &me, &other, p);
        return 0;
    }
    return call_race(race, mover, opponent, p);
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

/* The 21-roll average of heuristic.py: `roller` rolls against `other`; each play's board is
 * evaluated with `other` on roll. for_roller = 0 (`_one_ply_probs`): the roller minimises the
 * other's equity and the average is the other's chances; 1 (`roll_average`): he maximises his
 * own and the average is his. The first best play in `play_results` order is kept. */
static int roll_loop(const EvalBase *e, Generator *g, const int *roller, const int *other,
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
                if (evaluate_on_roll(e, other, roller, race, p) < 0)
                    return -1;
                if (for_roller)
                    flip(p, best);
                else
                    memcpy(best, p, sizeof p);
            }
            double best_eq = for_roller ? -1e9 : 1e9;
            for (int k = 0; k < n; k++) {
                const Result *r = &g->results[k];
                if (evaluate_on_roll(e, r->opponent, r->mover, race, p) < 0)
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

static PyObject *look_ahead(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            const char *name, int for_roller)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    double out[N_HEADS];
    Generator g;
    const EvalBase *e = (const EvalBase *)self;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes 3 arguments (mover, opponent, race), got %zd", name, nargs);
        return NULL;
    }
    if (parse_side(args[0], "mover", mover) < 0 || parse_side(args[1], "opponent", opponent) < 0 ||
        check_board(mover, opponent) < 0 || check_race(args[2]) < 0)
        return NULL;
    if (generator_init(&g) < 0)
        return NULL;
    int status = for_roller ? roll_loop(e, &g, mover, opponent, args[2], 1, out)
                            : one_ply_value(e, &g, mover, opponent, args[2], out);
    generator_free(&g);
    return status < 0 ? NULL : tuple5(out);
}

/* heuristic.HeuristicPlayer._one_ply_probs(after) with every reply evaluated. */
static PyObject *eval_one_ply(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return look_ahead(self, args, nargs, "one_ply", 0);
}

/* heuristic.roll_average(evaluator, position) with every play evaluated. */
static PyObject *eval_roll_average(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return look_ahead(self, args, nargs, "roll_average", 1);
}

/* A candidate of a two-ply search: a reply's board and its 0-ply equity for the replier. */
typedef struct {
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    double equity;
} Reply;

static int compare_replies(const void *a, const void *b)
{
    double x = ((const Reply *)a)->equity, y = ((const Reply *)b)->equity;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* two_ply(mover, opponent, race, keep, threshold): the chances of `mover`, who has just
 * moved, two plies ahead: over the opponent's 21 rolls, the opponent's replies ranked by 0-ply
 * equity, the best `keep` of them within `threshold` of the best looked at one ply deeper
 * (`one_ply` from the opponent's side), and the reply best for the opponent at that depth
 * taken. heuristic.HeuristicPlayer._two_ply_probs is the definition. */
static PyObject *eval_two_ply(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    const EvalBase *e = (const EvalBase *)self;
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError,
                     "two_ply() takes 5 arguments (mover, opponent, race, keep, threshold), "
                     "got %zd", nargs);
        return NULL;
    }
    if (parse_side(args[0], "mover", mover) < 0 || parse_side(args[1], "opponent", opponent) < 0 ||
        check_board(mover, opponent) < 0 || check_race(args[2]) < 0)
        return NULL;
    long keep = PyLong_AsLong(args[3]);
    if (keep == -1 && PyErr_Occurred())
        return NULL;
    if (keep < 1) {
        PyErr_Format(PyExc_ValueError, "keep must be at least 1, got %ld", keep);
        return NULL;
    }
    double threshold = PyFloat_AsDouble(args[4]);
    if (threshold == -1.0 && PyErr_Occurred())
        return NULL;
    double out[N_HEADS];
    Side me, other;
    side_info(mover, &me);
    side_info(opponent, &other);
    if (terminal_chances(&me, &other, out))
        return tuple5(out);
    Generator g, inner;
    if (generators_init(&g, &inner) < 0)
        return NULL;
    Reply *replies = NULL;
    int status = 0;
    double total[N_HEADS] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (int a = 1; a <= 6 && status == 0; a++) {
        for (int b = a; b <= 6 && status == 0; b++) {
            double best[N_HEADS], p[N_HEADS], q[N_HEADS];
            int n = generate(&g, opponent, mover, a, b);
            if (n < 0) {
                status = -1;
                break;
            }
            if (n == 0) { /* the opponent stands pat: we are on roll, one ply deeper */
                if (roll_loop(e, &inner, mover, opponent, args[2], 1, best) < 0) {
                    status = -1;
                    break;
                }
            } else {
                Reply *grown = PyMem_Realloc(replies, sizeof(Reply) * (size_t)n);
                if (grown == NULL) {
                    PyErr_NoMemory();
                    status = -1;
                    break;
                }
                replies = grown;
                for (int k = 0; k < n && status == 0; k++) {
                    const Result *r = &g.results[k];
                    memcpy(replies[k].mover, r->mover, sizeof r->mover);
                    memcpy(replies[k].opponent, r->opponent, sizeof r->opponent);
                    /* we are on roll after the reply: the replier's equity is minus ours */
                    if (evaluate_on_roll(e, r->opponent, r->mover, args[2], p) < 0)
                        status = -1;
                    replies[k].equity = -equity(p);
                }
                if (status < 0)
                    break;
                /* stable: equal equities keep play_results order */
                for (int k = 0; k < n; k++)
                    replies[k].equity -= 1e-12 * k;
                qsort(replies, (size_t)n, sizeof(Reply), compare_replies);
                int kept = 0;
                double best_eq = -1e9;
                while (kept < n && kept < keep &&
                       replies[kept].equity >= replies[0].equity - threshold) {
                    /* the replier's chances one ply deeper: ours flipped */
                    if (one_ply_value(e, &inner, replies[kept].mover, replies[kept].opponent,
                                      args[2], q) < 0) {
                        status = -1;
                        break;
                    }
                    double eq = equity(q);
                    if (eq > best_eq) {
                        best_eq = eq;
                        flip(q, best);
                    }
                    kept++;
                }
                if (status < 0)
                    break;
            }
            double weight = a == b ? 1.0 : 2.0;
            for (int h = 0; h < N_HEADS; h++)
                total[h] += weight * best[h];
        }
    }
    PyMem_Free(replies);
    generator_free(&g);
    generator_free(&inner);
    if (status < 0)
        return NULL;
    for (int h = 0; h < N_HEADS; h++)
        out[h] = total[h] / 36.0;
    return tuple5(out);
}

/* plays(mover, opponent, d1, d2, race) -> [(steps, mover after, opponent after, chances)]:
 * every candidate of the roll (core._movegen.results order) with the mover's 0-ply chances
 * after it (the opponent on roll, flipped): all candidates of a move in one call. */
static PyObject *eval_plays(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS], d1, d2;
    const EvalBase *e = (const EvalBase *)self;
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError,
                     "plays() takes 5 arguments (mover, opponent, d1, d2, race), got %zd", nargs);
        return NULL;
    }
    if (parse_side(args[0], "mover", mover) < 0 || parse_side(args[1], "opponent", opponent) < 0 ||
        check_board(mover, opponent) < 0 || parse_die(args[2], "d1", &d1) < 0 ||
        parse_die(args[3], "d2", &d2) < 0 || check_race(args[4]) < 0)
        return NULL;
    Generator g;
    if (generator_init(&g) < 0)
        return NULL;
    int n = generate(&g, mover, opponent, d1, d2);
    PyObject *list = n >= 0 ? PyList_New(n) : NULL;
    for (int k = 0; list != NULL && k < n; k++) {
        const Result *r = &g.results[k];
        double p[N_HEADS], q[N_HEADS];
        PyObject *item = NULL;
        if (evaluate_on_roll(e, r->opponent, r->mover, args[4], p) == 0) {
            flip(p, q);
            item = Py_BuildValue("(NNNN)", steps_tuple(r), side_tuple(r->mover),
                                 side_tuple(r->opponent), tuple5(q));
        }
        if (item == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, item);
    }
    generator_free(&g);
    return list;
}

/* ------------------------------------------------------------------------- self-play */

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

static const int INITIAL_SIDE[N_LOCATIONS] = {0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0,
                                              5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0};

/* A growing byte buffer for the records of self-play. */
typedef struct {
    char *data;
    size_t size, capacity;
} Buffer;

static int buffer_add(Buffer *b, const void *data, size_t size)
{
    if (b->size + size > b->capacity) {
        size_t capacity = b->capacity ? 2 * b->capacity : 1 << 16;
        while (capacity < b->size + size)
            capacity *= 2;
        char *grown = PyMem_Realloc(b->data, capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->data = grown;
        b->capacity = capacity;
    }
    memcpy(b->data + b->size, data, size);
    b->size += size;
    return 0;
}

/* The exploration noise of self-play moves, of mean 0 and standard deviation `size`:
 * Irwin-Hall (the sum of 4 uniforms, variance 1/3), scaled. */
static double exploration_noise(double size, uint64_t *rng)
{
    double u = 0.0;
    for (int j = 0; j < 4; j++)
        u += (double)(next_random(rng) >> 11) / 9007199254740992.0;
    return size * (u - 2.0) * 1.7320508075688772;
}

/* One move of the greedy 0-ply player: the candidate with the best cubeless equity for the
 * roller (the first of equal bests), or none. Returns the number of candidates (0: stand pat,
 * `value` is then the evaluation of the same board with the other side on roll) or -1; fills
 * `value` with the chances of the side on roll after the move (the other side), `noise` adds
 * Gaussian-like noise of that size to each candidate's equity (exploration). With `alts`, the
 * boards of the next `keep` best candidates that are contact positions (the other side to
 * roll: its 25 counts, then the roller's) are appended to it: the alternatives the player
 * weighed, for training where move choices are made. */
#define MAX_KEEP 8
static int greedy_move(const EvalBase *e, Generator *g, int *mover, int *opponent, int d1,
                       int d2, PyObject *race, double noise, uint64_t *rng, double *value,
                       int keep, Buffer *alts)
{
    int n = generate(g, mover, opponent, d1, d2);
    if (n < 0)
        return -1;
    if (n == 0)
        return evaluate_on_roll(e, opponent, mover, race, value) < 0 ? -1 : 0;
    int best = 0, top[MAX_KEEP + 1], ranked = 0;
    double best_eq = 1e300, top_eq[MAX_KEEP + 1], p[N_HEADS];
    if (keep > MAX_KEEP)
        keep = MAX_KEEP;
    for (int k = 0; k < n; k++) {
        const Result *r = &g->results[k];
        if (evaluate_on_roll(e, r->opponent, r->mover, race, p) < 0)
            return -1;
        double eq = equity(p); /* the opponent's: the roller minimises it */
        if (noise > 0.0)
            eq += exploration_noise(noise, rng);
        if (eq < best_eq) {
            best_eq = eq;
            best = k;
            memcpy(value, p, sizeof p);
        }
        if (alts != NULL && keep > 0) { /* insertion into the best keep + 1 so far */
            int at = ranked < keep + 1 ? ranked++ : keep + 1;
            while (at > 0 && top_eq[at - 1] > eq) {
                if (at <= keep) {
                    top[at] = top[at - 1];
                    top_eq[at] = top_eq[at - 1];
                }
                at--;
            }
            if (at <= keep) {
                top[at] = k;
                top_eq[at] = eq;
            }
        }
    }
    for (int j = 0; alts != NULL && j < ranked; j++) {
        if (top[j] == best)
            continue;
        const Result *r = &g->results[top[j]];
        Side me, other;
        side_info(r->opponent, &me);
        side_info(r->mover, &other);
        if (!is_contact(&me, &other))
            continue;
        unsigned char board[2 * N_LOCATIONS];
        for (int i = 0; i < N_LOCATIONS; i++) {
            board[i] = (unsigned char)r->opponent[i];
            board[N_LOCATIONS + i] = (unsigned char)r->mover[i];
        }
        if (buffer_add(alts, board, sizeof board) < 0)
            return -1;
    }
    memcpy(mover, g->results[best].mover, sizeof(int) * N_LOCATIONS);
    memcpy(opponent, g->results[best].opponent, sizeof(int) * N_LOCATIONS);
    return n;
}

/* One move of the 1-ply player (heuristic.py, plies=1): of the candidates ranked at 0-ply, the
 * best `limit` within `threshold` of the best are looked at one ply deeper (`one_ply_value`,
 * with the second generator `inner`), and the best there is played (noise, as in
 * `greedy_move`, is added to the deeper values). `value` is the chosen move's 0-ply chances
 * (the side on roll after it), so the records stay the network's own evaluations and only the
 * play is searched. Returns as `greedy_move`. */
static int searched_move(const EvalBase *e, Generator *g, Generator *inner, int *mover,
                         int *opponent, int d1, int d2, PyObject *race, double noise,
                         uint64_t *rng, double *value, int limit, double threshold)
{
    int n = generate(g, mover, opponent, d1, d2);
    if (n < 0)
        return -1;
    if (n == 0)
        return evaluate_on_roll(e, opponent, mover, race, value) < 0 ? -1 : 0;
    int top[MAX_KEEP], ranked = 0;
    double top_eq[MAX_KEEP], top_p[MAX_KEEP][N_HEADS], p[N_HEADS];
    if (limit > MAX_KEEP)
        limit = MAX_KEEP;
    for (int k = 0; k < n; k++) { /* the best `limit` by the opponent's equity, lowest first */
        const Result *r = &g->results[k];
        if (evaluate_on_roll(e, r->opponent, r->mover, race, p) < 0)
            return -1;
        double eq = equity(p);
        if (ranked == limit && eq >= top_eq[ranked - 1])
            continue;
        int at = ranked < limit ? ranked++ : limit - 1;
        while (at > 0 && top_eq[at - 1] > eq) {
            top[at] = top[at - 1];
            top_eq[at] = top_eq[at - 1];
            memcpy(top_p[at], top_p[at - 1], sizeof p);
            at--;
        }
        top[at] = k;
        top_eq[at] = eq;
        memcpy(top_p[at], p, sizeof p);
    }
    int chosen = 0;
    int survivors = 1;
    while (survivors < ranked && top_eq[survivors] <= top_eq[0] + threshold)
        survivors++;
    if (survivors > 1) {
        double best = -1e300, q[N_HEADS];
        for (int j = 0; j < survivors; j++) {
            const Result *r = &g->results[top[j]];
            if (one_ply_value(e, inner, r->mover, r->opponent, race, q) < 0)
                return -1;
            double v = equity(q);
            if (noise > 0.0)
                v += exploration_noise(noise, rng);
            if (v > best) {
                best = v;
                chosen = j;
            }
        }
    }
    memcpy(value, top_p[chosen], sizeof p);
    memcpy(mover, g->results[top[chosen]].mover, sizeof(int) * N_LOCATIONS);
    memcpy(opponent, g->results[top[chosen]].opponent, sizeof(int) * N_LOCATIONS);
    return n;
}

static void swap_sides(int *mover, int *opponent)
{
    int t[N_LOCATIONS];
    memcpy(t, mover, sizeof t);
    memcpy(mover, opponent, sizeof t);
    memcpy(opponent, t, sizeof t);
}

/* selfplay(evaluator, race, seed, games, noise=0.0, max_plies=10000, phase=0)
 *   -> (boards, values, ends):
 *
 * Plays `games` games of the greedy 0-ply player against itself (dice from splitmix64 seeded
 * with seed + game number; the opening roll rerolled until the dice differ) and records the
 * positions of one phase, with the player on roll before rolling: phase 0 the contact
 * positions (a game's record ends where contact ends), phase 1 the races outside the bear-off
 * zone (it ends where both sides are in their home boards, the database's exact zone).
 * `boards` holds 50 bytes per record (the roller's 25 counts, then the other side's), `values`
 * 5 doubles: the chances of the side on roll in the next position s_t+1 (as evaluated when
 * the move was chosen), and `ends` one byte: 1 when s_t+1 ends the game's record (the game
 * is over or the phase is: `values` is then its exact outcome or the next phase's
 * evaluation), else 0 (the next record is s_t+1). Records of one game are consecutive. With
 * A game still going after `max_plies` ends its record there (the last record's end flag is
 * set: its value, the evaluation of the next position, stands for the rest). With
 * `alternatives` K > 0, the fourth result holds the boards (50 bytes, the side to roll first)
 * of up to K runners-up of every move that are contact positions (`greedy_move`); else it is
 * empty. With `search` = (limit, threshold), the players play at 1-ply instead
 * (`searched_move`: heuristic.py's 1-ply move filter), and the records are as before. */
static PyObject *contact_selfplay(PyObject *module, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"evaluator", "race", "seed", "games", "noise", "max_plies",
                               "phase", "alternatives", "search", NULL};
    PyObject *evaluator, *race, *search = Py_None;
    unsigned long long seed;
    int games, max_plies = 10000, phase = 0, alternatives = 0, limit = 0;
    double noise = 0.0, threshold = 0.0;
    (void)module;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOKi|diiiO:selfplay", keywords, &evaluator,
                                     &race, &seed, &games, &noise, &max_plies, &phase,
                                     &alternatives, &search))
        return NULL;
    if (search != Py_None) {
        if (!PyArg_ParseTuple(search, "id:selfplay search", &limit, &threshold))
            return NULL;
        if (limit < 1 || limit > MAX_KEEP || threshold < 0.0 || alternatives) {
            PyErr_Format(PyExc_ValueError, "search must be (limit 1..%d, threshold >= 0), "
                         "without alternatives; got (%d, %g) with %d alternatives", MAX_KEEP,
                         limit, threshold, alternatives);
            return NULL;
        }
    }
    const EvalBase *e = as_evaluator(evaluator, "evaluator");
    if (e == NULL || check_race(race) < 0)
        return NULL;
    if (games < 0 || (phase != 0 && phase != 1)) {
        PyErr_Format(PyExc_ValueError, "games must be >= 0 and phase 0 or 1, got %d and %d",
                     games, phase);
        return NULL;
    }
    if (alternatives < 0 || alternatives > MAX_KEEP) {
        PyErr_Format(PyExc_ValueError, "alternatives must be 0..%d, got %d", MAX_KEEP,
                     alternatives);
        return NULL;
    }
    Generator g, inner;
    if (generators_init(&g, &inner) < 0)
        return NULL;
    Buffer boards = {NULL, 0, 0}, values = {NULL, 0, 0}, ends = {NULL, 0, 0};
    Buffer alts = {NULL, 0, 0};
    int status = 0;
    for (int game = 0; game < games && status == 0; game++) {
        uint64_t rng = (uint64_t)seed * UINT64_C(1000003) + (uint64_t)game;
        int mover[N_LOCATIONS], opponent[N_LOCATIONS];
        memcpy(mover, INITIAL_SIDE, sizeof mover);
        memcpy(opponent, INITIAL_SIDE, sizeof opponent);
        int d1 = roll_die(&rng), d2 = roll_die(&rng);
        while (d1 == d2) {
            d1 = roll_die(&rng);
            d2 = roll_die(&rng);
        }
        for (int ply = 0;; ply++) {
            if (ply >= max_plies) {
                /* a game that does not end (two poor players can hit each other forever):
                 * its record ends here, valued by the evaluation of the next position */
                if (ends.size && ends.data[ends.size - 1] == 0)
                    ends.data[ends.size - 1] = 1;
                break;
            }
            Side me, other;
            side_info(mover, &me);
            side_info(opponent, &other);
            /* phase 0: every position played is contact (a record ends where it ends) */
            int recorded = phase == 0 || (!is_contact(&me, &other) && !in_bearoff_zone(&me, &other));
            unsigned char board[2 * N_LOCATIONS];
            for (int i = 0; i < N_LOCATIONS; i++) {
                board[i] = (unsigned char)mover[i];
                board[N_LOCATIONS + i] = (unsigned char)opponent[i];
            }
            double value[N_HEADS];
            if ((limit ? searched_move(e, &g, &inner, mover, opponent, d1, d2, race, noise,
                                       &rng, value, limit, threshold)
                       : greedy_move(e, &g, mover, opponent, d1, d2, race, noise, &rng, value,
                                     alternatives, alternatives ? &alts : NULL)) < 0) {
                status = -1;
                break;
            }
            swap_sides(mover, opponent);
            side_info(mover, &me);
            side_info(opponent, &other);
            unsigned char end = me.off == CHEQUERS || other.off == CHEQUERS ||
                                (phase == 0 ? !is_contact(&me, &other)
                                            : in_bearoff_zone(&me, &other));
            if (recorded && (buffer_add(&boards, board, sizeof board) < 0 ||
                             buffer_add(&values, value, sizeof value) < 0 ||
                             buffer_add(&ends, &end, 1) < 0)) {
                status = -1;
                break;
            }
            if (end)
                break;
            d1 = roll_die(&rng);
            d2 = roll_die(&rng);
        }
    }
    generator_free(&g);
    generator_free(&inner);
    PyObject *result = NULL;
    if (status == 0)
        result = Py_BuildValue("(y#y#y#y#)", boards.data ? boards.data : "",
                               (Py_ssize_t)boards.size, values.data ? values.data : "",
                               (Py_ssize_t)values.size, ends.data ? ends.data : "",
                               (Py_ssize_t)ends.size, alts.data ? alts.data : "",
                               (Py_ssize_t)alts.size);
    PyMem_Free(boards.data);
    PyMem_Free(values.data);
    PyMem_Free(ends.data);
    PyMem_Free(alts.data);
    return result;
}

/* Read a record board (50 bytes: roller's 25 counts, then the other side's). */
static int read_board(const unsigned char *at, int *mover, int *opponent)
{
    int total_m = 0, total_o = 0;
    for (int i = 0; i < N_LOCATIONS; i++) {
        mover[i] = at[i];
        opponent[i] = at[N_LOCATIONS + i];
        total_m += mover[i];
        total_o += opponent[i];
    }
    if (total_m > CHEQUERS || total_o > CHEQUERS) {
        PyErr_SetString(PyExc_ValueError, "a board holds more than 15 chequers of one side");
        return -1;
    }
    return check_board(mover, opponent);
}

static int boards_view(PyObject *obj, Py_buffer *view, Py_ssize_t *n)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0)
        return -1;
    if (view->len % (2 * N_LOCATIONS)) {
        PyErr_Format(PyExc_ValueError, "boards: %zd bytes is not a whole number of 50-byte boards",
                     view->len);
        PyBuffer_Release(view);
        return -1;
    }
    *n = view->len / (2 * N_LOCATIONS);
    return 0;
}

/* encode(boards) -> (inputs, allowed): the network inputs (N_INPUTS float32 per board) and the
 * outcome mask (6 bytes per board: 1 where the outcome can still happen) of 50-byte boards. */
static PyObject *contact_encode(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "encode() takes 1 argument (boards), got %zd", nargs);
        return NULL;
    }
    Py_buffer view;
    Py_ssize_t n;
    if (boards_view(args[0], &view, &n) < 0)
        return NULL;
    PyObject *inputs = PyBytes_FromStringAndSize(NULL, n * N_INPUTS * (Py_ssize_t)sizeof(float));
    PyObject *masks = PyBytes_FromStringAndSize(NULL, n * N_OUTCOMES);
    if (inputs == NULL || masks == NULL) {
        Py_XDECREF(inputs);
        Py_XDECREF(masks);
        PyBuffer_Release(&view);
        return NULL;
    }
    float *x = (float *)PyBytes_AS_STRING(inputs);
    unsigned char *allowed = (unsigned char *)PyBytes_AS_STRING(masks);
    const unsigned char *at = view.buf;
    for (Py_ssize_t k = 0; k < n; k++) {
        int mover[N_LOCATIONS], opponent[N_LOCATIONS];
        Side me, other;
        if (read_board(at + k * 2 * N_LOCATIONS, mover, opponent) < 0) {
            Py_DECREF(inputs);
            Py_DECREF(masks);
            PyBuffer_Release(&view);
            return NULL;
        }
        side_info(mover, &me);
        side_info(opponent, &other);
        encode_inputs(mover, opponent, &me, &other, x + k * N_INPUTS);
        outcome_mask(&me, &other, allowed + k * N_OUTCOMES);
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(NN)", inputs, masks);
}

/* roll_averages(evaluator, race, boards) -> 5 doubles per board: `roll_average` of each (the
 * player on roll's chances one ply ahead), the look-ahead targets of training. */
static PyObject *contact_roll_averages(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError,
                     "roll_averages() takes 3 arguments (evaluator, race, boards), got %zd", nargs);
        return NULL;
    }
    const EvalBase *e = as_evaluator(args[0], "evaluator");
    if (e == NULL || check_race(args[1]) < 0)
        return NULL;
    Py_buffer view;
    Py_ssize_t n;
    if (boards_view(args[2], &view, &n) < 0)
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * N_HEADS * (Py_ssize_t)sizeof(double));
    Generator g;
    if (out == NULL || generator_init(&g) < 0) {
        Py_XDECREF(out);
        PyBuffer_Release(&view);
        return NULL;
    }
    double *values = (double *)PyBytes_AS_STRING(out);
    const unsigned char *at = view.buf;
    for (Py_ssize_t k = 0; k < n && out != NULL; k++) {
        int mover[N_LOCATIONS], opponent[N_LOCATIONS];
        if (read_board(at + k * 2 * N_LOCATIONS, mover, opponent) < 0 ||
            roll_loop(e, &g, mover, opponent, args[1], 1, values + k * N_HEADS) < 0)
            Py_CLEAR(out);
    }
    generator_free(&g);
    PyBuffer_Release(&view);
    return out;
}

/* ------------------------------------------------------------ screening duel vs pubeval */

/* pubeval's score of the board after a move (pubeval.pubeval_score): weights[122]. */
static double pubeval(const double *w, const int *mover, const int *opponent)
{
    int on = 0;
    for (int i = 0; i < N_LOCATIONS; i++)
        on += mover[i];
    if (on == 0)
        return 99999999.0;
    double score = 0.0;
    for (int point = 24; point >= 1; point--) {
        const double *block = w + 5 * (24 - point);
        int own = mover[point - 1];
        if (opponent[24 - point] == 1)
            score += block[0];
        if (own == 1)
            score += block[1];
        if (own >= 2)
            score += block[2];
        if (own == 3)
            score += block[3];
        if (own >= 4)
            score += block[4] * (double)(own - 3) / 2.0;
    }
    score += w[120] * (double)opponent[24] / 2.0;
    score += w[121] * (double)(CHEQUERS - on) / 15.0;
    return score;
}

static int read_weights(PyObject *obj, const char *name, double *out)
{
    PyObject *seq = PySequence_Fast(obj, "pubeval weights must be a sequence of 122 floats");
    if (seq == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(seq) != 122) {
        PyErr_Format(PyExc_ValueError, "%s: 122 weights expected, got %zd", name,
                     PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return -1;
    }
    for (int i = 0; i < 122; i++) {
        out[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (out[i] == -1.0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

/* A seat in a screening game: a greedy 0-ply evaluator, or pubeval (its contact and race
 * weights) when `eval` is NULL. */
typedef struct {
    const EvalBase *eval;
    const double *pubeval_contact, *pubeval_race;
} Seat;

/* The seat's move with dice d1, d2 (mover's chequers in `mover`); -1 on error. */
static int seat_move(const Seat *seat, Generator *g, PyObject *race, int *mover, int *opponent,
                     int d1, int d2, uint64_t *rng)
{
    if (seat->eval != NULL) {
        double value[N_HEADS];
        return greedy_move(seat->eval, g, mover, opponent, d1, d2, race, 0.0, rng, value, 0,
                           NULL) < 0 ? -1 : 0;
    }
    Side me, other;
    side_info(mover, &me);
    side_info(opponent, &other);
    const double *w = is_contact(&me, &other) ? seat->pubeval_contact : seat->pubeval_race;
    int n = generate(g, mover, opponent, d1, d2);
    if (n < 0)
        return -1;
    if (n > 0) {
        int best = 0;
        double best_score = -1e300;
        for (int k = 0; k < n; k++) {
            double s = pubeval(w, g->results[k].mover, g->results[k].opponent);
            if (s > best_score) {
                best_score = s;
                best = k;
            }
        }
        memcpy(mover, g->results[best].mover, sizeof(int) * N_LOCATIONS);
        memcpy(opponent, g->results[best].opponent, sizeof(int) * N_LOCATIONS);
    }
    return 0;
}

/* One cubeless game of seat a against seat b, a moving first when `a_first`; returns a's
 * points (+-1, 2, 3) or 0 on error. */
static int screening_game(const Seat *a, const Seat *b, Generator *g, PyObject *race,
                          uint64_t seed, int a_first)
{
    uint64_t rng = seed;
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    memcpy(mover, INITIAL_SIDE, sizeof mover);
    memcpy(opponent, INITIAL_SIDE, sizeof opponent);
    int d1 = roll_die(&rng), d2 = roll_die(&rng);
    while (d1 == d2) {
        d1 = roll_die(&rng);
        d2 = roll_die(&rng);
    }
    int a_turn = a_first;
    for (int ply = 0; ply < 10000; ply++) {
        if (seat_move(a_turn ? a : b, g, race, mover, opponent, d1, d2, &rng) < 0)
            return 0;
        int on = 0;
        for (int i = 0; i < N_LOCATIONS; i++)
            on += mover[i];
        if (on == 0) { /* the side that just moved has won */
            Side loser;
            side_info(opponent, &loser);
            int kind = loser.off ? 1 : (loser.back ? 3 : 2);
            return a_turn ? kind : -kind;
        }
        swap_sides(mover, opponent);
        a_turn = !a_turn;
        d1 = roll_die(&rng);
        d2 = roll_die(&rng);
    }
    PyErr_SetString(PyExc_RuntimeError, "a screening game did not end in 10000 plies");
    return 0;
}

/* a's points in each game of `pairs` mirrored pairs (the same dice with the seats swapped),
 * as a list; NULL on error. */
static PyObject *screening_pairs(const Seat *a, const Seat *b, PyObject *race,
                                 PyObject *seed_obj, PyObject *pairs_obj)
{
    unsigned long long seed = PyLong_AsUnsignedLongLong(seed_obj);
    if (seed == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    long pairs = PyLong_AsLong(pairs_obj);
    if (pairs == -1 && PyErr_Occurred())
        return NULL;
    Generator g;
    if (generator_init(&g) < 0)
        return NULL;
    PyObject *list = PyList_New(0);
    for (long k = 0; list != NULL && k < pairs; k++) {
        for (int first = 1; first >= 0; first--) {
            int points = screening_game(a, b, &g, race,
                                        (uint64_t)seed * UINT64_C(1000003) + (uint64_t)k, first);
            PyObject *value = points ? PyLong_FromLong(points) : NULL;
            if (value == NULL || PyList_Append(list, value) < 0) {
                Py_XDECREF(value);
                Py_CLEAR(list);
                break;
            }
            Py_DECREF(value);
        }
    }
    generator_free(&g);
    return list;
}

/* duel_pubeval(evaluator, race, contact_weights, race_weights, seed, pairs) -> list of the
 * evaluator's points in each game: mirrored pairs, cubeless money, gammons 2 and backgammons
 * 3, against pubeval. A fast screen for training; `bgbot duel` gives the figures. */
static PyObject *contact_duel_pubeval(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 6) {
        PyErr_Format(PyExc_TypeError,
                     "duel_pubeval() takes 6 arguments (evaluator, race, contact_weights, "
                     "race_weights, seed, pairs), got %zd", nargs);
        return NULL;
    }
    double contact_w[122], race_w[122];
    const EvalBase *e = as_evaluator(args[0], "evaluator");
    if (e == NULL || check_race(args[1]) < 0 ||
        read_weights(args[2], "contact_weights", contact_w) < 0 ||
        read_weights(args[3], "race_weights", race_w) < 0)
        return NULL;
    Seat evaluator = {e, NULL, NULL}, pubeval_seat = {NULL, contact_w, race_w};
    return screening_pairs(&evaluator, &pubeval_seat, args[1], args[4], args[5]);
}

/* duel(a, b, race, seed, pairs) -> a's points per game in mirrored cubeless pairs of the two
 * greedy 0-ply evaluators (the dice of duel_pubeval's pairs): a fast screen between two
 * networks in training. */
static PyObject *contact_duel(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError,
                     "duel() takes 5 arguments (a, b, race, seed, pairs), got %zd", nargs);
        return NULL;
    }
    const EvalBase *a = as_evaluator(args[0], "a"), *b = a ? as_evaluator(args[1], "b") : NULL;
    if (b == NULL || check_race(args[2]) < 0)
        return NULL;
    Seat seat_a = {a, NULL, NULL}, seat_b = {b, NULL, NULL};
    return screening_pairs(&seat_a, &seat_b, args[2], args[3], args[4]);
}

/* ------------------------------------------------------------------------------- rollouts */

/* The rollout of bgbot/rollout (trial.py `play_trial` is the definition; the tests hold this
 * kernel equal to it to the last bit): trials of the 0-ply heuristic player against itself from
 * one position, cubeless, with gnubg's quasi-random dice, variance reduction by luck and
 * truncation. */

#define N_ROLLS 21
#define ROLLOUT_MAX_PLIES 10000 /* trial.MAX_PLIES: a trial still going is cut here */
#define TURN_MEMO 32            /* turns remembered per call (the first two plies repeat) */
#define MEMO_PLIES 2

/* The state of trial `trial`'s dice stream beyond its first two rolls (dice.py
 * `trial_state`). */
static uint64_t rollout_trial_state(uint64_t seed, uint64_t trial)
{
    return mix64(mix64(seed ^ UINT64_C(0x726F6C6C6F757421)) + trial);
}

/* The 21 rolls in `roll_loop` order (a <= b): their index. */
static int roll_index(int a, int b)
{
    int index = 0;
    for (int x = 1; x < a; x++)
        index += 7 - x;
    return index + b - a;
}

/* One turn of a rollout with variance reduction: for every roll, the judge's chances of the
 * roller after his best play by cubeless equity (the first of equal bests, as `roll_loop`),
 * their average over the 36 rolls (`roll_average`, to the last bit), and the board the player
 * leaves (see `rollout_choice`). */
typedef struct {
    int mover[N_LOCATIONS], opponent[N_LOCATIONS]; /* the turn's board, roller first */
    double mean[N_HEADS];
    double judged[N_ROLLS][N_HEADS];
    int after[N_ROLLS][2][N_LOCATIONS]; /* the roller's side, then the other, after his play */
} Turn;

/* Races the Python call-back evaluated, by board (the same race boards come back often: from
 * the rolls of one turn, and from trial to trial). */
#define RACE_CACHE_BITS 15
#define RACE_CACHE_SIZE (1 << RACE_CACHE_BITS)
typedef struct {
    uint64_t key[4]; /* the two sides, 4 bits a location; all ones = empty */
    double p[N_HEADS];
} RaceEntry;

/* One side's facts for the race formula (evaluator.py `RaceSide`), by its counts. */
#define SIDE_CACHE_BITS 14
#define SIDE_CACHE_SIZE (1 << SIDE_CACHE_BITS)
typedef struct {
    uint64_t key[2]; /* 4 bits a location; all ones = empty */
    double epc, home_lag, back_lag;
    int full, back;
} RaceSideFacts;

typedef struct {
    const EvalBase *e;
    PyObject *race;
    Generator g;
    const double *utility[2]; /* per side (0: on roll at the start): NULL = cubeless equity */
    Turn *memo;
    int memo_count;
    RaceEntry *races;
    int race_count;
    PyObject *epc; /* effective pips of a side (the race formula in C), or NULL: call `race` */
    double spread;
    RaceSideFacts *sides;
    int side_count;
} Rollout;

static void side_key(const int *side, uint64_t *key)
{
    key[0] = key[1] = 0;
    for (int i = 0; i < N_LOCATIONS; i++)
        key[i / 16] |= (uint64_t)side[i] << (4 * (i % 16));
}

/* Pips a side must move before none of its chequers is above own point `boundary`
 * (evaluator.py `_rolls_beyond`). */
static double rolls_beyond(const int *side, int boundary)
{
    long total = 0;
    for (int i = boundary; i < N_LOCATIONS; i++)
        total += (long)side[i] * (i + 1 - boundary);
    return (double)total;
}

/* The side's race facts, from the cache or computed (its effective pips from the `epc`
 * call-back: the bear-off database's wastage); NULL on error. */
static const RaceSideFacts *race_side_facts(Rollout *r, const int *side)
{
    uint64_t key[2];
    side_key(side, key);
    uint64_t h = mix64(key[0] ^ mix64(key[1]));
    size_t slot = (size_t)(h >> (64 - SIDE_CACHE_BITS));
    for (;;) {
        RaceSideFacts *entry = &r->sides[slot];
        if (entry->key[0] == UINT64_MAX)
            break;
        if (entry->key[0] == key[0] && entry->key[1] == key[1])
            return entry;
        slot = (slot + 1) & (SIDE_CACHE_SIZE - 1);
    }
    PyObject *counts = side_tuple(side);
    if (counts == NULL)
        return NULL;
    PyObject *answer = PyObject_CallOneArg(r->epc, counts);
    Py_DECREF(counts);
    if (answer == NULL)
        return NULL;
    double epc = PyFloat_AsDouble(answer);
    Py_DECREF(answer);
    if (epc == -1.0 && PyErr_Occurred())
        return NULL;
    if (2 * r->side_count >= SIDE_CACHE_SIZE) { /* half full: start again */
        memset(r->sides, 0xFF, sizeof(RaceSideFacts) * SIDE_CACHE_SIZE);
        r->side_count = 0;
        slot = (size_t)(h >> (64 - SIDE_CACHE_BITS));
    }
    RaceSideFacts *entry = &r->sides[slot];
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
    r->side_count++;
    return entry;
}

#define PIPS_PER_ROLL (49.0 / 6.0)
#define ROLL_VARIANCE_PER_PIP 0.0339

/* evaluator.py `_phi`: the standard normal distribution function. */
static double normal_cdf(double x)
{
    return 0.5 * erfc(-x * (1.0 / sqrt(2.0)));
}

/* evaluator.py `_lag_probability`. */
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

/* evaluator.py `race_chances` (the race formula), `me` on roll, operation for operation. */
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

static void race_key(const int *mover, const int *opponent, uint64_t *key)
{
    key[0] = key[1] = key[2] = key[3] = 0;
    for (int i = 0; i < N_LOCATIONS; i++) {
        key[i / 16] |= (uint64_t)mover[i] << (4 * (i % 16));
        key[2 + i / 16] |= (uint64_t)opponent[i] << (4 * (i % 16));
    }
}

/* `evaluate_on_roll`, with the races the call-back answers remembered (the call-back is a
 * function of the board). */
static int rollout_evaluate(Rollout *r, const int *mover, const int *opponent, double *p)
{
    Side me, other;
    side_info(mover, &me);
    side_info(opponent, &other);
    if (terminal_chances(&me, &other, p))
        return 0;
    if (is_contact(&me, &other)) {
        r->e->contact(r->e, mover, opponent, &me, &other, p);
        return 0;
    }
    if (r->e->race_net != NULL && !in_bearoff_zone(&me, &other)) {
        r->e->race_net->contact(r->e->race_net, mover, opponent, &me, &other, p);
        return 0;
    }
    if (r->epc != NULL && !in_bearoff_zone(&me, &other)) {
        const RaceSideFacts *mine = race_side_facts(r, mover);
        if (mine == NULL)
            return -1;
        RaceSideFacts copy = *mine; /* the next look-up may start the cache again */
        const RaceSideFacts *theirs = race_side_facts(r, opponent);
        if (theirs == NULL)
            return -1;
        race_formula(&copy, theirs, r->spread, p);
        return 0;
    }
    uint64_t key[4];
    race_key(mover, opponent, key);
    uint64_t h = mix64(key[0] ^ mix64(key[1] ^ mix64(key[2] ^ mix64(key[3]))));
    size_t slot = (size_t)(h >> (64 - RACE_CACHE_BITS));
    for (;;) {
        RaceEntry *entry = &r->races[slot];
        if (entry->key[0] == UINT64_MAX)
            break;
        if (!memcmp(entry->key, key, sizeof key)) {
            memcpy(p, entry->p, sizeof entry->p);
            return 0;
        }
        slot = (slot + 1) & (RACE_CACHE_SIZE - 1);
    }
    if (call_race(r->race, mover, opponent, p) < 0)
        return -1;
    if (2 * r->race_count >= RACE_CACHE_SIZE) { /* half full: start again */
        memset(r->races, 0xFF, sizeof(RaceEntry) * RACE_CACHE_SIZE);
        r->race_count = 0;
        slot = (size_t)(h >> (64 - RACE_CACHE_BITS));
        while (r->races[slot].key[0] != UINT64_MAX)
            slot = (slot + 1) & (RACE_CACHE_SIZE - 1);
    }
    memcpy(r->races[slot].key, key, sizeof key);
    memcpy(r->races[slot].p, p, sizeof r->races[slot].p);
    r->race_count++;
    return 0;
}

/* The player's utility of the roller's chances `q` after a play: cubeless equity, or the
 * affine utility c0 + c1 win + ... of `HeuristicPlayer._choose_scored` (Python's order of
 * operations). */
static double rollout_utility(const double *c, const double *q)
{
    return c == NULL ? equity(q)
                     : c[0] + c[1] * q[0] + c[2] * q[1] + c[3] * q[2] + c[4] * q[3] + c[5] * q[4];
}

/* The candidate the player plays among the `n` just generated (the roller is side `side`):
 * the best by his utility of his chances after it, the last of equal bests; -1 on error. */
static int rollout_choice(Rollout *r, int side, int n)
{
    double top = -1e300, p[N_HEADS], q[N_HEADS];
    int chosen = 0;
    for (int k = 0; k < n; k++) {
        const Result *res = &r->g.results[k];
        if (rollout_evaluate(r, res->opponent, res->mover, p) < 0)
            return -1;
        flip(p, q);
        double v = rollout_utility(r->utility[side], q);
        if (v >= top) {
            top = v;
            chosen = k;
        }
    }
    return chosen;
}

/* Fill `t` for the board (roller `side` on roll) with every roll: one pass over each roll's
 * candidates gives the judge's best (the first best by cubeless equity, as `roll_loop`) and
 * the player's choice (`rollout_choice`). */
static int rollout_turn(Rollout *r, int side, const int *mover, const int *opponent, Turn *t)
{
    double total[N_HEADS] = {0.0, 0.0, 0.0, 0.0, 0.0};
    double p[N_HEADS], q[N_HEADS], best[N_HEADS] = {0.0, 0.0, 0.0, 0.0, 0.0};
    const double *utility = r->utility[side];
    memcpy(t->mover, mover, sizeof t->mover);
    memcpy(t->opponent, opponent, sizeof t->opponent);
    int index = 0;
    for (int a = 1; a <= 6; a++) {
        for (int b = a; b <= 6; b++, index++) {
            int n = generate(&r->g, mover, opponent, a, b);
            if (n < 0)
                return -1;
            if (n == 0) { /* no legal play: the roller stands pat */
                if (rollout_evaluate(r, opponent, mover, p) < 0)
                    return -1;
                flip(p, best);
                memcpy(t->after[index][0], mover, sizeof(int) * N_LOCATIONS);
                memcpy(t->after[index][1], opponent, sizeof(int) * N_LOCATIONS);
            }
            double best_eq = -1e9, top = -1e300;
            int chosen = 0;
            for (int k = 0; k < n; k++) {
                const Result *res = &r->g.results[k];
                if (rollout_evaluate(r, res->opponent, res->mover, p) < 0)
                    return -1;
                flip(p, q);
                double eq = equity(q);
                if (eq > best_eq) {
                    memcpy(best, q, sizeof q);
                    best_eq = eq;
                }
                double v = utility == NULL ? eq : rollout_utility(utility, q);
                if (v >= top) {
                    top = v;
                    chosen = k;
                }
            }
            if (n > 0) {
                memcpy(t->after[index][0], r->g.results[chosen].mover, sizeof(int) * N_LOCATIONS);
                memcpy(t->after[index][1], r->g.results[chosen].opponent,
                       sizeof(int) * N_LOCATIONS);
            }
            memcpy(t->judged[index], best, sizeof best);
            double weight = a == b ? 1.0 : 2.0;
            for (int h = 0; h < N_HEADS; h++)
                total[h] += weight * best[h];
        }
    }
    for (int h = 0; h < N_HEADS; h++)
        t->mean[h] = total[h] / 36.0;
    return 0;
}

/* The turn of this board from the memo (the first plies of every trial start from the same
 * few boards), computed and remembered when it is not there; NULL on error. */
static const Turn *rollout_memo_turn(Rollout *r, int side, const int *mover, const int *opponent,
                                     Turn *scratch)
{
    for (int i = 0; i < r->memo_count; i++) {
        Turn *t = &r->memo[i];
        if (!memcmp(t->mover, mover, sizeof t->mover) &&
            !memcmp(t->opponent, opponent, sizeof t->opponent))
            return t;
    }
    Turn *t = r->memo_count < TURN_MEMO ? &r->memo[r->memo_count] : scratch;
    if (rollout_turn(r, side, mover, opponent, t) < 0)
        return NULL;
    if (t != scratch)
        r->memo_count++;
    return t;
}

/* Add the roller's luck `delta` to `luck`, kept from the view of side 0: its own as it is, the
 * other side's flipped (a win of one is a loss of the other, a gammon of one the other's). */
static void add_luck(double *luck, const double *delta, int side)
{
    if (side == 0) {
        for (int h = 0; h < N_HEADS; h++)
            luck[h] += delta[h];
    } else {
        luck[0] += -delta[0];
        luck[1] += delta[3];
        luck[2] += delta[4];
        luck[3] += delta[1];
        luck[4] += delta[2];
    }
}

/* One trial (trial.py `play_trial`): `outcome` gets side 0's chances at the end (the result, or
 * the evaluation where the trial is cut), `luck` its luck summed over the rolls (with `vr`),
 * `plies` the rolls played. */
static int rollout_trial(Rollout *r, const int *start_mover, const int *start_opponent,
                         const unsigned char *dice, uint64_t seed, uint64_t trial, int truncate,
                         int vr, Turn *scratch, double *outcome, double *luck, int32_t *plies)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS], side = 0, ply = 0;
    double p[N_HEADS];
    uint64_t rng = rollout_trial_state(seed, trial);
    memcpy(mover, start_mover, sizeof mover);
    memcpy(opponent, start_opponent, sizeof opponent);
    for (int h = 0; h < N_HEADS; h++)
        luck[h] = 0.0;
    for (;; ply++) {
        Side me, other;
        side_info(mover, &me);
        side_info(opponent, &other);
        if (me.off == CHEQUERS || other.off == CHEQUERS || (truncate > 0 && ply == truncate) ||
            ply == ROLLOUT_MAX_PLIES) {
            if (rollout_evaluate(r, mover, opponent, p) < 0)
                return -1;
            break;
        }
        int d1, d2;
        if (ply < 2) {
            int code = ply == 0 ? dice[trial % 36]
                                : dice[36 + 36 * (trial % 36) + (trial / 36) % 36];
            d1 = code / 6 + 1;
            d2 = code % 6 + 1;
        } else {
            d1 = roll_die(&rng);
            d2 = roll_die(&rng);
        }
        int lo = d1 < d2 ? d1 : d2, hi = d1 < d2 ? d2 : d1;
        if (vr) {
            const Turn *t = ply < MEMO_PLIES ? rollout_memo_turn(r, side, mover, opponent, scratch)
                                             : (rollout_turn(r, side, mover, opponent, scratch) < 0
                                                    ? NULL
                                                    : scratch);
            if (t == NULL)
                return -1;
            int index = roll_index(lo, hi);
            double delta[N_HEADS];
            for (int h = 0; h < N_HEADS; h++)
                delta[h] = t->judged[index][h] - t->mean[h];
            add_luck(luck, delta, side);
            memcpy(mover, t->after[index][0], sizeof mover);
            memcpy(opponent, t->after[index][1], sizeof opponent);
        } else {
            int n = generate(&r->g, mover, opponent, lo, hi);
            if (n < 0)
                return -1;
            if (n > 0) {
                int chosen = rollout_choice(r, side, n);
                if (chosen < 0)
                    return -1;
                memcpy(mover, r->g.results[chosen].mover, sizeof mover);
                memcpy(opponent, r->g.results[chosen].opponent, sizeof opponent);
            }
        }
        swap_sides(mover, opponent);
        side ^= 1;
    }
    if (side == 0)
        memcpy(outcome, p, sizeof p);
    else
        flip(p, outcome);
    *plies = ply;
    return 0;
}

static int read_utility(PyObject *obj, double *out)
{
    PyObject *seq = PySequence_Fast(obj, "a utility must be 6 floats");
    if (seq == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(seq) != 6) {
        PyErr_Format(PyExc_ValueError, "a utility must be 6 floats, got %zd",
                     PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return -1;
    }
    for (int i = 0; i < 6; i++) {
        out[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (out[i] == -1.0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

/* rollout(evaluator, race, mover, opponent, seed, first, count, truncate, vr, dice,
 *         utilities=None) -> (outcomes, luck, plies):
 *
 * Trials first .. first + count - 1 of the rollout of the board (`mover` on roll, before
 * rolling) by the greedy 0-ply player of `evaluator` on both sides. `dice` holds the first
 * two rolls of every trial (dice.py `RolloutDice.table`: 36 codes of the first roll, then 36
 * rows of 36 of the second, a code being (d1 - 1) * 6 + d2 - 1); later rolls come from
 * splitmix64 from `rollout_trial_state(seed, trial)`. `truncate` > 0 cuts a trial after that
 * many plies (the evaluation there is its result); `vr` sums each roll's luck. `utilities`:
 * None (both sides maximise cubeless equity) or two sequences of 6 coefficients (the side on
 * roll's, then the other's; see `rollout_choice`). `outcomes` and `luck` hold 5 doubles per
 * trial (the chances of the side on roll at the start, its luck), `plies` an int32 per trial.
 * `race_formula` = (epc, spread): races outside the bear-off zone are evaluated here with
 * evaluator.py's race formula (`race_formula`), `epc(side)` giving a side's effective pips,
 * instead of by `race` (the same numbers, far faster); None: `race` answers every race. */
static PyObject *contact_rollout(PyObject *module, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"evaluator", "race", "mover", "opponent", "seed", "first",
                               "count", "truncate", "vr", "dice", "utilities", "race_formula",
                               NULL};
    PyObject *evaluator, *race, *mover_obj, *opponent_obj, *utilities = Py_None;
    PyObject *formula = Py_None;
    unsigned long long seed, first;
    int count, truncate, vr;
    Py_buffer dice;
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    double coefficients[2][6];
    (void)module;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOKKiipy*|OO:rollout", keywords,
                                     &evaluator, &race, &mover_obj, &opponent_obj, &seed, &first,
                                     &count, &truncate, &vr, &dice, &utilities, &formula))
        return NULL;
    Rollout r = {NULL, race, {0}, {NULL, NULL}, NULL, 0, NULL, 0, NULL, 1.0, NULL, 0};
    PyObject *result = NULL;
    double *outcomes = NULL, *lucks = NULL;
    int32_t *plies = NULL;
    Turn *scratch = NULL;
    r.e = as_evaluator(evaluator, "evaluator");
    if (r.e == NULL || check_race(race) < 0 || parse_side(mover_obj, "mover", mover) < 0 ||
        parse_side(opponent_obj, "opponent", opponent) < 0 || check_board(mover, opponent) < 0)
        goto done;
    if (dice.len != 36 + 36 * 36) {
        PyErr_Format(PyExc_ValueError, "dice must hold %d bytes, got %zd", 36 + 36 * 36, dice.len);
        goto done;
    }
    for (Py_ssize_t i = 0; i < dice.len; i++) {
        if (((const unsigned char *)dice.buf)[i] >= 36) {
            PyErr_Format(PyExc_ValueError, "dice byte %zd is %d, not a roll code 0..35", i,
                         ((const unsigned char *)dice.buf)[i]);
            goto done;
        }
    }
    if (count < 0 || truncate < 0) {
        PyErr_Format(PyExc_ValueError, "count and truncate must be >= 0, got %d and %d", count,
                     truncate);
        goto done;
    }
    if (utilities != Py_None) {
        PyObject *pair = PySequence_Fast(utilities, "utilities must be None or two sequences");
        if (pair == NULL)
            goto done;
        int ok = PySequence_Fast_GET_SIZE(pair) == 2;
        if (!ok)
            PyErr_SetString(PyExc_ValueError, "utilities must be None or two sequences");
        for (int s = 0; ok && s < 2; s++)
            ok = read_utility(PySequence_Fast_GET_ITEM(pair, s), coefficients[s]) == 0;
        Py_DECREF(pair);
        if (!ok)
            goto done;
        r.utility[0] = coefficients[0];
        r.utility[1] = coefficients[1];
    }
    if (formula != Py_None) {
        if (!PyArg_ParseTuple(formula, "Od:rollout race_formula", &r.epc, &r.spread))
            goto done;
        if (!PyCallable_Check(r.epc) || !(r.spread > 0.0)) {
            PyErr_SetString(PyExc_ValueError,
                            "race_formula must be (effective pips of a side, spread > 0)");
            goto done;
        }
        r.sides = PyMem_Malloc(sizeof(RaceSideFacts) * SIDE_CACHE_SIZE);
        if (r.sides == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        memset(r.sides, 0xFF, sizeof(RaceSideFacts) * SIDE_CACHE_SIZE);
    }
    outcomes = PyMem_Malloc(sizeof(double) * N_HEADS * (size_t)(count ? count : 1));
    lucks = PyMem_Malloc(sizeof(double) * N_HEADS * (size_t)(count ? count : 1));
    plies = PyMem_Malloc(sizeof(int32_t) * (size_t)(count ? count : 1));
    scratch = PyMem_Malloc(sizeof(Turn));
    r.memo = vr ? PyMem_Malloc(sizeof(Turn) * TURN_MEMO) : NULL;
    r.races = PyMem_Malloc(sizeof(RaceEntry) * RACE_CACHE_SIZE);
    if (outcomes == NULL || lucks == NULL || plies == NULL || scratch == NULL ||
        (vr && r.memo == NULL) || r.races == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memset(r.races, 0xFF, sizeof(RaceEntry) * RACE_CACHE_SIZE);
    if (generator_init(&r.g) < 0)
        goto done;
    int status = 0;
    for (int k = 0; k < count && status == 0; k++)
        status = rollout_trial(&r, mover, opponent, dice.buf, (uint64_t)seed,
                               (uint64_t)first + (uint64_t)k, truncate, vr, scratch,
                               outcomes + N_HEADS * k, lucks + N_HEADS * k, plies + k);
    generator_free(&r.g);
    if (status == 0)
        result = Py_BuildValue("(y#y#y#)", (const char *)outcomes,
                               (Py_ssize_t)(sizeof(double) * N_HEADS * (size_t)count),
                               (const char *)lucks,
                               (Py_ssize_t)(sizeof(double) * N_HEADS * (size_t)count),
                               (const char *)plies, (Py_ssize_t)(sizeof(int32_t) * (size_t)count));
done:
    PyBuffer_Release(&dice);
    PyMem_Free(outcomes);
    PyMem_Free(lucks);
    PyMem_Free(plies);
    PyMem_Free(scratch);
    PyMem_Free(r.memo);
    PyMem_Free(r.races);
    PyMem_Free(r.sides);
    return result;
}

/* ------------------------------------------------------------------------------ types */

static PyMethodDef Net_methods[] = {
    {"__setstate__", (PyCFunction)eval_setstate, METH_O, "Pickle support: the race network."},
    {"set_race_network", (PyCFunction)eval_set_race_network, METH_O,
     "set_race_network(mlp or None): the network for races outside the bear-off zone (None: "
     "every race goes to the race call-back)."},
    {"__reduce__", (PyCFunction)Net_reduce, METH_NOARGS, "Pickle support: Net(weights)."},
    {"logits", (PyCFunction)(void (*)(void))Net_logits, METH_FASTCALL,
     "logits(mover, opponent) -> the five heads' logits (weights . features)."},
    {"contact", (PyCFunction)(void (*)(void))eval_contact, METH_FASTCALL,
     "contact(mover, opponent) -> the five constrained probabilities for the player on roll, "
     "or None when the position is not for the contact evaluation (no contact, or a side is "
     "off)."},
    {"plays", (PyCFunction)(void (*)(void))eval_plays, METH_FASTCALL,
     "plays(mover, opponent, d1, d2, race) -> [(steps, mover after, opponent after, chances)] "
     "for every candidate of the roll, chances the mover's at 0-ply after it."},
    {"one_ply", (PyCFunction)(void (*)(void))eval_one_ply, METH_FASTCALL,
     "one_ply(mover, opponent, race) -> the chances of `mover`, who has just moved, averaged "
     "over the 21 rolls of `opponent`, each answered by the reply that minimises mover's "
     "cubeless equity; race(m, o) gives the chances of m on roll in a race."},
    {"two_ply", (PyCFunction)(void (*)(void))eval_two_ply, METH_FASTCALL,
     "two_ply(mover, opponent, race, keep, threshold) -> the chances of `mover`, who has just "
     "moved, two plies ahead (see the C source)."},
    {"roll_average", (PyCFunction)(void (*)(void))eval_roll_average, METH_FASTCALL,
     "roll_average(mover, opponent, race) -> the chances of `mover`, on roll, averaged over "
     "his 21 rolls, each played to his best cubeless equity; race as for one_ply."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject NetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bgbot.players._contact.Net",
    .tp_basicsize = sizeof(NetObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Net(weights): the five linear contact heads (evaluator.HEADS order), each a "
              "sequence of N_FEATURES weights in FEATURE_NAMES order.",
    .tp_methods = Net_methods,
    .tp_getset = eval_getset,
    .tp_dealloc = (destructor)Net_dealloc,
    .tp_init = (initproc)Net_init,
    .tp_new = PyType_GenericNew,
};

static PyMethodDef Mlp_methods[] = {
    {"__setstate__", (PyCFunction)eval_setstate, METH_O, "Pickle support: the race network."},
    {"set_race_network", (PyCFunction)eval_set_race_network, METH_O,
     "set_race_network(mlp or None): the network for races outside the bear-off zone (None: "
     "every race goes to the race call-back)."},
    {"__reduce__", (PyCFunction)Mlp_reduce, METH_NOARGS, "Pickle support: Mlp(weights, hidden)."},
    {"outcomes", (PyCFunction)(void (*)(void))Mlp_outcomes, METH_FASTCALL,
     "outcomes(mover, opponent) -> the six outcome probabilities (win single, gammon, "
     "backgammon; lose single, gammon, backgammon) of the player on roll."},
    {"contact", (PyCFunction)(void (*)(void))eval_contact, METH_FASTCALL,
     "contact(mover, opponent) -> the five chances for the player on roll, or None when the "
     "position is not for the contact evaluation."},
    {"plays", (PyCFunction)(void (*)(void))eval_plays, METH_FASTCALL,
     "plays(mover, opponent, d1, d2, race): as Net.plays."},
    {"one_ply", (PyCFunction)(void (*)(void))eval_one_ply, METH_FASTCALL,
     "one_ply(mover, opponent, race): as Net.one_ply."},
    {"two_ply", (PyCFunction)(void (*)(void))eval_two_ply, METH_FASTCALL,
     "two_ply(mover, opponent, race, keep, threshold): as Net.two_ply."},
    {"roll_average", (PyCFunction)(void (*)(void))eval_roll_average, METH_FASTCALL,
     "roll_average(mover, opponent, race): as Net.roll_average."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MlpType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bgbot.players._contact.Mlp",
    .tp_basicsize = sizeof(MlpObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Mlp(weights, hidden): the contact network (network.py): N_INPUTS inputs, ReLU "
              "hidden layers of the given widths, six outcome logits.",
    .tp_methods = Mlp_methods,
    .tp_getset = eval_getset,
    .tp_init = (initproc)Mlp_init,
    .tp_dealloc = (destructor)Mlp_dealloc,
    .tp_new = PyType_GenericNew,
};

/* ---------------------------------------------------------------------------------- module */

/* inputs(mover, opponent) -> the network's inputs (network.inputs) as a list of floats. */
static PyObject *contact_inputs(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    Side me, other;
    float x[N_INPUTS];
    (void)module;
    if (parse_position(args, nargs, "inputs", mover, opponent) < 0)
        return NULL;
    side_info(mover, &me);
    side_info(opponent, &other);
    encode_inputs(mover, opponent, &me, &other, x);
    PyObject *list = PyList_New(N_INPUTS);
    for (int i = 0; list != NULL && i < N_INPUTS; i++)
        PyList_SET_ITEM(list, i, PyFloat_FromDouble((double)x[i]));
    return list;
}

static PyMethodDef module_methods[] = {
    {"features", (PyCFunction)(void (*)(void))contact_features, METH_FASTCALL,
     "features(mover, opponent) -> features.feature_vector(mover, opponent) (FEATURE_NAMES "
     "order); mover is on roll."},
    {"inputs", (PyCFunction)(void (*)(void))contact_inputs, METH_FASTCALL,
     "inputs(mover, opponent) -> network.inputs(mover, opponent): the network's inputs."},
    {"encode", (PyCFunction)(void (*)(void))contact_encode, METH_FASTCALL,
     "encode(boards) -> (inputs, allowed) of 50-byte boards: float32 network inputs and the "
     "six-outcome masks, as bytes."},
    {"selfplay", (PyCFunction)(void (*)(void))contact_selfplay, METH_VARARGS | METH_KEYWORDS,
     "selfplay(evaluator, race, seed, games, noise=0.0, max_plies=10000, phase=0, "
     "alternatives=0, search=None) -> (boards, values, ends, alternatives): the contact "
     "(phase 0) or race (1) positions of greedy 0-ply self-play games (1-ply with search = "
     "(limit, threshold)), and the runners-up of its moves (see the C source)."},
    {"roll_averages", (PyCFunction)(void (*)(void))contact_roll_averages, METH_FASTCALL,
     "roll_averages(evaluator, race, boards) -> 5 doubles per board: its roll_average."},
    {"duel", (PyCFunction)(void (*)(void))contact_duel, METH_FASTCALL,
     "duel(a, b, race, seed, pairs) -> a's points per game in mirrored cubeless pairs of two "
     "greedy 0-ply evaluators."},
    {"rollout", (PyCFunction)(void (*)(void))contact_rollout, METH_VARARGS | METH_KEYWORDS,
     "rollout(evaluator, race, mover, opponent, seed, first, count, truncate, vr, dice, "
     "utilities=None, race_formula=None) -> (outcomes, luck, plies): trials of a cubeless "
     "rollout by the greedy "
     "0-ply player (bgbot/rollout/trial.py is the definition; see the C source)."},
    {"duel_pubeval", (PyCFunction)(void (*)(void))contact_duel_pubeval, METH_FASTCALL,
     "duel_pubeval(evaluator, race, contact_weights, race_weights, seed, pairs) -> the "
     "evaluator's points per game in mirrored cubeless pairs against pubeval."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef contact_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "bgbot.players._contact",
    .m_doc = "The heuristic evaluator in C: contact features, the linear heads, the network, "
             "look-ahead and self-play (optional; features.py and network.py are the "
             "definitions).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__contact(void)
{
    build_tables();
    if (PyType_Ready(&NetType) < 0 || PyType_Ready(&MlpType) < 0)
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
    Py_INCREF(&MlpType);
    if (PyModule_AddObject(module, "Mlp", (PyObject *)&MlpType) < 0) {
        Py_DECREF(&MlpType);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "N_FEATURES", N_FEATURES) < 0 ||
        PyModule_AddIntConstant(module, "N_HEADS", N_HEADS) < 0 ||
        PyModule_AddIntConstant(module, "N_INPUTS", N_INPUTS) < 0 ||
        PyModule_AddIntConstant(module, "N_OUTCOMES", N_OUTCOMES) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
