// SwiftPM builds a C target from at least one source file; the header holds the code.
#include "CLabPlatform.h"
