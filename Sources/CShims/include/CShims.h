#ifndef SILEME_CSHIMS_H
#define SILEME_CSHIMS_H

// Typed, non-variadic wrappers around libcurl's variadic functions (Swift cannot call
// `curl_easy_setopt`/`curl_easy_getinfo` directly). One wrapper per argument type.

#include <curl/curl.h>
#include <stddef.h>
// timerfd and eventfd, which Swift's Glibc module does not import: the daemon's wall-clock timer
// and the stop signal wait on them.
#include <sys/eventfd.h>
#include <sys/timerfd.h>

CURLcode sileme_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode sileme_curl_setopt_pointer(CURL *handle, CURLoption option, const void *value);
CURLcode sileme_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode sileme_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
CURLcode sileme_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);

/// Signature of the upload read callback (same as CURLOPT_READFUNCTION).
typedef size_t (*sileme_read_callback)(char *buffer, size_t size, size_t nitems, void *userdata);
/// Signature of the debug callback (same as CURLOPT_DEBUGFUNCTION).
typedef int (*sileme_debug_callback)(CURL *handle, curl_infotype type, char *data, size_t size, void *userdata);

CURLcode sileme_curl_set_read_callback(CURL *handle, sileme_read_callback callback, void *userdata);
CURLcode sileme_curl_set_debug_callback(CURL *handle, sileme_debug_callback callback, void *userdata);

/// Signature of the transfer-progress callback (same as CURLOPT_XFERINFOFUNCTION).
typedef int (*sileme_progress_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

/// Installs a progress callback, which libcurl calls about once a second even while it waits.
CURLcode sileme_curl_set_progress_callback(CURL *handle, sileme_progress_callback callback, void *userdata);

/// Makes the handle discard any response body (instead of curl's default: writing it to stdout).
CURLcode sileme_curl_set_write_discard(CURL *handle);

/// Sets "allow some recipients to fail" where this libcurl knows it (7.69+); the option was
/// spelled CURLOPT_MAIL_RCPT_ALLLOWFAILS before 8.2. Returns CURLE_UNKNOWN_OPTION when absent.
CURLcode sileme_curl_set_rcpt_allow_fails(CURL *handle, long value);

/// Signature of the response body and response header callbacks (same as CURLOPT_WRITEFUNCTION
/// and CURLOPT_HEADERFUNCTION).
typedef size_t (*sileme_write_callback)(char *data, size_t size, size_t count, void *userdata);

/// Installs a callback that receives the response body (instead of curl's default: stdout).
CURLcode sileme_curl_set_write_callback(CURL *handle, sileme_write_callback callback, void *userdata);
/// Installs a callback that receives each response header line (status line included).
CURLcode sileme_curl_set_header_callback(CURL *handle, sileme_write_callback callback, void *userdata);

/// libcurl's process-wide setup, exactly once however many threads call it: SIGPIPE ignored (a
/// server closing the connection mid-write must not kill the process), then curl_global_init.
/// Returns CURLE_OK when libcurl is usable.
CURLcode sileme_curl_runtime_init(void);

/// Runs `easy`'s transfer inside `multi` until it ends, driving it at least every `poll_ms`
/// milliseconds so that the progress callback runs that often even while the server is silent.
/// Returns the transfer's result (CURLE_FAILED_INIT when the multi interface itself failed).
CURLcode sileme_curl_multi_run(CURLM *multi, CURL *easy, int poll_ms);

/// `CURLUSESSL_ALL` as the `long` that curl 7.88 expects.
long sileme_curl_usessl_all(void);

#endif
