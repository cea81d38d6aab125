// SwiftPM builds a C target from at least one source file; the header holds the Darwin code.
#include "CLabPlatform.h"
#include <stddef.h>

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
