// SPDX-License-Identifier: Apache-2.0
// What BlockingWork needs of Linux that Swift's Glibc module does not show: eventfd(2) (its header is not in the
// module) and naming a thread (a GNU extension). Only BlockingWork imports this module. Each returns like the call
// it wraps.
#ifndef SHAKED_CTHREADS_SHIM_H
#define SHAKED_CTHREADS_SHIM_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sys/eventfd.h>

/// A non-blocking eventfd, closed on exec; -1 with errno set when none could be made.
static inline int shaked_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

/// Names the calling thread (at most 15 bytes and the NUL); 0 or an error number.
static inline int shaked_name_thread(const char *name) { return pthread_setname_np(pthread_self(), name); }

/// The calling thread's name into `name` (`size` bytes); 0 or an error number.
static inline int shaked_thread_name(char *name, size_t size) { return pthread_getname_np(pthread_self(), name, size); }

#endif
