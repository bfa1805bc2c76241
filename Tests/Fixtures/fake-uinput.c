// SPDX-License-Identifier: Apache-2.0
// A stand-in for /dev/uinput, for the tests of the daemon's key chords on a machine without uinput (or where the
// tests may not make real input devices): preloaded into shaked (LD_PRELOAD), it answers an open of /dev/uinput
// with the file $FAKE_UINPUT_LOG, takes the uinput ioctls, and writes what a process does with the device there
// as text, one line each: "create", "destroy", and "TYPE CODE VALUE" for every input event written.
//
//     cc -shared -fPIC -o fake-uinput.so fake-uinput.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int fake = -1;

static int open_fake(const char *path, int (*real)(const char *, int, ...), int flags, mode_t mode) {
    if (strcmp(path, "/dev/uinput") != 0) return real(path, flags, mode);
    const char *log = getenv("FAKE_UINPUT_LOG");
    if (log == NULL) {
        errno = ENOENT;
        return -1;
    }
    int descriptor = real(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (descriptor >= 0) fake = descriptor;
    return descriptor;
}

static mode_t mode_of(int flags, va_list arguments) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(arguments, int) : 0;
}

int open(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...);
    if (!real) real = dlsym(RTLD_NEXT, "open");
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_of(flags, arguments);
    va_end(arguments);
    return open_fake(path, real, flags, mode);
}

int open64(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...);
    if (!real) real = dlsym(RTLD_NEXT, "open64");
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_of(flags, arguments);
    va_end(arguments);
    return open_fake(path, real, flags, mode);
}

static ssize_t (*real_write)(int, const void *, size_t);

static void say(const char *line) {
    if (!real_write) real_write = dlsym(RTLD_NEXT, "write");
    real_write(fake, line, strlen(line));
}

int ioctl(int descriptor, unsigned long request, ...) {
    static int (*real)(int, unsigned long, ...);
    if (!real) real = dlsym(RTLD_NEXT, "ioctl");
    va_list arguments;
    va_start(arguments, request);
    void *argument = va_arg(arguments, void *);
    va_end(arguments);
    if (descriptor < 0 || descriptor != fake) return real(descriptor, request, argument);
    if (request == UI_DEV_CREATE) say("create\n");
    if (request == UI_DEV_DESTROY) say("destroy\n");
    if (_IOC_TYPE(request) == UINPUT_IOCTL_BASE && _IOC_NR(request) == 44 && _IOC_SIZE(request) > 6) {
        strcpy(argument, "input99");  // UI_GET_SYSNAME
    }
    return 0;
}

ssize_t write(int descriptor, const void *buffer, size_t size) {
    if (!real_write) real_write = dlsym(RTLD_NEXT, "write");
    if (descriptor < 0 || descriptor != fake) return real_write(descriptor, buffer, size);
    const struct input_event *events = buffer;
    for (size_t index = 0; index < size / sizeof *events; index++) {
        char line[64];
        snprintf(line, sizeof line, "%u %u %d\n", events[index].type, events[index].code, events[index].value);
        say(line);
    }
    return (ssize_t)size;
}

int close(int descriptor) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "close");
    if (descriptor >= 0 && descriptor == fake) fake = -1;
    return real(descriptor);
}
