// libsecret for Swift. Variadic C functions do not import, so the store uses the `v` forms;
// these small inline helpers build their GHashTable arguments and test GError domains (the
// G_IO_ERROR / G_DBUS_ERROR / SECRET_ERROR macros are function calls Swift cannot see).
// The object-path API (secret-paths.h, in libsecret since 0.7) is marked unstable: it creates
// items without a SecretCollection proxy, whose ItemCreated/ItemDeleted signal handlers leak a
// GVariant per signal in libsecret 0.20.5.
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// The attribute table {application[, kind[, key]]}; strings are copied. Free with
// g_hash_table_unref. A NULL kind or key leaves that attribute out (a search over every one).
static inline GHashTable *otl_secret_attributes_new(const char *application, const char *kind,
                                                    const char *key) {
  GHashTable *table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_hash_table_insert(table, g_strdup("application"), g_strdup(application));
  if (kind != NULL) g_hash_table_insert(table, g_strdup("kind"), g_strdup(kind));
  if (key != NULL) g_hash_table_insert(table, g_strdup("key"), g_strdup(key));
  return table;
}

// The schema {application, kind, key: string}. Free with secret_schema_unref.
static inline SecretSchema *otl_secret_schema_new(const char *name) {
  GHashTable *types = g_hash_table_new(g_str_hash, g_str_equal);
  g_hash_table_insert(types, (gpointer) "application",
                      GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING));
  g_hash_table_insert(types, (gpointer) "kind", GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING));
  g_hash_table_insert(types, (gpointer) "key", GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING));
  SecretSchema *schema = secret_schema_newv(name, SECRET_SCHEMA_NONE, types);
  g_hash_table_unref(types);
  return schema;
}

// The value of one attribute of an item, copied (free with g_free), or NULL.
static inline char *otl_secret_item_attribute(SecretItem *item, const char *name) {
  GHashTable *attributes = secret_item_get_attributes(item);
  if (attributes == NULL) return NULL;
  char *value = g_strdup((const char *) g_hash_table_lookup(attributes, name));
  g_hash_table_unref(attributes);
  return value;
}

static inline gboolean otl_error_is_io(const GError *error, int code) {
  return g_error_matches(error, G_IO_ERROR, code);
}

static inline gboolean otl_error_is_dbus(const GError *error, int code) {
  return g_error_matches(error, G_DBUS_ERROR, code);
}

static inline gboolean otl_error_is_secret(const GError *error, int code) {
  return g_error_matches(error, SECRET_ERROR, code);
}

// Unrefs every object of a list and frees the list.
static inline void otl_object_list_free(GList *list) { g_list_free_full(list, g_object_unref); }

// The D-Bus object path of a libsecret object (a SecretItem or SecretCollection proxy).
static inline const char *otl_object_path(gpointer proxy) {
  return g_dbus_proxy_get_object_path(G_DBUS_PROXY(proxy));
}

// The D-Bus connection a libsecret proxy (the SecretService) talks over (not a new reference).
static inline GDBusConnection *otl_proxy_connection(gpointer proxy) {
  return g_dbus_proxy_get_connection(G_DBUS_PROXY(proxy));
}

// Finishes g_bus_get and, on the shared connection it returns, turns off exit-on-close (GIO's
// default for a message bus connection: raise(SIGTERM) when the bus goes away). Called in the
// call's own callback, so no "closed" emission already queued on the context can run first.
static inline GDBusConnection *otl_bus_get_finish_keeping_process(GAsyncResult *result,
                                                                  GError **error) {
  GDBusConnection *connection = g_bus_get_finish(result, error);
  if (connection != NULL) g_dbus_connection_set_exit_on_close(connection, FALSE);
  return connection;
}

// The D-Bus properties of a new item: its label and attributes {xdg:schema, application, kind,
// key}. Free with g_hash_table_unref.
static inline GHashTable *otl_item_properties_new(const char *label, const char *schema,
                                                  const char *application, const char *kind,
                                                  const char *key) {
  GHashTable *properties =
      g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify) g_variant_unref);
  GVariantBuilder attributes;
  g_variant_builder_init(&attributes, G_VARIANT_TYPE("a{ss}"));
  g_variant_builder_add(&attributes, "{ss}", "xdg:schema", schema);
  g_variant_builder_add(&attributes, "{ss}", "application", application);
  g_variant_builder_add(&attributes, "{ss}", "kind", kind);
  g_variant_builder_add(&attributes, "{ss}", "key", key);
  g_hash_table_insert(properties, (gpointer) "org.freedesktop.Secret.Item.Label",
                      g_variant_ref_sink(g_variant_new_string(label)));
  g_hash_table_insert(properties, (gpointer) "org.freedesktop.Secret.Item.Attributes",
                      g_variant_ref_sink(g_variant_builder_end(&attributes)));
  return properties;
}

// CLOCK_MONOTONIC in nanoseconds, read with the raw system call: libfaketime replaces
// clock_gettime for every clock id (and can freeze them all) but not syscall(2), so this is real
// elapsed time in a faked process too. Falls back to clock_gettime if the system call fails.
static inline int64_t otl_real_monotonic_nanoseconds(void) {
  struct timespec now = {0, 0};
  if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &now) != 0) clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t) now.tv_sec * 1000000000 + (int64_t) now.tv_nsec;
}

// A GSource that never dispatches and makes every iteration of its context wait at most
// `interval` milliseconds: its timeout is a relative poll(2) timeout, which no clock (set,
// stepped or faked by libfaketime) moves, unlike GLib's timeout sources (g_get_monotonic_time).
typedef struct {
  GSource source;
  gint interval;
} OtlWakeSource;

static inline gboolean otl_wake_prepare(GSource *source, gint *timeout) {
  *timeout = ((OtlWakeSource *) source)->interval;
  return FALSE;
}

static inline gboolean otl_wake_check(GSource *source) {
  (void) source;
  return FALSE;
}

static inline gboolean otl_wake_dispatch(GSource *source, GSourceFunc callback, gpointer data) {
  (void) source;
  (void) callback;
  (void) data;
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs otl_wake_funcs = {
    .prepare = otl_wake_prepare, .check = otl_wake_check, .dispatch = otl_wake_dispatch};

// A new wake source (free with g_source_destroy, then g_source_unref).
static inline GSource *otl_wake_source_new(gint interval) {
  GSource *source = g_source_new(&otl_wake_funcs, sizeof(OtlWakeSource));
  ((OtlWakeSource *) source)->interval = interval;
  return source;
}
