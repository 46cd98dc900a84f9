/*
 * Operands for the dual-issue probe's FFMAs, chosen from the register
 * bank classes the bank probe measured in the same job (see dual_issue.h).
 *
 * DESIGN
 * The bank probe reports classes as lists of registers; they become a map
 * register -> class, and a source is drawn only from registers that are
 * safe to read in the dual kernel (named by its compiled FFMAs, not RZ,
 * never a destination), taken in ascending order so the choice is the
 * same for the same classes and the same compiled kernel. Several
 * registers per slot are rotated over the FFMAs where the rule allows, so
 * the conflict-free streams are not one instruction repeated.
 */
#include <stdio.h>
#include <string.h>

#include "probes/dual_issue.h"

int dual_bank_map(const json_t *classes, int bank[SASS_RZ])
{
    for (int r = 0; r < SASS_RZ; r++)
        bank[r] = -1;
    if (!json_is_array(classes))
        return -1;
    size_t k;
    json_t *members;
    json_array_foreach(classes, k, members) {
        if (!json_is_array(members) || k > SASS_RZ)
            return -1;
        size_t i;
        json_t *reg;
        json_array_foreach(members, i, reg) {
            json_int_t r = json_is_integer(reg) ? json_integer_value(reg) : -1;
            if (r < 0 || r >= SASS_RZ || bank[r] >= 0)
                return -1;
            bank[r] = (int)k;
        }
    }
    return (int)json_array_size(classes);
}

/* The first `max` registers of class k that a source may be. */
static size_t eligible(const struct dual_layout *L, const int bank[SASS_RZ], int k,
                       unsigned *out, size_t max)
{
    size_t n = 0;
    for (unsigned r = 0; r <= L->b.max_reg && r < SASS_RZ && n < max; r++) {
        int dest = 0;
        for (size_t d = 0; d < L->b.ndest; d++)
            dest |= L->b.dest[d] == r;
        if (!dest && bank[r] == k)
            out[n++] = r;
    }
    return n;
}

static int naive(const struct dual_layout *L, const int bank[SASS_RZ], struct dual_operands *o,
                 char *err, size_t errlen)
{
    unsigned r[3];
    if (eligible(L, bank, 0, r, 3) < 3) {
        snprintf(err, errlen, "bank class 0 has fewer than 3 registers a source may be");
        return -1;
    }
    for (int s = 0; s < 3; s++) {
        o->src[s][0] = r[s];
        o->n[s] = 1;
    }
    return 0;
}

/* Two banks: Ra from class 0, Rb from class 1, Rc one more of class 0,
 * reused. */
static int two_banks(const struct dual_layout *L, const int bank[SASS_RZ],
                     struct dual_operands *o, char *err, size_t errlen)
{
    unsigned a[DUAL_SRC_MAX + 1];
    size_t na = eligible(L, bank, 0, a, DUAL_SRC_MAX + 1);
    o->n[1] = eligible(L, bank, 1, o->src[1], DUAL_SRC_MAX);
    if (na < 2 || o->n[1] < 1) {
        snprintf(err, errlen, "bank classes 0 and 1 need 2 and 1 registers a source may be, "
                 "they have %zu and %zu", na, o->n[1]);
        return -1;
    }
    o->n[0] = na - 1 < DUAL_SRC_MAX ? na - 1 : DUAL_SRC_MAX;
    memcpy(o->src[0], a, o->n[0] * sizeof *a);
    o->src[2][0] = a[o->n[0]];
    o->n[2] = 1;
    o->reuse = 1u << 2;
    return 0;
}

static int three_banks(const struct dual_layout *L, const int bank[SASS_RZ],
                       struct dual_operands *o, char *err, size_t errlen)
{
    for (int s = 0; s < 3; s++)
        if ((o->n[s] = eligible(L, bank, s, o->src[s], DUAL_SRC_MAX)) == 0) {
            snprintf(err, errlen, "bank class %d has no register a source may be", s);
            return -1;
        }
    return 0;
}

int dual_operands_choose(const struct dual_layout *L, const int bank[SASS_RZ], int nbanks,
                         enum dual_choice c, struct dual_operands *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (nbanks < 1) {
        snprintf(err, errlen, "no bank classes");
        return -1;
    }
    if (c == DUAL_NAIVE)
        return naive(L, bank, o, err, errlen);
    if (nbanks == 1) {
        snprintf(err, errlen, "one bank class: no two sources are free of conflicts");
        return -1;
    }
    return nbanks == 2 ? two_banks(L, bank, o, err, errlen)
                       : three_banks(L, bank, o, err, errlen);
}

static const char *rule(const struct dual_operands *o, enum dual_choice c)
{
    if (c == DUAL_NAIVE)
        return "Ra, Rb, Rc three registers of bank class 0 on every FFMA, no reuse: every FFMA "
               "reads three sources from one bank";
    if (o->reuse)
        return "Ra from bank class 0 and Rb from class 1, rotated over the registers listed; Rc "
               "one register with its reuse flag set on every FFMA (three sources cannot lie in "
               "three of two banks, so the operand reuse cache supplies Rc)";
    return "Ra, Rb, Rc from bank classes 0, 1, 2, rotated over the registers listed; no reuse";
}

json_t *dual_operands_json(const struct dual_operands *o, const int bank[SASS_RZ],
                           enum dual_choice c)
{
    static const char *const slot[3] = {"ra", "rb", "rc"};
    json_t *j = json_object(), *banks = json_object();
    for (int s = 0; s < 3; s++) {
        json_t *regs = json_array();
        for (size_t i = 0; i < o->n[s]; i++)
            json_array_append_new(regs, json_integer(o->src[s][i]));
        json_object_set_new(j, slot[s], regs);
        unsigned r = o->n[s] ? o->src[s][0] : SASS_RZ;
        json_object_set_new(banks, slot[s], r < SASS_RZ ? json_integer(bank[r]) : json_null());
    }
    json_object_set_new(j, "reuse", json_integer(o->reuse));
    json_object_set_new(j, "banks", banks);
    json_object_set_new(j, "rule", json_string(rule(o, c)));
    return j;
}
