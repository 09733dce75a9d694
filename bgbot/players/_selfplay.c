/* bgbot.players._selfplay: what only training runs, in C (tools/train_network.py).
 *
 * Self-play of the greedy 0-ply (or 1-ply) player recording the positions of one phase with
 * their next values (`selfplay`), the look-ahead targets of many boards (`roll_averages`),
 * the network inputs of many boards (`encode`), and the quick screening duels of training
 * (`duel`, `duel_pubeval`, against Tesauro's pubeval). The evaluators are bgbot.players._contact's
 * `Net` and `Mlp` (this module imports it), and the kernels come from the same _kernels.h, so
 * a position is evaluated here exactly as the player evaluates it. Optional, like _contact:
 * the player never needs it.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_kernels.h"

/* ------------------------------------------------------------------------- self-play */

/* The starting position of one side. */
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
    double chunk[MANY_BOARDS][N_HEADS];
    for (int k = 0; k < n; k++) {
        const double *c = chances_in_order(e, n, g->results, k, race, NULL, NULL, chunk);
        if (c == NULL)
            return -1;
        memcpy(p, c, sizeof p);
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
    double chunk[MANY_BOARDS][N_HEADS];
    for (int k = 0; k < n; k++) { /* the best `limit` by the opponent's equity, lowest first */
        const double *c = chances_in_order(e, n, g->results, k, race, NULL, NULL, chunk);
        if (c == NULL)
            return -1;
        memcpy(p, c, sizeof p);
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


/* selfplay(evaluator, race, seed, games, noise=0.0, max_plies=10000, phase=0)
 *   -> (boards, values, ends):
 *
 * Plays `games` games of the greedy 0-ply player against itself (dice from splitmix64 seeded
 * with seed + game number; the opening roll rerolled until the dice differ) and records the
 * positions of one phase, with the player on roll before rolling: phase 0 the contact
 * positions (a game's record ends where contact ends), phase 1 the races outside the bear-off
 * zone (it ends where both sides are in their home boards, the database's exact zone), phase
 * 2 the crashed positions (position_class.py's class; it ends where the position is no longer
 * crashed: contact ends, or more rarely a hit sets a crashed side's chequers working again).
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
static PyObject *selfplay_games(PyObject *module, PyObject *args, PyObject *kwds)
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
    if (games < 0 || phase < 0 || phase > 2) {
        PyErr_Format(PyExc_ValueError, "games must be >= 0 and phase 0, 1 or 2, got %d and %d",
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
            int kind = side_class(mover, opponent, &me, &other);
            int recorded = phase == 0 || (phase == 1 && kind == CLASS_RACE) ||
                           (phase == 2 && kind == CLASS_CRASHED);
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
            kind = side_class(mover, opponent, &me, &other);
            unsigned char end = kind == CLASS_OVER ||
                                (phase == 0   ? !is_contact(&me, &other)
                                 : phase == 1 ? kind == CLASS_BEAROFF
                                              : recorded && kind != CLASS_CRASHED);
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
static PyObject *selfplay_encode(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
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
static PyObject *selfplay_roll_averages(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
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
static PyObject *selfplay_duel_pubeval(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
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
static PyObject *selfplay_duel(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
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


/* ---------------------------------------------------------------------------------- module */

static PyMethodDef module_methods[] = {
    {"encode", (PyCFunction)(void (*)(void))selfplay_encode, METH_FASTCALL,
     "encode(boards) -> (inputs, allowed) of 50-byte boards: float32 network inputs and the "
     "six-outcome masks, as bytes."},
    {"selfplay", (PyCFunction)(void (*)(void))selfplay_games, METH_VARARGS | METH_KEYWORDS,
     "selfplay(evaluator, race, seed, games, noise=0.0, max_plies=10000, phase=0, "
     "alternatives=0, search=None) -> (boards, values, ends, alternatives): the contact "
     "(phase 0), race (1) or crashed (2) positions of greedy 0-ply self-play games (1-ply "
     "with search = (limit, threshold)), and the runners-up of its moves (see the C source)."},
    {"roll_averages", (PyCFunction)(void (*)(void))selfplay_roll_averages, METH_FASTCALL,
     "roll_averages(evaluator, race, boards) -> 5 doubles per board: its roll_average."},
    {"duel", (PyCFunction)(void (*)(void))selfplay_duel, METH_FASTCALL,
     "duel(a, b, race, seed, pairs) -> a's points per game in mirrored cubeless pairs of two "
     "greedy 0-ply evaluators."},
    {"duel_pubeval", (PyCFunction)(void (*)(void))selfplay_duel_pubeval, METH_FASTCALL,
     "duel_pubeval(evaluator, race, contact_weights, race_weights, seed, pairs) -> the "
     "evaluator's points per game in mirrored cubeless pairs against pubeval."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef selfplay_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "bgbot.players._selfplay",
    .m_doc = "Self-play and the screening duels of training, in C (optional; the evaluators "
             "are bgbot.players._contact's).",
    .m_size = -1,
    .m_methods = module_methods,
};

/* The type `name` of the _contact module, or NULL with an error. */
static PyTypeObject *contact_type(PyObject *contact, const char *name)
{
    PyObject *type = PyObject_GetAttrString(contact, name);
    if (type != NULL && !PyType_Check(type)) {
        PyErr_Format(PyExc_ImportError, "bgbot.players._contact.%s is not a type", name);
        Py_CLEAR(type);
    }
    return (PyTypeObject *)type; /* kept: the module stays imported */
}

PyMODINIT_FUNC PyInit__selfplay(void)
{
    PyObject *contact = PyImport_ImportModule("bgbot.players._contact");
    if (contact == NULL)
        return NULL;
    PyObject *version = PyObject_GetAttrString(contact, "KERNELS_VERSION");
    long found = version != NULL ? PyLong_AsLong(version) : -1;
    Py_XDECREF(version);
    if (found != KERNELS_VERSION) {
        PyErr_Clear();
        PyErr_Format(PyExc_ImportError,
                     "bgbot.players._contact was built from other kernels (version %ld, "
                     "_selfplay's %d): rebuild both with `pip install -e .`", found,
                     KERNELS_VERSION);
        Py_DECREF(contact);
        return NULL;
    }
    net_type = contact_type(contact, "Net");
    mlp_type = net_type != NULL ? contact_type(contact, "Mlp") : NULL;
    Py_DECREF(contact);
    if (mlp_type == NULL)
        return NULL;
    build_tables();
    PyObject *module = PyModule_Create(&selfplay_module);
    if (module == NULL)
        return NULL;
    if (PyModule_AddIntConstant(module, "N_INPUTS", N_INPUTS) < 0 ||
        PyModule_AddIntConstant(module, "KERNELS_VERSION", KERNELS_VERSION) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
