#ifndef DOWNLOAD_LAB_CLIBXML2_SHIM_H
#define DOWNLOAD_LAB_CLIBXML2_SHIM_H

// libxml2's headers pull in ICU's UErrorCode when this is set, and that clashes with
// Foundation's copy in any module that imports both.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED

#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/tree.h>
#include <libxml/xmlsave.h>

// libxml2 initializes its global parser state lazily and without a lock: a program that may use
// it from several threads calls xmlInitParser() once first.

// xmlFree is a global function-pointer variable, which Swift 6 will not call directly.
static inline void lab_xmlFree(void *pointer) { xmlFree(pointer); }

#endif
