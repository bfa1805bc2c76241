// SPDX-License-Identifier: Apache-2.0
/* stamp-lines FILE: copies standard input to standard output line by line, and writes each line to FILE after
 * the time it was read (CLOCK_MONOTONIC seconds, as the feeders' --sent): when a reader got each of the daemon's
 * events. */
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: stamp-lines FILE\n");
        return 2;
    }
    FILE *stamps = fopen(argv[1], "w");
    if (!stamps) {
        perror(argv[1]);
        return 1;
    }
    char line[65536];
    while (fgets(line, sizeof line, stdin)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        fputs(line, stdout);
        fflush(stdout);
        fprintf(stamps, "%ld.%09ld %s", (long)ts.tv_sec, ts.tv_nsec, line);
        if (!strchr(line, '\n')) fputc('\n', stamps);
        fflush(stamps);
    }
    return 0;
}
