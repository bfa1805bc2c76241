// SPDX-License-Identifier: Apache-2.0
#ifndef SHAKED_BENCHMARKS_CEPOLL_H
#define SHAKED_BENCHMARKS_CEPOLL_H

// epoll(7), which Swift's Glibc module leaves out; for the latency rig's reader.
#include <sys/epoll.h>

#endif
