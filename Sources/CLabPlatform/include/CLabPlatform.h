#ifndef DOWNLOAD_LAB_CLABPLATFORM_H
#define DOWNLOAD_LAB_CLABPLATFORM_H

#if defined(__APPLE__)
#include <mach/mach.h>

// The task's own port. mach_task_self() is a macro over the global mach_task_self_, which Swift 6
// refuses as shared mutable state with SDKs before macOS 15.4 (apple/swift-system#369, #373). C has
// no such check; swift-testing does the same (Sources/_TestingInternals/include/Stubs.h,
// swt_mach_task_self), as does swift-foundation (_FoundationCShims, _platform_mach_task_self).
static inline mach_port_t lab_mach_task_self(void) {
    return mach_task_self();
}

#endif

// The label of the dispatch queue running the calling thread's work (shim.c says why in C).
const char *_Nonnull lab_current_dispatch_queue_label(void);

// On a thread of GCD's pool (its stack starts in libdispatch), how many runs of libdispatch's
// frames the stack holds, each a queue's work entered: 1 for the work the pool thread was given,
// 2 or more when that work entered another queue's (a `sync`); 0 on a thread GCD did not make.
// In C for backtrace and dladdr, which Swift's import of glibc does not declare (dladdr wants _GNU_SOURCE).
int lab_dispatch_work_nesting(void);

#endif
