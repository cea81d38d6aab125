// libcurl's easy interface, for the transfer service's exchanges (see CurlExchange.swift).
// curl_easy_setopt is variadic, which Swift cannot call: each wrapper below passes one type of
// value.
#ifndef LAB_CCURL_H
#define LAB_CCURL_H

#include <curl/curl.h>

typedef size_t (*lab_curl_data_function)(char *data, size_t size, size_t count, void *context);
typedef int (*lab_curl_progress_function)(void *context, curl_off_t downloadTotal, curl_off_t downloaded,
                                          curl_off_t uploadTotal, curl_off_t uploaded);

CURLcode lab_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode lab_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode lab_curl_set_string(CURL *handle, CURLoption option, const char *value);
CURLcode lab_curl_set_pointer(CURL *handle, CURLoption option, void *value);
CURLcode lab_curl_set_data_function(CURL *handle, CURLoption option, lab_curl_data_function function);
CURLcode lab_curl_set_progress_function(CURL *handle, lab_curl_progress_function function);

#endif
