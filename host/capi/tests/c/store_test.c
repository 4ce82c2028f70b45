/* A C program over render_store.h: stores renders, records history, runs GC and reads
 * back, on a bucket of C callbacks over an in-memory table and on a file:// store
 * (the folder given as argv[1]). tests/c_program.rs builds it with gcc and runs it. */

#include "render_store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                          \
        }                                                                        \
    } while (0)

/* Fails the program on an unexpected error, printing its message. */
static void ok(rs_error *e, const char *what) {
    if (e == NULL) return;
    const uint8_t *m;
    size_t n;
    rs_error_message(e, &m, &n);
    fprintf(stderr, "%s failed (%s): %.*s\n", what, rs_error_kind_name(rs_error_kind(e)), (int)n,
            (const char *)m);
    rs_error_free(e);
    exit(1);
}

/* ---- an in-memory bucket: keys and values in a growing array, under a lock ---- */

struct object {
    char *key;
    uint8_t *value;
    size_t len;
    int64_t seconds;
};

struct table {
    pthread_mutex_t lock;
    struct object *objects;
    size_t count, cap;
    int64_t clock; /* the bucket's own clock: one second per put */
    int dropped;
};

static struct object *find(struct table *t, const char *key, size_t len) {
    for (size_t i = 0; i < t->count; i++)
        if (strlen(t->objects[i].key) == len && memcmp(t->objects[i].key, key, len) == 0)
            return &t->objects[i];
    return NULL;
}

static void cb_get(void *data, const char *key, size_t key_len, uint64_t limit, rs_answer *a) {
    struct table *t = data;
    pthread_mutex_lock(&t->lock);
    struct object *o = find(t, key, key_len);
    if (o == NULL)
        rs_answer_not_found(a);
    else if (o->len > limit)
        rs_answer_too_large(a, o->len);
    else
        rs_answer_bytes(a, o->value, o->len);
    pthread_mutex_unlock(&t->lock);
}

static void cb_put(void *data, const char *key, size_t key_len, const uint8_t *value, size_t len,
                   rs_answer *a) {
    struct table *t = data;
    pthread_mutex_lock(&t->lock);
    struct object *o = find(t, key, key_len);
    if (o == NULL) {
        if (t->count == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 16;
            t->objects = realloc(t->objects, t->cap * sizeof *t->objects);
        }
        o = &t->objects[t->count++];
        o->key = strndup(key, key_len);
        o->value = NULL;
    }
    free(o->value);
    o->value = malloc(len ? len : 1);
    memcpy(o->value, value, len);
    o->len = len;
    o->seconds = ++t->clock;
    pthread_mutex_unlock(&t->lock);
    rs_answer_ok(a);
}

static void cb_exists(void *data, const char *key, size_t key_len, rs_answer *a) {
    struct table *t = data;
    pthread_mutex_lock(&t->lock);
    struct object *o = find(t, key, key_len);
    if (o == NULL)
        rs_answer_not_found(a);
    else
        rs_answer_size(a, o->len);
    pthread_mutex_unlock(&t->lock);
}

static void cb_list(void *data, const char *prefix, size_t prefix_len, rs_answer *a) {
    struct table *t = data;
    pthread_mutex_lock(&t->lock);
    /* In insertion order: the library sorts the listing. */
    for (size_t i = 0; i < t->count; i++) {
        struct object *o = &t->objects[i];
        if (strncmp(o->key, prefix, prefix_len) == 0)
            rs_answer_listed(a, o->key, strlen(o->key), o->len, o->seconds, 0);
    }
    pthread_mutex_unlock(&t->lock);
    rs_answer_ok(a);
}

static void cb_delete(void *data, const char *key, size_t key_len, rs_answer *a) {
    struct table *t = data;
    pthread_mutex_lock(&t->lock);
    struct object *o = find(t, key, key_len);
    if (o != NULL) {
        free(o->key);
        free(o->value);
        *o = t->objects[--t->count];
    }
    pthread_mutex_unlock(&t->lock);
    rs_answer_ok(a);
}

static void cb_delete_many(void *data, const rs_str *keys, size_t count, rs_answer *a) {
    for (size_t i = 0; i < count; i++) {
        /* Each key answered by its index; here by the one-key delete's logic. */
        struct table *t = data;
        pthread_mutex_lock(&t->lock);
        struct object *o = find(t, keys[i].data, keys[i].len);
        if (o != NULL) {
            free(o->key);
            free(o->value);
            *o = t->objects[--t->count];
        }
        pthread_mutex_unlock(&t->lock);
        rs_answer_key_ok(a, i);
    }
}

static void cb_drop(void *data) {
    ((struct table *)data)->dropped++;
}

/* ---- the scenario, on any store ---- */

static const char *NS = "default", *NAME = "guestbook";

/* The objects of a render, joined, with the end of each. */
static const char *V1[] = {"{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"}}"};
static const char *V2[] = {"{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"},\"data\":{\"x\":\"2\"}}",
                           "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"b\"}}"};

static rs_buf put(rs_store *s, const char **objects, size_t count) {
    char joined[1024] = "";
    size_t ends[8], len = 0;
    for (size_t i = 0; i < count; i++) {
        strcat(joined, objects[i]);
        len += strlen(objects[i]);
        ends[i] = len;
    }
    rs_buf ref = {0};
    ok(rs_store_put_render(s, NS, strlen(NS), NAME, strlen(NAME), (const uint8_t *)joined, len, ends,
                           count, &ref, NULL),
       "put-render");
    /* The same renderRef as the pure logic computes. */
    rs_buf again = {0};
    ok(rs_render_ref(NULL, (const uint8_t *)joined, len, ends, count, &again), "render-ref");
    CHECK(again.len == ref.len && memcmp(again.data, ref.data, ref.len) == 0);
    rs_buf_free(&again);
    return ref;
}

static void scenario(rs_store *s, const char *label) {
    rs_buf r1 = put(s, V1, 1), r2 = put(s, V2, 2);
    CHECK(r1.len == 71 && strncmp((const char *)r1.data, "sha256:", 7) == 0);
    CHECK(strlen((const char *)r1.data) == r1.len); /* text comes NUL-terminated */

    bool added = false;
    rs_time t1 = {1767225600, 0}, t2 = {1767225660, 500000000};
    ok(rs_store_record_history(s, NS, strlen(NS), NAME, strlen(NAME), (const char *)r1.data, r1.len,
                               t1, "v1", 2, &added, NULL),
       "record-history");
    CHECK(added);
    ok(rs_store_record_history(s, NS, strlen(NS), NAME, strlen(NAME), (const char *)r2.data, r2.len,
                               t2, "v2", 2, &added, NULL),
       "record-history");
    CHECK(added);
    ok(rs_store_record_history(s, NS, strlen(NS), NAME, strlen(NAME), (const char *)r1.data, r1.len,
                               t2, "again", 5, &added, NULL),
       "record-history");
    CHECK(!added); /* already in the history */

    rs_buf history = {0};
    ok(rs_store_list_history(s, NS, strlen(NS), NAME, strlen(NAME), &history, NULL), "list-history");
    CHECK(strstr((const char *)history.data, "\"summary\":\"v1\"") != NULL);
    CHECK(strstr((const char *)history.data, "\"summary\":\"v2\"") != NULL);
    rs_buf_free(&history);

    /* GC keeping one entry, no grace period: r1's entry and blob go. */
    rs_buf plan = {0}, trace = {0};
    rs_grace none = {{1767229200, 0}, 0};
    ok(rs_store_gc(s, NS, strlen(NS), NAME, strlen(NAME), 1, NULL, 0, NULL, 0, false, &none, &plan,
                   &trace),
       "gc");
    CHECK(strstr((const char *)plan.data, "\"deleteRenders\":[\"default/guestbook/renders/sha256:") != NULL);
    CHECK(trace.len > 0);

    /* The recorded GC replays to the same result. */
    bool matches = false;
    ok(rs_replay(NULL, (const char *)trace.data, trace.len, NULL, &matches, NULL, NULL), "replay");
    CHECK(matches);
    rs_buf_free(&plan);
    rs_buf_free(&trace);

    /* Reading back: r2 is there, r1 is gone. */
    rs_buf render = {0};
    ok(rs_store_get_render(s, NS, strlen(NS), NAME, strlen(NAME), (const char *)r2.data, r2.len,
                           &render, NULL),
       "get-render");
    const char *want =
        "{\"apiVersion\":\"v1\",\"data\":{\"x\":\"2\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n"
        "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"b\"}}\n";
    CHECK(render.len == strlen(want) && memcmp(render.data, want, render.len) == 0);
    rs_buf_free(&render);
    rs_error *e = rs_store_get_render(s, NS, strlen(NS), NAME, strlen(NAME), (const char *)r1.data,
                                      r1.len, &render, NULL);
    CHECK(rs_error_kind(e) == RS_ERROR_NOT_FOUND);
    CHECK(render.data == NULL && render.len == 0);
    rs_error_free(e);

    bool recorded = true;
    ok(rs_store_has_history_ref(s, NS, strlen(NS), NAME, strlen(NAME), (const char *)r1.data,
                                r1.len, &recorded, NULL),
       "has-history-ref");
    CHECK(!recorded);

    uint32_t deleted = 0;
    ok(rs_store_delete_release(s, NS, strlen(NS), NAME, strlen(NAME), &deleted, NULL), "delete-release");
    CHECK(deleted == 2); /* r2's blob and its entry */
    rs_buf_free(&r1);
    rs_buf_free(&r2);
    printf("%s: stored, recorded, collected and read back\n", label);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
        return 2;
    }
    CHECK(rs_abi_version() == RS_ABI_VERSION);

    /* A bucket of C callbacks. */
    struct table table = {.lock = PTHREAD_MUTEX_INITIALIZER};
    rs_bucket bucket = {
        .size = sizeof(rs_bucket),
        .user_data = &table,
        .get = cb_get,
        .put = cb_put,
        .exists = cb_exists,
        .list = cb_list,
        .delete_key = cb_delete,
        .delete_many = cb_delete_many,
        .drop = cb_drop,
    };
    rs_options options;
    rs_options_init(&options, sizeof options);
    CHECK(options.size == sizeof options && options.gc_grace_seconds == 600);
    rs_store *store = NULL;
    ok(rs_store_new(&bucket, &options, &store), "rs_store_new");
    scenario(store, "C bucket");
    rs_store_free(store);
    CHECK(table.dropped == 1);

    /* A file:// store. */
    char url[4096];
    snprintf(url, sizeof url, "file://%s?create_dir=true", argv[1]);
    store = NULL;
    ok(rs_store_open(url, strlen(url), NULL, &store), "rs_store_open");
    CHECK(store != NULL);
    scenario(store, "file:// store");
    rs_store_free(store);

    /* An empty URL is no store and no error; a bad one is a URL error. */
    store = (rs_store *)&table;
    CHECK(rs_store_open("", 0, NULL, &store) == NULL && store == NULL);
    rs_error *e = rs_store_open("ftp://x", 7, NULL, &store);
    CHECK(rs_error_kind(e) == RS_ERROR_URL && store == NULL);
    rs_error_free(e);

    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("the C program passed\n");
    return 0;
}
