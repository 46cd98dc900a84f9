/*
 * Unit tests of the subcommands' shared helpers (server/cli/cli.c):
 * cli_parse stores text, flag and list options where the table says (the
 * last text given wins, a letter answers like the long name, a long name
 * may be shortened as getopt allows), prints the usage on stdout for --help
 * and -h (status 0), and refuses with one line on stderr and status 2 an
 * unknown option, a missing value, a list given more than CLI_LIST_MAX
 * times and an operand beyond the one the command takes; each call starts
 * afresh after another. cli_set_int adds an integer option to a JSON object
 * and refuses text that is no integer. cli_trace_out_format tells a trace
 * output's format from its name as trace sort, convert and synth do. A table too long, or an entry with
 * two places for its value, fails an assert.
 * stdout and stderr are captured in temporary files around each call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server/cli/cli.h"
#include "tests/unit/support/death.h"

/* A NULL-terminated list of words. */
#define W(...) ((char *[]){__VA_ARGS__, NULL})

static const char usage[] = "usage: gpuprobe test [--name X] [--on] [--item V]...\n";

/* What one call of cli_parse left: its options, return value and output. */
struct parsed {
    const char *name, *operand;
    int on, rc, status;
    struct cli_list items;
    char out[256], err[256];
};

/* Redirects fd into a temporary file until released by release(). */
struct capture {
    int fd, saved;
    FILE *f;
};

static void capture(struct capture *c, int fd)
{
    fflush(NULL);
    c->fd = fd;
    c->f = tmpfile();
    assert_non_null(c->f);
    c->saved = dup(fd);
    dup2(fileno(c->f), fd);
}

static void release(struct capture *c, char *buf, size_t len)
{
    fflush(NULL);
    dup2(c->saved, c->fd);
    close(c->saved);
    rewind(c->f);
    size_t n = fread(buf, 1, len - 1, c->f);
    buf[n] = '\0';
    fclose(c->f);
}

/* Parses the NULL-terminated words after "test" with the test table;
 * with_operand gives the command its one operand. */
static void parse(struct parsed *p, int with_operand, char **words)
{
    char *argv[64] = {"test"};
    int argc = 1;
    while (words[argc - 1] && argc < 63) {
        argv[argc] = words[argc - 1];
        argc++;
    }
    memset(p, 0, sizeof *p);
    const struct cli_option opts[] = {
        {"name", 'n', .text = &p->name}, {"on", .flag = &p->on},
        {"item", .list = &p->items}, {"only", .flag = &p->on}, {0}};
    struct capture out, err;
    capture(&out, STDOUT_FILENO);
    capture(&err, STDERR_FILENO);
    p->status = -99;
    p->rc = cli_parse("test", usage, opts, with_operand ? &p->operand : NULL, argc, argv,
                      &p->status);
    release(&err, p->err, sizeof p->err);
    release(&out, p->out, sizeof p->out);
}

/* Asserts that the call was refused (status 2, nothing on stdout) with msg
 * on stderr, or with some message when msg is NULL. */
static void assert_refused(const struct parsed *p, const char *msg)
{
    assert_int_equal(p->rc, -1);
    assert_int_equal(p->status, 2);
    assert_string_equal(p->out, "");
    if (msg)
        assert_string_equal(p->err, msg);
    else
        assert_true(strncmp(p->err, "gpuprobe test: ", 15) == 0);
}

/* ---- parsing ------------------------------------------------------------------- */

static void test_values_go_where_the_table_says(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, 0, W("--name", "a", "--on", "--item", "x", "--name=b", "--item", "y"));
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.status, 0);
    assert_string_equal(p.name, "b");
    assert_int_equal(p.on, 1);
    assert_int_equal(p.items.n, 2);
    assert_string_equal(p.items.item[0], "x");
    assert_string_equal(p.items.item[1], "y");
    assert_string_equal(p.out, "");
    assert_string_equal(p.err, "");
    parse(&p, 0, W("-n", "c"));
    assert_int_equal(p.rc, 0);
    assert_string_equal(p.name, "c");
    assert_int_equal(p.on, 0);
    parse(&p, 0, W("--nam", "d"));
    assert_int_equal(p.rc, 0);
    assert_string_equal(p.name, "d");
}

static void test_help(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, 0, W("--on", "--help", "--bogus"));
    assert_int_equal(p.rc, -1);
    assert_int_equal(p.status, 0);
    assert_string_equal(p.out, usage);
    assert_string_equal(p.err, "");
    parse(&p, 0, W("-h"));
    assert_int_equal(p.rc, -1);
    assert_int_equal(p.status, 0);
    assert_string_equal(p.out, usage);
}

static void test_refusals(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, 0, W("--bogus"));
    assert_refused(&p, "gpuprobe test: unknown option or missing value near '--bogus' "
                       "(see gpuprobe test --help)\n");
    parse(&p, 0, W("--on", "--name"));
    assert_refused(&p, "gpuprobe test: unknown option or missing value near '--name' "
                       "(see gpuprobe test --help)\n");
    parse(&p, 0, W("--o")); /* --on or --only */
    assert_refused(&p, NULL);
    parse(&p, 0, W("-x"));
    assert_refused(&p, NULL);
    parse(&p, 0, W("--on", "stray"));
    assert_refused(&p, "gpuprobe test: unexpected argument 'stray'\n");
}

static void test_list_bound(void **state)
{
    (void)state;
    struct parsed p;
    char *w[2 * CLI_LIST_MAX + 4];
    int n = 0;
    for (int i = 0; i < CLI_LIST_MAX; i++) {
        w[n++] = "--item";
        w[n++] = "v";
    }
    w[n] = NULL;
    parse(&p, 0, w);
    assert_int_equal(p.rc, 0);
    assert_int_equal(p.items.n, CLI_LIST_MAX);
    /* one too many is refused at once, before the unknown option after it */
    w[n++] = "--item";
    w[n++] = "v";
    w[n++] = "--bogus";
    w[n] = NULL;
    parse(&p, 0, w);
    assert_refused(&p, "gpuprobe test: at most 16 --item\n");
}

static void test_operand(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, 1, W("--on"));
    assert_int_equal(p.rc, 0);
    assert_null(p.operand);
    parse(&p, 1, W("first", "--on"));
    assert_int_equal(p.rc, 0);
    assert_string_equal(p.operand, "first");
    assert_int_equal(p.on, 1);
    parse(&p, 1, W("first", "second"));
    assert_refused(&p, "gpuprobe test: unexpected argument 'second'\n");
}

/* ---- integers ------------------------------------------------------------------ */

static void test_set_int(void **state)
{
    (void)state;
    json_t *o = json_object();
    struct capture err;
    char msg[256];
    assert_int_equal(cli_set_int("test", o, "a_b", "a-b", NULL), 0);
    assert_int_equal(json_object_size(o), 0);
    assert_int_equal(cli_set_int("test", o, "a_b", "a-b", "-12"), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "a_b")), -12);
    capture(&err, STDERR_FILENO);
    int rc = cli_set_int("test", o, "c", "c", "1x");
    release(&err, msg, sizeof msg);
    assert_int_equal(rc, 2);
    assert_string_equal(msg, "gpuprobe test: --c must be an integer, not '1x'\n");
    assert_null(json_object_get(o, "c"));
    json_decref(o);
}

/* ---- contracts ----------------------------------------------------------------- */

static void parse_table(const struct cli_option *opts)
{
    char *argv[] = {"test", NULL};
    int status;
    cli_parse("test", usage, opts, NULL, 1, argv, &status);
}

static void too_many_options(void *arg)
{
    static int flag;
    struct cli_option opts[CLI_MAX_OPTIONS + 2];
    (void)arg;
    for (int i = 0; i <= CLI_MAX_OPTIONS; i++)
        opts[i] = (struct cli_option){"x", .flag = &flag};
    opts[CLI_MAX_OPTIONS + 1] = (struct cli_option){0};
    parse_table(opts);
}

static void two_places(void *arg)
{
    static int flag;
    static const char *text;
    const struct cli_option opts[] = {{"x", .flag = &flag, .text = &text}, {0}};
    (void)arg;
    parse_table(opts);
}

static void test_contracts(void **state)
{
    (void)state;
    assert_true(dies_by_assert(too_many_options, NULL));
    assert_true(dies_by_assert(two_places, NULL));
}

/* The output format an OUT's name gives when --out-format is not given
 * (every trace command that writes a trace: sort, convert, synth). */
static void test_trace_out_format(void **state)
{
    (void)state;
    assert_int_equal(cli_trace_out_format("t.bin", TRACE_OUT_CSV), TRACE_OUT_BIN);
    assert_int_equal(cli_trace_out_format("dir/t.csv", TRACE_OUT_BIN), TRACE_OUT_CSV);
    assert_int_equal(cli_trace_out_format("t.csv", TRACE_OUT_CSV), TRACE_OUT_CSV);
    assert_int_equal(cli_trace_out_format("t.bin", TRACE_OUT_BIN), TRACE_OUT_BIN);
    /* any other name, and standard output: the command's default */
    assert_int_equal(cli_trace_out_format("t.trace", TRACE_OUT_BIN), TRACE_OUT_BIN);
    assert_int_equal(cli_trace_out_format("t.trace", TRACE_OUT_CSV), TRACE_OUT_CSV);
    assert_int_equal(cli_trace_out_format("-", TRACE_OUT_BIN), TRACE_OUT_BIN);
    assert_int_equal(cli_trace_out_format(".bin", TRACE_OUT_CSV), TRACE_OUT_CSV);
    assert_int_equal(cli_trace_out_format("t.BIN", TRACE_OUT_CSV), TRACE_OUT_CSV);
    assert_int_equal(cli_trace_out_format("t.csv.part", TRACE_OUT_BIN), TRACE_OUT_BIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_go_where_the_table_says),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_list_bound),
        cmocka_unit_test(test_operand),
        cmocka_unit_test(test_set_int),
        cmocka_unit_test(test_contracts),
        cmocka_unit_test(test_trace_out_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
