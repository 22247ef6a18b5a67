#if SecretService
  import CLibSecret
  import OfflineTTL

  /// One secret found by a search, valid until its session ends.
  struct SecretServiceFoundItem {
    /// The item (owned by the session).
    let item: UnsafeMutablePointer<SecretItem>
    /// Its `key` attribute.
    let key: String?
    /// Its secret, or `nil` when the service did not hand it out (the item is locked).
    let secret: [UInt8]?
  }

  /// libsecret's enum and flags types, registered once per process before its first use.
  ///
  /// libsecret (0.20) registers these types from `*_get_type()` functions that test and set a
  /// static without a lock (its object types use `g_once_init_enter` and are safe). Two threads
  /// that make their first libsecret calls at once can both register one type: GLib refuses the
  /// second ("cannot register existing type 'SecretSchemaAttributeType'"), that thread's schema
  /// is built on an invalid type, and its call can wait forever. Each type is registered here,
  /// in one Swift global initializer (run exactly once, whatever the threads), before any
  /// session touches libsecret. Cost: one call per type, once per process.
  enum LibSecretTypes {
    /// `true` once every type below is registered; reading it runs the registration once.
    static let registered: Bool = {
      let types: [GType] = [
        secret_backend_flags_get_type(), secret_collection_create_flags_get_type(),
        secret_collection_flags_get_type(), secret_error_get_type(),
        secret_item_create_flags_get_type(), secret_item_flags_get_type(),
        secret_schema_attribute_type_get_type(), secret_schema_flags_get_type(),
        secret_schema_type_get_type(), secret_search_flags_get_type(),
        secret_service_flags_get_type(),
        // Object and boxed types: safe on their own, registered here too so their class set-up
        // never meets a half-registered enum.
        secret_schema_get_type(), secret_schema_attribute_get_type(), secret_value_get_type(),
        secret_service_get_type(), secret_collection_get_type(), secret_item_get_type(),
        secret_prompt_get_type(),
      ]
      // Every value must be a registered type; 0 would mean the registration failed.
      return types.allSatisfy { $0 != 0 }
    }()
  }

  /// One store operation's use of the provider's `default` collection: connects (bus, service,
  /// collection, lock state) under one `CallDeadline`, runs the operation's calls, and releases
  /// every GLib object it obtained when the operation ends, however it ends.
  final class SecretServiceSession {
    /// The libsecret schema name; with `SECRET_SCHEMA_NONE` it is stored as the `xdg:schema`
    /// attribute and matched by every search.
    static let schemaName = "org.offlinettl.Secret"

    private let configuration: SecretServiceStoreConfiguration
    private let deadline: CallDeadline
    private let schema: UnsafeMutablePointer<SecretSchema>
    private var service: UnsafeMutablePointer<SecretService>?
    /// The shared session-bus connection, held for the session's lifetime with exit-on-close
    /// turned off (see ``connect(evenIfLocked:)``).
    private var bus: OpaquePointer?
    /// The default collection's object path. Its proxy is released as soon as its lock state is
    /// known: items are created by path (see `otl_item_properties_new` in the shim).
    private var collectionPath: String?
    private var lists: [UnsafeMutablePointer<GList>] = []
    /// This session's main context, thread-default for its lifetime. Every call is libsecret's
    /// async form driven on it (not the `*_sync` forms, which each make a private context that
    /// is never iterated again, so GDBus's deferred teardown of each proxy's signal subscription
    /// piles up there); the session drains it before it ends.
    private let context: OpaquePointer
    /// Wakes every iteration of `context` at least every ``wakeInterval`` milliseconds, so that
    /// the loop of ``awaitResult(_:write:_:)`` checks its own time limit even when nothing
    /// arrives (a cancellation that is never delivered included).
    private let wake: UnsafeMutablePointer<GSource>
    /// How long one call may wait in ``awaitResult(_:write:_:)``, in nanoseconds: two call
    /// limits (the watchdog cancels a call within one to two limits of the last answer, which
    /// came before the call started) and ``cancellationGrace``.
    private let perCallLimitNanoseconds: Int64
    /// How long the whole session may wait in ``awaitResult(_:write:_:)`` under a budget, in
    /// nanoseconds from ``started``: the allowance and ``cancellationGrace`` (`.max` without one).
    private let budgetLimitNanoseconds: Int64
    /// The budget this operation spends (``SecretServiceStoreConfiguration/budget``), or `nil`.
    private let budget: SecretServiceBudget?
    /// When the session started, on the real monotonic clock (what the budget is charged from).
    private let started: Int64
    /// The first time-out this session met (the watchdog's, a call given up on, or D-Bus's
    /// own), remembered by the budget when the session ends.
    private var timedOut: String?

    /// How often an idle loop of ``awaitResult(_:write:_:)`` wakes, in milliseconds.
    static let wakeInterval: Int32 = 100
    /// How long the loop waits, after the watchdog must have cancelled a call, for the
    /// cancellation to arrive before it gives up on the call itself.
    static let cancellationGrace: Duration = .seconds(1)

    private init(configuration: SecretServiceStoreConfiguration) throws(SecretServiceFault) {
      guard LibSecretTypes.registered else {
        throw SecretServiceFault(
          reason: .serviceFailed, duringWrite: false,
          message: "libsecret's types could not be registered (GLib refused one)")
      }
      self.configuration = configuration
      budget = configuration.budget
      // A keyring that timed out under this budget is not asked again.
      let allowance = try budget?.begin()
      started = otl_real_monotonic_nanoseconds()
      do {
        deadline = try CallDeadline(timeout: configuration.timeout, allowance: allowance)
      } catch {
        budget?.end(spentNanoseconds: 0, timedOut: nil)
        throw error
      }
      schema = otl_secret_schema_new(Self.schemaName)
      let limit = max(configuration.timeout.exactNanoseconds ?? .max, 1)
      let grace = Self.cancellationGrace.exactNanoseconds ?? 0
      let (twice, overflowed) = limit.multipliedReportingOverflow(by: 2)
      let (total, overflowedAgain) = twice.addingReportingOverflow(grace)
      perCallLimitNanoseconds = overflowed || overflowedAgain ? .max : total
      // Under a budget, no call waits past the allowance and the grace either.
      let (budgetLimit, budgetOverflowed) = (allowance ?? .max).addingReportingOverflow(grace)
      budgetLimitNanoseconds = budgetOverflowed ? .max : budgetLimit
      context = g_main_context_new()
      wake = otl_wake_source_new(Self.wakeInterval)
      g_source_attach(wake, context)
      g_main_context_push_thread_default(context)
    }

    deinit {
      for list in lists { otl_object_list_free(list) }
      if let service { g_object_unref(UnsafeMutableRawPointer(service)) }
      if let bus { g_object_unref(UnsafeMutableRawPointer(bus)) }
      while g_main_context_iteration(context, 0) != 0 {}
      g_source_destroy(wake)
      g_source_unref(wake)
      g_main_context_pop_thread_default(context)
      g_main_context_unref(context)
      secret_schema_unref(schema)
      let fired = deadline.finish()
      if fired && timedOut == nil {
        timedOut = "the watchdog cancelled a call after \(configuration.timeout) without an answer"
      }
      budget?.end(
        spentNanoseconds: otl_real_monotonic_nanoseconds() &- started, timedOut: timedOut)
    }

    /// Starts an async libsecret call and iterates this session's context until it completes,
    /// or until its own time limit passed.
    ///
    /// The watchdog (``CallDeadline``) cancels a call that goes unanswered, and the call then
    /// completes with `G_IO_ERROR_CANCELLED`. The loop does not rely on that alone: it wakes at
    /// least every ``wakeInterval`` milliseconds and, once two call limits and
    /// ``cancellationGrace`` have passed since the call started (measured on the real monotonic
    /// clock, which libfaketime does not move), it cancels the call itself and gives up on it,
    /// whether or not the cancellation was delivered. A call given up on may still complete
    /// later: its callback then releases what it holds.
    ///
    /// - Parameters:
    ///   - step: What the call does, for the fault's message.
    ///   - write: Whether the call writes (its fault is then a failed write).
    ///   - whenReady: Runs inside the call's callback with its result, before the context
    ///     dispatches anything else (`nil`: nothing).
    ///   - start: Starts the call with the given callback and user data.
    /// - Returns: The `GAsyncResult` (a new reference: unref it after the `_finish` call).
    /// - Throws: `SecretServiceFault` `timed_out` when the call was given up on.
    private func awaitResult(
      _ step: String, write: Bool = false, whenReady: ((OpaquePointer) -> Void)? = nil,
      _ start: (GAsyncReadyCallback, gpointer) -> Void
    ) throws(SecretServiceFault) -> OpaquePointer {
      try awaitResults(step, write: write, count: 1, whenReady: whenReady) { _, callback, data in
        start(callback, data)
      }[0]
    }

    /// Starts `count` async libsecret calls at once, each with its own callback and `GTask`,
    /// and iterates this session's context until every one completed, under the time limits
    /// of ``awaitResult(_:write:whenReady:_:)`` (measured from the first call's start).
    ///
    /// - Parameters:
    ///   - step: What the calls do, for the fault's message.
    ///   - write: Whether the calls write.
    ///   - count: How many calls; positive.
    ///   - whenReady: Runs inside each call's callback with its result (`nil`: nothing).
    ///   - start: Starts call `index` (from 0) with the given callback and user data.
    /// - Returns: The `GAsyncResult`s in call order (new references: unref each after its
    ///   `_finish` call).
    /// - Throws: `SecretServiceFault` `timed_out` when the calls were given up on.
    /// - Complexity: O(`count`) per iteration of the context.
    private func awaitResults(
      _ step: String, write: Bool = false, count: Int,
      whenReady: ((OpaquePointer) -> Void)? = nil,
      _ start: (Int, GAsyncReadyCallback, gpointer) -> Void
    ) throws(SecretServiceFault) -> [OpaquePointer] {
      let callStarted = otl_real_monotonic_nanoseconds()
      // No call starts once the budget's allowance is spent: the watchdog that cancels calls at
      // that point runs on its own thread, and calls that answer before it is scheduled would
      // run past the budget (a budget of 1 ns read a store on a loaded machine).
      if callStarted >= deadline.hardDeadline {
        g_cancellable_cancel(cancellable)
        let fault = SecretServiceFault(
          reason: .timedOut, duringWrite: write,
          message: "\(step): the \(budget.map { "\($0.total) " } ?? "")budget was spent before"
            + " the call; it was not made")
        timedOut = timedOut ?? fault.message
        throw fault
      }
      let boxes = (0..<count).map { _ in SecretServiceAsyncResult(whenReady: whenReady) }
      for (index, box) in boxes.enumerated() {
        start(index, secretServiceAsyncReady, Unmanaged.passRetained(box).toOpaque())
      }
      while boxes.contains(where: { $0.result == nil }) {
        g_main_context_iteration(context, 1)
        let now = otl_real_monotonic_nanoseconds()
        if boxes.contains(where: { $0.result == nil }),
          now &- callStarted > perCallLimitNanoseconds || now &- started > budgetLimitNanoseconds
        {
          g_cancellable_cancel(cancellable)
          let fault = SecretServiceFault(
            reason: .timedOut, duringWrite: write,
            message: "\(step): no answer within two call limits of \(configuration.timeout)"
              + (budget.map { " (or the \($0.total) budget)" } ?? "")
              + " and a grace of \(Self.cancellationGrace) (the cancellation was not"
              + " delivered); the call was given up")
          timedOut = timedOut ?? fault.message
          throw fault
        }
      }
      return boxes.map { $0.take() }
    }

    /// Connects to the default collection and runs `body` with the session.
    ///
    /// - Throws: `SecretServiceFault` for a connection failure, or whatever `body` throws.
    static func run<Result>(
      _ configuration: SecretServiceStoreConfiguration, connectingEvenIfLocked: Bool = false,
      _ body: (SecretServiceSession) throws -> Result
    ) throws -> Result {
      let session = try SecretServiceSession(configuration: configuration)
      try session.connect(evenIfLocked: connectingEvenIfLocked)
      return try body(session)
    }

    private var cancellable: UnsafeMutablePointer<GCancellable> { deadline.cancellable }

    private func fault(
      _ error: UnsafeMutablePointer<GError>?, _ step: String, write: Bool = false,
      connecting: Bool = false
    ) -> SecretServiceFault {
      let fault = SecretServiceFault.consuming(
        error, step: step, deadlineFired: deadline.hasFired, duringWrite: write,
        connecting: connecting)
      if fault.reason == .timedOut, timedOut == nil { timedOut = fault.message }
      return fault
    }

    private func connect(evenIfLocked: Bool) throws(SecretServiceFault) {
      var error: UnsafeMutablePointer<GError>?
      // The bus first, to tell "no session bus" from "no provider". GIO gives every bus
      // connection exit-on-close: when the bus goes away (a restart, a broken socket) it raises
      // SIGTERM and kills the process. The shared connection is finished and its exit-on-close
      // turned off inside the call's own callback, and the session holds it to its end: libsecret
      // takes the same shared connection for the service (GIO keeps it only while someone holds
      // it, and a new one would have exit-on-close again).
      let taken = SecretServiceBusConnection()
      let gotBus = try awaitResult("connecting to the session bus", whenReady: taken.finish) {
        g_bus_get(G_BUS_TYPE_SESSION, cancellable, $0, $1)
      }
      g_object_unref(UnsafeMutableRawPointer(gotBus))
      guard let connection = taken.take() else {
        throw fault(taken.takeError(), "connecting to the session bus", connecting: true)
      }
      bus = connection
      deadline.progressed()

      let gotService = try awaitResult("opening the Secret Service") {
        secret_service_get(SECRET_SERVICE_OPEN_SESSION, cancellable, $0, $1)
      }
      service = secret_service_get_finish(gotService, &error)
      g_object_unref(UnsafeMutableRawPointer(gotService))
      guard let service else {
        throw fault(error, "opening the Secret Service")
      }
      // The service libsecret keeps for the process may sit on another connection (made while
      // no session held this one): that one must not kill the process either.
      if let serviceBus = otl_proxy_connection(UnsafeMutableRawPointer(service)) {
        g_dbus_connection_set_exit_on_close(serviceBus, 0)
      }
      deadline.progressed()
      let gotCollection = try awaitResult("finding the default collection") {
        secret_collection_for_alias(
          service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE, cancellable, $0, $1)
      }
      let collection = secret_collection_for_alias_finish(gotCollection, &error)
      g_object_unref(UnsafeMutableRawPointer(gotCollection))
      defer { if let collection { g_object_unref(UnsafeMutableRawPointer(collection)) } }
      guard let collection else {
        if error != nil { throw fault(error, "finding the default collection") }
        throw SecretServiceFault(
          reason: .collectionMissing, duringWrite: false,
          message: "the Secret Service has no default collection (creating one needs a prompt)")
      }
      collectionPath = String(cString: otl_object_path(UnsafeMutableRawPointer(collection)))
      guard secret_collection_get_locked(collection) != 0, !evenIfLocked else { return }
      guard configuration.allowsUnlockPrompt else {
        throw SecretServiceFault(
          reason: .collectionLocked, duringWrite: false,
          message: "the default collection is locked and an unlock prompt is not allowed")
      }
      let objects = g_list_append(nil, UnsafeMutableRawPointer(collection))
      var unlocked: UnsafeMutablePointer<GList>?
      let gotUnlock: OpaquePointer
      do {
        gotUnlock = try awaitResult("unlocking the default collection") {
          secret_service_unlock(service, objects, cancellable, $0, $1)
        }
      } catch {
        g_list_free(objects)
        throw error
      }
      let count = secret_service_unlock_finish(service, gotUnlock, &unlocked, &error)
      g_object_unref(UnsafeMutableRawPointer(gotUnlock))
      g_list_free(objects)
      otl_object_list_free(unlocked)
      if count < 0 { throw fault(error, "unlocking the default collection") }
      guard count > 0, secret_collection_get_locked(collection) == 0 else {
        throw SecretServiceFault(
          reason: .promptDismissed, duringWrite: false,
          message: "the default collection stayed locked: the unlock prompt was dismissed")
      }
    }

    /// The secrets of this application with `kind` (and `key`, when given), with their values.
    ///
    /// Three steps, each checked: the search (object paths, locked and unlocked), one item
    /// proxy per match in the default collection (loaded at once, each call its own task), and
    /// one call fetching every unlocked match's secret. Not libsecret's `secret_service_search`:
    /// when two or more of its item loads fail (a cancelled or broken connection), it completes
    /// its task once per failure (GLib's `'!task->ever_returned'` CRITICAL, an abort under
    /// `G_DEBUG=fatal-criticals`), and it reports a failed secret fetch as success, each item
    /// then looking locked.
    ///
    /// - Complexity: One D-Bus search, one call per match (concurrent) and one call fetching
    ///   every match's secret.
    /// - Parameters:
    ///   - kind: The `kind` attribute.
    ///   - key: The `key` attribute, or `nil` for every key.
    ///   - loadSecrets: Whether to fetch the values too (otherwise every `secret` is `nil`).
    /// - Throws: `SecretServiceFault` when a step fails or is given up on.
    func find(kind: String, key: String?, loadSecrets: Bool = true) throws(SecretServiceFault)
      -> [SecretServiceFoundItem]
    {
      guard let service else { preconditionFailure("not connected") }
      let paths = try searchPaths(kind: kind, key: key)
      guard !paths.isEmpty else { return [] }
      var error: UnsafeMutablePointer<GError>?

      let gotItems = try awaitResults("loading the found secrets", count: paths.count) {
        index, callback, data in
        secret_item_new_for_dbus_path(
          service, paths[index], SECRET_ITEM_NONE, cancellable, callback, data)
      }
      var list: UnsafeMutablePointer<GList>?
      var failure: UnsafeMutablePointer<GError>?
      var unexplained = false
      for got in gotItems {
        var itemError: UnsafeMutablePointer<GError>?
        let item = secret_item_new_for_dbus_path_finish(got, &itemError)
        g_object_unref(UnsafeMutableRawPointer(got))
        if let item { list = g_list_append(list, UnsafeMutableRawPointer(item)) }
        if let itemError {
          if failure == nil { failure = itemError } else { g_error_free(itemError) }
        } else if item == nil {
          unexplained = true
        }
      }
      // The session releases the items when it ends.
      if let list { lists.append(list) }
      if let failure { throw fault(failure, "loading the found secrets") }
      if unexplained {
        throw SecretServiceFault(
          reason: .serviceFailed, duringWrite: false,
          message: "loading the found secrets: an item was not loaded, with no error")
      }
      deadline.progressed()

      var items: [UnsafeMutablePointer<SecretItem>] = []
      var node = list
      while let current = node {
        items.append(current.pointee.data.assumingMemoryBound(to: SecretItem.self))
        node = current.pointee.next
      }
      if loadSecrets, items.contains(where: { secret_item_get_locked($0) == 0 }) {
        let gotSecrets = try awaitResult("fetching the found secrets") {
          secret_item_load_secrets(list, cancellable, $0, $1)
        }
        let loaded = secret_item_load_secrets_finish(gotSecrets, &error)
        g_object_unref(UnsafeMutableRawPointer(gotSecrets))
        if loaded == 0 || error != nil { throw fault(error, "fetching the found secrets") }
        deadline.progressed()
      }
      return items.map { item in
        SecretServiceFoundItem(
          item: item, key: Self.attribute(item, "key"),
          secret: loadSecrets ? Self.secret(item) : nil)
      }
    }

    /// The object paths of this application's secrets in the default collection with `kind`
    /// (`nil`: any) and `key` (`nil`: any), locked or not, without loading them.
    ///
    /// - Complexity: One D-Bus search.
    /// - Throws: `SecretServiceFault` when the search fails or is given up on.
    func searchPaths(kind: String?, key: String?) throws(SecretServiceFault) -> [String] {
      guard let service, let collectionPath else { preconditionFailure("not connected") }
      let attributes = otl_secret_attributes_new(configuration.applicationID, kind, key)
      defer { g_hash_table_unref(attributes) }
      var error: UnsafeMutablePointer<GError>?
      // The service-wide search, filtered to the default collection below:
      // secret_collection_search_sync leaks one reply GVariant per call in libsecret 0.20.5
      // (measured with valgrind; see docs/secret-service.md).
      let gotPaths = try awaitResult("searching the Secret Service") { [schema] in
        secret_service_search_for_dbus_paths(service, schema, attributes, cancellable, $0, $1)
      }
      var unlockedPaths: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
      var lockedPaths: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
      let searched = secret_service_search_for_dbus_paths_finish(
        service, gotPaths, &unlockedPaths, &lockedPaths, &error)
      g_object_unref(UnsafeMutableRawPointer(gotPaths))
      defer {
        g_strfreev(unlockedPaths)
        g_strfreev(lockedPaths)
      }
      if searched == 0 || error != nil { throw fault(error, "searching the Secret Service") }
      deadline.progressed()
      let prefix = collectionPath + "/"
      return (Self.strings(unlockedPaths) + Self.strings(lockedPaths)).filter {
        $0.hasPrefix(prefix)
      }
    }

    /// The strings of a `NULL`-terminated C string array (none for `NULL`).
    private static func strings(_ array: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?)
      -> [String]
    {
      guard let array else { return [] }
      var result: [String] = []
      var index = 0
      while let string = array[index] {
        result.append(String(cString: string))
        index += 1
      }
      return result
    }

    /// Replaces the secret of an existing item (one D-Bus call; the provider swaps it whole).
    func write(_ bytes: [UInt8], contentType: String, to item: UnsafeMutablePointer<SecretItem>)
      throws(SecretServiceFault)
    {
      let value = Self.value(bytes, contentType: contentType)
      defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
      var error: UnsafeMutablePointer<GError>?
      let gotSet = try awaitResult("writing a secret", write: true) {
        secret_item_set_secret(item, value, cancellable, $0, $1)
      }
      defer { g_object_unref(UnsafeMutableRawPointer(gotSet)) }
      guard secret_item_set_secret_finish(item, gotSet, &error) != 0 else {
        throw fault(error, "writing a secret", write: true)
      }
      deadline.progressed()
    }

    /// Creates an item in the default collection (replacing one with the same attributes).
    func create(kind: String, key: String, label: String, bytes: [UInt8], contentType: String)
      throws(SecretServiceFault)
    {
      guard let service, let collectionPath else { preconditionFailure("not connected") }
      let properties = otl_item_properties_new(
        label, Self.schemaName, configuration.applicationID, kind, key)
      defer { g_hash_table_unref(properties) }
      let value = Self.value(bytes, contentType: contentType)
      defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
      var error: UnsafeMutablePointer<GError>?
      let gotItem = try awaitResult("creating a secret", write: true) {
        secret_service_create_item_dbus_path(
          service, collectionPath, properties, value, SECRET_ITEM_CREATE_REPLACE, cancellable,
          $0, $1)
      }
      let path = secret_service_create_item_dbus_path_finish(service, gotItem, &error)
      g_object_unref(UnsafeMutableRawPointer(gotItem))
      guard let path else { throw fault(error, "creating a secret", write: true) }
      g_free(path)
      deadline.progressed()
    }

    /// Deletes an item (only an online sign-in removes duplicates; no failure path deletes).
    func delete(_ item: UnsafeMutablePointer<SecretItem>) throws(SecretServiceFault) {
      var error: UnsafeMutablePointer<GError>?
      let gotDelete = try awaitResult("deleting a secret", write: true) {
        secret_item_delete(item, cancellable, $0, $1)
      }
      defer { g_object_unref(UnsafeMutableRawPointer(gotDelete)) }
      guard secret_item_delete_finish(item, gotDelete, &error) != 0 else {
        throw fault(error, "deleting a secret", write: true)
      }
      deadline.progressed()
    }

    /// Locks the default collection (for tests of the locked case; locking needs no prompt).
    func lockCollection() throws(SecretServiceFault) {
      guard let service, let collectionPath else { preconditionFailure("not connected") }
      var error: UnsafeMutablePointer<GError>?
      // `withCString` rethrows untyped errors: the fault travels in a `Result`.
      let gotLock = try collectionPath.withCString { path in
        var paths: [UnsafePointer<gchar>?] = [path, nil]
        return paths.withUnsafeMutableBufferPointer { buffer in
          Result { () throws(SecretServiceFault) -> OpaquePointer in
            try awaitResult("locking the default collection") {
              secret_service_lock_dbus_paths(service, buffer.baseAddress, cancellable, $0, $1)
            }
          }
        }
      }.get()
      var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
      let count = secret_service_lock_dbus_paths_finish(service, gotLock, &locked, &error)
      g_object_unref(UnsafeMutableRawPointer(gotLock))
      g_strfreev(locked)
      if count < 0 { throw fault(error, "locking the default collection") }
    }

    private static func attribute(_ item: UnsafeMutablePointer<SecretItem>, _ name: String)
      -> String?
    {
      guard let raw = otl_secret_item_attribute(item, name) else { return nil }
      defer { g_free(raw) }
      return String(cString: raw)
    }

    private static func secret(_ item: UnsafeMutablePointer<SecretItem>) -> [UInt8]? {
      guard let value = secret_item_get_secret(item) else { return nil }
      defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
      var length = 0
      guard let bytes = secret_value_get(value, &length), length > 0 else { return [] }
      return bytes.withMemoryRebound(to: UInt8.self, capacity: length) {
        Array(UnsafeBufferPointer(start: $0, count: length))
      }
    }

    private static func value(_ bytes: [UInt8], contentType: String) -> OpaquePointer {
      if bytes.isEmpty { return secret_value_new("", 0, contentType) }
      return bytes.withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { chars in
          secret_value_new(chars.baseAddress, gssize(chars.count), contentType)
        }
      }
    }
  }

  /// Where an async libsecret call's completion lands. It owns the result's reference until
  /// ``take()``: a call given up on that completes later releases it with the box.
  private final class SecretServiceAsyncResult {
    var result: OpaquePointer?
    /// Runs in the callback with the result, before it is kept.
    let whenReady: ((OpaquePointer) -> Void)?

    init(whenReady: ((OpaquePointer) -> Void)?) { self.whenReady = whenReady }

    /// The result; its reference passes to the caller.
    func take() -> OpaquePointer {
      defer { result = nil }
      return result!
    }

    deinit { if let result { g_object_unref(UnsafeMutableRawPointer(result)) } }
  }

  /// The `GAsyncReadyCallback` of every call: keeps a reference to the result.
  private let secretServiceAsyncReady: GAsyncReadyCallback = { _, result, userData in
    guard let userData else { return }
    let box = Unmanaged<SecretServiceAsyncResult>.fromOpaque(userData).takeRetainedValue()
    guard let result else { return }
    box.whenReady?(result)
    box.result = OpaquePointer(g_object_ref(UnsafeMutableRawPointer(result)))
  }

  /// What `g_bus_get` completed with, finished inside its callback (see
  /// `otl_bus_get_finish_keeping_process`): the shared connection, exit-on-close off, or the
  /// error. Whatever is not taken is released with it.
  private final class SecretServiceBusConnection {
    private var connection: OpaquePointer?
    private var error: UnsafeMutablePointer<GError>?

    /// Finishes the call (once).
    func finish(_ result: OpaquePointer) {
      guard connection == nil, error == nil else { return }
      connection = otl_bus_get_finish_keeping_process(result, &error)
    }

    /// The connection (its reference passes to the caller), or `nil` when the call failed.
    func take() -> OpaquePointer? {
      defer { connection = nil }
      return connection
    }

    /// The error (its ownership passes to the caller), or `nil`.
    func takeError() -> UnsafeMutablePointer<GError>? {
      defer { error = nil }
      return error
    }

    deinit {
      if let connection { g_object_unref(UnsafeMutableRawPointer(connection)) }
      if let error { g_error_free(error) }
    }
  }
#endif
