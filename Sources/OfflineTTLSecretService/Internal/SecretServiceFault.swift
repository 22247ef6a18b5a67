#if SecretService
  import CLibSecret
  import OfflineTTL

  /// A failure of the service itself (not of a record), before the stores map it to their own
  /// public error types.
  struct SecretServiceFault: Error {
    /// Why the service could not be used.
    var reason: StoreUnusableReason
    /// Whether the failed call was a write (the old value is then intact, or the new one landed).
    var duringWrite: Bool
    /// A sentence for people, including GLib's message.
    var message: String

    /// Classifies a GError (and frees it). `step` names the call, for the message.
    ///
    /// - Parameters:
    ///   - error: The GError the call set, or `nil` when it failed without one.
    ///   - step: What was being done, e.g. `"searching the default collection"`.
    ///   - deadlineFired: Whether the watchdog cancelled the call.
    ///   - duringWrite: Whether the call was a write.
    ///   - connecting: Whether the call was the session-bus connection itself.
    static func consuming(
      _ error: UnsafeMutablePointer<GError>?, step: String, deadlineFired: Bool,
      duringWrite: Bool = false, connecting: Bool = false
    ) -> SecretServiceFault {
      defer { if let error { g_error_free(error) } }
      let text = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "no detail"
      let reason: StoreUnusableReason
      if deadlineFired || otl_error_is_io(error, Int32(G_IO_ERROR_CANCELLED.rawValue)) != 0
        || otl_error_is_dbus(error, Int32(G_DBUS_ERROR_NO_REPLY.rawValue)) != 0
        || otl_error_is_dbus(error, Int32(G_DBUS_ERROR_TIMEOUT.rawValue)) != 0
        || otl_error_is_dbus(error, Int32(G_DBUS_ERROR_TIMED_OUT.rawValue)) != 0
      {
        reason = .timedOut
      } else if connecting {
        reason = .noSessionBus
      } else if isNoProvider(error) {
        reason = .noProvider
      } else if otl_error_is_secret(error, Int32(SECRET_ERROR_IS_LOCKED.rawValue)) != 0 {
        reason = .collectionLocked
      } else {
        reason = .serviceFailed
      }
      return SecretServiceFault(
        reason: reason, duringWrite: duringWrite, message: "\(step): \(text)")
    }

    private static func isNoProvider(_ error: UnsafeMutablePointer<GError>?) -> Bool {
      let codes: [GDBusError] = [
        G_DBUS_ERROR_SERVICE_UNKNOWN, G_DBUS_ERROR_NAME_HAS_NO_OWNER,
        G_DBUS_ERROR_SPAWN_EXEC_FAILED, G_DBUS_ERROR_SPAWN_FORK_FAILED,
        G_DBUS_ERROR_SPAWN_CHILD_EXITED, G_DBUS_ERROR_SPAWN_CHILD_SIGNALED,
        G_DBUS_ERROR_SPAWN_FAILED, G_DBUS_ERROR_SPAWN_SETUP_FAILED,
        G_DBUS_ERROR_SPAWN_CONFIG_INVALID, G_DBUS_ERROR_SPAWN_SERVICE_INVALID,
        G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND, G_DBUS_ERROR_SPAWN_PERMISSIONS_INVALID,
        G_DBUS_ERROR_SPAWN_FILE_INVALID, G_DBUS_ERROR_SPAWN_NO_MEMORY,
      ]
      return codes.contains { otl_error_is_dbus(error, Int32($0.rawValue)) != 0 }
    }
  }
#endif
