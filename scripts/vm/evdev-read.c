// SPDX-License-Identifier: Apache-2.0
// Reads back what a virtual keyboard types: waits for the input device named argv[1] to appear, opens its evdev
// node and prints one line per key event, "key CODE VALUE SECONDS" (value 1 down, 0 up), until killed. The VM's
// key scenario checks them against the shakes the daemon saw (scripts/vm/check.py).
#include <dirent.h>
#include <fcntl.h>
#include <linux/input.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int find(const char *name, char *node, size_t size) {
    DIR *dir = opendir("/sys/class/input");
    if (!dir) return 0;
    struct dirent *entry;
    int found = 0;
    while (!found && (entry = readdir(dir))) {
        if (strncmp(entry->d_name, "event", 5) != 0) continue;
        char path[512], text[256] = {0};
        snprintf(path, sizeof path, "/sys/class/input/%s/device/name", entry->d_name);
        FILE *file = fopen(path, "r");
        if (!file) continue;
        if (fgets(text, sizeof text, file)) {
            text[strcspn(text, "\n")] = 0;
            if (strcmp(text, name) == 0) {
                snprintf(node, size, "/dev/input/%s", entry->d_name);
                found = 1;
            }
        }
        fclose(file);
    }
    closedir(dir);
    return found;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: evdev-read NAME\n");
        return 2;
    }
    char node[300];
    for (int i = 0; !find(argv[1], node, sizeof node); i++) {
        if (i == 300) {
            fprintf(stderr, "evdev-read: no input device named %s\n", argv[1]);
            return 1;
        }
        usleep(100000);
    }
    int fd = -1;
    for (int i = 0; i < 50 && (fd = open(node, O_RDONLY)) < 0; i++) usleep(100000);  // devtmpfs makes it soon
    if (fd < 0) {
        perror(node);
        return 1;
    }
    printf("open %s\n", node);
    fflush(stdout);
    struct input_event event;
    while (read(fd, &event, sizeof event) == (ssize_t)sizeof event) {
        if (event.type != EV_KEY) continue;
        printf("key %u %d %ld.%06ld\n", event.code, event.value, (long)event.input_event_sec,
               (long)event.input_event_usec);
        fflush(stdout);
    }
    return 0;
}
