// SPDX-License-Identifier: Apache-2.0
#ifndef SHAKED_CMOSQUITTO_SHIM_H
#define SHAKED_CMOSQUITTO_SHIM_H

// libmosquitto (Eclipse Mosquitto's MQTT client library, 2.0), for ShakeMQTT only. Its functions take no varargs
// and no macros, so Swift calls them directly; this header only brings them in.
#include <mosquitto.h>

#endif
