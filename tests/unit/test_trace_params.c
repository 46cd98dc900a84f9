/*
 * Unit tests of the trace sorter's parameters (trace/params.c): the
 * defaults are the fermi preset with the policies of Nugteren et al.'s
 * method; each preset has its documented numbers; name=value settings
 * parse, refuse unknown names, non-numbers, out-of-range values and unknown
 * policy names with a message naming the setting; a preset applied after
 * explicit settings keeps them; resolving takes threads_per_block from the
 * input only when not set and derives blocks_per_sm from the architecture's
 * limits; validation names the first problem; JSON round-trips, including a
 * seed above 2^63.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "trace/params.h"

static void test_defaults(void **state)
{
    (void)state;
    struct trace_params p;
    trace_params_default(&p);
    assert_string_equal(p.arch, "fermi");
    assert_int_equal(p.threads_per_block, 256);
    assert_int_equal(p.blocks_per_sm, 0);
    assert_int_equal(p.sms, 15);
    assert_int_equal(p.line_bytes, 128);
    assert_int_equal(p.mshr, 32);
    assert_int_equal(p.lat_min, 40);
    assert_true(p.lat_sigma == 10.0);
    assert_int_equal(p.seed, 1);
    assert_int_equal(p.coalesce, TRACE_COALESCE_LINE128);
    assert_int_equal(p.schedule, TRACE_SCHEDULE_RR);
    assert_int_equal(p.delay, TRACE_DELAY_NORMAL);
    assert_int_equal(p.placement, TRACE_PLACEMENT_RR);
    assert_int_equal(p.set, 0);
    trace_params_resolve(&p, 0);
    assert_int_equal(p.blocks_per_sm, 6); /* min(8, 1536 / 256) */
    char msg[200];
    assert_int_equal(trace_params_validate(&p, msg, sizeof msg), 0);
}

static void test_presets(void **state)
{
    (void)state;
    struct {
        const char *arch;
        uint32_t sms, mshr, lat_min, bps;
        double sigma;
        enum trace_coalesce c;
    } want[] = {
        {"fermi", 15, 32, 40, 6, 10.0, TRACE_COALESCE_LINE128},
        {"kepler", 15, 64, 60, 8, 15.0, TRACE_COALESCE_LINE128},
        {"volta", 80, 512, 100, 8, 25.0, TRACE_COALESCE_SECTOR32},
        {"ampere", 108, 512, 150, 8, 35.0, TRACE_COALESCE_SECTOR32},
        {"hopper", 132, 512, 200, 8, 50.0, TRACE_COALESCE_SECTOR32},
    };
    char msg[200];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct trace_params p;
        trace_params_default(&p);
        assert_int_equal(trace_params_set(&p, "arch", want[i].arch, msg, sizeof msg), 0);
        assert_string_equal(p.arch, want[i].arch);
        assert_string_equal(trace_arch_names[i], want[i].arch);
        assert_int_equal(p.sms, want[i].sms);
        assert_int_equal(p.mshr, want[i].mshr);
        assert_int_equal(p.lat_min, want[i].lat_min);
        assert_true(p.lat_sigma == want[i].sigma);
        assert_int_equal(p.coalesce, want[i].c);
        assert_int_equal(p.line_bytes, 128);
        trace_params_resolve(&p, 0);
        assert_int_equal(p.blocks_per_sm, want[i].bps);
        assert_int_equal(trace_params_validate(&p, msg, sizeof msg), 0);
    }
    assert_null(trace_arch_names[5]);
    struct trace_params p;
    trace_params_default(&p);
    assert_int_equal(trace_params_set(&p, "arch", "pascal", msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "arch"));
    assert_non_null(strstr(msg, "pascal"));
    assert_non_null(strstr(msg, "hopper"));
}

static void test_set_and_parse(void **state)
{
    (void)state;
    struct trace_params p;
    trace_params_default(&p);
    char msg[200];
    assert_int_equal(trace_params_parse(&p, "threads_per_block=48", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "blocks_per_sm=3", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "sms=2", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "line=64", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "mshr=7", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "lat_min=9", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "lat_sigma=2.5", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "seed=18446744073709551615", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "coalesce=sector32", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "schedule=gto", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "delay=fixed", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "placement=fill", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "threads_per_sm=1024", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "max_blocks_per_sm=4", msg, sizeof msg), 0);
    assert_int_equal(p.threads_per_block, 48);
    assert_int_equal(p.blocks_per_sm, 3);
    assert_int_equal(p.sms, 2);
    assert_int_equal(p.line_bytes, 64);
    assert_int_equal(p.mshr, 7);
    assert_int_equal(p.lat_min, 9);
    assert_true(p.lat_sigma == 2.5);
    assert_true(p.seed == UINT64_MAX);
    assert_int_equal(p.coalesce, TRACE_COALESCE_SECTOR32);
    assert_int_equal(p.schedule, TRACE_SCHEDULE_GTO);
    assert_int_equal(p.delay, TRACE_DELAY_FIXED);
    assert_int_equal(p.placement, TRACE_PLACEMENT_FILL);
    assert_int_equal(p.threads_per_sm, 1024);
    assert_int_equal(p.max_blocks_per_sm, 4);
    /* a preset after explicit settings keeps them */
    assert_int_equal(trace_params_parse(&p, "arch=hopper", msg, sizeof msg), 0);
    assert_int_equal(p.sms, 2);
    assert_int_equal(p.mshr, 7);
    assert_int_equal(p.coalesce, TRACE_COALESCE_SECTOR32);
    assert_true(p.lat_sigma == 2.5);
    assert_string_equal(p.arch, "hopper");
    /* and fills what was not set */
    trace_params_default(&p);
    assert_int_equal(trace_params_parse(&p, "coalesce=line128", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "arch=ampere", msg, sizeof msg), 0);
    assert_int_equal(p.coalesce, TRACE_COALESCE_LINE128);
    assert_int_equal(p.sms, 108);
}

static void refused(const char *assignment, const char *want_in_msg)
{
    struct trace_params p, before;
    trace_params_default(&p);
    before = p;
    char msg[200] = "";
    if (trace_params_parse(&p, assignment, msg, sizeof msg) != -1)
        fail_msg("'%s' was accepted", assignment);
    if (!strstr(msg, want_in_msg))
        fail_msg("'%s': message '%s' lacks '%s'", assignment, msg, want_in_msg);
    assert_memory_equal(&p, &before, sizeof p);
}

static void test_refusals(void **state)
{
    (void)state;
    refused("threads_per_block=0", "threads_per_block");
    refused("threads_per_block=1025", "from 1 to 1024");
    refused("threads_per_block=-1", "threads_per_block");
    refused("threads_per_block=12x", "'12x'");
    refused("threads_per_block=", "threads_per_block");
    refused("threads_per_block= 4", "threads_per_block");
    refused("sms=0", "sms");
    refused("sms=99999", "sms");
    refused("mshr=0", "mshr");
    refused("line=16", "line");
    refused("lat_min=0", "lat_min");
    refused("lat_sigma=-1", "lat_sigma");
    refused("lat_sigma=nan", "lat_sigma");
    refused("lat_sigma=inf", "lat_sigma");
    refused("seed=18446744073709551616", "seed");
    refused("seed=-3", "seed");
    refused("coalesce=line64", "line128, sector32");
    refused("schedule=lrr", "rr, gto");
    refused("delay=uniform", "normal, fixed");
    refused("placement=random", "rr, fill");
    refused("colour=blue", "unknown setting 'colour'");
    refused("noequals", "name=value");
    refused("=3", "name=value");
    refused("a_very_long_name_that_is_longer_than_anything_we_know=1", "unknown setting");
}

static void test_validate(void **state)
{
    (void)state;
    struct trace_params p;
    char msg[200];
    trace_params_default(&p);
    assert_int_equal(trace_params_validate(&p, msg, sizeof msg), -1); /* blocks_per_sm 0: not resolved */
    assert_non_null(strstr(msg, "blocks_per_sm"));
    trace_params_resolve(&p, 0);
    p.line_bytes = 96;
    assert_int_equal(trace_params_validate(&p, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "power of two"));
    p.line_bytes = 128;
    p.lat_sigma = -0.5;
    assert_int_equal(trace_params_validate(&p, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "lat_sigma"));
    p.lat_sigma = 1;
    p.schedule = (enum trace_schedule)7;
    assert_int_equal(trace_params_validate(&p, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "policy"));
}

static void test_resolve(void **state)
{
    (void)state;
    struct trace_params p;
    char msg[200];
    trace_params_default(&p);
    trace_params_resolve(&p, 96); /* from the input: not set explicitly */
    assert_int_equal(p.threads_per_block, 96);
    assert_int_equal(p.blocks_per_sm, 8); /* min(8, 1536 / 96 = 16) */
    trace_params_default(&p);
    assert_int_equal(trace_params_parse(&p, "threads_per_block=1024", msg, sizeof msg), 0);
    trace_params_resolve(&p, 96); /* explicit wins */
    assert_int_equal(p.threads_per_block, 1024);
    assert_int_equal(p.blocks_per_sm, 1); /* 1536 / 1024 = 1 */
    trace_params_default(&p);
    assert_int_equal(trace_params_parse(&p, "threads_per_sm=32", msg, sizeof msg), 0);
    trace_params_resolve(&p, 0);
    assert_int_equal(p.blocks_per_sm, 1); /* never 0 */
    trace_params_default(&p);
    assert_int_equal(trace_params_parse(&p, "blocks_per_sm=5", msg, sizeof msg), 0);
    trace_params_resolve(&p, 0);
    assert_int_equal(p.blocks_per_sm, 5); /* explicit, not derived */
    assert_int_equal(trace_params_warps_per_block(&p), 8);
    p.threads_per_block = 33;
    assert_int_equal(trace_params_warps_per_block(&p), 2);
}

static void test_json(void **state)
{
    (void)state;
    struct trace_params p, q;
    char msg[200];
    trace_params_default(&p);
    assert_int_equal(trace_params_parse(&p, "arch=volta", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "seed=18446744073709551615", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "lat_sigma=3.25", msg, sizeof msg), 0);
    assert_int_equal(trace_params_parse(&p, "schedule=gto", msg, sizeof msg), 0);
    json_t *j = trace_params_to_json(&p);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "arch")), "volta");
    assert_string_equal(json_string_value(json_object_get(j, "coalesce")), "sector32");
    assert_string_equal(json_string_value(json_object_get(j, "seed")), "18446744073709551615");
    assert_int_equal(json_integer_value(json_object_get(j, "sms")), 80);
    trace_params_default(&q);
    assert_int_equal(trace_params_from_json(&q, j, msg, sizeof msg), 0);
    assert_string_equal(q.arch, "volta");
    assert_int_equal(q.sms, p.sms);
    assert_int_equal(q.mshr, p.mshr);
    assert_int_equal(q.lat_min, p.lat_min);
    assert_true(q.lat_sigma == p.lat_sigma);
    assert_true(q.seed == p.seed);
    assert_int_equal(q.coalesce, p.coalesce);
    assert_int_equal(q.schedule, p.schedule);
    assert_int_equal(q.threads_per_block, p.threads_per_block);
    json_decref(j);

    json_t *bad = json_pack("{s:s}", "colour", "blue");
    assert_int_equal(trace_params_from_json(&q, bad, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "colour"));
    json_decref(bad);
    bad = json_pack("{s:s}", "sms", "12");
    assert_int_equal(trace_params_from_json(&q, bad, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "sms"));
    json_decref(bad);
    bad = json_pack("{s:i}", "coalesce", 1);
    assert_int_equal(trace_params_from_json(&q, bad, msg, sizeof msg), -1);
    json_decref(bad);
    bad = json_pack("{s:i, s:s}", "mshr", 3, "arch", "kepler"); /* arch first whatever the order */
    trace_params_default(&q);
    assert_int_equal(trace_params_from_json(&q, bad, msg, sizeof msg), 0);
    assert_int_equal(q.mshr, 3);
    assert_int_equal(q.sms, 15);
    json_decref(bad);
    assert_int_equal(trace_params_from_json(&q, NULL, msg, sizeof msg), -1);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(trace_coalesce_name(TRACE_COALESCE_LINE128), "line128");
    assert_string_equal(trace_coalesce_name(TRACE_COALESCE_SECTOR32), "sector32");
    assert_string_equal(trace_schedule_name(TRACE_SCHEDULE_GTO), "gto");
    assert_string_equal(trace_delay_name(TRACE_DELAY_FIXED), "fixed");
    assert_string_equal(trace_placement_name(TRACE_PLACEMENT_FILL), "fill");
    assert_string_equal(trace_schedule_name((enum trace_schedule)9), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),  cmocka_unit_test(test_presets), cmocka_unit_test(test_set_and_parse),
        cmocka_unit_test(test_refusals),  cmocka_unit_test(test_validate), cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_json),      cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
