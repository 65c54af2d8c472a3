#include "CShims.h"

#include <pthread.h>
#include <signal.h>

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

CURLcode sileme_curl_set_write_callback(CURL *handle, sileme_write_callback callback, void *userdata) {
    CURLcode rc = curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
    if (rc != CURLE_OK) return rc;
    return curl_easy_setopt(handle, CURLOPT_WRITEDATA, userdata);
}

CURLcode sileme_curl_set_header_callback(CURL *handle, sileme_write_callback callback, void *userdata) {
    CURLcode rc = curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
    if (rc != CURLE_OK) return rc;
    return curl_easy_setopt(handle, CURLOPT_HEADERDATA, userdata);
}

static pthread_once_t sileme_runtime_once = PTHREAD_ONCE_INIT;
static CURLcode sileme_runtime_result = CURLE_FAILED_INIT;

static void sileme_runtime_setup(void) {
    signal(SIGPIPE, SIG_IGN);
    sileme_runtime_result = curl_global_init(CURL_GLOBAL_ALL);
}

CURLcode sileme_curl_runtime_init(void) {
    pthread_once(&sileme_runtime_once, sileme_runtime_setup);
    return sileme_runtime_result;
}

CURLcode sileme_curl_multi_run(CURLM *multi, CURL *easy, int poll_ms) {
    if (curl_multi_add_handle(multi, easy) != CURLM_OK) return CURLE_FAILED_INIT;
    CURLcode result = CURLE_OK;
    int running = 1;
    while (running > 0) {
        if (curl_multi_perform(multi, &running) != CURLM_OK) { result = CURLE_FAILED_INIT; break; }
        if (running == 0) break;
        if (curl_multi_poll(multi, NULL, 0, poll_ms, NULL) != CURLM_OK) { result = CURLE_FAILED_INIT; break; }
    }
    if (result == CURLE_OK) {
        int queued = 0;
        CURLMsg *message;
        while ((message = curl_multi_info_read(multi, &queued)) != NULL) {
            if (message->msg == CURLMSG_DONE && message->easy_handle == easy) result = message->data.result;
        }
    }
    curl_multi_remove_handle(multi, easy);
    return result;
}
