// SPDX-License-Identifier: Apache-2.0
// /dev/uinput: the ioctls as functions (their macros do not import into Swift). Only UInput/UInputDevice.swift
// imports this module. Each returns 0 or -1 with errno set, like the calls they wrap.
#ifndef SHAKED_CUINPUT_SHIM_H
#define SHAKED_CUINPUT_SHIM_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/input.h>
#include <linux/uinput.h>

static inline int shaked_uinput_set_evbit(int fd, int type) { return ioctl(fd, UI_SET_EVBIT, type); }
static inline int shaked_uinput_set_keybit(int fd, int code) { return ioctl(fd, UI_SET_KEYBIT, code); }
static inline int shaked_uinput_set_absbit(int fd, int code) { return ioctl(fd, UI_SET_ABSBIT, code); }
static inline int shaked_uinput_set_propbit(int fd, int property) { return ioctl(fd, UI_SET_PROPBIT, property); }
static inline int shaked_uinput_set_phys(int fd, const char *phys) { return ioctl(fd, UI_SET_PHYS, phys); }
static inline int shaked_uinput_create(int fd) { return ioctl(fd, UI_DEV_CREATE); }
static inline int shaked_uinput_destroy(int fd) { return ioctl(fd, UI_DEV_DESTROY); }

/// UI_DEV_SETUP: the name (truncated to UINPUT_MAX_NAME_SIZE - 1 bytes) and the id.
static inline int shaked_uinput_setup(
    int fd, const char *name, uint16_t bustype, uint16_t vendor, uint16_t product, uint16_t version) {
    struct uinput_setup setup;
    memset(&setup, 0, sizeof setup);
    strncpy(setup.name, name, UINPUT_MAX_NAME_SIZE - 1);
    setup.id.bustype = bustype;
    setup.id.vendor = vendor;
    setup.id.product = product;
    setup.id.version = version;
    return ioctl(fd, UI_DEV_SETUP, &setup);
}

/// UI_ABS_SETUP: one absolute axis, its range, resolution (units per unit of the quantity) and first value.
static inline int shaked_uinput_abs_setup(
    int fd, uint16_t code, int32_t minimum, int32_t maximum, int32_t fuzz, int32_t flat, int32_t resolution,
    int32_t value) {
    struct uinput_abs_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.code = code;
    setup.absinfo.minimum = minimum;
    setup.absinfo.maximum = maximum;
    setup.absinfo.fuzz = fuzz;
    setup.absinfo.flat = flat;
    setup.absinfo.resolution = resolution;
    setup.absinfo.value = value;
    return ioctl(fd, UI_ABS_SETUP, &setup);
}

/// UI_GET_SYSNAME: the created device's name under /sys/devices/virtual/input (e.g. "input7").
static inline int shaked_uinput_sysname(int fd, char *buffer, size_t length) {
    return ioctl(fd, UI_GET_SYSNAME(length), buffer);
}

/// Writes `count` events in one write(2) (the kernel takes whole `struct input_event`s); returns 0, or -1 with
/// errno (EIO-like short writes are reported as EIO).
static inline int shaked_uinput_write_events(
    int fd, const uint16_t *types, const uint16_t *codes, const int32_t *values, size_t count) {
    struct input_event events[16];
    if (count > 16) {
        errno = EINVAL;
        return -1;
    }
    memset(events, 0, sizeof events);
    for (size_t i = 0; i < count; i++) {
        events[i].type = types[i];
        events[i].code = codes[i];
        events[i].value = values[i];
    }
    size_t size = count * sizeof(struct input_event);
    ssize_t written;
    do {
        written = write(fd, events, size);
    } while (written < 0 && errno == EINTR);
    if (written < 0) return -1;
    if ((size_t)written != size) {
        errno = EIO;
        return -1;
    }
    return 0;
}

#endif
