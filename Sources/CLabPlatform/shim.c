// SwiftPM builds a C target from at least one source file; the header holds the Darwin code.
#define _GNU_SOURCE  // glibc declares dladdr only with it; Darwin always does
#include "CLabPlatform.h"
#include <dlfcn.h>
#include <execinfo.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

// libdispatch's own declaration is in <dispatch/dispatch.h>, which on Linux sits in the Swift
// toolchain's folder, outside a C target's include path; Swift refuses the function by name
// ("replaced by property 'DispatchQueue.label'"), and that property needs a queue, not "the
// current one". The symbol is libdispatch's on both systems, which Foundation links.
#if defined(__APPLE__)
#include <dispatch/dispatch.h>
#else
extern const char *dispatch_queue_get_label(void *queue);
#endif

const char *lab_current_dispatch_queue_label(void) {
    // NULL is DISPATCH_CURRENT_QUEUE_LABEL: the queue whose work is running on this thread, or
    // on a thread no queue runs, the default overcommit root queue.
    return dispatch_queue_get_label(NULL);
}

// The file name of a loaded object's path.
static const char *file_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

// The C library's thread start: glibc's libc.so.6 (and an older libpthread), Darwin's
// libsystem_pthread.dylib.
static int is_thread_start_library(const char *name) {
    return strncmp(name, "libc.so", 7) == 0 || strncmp(name, "libpthread", 10) == 0
        || strncmp(name, "libsystem_pthread", 17) == 0;
}

// libdispatch, or Swift's overlay of it, through which a `sync` enters it.
static int is_dispatch_library(const char *name) {
    return strncmp(name, "libdispatch.", 12) == 0 || strncmp(name, "libswiftDispatch.", 17) == 0;
}

int lab_dispatch_work_nesting(void) {
    // backtrace() lists the innermost frames first and stops at its buffer's end: the buffer
    // grows until the whole stack fits, so that the outermost frames are the thread's start.
    for (int capacity = 256; capacity <= (1 << 16); capacity *= 4) {
        void **frames = malloc(sizeof(void *) * (size_t)capacity);
        if (frames == NULL) return 0;
        int count = backtrace(frames, capacity);
        if (count == capacity) { free(frames); continue; }
        int runs = 0, inDispatch = 0, started = 0;
        for (int index = count - 1; index >= 0; index--) {
            Dl_info info;
            if (dladdr(frames[index], &info) == 0 || info.dli_fname == NULL) { inDispatch = 0; continue; }
            const char *name = file_name(info.dli_fname);
            if (!started) {
                if (is_thread_start_library(name)) continue;
                // The first frame past the thread's start says who made the thread.
                if (strncmp(name, "libdispatch.", 12) != 0) break;
                started = 1;
            }
            int dispatch = is_dispatch_library(name);
            if (dispatch && !inDispatch) runs += 1;
            inDispatch = dispatch;
        }
        free(frames);
        return runs;
    }
    return 0;
}
