#include "CShims.h"

CURLcode sileme_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode sileme_curl_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode sileme_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode sileme_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode sileme_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode sileme_curl_set_read_callback(CURL *handle, sileme_read_callback callback, void *userdata) {
    CURLcode rc = curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
    if (rc != CURLE_OK) return rc;
    return curl_easy_setopt(handle, CURLOPT_READDATA, userdata);
}

CURLcode sileme_curl_set_debug_callback(CURL *handle, sileme_debug_callback callback, void *userdata) {
    CURLcode rc = curl_easy_setopt(handle, CURLOPT_DEBUGFUNCTION, callback);
    if (rc != CURLE_OK) return rc;
    rc = curl_easy_setopt(handle, CURLOPT_DEBUGDATA, userdata);
    if (rc != CURLE_OK) return rc;
    return curl_easy_setopt(handle, CURLOPT_VERBOSE, 1L);
}

CURLcode sileme_curl_set_rcpt_allow_fails(CURL *handle, long value) {
#if LIBCURL_VERSION_NUM >= 0x080200
    return curl_easy_setopt(handle, CURLOPT_MAIL_RCPT_ALLOWFAILS, value);
#elif LIBCURL_VERSION_NUM >= 0x074500
    return curl_easy_setopt(handle, CURLOPT_MAIL_RCPT_ALLLOWFAILS, value);
#else
    (void)handle; (void)value;
    return CURLE_UNKNOWN_OPTION;
#endif
}

long sileme_curl_usessl_all(void) {
    return (long)CURLUSESSL_ALL;
}

static size_t sileme_discard(char *data, size_t size, size_t count, void *userdata) {
    (void)data; (void)userdata;
    return size * count;
}

CURLcode sileme_curl_set_write_discard(CURL *handle) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, sileme_discard);
}

CURLcode sileme_curl_set_progress_callback(CURL *handle, sileme_progress_callback callback, void *userdata) {
    CURLcode rc = curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
    if (rc != CURLE_OK) return rc;
    rc = curl_easy_setopt(handle, CURLOPT_XFERINFODATA, userdata);
    if (rc != CURLE_OK) return rc;
    return curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
}
