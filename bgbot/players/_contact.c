/* bgbot.players._contact: the heuristic player's evaluations and look-ahead in C.
 *
 * An optional speed-up of bgbot/players/evaluator.py: the kernels of _kernels.h (the contact
 * features of features.py, the network inputs of network.py, the class dispatch of
 * evaluator.py, the 21-roll loops of heuristic.py) behind the two evaluator types, the linear
 * heads `Net` (`eval=linear`) and the network `Mlp`, each of which also holds what it uses for
 * the other classes of position (a race network, a crashed network, the race formula). Every
 * result equals its Python definition (the tests compare them): `features()` returns exactly
 * features.py's `feature_vector`, the look-ahead the Python loops' chances to the last bit, and
 * `rollout` bgbot/rollout/trial.py's trials. When this module is not built, the evaluator runs
 * the pure-Python code instead. What only training runs (self-play, the screening duels) is in
 * bgbot.players._selfplay, built from the same kernels.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_kernels.h"

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

/* ----------------------------------------------------------------------- evaluator types */

static PyTypeObject NetType;
static PyTypeObject MlpType;

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

/* Set a network slot (`*slot`: the race or the crashed network) to `arg`, an Mlp without
 * networks of its own, or None. */
static PyObject *set_network(PyObject *self, EvalBase **slot, PyObject *arg, const char *what)
{
    if (arg != Py_None && !PyObject_TypeCheck(arg, &MlpType)) {
        PyErr_Format(PyExc_TypeError, "the %s network must be an Mlp or None, not %.100s", what,
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    if (arg == self || (arg != Py_None && (((EvalBase *)arg)->race_net != NULL ||
                                           ((EvalBase *)arg)->crashed_net != NULL))) {
        PyErr_Format(PyExc_ValueError, "a %s network must be another network without a race "
                     "network or a crashed network of its own", what);
        return NULL;
    }
    EvalBase *old = *slot;
    if (arg != Py_None) {
        Py_INCREF(arg);
        *slot = (EvalBase *)arg;
    } else {
        *slot = NULL;
    }
    Py_XDECREF((PyObject *)old);
    Py_RETURN_NONE;
}

/* set_race_network(mlp or None): the network for races outside the bear-off zone. */
static PyObject *eval_set_race_network(PyObject *self, PyObject *arg)
{
    return set_network(self, &((EvalBase *)self)->race_net, arg, "race");
}

/* set_crashed_network(mlp or None): the network for crashed positions. */
static PyObject *eval_set_crashed_network(PyObject *self, PyObject *arg)
{
    return set_network(self, &((EvalBase *)self)->crashed_net, arg, "crashed");
}

static void formula_free(RaceFormula *f)
{
    if (f == NULL)
        return;
    Py_XDECREF(f->epc);
    PyMem_Free(f->sides);
    PyMem_Free(f);
}

/* set_race_formula((epc, spread) or None): the race formula for races outside the bear-off
 * zone when there is no race network, `epc(side)` a side's effective pips. */
static PyObject *eval_set_race_formula(PyObject *self, PyObject *arg)
{
    EvalBase *e = (EvalBase *)self;
    RaceFormula *f = NULL;
    if (arg != Py_None) {
        PyObject *epc;
        double spread;
        if (!PyTuple_Check(arg) || !PyArg_ParseTuple(arg, "Od", &epc, &spread) ||
            !PyCallable_Check(epc) || !(spread > 0.0)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "the race formula must be None or (effective "
                            "pips of a side: a callable, spread > 0)");
            return NULL;
        }
        f = PyMem_Calloc(1, sizeof(RaceFormula));
        if (f == NULL)
            return PyErr_NoMemory();
        Py_INCREF(epc);
        f->epc = epc;
        f->spread = spread;
    }
    formula_free(e->formula);
    e->formula = f;
    Py_RETURN_NONE;
}

static void bearoff_free(Bearoff *b)
{
    if (b == NULL)
        return;
    for (int v = 0; v < BEAROFF_VIEWS; v++)
        if (b->views[v].obj != NULL)
            PyBuffer_Release(&b->views[v]);
    PyMem_Free(b);
}

/* Views one array of the database's tables into b->views[v]: `format` its items, `items` of
 * them (-1: any number); -1 with a ValueError naming it otherwise. */
static int bearoff_view(Bearoff *b, int v, PyObject *obj, const char *format, Py_ssize_t size,
                        Py_ssize_t items, const char *name)
{
    Py_buffer *view = &b->views[v];
    if (PyObject_GetBuffer(obj, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        view->obj = NULL;
        PyErr_Format(PyExc_ValueError, "bear-off table %s is not a contiguous array", name);
        return -1;
    }
    const char *found = view->format != NULL ? view->format : "B";
    if (found[0] == '<' || found[0] == '=' || found[0] == '@')
        found++;
    if (strcmp(found, format) != 0 || view->itemsize != size) {
        PyErr_Format(PyExc_ValueError, "bear-off table %s holds '%s' items of %zd bytes, "
                     "not '%s' of %zd", name, found, view->itemsize, format, size);
        return -1;
    }
    if (items >= 0 && view->len / size != items) {
        PyErr_Format(PyExc_ValueError, "bear-off table %s has %zd items, not %zd", name,
                     view->len / size, items);
        return -1;
    }
    return 0;
}

/* Reads one table (`expected, low, length, offsets, data`) from args[0..4] into t, after
 * checking that every distribution lies inside `data` and is at most BEAROFF_MAX_ROLLS long. */
static int bearoff_table(Bearoff *b, int first_view, PyObject *const *args, BearoffTable *t,
                         const char *name)
{
    static const char *const parts[5] = {"expected", "low", "length", "offsets", "data"};
    static const char *const formats[5] = {"d", "B", "B", "I", "f"};
    static const Py_ssize_t sizes[5] = {8, 1, 1, 4, 4};
    char label[48];
    Py_ssize_t n = b->positions;
    for (int k = 0; k < 5; k++) {
        PyOS_snprintf(label, sizeof label, "%s.%s", name, parts[k]);
        if (bearoff_view(b, first_view + k, args[k], formats[k], sizes[k],
                         k == 4 ? -1 : k == 3 ? n + 1 : n, label) < 0)
            return -1;
    }
    t->expected = b->views[first_view].buf;
    t->low = b->views[first_view + 1].buf;
    t->length = b->views[first_view + 2].buf;
    t->offsets = b->views[first_view + 3].buf;
    t->data = b->views[first_view + 4].buf;
    Py_ssize_t data_items = b->views[first_view + 4].len / 4;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (t->offsets[i + 1] - t->offsets[i] != t->length[i] ||
            t->low[i] + t->length[i] > BEAROFF_MAX_ROLLS) {
            PyErr_Format(PyExc_ValueError, "bear-off table %s: distribution %zd does not fit "
                         "its offsets or is longer than %d rolls", name, i, BEAROFF_MAX_ROLLS);
            return -1;
        }
    }
    if (t->offsets[0] != 0 || (Py_ssize_t)t->offsets[n] != data_items) {
        PyErr_Format(PyExc_ValueError, "bear-off table %s: its offsets do not cover its %zd "
                     "probabilities", name, data_items);
        return -1;
    }
    return 0;
}

/* set_bearoff(tables or None): the bear-off database (`BearoffDatabase.c_tables()`: its
 * chequers and the two tables' arrays, read in place), for the bear-off zone and the race
 * formula's effective pips; None: the call-backs again. */
static PyObject *eval_set_bearoff(PyObject *self, PyObject *arg)
{
    EvalBase *e = (EvalBase *)self;
    Bearoff *b = NULL;
    if (arg != Py_None) {
        if (!PyTuple_Check(arg) || PyTuple_GET_SIZE(arg) != 1 + 2 * 5) {
            PyErr_SetString(PyExc_ValueError, "the bear-off database must be None or a tuple "
                            "of 11: (max chequers, then expected, low, length, offsets, data "
                            "of the full and of the first-off table)");
            return NULL;
        }
        long chequers = PyLong_AsLong(PyTuple_GET_ITEM(arg, 0));
        if (chequers == -1 && PyErr_Occurred())
            return NULL;
        if (chequers < 0 || chequers > CHEQUERS) {
            PyErr_Format(PyExc_ValueError, "the bear-off database holds 0..%d chequers, not %ld",
                         CHEQUERS, chequers);
            return NULL;
        }
        b = PyMem_Calloc(1, sizeof(Bearoff));
        if (b == NULL)
            return PyErr_NoMemory();
        b->max_chequers = (int)chequers;
        b->positions = bearoff_binomial((int)chequers + BEAROFF_POINTS, BEAROFF_POINTS);
        PyObject *const *items = &PyTuple_GET_ITEM(arg, 1);
        if (bearoff_table(b, 0, items, &b->full, "full") < 0 ||
            bearoff_table(b, 5, items + 5, &b->first, "first") < 0) {
            bearoff_free(b);
            return NULL;
        }
    }
    bearoff_free(e->bearoff);
    e->bearoff = b;
    Py_RETURN_NONE;
}

static PyObject *eval_has_bearoff(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((EvalBase *)self)->bearoff != NULL);
}

static PyObject *or_none(PyObject *obj)
{
    if (obj == NULL)
        obj = Py_None;
    Py_INCREF(obj);
    return obj;
}

static PyObject *eval_race_network(PyObject *self, void *closure)
{
    (void)closure;
    return or_none((PyObject *)((EvalBase *)self)->race_net);
}

static PyObject *eval_crashed_network(PyObject *self, void *closure)
{
    (void)closure;
    return or_none((PyObject *)((EvalBase *)self)->crashed_net);
}

static PyObject *eval_race_formula(PyObject *self, void *closure)
{
    (void)closure;
    const RaceFormula *f = ((EvalBase *)self)->formula;
    if (f == NULL)
        Py_RETURN_NONE;
    return Py_BuildValue("(Od)", f->epc, f->spread);
}

static PyGetSetDef eval_getset[] = {
    {"race_network", eval_race_network, NULL,
     "The network for races outside the bear-off zone (set_race_network), or None.", NULL},
    {"crashed_network", eval_crashed_network, NULL,
     "The network for crashed positions (set_crashed_network), or None.", NULL},
    {"race_formula", eval_race_formula, NULL,
     "(epc, spread) of the race formula (set_race_formula), or None.", NULL},
    {"has_bearoff", eval_has_bearoff, NULL,
     "Whether this evaluator holds the bear-off database (set_bearoff).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* What pickling keeps besides the weights: (race network, crashed network, race formula). */
static PyObject *eval_state(EvalBase *e)
{
    PyObject *formula = eval_race_formula((PyObject *)e, NULL);
    if (formula == NULL)
        return NULL;
    return Py_BuildValue("(OON)", e->race_net ? (PyObject *)e->race_net : Py_None,
                         e->crashed_net ? (PyObject *)e->crashed_net : Py_None, formula);
}

/* __setstate__((race network, crashed network, race formula)). */
static PyObject *eval_setstate(PyObject *self, PyObject *state)
{
    PyObject *race, *crashed, *formula, *done;
    if (!PyArg_ParseTuple(state, "OOO:__setstate__", &race, &crashed, &formula))
        return NULL;
    done = eval_set_race_network(self, race);
    if (done == NULL)
        return NULL;
    Py_DECREF(done);
    done = eval_set_crashed_network(self, crashed);
    if (done == NULL)
        return NULL;
    Py_DECREF(done);
    return eval_set_race_formula(self, formula);
}

static void eval_clear(EvalBase *e)
{
    Py_CLEAR(e->race_net);
    Py_CLEAR(e->crashed_net);
    formula_free(e->formula);
    e->formula = NULL;
    bearoff_free(e->bearoff);
    e->bearoff = NULL;
}

/* contact(mover, opponent): the evaluator's own chances of a position with contact (its
 * network or linear heads, whatever the class slots hold); None when there is no contact (a
 * side has borne everything off, or the game is a race). */
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

/* evaluate(mover, opponent, race): the chances of `mover` on roll by the class of the board
 * (`evaluate_on_roll`: the slots, and race(mover, opponent) for the rest). */
static PyObject *eval_evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    double p[N_HEADS];
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError,
                     "evaluate() takes 3 arguments (mover, opponent, race), got %zd", nargs);
        return NULL;
    }
    if (parse_side(args[0], "mover", mover) < 0 || parse_side(args[1], "opponent", opponent) < 0 ||
        check_board(mover, opponent) < 0 || check_race(args[2]) < 0)
        return NULL;
    if (evaluate_on_roll((const EvalBase *)self, mover, opponent, args[2], p) < 0)
        return NULL;
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

/* The constrained probabilities of linear.LinearHeads.evaluate_sides (linear heads) for a
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
    return Py_BuildValue("O(N)N", (PyObject *)Py_TYPE(self), heads, eval_state(&self->base));
}

static void Net_dealloc(NetObject *self)
{
    eval_clear(&self->base);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ------------------------------------------------------------------- Mlp (the network) */

typedef struct {
    EvalBase base;
    int n_layers;                /* hidden layers */
    int width[MAX_LAYERS + 2];   /* width[0] = N_INPUTS, then the hidden layers, then 6 */
    float *weights[MAX_LAYERS + 1]; /* layer k: [width[k]][width[k + 1]], input-major */
    float *bias[MAX_LAYERS + 1];
    PyObject *blob;              /* the bytes the weights were read from (for pickling) */
} MlpObject;

/* The hidden width (the shipped networks') whose layers get a loop of fixed length, which the
 * compiler unrolls and vectorises whole: each sum still takes the same terms in the same order,
 * so the results are the general loop's to the last bit (tests/test_network.py holds them so). */
#define FAST_WIDTH 128

/* Floats as one value (GCC's vector extension), whose arithmetic is element by element: one
 * register of SSE or NEON, and of AVX2. */
typedef float Floats4 __attribute__((vector_size(4 * sizeof(float))));
typedef float Floats8 __attribute__((vector_size(8 * sizeof(float))));

/* Boards the network evaluates at once at most (`mlp_forward_block`): each row of weights is
 * read once for all of them (rows come from the second-level cache: the weights do not fit in
 * the first), which bounds the speed of one board at a time. */
#define BLOCK 3

/* `FORWARD(boards)` of _forward.h: six outcome probabilities of the network for each of
 * `boards` (1 .. BLOCK, a constant where it is inlined) boards' inputs (x: [boards][N_INPUTS],
 * allowed: [boards][N_OUTCOMES], out: [boards][N_OUTCOMES]), the impossible outcomes
 * (allowed[k] = 0) given no probability. Hidden units are ReLUs. Each layer skips the inputs
 * that are zero on every board (most of the board encoding is; about half of the ReLUs): a
 * board whose input is zero where another's is not adds 0 * weight, which leaves its sum as it
 * is (but for the sign of a zero sum, which neither the ReLU nor the softmax sees), so a
 * board's values do not depend on the others. */
typedef void (*ForwardFn)(const MlpObject *m, const float *x, const unsigned char *allowed,
                          double *out);

/* Every multiply-add of the network is fused (one rounding, IEEE 754's fusedMultiplyAdd), in
 * both copies of the forward pass: AVX2's FMA instructions where the CPU has them, else C's
 * fmaf (exact in software where the hardware has no FMA, only slower). So the values are the
 * same on every machine, bit for bit, with half the instructions of a multiply and an add. */
#define FORWARD(name) forward_generic_##name
#define FORWARD_TARGET
#define VEC Floats4
#define VEC_N 4
#define COLUMNS 64
#define PASS_BOARDS 1
#define MAC(acc, v, r)                                                                         \
    ({                                                                                         \
        Floats4 sum_ = (acc), v_ = (v), r_ = (r);                                              \
        for (int l_ = 0; l_ < 4; l_++)                                                         \
            sum_[l_] = __builtin_fmaf(v_[l_], r_[l_], sum_[l_]);                               \
        sum_;                                                                                  \
    })
#define MAC_ONE(acc, v, r) __builtin_fmaf(v, r, acc)
#include "_forward.h" /* which undefines these */

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define FAST_FORWARDS 1
#include <immintrin.h>
#define FORWARD(name) forward_avx2_##name
#define FORWARD_TARGET __attribute__((target("avx2,fma")))
#define VEC Floats8
#define VEC_N 8
#define COLUMNS 32 /* 3 boards x 4 registers of 8 floats, 3 broadcasts, a row: AVX2's 16 */
#define PASS_BOARDS BLOCK
#define MAC(acc, v, r) ((Floats8)_mm256_fmadd_ps((__m256)(v), (__m256)(r), (__m256)(acc)))
#define MAC_ONE(acc, v, r) __builtin_fmaf(v, r, acc)
#include "_forward.h" /* which undefines these */
#endif

/* The copy the CPU runs (`choose_forward`, at import). */
static ForwardFn mlp_forward = forward_generic_one, mlp_forward_block = forward_generic_block;
static const char *forward_name = "generic";

/* AVX2 with FMA where the CPU has it (an AVX-512 copy, 16 floats a register, measured slower:
 * 87 against 95 contact rollout trials a second); the environment variable BGBOT_FORWARD=generic
 * asks for the other, so the tests can hold the two equal. */
static void choose_forward(void)
{
#ifdef FAST_FORWARDS
    const char *asked = getenv("BGBOT_FORWARD");
    __builtin_cpu_init();
    if ((asked == NULL || strcmp(asked, "generic") != 0) && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma")) {
        mlp_forward = forward_avx2_one;
        mlp_forward_block = forward_avx2_block;
        forward_name = "avx2";
    }
#endif
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

/* `ContactManyFn` of the network: BLOCK boards at a time (the last block filled up with zero
 * inputs, whose values are dropped). */
static void mlp_contact_many(const EvalBase *base, int n, const float *x,
                             const unsigned char *allowed, double *p)
{
    const MlpObject *self = (const MlpObject *)base;
    for (int start = 0; start < n; start += BLOCK) {
        int count = n - start < BLOCK ? n - start : BLOCK;
        float padded[BLOCK][N_INPUTS];
        unsigned char masks[BLOCK][N_OUTCOMES];
        const float *inputs = x + (size_t)start * N_INPUTS;
        const unsigned char *mask = allowed + (size_t)start * N_OUTCOMES;
        if (count < BLOCK) {
            memset(padded, 0, sizeof padded);
            memset(masks, 1, sizeof masks);
            memcpy(padded, inputs, sizeof(float) * N_INPUTS * (size_t)count);
            memcpy(masks, mask, (size_t)N_OUTCOMES * (size_t)count);
            inputs = &padded[0][0];
            mask = &masks[0][0];
        }
        double o[BLOCK][N_OUTCOMES];
        mlp_forward_block(self, inputs, mask, &o[0][0]);
        for (int b = 0; b < count; b++)
            chances_from_outcomes(o[b], p + (size_t)(start + b) * N_HEADS);
    }
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
    eval_clear(&self->base);
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
    self->base.contact_many = mlp_contact_many;
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
    return Py_BuildValue("O(ON)N", (PyObject *)Py_TYPE(self), blob, hidden,
                         eval_state(&self->base));
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
            double best[N_HEADS], q[N_HEADS];
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
                double chunk[MANY_BOARDS][N_HEADS];
                for (int k = 0; k < n && status == 0; k++) {
                    const Result *r = &g.results[k];
                    const double *c = chances_in_order(e, n, g.results, k, args[2], NULL, NULL,
                                                       chunk);
                    if (c == NULL) {
                        status = -1;
                        break;
                    }
                    memcpy(replies[k].mover, r->mover, sizeof r->mover);
                    memcpy(replies[k].opponent, r->opponent, sizeof r->opponent);
                    /* we are on roll after the reply: the replier's equity is minus ours */
                    replies[k].equity = -equity(c);
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
    double chunk[MANY_BOARDS][N_HEADS];
    for (int k = 0; list != NULL && k < n; k++) {
        const Result *r = &g.results[k];
        double q[N_HEADS];
        const double *c = chances_in_order(e, n, g.results, k, args[4], NULL, NULL, chunk);
        if (c == NULL) {
            Py_CLEAR(list);
            break;
        }
        flip(c, q);
        PyObject *item = Py_BuildValue("(NNNN)", steps_tuple(r), side_tuple(r->mover),
                             side_tuple(r->opponent), tuple5(q));
        if (item == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, item);
    }
    generator_free(&g);
    return list;
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

typedef struct {
    const EvalBase *e;
    PyObject *race;
    Generator g;
    const double *utility[2]; /* per side (0: on roll at the start): NULL = cubeless equity */
    Turn *memo;
    int memo_count;
    RaceMemo races; /* the call-back's answers */
    TurnCache turn_boards; /* the boards of the turn `rollout_turn` works on */
} Rollout;

/* `evaluate_on_roll`, with the races the call-back answers remembered. */
static int rollout_evaluate(Rollout *r, const int *mover, const int *opponent, double *p)
{
    return evaluate_by_class(r->e, mover, opponent, r->race, &r->races, p);
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
    double top = -1e300, q[N_HEADS], chunk[MANY_BOARDS][N_HEADS];
    int chosen = 0;
    for (int k = 0; k < n; k++) {
        const double *c = chances_in_order(r->e, n, r->g.results, k, r->race, &r->races, NULL,
                                           chunk);
        if (c == NULL)
            return -1;
        flip(c, q);
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
    turn_cache_clear(&r->turn_boards);
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
            double best_eq = -1e9, top = -1e300, chunk[MANY_BOARDS][N_HEADS];
            int chosen = 0;
            for (int k = 0; k < n; k++) {
                const double *c = chances_in_order(r->e, n, r->g.results, k, r->race,
                                                   &r->races, &r->turn_boards, chunk);
                if (c == NULL)
                    return -1;
                flip(c, q);
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
 * Positions are evaluated by `evaluate_on_roll` (the evaluator's slots, then `race`, whose
 * answers are remembered for the call). */
static PyObject *contact_rollout(PyObject *module, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"evaluator", "race", "mover", "opponent", "seed", "first",
                               "count", "truncate", "vr", "dice", "utilities", NULL};
    PyObject *evaluator, *race, *mover_obj, *opponent_obj, *utilities = Py_None;
    unsigned long long seed, first;
    int count, truncate, vr;
    Py_buffer dice;
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    double coefficients[2][6];
    (void)module;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOKKiipy*|O:rollout", keywords,
                                     &evaluator, &race, &mover_obj, &opponent_obj, &seed, &first,
                                     &count, &truncate, &vr, &dice, &utilities))
        return NULL;
    static Rollout zero; /* every field empty */
    Rollout r = zero;
    r.race = race;
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
    outcomes = PyMem_Malloc(sizeof(double) * N_HEADS * (size_t)(count ? count : 1));
    lucks = PyMem_Malloc(sizeof(double) * N_HEADS * (size_t)(count ? count : 1));
    plies = PyMem_Malloc(sizeof(int32_t) * (size_t)(count ? count : 1));
    scratch = PyMem_Malloc(sizeof(Turn));
    r.memo = vr ? PyMem_Malloc(sizeof(Turn) * TURN_MEMO) : NULL;
    r.races.entries = PyMem_Malloc(sizeof(RaceEntry) * RACE_CACHE_SIZE);
    if (outcomes == NULL || lucks == NULL || plies == NULL || scratch == NULL ||
        (vr && r.memo == NULL) || r.races.entries == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memset(r.races.entries, 0xFF, sizeof(RaceEntry) * RACE_CACHE_SIZE);
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
    PyMem_Free(r.races.entries);
    return result;
}

/* ------------------------------------------------------------------------------ types */

/* The methods both evaluator types have (`EVAL_METHODS` in each method table). */
#define EVAL_METHODS                                                                            \
    {"__setstate__", (PyCFunction)eval_setstate, METH_O,                                        \
     "Pickle support: (race network, crashed network, race formula)."},                         \
    {"set_race_network", (PyCFunction)eval_set_race_network, METH_O,                            \
     "set_race_network(mlp or None): the network for races outside the bear-off zone (None: "   \
     "the race formula when one is set, else the race call-back)."},                            \
    {"set_crashed_network", (PyCFunction)eval_set_crashed_network, METH_O,                      \
     "set_crashed_network(mlp or None): the network for crashed positions (None: this "         \
     "evaluator's own contact evaluation)."},                                                   \
    {"set_race_formula", (PyCFunction)eval_set_race_formula, METH_O,                            \
     "set_race_formula((epc, spread) or None): races outside the bear-off zone, where there "   \
     "is no race network, by race.py's formula in C, epc(side) giving a side's effective "      \
     "pips (None: the race call-back)."},                                                       \
    {"set_bearoff", (PyCFunction)eval_set_bearoff, METH_O,                                      \
     "set_bearoff(BearoffDatabase.c_tables() or None): the bear-off database, read in place, "  \
     "for the bear-off zone and the race formula's effective pips (None: the call-backs). "     \
     "Not pickled."},                                                                           \
    {"contact", (PyCFunction)(void (*)(void))eval_contact, METH_FASTCALL,                       \
     "contact(mover, opponent) -> this evaluator's own chances for the player on roll, or "     \
     "None when the position has no contact (a race, or a side is off)."},                      \
    {"evaluate", (PyCFunction)(void (*)(void))eval_evaluate, METH_FASTCALL,                     \
     "evaluate(mover, opponent, race) -> the chances of the player on roll by the class of "    \
     "the position: its outcome, the crashed or race network or race formula where set, this "  \
     "evaluator for contact, race(m, o) for the rest (the bear-off zone)."},                    \
    {"plays", (PyCFunction)(void (*)(void))eval_plays, METH_FASTCALL,                           \
     "plays(mover, opponent, d1, d2, race) -> [(steps, mover after, opponent after, chances)] " \
     "for every candidate of the roll, chances the mover's at 0-ply after it."},                \
    {"one_ply", (PyCFunction)(void (*)(void))eval_one_ply, METH_FASTCALL,                       \
     "one_ply(mover, opponent, race) -> the chances of `mover`, who has just moved, averaged "  \
     "over the 21 rolls of `opponent`, each answered by the reply that minimises mover's "      \
     "cubeless equity; race as for evaluate."},                                                 \
    {"two_ply", (PyCFunction)(void (*)(void))eval_two_ply, METH_FASTCALL,                       \
     "two_ply(mover, opponent, race, keep, threshold) -> the chances of `mover`, who has just " \
     "moved, two plies ahead (see the C source)."},                                             \
    {"roll_average", (PyCFunction)(void (*)(void))eval_roll_average, METH_FASTCALL,             \
     "roll_average(mover, opponent, race) -> the chances of `mover`, on roll, averaged over "   \
     "his 21 rolls, each played to his best cubeless equity; race as for evaluate."}

static PyMethodDef Net_methods[] = {
    EVAL_METHODS,
    {"__reduce__", (PyCFunction)Net_reduce, METH_NOARGS, "Pickle support: Net(weights)."},
    {"logits", (PyCFunction)(void (*)(void))Net_logits, METH_FASTCALL,
     "logits(mover, opponent) -> the five heads' logits (weights . features)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject NetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bgbot.players._contact.Net",
    .tp_basicsize = sizeof(NetObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Net(weights): the five linear contact heads (linear.HEADS order), each a "
              "sequence of N_FEATURES weights in FEATURE_NAMES order.",
    .tp_methods = Net_methods,
    .tp_getset = eval_getset,
    .tp_dealloc = (destructor)Net_dealloc,
    .tp_init = (initproc)Net_init,
    .tp_new = PyType_GenericNew,
};

static PyMethodDef Mlp_methods[] = {
    EVAL_METHODS,
    {"__reduce__", (PyCFunction)Mlp_reduce, METH_NOARGS, "Pickle support: Mlp(weights, hidden)."},
    {"outcomes", (PyCFunction)(void (*)(void))Mlp_outcomes, METH_FASTCALL,
     "outcomes(mover, opponent) -> the six outcome probabilities (win single, gammon, "
     "backgammon; lose single, gammon, backgammon) of the player on roll."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MlpType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bgbot.players._contact.Mlp",
    .tp_basicsize = sizeof(MlpObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Mlp(weights, hidden): a network of network.py: N_INPUTS inputs, ReLU hidden "
              "layers of the given widths, six outcome logits.",
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

static const char *const CLASS_NAMES[N_CLASSES] = {"over", "bearoff", "race", "crashed",
                                                   "contact"};

/* position_class(mover, opponent) -> the name of the board's class (position_class.side_class),
 * the class `evaluate_on_roll` goes by. */
static PyObject *contact_position_class(PyObject *module, PyObject *const *args,
                                        Py_ssize_t nargs)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS];
    Side me, other;
    (void)module;
    if (parse_position(args, nargs, "position_class", mover, opponent) < 0)
        return NULL;
    side_info(mover, &me);
    side_info(opponent, &other);
    return PyUnicode_FromString(CLASS_NAMES[side_class(mover, opponent, &me, &other)]);
}

static PyMethodDef module_methods[] = {
    {"features", (PyCFunction)(void (*)(void))contact_features, METH_FASTCALL,
     "features(mover, opponent) -> features.feature_vector(mover, opponent) (FEATURE_NAMES "
     "order); mover is on roll."},
    {"inputs", (PyCFunction)(void (*)(void))contact_inputs, METH_FASTCALL,
     "inputs(mover, opponent) -> network.inputs(mover, opponent): the network's inputs."},
    {"position_class", (PyCFunction)(void (*)(void))contact_position_class, METH_FASTCALL,
     "position_class(mover, opponent) -> position_class.side_class(mover, opponent).value: "
     "the class the evaluators dispatch by."},
    {"rollout", (PyCFunction)(void (*)(void))contact_rollout, METH_VARARGS | METH_KEYWORDS,
     "rollout(evaluator, race, mover, opponent, seed, first, count, truncate, vr, dice, "
     "utilities=None) -> (outcomes, luck, plies): trials of a cubeless rollout by the greedy "
     "0-ply player (bgbot/rollout/trial.py is the definition; see the C source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef contact_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "bgbot.players._contact",
    .m_doc = "The heuristic player's evaluations in C: contact features, the linear heads, the "
             "networks, the class dispatch, look-ahead and the rollout kernel (optional; "
             "features.py, network.py and evaluator.py are the definitions).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__contact(void)
{
    build_tables();
    choose_forward();
    if (PyType_Ready(&NetType) < 0 || PyType_Ready(&MlpType) < 0)
        return NULL;
    net_type = &NetType;
    mlp_type = &MlpType;
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
        PyModule_AddIntConstant(module, "N_OUTCOMES", N_OUTCOMES) < 0 ||
        PyModule_AddIntConstant(module, "KERNELS_VERSION", KERNELS_VERSION) < 0 ||
        PyModule_AddStringConstant(module, "FORWARD", forward_name) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
