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
    /// A boolean property: 0 or 1, or a negative errno.
    int (*get_bool)(void *context, const char *property);
    /// A string property, malloc'd (freed here), or NULL on failure.
    char *(*get_string)(void *context, const char *property);
    /// A method call from `sender` with the credentials the bus vouches for: 0, -EACCES (refused), or another
    /// negative errno.
    int (*call)(void *context, const char *member, const char *sender, uint32_t uid, uint32_t gid,
                const uint32_t *groups, int group_count);
    /// A bus name lost its owner (a client left the bus).
    void (*name_gone)(void *context, const char *name);
} shaked_bus_callbacks;

static inline int shaked_bus_property_bool(sd_bus *bus, const char *path, const char *interface,
                                           const char *property, sd_bus_message *reply, void *userdata,
                                           sd_bus_error *error) {
    shaked_bus_callbacks *callbacks = userdata;
    int value = callbacks->get_bool(callbacks->context, property);
    if (value < 0) return value;
    return sd_bus_message_append(reply, "b", value);
}

static inline int shaked_bus_property_string(sd_bus *bus, const char *path, const char *interface,
                                             const char *property, sd_bus_message *reply, void *userdata,
                                             sd_bus_error *error) {
    shaked_bus_callbacks *callbacks = userdata;
    char *value = callbacks->get_string(callbacks->context, property);
    if (!value) return -ENOMEM;
    int result = sd_bus_message_append(reply, "s", value);
    free(value);
    return result;
}

static inline int shaked_bus_method(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    shaked_bus_callbacks *callbacks = userdata;
    sd_bus_creds *creds = NULL;
    int result = sd_bus_query_sender_creds(
        message, SD_BUS_CREDS_EUID | SD_BUS_CREDS_EGID | SD_BUS_CREDS_SUPPLEMENTARY_GIDS | SD_BUS_CREDS_AUGMENT,
        &creds);
    if (result < 0) return result;
    uid_t uid = (uid_t)-1;
    gid_t gid = (gid_t)-1;
    const gid_t *groups = NULL;
    int count = 0;
    if (sd_bus_creds_get_euid(creds, &uid) < 0 || sd_bus_creds_get_egid(creds, &gid) < 0) {
        sd_bus_creds_unref(creds);
        return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "the bus did not say who is calling");
    }
    count = sd_bus_creds_get_supplementary_gids(creds, &groups);
    if (count < 0) count = 0;
    result = callbacks->call(callbacks->context, sd_bus_message_get_member(message),
                             sd_bus_message_get_sender(message), uid, gid, (const uint32_t *)groups, count);
    sd_bus_creds_unref(creds);
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

static inline int shaked_bus_emit_shake(sd_bus *bus, const char *path, const char *interface, const char *phase,
                                        uint64_t seq, double time, double duration, double peak, const char *axis,
                                        uint32_t reversals, const char *reason, const char *detail) {
    return sd_bus_emit_signal(bus, path, interface, "Shake", "stdddsuss", phase, seq, time, duration, peak, axis,
                              reversals, reason, detail);
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
