// SPDX-License-Identifier: Apache-2.0
/*
 * i2c-accel: feeds the kernel's kxcjk-1013 driver bound to i2c-stub with a trace, by writing the chip's data
 * registers through /dev/i2c-N (the driver reads them back as in_accel_{x,y,z}_raw: the polled path).
 *
 * usage: i2c-accel --bus N [--addr 0x0e] [--scale S] [--hold S] [--init] TRACE.csv
 *   --init    only write WHO_AM_I (0x0F = 0x11, a KXCJK1013) and the rest pose, so that the driver binds; exit
 *   --scale   m/s² per count of the range the driver was set to (default 0.038326, ±8 g)
 *   --start-at MONO  start playing at this CLOCK_MONOTONIC time (default: now)
 * Registers XOUT_L..ZOUT_H (0x06..0x0B) hold 12-bit values left-justified in 16 bits, little-endian.
 * Prints "i2c-accel: start MONO" when the first row is written, and a summary at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static int fd;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t) {
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
}

static int smbus(char rw, uint8_t command, int size, union i2c_smbus_data *data) {
    struct i2c_smbus_ioctl_data args = {.read_write = rw, .command = command, .size = size, .data = data};
    return ioctl(fd, I2C_SMBUS, &args);
}

static void write_byte(uint8_t reg, uint8_t value) {
    union i2c_smbus_data d = {.byte = value};
    if (smbus(I2C_SMBUS_WRITE, reg, I2C_SMBUS_BYTE_DATA, &d) < 0) {
        fprintf(stderr, "i2c-accel: writing register 0x%02x: %s\n", reg, strerror(errno));
        exit(1);
    }
}

static void write_word(uint8_t reg, uint16_t value) {
    union i2c_smbus_data d = {.word = value};
    if (smbus(I2C_SMBUS_WRITE, reg, I2C_SMBUS_WORD_DATA, &d) < 0) {
        fprintf(stderr, "i2c-accel: writing register 0x%02x: %s\n", reg, strerror(errno));
        exit(1);
    }
}

static uint16_t counts(double v, double scale) {
    double c = round(v / scale);
    if (!isfinite(c)) c = 0;
    if (c > 2047) c = 2047;
    if (c < -2048) c = -2048;
    return (uint16_t)(((int16_t)c) * 16);
}

static void put(double x, double y, double z, double scale) {
    write_word(0x06, counts(x, scale));
    write_word(0x08, counts(y, scale));
    write_word(0x0A, counts(z, scale));
}

int main(int argc, char **argv) {
    int bus = -1, addr = 0x0e, init = 0;
    double scale = 0.038326, hold = 2, start_at = 0;
    const char *trace = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bus") && i + 1 < argc) bus = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--addr") && i + 1 < argc) addr = (int)strtol(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--scale") && i + 1 < argc) scale = atof(argv[++i]);
        else if (!strcmp(argv[i], "--hold") && i + 1 < argc) hold = atof(argv[++i]);
        else if (!strcmp(argv[i], "--start-at") && i + 1 < argc) start_at = atof(argv[++i]);
        else if (!strcmp(argv[i], "--init")) init = 1;
        else if (argv[i][0] != '-' && !trace) trace = argv[i];
        else { fprintf(stderr, "i2c-accel: bad argument %s\n", argv[i]); return 64; }
    }
    if (bus < 0 || (!init && !trace) || !(scale > 0)) {
        fprintf(stderr, "usage: i2c-accel --bus N [--addr A] [--scale S] [--hold S] [--init] TRACE.csv\n");
        return 64;
    }
    char path[64];
    snprintf(path, sizeof(path), "/dev/i2c-%d", bus);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) { fprintf(stderr, "i2c-accel: %s: %s\n", path, strerror(errno)); return 1; }
    if (ioctl(fd, I2C_SLAVE_FORCE, addr) < 0) { fprintf(stderr, "i2c-accel: address: %s\n", strerror(errno)); return 1; }
    if (init) {
        write_byte(0x0F, 0x11);
        put(0, 9.80665, 0, scale);
        return 0;
    }
    FILE *f = fopen(trace, "r");
    if (!f) { fprintf(stderr, "i2c-accel: %s: %s\n", trace, strerror(errno)); return 1; }
    char line[512];
    double t0 = NAN, start = start_at > 0 ? start_at : now() + 0.05, last = 0;
    double lx = 0, ly = 9.80665, lz = 0;
    unsigned long written = 0, late = 0;
    while (fgets(line, sizeof(line), f)) {
        double t, x, y, z;
        if (line[0] == '#' || sscanf(line, "%lf,%lf,%lf,%lf", &t, &x, &y, &z) != 4) continue;
        if (isnan(t0)) {
            t0 = t;
            printf("i2c-accel: start %.6f\n", start);
            fflush(stdout);
        }
        double due = start + (t - t0);
        sleep_until(due);
        if (now() - due > 0.005) late++;
        put(x, y, z, scale);
        written++;
        last = t - t0;
        lx = x; ly = y; lz = z;
    }
    fclose(f);
    (void)lx; (void)ly; (void)lz;
    sleep_until(start + last + hold);
    printf("i2c-accel: done written=%lu late=%lu\n", written, late);
    return 0;
}
