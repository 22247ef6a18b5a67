extension StoreError {
  /// Why a clock mark record cannot be trusted: an extensible set of stable snake_case names.
  public struct UnreadableReason: Sendable, Hashable, CustomStringConvertible {
    enum Backing: String, Sendable, Hashable {
      case empty, truncated, oversized
      case badChecksum = "bad_checksum"
      case unknownVersion = "unknown_version"
      case permission
      case notRegularFile = "not_regular_file"
      case symbolicLink = "symbolic_link"
      case insecureMode = "insecure_mode"
      case io
      case malformed
    }
    let backing: Backing
    init(_ backing: Backing) { self.backing = backing }

    /// The file has 0 bytes.
    public static let empty = UnreadableReason(.empty)
    /// The file is shorter than the format requires.
    public static let truncated = UnreadableReason(.truncated)
    /// The file is larger than the format allows (it is not read whole).
    public static let oversized = UnreadableReason(.oversized)
    /// No copy of the record passes its checksum.
    public static let badChecksum = UnreadableReason(.badChecksum)
    /// The record is of a format version this library does not know.
    public static let unknownVersion = UnreadableReason(.unknownVersion)
    /// The operating system refused access (`EACCES`, `EPERM`).
    public static let permission = UnreadableReason(.permission)
    /// A directory, device or other non-regular file stands where the record should be.
    public static let notRegularFile = UnreadableReason(.notRegularFile)
    /// A symbolic link stands where the record should be; it is never followed.
    public static let symbolicLink = UnreadableReason(.symbolicLink)
    /// The file is readable or writable by others than its owner. No longer reported by the
    /// file store: a record that group or others may read or write is `insecure_store`, as
    /// every store file of that kind is. Kept so that code naming it still compiles.
    public static let insecureMode = UnreadableReason(.insecureMode)
    /// Reading failed with an I/O error (see ``StoreError/errno``).
    public static let io = UnreadableReason(.io)
    /// The stored value is not a record at all (for a non-file backend).
    public static let malformed = UnreadableReason(.malformed)

    /// The stable snake_case name, e.g. `bad_checksum`.
    public var description: String { backing.rawValue }
  }
}
