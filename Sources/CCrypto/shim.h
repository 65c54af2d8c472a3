// OpenSSL's libcrypto: the one-shot HMAC() (not deprecated in OpenSSL 3) and EVP_sha256(),
// which sign the webhook requests.
#include <openssl/evp.h>
#include <openssl/hmac.h>
