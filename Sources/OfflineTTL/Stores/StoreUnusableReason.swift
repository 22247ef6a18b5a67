/// Why a store that lives in an outside service (the Secret Service on Linux, the Keychain on
/// Apple platforms) cannot be used right now. Carried by a store error whose code says the store
/// is unusable; the gate turns it into an `expired` refusal and deletes nothing
/// (<doc:Rules#Fail-closed>).
///
/// An extensible set of stable snake_case names, like ``StoreError/UnreadableReason``.
public struct StoreUnusableReason: Sendable, Hashable, CustomStringConvertible {
  enum Backing: String, Sendable, Hashable {
    case noSessionBus = "no_session_bus"
    case noProvider = "no_provider"
    case collectionLocked = "collection_locked"
    case collectionMissing = "collection_missing"
    case promptDismissed = "prompt_dismissed"
    case timedOut = "timed_out"
    case serviceFailed = "service_failed"
  }
  let backing: Backing
  init(_ backing: Backing) { self.backing = backing }

  /// No D-Bus session bus can be reached (none running, or `DBUS_SESSION_BUS_ADDRESS` is wrong).
  public static let noSessionBus = StoreUnusableReason(.noSessionBus)
  /// The session bus has no Secret Service provider (no keyring daemon, none activatable).
  public static let noProvider = StoreUnusableReason(.noProvider)
  /// The collection (keychain) is locked and the caller did not allow an interactive unlock
  /// prompt; the stored secrets are intact.
  public static let collectionLocked = StoreUnusableReason(.collectionLocked)
  /// The provider has no `default` collection; creating one needs an interactive prompt.
  public static let collectionMissing = StoreUnusableReason(.collectionMissing)
  /// The user dismissed the unlock prompt the caller allowed.
  public static let promptDismissed = StoreUnusableReason(.promptDismissed)
  /// The service did not answer within the store's time limit; the call was cancelled.
  public static let timedOut = StoreUnusableReason(.timedOut)
  /// The service answered with an error not listed above (see the error's reason text).
  public static let serviceFailed = StoreUnusableReason(.serviceFailed)

  /// The stable snake_case name.
  public var description: String { backing.rawValue }
}
