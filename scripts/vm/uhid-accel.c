// SPDX-License-Identifier: Apache-2.0
/*
 * uhid-accel: a HID sensor hub accelerometer made from userspace through /dev/uhid, playing a trace.
 *
 * The kernel's hid-sensor-hub binds it (a Physical collection on the Sensor usage page), and
 * hid-sensor-accel-3d makes an IIO device of it with a trigger, a kfifo buffer and timestamps. The feeder answers
 * the feature-report GET/SET requests the drivers make (reporting state, power state, report interval,
 * sensitivity) and sends one input report per trace row, at the trace's own times, while the drivers ask for
 * reports (power D0 and reporting "all events"). Values are sent in milli-g (unit exponent -3), so the kernel's
 * scale is 0.00980665 m/s² per count.
 *
 * usage: uhid-accel [options] TRACE.csv
 *   --vanish-at S     destroy the device S seconds into the trace; with --return-after, create it again
 *   --return-after S  seconds to stay away before coming back (then the trace plays again from the start)
 *   --hold S          after the trace, keep sending its last row for S seconds (default 2)
 *   --repeat P        send a row twice with probability P (irregular sampling)
 *   --skip P          drop a row with probability P
 *   --jitter MS       send each row up to MS milliseconds late (uniform)
 *   --seed N          randomness for the three above
 *   --wait-stream S   give up when nobody starts streaming within S seconds (default 60)
 *   --pause-idle      hold the trace while the drivers do not ask for reports, and after a stall of more than
 *                     0.1 s (the guest suspended, the feeder frozen) go on from the row due instead of sending the
 *                     rows missed in a burst: the trace is delivered whole, with a gap (prints "resumed MONO GAP")
 *   --sent FILE       write a line per input report sent: "MONO ROW" (CLOCK_MONOTONIC seconds around the write,
 *                     the trace row it carried): the trace as the kernel received it
 *   --again           after the trace, play it once more (from the start, then --hold) at each SIGUSR1, as the
 *                     same device: shakes on demand from a sensor that stays
 *   --start-after F   once streaming, keep sending the first row (at the trace's interval) until the file F
 *                     exists, then play the trace: it begins when the test is ready for it, however slow the
 *                     guest was to get there
 *   --hold-at S F     at S seconds into the trace, keep sending the row before (at the trace's interval) until
 *                     the file F exists, then play on, the rest of the trace as late as the hold was long: a part
 *                     of the trace waits for the test (prints "held MONO SECONDS", when it went on and how long)
 * It prints, on standard output, "uhid-accel: start MONO" (CLOCK_MONOTONIC seconds at which the first row was
 * sent; trace time 0 is the first row's time) and a summary at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/uhid.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPORT_ID 1

/* Sensor usage page; Accelerometer 3D in a Physical collection; one feature report, one input report. */
static const uint8_t descriptor[] = {
    0x05, 0x20,                   /* Usage Page (Sensor) */
    0x09, 0x73,                   /* Usage (Accelerometer 3D) */
    0xA1, 0x00,                   /* Collection (Physical) */
    0x85, REPORT_ID,              /*   Report ID */
    /* Feature: reporting state, an array of six selectors (0x0840-0x0845) */
    0x0A, 0x16, 0x03,             /*   Usage (Reporting State) */
    0x15, 0x01, 0x25, 0x06,       /*   Logical Min 1, Max 6 */
    0x75, 0x08, 0x95, 0x01,       /*   Report Size 8, Count 1 */
    0xA1, 0x02,                   /*   Collection (Logical) */
    0x0A, 0x40, 0x08, 0x0A, 0x41, 0x08, 0x0A, 0x42, 0x08,
    0x0A, 0x43, 0x08, 0x0A, 0x44, 0x08, 0x0A, 0x45, 0x08,
    0xB1, 0x00,                   /*     Feature (Data, Array, Abs) */
    0xC0,                         /*   End Collection */
    /* Feature: power state, an array of six selectors (0x0850-0x0855) */
    0x0A, 0x19, 0x03,             /*   Usage (Power State) */
    0x15, 0x01, 0x25, 0x06,
    0x75, 0x08, 0x95, 0x01,
    0xA1, 0x02,
    0x0A, 0x50, 0x08, 0x0A, 0x51, 0x08, 0x0A, 0x52, 0x08,
    0x0A, 0x53, 0x08, 0x0A, 0x54, 0x08, 0x0A, 0x55, 0x08,
    0xB1, 0x00,
    0xC0,
    /* Feature: report interval, milliseconds */
    0x0A, 0x0E, 0x03,             /*   Usage (Report Interval) */
    0x15, 0x00, 0x27, 0xFF, 0xFF, 0xFF, 0x7F, /* Logical Min 0, Max 0x7fffffff */
    0x75, 0x20, 0x95, 0x01,
    0xB1, 0x02,                   /*   Feature (Data, Var, Abs) */
    /* Feature: change sensitivity (absolute) of the acceleration */
    0x0A, 0x52, 0x14,             /*   Usage (0x1452) */
    0x15, 0x00, 0x27, 0xFF, 0xFF, 0x00, 0x00,
    0x75, 0x10, 0x95, 0x01,
    0x55, 0x0D,                   /*   Unit Exponent -3 */
    0xB1, 0x02,
    /* Input: acceleration x, y, z, each its own 32-bit field, milli-g */
    0x55, 0x0D,                   /*   Unit Exponent -3 */
    0x17, 0x01, 0x00, 0x00, 0x80, /*   Logical Min -0x7fffffff */
    0x27, 0xFF, 0xFF, 0xFF, 0x7F, /*   Logical Max 0x7fffffff */
    0x75, 0x20, 0x95, 0x01,
    0x0A, 0x53, 0x04, 0x81, 0x02, /*   Usage (Acceleration X), Input (Data, Var, Abs) */
    0x0A, 0x54, 0x04, 0x81, 0x02, /*   Usage (Acceleration Y) */
    0x0A, 0x55, 0x04, 0x81, 0x02, /*   Usage (Acceleration Z) */
    0xC0,                         /* End Collection */
};

/* Feature report: id, reporting state, power state, interval (le32), sensitivity (le16). */
static uint8_t feature[9] = {REPORT_ID, 1, 6, 10, 0, 0, 0, 0, 0};

struct row { double t, x, y, z; };
static struct row *rows;
static size_t nrows;
static int32_t current[3];
static int fd = -1;
static int streaming;
static FILE *sent_log;
static size_t current_row;
static volatile sig_atomic_t again_requested;

static void on_again(int signo) { (void)signo; again_requested = 1; }

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
    fprintf(stderr, "uhid-accel: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void send_event(struct uhid_event *ev) {
    if (write(fd, ev, sizeof(*ev)) != sizeof(*ev)) die("write /dev/uhid");
}

static int32_t milli_g(double v) {
    double g = v / 9.80665 * 1000.0;
    if (!isfinite(g)) return 0;
    if (g > 2e9) g = 2e9;
    if (g < -2e9) g = -2e9;
    return (int32_t)lround(g);
}

static void input_bytes(uint8_t *out) {
    out[0] = REPORT_ID;
    for (int i = 0; i < 3; i++) {
        uint32_t v = (uint32_t)current[i];
        out[1 + 4 * i] = v & 0xff;
        out[2 + 4 * i] = (v >> 8) & 0xff;
        out[3 + 4 * i] = (v >> 16) & 0xff;
        out[4 + 4 * i] = (v >> 24) & 0xff;
    }
}

static void send_input(void) {
    struct uhid_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = UHID_INPUT2;
    ev.u.input2.size = 13;
    input_bytes(ev.u.input2.data);
    double before = now();
    send_event(&ev);
    if (sent_log) fprintf(sent_log, "%.6f %zu\n", (before + now()) / 2, current_row);
}

static void create_device(void) {
    struct uhid_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = UHID_CREATE2;
    snprintf((char *)ev.u.create2.name, sizeof(ev.u.create2.name), "shaked test sensor hub");
    memcpy(ev.u.create2.rd_data, descriptor, sizeof(descriptor));
    ev.u.create2.rd_size = sizeof(descriptor);
    ev.u.create2.bus = 0x03; /* BUS_USB */
    ev.u.create2.vendor = 0x1d6b;
    ev.u.create2.product = 0x5a4b;
    send_event(&ev);
    feature[1] = 1;
    feature[2] = 6;
}

static void destroy_device(void) {
    struct uhid_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = UHID_DESTROY;
    send_event(&ev);
    streaming = 0;
}

/* Serves the kernel's requests until `deadline` (CLOCK_MONOTONIC). */
static void serve_until(double deadline) {
    for (;;) {
        double left = deadline - now();
        if (left <= 0) return;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ms = (int)ceil(left * 1000);
        int n = poll(&pfd, 1, ms > 1 ? ms - 1 : 0);
        if (n < 0 && errno != EINTR) die("poll");
        if (n <= 0) {
            if (ms <= 1) { while (now() < deadline) { } return; }
            continue;
        }
        struct uhid_event ev;
        ssize_t got = read(fd, &ev, sizeof(ev));
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            die("read /dev/uhid");
        }
        struct uhid_event reply;
        memset(&reply, 0, sizeof(reply));
        switch (ev.type) {
        case UHID_GET_REPORT:
            reply.type = UHID_GET_REPORT_REPLY;
            reply.u.get_report_reply.id = ev.u.get_report.id;
            if (ev.u.get_report.rtype == UHID_FEATURE_REPORT) {
                memcpy(reply.u.get_report_reply.data, feature, sizeof(feature));
                reply.u.get_report_reply.size = sizeof(feature);
            } else if (ev.u.get_report.rtype == UHID_INPUT_REPORT) {
                input_bytes(reply.u.get_report_reply.data);
                reply.u.get_report_reply.size = 13;
            } else {
                reply.u.get_report_reply.err = EIO;
            }
            send_event(&reply);
            break;
        case UHID_SET_REPORT:
            reply.type = UHID_SET_REPORT_REPLY;
            reply.u.set_report_reply.id = ev.u.set_report.id;
            if (ev.u.set_report.rtype == UHID_FEATURE_REPORT && ev.u.set_report.size >= 2 &&
                ev.u.set_report.data[0] == REPORT_ID) {
                size_t n2 = ev.u.set_report.size < sizeof(feature) ? ev.u.set_report.size : sizeof(feature);
                memcpy(feature, ev.u.set_report.data, n2);
            } else {
                reply.u.set_report_reply.err = EIO;
            }
            send_event(&reply);
            break;
        default:
            break;
        }
        streaming = feature[1] == 2 && feature[2] == 2;
    }
}

static void load(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) die(path);
    char line[512];
    size_t cap = 0;
    while (fgets(line, sizeof(line), f)) {
        struct row r;
        if (line[0] == '#' || sscanf(line, "%lf,%lf,%lf,%lf", &r.t, &r.x, &r.y, &r.z) != 4) continue;
        if (nrows == cap) {
            cap = cap ? cap * 2 : 1024;
            rows = realloc(rows, cap * sizeof(*rows));
            if (!rows) die("realloc");
        }
        rows[nrows++] = r;
    }
    fclose(f);
    if (nrows == 0) { fprintf(stderr, "uhid-accel: %s: no rows\n", path); exit(1); }
}

static double uniform(void) { return (double)random() / ((double)RAND_MAX + 1.0); }

static void set_row(size_t i) {
    current_row = i;
    current[0] = milli_g(rows[i].x);
    current[1] = milli_g(rows[i].y);
    current[2] = milli_g(rows[i].z);
}

/* Waits for the drivers to ask for reports, serving requests meanwhile. */
static void wait_stream(double limit) {
    double give_up = now() + limit;
    while (!streaming) {
        if (now() > give_up) { fprintf(stderr, "uhid-accel: nobody started streaming\n"); exit(2); }
        serve_until(now() + 0.01);
    }
}

int main(int argc, char **argv) {
    double vanish_at = -1, return_after = -1, hold = 2, repeat_p = 0, skip_p = 0, jitter_ms = 0, wait_limit = 60;
    int pause_idle = 0;
    long seed = 1;
    int again = 0;
    const char *trace = NULL, *sent_path = NULL, *start_after = NULL, *hold_file = NULL;
    double hold_at = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        double *target = NULL;
        if (!strcmp(a, "--vanish-at")) target = &vanish_at;
        else if (!strcmp(a, "--return-after")) target = &return_after;
        else if (!strcmp(a, "--hold")) target = &hold;
        else if (!strcmp(a, "--repeat")) target = &repeat_p;
        else if (!strcmp(a, "--skip")) target = &skip_p;
        else if (!strcmp(a, "--jitter")) target = &jitter_ms;
        else if (!strcmp(a, "--wait-stream")) target = &wait_limit;
        else if (!strcmp(a, "--seed") && i + 1 < argc) { seed = atol(argv[++i]); continue; }
        else if (!strcmp(a, "--pause-idle")) { pause_idle = 1; continue; }
        else if (!strcmp(a, "--sent") && i + 1 < argc) { sent_path = argv[++i]; continue; }
        else if (!strcmp(a, "--again")) { again = 1; continue; }
        else if (!strcmp(a, "--start-after") && i + 1 < argc) { start_after = argv[++i]; continue; }
        else if (!strcmp(a, "--hold-at") && i + 2 < argc) { hold_at = atof(argv[++i]); hold_file = argv[++i]; continue; }
        else if (a[0] != '-' && !trace) { trace = a; continue; }
        else { fprintf(stderr, "uhid-accel: bad argument %s\n", a); return 64; }
        if (i + 1 >= argc) { fprintf(stderr, "uhid-accel: %s needs a value\n", a); return 64; }
        *target = atof(argv[++i]);
    }
    if (!trace) { fprintf(stderr, "usage: uhid-accel [options] TRACE.csv\n"); return 64; }
    srandom((unsigned)seed);
    load(trace);
    if (again) {
        struct sigaction action = {.sa_handler = on_again};
        sigemptyset(&action.sa_mask);
        if (sigaction(SIGUSR1, &action, NULL) < 0) die("sigaction");
    }
    if (sent_path && !(sent_log = fopen(sent_path, "w"))) die(sent_path);
    fd = open("/dev/uhid", O_RDWR | O_CLOEXEC);
    if (fd < 0) die("/dev/uhid");
    set_row(0);
    create_device();
    printf("uhid-accel: created\n");
    fflush(stdout);

    int plays = vanish_at >= 0 && return_after >= 0 ? 2 : 1;
    unsigned long sent = 0, repeated = 0, skipped = 0, late = 0;
    for (int play = 0; play < plays; play++) {
        if (play > 0 && again) {
            /* Once done, wait (serving the drivers) until asked to play again. */
            while (!again_requested) serve_until(now() + 0.1);
            again_requested = 0;
        }
        wait_stream(wait_limit);
        if (play == 0 && start_after) {
            double step = nrows > 1 ? (rows[nrows - 1].t - rows[0].t) / (nrows - 1) : 0.01;
            for (double due = now(); access(start_after, F_OK) != 0; due += step) {
                serve_until(due);
                if (streaming) send_input();
            }
        }
        double start = now() + 0.05;
        printf("uhid-accel: start %.6f\n", start);
        fflush(stdout);
        int vanished = 0;
        for (size_t i = 0; i < nrows; i++) {
            double offset = rows[i].t - rows[0].t;
            if (play == 0 && vanish_at >= 0 && offset >= vanish_at) {
                destroy_device();
                printf("uhid-accel: vanished %.6f\n", now());
                fflush(stdout);
                vanished = 1;
                break;
            }
            if (play == 0 && hold_file && offset >= hold_at) {
                /* Hold the row before until the test is ready; the rest of the trace comes that much later. */
                double step = nrows > 1 ? (rows[nrows - 1].t - rows[0].t) / (nrows - 1) : 0.01;
                double held = now(), due = start + offset;
                for (; access(hold_file, F_OK) != 0; due += step) {
                    serve_until(due);
                    if (streaming) { send_input(); sent++; }
                }
                start += now() - (start + offset);
                printf("uhid-accel: held %.6f %.6f\n", now(), now() - held);
                fflush(stdout);
                hold_file = NULL;
            }
            double due = start + offset + (jitter_ms > 0 ? uniform() * jitter_ms / 1000 : 0);
            serve_until(due);
            if (pause_idle && (!streaming || now() - due > 0.1)) {
                double stalled = now();
                while (!streaming) serve_until(now() + 0.01);
                double gap = now() - due;
                start += gap;
                due += gap;
                printf("uhid-accel: resumed %.6f %.6f (idle from %.6f)\n", now(), gap, stalled);
                fflush(stdout);
            }
            if (now() - due > 0.005) late++;
            if (skip_p > 0 && uniform() < skip_p) { skipped++; continue; }
            set_row(i);
            if (streaming) { send_input(); sent++; }
            if (repeat_p > 0 && uniform() < repeat_p && streaming) { send_input(); sent++; repeated++; }
        }
        if (vanished) {
            if (return_after < 0) break;
            double back = now() + return_after;
            while (now() < back) usleep(10000);
            set_row(0);
            create_device();
            printf("uhid-accel: returned %.6f\n", now());
            fflush(stdout);
            continue;
        }
        double interval = nrows > 1 ? (rows[nrows - 1].t - rows[0].t) / (nrows - 1) : 0.01;
        double end = now() + hold;
        for (double due = now() + interval; due < end; due += interval) {
            serve_until(due);
            if (streaming) { send_input(); sent++; }
        }
        if (again) {
            printf("uhid-accel: played %d sent=%lu\n", play + 1, sent);
            fflush(stdout);
            plays++;
        }
    }
    if (sent_log) fclose(sent_log);
    sent_log = NULL;
    printf("uhid-accel: done sent=%lu repeated=%lu skipped=%lu late=%lu\n", sent, repeated, skipped, late);
    fflush(stdout);
    /* Keep the device until killed, answering requests, so that the daemon does not see it vanish. */
    if (!(vanish_at >= 0 && return_after < 0))
        for (;;) serve_until(now() + 1);
    return 0;
}
