// SPDX-License-Identifier: Apache-2.0
// A wall clock that is stepped, for the tests: preloaded into the daemon (LD_PRELOAD), it makes CLOCK_REALTIME and
// gettimeofday(2) read a day later once the file named by WALL_CLOCK_STEP exists, as if an administrator or NTP
// had stepped the clock. The monotonic clocks are left alone.
//
//     cc -shared -fPIC -o wall-clock-step.so wall-clock-step.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

static time_t step(void) {
    const char *path = getenv("WALL_CLOCK_STEP");
    struct stat info;
    return path != NULL && stat(path, &info) == 0 ? 86400 : 0;
}

int clock_gettime(clockid_t clock, struct timespec *now) {
    static int (*real)(clockid_t, struct timespec *);
    if (real == NULL) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    int result = real(clock, now);
    if (result == 0 && now != NULL && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
        now->tv_sec += step();
    }
    return result;
}

int gettimeofday(struct timeval *restrict now, void *restrict zone) {
    static int (*real)(struct timeval *restrict, void *restrict);
    if (real == NULL) real = (int (*)(struct timeval *restrict, void *restrict))dlsym(RTLD_NEXT, "gettimeofday");
    int result = real(now, zone);
    if (result == 0 && now != NULL) now->tv_sec += step();
    return result;
}
