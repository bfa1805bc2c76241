// SPDX-License-Identifier: Apache-2.0
// libiio 0.24, the v0 API (iio.h). Only IIOSensor/LibIIO.swift imports this module.
#ifndef SHAKED_CLIBIIO_SHIM_H
#define SHAKED_CLIBIIO_SHIM_H

#include <iio.h>

#endif
