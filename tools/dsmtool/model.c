/*
 * model.c - machine model files: parse "key = value" lines (# comments),
 * reject unknown keys and bad numbers with the file and line.
 * Single-threaded.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "tracefile.h"

void model_defaults(struct model *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "default");
    m->cpu_factor = 1.0;
    m->net_factor = 1.0;
    m->link = LINK_NONE;
    m->compute = COMPUTE_WALL;
    /* libdsm's own (DSM_SPIN_US's default, comm.c, dsm_internal.h) */
    m->nap_spin_us = 50;
    m->nap_window_us = 500;
    m->nap_first_us = 20;
    m->nap_max_us = 200;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

static int set(struct model *m, const char *k, const char *v, char *err, size_t errlen)
{
    static const struct { const char *key; size_t off; } num[] = {
        { "send_us", offsetof(struct model, send_us) },
        { "recv_us", offsetof(struct model, recv_us) },
        { "latency_us", offsetof(struct model, latency_us) },
        { "byte_ns", offsetof(struct model, byte_ns) },
        { "self_us", offsetof(struct model, self_us) },
        { "service_us", offsetof(struct model, service_us) },
        { "wake_us", offsetof(struct model, wake_us) },
        { "poll_us", offsetof(struct model, poll_us) },
        { "busy_service_us", offsetof(struct model, busy_service_us) },
        { "xfer_first_us", offsetof(struct model, xfer_first_us) },
        { "fault_us", offsetof(struct model, fault_us) },
        { "cpu_factor", offsetof(struct model, cpu_factor) },
        { "net_factor", offsetof(struct model, net_factor) },
        { "bg_threads", offsetof(struct model, bg_threads) },
        { "nap_spin_us", offsetof(struct model, nap_spin_us) },
        { "nap_window_us", offsetof(struct model, nap_window_us) },
        { "nap_first_us", offsetof(struct model, nap_first_us) },
        { "nap_max_us", offsetof(struct model, nap_max_us) },
        { "nap_late_us", offsetof(struct model, nap_late_us) },
    };
    if (!strcmp(k, "name")) {
        snprintf(m->name, sizeof m->name, "%s", v);
        return 0;
    }
    if (!strcmp(k, "link")) {
        if (!strcmp(v, "none")) m->link = LINK_NONE;
        else if (!strcmp(v, "shared")) m->link = LINK_SHARED;
        else if (!strcmp(v, "nic")) m->link = LINK_NIC;
        else return fail(err, errlen, "link = %s: choose none, shared or nic", v);
        return 0;
    }
    if (!strcmp(k, "service_at")) {
        if (!strcmp(v, "comm")) m->service_any = 0;
        else if (!strcmp(v, "any")) m->service_any = 1;
        else return fail(err, errlen, "service_at = %s: choose comm or any", v);
        return 0;
    }
    if (!strcmp(k, "comm_naps")) {
        if (!strcmp(v, "off")) m->comm_naps = 0;
        else if (!strcmp(v, "on")) m->comm_naps = 1;
        else return fail(err, errlen, "comm_naps = %s: choose on or off", v);
        return 0;
    }
    if (!strcmp(k, "costs")) {
        if (!strcmp(v, "model")) m->costs_from_trace = 0;
        else if (!strcmp(v, "trace")) m->costs_from_trace = 1;
        else return fail(err, errlen, "costs = %s: choose model or trace", v);
        return 0;
    }
    if (!strcmp(k, "contention")) {
        if (!strcmp(v, "none")) m->contention_from_trace = 0;
        else if (!strcmp(v, "trace")) m->contention_from_trace = 1;
        else return fail(err, errlen, "contention = %s: choose none or trace", v);
        return 0;
    }
    if (!strcmp(k, "bg_threads") && !strcmp(v, "trace")) {
        m->bg_from_trace = 1;
        return 0;
    }
    if (!strncmp(k, "xfer_us.", 8) || !strncmp(k, "xfer_wait_us.", 13)) {
        int w = k[5] == 'w';
        int ty = model_msg_type(k + (w ? 13 : 8));
        char *end;
        double x = strtod(v, &end);
        if (ty < 0)
            return fail(err, errlen, "%s: unknown message type (PAGE_REQ, PAGE_REPLY, DIFF, "
                        "DIFF_ACK, BARRIER_ENTER, ..., ATOMIC_REPLY)", k);
        if (end == v || *end || !(x >= 0))
            return fail(err, errlen, "%s = %s: give microseconds >= 0", k, v);
        m->xfer_us[w][ty] = x;
        return 0;
    }
    if (!strcmp(k, "compute")) {
        if (!strcmp(v, "wall")) m->compute = COMPUTE_WALL;
        else if (!strcmp(v, "cpu")) m->compute = COMPUTE_CPU;
        else return fail(err, errlen, "compute = %s: choose wall or cpu", v);
        return 0;
    }
    if (!strcmp(k, "cores") || !strcmp(k, "ranks_per_host")) {
        char *end;
        errno = 0;
        long n = strtol(v, &end, 10);
        if (errno || *end || n < 0 || n > 100000)
            return fail(err, errlen, "%s = %s: give a whole number >= 0", k, v);
        *(k[0] == 'c' ? &m->cores : &m->ranks_per_host) = (int)n;
        return 0;
    }
    if (!strcmp(k, "bandwidth_mbs")) {      /* convenience: MB/s -> byte_ns */
        char *end;
        double bw = strtod(v, &end);
        if (*end || !(bw > 0))
            return fail(err, errlen, "bandwidth_mbs = %s: give MB/s > 0", v);
        m->byte_ns = 1e3 / bw;
        return 0;
    }
    for (size_t i = 0; i < sizeof num / sizeof num[0]; i++) {
        if (strcmp(k, num[i].key))
            continue;
        char *end;
        errno = 0;
        double x = strtod(v, &end);
        if (errno || end == v || *end || x < 0)
            return fail(err, errlen, "%s = %s: give a number >= 0", k, v);
        if ((!strcmp(k, "cpu_factor") || !strcmp(k, "net_factor")) && x <= 0)
            return fail(err, errlen, "%s = %s: give a factor > 0", k, v);
        if ((!strcmp(k, "nap_first_us") || !strcmp(k, "nap_max_us")) && x <= 0)
            return fail(err, errlen, "%s = %s: give microseconds > 0 (a nap of 0 never "
                        "ends)", k, v);
        *(double *)((char *)m + num[i].off) = x;
        if (!strcmp(k, "bg_threads"))
            m->bg_from_trace = 0;
        return 0;
    }
    return fail(err, errlen, "unknown key '%s' (known: name, send_us, recv_us, latency_us, "
                "byte_ns, bandwidth_mbs, self_us, service_us, wake_us, poll_us, busy_service_us, "
                "xfer_first_us, "
                "fault_us, cpu_factor, "
                "net_factor, link, compute, cores, ranks_per_host, service_at, bg_threads, costs, contention, "
                "comm_naps, nap_spin_us, nap_window_us, nap_first_us, nap_max_us, nap_late_us, "
                "xfer_us.TYPE, xfer_wait_us.TYPE)", k);
}

int model_set(struct model *m, const char *kv, char *err, size_t errlen)
{
    char buf[512], *eq;
    snprintf(buf, sizeof buf, "%s", kv);
    eq = strchr(buf, '=');
    if (!eq)
        return fail(err, errlen, "'%s': give key=value", kv);
    *eq = '\0';
    return set(m, trim(buf), trim(eq + 1), err, errlen);
}

int model_load(struct model *m, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char line[512], msg[400];
    int ln = 0;
    if (!f)
        return fail(err, errlen, "cannot open model file %s (%s)", path, strerror(errno));
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *h = strchr(line, '#');
        if (h)
            *h = '\0';
        char *s = trim(line);
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            fclose(f);
            return fail(err, errlen, "%s:%d: expected key = value", path, ln);
        }
        *eq = '\0';
        if (set(m, trim(s), trim(eq + 1), msg, sizeof msg)) {
            fclose(f);
            return fail(err, errlen, "%s:%d: %s", path, ln, msg);
        }
    }
    fclose(f);
    return 0;
}

void model_print(const struct model *m, FILE *out)
{
    fprintf(out, "name = %s\nsend_us = %.3f\nrecv_us = %.3f\nlatency_us = %.3f\n"
            "byte_ns = %.5f\nself_us = %.3f\nservice_us = %.3f\nwake_us = %.3f\n"
            "fault_us = %.3f\ncpu_factor = %.4f\nnet_factor = %.4f\nlink = %s\n"
            "compute = %s\ncores = %d\nranks_per_host = %d\nservice_at = %s\n",
            m->name, m->send_us, m->recv_us, m->latency_us, m->byte_ns, m->self_us,
            m->service_us, m->wake_us, m->fault_us, m->cpu_factor, m->net_factor,
            m->link == LINK_SHARED ? "shared" : m->link == LINK_NIC ? "nic" : "none",
            m->compute == COMPUTE_CPU ? "cpu" : "wall", m->cores, m->ranks_per_host,
            m->service_any ? "any" : "comm");
    if (m->poll_us > 0)
        fprintf(out, "poll_us = %.3f\n", m->poll_us);
    if (m->busy_service_us > 0)
        fprintf(out, "busy_service_us = %.3f\n", m->busy_service_us);
    if (m->xfer_first_us > 0)
        fprintf(out, "xfer_first_us = %.3f\n", m->xfer_first_us);
    if (m->comm_naps)
        fprintf(out, "comm_naps = on\nnap_spin_us = %.3f\nnap_window_us = %.3f\n"
                "nap_first_us = %.3f\nnap_max_us = %.3f\nnap_late_us = %.3f\n",
                m->nap_spin_us, m->nap_window_us, m->nap_first_us, m->nap_max_us,
                m->nap_late_us);
    if (m->bg_from_trace)
        fprintf(out, "bg_threads = trace\n");
    else if (m->bg_threads > 0)
        fprintf(out, "bg_threads = %.3f\n", m->bg_threads);
    if (m->costs_from_trace)
        fprintf(out, "costs = trace\n");
    if (m->contention_from_trace)
        fprintf(out, "contention = trace\n");
    for (int w = 0; w < 2; w++)
        for (int ty = 1; ty < MODEL_NTYPES; ty++)
            if (m->xfer_us[w][ty] > 0)
                fprintf(out, "%s%s = %.3f\n", w ? "xfer_wait_us." : "xfer_us.",
                        tr_msg_name(ty), m->xfer_us[w][ty]);
}

int model_msg_type(const char *name)
{
    for (int ty = 1; ty < MODEL_NTYPES; ty++)
        if (!strcmp(name, tr_msg_name(ty)))
            return ty;
    return -1;
}
