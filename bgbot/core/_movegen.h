/* The move generator of bgbot's rules core in C: an optional accelerator of core/position.py.
 *
 * The definition is core/position.py's `_generate` (which agrees with gnubg on every record of
 * legal-moves.jsonl); this code follows it step for step, so that the results come in the same
 * order as `Position.play_results` and with the same play per board. It is included by the
 * core's own extension (bgbot/core/_movegen.c: `legal_plays` for `Position`) and by the
 * player's (bgbot/players/_contact.c: look-ahead and self-play), so there is one generator.
 *
 * Include <Python.h>, <stdint.h> and <string.h> before this header.
 */

#ifndef BGBOT_MOVEGEN_H
#define BGBOT_MOVEGEN_H

#ifndef N_LOCATIONS
#define N_LOCATIONS 25
#endif
#ifndef CHEQUERS
#define CHEQUERS 15
#endif

/* Helpers that one of the two including modules does not use. */
#if defined(__GNUC__) || defined(__clang__)
#define MAYBE_UNUSED __attribute__((unused))
#else
#define MAYBE_UNUSED
#endif

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

MAYBE_UNUSED static int parse_position(PyObject *const *args, Py_ssize_t nargs, const char *function,
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

MAYBE_UNUSED static void generator_free(Generator *g)
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
MAYBE_UNUSED static int parse_die(PyObject *obj, const char *name, int *out)
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

MAYBE_UNUSED static PyObject *step_tuple(const Move *m)
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
MAYBE_UNUSED static PyObject *steps_tuple(const Result *r)
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

#endif /* BGBOT_MOVEGEN_H */
