// SPDX-License-Identifier: Apache-2.0
/* monotonic: prints CLOCK_MONOTONIC in seconds (busybox has no way to read it). */
#include <stdio.h>
#include <time.h>
int main(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("%ld.%09ld\n", (long)ts.tv_sec, ts.tv_nsec);
    return 0;
}
