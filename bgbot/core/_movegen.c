/* bgbot.core._movegen: the rules core's move generator in C (optional; see _movegen.h).
 *
 * `Position.legal_plays` and `Position.play_results` use it when it is built; the Python
 * generator in core/position.py stays the definition and the fallback (BGBOT_PURE_PYTHON), and
 * the tests hold the two equal on every gnubg record of legal-moves.jsonl.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "_movegen.h"

/* One generator for the module, reused by every call (the GIL serialises them). */
static Generator shared;
static int shared_ready = 0;

/* Parse (mover, opponent, d1, d2) and run the generator; returns the number of results or -1. */
static int run(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t expected, const char *name)
{
    int mover[N_LOCATIONS], opponent[N_LOCATIONS], d1, d2;
    if (nargs != expected) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments, got %zd", name, expected, nargs);
        return -1;
    }
    if (parse_side(args[0], "mover", mover) < 0 || parse_side(args[1], "opponent", opponent) < 0 ||
        check_board(mover, opponent) < 0 || parse_die(args[2], "d1", &d1) < 0 ||
        parse_die(args[3], "d2", &d2) < 0)
        return -1;
    if (!shared_ready) {
        if (generator_init(&shared) < 0)
            return -1;
        shared_ready = 1;
    }
    return generate(&shared, mover, opponent, d1, d2);
}

/* results(mover, opponent, d1, d2): each distinct resulting board with its play's steps. */
static PyObject *movegen_results(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    int n = run(args, nargs, 4, "results");
    if (n < 0)
        return NULL;
    PyObject *list = PyList_New(n), *unhit = NULL; /* the opponent's counts when no blot was hit */
    for (int k = 0; list != NULL && k < n; k++) {
        const Result *r = &shared.results[k];
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
    return list;
}

/* plays(mover, opponent, d1, d2, play_type): the plays as instances of `play_type`, a tuple
 * subclass without instance dict (core.position.Play), each holding its steps. */
static PyObject *movegen_plays(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs == 5 && (!PyType_Check(args[4]) ||
                       !PyType_IsSubtype((PyTypeObject *)args[4], &PyTuple_Type))) {
        PyErr_SetString(PyExc_TypeError, "plays(): play_type must be a subclass of tuple");
        return NULL;
    }
    int n = run(args, nargs, 5, "plays");
    if (n < 0)
        return NULL;
    PyTypeObject *type = (PyTypeObject *)args[4];
    PyObject *list = PyList_New(n);
    for (int k = 0; list != NULL && k < n; k++) {
        const Result *r = &shared.results[k];
        PyObject *play = type->tp_alloc(type, r->n_steps);
        for (int i = 0; play != NULL && i < r->n_steps; i++) {
            PyObject *step = step_tuple(&r->steps[i]);
            if (step == NULL)
                Py_CLEAR(play);
            else
                PyTuple_SET_ITEM(play, i, step);
        }
        if (play == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, play);
    }
    return list;
}

static PyMethodDef module_methods[] = {
    {"results", (PyCFunction)(void (*)(void))movegen_results, METH_FASTCALL,
     "results(mover, opponent, d1, d2) -> [(steps, mover after, opponent after), ...]: the "
     "distinct boards after the legal plays of the roll, in Position.play_results order, each "
     "with the play play_results pairs with it, as a tuple of (from_point, to_point, hit) steps "
     "in the mover's numbering (25 = bar, 0 = off)."},
    {"plays", (PyCFunction)(void (*)(void))movegen_plays, METH_FASTCALL,
     "plays(mover, opponent, d1, d2, play_type) -> the same plays as `results`, each as a "
     "play_type (a tuple subclass) of its steps."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef movegen_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "bgbot.core._movegen",
    .m_doc = "The rules core's move generator in C (optional; core/position.py is the "
             "definition).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__movegen(void)
{
    return PyModule_Create(&movegen_module);
}
