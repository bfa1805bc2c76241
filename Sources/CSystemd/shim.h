// SPDX-License-Identifier: Apache-2.0
#ifndef SHAKED_CSYSTEMD_SHIM_H
#define SHAKED_CSYSTEMD_SHIM_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

// The shake object on D-Bus. sd-bus describes an object with a table built by C macros, which Swift cannot
// expand, so the table lives here and forwards every call to the functions in shaked_bus_callbacks, which the
// Swift side fills in. All of them run on the thread that processes the bus.

typedef struct shaked_bus_callbacks {
    void *context;
    /// Whether `sender` may read the properties: 0, -EACCES (refused), or another negative errno.
    int (*may_read)(void *context, sd_bus *bus, const char *sender);
    /// A boolean property: 0 or 1, -ENOENT (no such boolean property), or another negative errno.
    int (*get_bool)(void *context, const char *property);
    /// A string property, malloc'd (freed here), or NULL on failure.
    char *(*get_string)(void *context, const char *property);
    /// A method call from `sender`: 0, -EACCES (refused), or another negative errno. Who `sender` is, the callee
    /// asks the bus (shaked_bus_connection_credentials).
    int (*call)(void *context, sd_bus *bus, const char *member, const char *sender);
    /// A bus name lost its owner (a client left the bus).
    void (*name_gone)(void *context, const char *name);
} shaked_bus_callbacks;

/// What the bus recorded of connection `name` when it connected, from org.freedesktop.DBus's
/// GetConnectionCredentials: `UnixUserID` (the socket peer's uid) and `UnixGroupIDs` (its primary and
/// supplementary groups as one sorted set: dbus-daemon 1.14 reads them with SO_PEERCRED and SO_PEERGROUPS at
/// connect). Nothing is read from /proc, where the caller's pid may by now name another program, or the same one
/// with other groups. Returns 0; -ENODATA when the bus names no uid; -E2BIG for more than `capacity` groups; or
/// another negative errno (the name has left the bus). *group_count is -1 when the bus names no groups.
static inline int shaked_bus_connection_credentials(sd_bus *bus, const char *name, uint32_t *uid, uint32_t *groups,
                                                    int capacity, int *group_count) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int have_uid = 0;
    *group_count = -1;
    int result = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                    "GetConnectionCredentials", &error, &reply, "s", name);
    sd_bus_error_free(&error);
    if (result < 0) return result;
    result = sd_bus_message_enter_container(reply, 'a', "{sv}");
    while (result >= 0) {
        result = sd_bus_message_enter_container(reply, 'e', "sv");
        if (result <= 0) break;
        const char *key = NULL;
        result = sd_bus_message_read(reply, "s", &key);
        if (result < 0) break;
        if (strcmp(key, "UnixUserID") == 0) {
            result = sd_bus_message_read(reply, "v", "u", uid);
            if (result >= 0) have_uid = 1;
        } else if (strcmp(key, "UnixGroupIDs") == 0) {
            const void *array = NULL;
            size_t size = 0;
            result = sd_bus_message_enter_container(reply, 'v', "au");
            if (result >= 0) result = sd_bus_message_read_array(reply, 'u', &array, &size);
            if (result >= 0 && size / sizeof(uint32_t) > (size_t)capacity) result = -E2BIG;
            if (result >= 0) {
                if (size > 0) memcpy(groups, array, size);
                *group_count = (int)(size / sizeof(uint32_t));
                result = sd_bus_message_exit_container(reply);
            }
        } else {
            result = sd_bus_message_skip(reply, "v");
        }
        if (result >= 0) result = sd_bus_message_exit_container(reply);
    }
    if (result >= 0) result = sd_bus_message_exit_container(reply);
    sd_bus_message_unref(reply);
    if (result < 0) return result;
    return have_uid ? 0 : -ENODATA;
}

/// A property read (Get, GetAll) is answered only for a sender the daemon's access rules allow.
static inline int shaked_bus_check_reader(sd_bus *bus, shaked_bus_callbacks *callbacks, sd_bus_error *error) {
    sd_bus_message *request = sd_bus_get_current_message(bus);
    const char *sender = request ? sd_bus_message_get_sender(request) : NULL;
    if (!sender) return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "the bus did not say who is asking");
    int result = callbacks->may_read(callbacks->context, bus, sender);
    if (result == -EACCES)
        return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "not allowed by the daemon's access rules");
    return result;
}

static inline int shaked_bus_property_bool(sd_bus *bus, const char *path, const char *interface,
                                           const char *property, sd_bus_message *reply, void *userdata,
                                           sd_bus_error *error) {
    shaked_bus_callbacks *callbacks = userdata;
    int allowed = shaked_bus_check_reader(bus, callbacks, error);
    if (allowed < 0) return allowed;
    int value = callbacks->get_bool(callbacks->context, property);
    if (value < 0) return value;
    return sd_bus_message_append(reply, "b", value);
}

static inline int shaked_bus_property_string(sd_bus *bus, const char *path, const char *interface,
                                             const char *property, sd_bus_message *reply, void *userdata,
                                             sd_bus_error *error) {
    shaked_bus_callbacks *callbacks = userdata;
    int allowed = shaked_bus_check_reader(bus, callbacks, error);
    if (allowed < 0) return allowed;
    char *value = callbacks->get_string(callbacks->context, property);
    if (!value) return -ENOMEM;
    int result = sd_bus_message_append(reply, "s", value);
    free(value);
    return result;
}

static inline int shaked_bus_method(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    shaked_bus_callbacks *callbacks = userdata;
    const char *sender = sd_bus_message_get_sender(message);
    if (!sender) return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "the bus did not say who is calling");
    int result = callbacks->call(callbacks->context, sd_bus_message_get_bus(message),
                                 sd_bus_message_get_member(message), sender);
    if (result == -EACCES)
        return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "not allowed by the daemon's access rules");
    if (result < 0) return result;
    return sd_bus_reply_method_return(message, "");
}

static inline int shaked_bus_name_owner_changed(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    shaked_bus_callbacks *callbacks = userdata;
    const char *name = NULL, *old_owner = NULL, *new_owner = NULL;
    if (sd_bus_message_read(message, "sss", &name, &old_owner, &new_owner) < 0) return 0;
    if (new_owner && new_owner[0] == '\0') callbacks->name_gone(callbacks->context, name);
    return 0;
}

/// Exports the shake object at `path` with `interface`, and watches clients leaving the bus.
static inline int shaked_bus_add_object(sd_bus *bus, const char *path, const char *interface,
                                        shaked_bus_callbacks *callbacks) {
    static const sd_bus_vtable vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Claim", "", "", shaked_bus_method, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Release", "", "", shaked_bus_method, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_PROPERTY("HasAccelerometer", "b", shaked_bus_property_bool, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Shaking", "b", shaked_bus_property_bool, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Sensor", "s", shaked_bus_property_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Sensitivity", "s", shaked_bus_property_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_SIGNAL_WITH_NAMES("Shake", "stdddsuss",
                                 SD_BUS_PARAM(phase) SD_BUS_PARAM(seq) SD_BUS_PARAM(time) SD_BUS_PARAM(duration)
                                     SD_BUS_PARAM(peak) SD_BUS_PARAM(axis) SD_BUS_PARAM(reversals)
                                         SD_BUS_PARAM(reason) SD_BUS_PARAM(detail),
                                 0),
        SD_BUS_VTABLE_END};
    int result = sd_bus_add_object_vtable(bus, NULL, path, interface, vtable, callbacks);
    if (result < 0) return result;
    return sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "NameOwnerChanged", shaked_bus_name_owner_changed, callbacks);
}

/// Sends the Shake signal to `destination` (a unique name) alone, or to everyone listening when it is NULL.
static inline int shaked_bus_emit_shake(sd_bus *bus, const char *destination, const char *path,
                                        const char *interface, const char *phase, uint64_t seq, double time,
                                        double duration, double peak, const char *axis, uint32_t reversals,
                                        const char *reason, const char *detail) {
    sd_bus_message *message = NULL;
    int result = sd_bus_message_new_signal(bus, &message, path, interface, "Shake");
    if (result < 0) return result;
    if (destination) result = sd_bus_message_set_destination(message, destination);
    if (result >= 0)
        result = sd_bus_message_append(message, "stdddsuss", phase, seq, time, duration, peak, axis, reversals,
                                       reason, detail);
    if (result >= 0) result = sd_bus_send(bus, message, NULL);
    sd_bus_message_unref(message);
    return result;
}

/// Sends PropertiesChanged for the `count` properties `names`, with their values (from the callbacks), to
/// `destination` alone, or to everyone listening when it is NULL (what sd_bus_emit_properties_changed does, which
/// cannot address one client).
static inline int shaked_bus_emit_changed(sd_bus *bus, const char *destination, const char *path,
                                          const char *interface, shaked_bus_callbacks *callbacks,
                                          const char *const *names, int count) {
    sd_bus_message *message = NULL;
    int result = sd_bus_message_new_signal(bus, &message, path, "org.freedesktop.DBus.Properties",
                                           "PropertiesChanged");
    if (result < 0) return result;
    if (destination) result = sd_bus_message_set_destination(message, destination);
    if (result >= 0) result = sd_bus_message_append(message, "s", interface);
    if (result >= 0) result = sd_bus_message_open_container(message, 'a', "{sv}");
    for (int index = 0; result >= 0 && index < count; index++) {
        result = sd_bus_message_open_container(message, 'e', "sv");
        if (result >= 0) result = sd_bus_message_append(message, "s", names[index]);
        if (result < 0) break;
        int value = callbacks->get_bool(callbacks->context, names[index]);
        if (value >= 0) {
            result = sd_bus_message_append(message, "v", "b", value);
        } else if (value == -ENOENT) {
            char *text = callbacks->get_string(callbacks->context, names[index]);
            result = text ? sd_bus_message_append(message, "v", "s", text) : -ENOMEM;
            free(text);
        } else {
            result = value;
        }
        if (result >= 0) result = sd_bus_message_close_container(message);
    }
    if (result >= 0) result = sd_bus_message_close_container(message);
    if (result >= 0) result = sd_bus_message_append(message, "as", 0);
    if (result >= 0) result = sd_bus_send(bus, message, NULL);
    sd_bus_message_unref(message);
    return result;
}

// logind's sessions, read through its D-Bus API (org.freedesktop.login1) rather than sd-login's files in /run, so
// that a stand-in logind on a private bus can drive it in tests. sd_bus_message_read is variadic, which Swift
// cannot call: the reading is here.

/// One session of ListSessions: its user and whether it is active and unlocked (Active and not LockedHint).
typedef void (*shaked_login_session_fn)(void *context, uint32_t uid, int active, int locked, int seat0);

/// Lists logind's sessions and reads each one's Active and LockedHint, and says whether it is on seat0: 0, or a
/// negative errno (logind absent: the bus's error for a name nobody owns). A session whose properties cannot be
/// read is left out.
static inline int shaked_login_sessions(sd_bus *bus, shaked_login_session_fn each, void *context) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int result = sd_bus_call_method(bus, "org.freedesktop.login1", "/org/freedesktop/login1",
                                    "org.freedesktop.login1.Manager", "ListSessions", &error, &reply, "");
    sd_bus_error_free(&error);
    if (result < 0) return result;
    result = sd_bus_message_enter_container(reply, 'a', "(susso)");
    if (result < 0) goto done;
    for (;;) {
        const char *id, *user, *seat, *path;
        uint32_t uid;
        result = sd_bus_message_read(reply, "(susso)", &id, &uid, &user, &seat, &path);
        if (result <= 0) break;
        int active = 0, locked = 0;
        sd_bus_error property_error = SD_BUS_ERROR_NULL;
        int a = sd_bus_get_property_trivial(bus, "org.freedesktop.login1", path, "org.freedesktop.login1.Session",
                                            "Active", &property_error, 'b', &active);
        sd_bus_error_free(&property_error);
        int l = sd_bus_get_property_trivial(bus, "org.freedesktop.login1", path, "org.freedesktop.login1.Session",
                                            "LockedHint", &property_error, 'b', &locked);
        sd_bus_error_free(&property_error);
        if (a >= 0 && l >= 0) each(context, uid, active, locked, seat != NULL && strcmp(seat, "seat0") == 0);
    }
    if (result >= 0) result = sd_bus_message_exit_container(reply);
done:
    sd_bus_message_unref(reply);
    return result < 0 ? result : 0;
}

/// Calls `changed` whenever logind's sessions may have changed: a session came or went, a session's properties
/// changed (Active, LockedHint), or logind itself appeared on or left the bus. The signals are matched by path
/// and interface, not by sender: sd-bus compares a match's sender with the message's, which is logind's unique
/// name, never the well-known one.
static inline int shaked_login_watch(sd_bus *bus, sd_bus_message_handler_t changed, void *context) {
    int result = sd_bus_match_signal(bus, NULL, NULL, "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                                     "SessionNew", changed, context);
    if (result < 0) return result;
    result = sd_bus_match_signal(bus, NULL, NULL, "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                                 "SessionRemoved", changed, context);
    if (result < 0) return result;
    result = sd_bus_add_match(bus, NULL,
                              "type='signal',path_namespace='/org/freedesktop/login1/session',"
                              "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                              "arg0='org.freedesktop.login1.Session'",
                              changed, context);
    if (result < 0) return result;
    return sd_bus_add_match(bus, NULL,
                            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                            "member='NameOwnerChanged',arg0='org.freedesktop.login1'",
                            changed, context);
}

#endif
