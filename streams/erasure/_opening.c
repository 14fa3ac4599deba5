/* Sealing and opening sealed values in one call each: the worker's and the projector's hot
 * path (issue 43).
 *
 * The reference is the Python in streams/erasure/cipher.py and envelope.py; this module only
 * does what those do on the path where everything is well formed (sealing to the same
 * bytes), and returns None for anything else (a value that does not open, odd base64, a wrong header, an envelope that does
 * not unpack), so that the caller runs the reference code, which raises the error it always
 * raised. It never decides that a value is unreadable by itself.
 *
 * What it buys (docs/benchmarks.md, "Sealing cost"): opening a record is Python glue around
 * a few C calls (base64, AES-GCM through `cryptography`'s objects, struct unpacking, one
 * decode per text, an HMAC per memory key); here each of those is one call over the bytes.
 *
 * The cipher and digest contexts are static and used with the GIL held (no call releases
 * it), which makes them safe to share between Python threads.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <openssl/evp.h>
#include <stdint.h>
#include <string.h>

#define KEY_BYTES 32
#define NONCE_BYTES 12
#define TAG_BYTES 16
#define SHA256_BYTES 32
#define SHA256_BLOCK 64
#define ENVELOPE_HEAD 9 /* flags (1), metadata pairs (4), triggers (4) */

static EVP_CIPHER_CTX *gcm_ctx;
static EVP_CIPHER_CTX *seal_ctx;
static EVP_MD_CTX *md_ctx;
static const EVP_CIPHER *gcm;
static const EVP_MD *sha256;

static void
release_views(Py_buffer *views, int count)
{
    for (int i = 0; i < count; i++) {
        PyBuffer_Release(&views[i]);
    }
}

/* Byte views of the arguments at positions, all or none: 0 (none held) with the exception
 * of the first that is not bytes-like. */
static int
views_of(PyObject *const *args, const int *positions, int count, Py_buffer *views)
{
    for (int i = 0; i < count; i++) {
        if (PyObject_GetBuffer(args[positions[i]], &views[i], PyBUF_SIMPLE) != 0) {
            release_views(views, i);
            return 0;
        }
    }
    return 1;
}

static void
put_big_endian(unsigned char *at, uint32_t value)
{
    at[0] = (unsigned char)(value >> 24);
    at[1] = (unsigned char)(value >> 16);
    at[2] = (unsigned char)(value >> 8);
    at[3] = (unsigned char)value;
}

/* AES-256-GCM: nonce (12) || ciphertext || tag (16) at data[start:], into out (the
 * ciphertext's length). 1 when it opens. A NULL key: the key of the call just before, whose
 * schedule is kept (setting up a key costs more than opening a few hundred bytes); only
 * where no Python code can run between the two calls. */
static int
gcm_decrypt(const unsigned char *key, const unsigned char *data, Py_ssize_t size,
            const unsigned char *aad, Py_ssize_t aad_size, unsigned char *out)
{
    int written = 0;
    Py_ssize_t body = size - NONCE_BYTES - TAG_BYTES;
    if (body < 0 || body > INT_MAX || aad_size > INT_MAX) {
        return 0;
    }
    if ((key == NULL ? EVP_DecryptInit_ex(gcm_ctx, NULL, NULL, NULL, data)
                     : EVP_DecryptInit_ex(gcm_ctx, gcm, NULL, key, data)) != 1) {
        return 0;
    }
    if (aad_size > 0 && EVP_DecryptUpdate(gcm_ctx, NULL, &written, aad, (int)aad_size) != 1) {
        return 0;
    }
    if (body > 0 &&
        EVP_DecryptUpdate(gcm_ctx, out, &written, data + NONCE_BYTES, (int)body) != 1) {
        return 0;
    }
    if (EVP_CIPHER_CTX_ctrl(gcm_ctx, EVP_CTRL_GCM_SET_TAG, TAG_BYTES,
                            (void *)(data + size - TAG_BYTES)) != 1) {
        return 0;
    }
    return EVP_DecryptFinal_ex(gcm_ctx, out + written, &written) == 1;
}

/* HMAC-SHA256 (RFC 2104) of the concatenation of parts under a key of at most 64 bytes. */
static int
hmac(const unsigned char *key, size_t key_size, int count, const unsigned char *const *parts,
     const size_t *sizes, unsigned char *mac)
{
    unsigned char inner_pad[SHA256_BLOCK], outer_pad[SHA256_BLOCK], inner[SHA256_BYTES];
    unsigned int size = 0;
    memset(inner_pad, 0x36, SHA256_BLOCK);
    memset(outer_pad, 0x5c, SHA256_BLOCK);
    for (size_t i = 0; i < key_size; i++) {
        inner_pad[i] ^= key[i];
        outer_pad[i] ^= key[i];
    }
    if (EVP_DigestInit_ex(md_ctx, sha256, NULL) != 1 ||
        EVP_DigestUpdate(md_ctx, inner_pad, SHA256_BLOCK) != 1) {
        return 0;
    }
    for (int i = 0; i < count; i++) {
        if (EVP_DigestUpdate(md_ctx, parts[i], sizes[i]) != 1) {
            return 0;
        }
    }
    return EVP_DigestFinal_ex(md_ctx, inner, &size) == 1 &&
           EVP_DigestInit_ex(md_ctx, sha256, NULL) == 1 &&
           EVP_DigestUpdate(md_ctx, outer_pad, SHA256_BLOCK) == 1 &&
           EVP_DigestUpdate(md_ctx, inner, SHA256_BYTES) == 1 &&
           EVP_DigestFinal_ex(md_ctx, mac, &size) == 1;
}

PyDoc_STRVAR(hmac_sha256_doc,
             "hmac_sha256(key, message) -> bytes\n\n"
             "HMAC-SHA256 of message under a key of at most 64 bytes (RFC 2104).");

static PyObject *
hmac_sha256(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const int positions[2] = {0, 1};
    Py_buffer views[2]; /* key, message */
    unsigned char mac[SHA256_BYTES];
    PyObject *result = NULL;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "hmac_sha256 takes a key and a message");
        return NULL;
    }
    if (!views_of(args, positions, 2, views)) {
        return NULL;
    }
    if (views[0].len > SHA256_BLOCK) {
        PyErr_SetString(PyExc_ValueError, "an HMAC key here is at most 64 bytes");
    } else {
        const unsigned char *parts[1] = {views[1].buf};
        size_t sizes[1] = {(size_t)views[1].len};
        if (hmac(views[0].buf, (size_t)views[0].len, 1, parts, sizes, mac)) {
            result = PyBytes_FromStringAndSize((const char *)mac, SHA256_BYTES);
        } else {
            PyErr_SetString(PyExc_RuntimeError, "OpenSSL's SHA-256 failed");
        }
    }
    release_views(views, 2);
    return result;
}

/* The plaintext of sealed[start:] (nonce, ciphertext, tag) as bytes, or Py_None when it
 * does not open; NULL with an exception only when memory runs out. */
static PyObject *
opened_bytes(const unsigned char *key, const unsigned char *sealed, Py_ssize_t size,
             const unsigned char *aad, Py_ssize_t aad_size)
{
    PyObject *out;
    if (size < NONCE_BYTES + TAG_BYTES) {
        Py_RETURN_NONE;
    }
    out = PyBytes_FromStringAndSize(NULL, size - NONCE_BYTES - TAG_BYTES);
    if (out == NULL) {
        return NULL;
    }
    if (!gcm_decrypt(key, sealed, size, aad, aad_size, (unsigned char *)PyBytes_AS_STRING(out))) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    return out;
}

static int
key_of(const Py_buffer *key)
{
    if (key->len != KEY_BYTES) {
        PyErr_SetString(PyExc_ValueError, "an AES-256 key is 32 bytes");
        return 0;
    }
    return 1;
}

PyDoc_STRVAR(open_after_doc,
             "open_after(key, sealed, header, aad) -> bytes | None\n\n"
             "The plaintext of sealed[header:] (nonce, ciphertext, tag) under the AES-256-GCM "
             "key, or None when it does not open.");

static PyObject *
open_after(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const int positions[3] = {0, 1, 3};
    Py_buffer views[3]; /* key, sealed, aad */
    Py_ssize_t header;
    PyObject *result = NULL;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "open_after takes a key, a value, a header and an aad");
        return NULL;
    }
    header = PyLong_AsSsize_t(args[2]);
    if ((header == -1 && PyErr_Occurred()) || !views_of(args, positions, 3, views)) {
        return NULL;
    }
    if (key_of(&views[0])) {
        if (header < 0 || header > views[1].len) {
            result = Py_NewRef(Py_None);
        } else {
            result = opened_bytes(views[0].buf, (const unsigned char *)views[1].buf + header,
                                  views[1].len - header, views[2].buf, views[2].len);
        }
    }
    release_views(views, 3);
    return result;
}

static const char b64url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* base64url or standard base64 without padding (as cipher.b64url_bytes reads what writers
 * write); -1 for anything else, which the reference path then judges. */
static signed char b64_value[256];

static Py_ssize_t
b64_decode(const unsigned char *text, Py_ssize_t size, unsigned char *out)
{
    Py_ssize_t written = 0;
    uint32_t bits = 0;
    int held = 0;
    if (size % 4 == 1) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < size; i++) {
        signed char value = b64_value[text[i]];
        if (value < 0) {
            return -1;
        }
        bits = (bits << 6) | (uint32_t)value;
        held += 6;
        if (held >= 8) {
            held -= 8;
            out[written++] = (unsigned char)(bits >> held);
            bits &= (1u << held) - 1;
        }
    }
    return written;
}

static uint32_t
big_endian(const unsigned char *at)
{
    return ((uint32_t)at[0] << 24) | ((uint32_t)at[1] << 16) | ((uint32_t)at[2] << 8) | at[3];
}

/* envelope.unpack over raw: (content, speaker | None, metadata, triggers), or Py_None when
 * raw is not such a value. */
static PyObject *
unpacked(const unsigned char *raw, Py_ssize_t size)
{
    uint64_t pairs, triggers, count, at;
    int speaker;
    PyObject *texts = NULL, *metadata = NULL, *trigger_tuple = NULL, *result = NULL;
    if (size < ENVELOPE_HEAD) {
        Py_RETURN_NONE;
    }
    speaker = raw[0] & 1;
    pairs = big_endian(raw + 1);
    triggers = big_endian(raw + 5);
    count = 1 + (uint64_t)speaker + 2 * pairs + triggers;
    at = ENVELOPE_HEAD + 4 * count;
    if (at > (uint64_t)size) {
        Py_RETURN_NONE;
    }
    texts = PyList_New((Py_ssize_t)count);
    if (texts == NULL) {
        return NULL;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t length = big_endian(raw + ENVELOPE_HEAD + 4 * i);
        PyObject *text;
        if (at + length > (uint64_t)size) {
            Py_DECREF(texts);
            Py_RETURN_NONE;
        }
        text = PyUnicode_DecodeUTF8((const char *)raw + at, (Py_ssize_t)length, "surrogatepass");
        if (text == NULL) {
            Py_DECREF(texts);
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                return NULL;
            }
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        PyList_SET_ITEM(texts, (Py_ssize_t)i, text);
        at += length;
    }
    if (at != (uint64_t)size) {
        Py_DECREF(texts);
        Py_RETURN_NONE;
    }
    metadata = PyDict_New();
    if (metadata == NULL) {
        goto done;
    }
    for (uint64_t i = 0; i < pairs; i++) {
        Py_ssize_t first = 1 + speaker + 2 * (Py_ssize_t)i;
        if (PyDict_SetItem(metadata, PyList_GET_ITEM(texts, first),
                           PyList_GET_ITEM(texts, first + 1)) != 0) {
            goto done;
        }
    }
    trigger_tuple = PyList_GetSlice(texts, (Py_ssize_t)(1 + speaker + 2 * pairs),
                                    (Py_ssize_t)count);
    if (trigger_tuple == NULL) {
        goto done;
    }
    Py_SETREF(trigger_tuple, PyList_AsTuple(trigger_tuple));
    if (trigger_tuple == NULL) {
        goto done;
    }
    result = PyTuple_Pack(4, PyList_GET_ITEM(texts, 0),
                          speaker ? PyList_GET_ITEM(texts, 1) : Py_None, metadata,
                          trigger_tuple);
done:
    Py_XDECREF(trigger_tuple);
    Py_XDECREF(metadata);
    Py_DECREF(texts);
    return result;
}

/* The envelope sealed in text[skip:] (base64url of header, nonce, ciphertext, tag) opened
 * into *plain (PyMem_Malloc'd, the caller frees it; *size its length): 1 when it opens, 0
 * for anything the reference must judge, -1 with an exception for a wrong argument or no
 * memory. No Python code runs here. */
static int
envelope_plain(const Py_buffer *key, PyObject *value, Py_ssize_t skip, const Py_buffer *header,
               const Py_buffer *aad, unsigned char **plain, Py_ssize_t *plain_size)
{
    Py_ssize_t size, decoded, header_size = header->len;
    const unsigned char *text;
    unsigned char *raw;
    int opened = 0;
    *plain = NULL;
    if (!PyUnicode_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "a sealed envelope is a str");
        return -1;
    }
    if (!PyUnicode_IS_ASCII(value)) {
        return 0;
    }
    size = PyUnicode_GET_LENGTH(value);
    if (skip < 0 || skip > size) {
        return 0;
    }
    text = (const unsigned char *)PyUnicode_DATA(value) + skip;
    size -= skip;
    if (!key_of(key)) {
        return -1;
    }
    raw = PyMem_Malloc((size_t)(size / 4 * 3 + 3));
    if (raw == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    decoded = b64_decode(text, size, raw);
    if (decoded >= header_size + NONCE_BYTES + TAG_BYTES &&
        memcmp(raw, header->buf, (size_t)header_size) == 0) {
        *plain_size = decoded - header_size - NONCE_BYTES - TAG_BYTES;
        *plain = PyMem_Malloc((size_t)(*plain_size + 1));
        if (*plain == NULL) {
            PyErr_NoMemory();
            opened = -1;
        } else if (gcm_decrypt(key->buf, raw + header_size, decoded - header_size, aad->buf,
                               aad->len, *plain)) {
            opened = 1;
        }
    }
    PyMem_Free(raw);
    if (opened != 1) {
        PyMem_Free(*plain);
        *plain = NULL;
    }
    return opened;
}

PyDoc_STRVAR(open_memory_doc,
             "open_memory(key, text, skip, header, aad, embedding, embedding_aad) -> tuple | None\n\n"
             "A memory's envelope (streams/erasure/envelope.py) sealed in text[skip:] "
             "(base64url of header, nonce, ciphertext, tag), opened with aad and unpacked, "
             "and its embedding with it: (content, speaker or None, metadata, triggers, "
             "embedding). The embedding: None "
             "stays None, a length that is a multiple of 4 is packed float32 written before "
             "sealing and is returned as it is, anything else is header, nonce, ciphertext, "
             "tag and is opened with embedding_aad. None when either does not open.");

static PyObject *
open_memory(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const int positions[4] = {0, 3, 4, 6};
    Py_buffer views[4]; /* key, header, aad, embedding aad */
    Py_buffer embedding;
    Py_ssize_t skip, size = 0, header_size;
    unsigned char *plain;
    PyObject *texts = NULL, *opened = NULL, *result = NULL;
    int state;
    if (nargs != 7 || !PyUnicode_Check(args[1]) ||
        (args[5] != Py_None && !PyBytes_Check(args[5]))) {
        PyErr_SetString(PyExc_TypeError,
                        "open_memory takes a key, a text, a skip, a header, an aad, an "
                        "embedding (bytes or None) and its aad");
        return NULL;
    }
    skip = PyLong_AsSsize_t(args[2]);
    if ((skip == -1 && PyErr_Occurred()) || !views_of(args, positions, 4, views)) {
        return NULL;
    }
    state = envelope_plain(&views[0], args[1], skip, &views[1], &views[2], &plain, &size);
    if (state != 1) {
        release_views(views, 4);
        return state == 0 ? Py_NewRef(Py_None) : NULL;
    }
    header_size = views[1].len;
    if (args[5] == Py_None || PyBytes_GET_SIZE(args[5]) % 4 == 0) {
        opened = Py_NewRef(args[5]); /* none, or written before sealing: as it is */
    } else if (PyObject_GetBuffer(args[5], &embedding, PyBUF_SIMPLE) == 0) {
        if (embedding.len < header_size ||
            memcmp(embedding.buf, views[1].buf, (size_t)header_size) != 0) {
            opened = Py_NewRef(Py_None);
        } else {
            /* the envelope's key, still set: no Python code ran since (a bytes object is
             * no container, so making one never starts the garbage collector) */
            opened = opened_bytes(NULL, (const unsigned char *)embedding.buf + header_size,
                                  embedding.len - header_size, views[3].buf, views[3].len);
        }
        PyBuffer_Release(&embedding);
    }
    if (opened == Py_None && args[5] != Py_None) { /* does not open: the reference says why */
        result = Py_NewRef(Py_None);
    } else if (opened != NULL) {
        texts = unpacked(plain, size);
        if (texts == Py_None) {
            result = Py_NewRef(Py_None);
        } else if (texts != NULL) {
            result = PyTuple_Pack(5, PyTuple_GET_ITEM(texts, 0), PyTuple_GET_ITEM(texts, 1),
                                  PyTuple_GET_ITEM(texts, 2), PyTuple_GET_ITEM(texts, 3),
                                  opened);
        }
    }
    Py_XDECREF(texts);
    Py_XDECREF(opened);
    PyMem_Free(plain);
    release_views(views, 4);
    return result;
}

#define WRAP_LABEL "memstream/memory-key/"
#define WRAP_LABEL_BYTES (sizeof WRAP_LABEL - 1)

PyDoc_STRVAR(unwrap_memory_key_doc,
             "unwrap_memory_key(key, wrapped, user_id, memory_id, generation) -> bytes | None\n\n"
             "A memory's key wrapped (nonce, ciphertext, tag) under the AES-256-GCM key, "
             "opened with memory_keys.wrap_context(user_id, memory_id, generation) as its "
             "associated data, built here; None when it does not open or the ids or the "
             "generation are not what that context encodes (the reference judges).");

static PyObject *
unwrap_memory_key(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const int positions[2] = {0, 1};
    Py_buffer views[2]; /* key, wrapped */
    const char *user, *memory;
    Py_ssize_t user_size, memory_size;
    long long generation;
    unsigned char *aad, *at;
    PyObject *result = NULL;
    if (nargs != 5 || !PyUnicode_Check(args[2]) || !PyUnicode_Check(args[3]) ||
        !PyLong_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError,
                        "unwrap_memory_key takes a key, a wrapped key, a user id, a memory id "
                        "and a generation");
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(args[2]) || !PyUnicode_IS_ASCII(args[3])) {
        Py_RETURN_NONE; /* ids of ASCII alone here: the reference encodes the others */
    }
    generation = PyLong_AsLongLong(args[4]);
    if (generation == -1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
            return NULL;
        }
        PyErr_Clear();
        Py_RETURN_NONE; /* out of range: the reference raises */
    }
    user = (const char *)PyUnicode_1BYTE_DATA(args[2]);
    user_size = PyUnicode_GET_LENGTH(args[2]);
    memory = (const char *)PyUnicode_1BYTE_DATA(args[3]);
    memory_size = PyUnicode_GET_LENGTH(args[3]);
    if (user_size > UINT32_MAX || memory_size > UINT32_MAX) {
        Py_RETURN_NONE;
    }
    if (!views_of(args, positions, 2, views)) {
        return NULL;
    }
    aad = PyMem_Malloc(WRAP_LABEL_BYTES + 4 + (size_t)user_size + 4 + (size_t)memory_size + 8);
    if (aad == NULL) {
        release_views(views, 2);
        return PyErr_NoMemory();
    }
    at = aad;
    memcpy(at, WRAP_LABEL, WRAP_LABEL_BYTES);
    at += WRAP_LABEL_BYTES;
    put_big_endian(at, (uint32_t)user_size);
    memcpy(at + 4, user, (size_t)user_size);
    at += 4 + user_size;
    put_big_endian(at, (uint32_t)memory_size);
    memcpy(at + 4, memory, (size_t)memory_size);
    at += 4 + memory_size;
    put_big_endian(at, (uint32_t)((unsigned long long)generation >> 32));
    put_big_endian(at + 4, (uint32_t)((unsigned long long)generation & 0xffffffffu));
    at += 8;
    if (key_of(&views[0])) {
        result = opened_bytes(views[0].buf, views[1].buf, views[1].len, aad, at - aad);
    }
    PyMem_Free(aad);
    release_views(views, 2);
    return result;
}

/* header || nonce || ciphertext || tag into out (header_size + 12 + plaintext_size + 16
 * bytes), the nonce the first 12 bytes of HMAC-SHA256 under nonce_key of len(aad) as 4 bytes
 * big-endian, aad, plaintext (cipher.py's FieldCipher.seal). 0 with an exception set. */
static int
seal_into(const unsigned char *key, const Py_buffer *nonce_key, const unsigned char *header,
          Py_ssize_t header_size, const unsigned char *plaintext, Py_ssize_t plaintext_size,
          const Py_buffer *aad, unsigned char *out)
{
    unsigned char mac[SHA256_BYTES];
    unsigned char aad_size[4];
    const unsigned char *message[3] = {aad_size, aad->buf, plaintext};
    size_t sizes[3] = {4, (size_t)aad->len, (size_t)plaintext_size};
    int written = 0;
    if (nonce_key->len > SHA256_BLOCK || plaintext_size > INT_MAX - TAG_BYTES ||
        aad->len > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "a nonce key over 64 bytes, or a value over 2 GB");
        return 0;
    }
    put_big_endian(aad_size, (uint32_t)aad->len);
    if (!hmac(nonce_key->buf, (size_t)nonce_key->len, 3, message, sizes, mac)) {
        PyErr_SetString(PyExc_RuntimeError, "OpenSSL's SHA-256 failed");
        return 0;
    }
    memcpy(out, header, (size_t)header_size);
    out += header_size;
    memcpy(out, mac, NONCE_BYTES);
    out += NONCE_BYTES;
    if (EVP_EncryptInit_ex(seal_ctx, gcm, NULL, key, mac) != 1 ||
        (aad->len > 0 &&
         EVP_EncryptUpdate(seal_ctx, NULL, &written, aad->buf, (int)aad->len) != 1) ||
        (plaintext_size > 0 &&
         EVP_EncryptUpdate(seal_ctx, out, &written, plaintext, (int)plaintext_size) != 1) ||
        EVP_EncryptFinal_ex(seal_ctx, out + plaintext_size, &written) != 1 ||
        EVP_CIPHER_CTX_ctrl(seal_ctx, EVP_CTRL_GCM_GET_TAG, TAG_BYTES, out + plaintext_size) !=
            1) {
        PyErr_SetString(PyExc_RuntimeError, "OpenSSL's AES-256-GCM failed");
        return 0;
    }
    return 1;
}

PyDoc_STRVAR(seal_doc,
             "seal(key, nonce_key, header, plaintext, aad) -> bytes\n\n"
             "header || nonce || ciphertext || tag: AES-256-GCM under key with the synthetic "
             "nonce cipher.py's FieldCipher.seal makes (the first 12 bytes of HMAC-SHA256 "
             "under nonce_key of len(aad) as 4 bytes big-endian, aad, plaintext); the same "
             "bytes as that reference.");

static PyObject *
seal(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const int positions[5] = {0, 1, 2, 3, 4};
    Py_buffer parts[5]; /* key, nonce key, header, plaintext, aad */
    PyObject *result = NULL;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "seal takes a key, a nonce key, a header, a plaintext and an aad");
        return NULL;
    }
    if (!views_of(args, positions, 5, parts)) {
        return NULL;
    }
    if (key_of(&parts[0])) {
        result = PyBytes_FromStringAndSize(NULL, parts[2].len + NONCE_BYTES + parts[3].len +
                                                     TAG_BYTES);
    }
    if (result != NULL &&
        !seal_into(parts[0].buf, &parts[1], parts[2].buf, parts[2].len, parts[3].buf,
                   parts[3].len, &parts[4], (unsigned char *)PyBytes_AS_STRING(result))) {
        Py_CLEAR(result);
    }
    release_views(parts, 5);
    return result;
}

/* raw as base64url without padding after prefix, as a str (cipher.b64url_text). */
static PyObject *
b64url_text(const char *prefix, Py_ssize_t prefix_size, const unsigned char *raw,
            Py_ssize_t size)
{
    Py_ssize_t encoded = size / 3 * 4 + (size % 3 == 0 ? 0 : size % 3 + 1);
    PyObject *text = PyUnicode_New(prefix_size + encoded, 127);
    unsigned char *out;
    Py_ssize_t i = 0;
    if (text == NULL) {
        return NULL;
    }
    out = PyUnicode_1BYTE_DATA(text);
    memcpy(out, prefix, (size_t)prefix_size);
    out += prefix_size;
    for (; i + 2 < size; i += 3) {
        uint32_t bits = ((uint32_t)raw[i] << 16) | ((uint32_t)raw[i + 1] << 8) | raw[i + 2];
        *out++ = b64url_alphabet[bits >> 18];
        *out++ = b64url_alphabet[(bits >> 12) & 63];
        *out++ = b64url_alphabet[(bits >> 6) & 63];
        *out++ = b64url_alphabet[bits & 63];
    }
    if (size - i == 1) {
        *out++ = b64url_alphabet[raw[i] >> 2];
        *out++ = b64url_alphabet[(raw[i] & 3) << 4];
    } else if (size - i == 2) {
        uint32_t bits = ((uint32_t)raw[i] << 8) | raw[i + 1];
        *out++ = b64url_alphabet[bits >> 10];
        *out++ = b64url_alphabet[(bits >> 4) & 63];
        *out++ = b64url_alphabet[(bits & 15) << 2];
    }
    return text;
}

PyDoc_STRVAR(seal_envelope_doc,
             "seal_envelope(key, nonce_key, header, prefix, content, speaker, metadata, "
             "triggers, aad) -> str | None\n\n"
             "A memory's texts packed as envelope.pack packs them, sealed as seal() seals and "
             "written as prefix + base64url: the reference's bytes. None when a text is not "
             "UTF-8 as it stands (a lone surrogate): the reference encodes those.");

/* A text's UTF-8 bytes: an ASCII str's own (no copy), else a new bytes object kept in *owned
 * (not PyUnicode_AsUTF8AndSize, which would keep a UTF-8 copy inside every str the engine
 * holds). 0 with no exception: not UTF-8 as it stands (a lone surrogate). */
static int
utf8_of(PyObject *text, const char **data, Py_ssize_t *size, PyObject **owned)
{
    *owned = NULL;
    if (PyUnicode_IS_ASCII(text)) {
        *data = (const char *)PyUnicode_1BYTE_DATA(text);
        *size = PyUnicode_GET_LENGTH(text);
        return 1;
    }
    *owned = PyUnicode_AsUTF8String(text);
    if (*owned == NULL) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
            PyErr_Clear();
        }
        return 0;
    }
    *data = PyBytes_AS_STRING(*owned);
    *size = PyBytes_GET_SIZE(*owned);
    return 1;
}

static PyObject *
seal_envelope(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const int positions[4] = {0, 1, 2, 8};
    Py_buffer views[4]; /* key, nonce key, header, aad */
    PyObject *metadata, *triggers, *name, *value, *result = NULL;
    PyObject **texts = NULL, **owned = NULL;
    const char **data = NULL;
    Py_ssize_t *sizes = NULL;
    Py_ssize_t count, size, pairs, position = 0, n = 0, at;
    int speaker;
    unsigned char *packed = NULL, *sealed = NULL;
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "seal_envelope takes nine arguments");
        return NULL;
    }
    if (!PyUnicode_Check(args[3]) || !PyUnicode_IS_ASCII(args[3]) || !PyUnicode_Check(args[4]) ||
        (args[5] != Py_None && !PyUnicode_Check(args[5])) || !PyDict_CheckExact(args[6]) ||
        !PyTuple_CheckExact(args[7])) {
        Py_RETURN_NONE; /* not a memory's texts as the engine holds them: the reference's */
    }
    speaker = args[5] != Py_None;
    metadata = args[6];
    triggers = args[7];
    pairs = PyDict_GET_SIZE(metadata);
    if (pairs > UINT32_MAX || PyTuple_GET_SIZE(triggers) > UINT32_MAX) {
        Py_RETURN_NONE;
    }
    count = 1 + speaker + 2 * pairs + PyTuple_GET_SIZE(triggers);
    texts = PyMem_Calloc((size_t)count, sizeof(PyObject *));
    owned = PyMem_Calloc((size_t)count, sizeof(PyObject *));
    data = PyMem_Calloc((size_t)count, sizeof(const char *));
    sizes = PyMem_Calloc((size_t)count, sizeof(Py_ssize_t));
    if (texts == NULL || owned == NULL || data == NULL || sizes == NULL) {
        PyErr_NoMemory();
        goto free_texts;
    }
    texts[n++] = args[4];
    if (speaker) {
        texts[n++] = args[5];
    }
    while (PyDict_Next(metadata, &position, &name, &value)) {
        texts[n++] = name;
        texts[n++] = value;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(triggers); i++) {
        texts[n++] = PyTuple_GET_ITEM(triggers, i);
    }
    size = ENVELOPE_HEAD + 4 * count;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!PyUnicode_Check(texts[i]) || !utf8_of(texts[i], &data[i], &sizes[i], &owned[i]) ||
            sizes[i] > UINT32_MAX) {
            if (!PyErr_Occurred()) {
                result = Py_NewRef(Py_None); /* the reference encodes (or refuses) it */
            }
            goto free_texts;
        }
        size += sizes[i];
    }
    packed = PyMem_Malloc((size_t)size);
    if (packed == NULL) {
        PyErr_NoMemory();
        goto free_texts;
    }
    packed[0] = (unsigned char)speaker;
    put_big_endian(packed + 1, (uint32_t)pairs);
    put_big_endian(packed + 5, (uint32_t)PyTuple_GET_SIZE(triggers));
    at = ENVELOPE_HEAD + 4 * count;
    for (Py_ssize_t i = 0; i < count; i++) {
        put_big_endian(packed + ENVELOPE_HEAD + 4 * i, (uint32_t)sizes[i]);
        memcpy(packed + at, data[i], (size_t)sizes[i]);
        at += sizes[i];
    }
    if (!views_of(args, positions, 4, views)) {
        goto free_texts;
    }
    if (key_of(&views[0])) {
        Py_ssize_t sealed_size = views[2].len + NONCE_BYTES + size + TAG_BYTES;
        sealed = PyMem_Malloc((size_t)sealed_size);
        if (sealed == NULL) {
            PyErr_NoMemory();
        } else if (seal_into(views[0].buf, &views[1], views[2].buf, views[2].len, packed, size,
                             &views[3], sealed)) {
            result = b64url_text((const char *)PyUnicode_1BYTE_DATA(args[3]),
                                 PyUnicode_GET_LENGTH(args[3]), sealed, sealed_size);
        }
    }
    release_views(views, 4);
free_texts:
    if (owned != NULL) {
        for (Py_ssize_t i = 0; i < count; i++) {
            Py_XDECREF(owned[i]);
        }
    }
    PyMem_Free(sealed);
    PyMem_Free(packed);
    PyMem_Free(sizes);
    PyMem_Free(data);
    PyMem_Free(owned);
    PyMem_Free(texts);
    return result;
}

static PyMethodDef methods[] = {
    {"hmac_sha256", (PyCFunction)(void (*)(void))hmac_sha256, METH_FASTCALL, hmac_sha256_doc},
    {"open_after", (PyCFunction)(void (*)(void))open_after, METH_FASTCALL, open_after_doc},
    {"open_memory", (PyCFunction)(void (*)(void))open_memory, METH_FASTCALL, open_memory_doc},
    {"unwrap_memory_key", (PyCFunction)(void (*)(void))unwrap_memory_key, METH_FASTCALL,
     unwrap_memory_key_doc},
    {"seal", (PyCFunction)(void (*)(void))seal, METH_FASTCALL, seal_doc},
    {"seal_envelope", (PyCFunction)(void (*)(void))seal_envelope, METH_FASTCALL,
     seal_envelope_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "streams.erasure._opening",
    "Sealing and opening in one call each (the reference: cipher.py, envelope.py).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__opening(void)
{
    memset(b64_value, -1, sizeof b64_value);
    for (int i = 0; b64url_alphabet[i] != '\0'; i++) {
        b64_value[(unsigned char)b64url_alphabet[i]] = (signed char)i;
    }
    b64_value['+'] = 62; /* the standard alphabet's two, which cipher.b64url_bytes reads too */
    b64_value['/'] = 63;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    /* fetched once: the legacy getters make every initialisation fetch again */
    gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
#else
    gcm = EVP_aes_256_gcm();
    sha256 = EVP_sha256();
#endif
    gcm_ctx = EVP_CIPHER_CTX_new();
    seal_ctx = EVP_CIPHER_CTX_new();
    md_ctx = EVP_MD_CTX_new();
    if (gcm == NULL || sha256 == NULL || gcm_ctx == NULL || seal_ctx == NULL || md_ctx == NULL) {
        PyErr_SetString(PyExc_ImportError, "OpenSSL has no AES-256-GCM or SHA-256 here");
        return NULL;
    }
    return PyModule_Create(&module);
}
